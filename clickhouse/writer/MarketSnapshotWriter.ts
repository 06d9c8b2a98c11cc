/**
 * The market-history writer: the actor layer hands it periodic market snapshots (`record`),
 * it buffers them and writes `market_snapshots` in batches, flushing at `batchRows` (default
 * 5,000) or every `flushIntervalMs` (default 250).
 *
 * Invariants:
 * - Bounded: at most `maxBufferedRows` snapshots wait. `record` waits for room at the bound
 *   (call it from a sampler fiber, never from a shard's event loop); `tryRecord` never waits
 *   and returns false (counted in `dropped`) when the buffer is full.
 * - `record` returns once buffered, not once written: history is best effort per snapshot,
 *   not a ledger. A failing flush is retried with capped backoff for as long as the process
 *   lives (the buffer bound keeps memory fixed meanwhile); at close each batch gets a bounded
 *   number of attempts and what still fails is logged as lost.
 * - Idempotent: the table collapses a snapshot re-sent for the same `(chain, mint, ts)`, so a
 *   retried flush that had partly landed does no harm.
 * - A snapshot ClickHouse could not store (negative amount, bad timestamp, progress over
 *   10000 bps) is refused at `record` with `InvalidRequest`, before it is buffered.
 */
import { Context, Effect, Layer, type Scope } from "effect"
import type { ChainId } from "../../ingest/ChainEvent.js"
import { ClickHouse } from "../ClickHouse.js"
import { ClickHouseError } from "../ClickHouseError.js"
import { batcherSettings, type BatcherStats, makeBatcher } from "./internal/Batcher.js"
import { insertSplitting } from "./internal/insert.js"
import { formatTs, TS_MS_MAX, TS_MS_MIN, UINT256_LIMIT } from "./TradeRow.js"

export type MarketLifecycle = "trading" | "completed" | "migrated" | "recovery"
export type MigrationStatus = "not_started" | "in_progress" | "completed" | "delayed" | "cancelled"

export interface MarketSnapshot {
  readonly chain: ChainId
  readonly mint: string
  /** When the state was sampled, epoch ms. */
  readonly timestampMs: number
  readonly lifecycle: MarketLifecycle
  /** Quote raw per token raw, as `trades.price`; analytics only. */
  readonly price: number
  /** Curve progress to graduation, 0..10000. */
  readonly progressBps: number
  readonly realQuoteRaw: bigint
  /** Quote volume over the trailing 24 h, raw. */
  readonly volume24hQuoteRaw: bigint
  /** Market cap in quote raw units (exact). */
  readonly marketCapQuoteRaw: bigint
  /** Market cap in USD when a quote price is known; analytics only. */
  readonly marketCapUsd: number | null
  readonly migrationStatus: MigrationStatus
  /** Position of the last event applied to this state (the actor's cursor). */
  readonly position: string
}

export interface MarketSnapshotWriterOptions {
  readonly batchRows: number
  readonly flushIntervalMs: number
  readonly maxBufferedRows: number
  readonly closeFlushAttemptsMax: number
  readonly retryBaseMs: number
  readonly retryMaxDelayMs: number
}

export const marketSnapshotWriterDefaults: MarketSnapshotWriterOptions = {
  batchRows: 5_000,
  flushIntervalMs: 250,
  maxBufferedRows: 50_000,
  closeFlushAttemptsMax: 3,
  retryBaseMs: 20,
  retryMaxDelayMs: 5_000
}

export interface MarketSnapshotWriterShape {
  /** Buffers the snapshots, waiting for room at the bound. At most `maxBufferedRows` per call. */
  readonly record: (snapshots: ReadonlyArray<MarketSnapshot>) => Effect.Effect<void, ClickHouseError>
  /** Buffers the snapshots if they fit now; false (nothing buffered) when full. */
  readonly tryRecord: (snapshots: ReadonlyArray<MarketSnapshot>) => Effect.Effect<boolean, ClickHouseError>
  readonly stats: Effect.Effect<BatcherStats>
}

