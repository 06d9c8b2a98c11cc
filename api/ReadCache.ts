/**
 * A bounded, time-limited cache of single-flight reads for public routes (the Hood mark, the copy
 * score, the cohorts): concurrent requests for a key share one read; its answer is kept for
 * `ttlMs` from the read's start; a failed read is dropped so the next request tries again.
 *
 * Bounded: at most `maxEntries` keys (insertion order = age; the oldest goes first).
 */
import { Deferred, Effect, Exit } from "effect"

/** Per-key time-bounded store; entries past their TTL are replaced on the next read. */
export class TtlCache<V> {
  readonly #entries = new Map<string, { readonly startedMs: number; readonly value: V }>()
  constructor(
    readonly ttlMs: number,
    readonly maxEntries: number
  ) {
    if (!(maxEntries > 0)) throw new RangeError("maxEntries must be positive")
  }
  get size(): number {
    return this.#entries.size
  }
  get(key: string, nowMs: number): V | undefined {
    const e = this.#entries.get(key)
    if (e === undefined) return undefined
    if (nowMs - e.startedMs >= this.ttlMs || nowMs < e.startedMs) {
      this.#entries.delete(key)
      return undefined
    }
    return e.value
  }
  set(key: string, startedMs: number, value: V): void {
    this.#entries.delete(key)
    while (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done === true) break
      this.#entries.delete(oldest.value)
    }
    this.#entries.set(key, { startedMs, value })
  }
  /** Removes `key` only while it still holds `value` (a newer read is left alone). */
  deleteIf(key: string, value: V): void {
    if (this.#entries.get(key)?.value === value) this.#entries.delete(key)
  }
}

interface Flight<A, E> {
  readonly done: Deferred.Deferred<A, E>
}

/** Single-flight reads over a `TtlCache`. */
export class ReadCache<A, E> {
  readonly #cache: TtlCache<Flight<A, E>>
  constructor(ttlMs: number, maxEntries: number) {
    this.#cache = new TtlCache(ttlMs, maxEntries)
  }
  get size(): number {
    return this.#cache.size
  }
  /**
   * The cached answer for `key`, or `read` started now and shared. The read runs as a daemon:
   * it outlives a client that goes away, so the requests sharing it still get it.
   */
  get(key: string, nowMs: number, read: Effect.Effect<A, E>): Effect.Effect<A, E> {
    const hit = this.#cache.get(key, nowMs)
    if (hit !== undefined) return Deferred.await(hit.done)
    const cache = this.#cache
    return Effect.gen(function* () {
      const done = yield* Deferred.make<A, E>()
      const flight: Flight<A, E> = { done }
      cache.set(key, nowMs, flight)
      yield* Effect.forkDaemon(
        read.pipe(
          Effect.exit,
          Effect.tap((exit) => (Exit.isFailure(exit) ? Effect.sync(() => cache.deleteIf(key, flight)) : Effect.void)),
          Effect.flatMap((exit) => Deferred.done(done, exit))
        )
      )
      return yield* Deferred.await(done)
    })
  }
}
