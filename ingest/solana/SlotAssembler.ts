/**
 * Groups a Geyser stream's transactions into whole slots. A slot is complete when its block
 * meta arrives (Yellowstone sends a slot's transactions, then its block meta, at every
 * commitment): that is also where the block time comes from, so every event of the slot gets
 * the same deterministic timestamp.
 *
 *   transaction(s ≤ committed)  → Duplicate (already published in this run, e.g. replay overlap)
 *   transaction(s > committed)  → Buffered, or Overflow past `maxBufferedTransactions`
 *   blockMeta(s ≤ committed)    → Duplicate
 *   blockMeta(s), older slot still buffered → OutOfOrder (that slot never got its meta)
 *   blockMeta(s)                → Completed {slot, blockTimeMs, transactions by index}
 *   commit(s)                   → committed = s   (only after the slot is published)
 *   reset()                     → buffers dropped (the stream is gone; replay resends them)
 *
 * Invariants: `committed` only grows; a completed slot's transactions are in index order with
 * one entry per signature; at most `maxBufferedTransactions` transactions are held.
 * A block meta without a block time takes the last known one (never 0, never the wall clock).
 */
import type { CurveTransaction } from "./decoders/index.js"

export interface AssembledSlot {
  readonly slot: bigint
  readonly blockTimeMs: number
  readonly transactions: ReadonlyArray<CurveTransaction>
}

export type AssemblerResult =
  | { readonly _tag: "Buffered" }
  | { readonly _tag: "Duplicate" }
  | { readonly _tag: "Overflow"; readonly buffered: number }
  | { readonly _tag: "OutOfOrder"; readonly detail: string }
  | { readonly _tag: "Completed"; readonly slot: AssembledSlot }

export class SlotAssembler {
  private readonly buffered = new Map<bigint, CurveTransaction[]>()
  private count = 0
  private lastBlockTimeMs = 0

  constructor(
    private committedSlot: bigint | null,
    readonly maxBufferedTransactions: number
  ) {}

  /** The last slot whose events were published (null before the first). */
  get committed(): bigint | null {
    return this.committedSlot
  }

  get bufferedTransactions(): number {
    return this.count
  }

  private done(slot: bigint): boolean {
    return this.committedSlot !== null && slot <= this.committedSlot
  }

  transaction(tx: CurveTransaction): AssemblerResult {
    if (this.done(tx.slot)) return { _tag: "Duplicate" }
    if (this.count + 1 > this.maxBufferedTransactions) return { _tag: "Overflow", buffered: this.count }
    let list = this.buffered.get(tx.slot)
    if (list === undefined) {
      list = []
      this.buffered.set(tx.slot, list)
    }
    list.push(tx)
    this.count++
    return { _tag: "Buffered" }
  }

  blockMeta(slot: bigint, blockTimeMs: number | null): AssemblerResult {
    if (this.done(slot)) return { _tag: "Duplicate" }
    for (const s of this.buffered.keys()) {
      if (s < slot) return { _tag: "OutOfOrder", detail: `block meta of slot ${slot} before that of slot ${s}, which has transactions` }
    }
    const list = this.buffered.get(slot) ?? []
    this.buffered.delete(slot)
    this.count -= list.length
    const seen = new Set<string>()
    const transactions = list
      .filter((t) => (seen.has(t.signature) ? false : (seen.add(t.signature), true)))
      .sort((a, b) => a.index - b.index)
    if (blockTimeMs !== null) this.lastBlockTimeMs = blockTimeMs
    return { _tag: "Completed", slot: { slot, blockTimeMs: this.lastBlockTimeMs, transactions } }
  }

  commit(slot: bigint): void {
    if (this.committedSlot === null || slot > this.committedSlot) this.committedSlot = slot
  }

  /** A new stream starts from the committed slot: partial slots are dropped. */
  reset(): void {
    this.buffered.clear()
    this.count = 0
  }

  /** Forget the committed slot (the chain was reset under us). */
  forget(): void {
    this.committedSlot = null
    this.reset()
  }
}
