/**
 * The TEE payer on the transfer rail, its Solana half and its entry points (spec document 2: 2.1
 * "out of the bound TEE wallet to its pinned vault or a wallet the owner linked while signed in or
 * marked trusted", 3.2, 4.1 "Transaction-limit rules"): the build records the unsigned
 * transaction with a single-use sign claim (`WalletService.recordBuilt`), the submit takes the
 * signed bytes and sends them once. What does not depend on the chain (the scopes, the payer, the
 * destination, the claim and the row, the one send) is `TeeCommon.ts`; Hood's build and check are
 * `HoodTeeTransfers.ts`.
 *
 * Solana build, first refusal wins and a refusal records, claims and holds nothing: a known
 * `clientTransferId` answered from its row (the service, before this); the key's scopes and the
 * paying TEE wallet; the destination; the spend gate on the `tee` rail (the key's cap and txLimit;
 * fails closed without a price), a build holding the value until the transfer settles, or until
 * the sweep releases it once the hold is 30 minutes old and the sign claim's own lifetime has
 * passed (`TransferStore.save`); the TEE wallet's balances; then the unsigned transaction, its
 * claim and the `built` row.
 *
 * Solana submit: the bytes must be exactly the built message with the TEE wallet's valid
 * signature (else `wrong_transaction`, nothing changes).
 *
 * Reconcile (each pass, both chains): a relay-signed build the caller broadcast itself instead of
 * submitting is settled from the chain once, so a transfer that moved funds is always recorded.
 */
import { getBase58Decoder, getTransactionDecoder, type SignatureBytes } from "@solana/kit"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { requestMemo } from "../../../chain/solana/client/RequestMemo.js"
import { check as checkSpend } from "../../spend/SpendStore.js"
import { signedPayerParts, validSignature } from "../../../chain/solana/client/SignedPayer.js"
import type { HoodTransfers } from "../HoodTransfers.js"
import type { SolanaTransfers } from "../SolanaTransfers.js"
import type { TransferChainPort } from "../TransferAttempt.js"
import { type TransferError, transferError } from "../TransferError.js"
import type { TransferCaller, TransferInput, TransferView } from "../TransferService.js"
import { makeHoodTeeTransfers } from "./HoodTeeTransfers.js"
import { makeTeeCommon, type SignedTransferSubmit, type TeeCommonContext, type TeeTransferFailure } from "./TeeCommon.js"

export { type SignedTransferSubmit, TEE_TRANSFER_SCOPES, type TeeTransferFailure } from "./TeeCommon.js"

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")
const base58 = getBase58Decoder()
const getBase58Text = (signature: SignatureBytes): string => base58.decode(signature)

export interface TeeTransfersContext extends TeeCommonContext {
  readonly solana: SolanaTransfers
  /** The Hood side (absent: Hood TEE transfers are refused `chain_unsupported`). */
  readonly hood?: HoodTransfers | undefined
  /** The chain port of a row's chain (the runner's), for the reconcile pass. */
  readonly portOf: (chain: "solana" | "hood") => TransferChainPort
  readonly mintOf: (asset: string) => string | null
  readonly solanaFunds: (
    from: string,
    input: TransferInput,
    mint: string | null,
    who: string
  ) => Effect.Effect<{ readonly decimals: number | null; readonly createsAccount: boolean }, TransferError>
}

