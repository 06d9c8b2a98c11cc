/**
 * One strategy replay: the window's signals (`SignalHistory`), the trades that can change the
 * result (`clickhouse/queries/Replay.ts`), the simulation (`Engine.ts`). The job runner
 * (`ReplayJobs.ts`) bounds it in time; this module only checks the request's own limits again
 * (a caller that skipped `decodeReplayRequest` still cannot replay more than 14 days or 50
 * assets).
 *
 * What is read (`internal/ReplayRead.ts`): a token's trades matter only while it "needs
 * trades" (an entry signal not yet followed by a trade, an armed entry, an open position: `Engine.ts`), which
 * starts only at one of its entry signals. The replay advances in rounds over the window:
 * each round asks ClickHouse, per token that needs trades now or has an entry signal before the
 * round's horizon, for its next trades up to the horizon (16 at first, four times more each
 * time a token runs out while it still needs trades), merges them in chain order and feeds
 * them, stopping before any trade past the end of what was read of a token that needs trades.
 * Then the benchmark tokens' last trades (the benchmark's final mark). The result is the one
 * the exhaustive read (`read: "all"`) gives, exactly (the integration tests and the bench
 * compare both); `history.trades_read` counts the rows read. On the bench's 14 days over 10M
 * trades this read 46K rows instead of 2.3M (typical) and 85K instead of 4.7M (broad).
 *
 * Interruptible between rounds: a cancelled or timed-out replay stops after the ClickHouse
 * statement in flight (chDB cannot cancel one) and the round being simulated.
 */
import { Effect, Schema } from "effect"
import { ClickHouse } from "../../../clickhouse/ClickHouse.js"
import { forEachReplayPage, historyStartMs } from "../../../clickhouse/queries/Replay.js"
import { DEFAULT_CURVE_FEE_BPS } from "../../domain/CurveMath.js"
import { assetIdsMax, type ReplayRequest, replayWindowMsMax } from "./Definition.js"
import { lookbackMs, type ReplayResult, ReplaySimulation, selectCandidates } from "./Engine.js"
import type { ChainPricing, FeeModel } from "./Fill.js"
import { type ReadStats, readTrades } from "./internal/ReplayRead.js"
import { SignalHistory } from "./SignalHistory.js"

export class ReplayError extends Schema.TaggedError<ReplayError>()("ReplayError", {
  reason: Schema.Literal("InvalidRequest", "TooManySignals", "Unavailable", "TimedOut", "Cancelled"),
  message: Schema.String
}) {}

export interface ReplaySettings {
  readonly fees: FeeModel
  /** Per chain: decimals and the USD rate of its quote asset for the replay. */
  readonly pricing: Readonly<Record<string, ChainPricing>>
  /** Rows per ClickHouse statement (default `replayPageRowsMax`). */
  readonly pageRowsMax?: number
  /**
   * `ranges` (default): only the trades that can change the result; `all`: every trade of the
   * candidate tokens from their first signal (the reference the tests compare against).
   */
  readonly read?: "ranges" | "all"
  /** A round's horizon (ms; default `roundMsDefault`): tests shrink it to force many rounds. */
  readonly roundMs?: number
  /** Called with what the range read did (the bench prints it). */
  readonly onReadStats?: (stats: ReadStats) => void
}

/** The Max plan's platform fee (25 bps), the curve fee of the chain programs (100 bps), 1% where a venue has no reserves. */
export const defaultFees: FeeModel = { curveFeeBps: DEFAULT_CURVE_FEE_BPS, platformFeeBps: 25n, fallbackSlippageBps: 100n }

/** Solana: SOL (9 decimals), tokens 6 decimals; Hood: ETH (18), tokens 18 decimals. */
export const pricingFor = (usdMicrosPerQuoteUnit: { readonly solana: bigint; readonly hood: bigint }): Record<string, ChainPricing> => ({
  solana: { quoteDecimals: 9, tokenDecimals: 6, usdMicrosPerQuoteUnit: usdMicrosPerQuoteUnit.solana },
  hood: { quoteDecimals: 18, tokenDecimals: 18, usdMicrosPerQuoteUnit: usdMicrosPerQuoteUnit.hood }
})

export { firstRowsDefault, type ReadStats, roundMsDefault } from "./internal/ReplayRead.js"

export const runReplay = (request: ReplayRequest, settings: ReplaySettings) =>
  Effect.gen(function* () {
    if (request.to <= request.from || request.to - request.from > replayWindowMsMax)
      return yield* new ReplayError({ reason: "InvalidRequest", message: "to: must be after from and at most 14 days after it" })
    if (request.asset_ids !== undefined && request.asset_ids.length > assetIdsMax)
      return yield* new ReplayError({ reason: "InvalidRequest", message: `asset_ids: must hold 1 to ${assetIdsMax} assets` })
    const definition = request.definition
    const chains = definition.chain === "any" ? ["solana", "hood"] : [definition.chain]
    const unavailable = (e: { readonly message: string }) => new ReplayError({ reason: "Unavailable", message: e.message })

    const signals = yield* (yield* SignalHistory)
      .range(
        { fromMs: request.from - lookbackMs, toMs: request.to },
        { chains, ...(request.asset_ids !== undefined ? { assets: request.asset_ids } : {}) }
      )
      .pipe(
        Effect.mapError((e) =>
          e.reason === "TooMany" ? new ReplayError({ reason: "TooManySignals", message: e.message }) : unavailable(e)
        )
      )
    const candidates = selectCandidates(signals, definition, { fromMs: request.from, toMs: request.to, assets: request.asset_ids })
    const history = yield* historyStartMs(chains).pipe(Effect.mapError(unavailable))
    const sim = new ReplaySimulation({
      definition,
      fromMs: request.from,
      toMs: request.to,
      fees: settings.fees,
      pricing: settings.pricing,
      historyStartMs: history
    })
    sim.addSignals(candidates, signals)
    if (settings.read === "all") {
      // One time-ordered read over every chain: capital and max_concurrent couple the chains. A
      // mint string read for one chain may match a token of the other; the engine ignores those.
      const starts = new Map<string, number>()
      for (const a of sim.assetsToRead()) starts.set(a.asset, Math.min(starts.get(a.asset) ?? a.startMs, a.startMs))
      yield* forEachReplayPage(
        {
          chains,
          fromMs: request.from,
          toMs: request.to,
          assets: [...starts].map(([asset, startMs]) => ({ asset, startMs })),
          ...(settings.pageRowsMax !== undefined ? { pageRowsMax: settings.pageRowsMax } : {})
        },
        (page) => Effect.zipRight(Effect.sync(() => sim.onTrades(page)), Effect.yieldNow())
      ).pipe(Effect.mapError(unavailable))
    } else {
      const stats = yield* readTrades(sim, {
        fromMs: request.from,
        toMs: request.to,
        pageRowsMax: settings.pageRowsMax,
        roundMs: settings.roundMs
      }).pipe(Effect.mapError(unavailable))
      settings.onReadStats?.(stats)
    }
    return sim.finish() satisfies ReplayResult
  }).pipe(Effect.withSpan("Strategy.replay"))

export type RunReplay = (request: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError, ClickHouse | SignalHistory>
