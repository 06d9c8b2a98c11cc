/**
 * Row leases (`src/db/RowLease.ts`) on embedded PGlite and on a real PostgreSQL server, where the
 * two "processes" are two lease owners on two connection pools: of racing takes exactly one wins;
 * a live lease (another owner's or this owner's own) refuses a take; an ended lease is taken over;
 * a run holding its lease renews it past its length and gives it back when it ends; a run whose
 * row is taken over is interrupted (`RowLeaseLost`); a fenced write of an owner that lost the row
 * dies and its transaction leaves nothing; `clearAll` frees every row.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Either, Exit, Fiber, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import { clearAll, makeRowLeases, RowLeaseLost, type RowLeases } from "../../src/db/RowLease.js"
import { consistently, eventually } from "../support/eventually.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const KIND = "test_row"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

const leaseSuite = (options: () => Database.DatabaseOptions, pools: 1 | 2) => {
  let scope: Scope.CloseableScope
  let sqlA: SqlClient.SqlClient
  let sqlB: SqlClient.SqlClient
  let keys = 0
  const key = () => `row-${++keys}`
  const leases = (sql: SqlClient.SqlClient, leaseMs: number): RowLeases => makeRowLeases(sql, { leaseMs })
  const ownerOf = (k: string) =>
    run(sqlA<{ owner: string }>`SELECT owner FROM row_leases WHERE kind = ${KIND} AND key = ${k}`.pipe(Effect.map((rows) => rows[0]?.owner)))

  beforeAll(async () => {
    scope = await run(Scope.make())
    const migrated = Layer.effectDiscard(Database.runMigrations(migrations)).pipe(Layer.provideMerge(Database.layer(options())))
    sqlA = Context.get(await run(Layer.buildWithScope(migrated, scope)), SqlClient.SqlClient)
    // A second pool on the same server: another process's connections. PGlite admits one client.
    sqlB = pools === 2 ? Context.get(await run(Layer.buildWithScope(Database.layer(options()), scope)), SqlClient.SqlClient) : sqlA
  }, 60_000)

  afterAll(async () => {
    await run(Scope.close(scope, Exit.void))
  })

  it("of 20 racing takes by two owners exactly one wins, and the winner is the recorded owner", async () => {
    const a = leases(sqlA, 30_000)
    const b = leases(sqlB, 30_000)
    const k = key()
    const won = await run(Effect.all(Array.from({ length: 20 }, (_, i) => Effect.map((i % 2 === 0 ? a : b).take(KIND, k), (took) => (took ? i : -1))), { concurrency: "unbounded" }))
    const winners = won.filter((i) => i >= 0)
    expect(winners).toHaveLength(1)
    expect(await ownerOf(k)).toBe(winners[0]! % 2 === 0 ? a.owner : b.owner)
  })

  it("a live lease refuses a take, the owner's own included; an ended one is taken over", async () => {
    const a = leases(sqlA, 400)
    const b = leases(sqlB, 30_000)
    const k = key()
    expect(await run(a.take(KIND, k))).toBe(true)
    expect(await run(b.take(KIND, k))).toBe(false)
    expect(await run(a.take(KIND, k))).toBe(false)
    expect(await run(b.live(KIND, [k, "no-such-row"]))).toEqual(new Set([k]))
    // a stops renewing (its process died): once the lease ends, b takes the row.
    await eventually(async () => ((await run(b.take(KIND, k))) ? true : undefined), { what: "the ended lease to be taken over", intervalMs: 50, deadlineMs: 10_000 })
    expect(await ownerOf(k)).toBe(b.owner)
    expect(await run(a.renew(KIND, k))).toBe(false)
  })

  it("a run holding its lease keeps it past the lease's length, and gives it back when it ends", async () => {
    const a = leases(sqlA, 300)
    const b = leases(sqlB, 30_000)
    const k = key()
    expect(await run(a.take(KIND, k))).toBe(true)
    const fiber = await run(Effect.forkDaemon(a.whileHeld(KIND, k, Effect.sleep("1500 millis").pipe(Effect.as("done")))))
    // Four lease lengths later the run still owns the row: every take by b was refused.
    await consistently(async () => expect(await run(b.take(KIND, k))).toBe(false), { what: "b's takes of the held row are refused", forMs: 1_200, intervalMs: 100 })
    expect(await run(Fiber.join(fiber))).toBe("done")
    expect(await ownerOf(k)).toBeUndefined()
    expect(await run(b.take(KIND, k))).toBe(true)
  })

  it("a run whose row is taken over is interrupted with RowLeaseLost and does not give back the new owner's lease", async () => {
    const a = leases(sqlA, 300)
    const b = leases(sqlB, 30_000)
    const k = key()
    expect(await run(a.take(KIND, k))).toBe(true)
    let finished = false
    const fiber = await run(Effect.forkDaemon(a.whileHeld(KIND, k, Effect.sleep("20 seconds").pipe(Effect.tap(() => (finished = true))))))
    // b forces ownership (as a new attempt's transaction does): a's next renewal finds the row taken.
    await run(Effect.provideService(b.claimIn(KIND, k), SqlClient.SqlClient, sqlB))
    const exit = await run(Effect.either(Fiber.join(fiber)))
    expect(Either.isLeft(exit) && exit.left).toBeInstanceOf(RowLeaseLost)
    expect(finished).toBe(false)
    expect(await ownerOf(k)).toBe(b.owner)
  })

  it("a fenced write of an owner that lost the row dies with RowLeaseLost and its transaction leaves nothing", async () => {
    const a = leases(sqlA, 200)
    const b = leases(sqlB, 30_000)
    const k = key()
    await run(sqlA`CREATE TABLE IF NOT EXISTS lease_fenced_writes (key text PRIMARY KEY)`)
    const write = (l: RowLeases, sql: SqlClient.SqlClient) =>
      Effect.exit(
        sql.withTransaction(
          Effect.provideService(l.fenceIn(KIND, k), SqlClient.SqlClient, sql).pipe(Effect.zipRight(sql`INSERT INTO lease_fenced_writes (key) VALUES (${k})`))
        )
      )
    expect(await run(a.take(KIND, k))).toBe(true)
    await eventually(async () => ((await run(b.take(KIND, k))) ? true : undefined), { what: "b to take the ended lease", intervalMs: 50, deadlineMs: 10_000 })
    const exit = await run(write(a, sqlA))
    expect(Exit.isFailure(exit) && Exit.causeOption(exit).pipe((c) => c._tag === "Some" && JSON.stringify(c.value).includes("RowLeaseLost"))).toBe(true)
    expect(await run(sqlA`SELECT key FROM lease_fenced_writes WHERE key = ${k}`)).toEqual([])
    // The owner's fenced write commits (and extends its lease).
    expect(Exit.isSuccess(await run(write(b, sqlB)))).toBe(true)
    expect(await run(sqlA`SELECT key FROM lease_fenced_writes WHERE key = ${k}`)).toHaveLength(1)
  })

  it("clearAll frees every row (a database only one process opens)", async () => {
    const a = leases(sqlA, 30_000)
    const b = leases(sqlB, 30_000)
    const k = key()
    expect(await run(a.take(KIND, k))).toBe(true)
    await run(Effect.provideService(clearAll, SqlClient.SqlClient, sqlA))
    expect(await run(b.take(KIND, k))).toBe(true)
  })
}

describe("row leases on embedded PGlite", () => {
  leaseSuite(() => ({ url: undefined, dataDir: undefined }), 1)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`row leases on a real PostgreSQL server, two pools${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  leaseSuite(() => ({ url: dbUrl, dataDir: undefined }), 2)
})
