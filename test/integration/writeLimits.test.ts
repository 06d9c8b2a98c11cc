/**
 * The durable per-account write limits and the creator-fee claim lock (spec document 2, 4.3 rule 5
 * and section 8), against a real database: six staking writes (and, separately, six fee claims) a
 * minute per account, the seventh refused with its wait, still refused after a restart (PGlite
 * reopened on its data directory), allowed again once the oldest take leaves the window; one claim
 * lease per token, held across a restart, given back by its holder only, taken over once it
 * expired. On a PostgreSQL server also from two independent pools at once (as two engine processes
 * would be): exactly the limit taken, exactly one lease holder.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Either, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { takeAccountWrite } from "../../api/AccountWriteLimit.js"
import { feeClaimWindow, FEE_CLAIMS_PER_MIN } from "../../api/routes/FeeRoutes.js"
import { STAKING_WRITES_PER_MIN, stakingWriteWindow } from "../../api/routes/StakingRoutes.js"
import * as Database from "../../src/db/Database.js"
import { FEE_CLAIM_LEASE_MS, makeFeeClaimLocks } from "../../src/services/fees/FeeClaimLocks.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0)

const open = async (db: Database.DatabaseOptions) => {
  const scope = await Effect.runPromise(Scope.make())
  const sql = Context.get(await Effect.runPromise(Layer.buildWithScope(Database.layer(db), scope)), SqlClient.SqlClient)
  return { sql, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

type Db = Awaited<ReturnType<typeof open>>

/** One staking write of `accountId` at `nowMs` through the route's limit: "ok", or the 429's status, code and Retry-After. */
const stakingWrite = (db: Db, accountId: string, nowMs: number) =>
  Effect.runPromise(
    Effect.either(takeAccountWrite(stakingWriteWindow(db.sql), accountId, nowMs, "staking writes")).pipe(
      Effect.map((r) => (Either.isRight(r) ? "ok" : { status: r.left.httpStatus, code: r.left.code, retryAfter: r.left.headers?.["Retry-After"] }))
    )
  )

const feeClaim = (db: Db, accountId: string, nowMs: number) =>
  Effect.runPromise(Effect.map(Effect.either(takeAccountWrite(feeClaimWindow(db.sql), accountId, nowMs, "fee claims")), Either.isRight))

describe("durable write limits and the fee-claim lock on embedded PGlite, across a restart", () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-limits-"))
  let db: Db
  beforeAll(async () => {
    db = await open({ url: undefined, dataDir })
  }, 60_000)
  afterAll(async () => {
    await db?.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
  const restart = async () => {
    await db.close()
    db = await open({ url: undefined, dataDir })
  }

  it("six staking writes a minute per account: the seventh is 429 with its wait, also after a restart; the window then slides", async () => {
    expect(STAKING_WRITES_PER_MIN).toBe(6)
    for (let i = 0; i < 6; i++) expect(await stakingWrite(db, "acct-s", T0 + i * 1_000)).toBe("ok")
    expect(await stakingWrite(db, "acct-s", T0 + 10_000)).toEqual({ status: 429, code: "RATE_LIMITED", retryAfter: "50" })
    // Another account, and the other limit, are counted apart.
    expect(await stakingWrite(db, "acct-other", T0 + 10_000)).toBe("ok")
    expect(await feeClaim(db, "acct-s", T0 + 10_000)).toBe(true)

    await restart()
    expect(await stakingWrite(db, "acct-s", T0 + 20_000)).toEqual({ status: 429, code: "RATE_LIMITED", retryAfter: "40" })
    // At the window's edge: the first take (T0) leaves at T0 + 60 s, making one place.
    expect(await stakingWrite(db, "acct-s", T0 + 59_999)).toMatchObject({ status: 429, retryAfter: "1" })
    expect(await stakingWrite(db, "acct-s", T0 + 60_000)).toBe("ok")
    expect(await stakingWrite(db, "acct-s", T0 + 60_500)).toMatchObject({ status: 429 })
    // The table keeps at most the limit of rows per account and scope.
    const rows = await Effect.runPromise(
      db.sql<{ n: number }>`SELECT count(*)::int AS n FROM account_write_takes WHERE scope = 'staking' AND account_id = 'acct-s'`
    )
    expect(rows[0]?.n).toBe(6)
  }, 60_000)

  it("six fee claims a minute per account, also after a restart", async () => {
    expect(FEE_CLAIMS_PER_MIN).toBe(6)
    const t = T0 + 3_600_000
    for (let i = 0; i < 6; i++) expect(await feeClaim(db, "acct-f", t + i)).toBe(true)
    expect(await feeClaim(db, "acct-f", t + 100)).toBe(false)
    await restart()
    expect(await feeClaim(db, "acct-f", t + 30_000)).toBe(false)
    expect(await feeClaim(db, "acct-f", t + 60_000)).toBe(true)
  }, 60_000)

  it("one claim lease per token: held across a restart, given back by its holder only, taken over once expired", async () => {
    const locks = () => makeFeeClaimLocks(db.sql)
    const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
    const first = await run(locks().acquire("MintA", T0))
    expect(first).toBeTypeOf("string")
    expect(await run(locks().acquire("MintA", T0 + 1_000))).toBeUndefined()
    expect(await run(locks().acquire("MintB", T0 + 1_000))).toBeTypeOf("string")

    await restart() // the holder's process died: the lease outlives it
    expect(await run(locks().held("MintA", T0 + 2_000))).toBe(true)
    expect(await run(locks().acquire("MintA", T0 + FEE_CLAIM_LEASE_MS - 1))).toBeUndefined()
    const second = await run(locks().acquire("MintA", T0 + FEE_CLAIM_LEASE_MS))
    expect(second).toBeTypeOf("string")
    // The dead holder's late release does not free the new holder's lease.
    await run(locks().release("MintA", first!))
    expect(await run(locks().held("MintA", T0 + FEE_CLAIM_LEASE_MS + 1))).toBe(true)
    await run(locks().release("MintA", second!))
    expect(await run(locks().held("MintA", T0 + FEE_CLAIM_LEASE_MS + 1))).toBe(false)
    expect(await run(locks().acquire("MintA", T0 + FEE_CLAIM_LEASE_MS + 2))).toBeTypeOf("string")
  }, 60_000)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(`durable write limits on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let a: Db
  let b: Db
  beforeAll(async () => {
    const url = await freshPostgresDatabase(serverUrl!)
    a = await open({ url, dataDir: undefined })
    b = await open({ url, dataDir: undefined })
  }, 120_000)
  afterAll(async () => {
    await b?.close()
    await a?.close()
  })

  it("two pools writing at once (two processes) take exactly six staking writes and one claim lease", async () => {
    const writes = await Promise.all(Array.from({ length: 20 }, (_, i) => stakingWrite(i % 2 === 0 ? a : b, "acct-p", T0)))
    expect(writes.filter((w) => w === "ok")).toHaveLength(6)
    expect(writes.filter((w) => w !== "ok")).toHaveLength(14)
    const leases = await Promise.all(
      Array.from({ length: 20 }, (_, i) => Effect.runPromise(makeFeeClaimLocks((i % 2 === 0 ? a : b).sql).acquire("MintP", T0)))
    )
    expect(leases.filter((l) => l !== undefined)).toHaveLength(1)
  }, 60_000)
})
