/**
 * Two tiny synchronization helpers for the runtime's hot path, cheaper than Effect's Queue or
 * Deferred per message: a `Wakeup` for one waiting fiber (a notify with nobody waiting is kept,
 * so no wake-up is lost) and `Waiters`, a list of fibers each waiting for a counter to reach its
 * target. Both are driven synchronously from plain code on the JS thread.
 */
import { Effect } from "effect"

export class Wakeup {
  private pending = false
  private resume: ((effect: Effect.Effect<void>) => void) | undefined = undefined

  notify(): void {
    const resume = this.resume
    if (resume !== undefined) {
      this.resume = undefined
      resume(Effect.void)
    } else this.pending = true
  }

  /** Resolves at the next `notify` (at once when one came while nobody waited). One waiter at a time. */
  readonly wait: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.pending) {
      this.pending = false
      resume(Effect.void)
      return
    }
    this.resume = resume
    return Effect.sync(() => {
      if (this.resume === resume) this.resume = undefined
    })
  })
}

interface Waiter {
  readonly target: number
  readonly resume: (effect: Effect.Effect<void>) => void
}

/** Fibers waiting for a monotonic counter to reach a target. */
export class Waiters {
  private list: Array<Waiter> = []

  get size(): number {
    return this.list.length
  }

  /** Resolves once `current()` ≥ target (at once when it already is). */
  await(target: number, current: () => number): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      if (current() >= target) {
        resume(Effect.void)
        return
      }
      const waiter: Waiter = { target, resume }
      this.list.push(waiter)
      return Effect.sync(() => {
        const i = this.list.indexOf(waiter)
        if (i >= 0) this.list.splice(i, 1)
      })
    })
  }

  /** Resumes every waiter whose target is ≤ value. */
  release(value: number): void {
    if (this.list.length === 0) return
    const keep: Array<Waiter> = []
    const ready: Array<Waiter> = []
    for (const w of this.list) (w.target <= value ? ready : keep).push(w)
    if (ready.length === 0) return
    this.list = keep
    for (const w of ready) w.resume(Effect.void)
  }
}
