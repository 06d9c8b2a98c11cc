/**
 * Rate limits across API replicas (issue 31, "Limits that hold across replicas"): two limiters,
 * each with its own `SharedWindowCounts` (two "processes": two owners, on two connection pools of
 * a real PostgreSQL server, or one PGlite), exchange their counts through `rate_window_counts`.
 * After a sync each admits only what the other left of the limit; an unshared pair admits the
 * limit twice (what the issue found); a repeated sync counts nothing twice; the sliding estimate
 * weighs the other's previous window; rows whose windows left every estimate are deleted; the
 * followed subjects are bounded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RateLimiter } from "../../api/RateLimiter.js"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import { SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const MINUTE = 60_000
/** A time at the start of a window, so the previous window weighs fully unless a test moves on. */
const T0 = 1_000 * MINUTE

const sharedSuite = (options: () => Database.DatabaseOptions, pools: 1 | 2) => {
  let scope: Scope.CloseableScope
  let sqlA: SqlClient.SqlClient
  let sqlB: SqlClient.SqlClient
  let scopes = 0

  beforeAll(async () => {
    scope = await run(Scope.make())
    const migrated = Layer.effectDiscard(Database.runMigrations(migrations)).pipe(Layer.provideMerge(Database.layer(options())))
    sqlA = Context.get(await run(Layer.buildWithScope(migrated, scope)), SqlClient.SqlClient)
    sqlB = pools === 2 ? Context.get(await run(Layer.buildWithScope(Database.layer(options()), scope)), SqlClient.SqlClient) : sqlA
  }, 60_000)

  afterAll(async () => {
    await run(Scope.close(scope, Exit.void))
  })

  /** Two replicas' limiters of one limit under a fresh scope name. */
  const replicas = (limit: number) => {
    const name = `test-${++scopes}`
    const a = new SharedWindowCounts("replica-a")
    const b = new SharedWindowCounts("replica-b")
    return {
      a,
      b,
      limA: new RateLimiter({ limit, shared: { counts: a, scope: name } }),
      limB: new RateLimiter({ limit, shared: { counts: b, scope: name } }),
      syncA: (now: number) => run(Effect.provideService(a.sync(now), SqlClient.SqlClient, sqlA)),
      syncB: (now: number) => run(Effect.provideService(b.sync(now), SqlClient.SqlClient, sqlB))
    }
  }
  const admitted = (limiter: RateLimiter, key: string, n: number, now: number) => {
    let ok = 0
    for (let i = 0; i < n; i++) if (limiter.hit(key, now).allowed) ok++
    return ok
  }

  it("after a sync each replica admits only what the other left of the limit; unshared, each admits the whole limit", async () => {
    const r = replicas(10)
    expect(admitted(r.limA, "key-1", 6, T0 + 1)).toBe(6)
    // B has not heard of the key yet: its first ask follows it, the next sync learns A's count.
    expect(r.limB.check("key-1", T0 + 2).allowed).toBe(true)
    await r.syncA(T0 + 3)
    await r.syncB(T0 + 4)
    expect(admitted(r.limB, "key-1", 10, T0 + 5)).toBe(4)
    await r.syncB(T0 + 6)
    await r.syncA(T0 + 7)
    expect(admitted(r.limA, "key-1", 10, T0 + 8)).toBe(0)
    const refused = r.limA.hit("key-1", T0 + 9)
    expect(refused).toMatchObject({ allowed: false })
    expect(refused.retryAfterSec).toBeGreaterThanOrEqual(1)
    // What the issue found: two unshared replicas each admit the limit.
    const lone = [new RateLimiter({ limit: 10 }), new RateLimiter({ limit: 10 })]
    expect(lone.map((l) => admitted(l, "key-1", 10, T0 + 10))).toEqual([10, 10])
  })

  it("a repeated sync counts nothing twice; another subject and another scope are apart", async () => {
    const r = replicas(10)
    expect(admitted(r.limA, "key-2", 3, T0 + 1)).toBe(3)
    expect(r.limB.check("key-2", T0 + 2).remaining).toBe(9)
    expect(r.limB.check("key-3", T0 + 2).remaining).toBe(9)
    for (let i = 0; i < 3; i++) {
      await r.syncA(T0 + 10 + i)
      await r.syncB(T0 + 20 + i)
    }
    expect(r.limB.check("key-2", T0 + 30).remaining).toBe(6)
    expect(r.limB.check("key-3", T0 + 30).remaining).toBe(9)
    const other = replicas(10)
    await other.syncB(T0 + 31)
    expect(other.limB.check("key-2", T0 + 32).remaining).toBe(9)
  })

  it("the other replica's previous window weighs in the sliding estimate, by its overlap", async () => {
    const r = replicas(10)
    expect(admitted(r.limA, "key-4", 10, T0 + 1)).toBe(10)
    expect(r.limB.check("key-4", T0 + 2).allowed).toBe(true)
    await r.syncA(T0 + 3)
    await r.syncB(T0 + 4)
    // Half-way through the next window, A's 10 weigh 5: B admits 5 more (5 + 5 + 1 > 10 refuses the sixth).
    const half = T0 + MINUTE + MINUTE / 2
    expect(admitted(r.limB, "key-4", 10, half)).toBe(5)
  })

  it("rows whose windows left every estimate are deleted; the followed subjects are bounded", async () => {
    const r = replicas(10)
    expect(admitted(r.limA, "key-5", 2, T0 + 1)).toBe(2)
    await r.syncA(T0 + 2)
    const count = () =>
      run(sqlA<{ n: number }>`SELECT count(*)::int AS n FROM rate_window_counts WHERE owner = 'replica-a' AND subject = 'key-5'`.pipe(Effect.map((rows) => rows[0]!.n)))
    expect(await count()).toBe(1)
    await r.syncA(T0 + 2 * MINUTE)
    expect(await count()).toBe(0)

    const small = new SharedWindowCounts("replica-c", 3)
    const limiter = new RateLimiter({ limit: 10, shared: { counts: small, scope: "bounded" } })
    for (let i = 0; i < 10; i++) limiter.hit(`client-${i}`, T0 + i)
    expect(small.size).toBe(3)
  })
}

describe("shared rate limits on embedded PGlite", () => {
  sharedSuite(() => ({ url: undefined, dataDir: undefined }), 1)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`shared rate limits on a real PostgreSQL server, two pools${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  sharedSuite(() => ({ url: dbUrl, dataDir: undefined }), 2)
})
