/**
 * Market-state history: every `intervalMs` the sampler writes one `market_snapshots` row per
 * market whose state moved since the previous sample (its last applied position changed), from
 * the MarketIndex's immutable snapshots. The writer's buffer is bounded: when it is full the
 * sample is dropped and counted (history is analytics; the live state never waits on it).
 * Remembered positions are bounded by the number of live markets.
 */
import { Clock, Duration, Effect } from "effect"
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { marketCapRaw, progressBpsOf, statsOf } from "../../../actors/market/MarketRecord.js"
import type { MarketSnapshot, MarketSnapshotWriterShape } from "../../../clickhouse/writer/MarketSnapshotWriter.js"

/** Raw quote per raw token at the current reserves, as a float: analytics only (the exact price is in the record). */
const rawPrice = (core: MarketCore): number => {
  if (core.lifecycle === "migrated" && core.pool !== null && core.pool.tokenReserveRaw > 0n) {
    return Number(core.pool.quoteReserveRaw) / Number(core.pool.tokenReserveRaw)
  }
  return core.curveState.virtualTokenRaw > 0n ? Number(core.curveState.virtualQuoteRaw) / Number(core.curveState.virtualTokenRaw) : 0
}

export const snapshotOf = (core: MarketCore, nowMs: number): MarketSnapshot => ({
  chain: core.chain,
  mint: core.mint,
  timestampMs: nowMs,
  lifecycle: core.lifecycle,
  price: rawPrice(core),
  progressBps: progressBpsOf(core),
  realQuoteRaw: core.curveState.realQuoteRaw,
  volume24hQuoteRaw: statsOf(core, core.lastEventAtMs).day.volumeRaw,
  marketCapQuoteRaw: marketCapRaw(core) ?? 0n,
  marketCapUsd: null,
  migrationStatus: core.migration.status,
  position: core.lastPosition
})

export const runMarketSnapshotSampler = (index: MarketIndexShape, writer: MarketSnapshotWriterShape, intervalMs: number) =>
  Effect.gen(function* () {
    const sampled = new Map<string, string>()
    let dropped = 0
    for (;;) {
      yield* Effect.sleep(Duration.millis(intervalMs))
      const nowMs = yield* Clock.currentTimeMillis
      const batch: MarketSnapshot[] = []
      const live = new Set<string>()
      for (const core of index.markets()) {
        const key = `${core.chain}:${core.mint}`
        live.add(key)
        if (sampled.get(key) === core.lastPosition) continue
        sampled.set(key, core.lastPosition)
        batch.push(snapshotOf(core, nowMs))
      }
      for (const key of sampled.keys()) if (!live.has(key)) sampled.delete(key)
      if (batch.length === 0) continue
      const accepted = yield* writer.tryRecord(batch).pipe(Effect.orElseSucceed(() => false))
      if (!accepted) {
        dropped += batch.length
        // Forget what was dropped so the next sample tries again.
        for (const s of batch) sampled.delete(`${s.chain}:${s.mint}`)
        yield* Effect.logWarning("market snapshots dropped: the writer's buffer is full").pipe(Effect.annotateLogs({ dropped }))
      }
    }
  })