export class MarketSnapshotWriter extends Context.Tag("curvestream/MarketSnapshotWriter")<
  MarketSnapshotWriter,
  MarketSnapshotWriterShape
>() {
  static layer(options: Partial<MarketSnapshotWriterOptions> = {}): Layer.Layer<MarketSnapshotWriter, ClickHouseError, ClickHouse> {
    return Layer.scoped(MarketSnapshotWriter, make(options))
  }
}

const lifecycles: ReadonlySet<string> = new Set(["trading", "completed", "migrated", "recovery"])
const migrationStatuses: ReadonlySet<string> = new Set(["not_started", "in_progress", "completed", "delayed", "cancelled"])

/** Why a snapshot cannot be stored, or undefined when it can. */
export const invalidSnapshot = (s: MarketSnapshot): string | undefined => {
  if (s.mint.length === 0 || s.mint.length > 512) return `mint must be 1..512 characters`
  if (!Number.isSafeInteger(s.timestampMs) || s.timestampMs < TS_MS_MIN || s.timestampMs > TS_MS_MAX) {
    return `timestampMs ${s.timestampMs} is not a whole millisecond between 1900 and 2299`
  }
  if (!lifecycles.has(s.lifecycle)) return `unknown lifecycle ${JSON.stringify(s.lifecycle)}`
  if (!migrationStatuses.has(s.migrationStatus)) return `unknown migration status ${JSON.stringify(s.migrationStatus)}`
  if (!Number.isInteger(s.progressBps) || s.progressBps < 0 || s.progressBps > 10_000) return `progressBps ${s.progressBps} is not in 0..10000`
  if (!Number.isFinite(s.price)) return `price must be finite`
  if (s.marketCapUsd !== null && !Number.isFinite(s.marketCapUsd)) return `marketCapUsd must be finite or null`
  for (const [name, value] of [
    ["realQuoteRaw", s.realQuoteRaw],
    ["volume24hQuoteRaw", s.volume24hQuoteRaw],
    ["marketCapQuoteRaw", s.marketCapQuoteRaw]
  ] as const) {
    if (value < 0n || value >= UINT256_LIMIT) return `${name} ${value} is outside [0, 2^256)`
  }
  return undefined
}

const snapshotRow = (s: MarketSnapshot): Record<string, unknown> => ({
  chain: s.chain,
  mint: s.mint,
  ts: formatTs(s.timestampMs),
  lifecycle: s.lifecycle,
  price: s.price,
  progress_bps: s.progressBps,
  real_quote_raw: s.realQuoteRaw,
  volume_24h_quote_raw: s.volume24hQuoteRaw,
  market_cap_quote_raw: s.marketCapQuoteRaw,
  market_cap_usd: s.marketCapUsd,
  migration_status: s.migrationStatus,
  position: s.position
})

export const make = (
  input: Partial<MarketSnapshotWriterOptions> = {}
): Effect.Effect<MarketSnapshotWriterShape, ClickHouseError, ClickHouse | Scope.Scope> =>
  Effect.gen(function* () {
    const options: MarketSnapshotWriterOptions = { ...marketSnapshotWriterDefaults, ...input }
    const ch = yield* ClickHouse
    const batcher = yield* makeBatcher<Record<string, unknown>>(
      batcherSettings("MarketSnapshotWriter", options),
      (rows) => insertSplitting(ch, "market_snapshots", rows)
    )
    const toRows = (snapshots: ReadonlyArray<MarketSnapshot>) =>
      Effect.suspend(() => {
        for (const s of snapshots) {
          const why = invalidSnapshot(s)
          if (why !== undefined) {
            return Effect.fail(
              new ClickHouseError({ reason: "InvalidRequest", message: `market snapshot ${s.chain}:${s.mint}: ${why}` })
            )
          }
        }
        return Effect.succeed(snapshots.map(snapshotRow))
      })
    return {
      record: (snapshots) => Effect.flatMap(toRows(snapshots), batcher.offer),
      tryRecord: (snapshots) => Effect.flatMap(toRows(snapshots), batcher.tryOffer),
      stats: batcher.stats
    }
  })
