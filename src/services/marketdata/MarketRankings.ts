/**
 * The market lists' orderings (spec 4.5): Solana gainers over a window, and the final stretch
 * (curve tokens closest to graduating, and those graduated recently). Pure over the market
 * index's cores and the ClickHouse rows the reads fetch; every ordering is total (ties broken by
 * the address), so a list does not depend on the order its inputs arrive in.
 */
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { progressBpsOf } from "../../../actors/market/MarketRecord.js"
import type { PriceMove } from "../../../clickhouse/queries/TokenReads.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"

const byMint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export interface Gainer {
  readonly move: PriceMove
  readonly core: MarketCore
  /** The rise over the window in percent (> 0). */
  readonly changePct: number
}

/**
 * The `limit` largest risers among `moves`: tokens the index knows (`marketOf`) whose last price
 * is above their start price, the largest rise first.
 */
export const rankGainers = (moves: ReadonlyArray<PriceMove>, marketOf: (mint: string) => MarketCore | undefined, limit: number): ReadonlyArray<Gainer> => {
  const risen: Array<Gainer> = []
  for (const move of moves) {
    if (!(move.startPrice > 0)) continue
    const changePct = (move.lastPrice / move.startPrice - 1) * 100
    if (!(changePct > 0)) continue
    const core = marketOf(move.mint)
    if (core !== undefined) risen.push({ move, core, changePct })
  }
  risen.sort((a, b) => b.changePct - a.changePct || byMint(a.move.mint, b.move.mint))
  return risen.slice(0, limit)
}

/**
 * The `limit` trading curve tokens on `chain` closest to graduating: the highest progress first,
 * then the most quote raised.
 */
export const closestToGraduation = (markets: Iterable<MarketCore>, chain: ChainId, limit: number): ReadonlyArray<MarketCore> => {
  const trading: Array<{ readonly core: MarketCore; readonly progressBps: number }> = []
  for (const core of markets) if (core.chain === chain && core.lifecycle === "trading") trading.push({ core, progressBps: progressBpsOf(core) })
  trading.sort((a, b) => {
    if (a.progressBps !== b.progressBps) return b.progressBps - a.progressBps
    const ra = a.core.curveState.realQuoteRaw
    const rb = b.core.curveState.realQuoteRaw
    return ra !== rb ? (rb > ra ? 1 : -1) : byMint(a.core.mint, b.core.mint)
  })
  return trading.slice(0, limit).map((t) => t.core)
}

/** The graduations whose market the index knows and has left the curve, in the order given. */
export const graduatedMarkets = <G extends { readonly mint: string }>(
  graduations: ReadonlyArray<G>,
  marketOf: (mint: string) => MarketCore | undefined
): ReadonlyArray<{ readonly graduation: G; readonly core: MarketCore }> => {
  const out: Array<{ readonly graduation: G; readonly core: MarketCore }> = []
  for (const graduation of graduations) {
    const core = marketOf(graduation.mint)
    if (core !== undefined && core.lifecycle !== "trading") out.push({ graduation, core })
  }
  return out
}

/** Quote still to raise before the curve graduates (0 once the threshold is met). */
export const remainingToGraduationRaw = (core: MarketCore): bigint =>
  core.params.thresholdRaw > core.curveState.realQuoteRaw ? core.params.thresholdRaw - core.curveState.realQuoteRaw : 0n
