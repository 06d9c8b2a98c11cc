/**
 * Retired ranges of a topic: the records of keys with a given prefix that were on the bus before a
 * given end offset per partition, and must never be delivered again. When the engine rebuilds a
 * chain's derived state (that chain was replaced), the replaced chain's events still on
 * `chain.events` after the consumers' committed offsets (a crash's uncommitted tail) are retired:
 * every consumer then skips them, as if they had been committed.
 *
 * `RetiredRanges.wrap(bus)` is the bus every consumer subscribes through: a batch reaches the
 * consumer without its retired records, with `nextOffset` set to the offset after the whole batch,
 * so a consumer that commits by itself commits past them (and a batch left empty is still handed
 * over for that commit; with `autoCommit` the bus commits it as before). Publishing and every other
 * operation pass straight through. Ranges are added before any consumer subscribes.
 */
import type { Effect } from "effect"
import type { BusBatch, BusShape } from "./Bus.js"

export interface RetiredRange {
  readonly topic: string
  /** e.g. `solana:` (bus keys are `<chain>:<mint>`). */
  readonly keyPrefix: string
  /** partition → the first offset that is not retired. */
  readonly below: ReadonlyMap<number, number>
}

export class RetiredRanges {
  private readonly ranges: Array<RetiredRange> = []

  add(range: RetiredRange): void {
    this.ranges.push(range)
  }

  get size(): number {
    return this.ranges.length
  }

  /** Whether a record is retired. */
  retired(topic: string, partition: number, offset: number, key: string): boolean {
    for (const r of this.ranges) {
      if (r.topic === topic && offset < (r.below.get(partition) ?? 0) && key.startsWith(r.keyPrefix)) return true
    }
    return false
  }

  /** The batch without its retired records (the same object when none is retired). */
  filter(batch: BusBatch): BusBatch {
    if (this.ranges.length === 0) return batch
    const kept = batch.records.filter((r) => !this.retired(batch.topic, batch.partition, r.offset, r.key))
    if (kept.length === batch.records.length) return batch
    const last = batch.records[batch.records.length - 1]
    return { ...batch, records: kept, ...(last === undefined ? {} : { nextOffset: last.offset + 1 }) }
  }

  wrap(bus: BusShape): BusShape {
    return {
      ...bus,
      subscribe: <E, R>(options: Parameters<BusShape["subscribe"]>[0], onBatch: (batch: BusBatch) => Effect.Effect<void, E, R>) =>
        bus.subscribe(options, (batch) => onBatch(this.filter(batch)))
    }
  }
}
