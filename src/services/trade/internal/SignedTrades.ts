/**
 * Linked and TEE payers on the Solana trade rail (issue 28): the build, the submit of the signed
 * transaction and the confirm of one the caller broadcast itself.
 *
 * - `build`: every check of the one-shot trade (the payer under the wallet rules, the market, the
 *   quote, the wallet's funds), the spend gate's hold on the key (`linked`: the imported wallet's
 *   rail, `tee`: the bound wallet's; strict per rail, `SpendGate.decide`), then the unsigned
 *   transaction and its single-use sign claim (`WalletService.recordBuilt`: the relay signs only
 *   these bytes, once), recorded `built`. A repeat of the id answers the stored build (a changed
 *   body is refused). The hold stays until the trade books or fails (a build no request
 *   sends is settled from the chain by the runner's watch pass: `TradeAttempt.ts`, `Trace`).
 * - `submit`: the signed bytes must be exactly the built message with the payer's valid signature
 *   (anything else is refused and changes nothing); then the runner's conditional save
 *   `built → sending` picks the one request that sends, once; the others answer the trade as it
 *   stands (awaited like any repeat). The chain decides from there, as for `payer: main`.
 * - `confirm`: a signature the payer's key made over the built message (verified, ed25519) moves
 *   the trade to `sending` without sending anything, and the runner awaits its verdict.
 * On Hood (linked and TEE payers) the same three, with a Hood transaction: `HoodSignedTrades.ts`.
 * Settling records the trade once (`TradeStore.save`: fee totals, `trade.executed`, the booking)
 * and then settles the sign claim (best effort: the claim's state is informational).
 */
import { getBase58Decoder, getBase58Encoder, getBase64Encoder, getTransactionDecoder, type SignatureBytes } from "@solana/kit"
import { Effect } from "effect"
import { signedPayerParts, validSignature } from "../../../chain/solana/client/SignedPayer.js"
import type { TradeCaller, TradeRequest } from "../TradeInputs.js"
import { tradeBodyHash } from "../TradeInputs.js"
import { tradeError } from "../TradeError.js"
import type { TradeRow } from "../TradeStore.js"
import { builtView, type TradeApprovalView, type TradeBuiltView, type TradeView } from "../TradeViews.js"
import { makeHoodSignedTrades } from "./HoodSignedTrades.js"
import { makeHoodTeeApprovals } from "./HoodTeeApprovals.js"
import { recordSolanaBuild, sha256Hex } from "./SolanaSignedBuild.js"
import type { TradeContext } from "./TradeContext.js"
import type { TradeFailure, TradeSubmits } from "./TradeSubmit.js"

export interface SignedSubmit {
  readonly clientTradeId: string
  /** The built transaction with the payer's signature, wire bytes. */
  readonly signedTransaction: Uint8Array
}

export interface SignedConfirm {
  readonly clientTradeId: string
  /** The transaction's signature (base58) the caller broadcast. */
  readonly signature: string
}

const base58 = getBase58Encoder()
const base58Text = getBase58Decoder()
const fromBase64 = getBase64Encoder()

const base58Of = (signature: SignatureBytes): string => base58Text.decode(signature)

