/**
 * The social-mentions source: recent posts naming tokens, for `/v1/social/mentions`,
 * `/mention-marks`, `/mentions/trending` and the kol_mention detector. On the localnet the posts
 * come from the seeded generator (SimulatedMentions.ts); a real feed would `publish` into the
 * same store.
 *
 * Invariants:
 * - Bounded: the store keeps the newest `capacity` mentions (default 10,000), oldest dropped;
 *   listeners are at most `maxListeners` (default 16; another `subscribe` throws).
 * - Each mention is published once, in time order per publisher; listeners are called
 *   synchronously in subscription order and must not throw (a throwing listener is removed).
 */
import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import type { SocialMention } from "../../../actors/signals/KolMention.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { type MentionableToken, simulatedMentions, simulatedMentionsDefaults, type SimulatedMentionsOptions } from "./SimulatedMentions.js"

export interface MentionQuery {
  readonly chain?: ChainId
  readonly asset?: string
  readonly sinceMs?: number
  /** Newest first, at most this many (default 50). */
  readonly limit?: number
}

export interface SocialMentionsShape {
  readonly publish: (mentions: ReadonlyArray<SocialMention>) => void
  readonly recent: (query?: MentionQuery) => ReadonlyArray<SocialMention>
  /** Returns the unsubscribe function. */
  readonly subscribe: (listener: (mention: SocialMention) => void) => () => void
  readonly size: () => number
}

export class SocialMentions extends Context.Tag("curvestream/SocialMentions")<SocialMentions, SocialMentionsShape>() {
  /** An empty store (a real feed, or tests, publish into it). */
  static layer(options: { readonly capacity?: number; readonly maxListeners?: number } = {}): Layer.Layer<SocialMentions> {
    return Layer.sync(SocialMentions, () => makeStore(options.capacity ?? 10_000, options.maxListeners ?? 16))
  }

  /**
   * The store plus the localnet generator: every `everyMs` (default 5 s) it asks `tokens` for
   * the live tokens and publishes that tick's mentions, stamped with the effect Clock.
   */
  static layerSimulated(
    options: Partial<Omit<SimulatedMentionsOptions, "kolHandles" | "plainAuthors">> &
      Pick<SimulatedMentionsOptions, "kolHandles" | "plainAuthors"> & { readonly everyMs?: number; readonly capacity?: number },
    tokens: Effect.Effect<ReadonlyArray<MentionableToken>>
  ): Layer.Layer<SocialMentions> {
    return Layer.scoped(
      SocialMentions,
      Effect.gen(function* () {
        const store = makeStore(options.capacity ?? 10_000, 16)
        const sim: SimulatedMentionsOptions = { ...simulatedMentionsDefaults, ...options }
        let tick = 0
        const once = Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const live = yield* tokens
          store.publish(simulatedMentions(sim, tick++, now, live))
        })
        yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(Duration.millis(options.everyMs ?? 5_000))))
        return store
      })
    )
  }
}

export const makeStore = (capacity: number, maxListeners: number): SocialMentionsShape => {
  if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError("SocialMentions: capacity must be a positive integer")
  const ring: Array<SocialMention> = []
  let start = 0
  const listeners = new Set<(m: SocialMention) => void>()
  const newestFirst = function* () {
    for (let i = ring.length - 1; i >= 0; i--) yield ring[(start + i) % ring.length]!
  }
  return {
    publish: (mentions) => {
      for (const m of mentions) {
        if (ring.length < capacity) ring.push(m)
        else {
          ring[start] = m
          start = (start + 1) % capacity
        }
        for (const l of [...listeners]) {
          try {
            l(m)
          } catch {
            listeners.delete(l)
          }
        }
      }
    },
    recent: (q = {}) => {
      const limit = Math.max(0, Math.min(q.limit ?? 50, capacity))
      const out: Array<SocialMention> = []
      for (const m of newestFirst()) {
        if (out.length >= limit) break
        if (q.chain !== undefined && m.chain !== q.chain) continue
        if (q.asset !== undefined && m.asset !== q.asset) continue
        if (q.sinceMs !== undefined && m.atMs < q.sinceMs) continue
        out.push(m)
      }
      return out
    },
    subscribe: (listener) => {
      if (listeners.size >= maxListeners) throw new RangeError(`SocialMentions: at most ${maxListeners} listeners`)
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    size: () => ring.length
  }
}
