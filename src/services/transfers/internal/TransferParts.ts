/**
 * What every payer's build reads and holds, shared by the embedded payer's builds (Solana here in
 * `SolanaTransferBuild`, Hood in `HoodTransferBuild`) and the TEE payer's (`TeeTransfers`): the
 * account's own wallets and approved addresses (the destination rules' inputs), the embedded
 * wallet with its delegation, the spend gate's input and hold, and a Solana source's funds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { PriceSourceShape } from "../../prices/PriceSource.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import { holdAround, type ReserveInput } from "../../spend/SpendStore.js"
import { usdOfQuote } from "../../spend/SpendValue.js"
import { addressKey, type WalletChain } from "../../wallets/ChainKeys.js"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import { walletRefusal } from "../../wallets/WalletRefusal.js"
import { type SolanaTransfers, SOLANA_FEE_LAMPORTS, SYSTEM_ACCOUNT_MIN, TOKEN_ACCOUNT_RENT } from "../SolanaTransfers.js"
import { transferError } from "../TransferError.js"
import type { OwnWallet } from "../TransferRules.js"
import type { TransferCaller, TransferInput } from "../TransferService.js"
import { transferReservationId, type TransferStore } from "../TransferStore.js"

export interface TransferPartsContext {
  readonly sql: SqlClient.SqlClient
  readonly provider: WalletProviderShape
  /** USD prices for the spend gate; absent: a key with a USD cap is refused `limit_unavailable`. */
  readonly prices: PriceSourceShape | undefined
  readonly store: TransferStore
  readonly solana: SolanaTransfers
}

export type TransferParts = ReturnType<typeof makeTransferParts>

export const makeTransferParts = (options: TransferPartsContext) => {
  const { sql, provider, store, solana } = options
  const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(e, SqlClient.SqlClient, sql)
  const chainDown = (e: { readonly message: string }) => transferError("chain_unavailable", `The chain could not be read: ${e.message}; nothing was recorded`)

  const ownWallets = (accountId: string, embedded: string, chain: WalletChain = "solana") =>
    Effect.map(
      sql<{ id: string; address_key: string; kind: "linked" | "imported" | "tee" }>`
        SELECT id, address_key, kind FROM wallets WHERE account_id = ${accountId} AND chain = ${chain} AND revoked_at IS NULL ORDER BY seq LIMIT 1000`,
      (rows): ReadonlyArray<OwnWallet> => [
        { addressKey: addressKey(chain, embedded), kind: "embedded", walletId: null },
        ...rows.map((r) => ({ addressKey: r.address_key, kind: r.kind, walletId: r.id }))
      ]
    )

  const approvedId = (accountId: string, to: string, chain: WalletChain = "solana") =>
    Effect.map(
      sql<{ id: string }>`
        SELECT id FROM withdrawal_addresses WHERE account_id = ${accountId} AND chain = ${chain} AND address_key = ${addressKey(chain, to)} AND revoked_at IS NULL`,
      (rows) => rows[0]?.id ?? null
    )

  /** The account's embedded wallet on `chain`, its agent access approved and live. */
  const embeddedOf = (accountId: string, chain: WalletChain) =>
    provider.resolveDelegation(accountId, chain).pipe(
      Effect.catchTag("WalletProviderError", (e) => {
        const r = walletRefusal(e)
        const reason = r.reason === "not_embedded" ? "wallet_not_embedded" : r.reason === "not_delegated" ? "wallet_not_delegated" : r.reason === "delegation_revoked" ? "delegation_revoked" : "signing_refused"
        return Effect.fail(transferError(reason, r.message, { retryable: r.retryable }))
      })
    )

  /** What the spend gate weighs: the amount out of the paying wallet (`rail`: the embedded wallet's or the TEE wallet's), valued in USD (launched tokens have no price here). */
  const gateInput = (caller: TransferCaller, input: TransferInput, rail: "main" | "tee" = "main") =>
    Effect.map(
      options.prices === undefined ? Effect.succeed(null) : usdOfQuote(options.prices, input.chain, input.asset, input.amountRaw),
      (usdMicros) => ({
        accountId: caller.accountId,
        keyPrefix: caller.keyPrefix,
        chain: input.chain,
        attempt: { rail, purpose: "transfer", side: "buy", asset: input.asset, amountRaw: input.amountRaw, usdMicros } satisfies SpendAttempt
      })
    )

  /** The spend gate's hold around an attempt's sign and send, released when it ends before its row exists (recorded rows are settled by their save). */
  const heldAround = <A, E>(caller: TransferCaller, input: TransferInput, gate: Omit<ReserveInput, "reservationId">, run: Effect.Effect<A, E>) =>
    withSql(
      holdAround(
        {
          input: { ...gate, reservationId: transferReservationId({ accountId: caller.accountId, clientTransferId: input.clientTransferId }) },
          recorded: Effect.map(store.get(caller.accountId, input.clientTransferId), (row) => row !== undefined),
          what: "transfer"
        },
        run
      )
    )


  /** The Solana source's balances and the mint, refused unless they cover the amount, the network fee and any account the transfer creates. */
  const solanaFunds = (from: string, input: TransferInput, mint: string | null, who: string) =>
    Effect.gen(function* () {
      const source = yield* Effect.mapError(solana.source(from, input.to, mint), chainDown)
      if (source.decimals === undefined) return yield* transferError("asset_unsupported", `${input.asset} is not an SPL token mint on Solana`)
      const needLamports = mint === null ? input.amountRaw + SOLANA_FEE_LAMPORTS : SOLANA_FEE_LAMPORTS + (source.createsAccount ? TOKEN_ACCOUNT_RENT : 0n)
      const leftLamports = source.lamports - needLamports
      const short =
        (source.tokenRaw !== null && source.tokenRaw < input.amountRaw) || leftLamports < 0n || (mint === null && leftLamports > 0n && leftLamports < SYSTEM_ACCOUNT_MIN)
      if (short) {
        return yield* transferError("insufficient_balance", `${who} cannot cover the amount, the network fee and any account the transfer creates`, {
          details: {
            balanceLamports: source.lamports.toString(),
            neededLamports: needLamports.toString(),
            ...(source.tokenRaw !== null ? { balanceRaw: source.tokenRaw.toString() } : {})
          }
        })
      }
      return { ...source, decimals: source.decimals }
    })


  return { withSql, chainDown, ownWallets, approvedId, embeddedOf, gateInput, heldAround, solanaFunds }
}
