/**
 * The chain-independent half of the TEE payer on the transfer rail (spec document 2: 2.1 "out of
 * the bound TEE wallet to its pinned vault or a wallet the owner linked while signed in or marked
 * trusted", 3.2, 4.1 "Transaction-limit rules"), shared by the Solana build (`TeeTransfers.ts`) and
 * the Hood build (`HoodTeeTransfers.ts`):
 * - `payerOf`: the key holds `transfer:write` and `transfer:bound` (`scope_missing`), and the payer
 *   is an active TEE wallet of the account on the chain bound to this key (the wallet rules'
 *   `resolvePayer`, then `payer_not_tee` for an imported wallet);
 * - `destinationOf`: the wallet's pinned vault, or a linked or imported wallet of the chain a
 *   signed-in session linked or the owner marked trusted (`classifyTeeDestination`);
 * - `record`: the built transaction's single-use sign claim (`requiredScopes`: the two scopes, so
 *   the relay refuses it `SCOPE_MISSING` once the key lost them) and the `built` row, inserted
 *   once by the attempt runner (a racing request under the id answers the first build);
 * - `submitWith`: the key that built it, still holding both scopes; the chain's check that the
 *   bytes are exactly the built transaction with the TEE wallet's valid signature (else
 *   `wrong_transaction`, nothing changes); the runner's conditional save `built → sending` picks
 *   the one request that sends, once; the others answer the transfer as it stands.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type * as SqlClient from "@effect/sql/SqlClient"
import { type Clock, Effect } from "effect"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import type { ReserveInput } from "../../spend/SpendStore.js"
import { addressKey, type WalletChain } from "../../wallets/ChainKeys.js"
import type { PayerError, SignClaimError, WalletError } from "../../wallets/WalletError.js"
import type { WalletServiceShape, WalletView } from "../../wallets/WalletService.js"
import type { TransferKey, TransferRunner } from "../TransferAttempt.js"
import { type TransferError, transferError } from "../TransferError.js"
import { classifyTeeDestination, type Destination, type TeeReachable } from "../TransferRules.js"
import type { TransferCaller, TransferInput, TransferView } from "../TransferService.js"
import type { TransferRow, TransferStore } from "../TransferStore.js"

export type TeeTransferFailure = TransferError | SpendError | PayerError | SignClaimError | WalletError

export interface SignedTransferSubmit {
  readonly clientTransferId: string
  /** The built transaction with the TEE wallet's signature: Solana wire bytes, Hood the serialized signed EIP-1559 transaction. */
  readonly signedTransaction: Uint8Array
}

/** Scopes a TEE transfer needs at build, at the sign relay and at submit. */
export const TEE_TRANSFER_SCOPES: ReadonlyArray<string> = ["transfer:write", "transfer:bound"]

export type AllowedDestination = Extract<Destination, { readonly _tag: "Allowed" }>

/** What the service lends both chains' TEE builds. */
export interface TeeCommonContext {
  readonly sql: SqlClient.SqlClient
  readonly store: TransferStore
  readonly runner: TransferRunner
  readonly wallets: WalletServiceShape
  /** Time: the Effect `Clock` the transfer service is built under. */
  readonly clock: Clock.Clock
  readonly gateInput: (caller: TransferCaller, input: TransferInput, rail: "main" | "tee") => Effect.Effect<Omit<ReserveInput, "reservationId"> & { readonly attempt: SpendAttempt }>
  readonly heldAround: <A, E>(caller: TransferCaller, input: TransferInput, gate: Omit<ReserveInput, "reservationId">, run: Effect.Effect<A, E>) => Effect.Effect<A, E | SpendError>
  readonly answer: (row: TransferRow, requestHash: string, replay: boolean, as?: "Built" | "Recorded") => Effect.Effect<TransferView, TransferError>
  readonly viewOf: (row: TransferRow, replay: boolean) => TransferView
  readonly withSql: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly chainDown: (e: { readonly message: string }) => TransferError
}

/** A chain's built, unsigned transfer as the row keeps it. */
export interface TeeBuilt {
  readonly from: string
  readonly mint: string | null
  /** What the relay signs (Solana: wire bytes; Hood: the serialized unsigned transaction). */
  readonly bytes: Uint8Array
  /** The same as the view answers it (Solana base64, Hood 0x-hex). */
  readonly transaction: string
  /** sha-256 hex of what a signed transaction must carry unchanged. */
  readonly messageHash: string
  /** Solana: the blockhash's last valid height; Hood: the transaction's nonce. */
  readonly lastValidBlockHeight: bigint
}

