/**
 * The signals writer: the detectors' wiring hands it signals (`record`), it buffers them and
 * writes `signals` (migration 0005) in batches, flushing at `batchRows` (default 1,000) or every
 * `flushIntervalMs` (default 250), whichever comes first.
 *
 * Invariants:
 * - Bounded: at most `maxBufferedRows` signals wait. `record` waits for room at the bound (call
 *   it from a fiber, never from a shard's event loop); `tryRecord` never waits and returns false
 *   (counted in `dropped`) when the buffer is full.
 * - Idempotent: signal ids are deterministic and the table collapses a copy with the same
 *   `(ts, id)`, so a retried flush that had partly landed, or a replay that re-emits a signal,
 *   stores it once (read with FINAL).
 * - A failing flush is retried with capped backoff for as long as the process lives (memory
 *   stays fixed by the bound meanwhile); at close each batch gets `closeFlushAttemptsMax`
 *   attempts and what still fails is logged as lost. A lost signal is re-emitted by a replay of
 *   the bus from the detectors' checkpoints.
 * - A signal ClickHouse could not store (unknown pattern, bad time, USD not a decimal) is
 *   refused at `record` with `InvalidRequest`, before anything of the call is buffered.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import { isPattern, QUALITIES, type Signal, VENUES } from "../../src/domain/Signal.js"
import { ClickHouse } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"
import { batcherSettings, type BatcherStats, makeBatcher } from "./internal/Batcher.js"
import { insertSplitting } from "./internal/insert.js"
import { formatTs, parseTs, TS_MS_MAX, TS_MS_MIN } from "./TradeRow.js"

export interface SignalWriterOptions {
  readonly batchRows: number
  readonly flushIntervalMs: number
  readonly maxBufferedRows: number
  readonly closeFlushAttemptsMax: number
  readonly retryBaseMs: number
  readonly retryMaxDelayMs: number
  /**
   * The tracked groups of one wallet (sorted; empty when untracked), for the `wallet_groups`
   * column (parallel to `wallets`). The wiring passes the tracking data's lookup; without it
   * every wallet's list is empty.
   */
  readonly walletGroupsOf?: ((chain: Signal["chain"], address: string) => ReadonlyArray<string>) | undefined
}

export const signalWriterDefaults: SignalWriterOptions = {
  batchRows: 1_000,
  flushIntervalMs: 250,
  maxBufferedRows: 20_000,
  closeFlushAttemptsMax: 3,
  retryBaseMs: 20,
  retryMaxDelayMs: 5_000
}

export interface SignalWriterShape {
  /** Buffers the signals, waiting for room at the bound. At most `maxBufferedRows` per call. */
  readonly record: (signals: ReadonlyArray<Signal>) => Effect.Effect<void, ClickHouseError>
  /** Buffers the signals if they fit now; false (nothing buffered, counted as dropped) when full. */
  readonly tryRecord: (signals: ReadonlyArray<Signal>) => Effect.Effect<boolean, ClickHouseError>
  /** Buffers and returns once they are written (tests, shutdown paths). */
  readonly recordAndAwait: (signals: ReadonlyArray<Signal>) => Effect.Effect<void, ClickHouseError>
  readonly stats: Effect.Effect<BatcherStats>
}

export class SignalWriter extends Context.Tag("curvestream/SignalWriter")<SignalWriter, SignalWriterShape>() {
  static layer(options: Partial<SignalWriterOptions> = {}): Layer.Layer<SignalWriter, ClickHouseError, ClickHouse> {
    return Layer.scoped(SignalWriter, make(options))
  }
}

/** The columns of `signals`, in table order (for SELECTs that read rows back with `signalFromRow`). */
export const signalColumns = [
  "id",
  "pattern",
  "chain",
  "asset",
  "symbol",
  "direction",
  "wallets",
  "wallet_ids",
  "groups",
  "size_usd",
  "mcap_usd",
  "age_minutes",
  "venue",
  "confidence",
  "quality",
  "ts",
  "position",
  "details"
] as const

const USD = /^[0-9]{1,32}(\.[0-9]{1,6})?$/
const qualities: ReadonlySet<string> = new Set(QUALITIES)
const venues: ReadonlySet<string> = new Set(VENUES)

