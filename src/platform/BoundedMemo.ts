/**
 * A memo of a pure function, bounded: at `max` entries it is cleared before the next one is kept
 * (the values recur, so a clear costs one recomputation each; no per-entry bookkeeping on the hot
 * path as an LRU would have). A `compute` that throws keeps nothing. `peek` and `keep` are the same
 * memo for a value computed elsewhere (an effect, a read), kept under the same bound.
 */
export class BoundedMemo<K, V> {
  private readonly map = new Map<K, V>()

  constructor(readonly max: number) {}

  get size(): number {
    return this.map.size
  }

  /** The value kept for `key`, else `compute(arg)`, kept. `arg` rather than a closure: nothing allocated per call. */
  get<A>(key: K, arg: A, compute: (arg: A) => V): V {
    const hit = this.map.get(key)
    if (hit !== undefined) return hit
    return this.keep(key, compute(arg))
  }

  /** The value kept for `key`, if any. */
  peek(key: K): V | undefined {
    return this.map.get(key)
  }

  /** Keeps `value` for `key` (clearing the memo first when it is at its bound and `key` is new); returns it. */
  keep(key: K, value: V): V {
    if (this.map.size >= this.max && !this.map.has(key)) this.map.clear()
    this.map.set(key, value)
    return value
  }

  /** Whether a value is kept for `key` (nothing computed). */
  has(key: K): boolean {
    return this.map.has(key)
  }

  clear(): void {
    this.map.clear()
  }
}
