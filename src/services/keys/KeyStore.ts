/**
 * The agent-key read path: key rows (joined with their account) by prefix, cached in a bounded
 * LRU with a short TTL so authenticating a hot key costs a hash and a map lookup, not a query.
 *
 * Invariants:
 * - Every change this process makes to a key (revoke, access, limits, label, embedded wallet)
 *   calls `invalidate` inside the same request, so this process sees it on the key's next
 *   request. Other processes see it within `ttlMs` (default 2 s; docs/decisions.md).
 * - Unknown prefixes are cached too, in a cache of their own (`negativeEntries`, default 10,000,
 *   for `negativeTtlMs`, default 2 s), so probing a prefix again costs no query, and probing many
 *   cannot evict the live keys' entries; issuing a key invalidates its prefix in both. Probing
 *   many distinct prefixes is bounded by the failed-authentication throttle (`api/auth`).
 * - `lastUsedAt` is written at most once per key per `touchIntervalMs` (default 60 s), off the
 *   request's path.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { type Account, findAccount } from "../accounts/AccountRepository.js"
import { type AgentKey, findKeyByPrefix, touchKey } from "./KeyRepository.js"
import { TtlLru } from "./TtlLru.js"

export interface KeyEntry {
  readonly key: AgentKey
  readonly account: Account
}

export interface KeyStoreShape {
  readonly lookup: (prefix: string, nowMs: number) => Effect.Effect<KeyEntry | undefined, SqlError>
  readonly invalidate: (prefix: string) => void
  /** Queries run for lookups (cache misses) since start, and unknown prefixes cached now. */
  readonly stats: () => { readonly loads: number; readonly unknownCached: number }
  /** Records use; writes `last_used_at` at most once per key per touch interval. */
  readonly touch: (keyId: string, nowMs: number) => void
}

export class KeyStore extends Context.Tag("curvestream/KeyStore")<KeyStore, KeyStoreShape>() {}

export interface KeyStoreOptions {
  readonly ttlMs?: number
  readonly maxEntries?: number
  /** Unknown prefixes remembered (default 10,000) and for how long (default 2 s). */
  readonly negativeEntries?: number
  readonly negativeTtlMs?: number
  readonly touchIntervalMs?: number
}

export const DEFAULT_KEY_CACHE_TTL_MS = 2_000
export const DEFAULT_KEY_CACHE_ENTRIES = 10_000

export const layer = (options: KeyStoreOptions = {}): Layer.Layer<KeyStore, never, SqlClient.SqlClient> =>
  Layer.effect(
    KeyStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const cache = new TtlLru<string, KeyEntry>({
        maxEntries: options.maxEntries ?? DEFAULT_KEY_CACHE_ENTRIES,
        ttlMs: options.ttlMs ?? DEFAULT_KEY_CACHE_TTL_MS
      })
      const unknown = new TtlLru<string, true>({
        maxEntries: options.negativeEntries ?? DEFAULT_KEY_CACHE_ENTRIES,
        ttlMs: options.negativeTtlMs ?? DEFAULT_KEY_CACHE_TTL_MS
      })
      let loads = 0
      /** Invalidations so far (any prefix): a load that saw this number change keeps nothing. */
      let invalidations = 0
      const touchInterval = options.touchIntervalMs ?? 60_000
      const touched = new TtlLru<string, true>({ maxEntries: options.maxEntries ?? DEFAULT_KEY_CACHE_ENTRIES, ttlMs: touchInterval })

      const load = (prefix: string) =>
        Effect.gen(function* () {
          const key = yield* findKeyByPrefix(prefix)
          if (key === undefined) return undefined
          const account = yield* findAccount(key.accountId)
          return account === undefined ? undefined : { key, account }
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql))

      const lookup = (prefix: string, nowMs: number): Effect.Effect<KeyEntry | undefined, SqlError> =>
        Effect.suspend(() => {
          const hit = cache.get(prefix, nowMs)
          if (hit !== undefined) return Effect.succeed(hit)
          if (unknown.get(prefix, nowMs) !== undefined) return Effect.succeed(undefined)
          loads++
          // A load an invalidation overtook (the row changed between its read and now) answers
          // its caller but is not kept: the next lookup reads the change.
          const generation = invalidations
          return Effect.tap(load(prefix), (entry) =>
            Effect.sync(() => {
              if (generation !== invalidations) return
              if (entry === undefined) unknown.set(prefix, true, nowMs)
              else cache.set(prefix, entry, nowMs)
            })
          )
        })

      const touch = (keyId: string, nowMs: number): void => {
        if (touched.get(keyId, nowMs) !== undefined) return
        touched.set(keyId, true, nowMs)
        Effect.runFork(
          touchKey(keyId, nowMs).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.catchAll((e) => Effect.logWarning("lastUsedAt not written", e))
          )
        )
      }

      const invalidate = (prefix: string) => {
        invalidations++
        cache.delete(prefix)
        unknown.delete(prefix)
      }
      return { lookup, invalidate, touch, stats: () => ({ loads, unknownCached: unknown.size }) }
    })
  )

/** The real key store over `Database.layerTest`, default cache bounds. */
export const layerTest: Layer.Layer<KeyStore, SqlError> = layer().pipe(Layer.provide(Database.layerTest))