/** `scope_missing` unless the key holds both TEE transfer scopes. */
const scopeRefusal = (caller: TransferCaller) => {
  const missing = TEE_TRANSFER_SCOPES.filter((s) => !(caller.principal?.scopes ?? []).includes(s))
  return missing.length === 0
    ? Effect.void
    : Effect.fail(transferError("scope_missing", `A transfer out of the bound TEE wallet needs ${missing.join(", ")}, which this key does not hold`, { details: { scope: missing[0] } }))
}

/** The account's active linked and imported wallets on `chain` as TEE destinations. */
const reachable = (sql: SqlClient.SqlClient, accountId: string, chain: WalletChain) =>
  Effect.map(
    sql<{ id: string; address_key: string; kind: "linked" | "imported"; linked_by: string | null; trusted: boolean }>`
      SELECT id, address_key, kind, linked_by, trusted_at IS NOT NULL AS trusted FROM wallets
      WHERE account_id = ${accountId} AND chain = ${chain} AND revoked_at IS NULL AND kind IN ('linked', 'imported') ORDER BY seq LIMIT 1000`,
    (rows): ReadonlyArray<TeeReachable> =>
      rows.map((r) => ({ addressKey: r.address_key, kind: r.kind, walletId: r.id, linkedBySession: r.linked_by === "session", trusted: r.trusted === true }))
  )

/** The sign claim and the `built` row of a built transfer (under the caller's spend hold). */
const recordBuilt = (
  ctx: TeeCommonContext,
  caller: TransferCaller,
  input: TransferInput,
  requestHash: string,
  payer: WalletView,
  destination: AllowedDestination,
  built: TeeBuilt
) =>
  Effect.gen(function* () {
    const chain: WalletChain = input.chain === "solana" ? "solana" : "evm"
    const claim = yield* ctx.wallets.recordBuilt({
      accountId: caller.accountId,
      walletId: payer.id,
      keyId: caller.keyId,
      chain,
      transaction: built.bytes,
      purpose: "transfer",
      requiredScopes: TEE_TRANSFER_SCOPES
    })
    const row: TransferRow = {
      accountId: caller.accountId,
      clientTransferId: input.clientTransferId,
      keyId: caller.keyId,
      keyPrefix: caller.keyPrefix,
      requestHash,
      chain: input.chain,
      asset: input.asset,
      mint: built.mint,
      amountRaw: input.amountRaw,
      from: built.from,
      to: input.to,
      destinationClass: destination.destinationClass,
      destinationKind: destination.destinationKind,
      toWalletId: destination.walletId,
      state: "built",
      signature: "",
      lastValidBlockHeight: built.lastValidBlockHeight,
      error: null,
      createdAtMs: yield* ctx.clock.currentTimeMillis,
      payer: "tee",
      walletId: payer.id,
      claimId: claim.claimId,
      claimExpiresAtMs: claim.expiresAtMs,
      transaction: built.transaction,
      messageHash: built.messageHash,
      signedTransaction: null
    }
    const key: TransferKey = { accountId: caller.accountId, clientTransferId: input.clientTransferId }
    const applied = yield* ctx.runner
      .apply(key, undefined, { event: { _tag: "Recorded", requestHash }, insert: row })
      .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
    if (applied._tag !== "Saved") {
      // Another request recorded this id first: its build is the answer (this claim is never used).
      yield* ctx.wallets.settleClaim(claim.claimId, "expired").pipe(Effect.ignore)
      const first = yield* ctx.store.get(caller.accountId, input.clientTransferId)
      if (first === undefined) return yield* Effect.dieMessage("transfer row vanished after a racing insert")
      return yield* ctx.answer(first, requestHash, true, "Recorded")
    }
    return ctx.viewOf(applied.state ?? row, false)
  })

