/**
 * A trade from request to settled (issue 28): the checks (chain, payer, the market launched here
 * and tradable now, the quote on the chain's current state, the caller's minimum, the wallet's
 * balance), then either the dry run's figures (the spend gate's decision, nothing held), or the
 * spend gate's hold, the embedded wallet's signed transaction recorded `sending` and sent once
 * through the attempt runner and its verdict. A repeated id answers the stored outcome (a changed
 * body is refused), never resends and never reserves again.
 *
 * Its parts: `SolanaTradePricing` (the checks and the priced trade), `TradeSpendGate` (the hold),
 * `TradeAnswers` (what a stored trade answers), `HoodTradeSubmit` (the Hood half).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Fiber, Option } from "effect"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import type { SpendError } from "../../spend/SpendError.js"
import type { PayerError, SignClaimError, WalletError } from "../../wallets/WalletError.js"
import type { TradeError } from "../TradeError.js"
import type { TradeCaller, TradeRequest } from "../TradeInputs.js"
import type { TradeAcceptedView, TradeDryRunView, TradeView } from "../TradeViews.js"
import { makeHoodTradeSubmit } from "./HoodTradeSubmit.js"
import { makeSolanaTradePricing, pricedRow, quoteAssetOf, type SolanaPriced } from "./SolanaTradePricing.js"
import { fromProvider, makeTradeAnswers, refusedQuote, tradeJobUrl } from "./TradeAnswers.js"
import type { TradeContext } from "./TradeContext.js"
import { insertTrade, newTradeRow } from "./TradeRows.js"
import { solanaBuildInput } from "./SolanaSignedBuild.js"
import { makeTradeSpendGate } from "./TradeSpendGate.js"

/** Every failure of the write side: the rail's own, the spend gate's, the wallet rules' (linked and TEE payers) and storage's. */
export type TradeFailure = TradeError | SpendError | PayerError | SignClaimError | WalletError | SqlError

export type TradeSubmits = ReturnType<typeof makeTradeSubmit>

export const makeTradeSubmit = (ctx: TradeContext) => {
  const { store, solana } = ctx
  const { answerOf, awaitSettled, replayOf } = makeTradeAnswers(ctx)
  const { quoted, funded, priced } = makeSolanaTradePricing(ctx)
  const { spendChecked, heldAround } = makeTradeSpendGate(ctx)

  /** The Hood half (its own checks and chain port; the same store, machine and runner); undefined: Hood is refused in `priced`. */
  const hood =
    ctx.hood === undefined
      ? undefined
      : makeHoodTradeSubmit(ctx, { hood: ctx.hood, fromProvider, refusedQuote, replayOf, answerOf, spendChecked: (c, r, s) => spendChecked(c, r, s) })

  /**
   * The dry run: the wallet's funds, then the spend gate's decision (refused in that order when
   * both refuse). The funds are the holdings the venue read already brought (no read), and the
   * gate reads SQL only for a buy on a key with a txLimit: in turn, without the two fibers a
   * concurrent pair forks per build.
   */
  const dryRun = (caller: TradeCaller, request: TradeRequest): Effect.Effect<TradeDryRunView, TradeFailure> =>
    request.chain === "hood" && hood !== undefined
      ? hood.dryRun(caller, request)
      : Effect.gen(function* () {
          const p = yield* quoted(caller, request)
          yield* funded(request, p)
          yield* spendChecked(caller, request, p.spend)
          return {
            dryRun: true,
            clientTradeId: request.clientTradeId,
            chain: request.chain,
            mint: request.mint,
            side: request.side,
            venue: p.fill.venue,
            payer: request.payer === "main" ? "main" : p.rail,
            wallet: p.wallet,
            quoteMint: p.quoteMint,
            quoteAsset: quoteAssetOf(p.quoteMint),
            amountIn: request.amountInRaw.toString(),
            expectedOut: p.fill.amountOut.toString(),
            minAmountOut: p.minOut.toString(),
            fee: { bps: p.fee.planFeeBps, feeRaw: p.fee.feeRaw.toString(), asset: "quote" }
          } satisfies TradeDryRunView
        })

  const execute = (caller: TradeCaller, request: TradeRequest, p: SolanaPriced) => heldAround(caller, request, p.spend, signAndSend(caller, request, p))

  /** Signs and records the trade `sending`, then sends it once and awaits its verdict (the runner). */
  const signAndSend = (caller: TradeCaller, request: TradeRequest, p: SolanaPriced) =>
    Effect.gen(function* () {
      const built = yield* solana.build(solanaBuildInput(ctx, caller, request, p))
      const signed = yield* ctx.provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromProvider(e) : e)))
      const row = newTradeRow(caller, request, pricedRow(p, request.mint), {
        state: "sending",
        signature: signed.signature,
        lastValidBlockHeight: built.lastValidBlockHeight,
        createdAtMs: yield* ctx.clock.currentTimeMillis
      })
      const applied = yield* insertTrade(ctx, row, { _tag: "Signed", signature: signed.signature }, signed.signedTransaction)
      // Another request recorded this id first: its outcome is the answer; this one sends nothing.
      if (applied._tag !== "Saved") return yield* replayOf(caller, request)
      return yield* answerOf(applied.state, false)
    })

  /** Every check, priced, then the trade to run: the chain's own path. */
  const prepared = (caller: TradeCaller, request: TradeRequest): Effect.Effect<Effect.Effect<TradeView, TradeFailure>, TradeFailure> =>
    request.chain === "hood" && hood !== undefined
      ? Effect.map(hood.priced(caller, request), (p) => heldAround(caller, request, p.spend, hood.execute(caller, request, p)))
      : Effect.map(priced(caller, request), (p) => execute(caller, request, p))

  /** `POST /submit`: the one-shot trade; with `background` the 202 once the trade is recorded. */
  const submit = (caller: TradeCaller, request: TradeRequest, background: boolean): Effect.Effect<TradeView | TradeAcceptedView, TradeFailure> =>
    Effect.gen(function* () {
      if ((yield* store.get(caller.accountId, request.clientTradeId)) !== undefined) return yield* replayOf(caller, request)
      const run = yield* prepared(caller, request)
      if (!background) return yield* run
      const fiber = yield* Effect.forkDaemon(run)
      // Answer once the trade is recorded (or the attempt ended before it was: then its refusal).
      const recorded = yield* awaitUntil(
        Effect.zip(store.get(caller.accountId, request.clientTradeId), Fiber.poll(fiber)),
        ([row, done]) => row !== undefined || Option.isSome(done),
        { what: "the trade's record", intervalMs: 10, timeoutMs: ctx.confirmTimeoutMs }
      ).pipe(Effect.catchTag("AwaitTimedOut", () => Effect.succeed([undefined, Option.none()] as const)))
      const [row] = recorded
      if (row === undefined) return yield* Fiber.join(fiber)
      return { accepted: true, clientTradeId: row.clientTradeId, status: row.state, jobUrl: tradeJobUrl(row.clientTradeId) } satisfies TradeAcceptedView
    })

  return { submit, dryRun, replayOf, answerOf, awaitSettled, priced, heldAround, hoodPriced: hood?.priced }
}
