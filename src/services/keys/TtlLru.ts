/**
 * A bounded least-recently-used cache whose entries also expire `ttlMs` after they were set.
 * At most `maxEntries` live at once: inserting past the bound evicts the least recently used
 * entry (Map insertion order, refreshed on each hit). Time comes from the caller.
 */
export class TtlLru<K, V> {
  readonly #entries = new Map<K, { value: V; expiresAtMs: number }>()
  readonly maxEntries: number
  readonly ttlMs: number

  constructor(options: { readonly maxEntries: number; readonly ttlMs: number }) {
    if (!(options.maxEntries > 0)) throw new RangeError("maxEntries must be positive")
    if (!(options.ttlMs >= 0)) throw new RangeError("ttlMs must be 0 or more")
    this.maxEntries = options.maxEntries
    this.ttlMs = options.ttlMs
  }

  get size(): number {
    return this.#entries.size
  }

  get(key: K, nowMs: number): V | undefined {
    const e = this.#entries.get(key)
    if (e === undefined) return undefined
    this.#entries.delete(key)
    if (e.expiresAtMs <= nowMs) return undefined
    this.#entries.set(key, e)
    return e.value
  }

  set(key: K, value: V, nowMs: number, ttlMs: number = this.ttlMs): void {
    this.#entries.delete(key)
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    this.#entries.set(key, { value, expiresAtMs: nowMs + ttlMs })
  }

  delete(key: K): void {
    this.#entries.delete(key)
  }

  clear(): void {
    this.#entries.clear()
  }
}
