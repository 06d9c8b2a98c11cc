/**
 * One active migration keeper across processes (`runKeeperAlone`, a lease in PostgreSQL), on
 * embedded PGlite and on a real PostgreSQL server where each keeper has its own connection pool.
 * Each keeper sends through its own executor (the chain boundary, counting its sends) for one
 * completed curve that never migrates, so an active keeper keeps sending on its schedule.
 *
 * What is pinned: of two keepers over one database only one ever sends; when it stops the other
 * takes over; a keeper whose lease was left by a dead holder stands by until that lease ends, then
 * sends; on the server, a holder that lost its database sends nothing more (its renewal before a
 * send fails) and the other takes over once its lease ended.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MarketCore } from "../../actors/market/MarketActor.js"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import { makeRowLeases } from "../../src/db/RowLease.js"
import { DefaultKeeperPolicy } from "../../src/services/keeper/KeeperPolicy.js"
import { KEEPER_LEASE, type MigrationExecutor, runKeeperAlone } from "../../src/services/keeper/MigrationKeeper.js"
import { consistently, eventually } from "../support/eventually.js"
import { foldCore, newMarket } from "../support/marketCores.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** A curve bought past its threshold: completed, waiting for its migration. */
const completedMarket = (): MarketCore => {
  const { market } = newMarket("solana", { mint: "KeepLease111111111111111111111111111111111" })
  const core = foldCore([market.created(), ...market.buy("whale", market.params.thresholdRaw * 2n)])
  expect(core.lifecycle).toBe("completed")
  return core
}

/** Sweeps every 50 ms; a sent migration is looked at again 100 ms later (the curve never migrates here). */
const policy = { ...DefaultKeeperPolicy, sweepIntervalMs: 50, backoffBaseMs: 100, maxAttempts: 1_000_000 }

const keeperSuite = (options: () => Database.DatabaseOptions, pools: 1 | 2) => {
  let scope: Scope.CloseableScope
  let sqlA: SqlClient.SqlClient
  const market = completedMarket()

  const pool = (s: Scope.Scope, migrate: boolean) => {
    const db = Database.layer(options())
    const layer = migrate ? Layer.effectDiscard(Database.runMigrations(migrations)).pipe(Layer.provideMerge(db)) : db
    return run(Layer.buildWithScope(layer, s)).then((c) => Context.get(c, SqlClient.SqlClient))
  }

  /** A keeper process over `sql`: its fiber and how many migrations it sent. */
  const keeper = async (sql: SqlClient.SqlClient) => {
    const sent = { count: 0 }
    const executor: MigrationExecutor = {
      chain: "solana",
      progressPosition: (n) => Effect.succeed(`s:${"9".repeat(20)}:999999:${String(n).padStart(4, "0")}`),
      migrate: () => Effect.sync(() => `sig-${++sent.count}`)
    }
    const fiber = await run(
      Effect.forkDaemon(
        runKeeperAlone(
          makeRowLeases(sql, { leaseMs: 600 }),
          { candidates: () => [market], executors: [executor], publish: () => Effect.void, policy },
          { standbyMs: 50 }
        )
      )
    )
    return { fiber, sent }
  }

  const freeTheLease = () => run(sqlA`DELETE FROM row_leases WHERE kind = ${KEEPER_LEASE.kind} AND key = ${KEEPER_LEASE.key}`)

  beforeAll(async () => {
    scope = await run(Scope.make())
    sqlA = await pool(scope, true)
  }, 60_000)

  afterAll(async () => {
    await run(Scope.close(scope, Exit.void))
  })

  it("of two keepers over one database only one sends; when it stops, the other takes over", async () => {
    const a = await keeper(sqlA)
    const b = await keeper(pools === 2 ? await pool(scope, false) : sqlA)
    await eventually(async () => (a.sent.count + b.sent.count >= 5 ? true : undefined), { what: "the active keeper to send", intervalMs: 20 })
    const [active, standby] = a.sent.count > 0 ? [a, b] : [b, a]
    // Over more than three lease lengths (600 ms) the standby never sends.
    await consistently(() => standby.sent.count === 0, { what: "the standby keeper sends nothing", forMs: 2_000, intervalMs: 20, detail: () => `the standby sent ${standby.sent.count}, the active ${active.sent.count}` })
    expect(active.sent.count).toBeGreaterThan(5)
    await run(Fiber.interrupt(active.fiber))
    const stoppedAt = active.sent.count
    await eventually(async () => (standby.sent.count > 0 ? true : undefined), { what: "the standby keeper to take over", intervalMs: 20, deadlineMs: 10_000 })
    expect(active.sent.count).toBe(stoppedAt)
    await run(Fiber.interrupt(standby.fiber))
    await freeTheLease()
  }, 30_000)

  it("a keeper whose lease a dead holder left stands by until that lease ends, then sends", async () => {
    const dead = makeRowLeases(sqlA, { leaseMs: 1_500 })
    expect(await run(dead.take(KEEPER_LEASE.kind, KEEPER_LEASE.key))).toBe(true)
    const c = await keeper(pools === 2 ? await pool(scope, false) : sqlA)
    await consistently(() => c.sent.count === 0, { what: "the keeper stands by while the dead holder's lease lives", forMs: 700, intervalMs: 20, detail: () => `it sent ${c.sent.count}` })
    await eventually(async () => (c.sent.count > 0 ? true : undefined), { what: "the dead holder's lease to end", intervalMs: 20, deadlineMs: 10_000 })
    await run(Fiber.interrupt(c.fiber))
    await freeTheLease()
  }, 30_000)

  it.skipIf(pools === 1)("a holder that lost its database sends nothing more; the other takes over once its lease ended", async () => {
    const doomedDb = await run(Scope.make())
    const doomed = await keeper(await pool(doomedDb, false))
    await eventually(async () => (doomed.sent.count > 0 ? true : undefined), { what: "the first keeper to be active", intervalMs: 20 })
    const other = await keeper(await pool(scope, false))
    await run(Scope.close(doomedDb, Exit.void))
    const lostAt = doomed.sent.count
    await eventually(async () => (other.sent.count > 0 ? true : undefined), { what: "the other keeper to take over", intervalMs: 20, deadlineMs: 10_000 })
    // At most the send already past its check.
    await consistently(() => doomed.sent.count <= lostAt + 1, { what: "the holder that lost its database sends nothing more", forMs: 500, intervalMs: 20, detail: () => `it sent ${doomed.sent.count - lostAt} after losing its database` })
    await run(Effect.all([Fiber.interrupt(doomed.fiber), Fiber.interrupt(other.fiber)]))
    await freeTheLease()
  }, 30_000)
}

describe("one active migration keeper on embedded PGlite", () => {
  keeperSuite(() => ({ url: undefined, dataDir: undefined }), 1)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`one active migration keeper on a real PostgreSQL server, a pool per keeper${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let dbUrl = ""
  beforeAll(async () => {
    dbUrl = await freshPostgresDatabase(serverUrl!)
  })
  keeperSuite(() => ({ url: dbUrl, dataDir: undefined }), 2)
})
