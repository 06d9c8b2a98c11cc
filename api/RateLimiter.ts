/**
 * Per-client request limits ("120 requests per minute per client"): a sliding-window counter
 * per key — the current fixed minute plus the previous minute weighted by how much of it still
 * overlaps the window — which refuses bursts at a window edge that a plain fixed window would let
 * through double, in O(1) memory per key.
 *
 * Bounded: at most `maxKeys` clients are tracked; past that the least recently seen key is
 * evicted (Map insertion order, re-inserted on each hit), which can only make the limiter more
 * lenient for the evicted client, never refuse anyone wrongly. Synchronous and allocation-free
 * on the hot path apart from a new key's entry; time comes from the caller so tests control it.
 */
import type { SharedScope } from "../src/db/SharedWindowCounts.js"

export interface RateLimitDecision {
  readonly allowed: boolean
  /** Whole seconds until a request would be allowed again (≥ 1 when refused, 0 when allowed). */
  readonly retryAfterSec: number
  readonly remaining: number
}

interface Entry {
  windowStartMs: number
  current: number
  previous: number
}

const ALLOWED_FULL: RateLimitDecision = { allowed: true, retryAfterSec: 0, remaining: 0 }

export class RateLimiter {
  readonly #entries = new Map<string, Entry>()
  readonly limit: number
  readonly windowMs: number
  readonly maxKeys: number
  readonly #shared: SharedScope | undefined

  /**
   * `shared`: the counts other API processes admitted under the same scope are added to this
   * process's (`src/db/SharedWindowCounts.ts`), so the limit holds across replicas within one
   * sync interval; absent, the limit is this process's alone.
   */
  constructor(options: { readonly limit: number; readonly windowMs?: number; readonly maxKeys?: number; readonly shared?: SharedScope | undefined }) {
    if (!(options.limit > 0)) throw new RangeError("limit must be positive")
    this.limit = options.limit
    this.windowMs = options.windowMs ?? 60_000
    this.maxKeys = options.maxKeys ?? 100_000
    this.#shared = options.shared
  }

  get size(): number {
    return this.#entries.size
  }

  /** Counts one request for `key` at `nowMs` when allowed; a refused request is not counted. */
  hit(key: string, nowMs: number): RateLimitDecision {
    const entry = this.#entry(key, nowMs)
    const shared = this.#shared
    if (shared === undefined) return this.#decide(entry, nowMs, true, 0, 0)
    const peers = shared.counts.peers(shared.scope, key, entry.windowStartMs, this.windowMs, nowMs)
    const decision = this.#decide(entry, nowMs, true, peers.current, peers.previous)
    if (decision.allowed) shared.counts.counted(shared.scope, key, entry.windowStartMs, this.windowMs, entry.current)
    return decision
  }

  /**
   * Whether one more request for `key` would be allowed at `nowMs`, counting nothing (a key not
   * tracked is allowed and stays untracked).
   */
  check(key: string, nowMs: number): RateLimitDecision {
    const tracked = this.#entries.get(key)
    const windowStart = nowMs - (nowMs % this.windowMs)
    const shared = this.#shared
    const peers = shared === undefined ? undefined : shared.counts.peers(shared.scope, key, windowStart, this.windowMs, nowMs)
    const peerCurrent = peers?.current ?? 0
    const peerPrevious = peers?.previous ?? 0
    if (tracked === undefined) {
      if (peerCurrent === 0 && peerPrevious === 0) return { allowed: true, retryAfterSec: 0, remaining: this.limit - 1 }
      return this.#decide({ windowStartMs: windowStart, current: 0, previous: 0 }, nowMs, false, peerCurrent, peerPrevious)
    }
    // The entry rolled to this window on a copy: a check changes neither counts nor recency.
    if (tracked.windowStartMs === windowStart) return this.#decide({ ...tracked }, nowMs, false, peerCurrent, peerPrevious)
    const previous = windowStart - tracked.windowStartMs === this.windowMs ? tracked.current : 0
    return this.#decide({ windowStartMs: windowStart, current: 0, previous }, nowMs, false, peerCurrent, peerPrevious)
  }

  /** `key`'s entry rolled to the window of `nowMs`, created (evicting the least recent) when absent. */
  #entry(key: string, nowMs: number): Entry {
    const windowStart = nowMs - (nowMs % this.windowMs)
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      if (this.#entries.size >= this.maxKeys) {
        const oldest = this.#entries.keys().next()
        if (oldest.done !== true) this.#entries.delete(oldest.value)
      }
      entry = { windowStartMs: windowStart, current: 0, previous: 0 }
    } else {
      this.#entries.delete(key) // re-inserted below: keeps Map order = recency
      if (entry.windowStartMs !== windowStart) {
        entry.previous = windowStart - entry.windowStartMs === this.windowMs ? entry.current : 0
        entry.current = 0
        entry.windowStartMs = windowStart
      }
    }
    this.#entries.set(key, entry)
    return entry
  }

  /** `peerCurrent`/`peerPrevious`: what other processes admitted in the same two windows (0 unshared). */
  #decide(entry: Entry, nowMs: number, count: boolean, peerCurrent: number, peerPrevious: number): RateLimitDecision {
    const windowStart = entry.windowStartMs
    const elapsed = nowMs - windowStart
    const weight = (this.windowMs - elapsed) / this.windowMs
    const current = entry.current + peerCurrent
    const previousCount = entry.previous + peerPrevious
    const estimated = previousCount * weight + current
    if (estimated + 1 <= this.limit) {
      if (count) entry.current++
      return this.limit - estimated - 1 >= 1
        ? { allowed: true, retryAfterSec: 0, remaining: Math.floor(this.limit - estimated - 1) }
        : ALLOWED_FULL
    }
    // Refused: how long until the previous window's weight decays enough for one more request.
    let waitMs: number
    if (current + 1 > this.limit) {
      // This window is full: it becomes the next window's `previous`, which must then decay by
      // one request's worth (windowMs / limit) before another fits.
      waitMs = this.windowMs - elapsed + Math.ceil(this.windowMs / this.limit)
    } else {
      const needed = (previousCount * weight + current + 1 - this.limit) / previousCount
      waitMs = Math.ceil(needed * this.windowMs)
    }
    return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)), remaining: 0 }
  }
}
