/**
 * The key store's caches over a real database (PGlite via the accounts harness, a key issued
 * through the route): unknown prefixes are remembered in a bounded cache of their own for a short
 * TTL (no query while remembered, one after), probing many cannot evict the live keys' entries,
 * and invalidating a prefix (what issuing a key does) forgets it at once.
 */
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Harness, startHarness } from "../../../test/support/accountsHarness.js"
import { KeyStore, type KeyStoreOptions, layer } from "./KeyStore.js"

let h: Harness
let issuedPrefix = ""

beforeAll(async () => {
  h = await startHarness()
  const { session } = await h.newAccount()
  const r = await call(h.url, "POST", "/api/v1/agent/keys", { session, body: {} })
  expect(r.status).toBe(200)
  issuedPrefix = r.body.keyPrefix
}, 60_000)

afterAll(() => h?.close())

/** Runs `f` against a store of its own with `options`. */
const withStore = <A>(options: KeyStoreOptions, f: (store: KeyStore["Type"]) => Effect.Effect<A, unknown>) =>
  h.run(Effect.flatMap(KeyStore, f).pipe(Effect.provide(layer(options))) as Effect.Effect<A, never, never>)

const T0 = 1_000_000_000_000
const unknownPrefix = (i: number) => `zz${String(i).padStart(6, "0")}`

describe("the key store", () => {
  it("remembers an unknown prefix for its TTL: no query until it expires, one after", async () => {
    const loads = await withStore({ negativeTtlMs: 2_000 }, (store) =>
      Effect.gen(function* () {
        const seen: Array<number> = []
        expect(yield* store.lookup(unknownPrefix(1), T0)).toBeUndefined()
        seen.push(store.stats().loads)
        expect(yield* store.lookup(unknownPrefix(1), T0 + 1_999)).toBeUndefined()
        seen.push(store.stats().loads)
        expect(yield* store.lookup(unknownPrefix(1), T0 + 2_000)).toBeUndefined()
        seen.push(store.stats().loads)
        return seen
      })
    )
    // The third lookup is at the TTL of the first load (T0 + 2 s): expired, so it queried again.
    expect(loads).toEqual([1, 1, 2])
  })

  it("keeps at most negativeEntries unknown prefixes, forgetting the least recent", async () => {
    const r = await withStore({ negativeEntries: 3 }, (store) =>
      Effect.gen(function* () {
        for (let i = 0; i < 4; i++) yield* store.lookup(unknownPrefix(i), T0)
        const afterFill = store.stats()
        yield* store.lookup(unknownPrefix(3), T0) // remembered
        const remembered = store.stats().loads
        yield* store.lookup(unknownPrefix(0), T0) // forgotten: queried again
        return { afterFill, remembered, last: store.stats().loads }
      })
    )
    expect(r.afterFill).toEqual({ loads: 4, unknownCached: 3 })
    expect(r.remembered).toBe(4)
    expect(r.last).toBe(5)
  })

  it("does not let a flood of unknown prefixes evict a live key's entry", async () => {
    const r = await withStore({ maxEntries: 2, negativeEntries: 10 }, (store) =>
      Effect.gen(function* () {
        const entry = yield* store.lookup(issuedPrefix, T0)
        for (let i = 0; i < 100; i++) yield* store.lookup(unknownPrefix(100 + i), T0)
        const before = store.stats().loads
        const again = yield* store.lookup(issuedPrefix, T0 + 1)
        return { found: entry?.key.prefix, again: again?.key.prefix, queried: store.stats().loads - before }
      })
    )
    expect(r).toEqual({ found: issuedPrefix, again: issuedPrefix, queried: 0 })
  })

  it("does not keep a load an invalidation overtook: the next lookup reads the row again", async () => {
    const r = await withStore({}, (store) =>
      Effect.gen(function* () {
        const started = store.stats().loads
        const fiber = yield* Effect.fork(store.lookup(issuedPrefix, T0))
        // The load has begun (counted before its first statement) and its statements are in flight.
        while (store.stats().loads === started) yield* Effect.yieldNow()
        store.invalidate(issuedPrefix) // a limits change committed while the row was being read
        const first = yield* Fiber.join(fiber)
        yield* store.lookup(issuedPrefix, T0 + 1)
        return { answered: first?.key.prefix, loads: store.stats().loads - started }
      })
    )
    // The first lookup still answers; the second does not take its row from the cache.
    expect(r).toEqual({ answered: issuedPrefix, loads: 2 })
  })

  it("forgets a remembered unknown prefix when it is invalidated (issuing a key does it)", async () => {
    const fresh = "zy000001"
    const r = await withStore({}, (store) =>
      Effect.gen(function* () {
        const before = yield* store.lookup(fresh, T0)
        // The prefix becomes a real key (a copy of the issued row), without the store hearing of it.
        yield* Effect.promise(() =>
          h.query(
            `INSERT INTO agent_keys (id, prefix, account_id, key_hash, environment, scopes, label, rate_limit_per_min, daily_launch_cap, launch_chains, embedded_wallet, created_at)
             SELECT 'key_copy', $1, account_id, key_hash, environment, scopes, label, rate_limit_per_min, daily_launch_cap, launch_chains, embedded_wallet, created_at
             FROM agent_keys WHERE prefix = $2`,
            fresh,
            issuedPrefix
          )
        )
        const stillRemembered = yield* store.lookup(fresh, T0 + 1)
        store.invalidate(fresh)
        const after = yield* store.lookup(fresh, T0 + 2)
        return { before, stillRemembered, after: after?.key.prefix }
      })
    )
    expect(r).toEqual({ before: undefined, stillRemembered: undefined, after: fresh })
  })
})
