/**
 * The TEE payer on the Solana transfer rail (spec document 2: 2.1 "out of the bound TEE wallet to
 * its pinned vault or a wallet the owner linked while signed in or marked trusted", 3.2, 4.1
 * "Transaction-limit rules"): the build records the unsigned transaction with a single-use sign
 * claim (`WalletService.recordBuilt`), the submit takes the signed bytes and sends them once.
 *
 * Build, first refusal wins and a refusal records nothing:
 * 1. a known `clientTransferId` is answered from its row (the build again while `built`);
 * 2. the key must hold `transfer:bound` (`scope_missing`);
 * 3. the payer: an active Solana TEE wallet of the account bound to this key (the wallet rules'
 *    `resolvePayer`, then `payer_not_tee` for an imported wallet);
 * 4. the destination (`classifyTeeDestination`): the wallet's pinned vault, or a linked or
 *    imported wallet a signed-in session linked or the owner marked trusted;
 * 5. the spend gate on the `tee` rail (the key's cap and txLimit; fails closed without a price);
 *    a build holds the value until the transfer settles, or until the sweep releases it once the
 *    hold is 30 minutes old and the sign claim's own lifetime has passed (`TransferStore.save`);
 * 6. the TEE wallet's balances;
 * then the unsigned transaction, its claim (`requiredScopes`: `transfer:write`, `transfer:bound`,
 * so the relay refuses it `SCOPE_MISSING` once the key lost them) and the `built` row.
 *
 * Submit: the key that built it, still holding `transfer:bound` (else `SCOPE_MISSING`, nothing
 * changes); the bytes must be exactly the built message with the TEE wallet's valid signature
 * (else `wrong_transaction`, nothing changes); the runner's conditional save `built → sending`
 * picks the one request that sends, once; the others answer the transfer as it stands.
 *
 * Reconcile (each recovery pass): a relay-signed build the caller broadcast itself instead of
 * submitting is settled from the chain once, so a transfer that moved funds is always recorded.
 */
import { getBase58Decoder, getTransactionDecoder, type SignatureBytes } from "@solana/kit"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { requestMemo } from "../../../chain/solana/client/RequestMemo.js"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import { check as checkSpend, type ReserveInput } from "../../spend/SpendStore.js"
import { signedPayerParts, validSignature } from "../../../chain/solana/client/SignedPayer.js"
import { addressKey } from "../../wallets/ChainKeys.js"
import type { PayerError, SignClaimError, WalletError } from "../../wallets/WalletError.js"
import type { WalletServiceShape } from "../../wallets/WalletService.js"
import type { SolanaTransfers } from "../SolanaTransfers.js"
import type { TransferKey, TransferRunner } from "../TransferAttempt.js"
import { type TransferError, transferError } from "../TransferError.js"
import { classifyTeeDestination, type TeeReachable } from "../TransferRules.js"
import type { TransferCaller, TransferInput, TransferView } from "../TransferService.js"
import type { TransferRow, TransferStore } from "../TransferStore.js"

export type TeeTransferFailure = TransferError | SpendError | PayerError | SignClaimError | WalletError

export interface SignedTransferSubmit {
  readonly clientTransferId: string
  /** The built transaction with the TEE wallet's signature, wire bytes. */
  readonly signedTransaction: Uint8Array
}

/** Scopes a TEE transfer needs at build, at the sign relay and at submit. */
export const TEE_TRANSFER_SCOPES: ReadonlyArray<string> = ["transfer:write", "transfer:bound"]

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")
const base58 = getBase58Decoder()
const getBase58Text = (signature: SignatureBytes): string => base58.decode(signature)

export interface TeeTransfersContext {
  readonly sql: SqlClient.SqlClient
  readonly store: TransferStore
  readonly runner: TransferRunner
  readonly solana: SolanaTransfers
  readonly wallets: WalletServiceShape
  readonly nowMs: () => number
  readonly mintOf: (asset: string) => string | null
  readonly solanaFunds: (
    from: string,
    input: TransferInput,
    mint: string | null,
    who: string
  ) => Effect.Effect<{ readonly decimals: number | null; readonly createsAccount: boolean }, TransferError>
  readonly gateInput: (caller: TransferCaller, input: TransferInput, rail: "main" | "tee") => Effect.Effect<Omit<ReserveInput, "reservationId"> & { readonly attempt: SpendAttempt }>
  readonly heldAround: <A, E>(caller: TransferCaller, input: TransferInput, gate: Omit<ReserveInput, "reservationId">, run: Effect.Effect<A, E>) => Effect.Effect<A, E | SpendError>
  readonly answer: (row: TransferRow, requestHash: string, replay: boolean, as?: "Built" | "Recorded") => Effect.Effect<TransferView, TransferError>
  readonly viewOf: (row: TransferRow, replay: boolean) => TransferView
  readonly withSql: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly chainDown: (e: { readonly message: string }) => TransferError
}

