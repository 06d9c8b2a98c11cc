/**
 * The staking service's answers and refusals, pure: an operation row as its view, a machine
 * refusal or a wallet provider's refusal as the service's reason and domain facts. No HTTP here:
 * `api/ErrorTable.ts` decides codes and statuses.
 */
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit"
import type { WalletProviderError } from "../../wallets/WalletProvider.js"
import { type StakingError, stakingError } from "../StakingError.js"
import type { Refusal } from "../StakingMachine.js"
import type { OperationRow } from "../StakingStore.js"
import type { StakeOperationView } from "../StakingViews.js"

/** An operation as it stands. */
export const operationView = (row: OperationRow, replay: boolean): StakeOperationView => ({
  clientStakeId: row.clientStakeId,
  wallet: row.wallet,
  payer: row.payer === "tee" ? "linked" : row.payer,
  action: row.action,
  ...(row.amountRaw !== null ? { amountRaw: row.amountRaw } : {}),
  ...(row.withdrawal !== null ? { withdrawal: row.withdrawal } : {}),
  signature: row.signature,
  status: row.state,
  replay,
  warnings: []
})

/** A linked or TEE build: the operation with the transaction to sign and its lifetime. */
export const builtView = (row: OperationRow, replay: boolean): StakeOperationView => ({
  ...operationView(row, replay),
  status: "built",
  transaction: row.transaction,
  recentBlockhash: recentBlockhashOf(row),
  builtAt: row.builtAtMs === null ? null : new Date(row.builtAtMs).toISOString(),
  lastValidBlockHeight: row.lastValidBlockHeight?.toString() ?? null,
  claimId: row.claimId,
  linkedWalletId: row.walletId
})

/** A stored row answered as a replay. */
export const replayView = (row: OperationRow): StakeOperationView => (row.state === "built" ? builtView(row, true) : operationView(row, true))

/** The built transaction's blockhash (its lifetime token). */
const recentBlockhashOf = (row: OperationRow): string | null => {
  if (row.transaction === null) return null
  try {
    const tx = getTransactionDecoder().decode(Buffer.from(row.transaction, "base64"))
    return getCompiledTransactionMessageDecoder().decode(tx.messageBytes).lifetimeToken
  } catch {
    return null
  }
}

/** The machine's refusal of an operation, with the row's state and signature as its facts. */
export const refusal = (reason: Refusal, row: OperationRow | undefined): StakingError => {
  const details = { ...(row?.signature != null ? { signature: row.signature } : {}), ...(row !== undefined ? { state: row.state } : {}) }
  switch (reason) {
    case "build_expired":
      return stakingError("build_expired", "The build expired; build again with a new clientStakeId, or confirm if it already landed", { details })
    case "pending":
      return stakingError("pending", "A transaction of this operation is in flight; confirm or retry shortly", { details })
    case "wrong_message":
      return stakingError("wrong_message", "The transaction is not the built one with every signature")
    case "not_landed":
      return stakingError("not_landed", "That signature has not landed successfully on chain", { details })
    case "failed":
      return stakingError("operation_failed", `The operation failed: ${row?.error ?? "on chain"}; use a new clientStakeId`, { details })
    case "not_built":
      return stakingError("build_not_found", "No staking build with this clientStakeId on this account")
    case "already_confirmed":
      return stakingError("idempotency_conflict", "The operation is already confirmed", { details })
  }
}

/** An operation still in flight when the wait for its verdict ended. */
export const unconfirmed = (row: OperationRow, confirmTimeoutMs: number): StakingError =>
  stakingError("pending", `No confirmation within ${confirmTimeoutMs} ms; the transaction may still land. Retry with the same clientStakeId`, {
    details: { signature: row.signature, state: row.state }
  })

/** Another process drives the operation now (this one's lease ended). */
export const drivenElsewhere = (row: OperationRow): StakingError =>
  stakingError("pending", "Another engine process watches this operation now; confirm or retry shortly", { details: { signature: row.signature } })

export const buildNotFound = (): StakingError => stakingError("build_not_found", "No staking build with this clientStakeId on this account")

/** The embedded signer's refusal, as staking's reason. */
export const fromProvider = (e: WalletProviderError): StakingError => {
  switch (e.reason) {
    case "not_embedded":
      return stakingError("agent_wallet_not_embedded", e.message)
    case "not_delegated":
      return stakingError("agent_wallet_not_delegated", e.message)
    case "delegation_revoked":
      return stakingError("delegation_revoked", e.message)
    case "policy_denied":
      return stakingError("spend_policy_denied", e.message, { details: e.rule === undefined ? {} : { reason: e.rule } })
    default:
      return stakingError("chain_unavailable", `the signer is unavailable: ${e.reason}: ${e.message}`)
  }
}