/** Why a signal cannot be stored, or undefined when it can. */
export const invalidSignal = (s: Signal): string | undefined => {
  if (s.id.length === 0 || s.id.length > 128) return `id must be 1..128 characters`
  if (!isPattern(s.pattern)) return `unknown pattern ${JSON.stringify(s.pattern)}`
  if (s.chain !== "solana" && s.chain !== "hood") return `unknown chain ${JSON.stringify(s.chain)}`
  if (s.asset.length === 0 || s.asset.length > 512) return `asset must be 1..512 characters`
  if (s.direction !== "in" && s.direction !== "out") return `unknown direction ${JSON.stringify(s.direction)}`
  if (!qualities.has(s.quality)) return `unknown quality ${JSON.stringify(s.quality)}`
  if (s.venue !== null && !venues.has(s.venue)) return `unknown venue ${JSON.stringify(s.venue)}`
  if (!Number.isInteger(s.confidence) || s.confidence < 0 || s.confidence > 100) return `confidence ${s.confidence} is not in 0..100`
  if (!Number.isSafeInteger(s.at_ms) || s.at_ms < TS_MS_MIN || s.at_ms > TS_MS_MAX) return `at_ms ${s.at_ms} is not a whole millisecond between 1900 and 2299`
  if (s.size_usd !== null && !USD.test(s.size_usd)) return `size_usd ${JSON.stringify(s.size_usd)} is not a non-negative decimal with at most 6 fractional digits`
  if (s.mcap_usd !== null && !USD.test(s.mcap_usd)) return `mcap_usd ${JSON.stringify(s.mcap_usd)} is not a non-negative decimal with at most 6 fractional digits`
  if (s.age_minutes !== null && (!Number.isInteger(s.age_minutes) || s.age_minutes < 0 || s.age_minutes > 0xffffffff)) return `age_minutes ${s.age_minutes} is out of range`
  return undefined
}

const noGroups = (): ReadonlyArray<string> => []

export const signalRow = (s: Signal, walletGroupsOf: (chain: Signal["chain"], address: string) => ReadonlyArray<string> = noGroups): Record<string, unknown> => ({
  id: s.id,
  pattern: s.pattern,
  chain: s.chain,
  asset: s.asset,
  symbol: s.symbol,
  direction: s.direction,
  wallets: s.wallets,
  wallet_ids: s.wallet_ids,
  groups: s.groups,
  wallet_groups: s.wallets.map((w) => walletGroupsOf(s.chain, w)),
  size_usd: s.size_usd,
  mcap_usd: s.mcap_usd,
  age_minutes: s.age_minutes,
  venue: s.venue,
  confidence: s.confidence,
  quality: s.quality,
  ts: formatTs(s.at_ms),
  position: s.position,
  details: JSON.stringify(s.details)
})

/** A decimal as ClickHouse writes it back (`"12.500000"` or a number) → the signal's form (`"12.5"`). */
const usdBack = (v: unknown): string | null => {
  if (v === null || v === undefined) return null
  const text = String(v)
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text
}

/**
 * A row of `SELECT <signalColumns> FROM signals FINAL` back to the signal. Select the decimals
 * with `toString(size_usd) AS size_usd` (and `mcap_usd`) so no float ever touches them.
 */
export const signalFromRow = (r: Record<string, unknown>): Signal => {
  const atMs = parseTs(String(r.ts))
  return {
    id: String(r.id),
    pattern: r.pattern as Signal["pattern"],
    chain: r.chain as Signal["chain"],
    asset: String(r.asset),
    symbol: r.symbol === null || r.symbol === undefined ? null : String(r.symbol),
    direction: r.direction as Signal["direction"],
    wallets: (r.wallets ?? []) as ReadonlyArray<string>,
    wallet_ids: (r.wallet_ids ?? []) as ReadonlyArray<string>,
    groups: (r.groups ?? []) as ReadonlyArray<string>,
    size_usd: usdBack(r.size_usd),
    mcap_usd: usdBack(r.mcap_usd),
    age_minutes: r.age_minutes === null || r.age_minutes === undefined ? null : Number(r.age_minutes),
    venue: (r.venue ?? null) as Signal["venue"],
    confidence: Number(r.confidence),
    quality: r.quality as Signal["quality"],
    at: new Date(atMs).toISOString(),
    at_ms: atMs,
    position: String(r.position),
    details: JSON.parse(String(r.details)) as Signal["details"]
  }
}

/** The SELECT list that `signalFromRow` reads (decimals as exact strings). */
export const signalSelectSql = signalColumns
  .map((c) => (c === "size_usd" || c === "mcap_usd" ? `if(isNull(${c}), NULL, toString(${c})) AS ${c}` : c))
  .join(", ")

export const make = (input: Partial<SignalWriterOptions> = {}): Effect.Effect<SignalWriterShape, ClickHouseError, ClickHouse | Scope.Scope> =>
  Effect.gen(function* () {
    const options: SignalWriterOptions = { ...signalWriterDefaults, ...input }
    const ch = yield* ClickHouse
    const walletGroupsOf = options.walletGroupsOf ?? noGroups
    const batcher = yield* makeBatcher<Record<string, unknown>>(
      batcherSettings("SignalWriter", options),
      (rows) => insertSplitting(ch, "signals", rows)
    )
    const toRows = (signals: ReadonlyArray<Signal>) =>
      Effect.suspend(() => {
        for (const s of signals) {
          const why = invalidSignal(s)
          if (why !== undefined) return Effect.fail(new ClickHouseError({ reason: "InvalidRequest", message: `signal ${s.id}: ${why}` }))
        }
        return Effect.succeed(signals.map((s) => signalRow(s, walletGroupsOf)))
      })
    return {
      record: (signals) => Effect.flatMap(toRows(signals), batcher.offer),
      tryRecord: (signals) => Effect.flatMap(toRows(signals), batcher.tryOffer),
      recordAndAwait: (signals) => Effect.flatMap(toRows(signals), batcher.offerAndAwait),
      stats: batcher.stats
    }
  })