export const makeTeeTransfers = (ctx: TeeTransfersContext) => {
  const { sql, store, runner, solana, wallets } = ctx

  const scopeRefusal = (caller: TransferCaller) => {
    const missing = TEE_TRANSFER_SCOPES.filter((s) => !(caller.principal?.scopes ?? []).includes(s))
    return missing.length === 0
      ? Effect.void
      : Effect.fail(transferError("scope_missing", `A transfer out of the bound TEE wallet needs ${missing.join(", ")}, which this key does not hold`, { details: { scope: missing[0] } }))
  }

  /** The account's active linked and imported Solana wallets as TEE destinations. */
  const reachable = (accountId: string) =>
    Effect.map(
      sql<{ id: string; address_key: string; kind: "linked" | "imported"; linked_by: string | null; trusted: boolean }>`
        SELECT id, address_key, kind, linked_by, trusted_at IS NOT NULL AS trusted FROM wallets
        WHERE account_id = ${accountId} AND chain = 'solana' AND revoked_at IS NULL AND kind IN ('linked', 'imported') ORDER BY seq LIMIT 1000`,
      (rows): ReadonlyArray<TeeReachable> =>
        rows.map((r) => ({ addressKey: r.address_key, kind: r.kind, walletId: r.id, linkedBySession: r.linked_by === "session", trusted: r.trusted === true }))
    )

  /** `POST /transfer/build` with `payer: tee` (Solana). */
  const build = (caller: TransferCaller, input: TransferInput, requestHash: string): Effect.Effect<TransferView, TeeTransferFailure | SqlError> =>
    Effect.gen(function* () {
      yield* scopeRefusal(caller)
      const principal = caller.principal
      if (principal === undefined) return yield* transferError("scope_missing", "A TEE transfer needs the key's scopes", { details: { scope: "transfer:bound" } })
      const walletId = input.linkedWalletId ?? ""
      const payer = yield* wallets.resolvePayer(principal, walletId, "solana", "spend")
      if (payer.walletKind !== "tee") return yield* transferError("payer_not_tee", `Wallet ${walletId} is not a TEE wallet; payer tee sends from the TEE wallet bound to this key`)
      const from = payer.address
      const destination = classifyTeeDestination({
        sourceKey: addressKey("solana", from),
        destinationKey: addressKey("solana", input.to),
        vaultKey: payer.vaultDestination === undefined ? null : addressKey("solana", payer.vaultDestination),
        wallets: yield* reachable(caller.accountId)
      })
      if (destination._tag === "Refused") {
        return yield* destination.reason === "same_wallet"
          ? transferError("same_wallet", "The destination is the TEE wallet itself")
          : transferError(
              "destination_not_allowed",
              "A transfer out of the bound TEE wallet goes only to its pinned vault or to a wallet the owner linked while signed in or marked trusted"
            )
      }
      const gate = yield* ctx.gateInput(caller, input, "tee")
      const decided = yield* ctx.withSql(checkSpend(gate))
      if (decided._tag === "Refused") return yield* Effect.fail(decided.error)

      const mint = ctx.mintOf(input.asset)
      const source = yield* ctx.solanaFunds(from, input, mint, "The TEE wallet")
      const plan = {
        clientTransferId: input.clientTransferId,
        chain: "solana" as const,
        asset: input.asset,
        amountRaw: input.amountRaw.toString(),
        from,
        to: input.to,
        destinationClass: destination.destinationClass,
        destinationKind: destination.destinationKind,
        ...(destination.walletId !== null ? { walletId: destination.walletId } : {}),
        payer: "tee" as const,
        linkedWalletId: payer.id
      }
      if (input.dryRun) return { status: "ready", ...plan, replay: false, createsAccount: source.createsAccount } satisfies TransferView

      return yield* ctx.heldAround(
        caller,
        input,
        gate,
        Effect.gen(function* () {
          const built = yield* Effect.mapError(
            solana.build({
              owner: from,
              to: input.to,
              mint,
              amountRaw: input.amountRaw,
              decimals: source.decimals,
              createsAccount: source.createsAccount,
              memo: requestMemo("transfer", caller.accountId, input.clientTransferId)
            }),
            ctx.chainDown
          )
          const claim = yield* wallets.recordBuilt({
            accountId: caller.accountId,
            walletId: payer.id,
            keyId: caller.keyId,
            chain: "solana",
            transaction: built.wire,
            purpose: "transfer",
            requiredScopes: TEE_TRANSFER_SCOPES
          })
          const row: TransferRow = {
            accountId: caller.accountId,
            clientTransferId: input.clientTransferId,
            keyId: caller.keyId,
            keyPrefix: caller.keyPrefix,
            requestHash,
            chain: "solana",
            asset: input.asset,
            mint,
            amountRaw: input.amountRaw,
            from,
            to: input.to,
            destinationClass: destination.destinationClass,
            destinationKind: destination.destinationKind,
            toWalletId: destination.walletId,
            state: "built",
            signature: "",
            lastValidBlockHeight: built.lastValidBlockHeight,
            error: null,
            createdAtMs: ctx.nowMs(),
            payer: "tee",
            walletId: payer.id,
            claimId: claim.claimId,
            claimExpiresAtMs: claim.expiresAtMs,
            transaction: Buffer.from(built.wire).toString("base64"),
            messageHash: sha256Hex(new Uint8Array(getTransactionDecoder().decode(built.wire).messageBytes))
          }
          const key: TransferKey = { accountId: caller.accountId, clientTransferId: input.clientTransferId }
          const applied = yield* runner
            .apply(key, undefined, { event: { _tag: "Recorded", requestHash }, insert: row })
            .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
          if (applied._tag !== "Saved") {
            // Another request recorded this id first: its build is the answer (this claim is never used).
            yield* wallets.settleClaim(claim.claimId, "expired").pipe(Effect.ignore)
            const first = yield* store.get(caller.accountId, input.clientTransferId)
            if (first === undefined) return yield* Effect.dieMessage("transfer row vanished after a racing insert")
            return yield* ctx.answer(first, requestHash, true, "Recorded")
          }
          return ctx.viewOf(applied.state ?? row, false)
        })
      )
    })

  /** Best effort: the sign claim follows the transfer's outcome (its state is informational). */
  const settleClaim = (row: TransferRow) =>
    row.claimId === null || (row.state !== "confirmed" && row.state !== "failed")
      ? Effect.void
      : wallets.settleClaim(row.claimId, row.state === "confirmed" ? "confirmed" : "failed").pipe(Effect.ignore)

  /** `POST /transfer/submit`: exactly the built transaction, signed by the TEE wallet, sent once. */
  const submit = (caller: TransferCaller, input: SignedTransferSubmit): Effect.Effect<TransferView, TeeTransferFailure | SqlError> =>
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
      const parts = signedPayerParts(input.signedTransaction, row.from)
      if (parts === undefined) {
        return yield* transferError("wrong_transaction", "signedTransaction does not decode as a transaction signed by the TEE wallet; nothing was sent")
      }
      if (sha256Hex(parts.messageBytes) !== row.messageHash || !(yield* validSignature(row.from, parts.signature, parts.messageBytes))) {
        return yield* transferError("wrong_transaction", "signedTransaction is not the built transaction with the TEE wallet's valid signature; nothing was sent")
      }
      const signature = getBase58Text(parts.signature)
      const key: TransferKey = { accountId: caller.accountId, clientTransferId: row.clientTransferId }
      const applied = yield* runner
        .apply(key, row, { event: { _tag: "Sent", signature }, wire: Buffer.from(input.signedTransaction).toString("base64") })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      const now = applied._tag === "Saved" && applied.state !== undefined ? applied.state : ((yield* store.get(caller.accountId, row.clientTransferId)) ?? row)
      if (applied._tag === "Saved") yield* settleClaim(now)
      // The request that moved it answers fresh; a racing one answers the transfer as it stands (never sent again).
      return yield* ctx.answer(now, row.requestHash, applied._tag !== "Saved", "Recorded")
    })

  /**
   * One pass over TEE builds the relay signed but nobody submitted (at most `RECONCILE_MAX`): a
   * signature the relay made is the wallet's own, so when the chain has it (the caller broadcast
   * the relay's bytes itself) the transfer moves to `sending` on it without sending anything, and
   * the runner settles it once (`confirmed` with its event and booking, or `failed`). A build
   * whose signature the chain does not know stays `built` while its blockhash may still land (its
   * submit can still send it); once it cannot (`never_lands`: the relay's bytes expired unlanded
   * and the transfer's one claim is spent), it settles `failed` the same way, its hold released,
   * so abandoned builds leave the pass's list rather than fill it.
   */
  const reconcile: Effect.Effect<number, SqlError> = Effect.gen(function* () {
    const signed = yield* sql<{ account_id: string; client_transfer_id: string; signature: string }>`
      SELECT t.account_id, t.client_transfer_id, c.signature FROM transfers t JOIN sign_claims c ON c.id = t.claim_id
      WHERE t.state = 'built' AND t.payer = 'tee' AND c.state = 'signed' AND c.signature IS NOT NULL
      ORDER BY t.created_at LIMIT ${RECONCILE_MAX}`
    let moved = 0
    for (const s of signed) {
      const row = yield* store.get(s.account_id, s.client_transfer_id)
      if (row === undefined || row.state !== "built") continue
      const seen = yield* Effect.either(solana.port.observe({ ...row, signature: s.signature }))
      // Pending (its blockhash may still land) or unreadable: looked at again next pass.
      if (seen._tag === "Left" || seen.right.outcome === "pending") continue
      const applied = yield* runner
        .apply({ accountId: row.accountId, clientTransferId: row.clientTransferId }, row, { event: { _tag: "Sent", signature: s.signature } })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      if (applied._tag === "Saved") {
        moved++
        yield* settleClaim(applied.state)
      }
    }
    return moved
  })

  return { build, submit, reconcile }
}

/** Relay-signed, unsubmitted TEE builds one reconcile pass looks at, oldest first. */
export const RECONCILE_MAX = 100
