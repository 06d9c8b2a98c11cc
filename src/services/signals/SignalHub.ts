/**
 * The in-memory signal hub: the detectors' wiring publishes every signal here (and to the
 * ClickHouse writer); the tape reads the freshest signals from it (those the writer has not
 * flushed yet) and the WebSocket stream takes its snapshot from it and subscribes to new ones.
 *
 * Invariants:
 * - Bounded: the newest `capacity` signals are kept (oldest evicted, counted in `evicted`); at
 *   most `maxSubscribers` listeners (another `subscribe` throws).
 * - Each signal id once: a signal whose id is already held (a re-emission after a restart
 *   replays the bus from the detectors' checkpoints) is skipped and counted in `duplicates`.
 * - Order: listeners see signals in publish order, synchronously; a listener that throws is
 *   removed (counted in `listenerFailures`), never breaking the publisher.
 */
import type { Signal } from "../../domain/Signal.js"

export interface SignalHubOptions {
  /** Signals kept for snapshots and fresh reads (default 5,000). */
  readonly capacity: number
  /** Most listeners (default 64). */
  readonly maxSubscribers: number
}

export const signalHubDefaults: SignalHubOptions = { capacity: 5_000, maxSubscribers: 64 }

export interface SignalHubStats {
  readonly held: number
  readonly published: number
  readonly evicted: number
  readonly duplicates: number
  readonly listenerFailures: number
  readonly subscribers: number
}

export class SignalHub {
  readonly options: SignalHubOptions
  private readonly ring: Array<Signal | undefined>
  private start = 0
  private size = 0
  private readonly ids = new Set<string>()
  private readonly listeners = new Set<(s: Signal) => void>()
  private published = 0
  private evicted = 0
  private duplicates = 0
  private listenerFailures = 0

  constructor(options: Partial<SignalHubOptions> = {}) {
    this.options = { ...signalHubDefaults, ...options }
    for (const name of ["capacity", "maxSubscribers"] as const) {
      if (!Number.isSafeInteger(this.options[name]) || this.options[name] < 1) throw new RangeError(`SignalHub: ${name} must be a positive integer`)
    }
    this.ring = new Array<Signal | undefined>(this.options.capacity)
  }

  /** Adds the signals (skipping ids already held) and tells every listener, in order. */
  publish(signals: ReadonlyArray<Signal>): void {
    for (const s of signals) {
      if (this.ids.has(s.id)) {
        this.duplicates++
        continue
      }
      const cap = this.options.capacity
      if (this.size === cap) {
        const old = this.ring[this.start]!
        this.ids.delete(old.id)
        this.ring[this.start] = s
        this.start = (this.start + 1) % cap
        this.evicted++
      } else {
        this.ring[(this.start + this.size) % cap] = s
        this.size++
      }
      this.ids.add(s.id)
      this.published++
      for (const l of this.listeners) {
        try {
          l(s)
        } catch {
          this.listeners.delete(l)
          this.listenerFailures++
        }
      }
    }
  }

  /** Newest first, those matching `keep`, at most `limit`. */
  newest(limit: number, keep: (s: Signal) => boolean = () => true): Array<Signal> {
    const out: Array<Signal> = []
    for (let i = this.size - 1; i >= 0 && out.length < limit; i--) {
      const s = this.ring[(this.start + i) % this.options.capacity]!
      if (keep(s)) out.push(s)
    }
    return out
  }

  has(id: string): boolean {
    return this.ids.has(id)
  }

  /** Returns the unsubscribe function. Throws at `maxSubscribers`. */
  subscribe(listener: (s: Signal) => void): () => void {
    if (this.listeners.size >= this.options.maxSubscribers) throw new RangeError(`SignalHub: at most ${this.options.maxSubscribers} subscribers`)
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  stats(): SignalHubStats {
    return {
      held: this.size,
      published: this.published,
      evicted: this.evicted,
      duplicates: this.duplicates,
      listenerFailures: this.listenerFailures,
      subscribers: this.listeners.size
    }
  }
}
