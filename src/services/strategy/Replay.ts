/**
 * One strategy replay: the window's signals (`SignalHistory`), the candidate tokens' trades
 * (`clickhouse/queries/Replay.ts`, page by page), the simulation (`Engine.ts`). The job runner
 * (`ReplayJobs.ts`) bounds it in time; this module only checks the request's own limits again
 * (a caller that skipped `decodeReplayRequest` still cannot replay more than 14 days or 50
 * assets).
 *
 * Interruptible between pages: a cancelled or timed-out replay stops after the ClickHouse
 * statement in flight (chDB cannot cancel one) and the page being simulated.
 */
import { Effect, Schema } from "effect"
import { ClickHouse } from "../../../clickhouse/ClickHouse.js"
import { forEachReplayPage, historyStartMs } from "../../../clickhouse/queries/Replay.js"
import { DEFAULT_CURVE_FEE_BPS } from "../../domain/CurveMath.js"
import { assetIdsMax, type ReplayRequest, replayWindowMsMax } from "./Definition.js"
import { lookbackMs, type ReplayResult, ReplaySimulation, selectCandidates } from "./Engine.js"
import type { ChainPricing, FeeModel } from "./Fill.js"
import { SignalHistory } from "./SignalHistory.js"

export class ReplayError extends Schema.TaggedError<ReplayError>()("ReplayError", {
  reason: Schema.Literal("InvalidRequest", "TooManySignals", "Unavailable", "TimedOut", "Cancelled"),
  message: Schema.String
}) {}

export interface ReplaySettings {
  readonly fees: FeeModel
  /** Per chain: decimals and the USD rate of its quote asset for the replay. */
  readonly pricing: Readonly<Record<string, ChainPricing>>
  /** Rows per ClickHouse page (default `replayPageRowsMax`). */
  readonly pageRowsMax?: number
}

/** The Max plan's platform fee (25 bps), the curve fee of the chain programs (100 bps), 1% where a venue has no reserves. */
export const defaultFees: FeeModel = { curveFeeBps: DEFAULT_CURVE_FEE_BPS, platformFeeBps: 25n, fallbackSlippageBps: 100n }

/** Solana: SOL (9 decimals), tokens 6 decimals; Hood: ETH (18), tokens 18 decimals. */
export const pricingFor = (usdMicrosPerQuoteUnit: { readonly solana: bigint; readonly hood: bigint }): Record<string, ChainPricing> => ({
  solana: { quoteDecimals: 9, tokenDecimals: 6, usdMicrosPerQuoteUnit: usdMicrosPerQuoteUnit.solana },
  hood: { quoteDecimals: 18, tokenDecimals: 18, usdMicrosPerQuoteUnit: usdMicrosPerQuoteUnit.hood }
})

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
    return sim.finish() satisfies ReplayResult
  }).pipe(Effect.withSpan("Strategy.replay"))

export type RunReplay = (request: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError, ClickHouse | SignalHistory>
