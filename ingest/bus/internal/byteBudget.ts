/**
 * A FIFO byte budget: the bound on appended-but-not-yet-durable bytes. `acquire` takes bytes now
 * when they are free and nobody waits ahead; otherwise the caller queues and is served strictly in
 * arrival order (a large request is never starved by small ones). Requests are never larger than
 * `capacityBytes` (the caller splits), so every waiter is eventually served as flushes release.
 */
interface Waiter {
  readonly bytes: number
  readonly resume: (error: unknown) => void
}

export class ByteBudget {
  private usedBytes = 0
  private readonly waiters: Array<Waiter> = []
  private waitersHead = 0
  private failure: unknown = undefined
  /** Highest `usedBytes` ever observed; never exceeds `capacityBytes`. */
  highWaterBytes = 0
  /** How many acquisitions had to wait at the bound. */
  waits = 0

  constructor(readonly capacityBytes: number) {}

  get used(): number {
    return this.usedBytes
  }

  get waiting(): number {
    return this.waiters.length - this.waitersHead
  }

  /** Takes `bytes` if free and no one is queued; false otherwise. */
  tryAcquire(bytes: number): boolean {
    if (this.failure !== undefined || this.waiting > 0 || this.usedBytes + bytes > this.capacityBytes) return false
    this.take(bytes)
    return true
  }

  /**
   * Queues for `bytes`; `resume(undefined)` once taken, `resume(error)` if the budget is failed
   * (shutdown). Returns a cancel function for an interrupted caller.
   */
  acquire(bytes: number, resume: (error: unknown) => void): () => void {
    if (this.failure !== undefined) {
      resume(this.failure)
      return noop
    }
    if (this.tryAcquire(bytes)) {
      resume(undefined)
      return noop
    }
    this.waits++
    const waiter: Waiter = { bytes, resume }
    this.waiters.push(waiter)
    return () => {
      const i = this.waiters.indexOf(waiter, this.waitersHead)
      if (i >= 0) {
        this.waiters.splice(i, 1)
        this.serve()
      }
    }
  }

  release(bytes: number): void {
    this.usedBytes -= bytes
    this.serve()
  }

  /** Fails every queued and future acquisition with `error`. */
  fail(error: unknown): void {
    this.failure = error
    const queued = this.waiters.slice(this.waitersHead)
    this.waiters.length = 0
    this.waitersHead = 0
    for (const w of queued) w.resume(error)
  }

  private take(bytes: number): void {
    this.usedBytes += bytes
    if (this.usedBytes > this.highWaterBytes) this.highWaterBytes = this.usedBytes
  }

  private serve(): void {
    while (this.waitersHead < this.waiters.length) {
      const next = this.waiters[this.waitersHead]!
      if (this.usedBytes + next.bytes > this.capacityBytes) break
      this.waitersHead++
      this.take(next.bytes)
      next.resume(undefined)
    }
    if (this.waitersHead > 64 && this.waitersHead * 2 > this.waiters.length) {
      this.waiters.splice(0, this.waitersHead)
      this.waitersHead = 0
    }
    if (this.waitersHead === this.waiters.length) {
      this.waiters.length = 0
      this.waitersHead = 0
    }
  }
}

const noop = (): void => {}
