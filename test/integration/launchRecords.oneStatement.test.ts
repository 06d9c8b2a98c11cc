/**
 * A launch's writes that ride on the ledger's transactions, each in one statement, over PGlite
 * with a real key, account and webhook endpoint (`internal/LaunchRecords.ts`):
 * - `confirmedWrites`: the token row confirmed (and promoted when asked), the key's launch metered,
 *   the platform fee added to the account's totals (nothing for none or zero) and one
 *   `launch.confirmed` delivery per endpoint with its payload: each once per call, all or nothing
 *   (a statement that fails leaves every table as it was); before metering started, no usage row;
 * - `attribute` with a riding write: the token row and the caller's write on another table
 *   (a headless attempt's last valid block height) in one statement, the registry told once;
 *   a riding write that fails writes no token row and tells the registry nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentLaunches } from "../../actors/AgentLaunches.js"
import * as Database from "../../src/db/Database.js"
import { USAGE_SINCE_MS } from "../../src/services/keys/KeyRules.js"
import { attribute, confirmedWrites } from "../../src/services/launch/internal/LaunchRecords.js"
import type { LaunchRecord } from "../../src/services/launch/LaunchLedger.js"
import { clockAt } from "../support/clock.js"
import { seedSwapAccount } from "../support/tradeRows.js"

const ACCOUNT = `acct-launch-records-${process.pid}`
const KEY = `kid-launch-records-${process.pid}`
const NOW = Date.UTC(2026, 11, 3, 12, 0, 0)

let scope: Scope.CloseableScope
let sql: SqlClient.SqlClient
const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>, nowMs = NOW) =>
  Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql).pipe(Effect.withClock(clockAt(nowMs))))
const runExit = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.exit(Effect.provideService(e, SqlClient.SqlClient, sql).pipe(Effect.withClock(clockAt(NOW)))))

const record = (mint: string, o: Partial<LaunchRecord> = {}): LaunchRecord => ({
  accountId: ACCOUNT,
  clientLaunchId: `cl-${mint}`,
  keyId: KEY,
  createdAtMs: NOW,
  state: "confirmed",
  path: "headless",
  chain: "solana",
  payer: "embedded",
  bodyHash: "h",
  attempt: 1,
  slot: null,
  errorCode: null,
  mint,
  pool: `pool-${mint}`,
  signature: `sig-${mint}`,
  result: null,
  attemptStartedAtMs: NOW,
  updatedAtMs: NOW,
  ...o
})

const token = (mint: string) =>
  run(sql`INSERT INTO launched_tokens (chain, mint, account_id, key_id, client_launch_id, path, visibility, attributed_at)
    VALUES ('solana', ${mint}, ${ACCOUNT}, ${KEY}, ${`cl-${mint}`}, 'headless', 'hidden', now())`)

/** Everything `confirmedWrites` may write. */
const state = (mint: string) =>
  run(
    Effect.all({
      token: Effect.map(
        sql<{ confirmed: boolean; visibility: string }>`SELECT confirmed_at IS NOT NULL AS confirmed, visibility FROM launched_tokens WHERE chain = 'solana' AND mint = ${mint}`,
        (r) => r[0]
      ),
      launches: Effect.map(sql<{ n: number }>`SELECT coalesce(sum(launch_count), 0)::int AS n FROM agent_key_usage_daily WHERE key_id = ${KEY}`, (r) => r[0]!.n),
      fee: Effect.map(sql<{ s: string | null }>`SELECT sum(fee_raw_sum)::text AS s FROM account_fee_totals WHERE account_id = ${ACCOUNT}`, (r) => r[0]?.s ?? null),
      events: Effect.map(
        sql<{ data: { mint: string; devBuy?: unknown } }>`SELECT data FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'launch.confirmed' ORDER BY created_at, id`,
        (rows) => rows.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data))
      )
    })
  )

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  sql = await Effect.runPromise(Effect.provide(SqlClient.SqlClient, await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))))
  await run(seedSwapAccount({ accountId: ACCOUNT, referralCode: "LRECORDS", keyId: KEY, keyPrefix: "cs_lrecords", hookId: "wh-launch-records", event: "launch.confirmed" }))
}, 60_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("a confirmed launch's writes in one statement", () => {
  it("confirms the token, meters the launch, adds the fee and enqueues launch.confirmed, each once per call", async () => {
    await token("m-fee")
    await run(sql.withTransaction(confirmedWrites({ keyId: KEY, fee: { quoteAsset: "SOL", feeRaw: 2_500_000n }, devBuy: { signature: "sig-m-fee" } })(record("m-fee"))))
    const after = await state("m-fee")
    expect(after.token).toEqual({ confirmed: true, visibility: "hidden" })
    expect(after.launches).toBe(1)
    expect(after.fee).toBe("2500000")
    expect(after.events).toHaveLength(1)
    expect(after.events[0]).toMatchObject({ clientLaunchId: "cl-m-fee", chain: "solana", mint: "m-fee", pool: "pool-m-fee", signature: "sig-m-fee", devBuy: { signature: "sig-m-fee" } })

    // No fee (and a zero fee) adds nothing to the totals; the promotion sets the visibility.
    await token("m-nofee")
    await run(confirmedWrites({ keyId: KEY, fee: null, devBuy: undefined, visibility: "production" })(record("m-nofee")))
    await token("m-zero")
    await run(confirmedWrites({ keyId: KEY, fee: { quoteAsset: "SOL", feeRaw: 0n }, devBuy: undefined })(record("m-zero")))
    const later = await state("m-nofee")
    expect(later.token).toEqual({ confirmed: true, visibility: "production" })
    expect(later.launches).toBe(3)
    expect(later.fee).toBe("2500000")
    expect(later.events.map((e) => e.mint).sort()).toEqual(["m-fee", "m-nofee", "m-zero"])
    expect("devBuy" in later.events.find((e) => e.mint === "m-nofee")!).toBe(false)
  })

  it("before metering started it meters nothing and writes the rest", async () => {
    await token("m-early")
    const before = await state("m-early")
    await run(confirmedWrites({ keyId: KEY, fee: null, devBuy: undefined })(record("m-early")), USAGE_SINCE_MS - 1)
    const after = await state("m-early")
    expect(after.token?.confirmed).toBe(true)
    expect(after.launches).toBe(before.launches)
    expect(after.events.length).toBe(before.events.length + 1)
  })

  it("all or nothing: a statement that fails leaves every table as it was", async () => {
    await token("m-fails")
    const before = await state("m-fails")
    // A key id with no key row: the usage CTE's foreign key refuses the statement.
    const exit = await runExit(confirmedWrites({ keyId: "kid-none", fee: { quoteAsset: "SOL", feeRaw: 7n }, devBuy: undefined })(record("m-fails")))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(await state("m-fails")).toEqual(before)
  })
})