export const makeSignedTrades = (ctx: TradeContext, submits: TradeSubmits) => {
  const { store } = ctx
  /** The Hood half (linked and TEE payers): its build, and the checks of its signed bytes and broadcast hash. */
  const hood = ctx.hood === undefined ? undefined : makeHoodSignedTrades(ctx, ctx.hood)
  /** A Hood TEE sell's approval, built by the server when the allowance is short (`HoodTeeApprovals.ts`). */
  const approvals = ctx.hood === undefined ? undefined : makeHoodTeeApprovals(ctx, ctx.hood)

  const key = (caller: TradeCaller, clientTradeId: string) => ({ accountId: caller.accountId, clientTradeId })

  /** The stored trade of a linked or TEE build, or its refusal (unknown id, a `payer: main` trade). */
  const builtRow = (caller: TradeCaller, clientTradeId: string, field: "signedTransaction" | "signature") =>
    Effect.gen(function* () {
      const row = yield* store.get(caller.accountId, clientTradeId)
      if (row === undefined) return yield* tradeError("trade_not_found", `No trade ${clientTradeId.slice(0, 128)}: build it first (payer linked or tee)`, { field: "clientTradeId" })
      if (row.payer === "main" || row.messageHash === null || row.messageHash === undefined) {
        return yield* tradeError("wrong_transaction", "This trade was signed by the embedded wallet (payer main): there is nothing to submit or confirm", { field })
      }
      return row
    })

  /**
   * `POST /build` for a linked or TEE payer: the unsigned transaction and its claim, recorded `built`;
   * a Hood TEE sell whose allowance is short answers the approval to sign first (nothing held).
   */
  const build = (caller: TradeCaller, request: TradeRequest): Effect.Effect<TradeBuiltView | TradeApprovalView, TradeFailure> =>
    Effect.gen(function* () {
      const stored = yield* store.get(caller.accountId, request.clientTradeId)
      if (stored !== undefined) return yield* replayBuild(request, stored)
      if (request.chain === "hood" && hood !== undefined && submits.hoodPriced !== undefined) {
        const hp = yield* submits.hoodPriced(caller, request)
        if (approvals !== undefined && hp.rail === "tee" && request.side === "sell") {
          if (hp.approval !== undefined) return yield* approvals.build(caller, request, hp)
          yield* approvals.beforeSell(caller, request)
        }
        return yield* submits.heldAround(caller, request, hp.spend, hood.record(caller, request, hp, replayBuild))
      }
      const p = yield* submits.priced(caller, request)
      return yield* submits.heldAround(caller, request, p.spend, recordSolanaBuild(ctx, caller, request, p, replayBuild))
    })

  const replayBuild = (request: TradeRequest, row: TradeRow): Effect.Effect<TradeBuiltView, TradeFailure> =>
    Effect.gen(function* () {
      if (row.bodyHash !== tradeBodyHash(request)) {
        return yield* tradeError("idempotency_conflict", "This clientTradeId was used with a different body", { details: { state: row.state } })
      }
      if (row.state === "built") return builtView(row, true)
      // Sent since: executed answers the build as it stands now; in flight or failed, their refusal.
      yield* submits.answerOf(row, true)
      return builtView(row, true)
    })

  /** Moves a built trade to `sending` on its proven signature (sending `wire` once when given), then answers as it stands. */
  const sent = (caller: TradeCaller, row: TradeRow, signature: string, wire: string | undefined): Effect.Effect<TradeView, TradeFailure> =>
    Effect.gen(function* () {
      const applied = yield* ctx.trades
        .apply(key(caller, row.clientTradeId), row, { event: { _tag: "Sent", signature }, ...(wire !== undefined ? { wire } : {}) })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      const now = applied._tag === "Saved" && applied.state !== undefined ? applied.state : ((yield* store.get(caller.accountId, row.clientTradeId)) ?? row)
      // The sign claim follows the outcome through the runner (`SettleClaim`), whoever settles the trade.
      if (applied._tag === "Saved") return yield* submits.answerOf(now, false)
      return yield* standingOf(now)
    })

  /** A repeat's answer: the trade as it stands, awaited while in flight (the driver settles it), never sent again. */
  const standingOf = (row: TradeRow): Effect.Effect<TradeView, TradeFailure> =>
    Effect.gen(function* () {
      if (row.state === "built") return yield* tradeError("pending", `Trade ${row.clientTradeId} is built and not sent yet`, { retryable: true, details: { reason: "not_sent" } })
      return yield* submits.answerOf(yield* submits.awaitSettled(row), true)
    })

  /**
   * `POST /submit` with `signedTransaction`: exactly the built transaction, signed by its payer, sent
   * once; before a Hood TEE sell is built, its approval's signed bytes (`HoodTeeApprovals.submit`).
   */
  const submit = (caller: TradeCaller, input: SignedSubmit): Effect.Effect<TradeView | TradeApprovalView, TradeFailure> =>
    Effect.gen(function* () {
      if (approvals !== undefined && (yield* store.get(caller.accountId, input.clientTradeId)) === undefined) {
        const approved = yield* approvals.submit(caller, input.clientTradeId, input.signedTransaction)
        if (approved !== undefined) return approved
      }
      const row = yield* builtRow(caller, input.clientTradeId, "signedTransaction")
      if (row.state !== "built") return yield* standingOf(row)
      if (row.chain === "hood") {
        if (hood === undefined) return yield* tradeError("chain_unsupported", "This server does not run the Hood trade rail", { field: "chain" })
        const proven = yield* hood.verifySubmit(row, input.signedTransaction)
        return yield* sent(caller, row, proven.signature, proven.wire)
      }
      const parts = signedPayerParts(input.signedTransaction, row.wallet)
      if (parts === undefined) {
        return yield* tradeError("wrong_transaction", "signedTransaction does not decode as a transaction signed by the paying wallet", { field: "signedTransaction" })
      }
      if (sha256Hex(parts.messageBytes) !== row.messageHash || !(yield* validSignature(row.wallet, parts.signature, parts.messageBytes))) {
        return yield* tradeError("wrong_transaction", "signedTransaction is not the built transaction with the paying wallet's valid signature; nothing was sent", {
          field: "signedTransaction"
        })
      }
      return yield* sent(caller, row, base58Of(parts.signature), Buffer.from(input.signedTransaction).toString("base64"))
    })

  /** `POST /confirm`: the caller broadcast the built transaction itself; its signature is verified over the built message, nothing is sent. */
  const confirm = (caller: TradeCaller, input: SignedConfirm): Effect.Effect<TradeView, TradeFailure> =>
    Effect.gen(function* () {
      const row = yield* builtRow(caller, input.clientTradeId, "signature")
      if (row.state !== "built") {
        // A build that failed unsent (its blockhash expired, `Lapsed`) has no signature: it answers as it stands.
        // A Hood hash is hex: its case carries nothing (a base58 signature's does).
        const same = row.chain === "hood" ? row.signature.toLowerCase() === input.signature.toLowerCase() : row.signature === input.signature
        if (row.signature !== "" && !same) {
          return yield* tradeError("wrong_transaction", `This trade was sent with signature ${row.signature}, not ${input.signature}`, { field: "signature" })
        }
        return yield* standingOf(row)
      }
      if (row.chain === "hood") {
        if (hood === undefined) return yield* tradeError("chain_unsupported", "This server does not run the Hood trade rail", { field: "chain" })
        return yield* sent(caller, row, yield* hood.verifyConfirm(row, input.signature), undefined)
      }
      const bytes = signatureBytesOf(input.signature)
      const message = row.transaction === null || row.transaction === undefined ? undefined : signedMessageOf(row.transaction)
      if (bytes === undefined || message === undefined || !(yield* validSignature(row.wallet, bytes, message))) {
        return yield* tradeError("wrong_transaction", "signature is not the paying wallet's signature of the built transaction", { field: "signature" })
      }
      return yield* sent(caller, row, input.signature, undefined)
    })

  return { build, submit, confirm }
}

/** A base58 signature's 64 bytes; undefined when it is not one. Pure. */
const signatureBytesOf = (text: string): SignatureBytes | undefined => {
  try {
    const bytes = new Uint8Array(base58.encode(text))
    return bytes.length === 64 ? (bytes as unknown as SignatureBytes) : undefined
  } catch {
    return undefined
  }
}

/** The message bytes of a stored (base64) transaction. Pure. */
const signedMessageOf = (base64: string): Uint8Array | undefined => {
  try {
    return new Uint8Array(getTransactionDecoder().decode(new Uint8Array(fromBase64.encode(base64))).messageBytes)
  } catch {
    return undefined
  }
}

export type SignedTrades = ReturnType<typeof makeSignedTrades>
