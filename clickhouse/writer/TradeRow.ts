/**
 * The mapping between a bus `Trade` and a `trades` row (migration 0002), both ways, and the
 * checks that keep a row ClickHouse would refuse out of a batch (one poison event must not
 * stall a partition forever).
 *
 * Invariants:
 * - Amounts stay `bigint` until serialization (decimal strings in JSONEachRow); a row is valid
 *   only when every amount is in `[0, 2^256)`, the timestamp is a whole millisecond inside
 *   DateTime64's range and the identifying strings are non-empty and bounded.
 * - `quote_volume_raw`, `token_volume_raw` and `price` are not written: ClickHouse derives
 *   them at insert (MATERIALIZED), so every writer computes them the same way.
 */
import type { Trade } from "../../ingest/ChainEvent.js"

/** The columns the writer sends, in table order. */
export const tradeInsertColumns = [
  "id",
  "chain",
  "mint",
  "venue",
  "side",
  "trader",
  "amount_in_raw",
  "amount_out_raw",
  "fee_raw",
  "refund_raw",
  "quote_consumed_raw",
  "quote_reserve_raw",
  "token_reserve_raw",
  "real_quote_raw",
  "crosses_graduation",
  "position",
  "ts",
  "signature",
  "version",
  "retracted"
] as const

export type TradeRow = {
  readonly id: string
  readonly chain: string
  readonly mint: string
  readonly venue: string
  readonly side: string
  readonly trader: string
  readonly amount_in_raw: bigint | string
  readonly amount_out_raw: bigint | string
  readonly fee_raw: bigint | string
  readonly refund_raw: bigint | string
  readonly quote_consumed_raw: bigint | string
  readonly quote_reserve_raw: bigint | string
  readonly token_reserve_raw: bigint | string
  readonly real_quote_raw: bigint | string
  readonly crosses_graduation: boolean
  readonly position: string
  /** `YYYY-MM-DD hh:mm:ss.sss` (UTC), as ClickHouse prints and parses DateTime64(3). */
  readonly ts: string
  readonly signature: string
  readonly version: bigint | string
  readonly retracted: 0 | 1
}

/** Largest identifying string accepted (ids, mints, traders, signatures, positions), in UTF-16 units. */
export const stringLengthMax = 512
/** One past the largest `UInt256`. */
export const UINT256_LIMIT = 1n << 256n
/** DateTime64(3)'s range: 1900-01-01 to 2299-12-31. */
export const TS_MS_MIN = Date.UTC(1900, 0, 1)
export const TS_MS_MAX = Date.UTC(2299, 11, 31, 23, 59, 59, 999)

/** `2024-01-01 00:00:00.000` for a UTC epoch millisecond. */
export const formatTs = (ms: number): string => new Date(ms).toISOString().replace("T", " ").slice(0, 23)

/** The epoch millisecond of a `YYYY-MM-DD hh:mm:ss[.sss]` UTC timestamp (as ClickHouse prints them). */
export const parseTs = (text: string): number => Date.parse(text.replace(" ", "T") + "Z")

/** Why a trade cannot be stored, or undefined when it can. */
export const invalidTrade = (t: Trade): string | undefined => {
  for (const [name, value] of [
    ["id", t.id],
    ["mint", t.mint],
    ["trader", t.trader],
    ["position", t.position],
    ["signature", t.signature]
  ] as const) {
    if (value.length === 0 && name !== "signature") return `${name} is empty`
    if (value.length > stringLengthMax) return `${name} is longer than ${stringLengthMax}`
  }
  if (!Number.isSafeInteger(t.timestampMs) || t.timestampMs < TS_MS_MIN || t.timestampMs > TS_MS_MAX) {
    return `timestampMs ${t.timestampMs} is not a whole millisecond between 1900 and 2299`
  }
  for (const [name, value] of [
    ["amountInRaw", t.amountInRaw],
    ["amountOutRaw", t.amountOutRaw],
    ["feeRaw", t.feeRaw],
    ["refundRaw", t.refundRaw],
    ["quoteConsumedRaw", t.quoteConsumedRaw],
    ["quoteReserveRaw", t.quoteReserveRaw],
    ["tokenReserveRaw", t.tokenReserveRaw],
    ["realQuoteRaw", t.realQuoteRaw]
  ] as const) {
    if (value < 0n || value >= UINT256_LIMIT) return `${name} ${value} is outside [0, 2^256)`
  }
  return undefined
}

export const tradeRow = (t: Trade, version: bigint): TradeRow => ({
  id: t.id,
  chain: t.chain,
  mint: t.mint,
  venue: t.venue,
  side: t.side,
  trader: t.trader,
  amount_in_raw: t.amountInRaw,
  amount_out_raw: t.amountOutRaw,
  fee_raw: t.feeRaw,
  refund_raw: t.refundRaw,
  quote_consumed_raw: t.quoteConsumedRaw,
  quote_reserve_raw: t.quoteReserveRaw,
  token_reserve_raw: t.tokenReserveRaw,
  real_quote_raw: t.realQuoteRaw,
  crosses_graduation: t.crossesGraduation,
  position: t.position,
  ts: formatTs(t.timestampMs),
  signature: t.signature,
  version,
  retracted: 0
})

/** The start of the UTC minute holding `ms`, in epoch seconds (a `candles_1m.bucket`). */
export const minuteOf = (ms: number): number => Math.floor(ms / 60_000) * 60
