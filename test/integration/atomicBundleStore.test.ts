/**
 * The atomic bundles' storage (migration 0018) on embedded PGlite: holds reserved once per leg,
 * counted (by the spend gate's `windowUsedUsdMicros`) on the key's txLimit window they were
 * created in (the window's first millisecond counts, the one before does not; `never` always),
 * released and converted only from `held`,
 * unvalued holds making the window unreadable; bundle rows round-trip the BundleActor's state.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { initialBundle, step } from "../../actors/bundle/BundleActor.js"
import * as Database from "../../src/db/Database.js"
import { utcDayStart } from "../../src/services/keys/KeyRules.js"
import {
  admitBundle,
  convertHolds,
  findBundle,
  holdsOfBundle,
  insertBundle,
  releaseHolds,
  reserveHolds,
  saveState,
  unsettledBundleIds
} from "../../src/services/launch/atomic/BundleStore.js"
import { windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"

const NOW = Date.UTC(2026, 10, 25, 12)
const DAY = utcDayStart(NOW)
let scope: Scope.CloseableScope
let ctx: Context.Context<SqlClient.SqlClient>

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  ctx = await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))
}, 60_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})
const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provide(e, ctx))

const owner = (bundleId: string, keyId: string) => ({ bundleId, keyId, accountId: "acct-1", asset: "sol" })
const hold = (legIndex: number, usdMicros: bigint | null) => ({ legIndex, wallet: "MAIN", amountRaw: 1_000n * BigInt(legIndex), usdMicros })

describe("atomic bundle storage", () => {
  it("holds count on the window they were created in, from its first millisecond; never keeps them", async () => {
    await run(reserveHolds(owner("b-before", "k1"), [hold(1, 5n)], DAY - 1))
    await run(reserveHolds(owner("b-at", "k1"), [hold(1, 7n), hold(2, 11n)], DAY))
    expect(await run(windowUsedUsdMicros("k1", "daily", NOW))).toBe(18n)
    expect(await run(windowUsedUsdMicros("k1", "monthly", NOW))).toBe(23n)
    expect(await run(windowUsedUsdMicros("k1", "never", NOW))).toBe(23n)
    expect(await run(windowUsedUsdMicros("k-other", "never", NOW))).toBe(0n)
  })

  it("reserving twice is a no-op; release and conversion move only held rows", async () => {
    await run(reserveHolds(owner("b2", "k2"), [hold(1, 100n), hold(2, 200n), hold(3, 300n)], NOW))
    await run(reserveHolds(owner("b2", "k2"), [hold(1, 999n)], NOW))
    expect(await run(windowUsedUsdMicros("k2", "daily", NOW))).toBe(600n)
    expect(await run(convertHolds("b2", [1, 3], NOW))).toBe(400n)
    expect(await run(convertHolds("b2", [1, 3], NOW))).toBe(0n)
    expect(await run(windowUsedUsdMicros("k2", "daily", NOW))).toBe(200n) // leg 2 kept (rule 7)
    await run(releaseHolds("b2", NOW))
    expect((await run(holdsOfBundle("b2"))).map((h) => [h.legIndex, h.state])).toEqual([
      [1, "converted"],
      [2, "released"],
      [3, "converted"]
    ])
    expect(await run(windowUsedUsdMicros("k2", "daily", NOW))).toBe(0n)
  })

  it("a counted hold without a USD value makes the window unreadable (null), so a check fails closed", async () => {
    await run(reserveHolds(owner("b3", "k3"), [hold(1, null)], NOW))
    expect(await run(windowUsedUsdMicros("k3", "daily", NOW))).toBeNull()
    expect(await run(windowUsedUsdMicros("k3", "daily", NOW + 86_400_000))).toBe(0n)
  })

  it("an admitted build's rows in one statement: the bundle, its holds and the caller's insert; a part that fails writes none of them", async () => {
    const s0 = initialBundle("bundle-adm", NOW + 600_000, [{ clientTradeId: "t1", amountInRaw: 5n, expectedOutRaw: 9n, minAmountOutRaw: 8n }])
    const row = (bundleId: string) => ({ bundleId, accountId: "a", keyId: "k-adm", keyPrefix: "p", clientLaunchId: `c-${bundleId}`, attempt: 1, mint: `M-${bundleId}`, build: { n: 2 }, state: s0, submitToken: null, expiresAtMs: s0.expiresAtMs })
    const marker = (id: string) => (sql: SqlClient.SqlClient) => sql`INSERT INTO hosted_metadata (id, body, created_at) VALUES (${id}, '{}', ${new Date(NOW)})`
    const markers = (id: string) => run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM hosted_metadata WHERE id = ${id}`)).then((r) => r[0]!.n)
    await run(admitBundle(row("bundle-adm"), JSON.stringify, { owner: owner("bundle-adm", "k-adm"), holds: [hold(1, 3n), hold(2, 4n)] }, marker("adm-1"), NOW))
    expect((await run(findBundle("bundle-adm", (t) => JSON.parse(t) as { n: number })))?.state).toEqual(s0)
    expect((await run(holdsOfBundle("bundle-adm"))).map((h) => [h.legIndex, h.state])).toEqual([[1, "held"], [2, "held"]])
    expect(await run(windowUsedUsdMicros("k-adm", "daily", NOW))).toBe(7n)
    expect(await markers("adm-1")).toBe(1)
    // No holds (client legs only): no holds part.
    await run(admitBundle(row("bundle-adm-0"), JSON.stringify, { owner: owner("bundle-adm-0", "k-adm"), holds: [] }, marker("adm-0"), NOW))
    expect(await run(findBundle("bundle-adm-0", JSON.parse))).toBeDefined()
    expect(await markers("adm-0")).toBe(1)
    // The same bundle id again: the statement fails whole (no second marker, no new holds).
    const again = await Effect.runPromiseExit(Effect.provide(admitBundle(row("bundle-adm"), JSON.stringify, { owner: owner("bundle-adm", "k-adm"), holds: [hold(3, 50n)] }, marker("adm-2"), NOW), ctx))
    expect(Exit.isFailure(again)).toBe(true)
    expect(await markers("adm-2")).toBe(0)
    expect((await run(holdsOfBundle("bundle-adm"))).length).toBe(2)
    expect(await run(windowUsedUsdMicros("k-adm", "daily", NOW))).toBe(7n)
  })

  it("bundle rows keep the actor's state; booked bundles leave the resume list", async () => {
    const s0 = initialBundle("bundle-x", NOW + 600_000, [{ clientTradeId: "t1", amountInRaw: 5n, expectedOutRaw: 9n, minAmountOutRaw: 8n }])
    await run(insertBundle({ bundleId: "bundle-x", accountId: "a", keyId: "k", keyPrefix: "p", clientLaunchId: "c", attempt: 1, mint: "M", build: { n: 1 }, state: s0, submitToken: null, expiresAtMs: s0.expiresAtMs }, JSON.stringify, NOW))
    const read = await run(findBundle("bundle-x", (t) => JSON.parse(t) as { n: number }))
    expect(read?.state).toEqual(s0)
    expect(read?.build).toEqual({ n: 1 })
    expect(await run(unsettledBundleIds())).toContain("bundle-x")
    let s = s0
    for (const e of [
      { _tag: "SubmitBegun", atMs: NOW },
      { _tag: "Signing", atMs: NOW },
      { _tag: "Sent", launchSignature: "L", buySignatures: ["B"], atMs: NOW },
      { _tag: "EngineLanded", slot: 3n, legErrors: [null], atMs: NOW },
      { _tag: "Booked", item: "token", atMs: NOW },
      { _tag: "Booked", item: "launch", atMs: NOW },
      { _tag: "Booked", item: "buy:t1", atMs: NOW }
    ] as const) s = step(s, e)[0]
    await run(saveState("bundle-x", s, NOW, "tok"))
    expect(await run(unsettledBundleIds())).toContain("bundle-x")
    s = step(s, { _tag: "Booked", item: "finalization", atMs: NOW })[0]
    await run(saveState("bundle-x", s, NOW))
    const after = await run(findBundle("bundle-x", (t) => JSON.parse(t) as { n: number }))
    expect([after?.state, after?.submitToken]).toEqual([s, "tok"])
    expect(await run(unsettledBundleIds())).not.toContain("bundle-x")
  })
})