export const makeTeeTransfers = (ctx: TeeTransfersContext) => {
  const { sql, store, runner, solana } = ctx
  const common = makeTeeCommon(ctx)
  const hood = ctx.hood === undefined ? undefined : makeHoodTeeTransfers(ctx, common, ctx.hood)

  /** `POST /transfer/build` with `payer: tee` on Solana. */
  const buildSolana = (caller: TransferCaller, input: TransferInput, requestHash: string): Effect.Effect<TransferView, TeeTransferFailure | SqlError> =>
    Effect.gen(function* () {
      const payer = yield* common.payerOf(caller, input, "solana")
      const from = payer.address
      const destination = yield* common.destinationOf(caller, input, payer, from, "solana")
      const gate = yield* ctx.gateInput(caller, input, "tee")
      const decided = yield* ctx.withSql(checkSpend(gate))
      if (decided._tag === "Refused") return yield* Effect.fail(decided.error)

      const mint = ctx.mintOf(input.asset)
      const source = yield* ctx.solanaFunds(from, input, mint, "The TEE wallet")
      if (input.dryRun) return { status: "ready", ...common.planOf(input, from, destination, payer), replay: false, createsAccount: source.createsAccount } satisfies TransferView

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
          return yield* common.record(caller, input, requestHash, payer, destination, {
            from,
            mint,
            bytes: built.wire,
            transaction: Buffer.from(built.wire).toString("base64"),
            messageHash: sha256Hex(new Uint8Array(getTransactionDecoder().decode(built.wire).messageBytes)),
            lastValidBlockHeight: built.lastValidBlockHeight
          })
        })
      )
    })

  /** `POST /transfer/build` with `payer: tee`: Solana here, Hood in `HoodTeeTransfers`. */
  const build = (caller: TransferCaller, input: TransferInput, requestHash: string): Effect.Effect<TransferView, TeeTransferFailure | SqlError> => {
    if (input.chain === "solana") return buildSolana(caller, input, requestHash)
    if (hood === undefined) return Effect.fail(transferError("chain_unsupported", "This server does not run Hood transfers (no Hood node is configured)"))
    return hood.build(caller, input, requestHash)
  }

  /** Solana: the bytes must be exactly the built message with the TEE wallet's valid signature. */
  const verifySolana = (row: { readonly from: string; readonly messageHash: string | null }, signed: Uint8Array) =>
    Effect.gen(function* () {
      const parts = signedPayerParts(signed, row.from)
      if (parts === undefined) {
        return yield* transferError("wrong_transaction", "signedTransaction does not decode as a transaction signed by the TEE wallet; nothing was sent")
      }
      if (sha256Hex(parts.messageBytes) !== row.messageHash || !(yield* validSignature(row.from, parts.signature, parts.messageBytes))) {
        return yield* transferError("wrong_transaction", "signedTransaction is not the built transaction with the TEE wallet's valid signature; nothing was sent")
      }
      return { signature: getBase58Text(parts.signature), wire: Buffer.from(signed).toString("base64") }
    })

  /** `POST /transfer/submit`: exactly the built transaction, signed by the TEE wallet, sent once. */
  const submit = (caller: TransferCaller, input: SignedTransferSubmit): Effect.Effect<TransferView, TeeTransferFailure | SqlError> =>
    common.submitWith(caller, input, (row, signed) =>
      row.chain === "solana"
        ? verifySolana(row, signed)
        : hood === undefined
          ? Effect.fail(transferError("chain_unavailable", "This server does not run Hood transfers; nothing was sent", { retryable: true }))
          : hood.verify(row, signed)
    )

  /**
   * One pass over TEE builds the relay signed but nobody submitted (at most `RECONCILE_MAX`), on
   * either chain: a signature the relay made is the wallet's own, so when the chain has it (the
   * caller broadcast the relay's bytes itself) the transfer moves to `sending` on it without
   * sending anything, and the runner settles it once (`confirmed` with its event and booking, or
   * `failed`). A build whose signature the chain does not know stays `built` while it may still
   * land (its submit can still send it); once it cannot (`never_lands`: Solana, the relay's bytes
   * expired unlanded; Hood, the wallet's mined nonce passed the build's), it settles `failed` the
   * same way, its hold released, so abandoned builds leave the pass's list rather than fill it.
   */
  const reconcile: Effect.Effect<number, SqlError> = Effect.gen(function* () {
    const signed = yield* sql<{ account_id: string; client_transfer_id: string; signature: string }>`
      SELECT t.account_id, t.client_transfer_id, c.signature FROM transfers t JOIN sign_claims c ON c.id = t.claim_id
      WHERE t.state = 'built' AND t.payer = 'tee' AND c.state = 'signed' AND c.signature IS NOT NULL
      ORDER BY t.created_at LIMIT ${RECONCILE_MAX}`
    let moved = 0
    for (const s of signed) {
      const row = yield* store.get(s.account_id, s.client_transfer_id)
      if (row === undefined || row.state !== "built" || (row.chain === "hood" && hood === undefined)) continue
      const seen = yield* Effect.either(ctx.portOf(row.chain).observe({ ...row, signature: s.signature }))
      // Pending (it may still land) or unreadable: looked at again next pass.
      if (seen._tag === "Left" || seen.right.outcome === "pending") continue
      const applied = yield* runner
        .apply({ accountId: row.accountId, clientTransferId: row.clientTransferId }, row, { event: { _tag: "Sent", signature: s.signature } })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      // Its sign claim follows the outcome by the machine's `SettleClaim`, as every settlement's.
      if (applied._tag === "Saved") moved++
    }
    return moved
  })

  return { build, submit, reconcile }
}

/** Relay-signed, unsubmitted TEE builds one reconcile pass looks at, oldest first. */
export const RECONCILE_MAX = 100
