/**
 * A shard's bounded mailbox: a ring buffer of (key, message) pairs with a fixed capacity, one
 * consumer (the shard fiber) and any number of producers (the bus partition fibers).
 *
 * Invariants:
 * - Never holds more than `capacity` messages; `tryPush` refuses at the bound and the producer
 *   waits on `awaitSpace` (backpressure): nothing is dropped.
 * - FIFO: messages are drained in push order, so a producer that knows its last push count
 *   (`pushed` after pushing) knows its messages are handled once `taken` reaches it.
 * - Draining is synchronous and batch-wise: `drain(max, f)` calls `f` for up to `max` messages
 *   with no allocation per message.
 */
import type { Effect } from "effect"
import { Waiters, Wakeup } from "./internal/Wakeup.js"

export class Mailbox<A> {
  private readonly keys: Array<string | undefined>
  private readonly items: Array<A | undefined>
  private head = 0
  private count = 0
  /** Messages ever pushed / taken (monotonic). */
  pushed = 0
  taken = 0
  /** Times a producer found the mailbox full. */
  fullWaits = 0
  private readonly notEmpty = new Wakeup()
  private readonly space = new Waiters()

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`mailbox capacity must be a positive integer, got ${capacity}`)
    this.keys = new Array<string | undefined>(capacity)
    this.items = new Array<A | undefined>(capacity)
  }

  get size(): number {
    return this.count
  }

  /** Appends unless full; true when appended. */
  tryPush(key: string, item: A): boolean {
    if (this.count === this.capacity) {
      this.fullWaits++
      return false
    }
    const tail = (this.head + this.count) % this.capacity
    this.keys[tail] = key
    this.items[tail] = item
    this.count++
    this.pushed++
    if (this.count === 1) this.notEmpty.notify()
    return true
  }

  /** Resolves once at least one slot is free. */
  get awaitSpace(): Effect.Effect<void> {
    return this.space.await(1, () => this.capacity - this.count)
  }

  /** Resolves once a message is waiting (the single consumer only). */
  get awaitItems(): Effect.Effect<void> {
    return this.notEmpty.wait
  }

  /** Hands up to `max` messages to `f` in FIFO order; returns how many. Wakes waiting producers. */
  drain(max: number, f: (key: string, item: A) => void): number {
    const n = Math.min(max, this.count)
    for (let i = 0; i < n; i++) {
      const at = this.head
      const key = this.keys[at]!
      const item = this.items[at]!
      this.keys[at] = undefined
      this.items[at] = undefined
      this.head = (at + 1) % this.capacity
      this.count--
      this.taken++
      f(key, item)
    }
    if (n > 0) this.space.release(this.capacity - this.count)
    return n
  }
}