export const makeTeeCommon = (ctx: TeeCommonContext) => {
  const { sql, store, runner, wallets } = ctx

  /** The key's scopes, then the paying TEE wallet on `chain` bound to this key. */
  const payerOf = (caller: TransferCaller, input: TransferInput, chain: WalletChain): Effect.Effect<WalletView, TeeTransferFailure> =>
    Effect.gen(function* () {
      yield* scopeRefusal(caller)
      const principal = caller.principal
      if (principal === undefined) return yield* transferError("scope_missing", "A TEE transfer needs the key's scopes", { details: { scope: "transfer:bound" } })
      const walletId = input.linkedWalletId ?? ""
      const payer = yield* wallets.resolvePayer(principal, walletId, chain, "spend")
      if (payer.walletKind !== "tee") return yield* transferError("payer_not_tee", `Wallet ${walletId} is not a TEE wallet; payer tee sends from the TEE wallet bound to this key`)
      return payer
    })

  /** Where the TEE wallet `from` may send `input.to` on `chain`, or the refusal. */
  const destinationOf = (caller: TransferCaller, input: TransferInput, payer: WalletView, from: string, chain: WalletChain): Effect.Effect<AllowedDestination, TransferError | SqlError> =>
    Effect.gen(function* () {
      const destination = classifyTeeDestination({
        sourceKey: addressKey(chain, from),
        destinationKey: addressKey(chain, input.to),
        vaultKey: payer.vaultDestination === undefined ? null : addressKey(chain, payer.vaultDestination),
        wallets: yield* reachable(sql, caller.accountId, chain)
      })
      if (destination._tag === "Refused") {
        return yield* destination.reason === "same_wallet"
          ? transferError("same_wallet", "The destination is the TEE wallet itself")
          : transferError(
              "destination_not_allowed",
              "A transfer out of the bound TEE wallet goes only to its pinned vault or to a wallet the owner linked while signed in or marked trusted"
            )
      }
      return destination
    })

  /** The view's fields a dry run answers (`ready`) and a build records. */
  const planOf = (input: TransferInput, from: string, destination: AllowedDestination, payer: WalletView) => ({
    clientTransferId: input.clientTransferId,
    chain: input.chain,
    asset: input.asset,
    amountRaw: input.amountRaw.toString(),
    from,
    to: input.to,
    destinationClass: destination.destinationClass,
    destinationKind: destination.destinationKind,
    ...(destination.walletId !== null ? { walletId: destination.walletId } : {}),
    payer: "tee" as const,
    linkedWalletId: payer.id
  })

  const record = (caller: TransferCaller, input: TransferInput, requestHash: string, payer: WalletView, destination: AllowedDestination, built: TeeBuilt) =>
    recordBuilt(ctx, caller, input, requestHash, payer, destination, built)

  /**
   * `POST /transfer/submit` over a chain's check of the signed bytes (`verify`: the signature and
   * the bytes to send, or `wrong_transaction`): sent once, whatever the number of requests.
   */
  const submitWith = <E>(
    caller: TransferCaller,
    input: SignedTransferSubmit,
    verify: (row: TransferRow, signed: Uint8Array) => Effect.Effect<{ readonly signature: string; readonly wire: string }, E>
  ): Effect.Effect<TransferView, TeeTransferFailure | SqlError | E> =>
    Effect.gen(function* () {
      const row = yield* store.get(caller.accountId, input.clientTransferId)
      if (row === undefined || row.keyId !== caller.keyId) {
        return yield* transferError("transfer_not_found", `No transfer ${input.clientTransferId.slice(0, 128)} built by this key: build it first (payer tee)`)
      }
      if (row.payer !== "tee" || row.messageHash === null) {
        return yield* transferError("wrong_transaction", "This transfer was signed by the embedded wallet (payer main): there is nothing to submit")
      }
      yield* scopeRefusal(caller)
      if (row.state !== "built") return yield* ctx.answer(row, row.requestHash, true, "Recorded")
      const { signature, wire } = yield* verify(row, input.signedTransaction)
      const key: TransferKey = { accountId: caller.accountId, clientTransferId: row.clientTransferId }
      const applied = yield* runner
        .apply(key, row, { event: { _tag: "Sent", signature }, wire })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      const now = applied._tag === "Saved" && applied.state !== undefined ? applied.state : ((yield* store.get(caller.accountId, row.clientTransferId)) ?? row)
      // The request that moved it answers fresh; a racing one answers the transfer as it stands (never sent again).
      return yield* ctx.answer(now, row.requestHash, applied._tag !== "Saved", "Recorded")
    })

  return { payerOf, destinationOf, planOf, record, submitWith }
}

export type TeeCommon = ReturnType<typeof makeTeeCommon>
