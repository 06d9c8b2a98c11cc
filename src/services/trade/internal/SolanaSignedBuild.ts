/**
 * A Solana linked or TEE build, recorded (`SignedTrades.build`): the unsigned transaction from the
 * chain port, its single-use sign claim (`WalletService.recordBuilt`) and the trade row `built`
 * with the built message's hash, inserted once; a request that lost the insert to another of the
 * same id expires its own claim and answers the first build (`replayBuild`). Also the parts both
 * chains share: the Solana build input (the one-shot's too) and that insert (`insertBuilt`).
 */
import { getTransactionDecoder } from "@solana/kit"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { requestMemo } from "../../../chain/solana/client/RequestMemo.js"
import type { TradeCaller, TradeRequest } from "../TradeInputs.js"
import { tradeError } from "../TradeError.js"
import type { TradeRow } from "../TradeStore.js"
import { builtView, type TradeBuiltView } from "../TradeViews.js"
import type { TradeContext } from "./TradeContext.js"
import { pricedRow } from "./SolanaTradePricing.js"
import { insertTrade, newTradeRow } from "./TradeRows.js"
import type { TradeFailure, TradeSubmits } from "./TradeSubmit.js"

export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** The Solana trade's build input from its priced trade (the one-shot's and the linked/TEE build's). */
export const solanaBuildInput = (ctx: TradeContext, caller: TradeCaller, request: TradeRequest, p: Effect.Effect.Success<ReturnType<TradeSubmits["priced"]>>) => ({
  owner: p.wallet,
  venue: p.fill.venue === "dex" ? ("dex" as const) : ("svc-curve" as const),
  side: request.side,
  mint: request.mint,
  quoteMint: p.quoteMint,
  amountInRaw: request.amountInRaw,
  minAmountOutRaw: p.minOut,
  fee: p.fee.feeRaw > 0n ? { feeRaw: p.fee.feeRaw, treasury: ctx.treasury } : null,
  memo: requestMemo("trade", caller.accountId, request.clientTradeId)
})

/**
 * A linked or TEE build's row inserted `built`, once (either chain): a request that lost the insert
 * to another of the same id expires its own claim (never used) and answers the first build.
 */
export const insertBuilt = (
  ctx: TradeContext,
  caller: TradeCaller,
  request: TradeRequest,
  row: TradeRow,
  claimId: string,
  replayBuild: (request: TradeRequest, row: TradeRow) => Effect.Effect<TradeBuiltView, TradeFailure>
): Effect.Effect<TradeBuiltView, TradeFailure> =>
  Effect.gen(function* () {
    const applied = yield* insertTrade(ctx, row, { _tag: "Built" })
    if (applied._tag === "Saved") return builtView(applied.state ?? row, false)
    // Another request recorded this id first: its build is the answer (this claim is never used).
    if (ctx.wallets !== undefined) yield* ctx.wallets.settleClaim(claimId, "expired").pipe(Effect.ignore)
    const first = yield* ctx.store.get(caller.accountId, request.clientTradeId)
    if (first === undefined) return yield* tradeError("storage", "Internal error; nothing was recorded")
    return yield* replayBuild(request, first)
  })

export const recordSolanaBuild = (
  ctx: TradeContext,
  caller: TradeCaller,
  request: TradeRequest,
  p: Effect.Effect.Success<ReturnType<TradeSubmits["priced"]>>,
  replayBuild: (request: TradeRequest, row: TradeRow) => Effect.Effect<TradeBuiltView, TradeFailure>
): Effect.Effect<TradeBuiltView, TradeFailure> =>
  Effect.gen(function* () {
    const wallets = ctx.wallets
    if (wallets === undefined || p.walletId === null) return yield* tradeError("chain_unsupported", "linked and TEE payers need the wallet service", { field: "payer" })
    const built = yield* ctx.solana.build(solanaBuildInput(ctx, caller, request, p))
    const message = new Uint8Array(getTransactionDecoder().decode(built.wire).messageBytes)
    const claim = yield* wallets.recordBuilt({
      accountId: caller.accountId,
      walletId: p.walletId,
      keyId: caller.keyId,
      chain: "solana",
      transaction: built.wire,
      purpose: "trade",
      requiredScopes: ["swap:write"]
    })
    const row: TradeRow = {
      ...newTradeRow(caller, request, pricedRow(p, request.mint), {
        state: "built",
        signature: "",
        lastValidBlockHeight: built.lastValidBlockHeight,
        createdAtMs: yield* ctx.clock.currentTimeMillis
      }),
      walletId: p.walletId,
      claimId: claim.claimId,
      transaction: Buffer.from(built.wire).toString("base64"),
      messageHash: sha256Hex(message),
      builtSlot: built.slot
    }
    return yield* insertBuilt(ctx, caller, request, row, claim.claimId, replayBuild)
  })
