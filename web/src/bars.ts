/** The token page's candle bars: pure, so the live update is tested without a browser. */
import type { UTCTimestamp } from "lightweight-charts"

export interface Bar {
  readonly time: UTCTimestamp
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
}

/**
 * The newest bar moved to the market record's price at its last trade (what a trading page does
 * with its tape): the bar of the trade's bucket takes the price as its close and widens its range,
 * or a new bar opens at the previous close. The history store writes in batches, so without this
 * the chart would show a trade seconds after the record does. `undefined`: nothing to move (no bar
 * yet, no price, or a trade older than the newest bar, which the history already holds).
 */
export const liveBar = (last: Bar | undefined, price: number, tradeAtMs: number, stepSeconds: number): Bar | undefined => {
  if (last === undefined || !Number.isFinite(price)) return undefined
  const time = (Math.floor(tradeAtMs / 1000 / stepSeconds) * stepSeconds) as UTCTimestamp
  if (time < last.time) return undefined
  if (time === last.time) return { ...last, high: Math.max(last.high, price), low: Math.min(last.low, price), close: price }
  return { time, open: last.close, high: Math.max(last.close, price), low: Math.min(last.close, price), close: price }
}