describe("an attribution with a write riding in its statement", () => {
  it("writes the token row and the riding write together, and tells the registry once", async () => {
    const registry = new AgentLaunches(16)
    await run(sql`CREATE TABLE IF NOT EXISTS riding_probe (id text PRIMARY KEY, n int NOT NULL)`)
    await run(sql`INSERT INTO riding_probe (id, n) VALUES ('r1', 0)`)
    const a = { accountId: ACCOUNT, keyId: KEY, path: "headless" as const, chain: "solana" as const, mint: "m-ride", visibility: "production" }
    await run(sql.withTransaction(attribute(a, registry, (s) => s`UPDATE riding_probe SET n = n + 1 WHERE id = 'r1'`)(record("m-ride", { state: "confirming" }))))
    const probe = await run(sql<{ n: number }>`SELECT n FROM riding_probe WHERE id = 'r1'`)
    const row = await run(sql<{ n: number }>`SELECT count(*)::int AS n FROM launched_tokens WHERE chain = 'solana' AND mint = 'm-ride'`)
    expect(probe[0]!.n).toBe(1)
    expect(row[0]!.n).toBe(1)
    expect(registry.has("solana", "m-ride")).toBe(true)
  })

  it("a riding write that fails writes no token row and tells the registry nothing", async () => {
    const registry = new AgentLaunches(16)
    const a = { accountId: ACCOUNT, keyId: KEY, path: "headless" as const, chain: "solana" as const, mint: "m-ride-fails", visibility: "production" }
    const exit = await runExit(attribute(a, registry, (s) => s`UPDATE riding_probe SET n = n / 0 WHERE id = 'r1'`)(record("m-ride-fails", { state: "confirming" })))
    expect(Exit.isFailure(exit)).toBe(true)
    const row = await run(sql<{ n: number }>`SELECT count(*)::int AS n FROM launched_tokens WHERE chain = 'solana' AND mint = 'm-ride-fails'`)
    expect(row[0]!.n).toBe(0)
    expect(registry.has("solana", "m-ride-fails")).toBe(false)
  })
})
