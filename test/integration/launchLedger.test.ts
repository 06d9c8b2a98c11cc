/**
 * The launch ledger service against both PostgreSQL backends with one suite: the embedded PGlite
 * and the run's real PostgreSQL server (a fresh database of this file's own). On the server the
 * concurrent tests split their requests across two independent connection pools (two ledger
 * layers, as two engine processes would have), each pool with several connections.
 *
 * Time is a `ManualClock` so the UTC-day boundary is exact.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Effect, Either, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { makeRowLeases, type RowLeases } from "../../src/db/RowLease.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import type { CanonicalJson } from "../../src/services/launch/Idempotency.js"
import {
  type Admission,
  type AttemptRef,
  type BeginInput,
  LaunchLedger,
  type LaunchLedgerError,
  type LaunchLedgerShape,
  layer as launchLedgerLayer
} from "../../src/services/launch/LaunchLedger.js"
import { selfBuildExpiredReason, selfBuildExpiryMs } from "../../src/services/launch/LaunchLedgerMachine.js"
import { ManualClock } from "../support/webhookReceiver.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { launchFailureCodesLayer } from "../../api/LaunchCodes.js"

type Ctx = Context.Context<LaunchLedger | SqlClient.SqlClient>

const plans = resolvePlans({}, 0)
const free = planById(plans, "free")
const DAY_MS = 86_400_000
/** 2026-11-25T12:00:00Z */
const T0 = Date.UTC(2026, 10, 25, 12, 0, 0)
/** Concurrent requests per test. */
const N = 40

const body = (name: string, extra: Record<string, CanonicalJson> = {}): CanonicalJson => ({
  chain: "solana",
  quoteAsset: "sol",
  mode: "open",
  name,
  symbol: "TKN",
  buyAmount: "0",
  stakerAllocationBps: "50",
  ...extra
})

const ledgerSuite = (options: () => Database.DatabaseOptions, pools: number) => {
  let scope: Scope.CloseableScope
  const contexts: Array<Ctx> = []
  const clock = new ManualClock(T0)
  let accountSeq = 0

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    for (let i = 0; i < pools; i++) {
      const layer = launchLedgerLayer.pipe(Layer.provide(launchFailureCodesLayer), Layer.provideMerge(Database.layer(options())))
      contexts.push(await Effect.runPromise(Layer.buildWithScope(layer, scope)))
    }
  }, 120_000)

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** Runs on pool `pool` (default the first) with the manual clock. */
  const run = <A, E>(effect: Effect.Effect<A, E, LaunchLedger | SqlClient.SqlClient>, pool = 0): Promise<A> =>
    Effect.runPromise(Effect.provide(effect, contexts[pool % contexts.length]!).pipe(Effect.withClock(clock)))

  const ledger = <A, E>(f: (l: LaunchLedgerShape) => Effect.Effect<A, E, never>, pool = 0) =>
    run(Effect.flatMap(LaunchLedger, f), pool)

  const newAccount = () => `acct-ledger-${process.pid}-${++accountSeq}`
  /** The SQL client of pool `pool`. */
  const sqlOf = (pool: number): SqlClient.SqlClient => Context.get(contexts[pool % contexts.length]!, SqlClient.SqlClient)

  const input = (accountId: string, clientLaunchId: string, o: Partial<BeginInput> = {}): BeginInput => ({
    accountId,
    clientLaunchId,
    keyId: "key-1",
    path: "headless",
    chain: "solana",
    payer: "embedded",
    canonicalBody: body(clientLaunchId),
    dailyCap: { keyDailyCap: free.limits.launchesPerDay, plan: free },
    ...o
  })

  const begin = (i: BeginInput, pool = 0) => ledger((l) => l.begin(i), pool)
  const attempted = (i: BeginInput, pool = 0) => ledger((l) => Effect.either(l.begin(i)), pool)
  const accept = async (i: BeginInput): Promise<AttemptRef> => {
    const a = await begin(i)
    if (a._tag !== "Accepted") throw new Error(`expected Accepted, got ${a._tag}`)
    return a.attempt
  }
  const refusal = async (i: BeginInput): Promise<LaunchLedgerError> => {
    const e = await attempted(i)
    if (Either.isRight(e)) throw new Error(`expected a refusal, got ${e.right._tag}`)
    return e.left as LaunchLedgerError
  }

  const rowCount = (accountId: string) =>
    run(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM launch_ledger WHERE account_id = ${accountId}`)
    ).then((rows) => rows[0]!.n)
  const used = (accountId: string, atMs = clock.nowMs) => ledger((l) => l.slotsUsed(accountId, atMs))

  /** Fires `count` requests at once, spread over the pools; each answer is an Either. */
  const concurrently = (count: number, make: (i: number) => BeginInput) =>
    Promise.all(Array.from({ length: count }, (_, i) => attempted(make(i), i)))

  const split = (answers: ReadonlyArray<Either.Either<Admission, LaunchLedgerError | SqlError>>) => {
    const accepted: Array<Admission> = []
    const refused: Array<LaunchLedgerError> = []
    for (const a of answers) {
      if (Either.isRight(a)) accepted.push(a.right)
      else refused.push(a.left as LaunchLedgerError)
    }
    return { accepted, refused }
  }

  const at = (ms: number) => {
    clock.nowMs = ms
  }

  it("N concurrent requests with one id make exactly one attempt and take one slot", async () => {
    at(T0)
    const account = newAccount()
    const { accepted, refused } = split(await concurrently(N, () => input(account, "same-id")))
    expect(accepted).toHaveLength(1)
    expect(accepted[0]).toMatchObject({ _tag: "Accepted", fresh: false, attempt: { attempt: 1 } })
    expect(refused).toHaveLength(N - 1)
    for (const e of refused) expect(e).toMatchObject({ _tag: "LaunchLedgerError", reason: "in_flight", retryable: true, state: "submitted" })
    expect(await rowCount(account)).toBe(1)
    expect(await used(account)).toBe(1)
  })

  it("N concurrent ids at the cap take exactly the cap (Free: 5); the rest are refused with the reset time", async () => {
    at(T0)
    const account = newAccount()
    const { accepted, refused } = split(await concurrently(N, (i) => input(account, `id-${i}`)))
    expect(accepted).toHaveLength(5)
    expect(refused).toHaveLength(N - 5)
    for (const e of refused) {
      expect(e).toMatchObject({ reason: "daily_cap_reached", retryable: true, cap: 5, used: 5, resetsAtMs: Date.UTC(2026, 10, 26) })
    }
    expect(await rowCount(account)).toBe(5)
    expect(await used(account)).toBe(5)
  })

  it("the effective cap is the higher of the key's issued cap and the plan's, under concurrency too", async () => {
    at(T0)
    const highKey = newAccount()
    const a = split(await concurrently(N, (i) => input(highKey, `id-${i}`, { dailyCap: { keyDailyCap: 8, plan: free } })))
    expect(a.accepted).toHaveLength(8)
    expect(await used(highKey)).toBe(8)
    // A key issued below its plan gets the plan's cap.
    const lowKey = newAccount()
    const pro = planById(plans, "pro")
    const b = split(await concurrently(N, (i) => input(lowKey, `id-${i}`, { dailyCap: { keyDailyCap: 1, plan: pro } })))
    expect(b.accepted).toHaveLength(N) // 40 < Pro's 50
    // The cap is per account: another key of the same account counts against the same slots.
    const other = await refusal(input(highKey, "other-key", { keyId: "key-2" }))
    expect(other).toMatchObject({ reason: "daily_cap_reached", cap: 5, used: 8 })
  })

  it("concurrent begins and refunds at the cap keep the books: the day's count equals the rows holding its slots, never above the cap", async () => {
    at(T0)
    const account = newAccount()
    const refs = await Promise.all([0, 1, 2, 3, 4].map((i) => accept(input(account, `held-${i}`))))
    // Refunds and new ids race on the same counter row, from both pools.
    const [refunds, begins] = await Promise.all([
      Promise.all(refs.map((ref, i) => ledger((l) => Effect.either(l.fail(ref, "launch_failed")), i))),
      concurrently(N, (i) => input(account, `new-${i}`))
    ])
    expect(refunds.every(Either.isRight)).toBe(true)
    const { accepted, refused } = split(begins)
    for (const e of refused) expect(e).toMatchObject({ _tag: "LaunchLedgerError", reason: "daily_cap_reached" })
    const holding = await run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM launch_ledger WHERE account_id = ${account} AND slot_day = '2026-11-25'`
      )
    ).then((rows) => rows[0]!.n)
    const count = await used(account)
    expect(count).toBe(holding)
    expect(count).toBeLessThanOrEqual(5)
    // Every held slot was refunded: what is counted now is exactly the new ids let in.
    expect(count).toBe(accepted.length)
  })

  it("a plan with a daily cap of 0 accepts nothing and records nothing", async () => {
    at(T0)
    const account = newAccount()
    const closed = { ...free, limits: { ...free.limits, launchesPerDay: 0 } }
    const e = await refusal(input(account, "x", { dailyCap: { keyDailyCap: 0, plan: closed } }))
    expect(e).toMatchObject({ reason: "daily_cap_reached", cap: 0, used: 0 })
    expect(await rowCount(account)).toBe(0)
  })

  it("a refund frees a slot: a definitive failure at the cap lets the next id in", async () => {
    at(T0)
    const account = newAccount()
    const refs = await Promise.all([0, 1, 2, 3, 4].map((i) => accept(input(account, `id-${i}`))))
    expect((await refusal(input(account, "id-5"))).reason).toBe("daily_cap_reached")
    const failed = await ledger((l) => l.fail(refs[2]!, "insufficient_owner_balance"))
    expect(failed).toMatchObject({ state: "failed", errorCode: "insufficient_owner_balance", slot: null })
    expect(await used(account)).toBe(4)
    await accept(input(account, "id-5"))
    expect(await used(account)).toBe(5)
    // Refunded once only: failing again is refused and changes nothing.
    expect(await ledger((l) => Effect.flip(l.fail(refs[2]!, "launch_failed")))).toMatchObject({ reason: "not_in_flight" })
    expect(await used(account)).toBe(5)
  })

  it("a timeout keeps the slot: the row stays in flight, a same-id retry is retryable 409, the cap still counts it", async () => {
    at(T0)
    const account = newAccount()
    const refs = await Promise.all([0, 1, 2, 3, 4].map((i) => accept(input(account, `id-${i}`))))
    const sent = await ledger((l) => l.sent(refs[0]!, { mint: "Mint", pool: null, signature: "Sig" }))
    expect(sent.state).toBe("confirming")
    const timedOut = await ledger((l) => l.timedOut(refs[0]!))
    expect(timedOut).toMatchObject({ state: "confirming", signature: "Sig", slot: { day: "2026-11-25", kept: false } })
    expect(await used(account)).toBe(5)
    expect(await refusal(input(account, "id-0"))).toMatchObject({ reason: "in_flight", retryable: true, state: "confirming" })
    expect((await refusal(input(account, "id-5"))).reason).toBe("daily_cap_reached")
  })

  it("the UTC-day boundary: the cap resets at 00:00 UTC; yesterday's slots stay on yesterday", async () => {
    const account = newAccount()
    at(Date.UTC(2026, 10, 25, 23, 59, 59, 999))
    for (let i = 0; i < 5; i++) await accept(input(account, `late-${i}`))
    expect(await refusal(input(account, "late-5"))).toMatchObject({ reason: "daily_cap_reached", resetsAtMs: Date.UTC(2026, 10, 26) })
    at(Date.UTC(2026, 10, 26))
    const ref = await accept(input(account, "late-5"))
    expect(await used(account)).toBe(1)
    expect(await used(account, Date.UTC(2026, 10, 25, 12))).toBe(5)
    // A failure today refunds today's slot, not yesterday's.
    await ledger((l) => l.fail(ref, "launch_failed"))
    expect(await used(account)).toBe(0)
    expect(await used(account, Date.UTC(2026, 10, 25, 12))).toBe(5)
  })

  it("replay of a confirmed result returns the stored result, writes nothing, takes no slot, on any day", async () => {
    at(T0)
    const account = newAccount()
    const i = input(account, "confirmed-id")
    const ref = await accept(i)
    await ledger((l) => l.sent(ref, { mint: "Mint9", pool: "Pool9", signature: "Sig9" }))
    const result = { success: true, chain: "solana", mint: "Mint9", pool: "Pool9", signature: "Sig9", matrixVersion: 3 }
    at(T0 + 1_000)
    const confirmed = await ledger((l) => l.confirm(ref, result, { signature: "Sig9" }))
    expect(confirmed).toMatchObject({ state: "confirmed", result, mint: "Mint9", updatedAtMs: T0 + 1_000 })
    at(T0 + DAY_MS)
    const answers = split(await concurrently(N, () => i))
    expect(answers.refused).toEqual([])
    for (const a of answers.accepted) {
      expect(a._tag).toBe("Replay")
      if (a._tag === "Replay") expect(a.result).toEqual(result)
    }
    expect(await ledger((l) => l.get(i))).toEqual(confirmed)
    expect(await used(account)).toBe(0)
    expect(await used(account, T0)).toBe(1)
  })

  it("a different body under one id is a non-retryable conflict in flight, confirmed and failed; key order is not a difference", async () => {
    at(T0)
    const account = newAccount()
    const i = input(account, "body-id", { canonicalBody: { a: "1", b: { c: "2", d: "3" } } })
    const ref = await accept(i)
    const other = { ...i, canonicalBody: { a: "1", b: { c: "2", d: "4" } } }
    expect(await refusal(other)).toMatchObject({ reason: "different_body", retryable: false, state: "submitted" })
    expect(await refusal({ ...i, path: "self", payer: "linked" })).toMatchObject({ reason: "different_body", retryable: false })
    // The same members in another order are the same body: in flight, not a conflict.
    expect((await refusal({ ...i, canonicalBody: { b: { d: "3", c: "2" }, a: "1" } })).reason).toBe("in_flight")
    await ledger((l) => l.confirm(ref, { success: true }, {}))
    expect(await refusal(other)).toMatchObject({ reason: "different_body", state: "confirmed" })
    const j = input(account, "body-id-2")
    const missing = { accountId: account, clientLaunchId: "body-id-2", attempt: 1 }
    expect(await ledger((l) => Effect.flip(l.fail(missing, "launch_failed")))).toMatchObject({ reason: "not_found" })
    const jRef = await accept(j)
    await ledger((l) => l.fail(jRef, "launch_failed"))
    expect(await refusal({ ...j, canonicalBody: body("something else") })).toMatchObject({ reason: "different_body", state: "failed" })
    expect(await used(account)).toBe(1)
  })

  it("a fresh attempt after a definitive failure: N concurrent retries start exactly one, the old attempt is stale", async () => {
    at(T0)
    const account = newAccount()
    const i = input(account, "retry-id")
    const first = await accept(i)
    await ledger((l) => l.fail(first, "insufficient_owner_balance"))
    expect(await used(account)).toBe(0)
    const { accepted, refused } = split(await concurrently(N, () => i))
    expect(accepted).toHaveLength(1)
    expect(accepted[0]).toMatchObject({ _tag: "Accepted", fresh: true, attempt: { attempt: 2 }, record: { state: "submitted", errorCode: null } })
    for (const e of refused) expect(e.reason).toBe("in_flight")
    expect(await used(account)).toBe(1)
    expect(await ledger((l) => Effect.flip(l.confirm(first, { success: true }, {})))).toMatchObject({ reason: "stale_attempt" })
    const second = accepted[0]!._tag === "Accepted" ? accepted[0]!.attempt : first
    expect((await ledger((l) => l.confirm(second, { success: true }, {}))).state).toBe("confirmed")
  })

  it("a Hood fee-splitter failure keeps its slot; a retry that day reuses it, the next day takes that day's", async () => {
    at(T0)
    const account = newAccount()
    const i = input(account, "hood-id", { chain: "hood", canonicalBody: body("hood-id", { chain: "hood" }) })
    const ref = await accept(i)
    expect(await ledger((l) => l.fail(ref, "launch_failed", { keepSlot: true }))).toMatchObject({ slot: { day: "2026-11-25", kept: true } })
    expect(await used(account)).toBe(1)
    const again = await accept(i)
    expect(again.attempt).toBe(2)
    expect(await used(account)).toBe(1)
    await ledger((l) => l.fail(again, "launch_failed"))
    expect(await used(account)).toBe(1) // the kept slot is never refunded
    at(T0 + DAY_MS)
    await accept(i)
    expect(await used(account)).toBe(1)
    expect(await used(account, T0)).toBe(1)
  })

  it("the self-signed sweep fails builds older than 30 minutes with a refund; a swept linked build confirmed later takes a slot even at the cap", async () => {
    at(T0)
    const account = newAccount()
    const self = (id: string) => input(account, id, { path: "self", payer: "linked" })
    await accept(self("old-build"))
    at(T0 + 10 * 60_000)
    const young = await accept(self("young-build"))
    await accept(input(account, "headless-id"))
    at(T0 + selfBuildExpiryMs + 1)
    const swept = await ledger((l) => l.sweepSelfBuilds(account))
    expect(swept.map((r) => [r.clientLaunchId, r.state, r.errorCode])).toEqual([["old-build", "failed", selfBuildExpiredReason]])
    expect(await used(account)).toBe(2)
    // Another account is never swept by this one.
    expect(await ledger((l) => l.sweepSelfBuilds(newAccount()))).toEqual([])
    expect((await ledger((l) => l.get(young)))?.state).toBe("submitted")

    for (let i = 0; i < 3; i++) await accept(input(account, `fill-${i}`))
    expect((await refusal(input(account, "fill-3"))).reason).toBe("daily_cap_reached")
    const revived = await ledger((l) => l.confirmSwept({ accountId: account, clientLaunchId: "old-build" }, { success: true }, { signature: "Landed" }))
    expect(revived).toMatchObject({ state: "confirmed", signature: "Landed", errorCode: null })
    expect(await used(account)).toBe(6)
    // Only a swept row can be revived that way.
    const e = await ledger((l) => Effect.flip(l.confirmSwept({ accountId: account, clientLaunchId: "headless-id" }, { success: true }, {})))
    expect(e).toMatchObject({ reason: "not_swept", state: "submitted" })
  })

  it("'also' runs in the ledger's transaction: its failure leaves the attempt in flight and nothing written", async () => {
    at(T0)
    const account = newAccount()
    const ref = await accept(input(account, "also-id"))
    const put = (key: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO meta (key, value) VALUES (${key}, '{}'::jsonb)`).pipe(Effect.asVoid)
    const key = `launch-also-${account}`
    const failedAlso = await ledger((l) =>
      Effect.exit(l.confirm(ref, { success: true }, {}, (record) => Effect.zipRight(put(`${key}-${record.state}`), put(`${key}-${record.state}`))))
    )
    expect(Exit.isFailure(failedAlso)).toBe(true)
    expect((await ledger((l) => l.get(ref)))?.state).toBe("submitted")
    const keys = () =>
      run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string }>`SELECT key FROM meta WHERE key LIKE ${`${key}%`}`)).then((r) =>
        r.map((x) => x.key)
      )
    expect(await keys()).toEqual([])
    await ledger((l) => l.confirm(ref, { success: true }, {}, (record) => put(`${key}-${record.state}`)))
    expect(await keys()).toEqual([`${key}-confirmed`])
  })

  it("a fenced transition writes under the lease only: held, the row moves, the also commits and the lease is renewed; lost, it dies and writes nothing", async () => {
    at(T0)
    const account = newAccount()
    const ref = await accept(input(account, "fence-id"))
    const leaseKey = `fence-${account}`
    const ours = makeRowLeases(sqlOf(0), { leaseMs: 60_000, owner: `ours-${account}` })
    const theirs = makeRowLeases(sqlOf(0), { leaseMs: 60_000, owner: `theirs-${account}` })
    const fenceOf = (leases: RowLeases) => ({
      renewal: leases.renewal("launch-test", leaseKey),
      check: (held: boolean) => leases.fenced("launch-test", leaseKey, held, undefined)
    })
    const put = (suffix: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO meta (key, value) VALUES (${`${leaseKey}-${suffix}`}, '{}'::jsonb)`).pipe(Effect.asVoid)
    const keys = () =>
      run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string }>`SELECT key FROM meta WHERE key LIKE ${`${leaseKey}%`} ORDER BY key`)).then((r) =>
        r.map((x) => x.key)
      )
    const expiresAt = () =>
      run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ owner: string; ms: number }>`
        SELECT owner, (extract(epoch FROM expires_at) * 1000)::float8 AS ms FROM row_leases WHERE kind = 'launch-test' AND key = ${leaseKey}`)).then((r) => r[0])
    expect(await run(ours.take("launch-test", leaseKey))).toBe(true)
    const before = await expiresAt()
    // Held: the row moves to confirming, the also commits, the lease is extended.
    const sent = await ledger((l) => l.sent(ref, { mint: "M", signature: "S" }, () => put("sent"), fenceOf(ours)))
    expect(sent.state).toBe("confirming")
    expect(await keys()).toEqual([`${leaseKey}-sent`])
    const after = await expiresAt()
    expect(after!.owner).toBe(`ours-${account}`)
    expect(after!.ms).toBeGreaterThanOrEqual(before!.ms)
    // Lost (another process took the row over): the confirm dies with RowLeaseLost and writes nothing.
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE row_leases SET expires_at = now() - interval '1 second' WHERE kind = 'launch-test' AND key = ${leaseKey}`))
    expect(await run(theirs.take("launch-test", leaseKey))).toBe(true)
    const lost = await ledger((l) => Effect.exit(l.confirm(ref, { success: true }, {}, () => put("confirmed"), fenceOf(ours))))
    expect(Exit.isFailure(lost)).toBe(true)
    if (Exit.isFailure(lost)) expect(String(Cause.squash(lost.cause))).toContain("RowLeaseLost")
    expect((await ledger((l) => l.get(ref)))?.state).toBe("confirming")
    expect(await keys()).toEqual([`${leaseKey}-sent`])
    // The owner now confirms it under its own lease.
    expect((await ledger((l) => l.confirm(ref, { success: true }, {}, () => put("confirmed"), fenceOf(theirs)))).state).toBe("confirmed")
    expect(await keys()).toEqual([`${leaseKey}-confirmed`, `${leaseKey}-sent`])
  })

  it("begin's 'also' runs only when an attempt is accepted, in begin's transaction; its failure records nothing", async () => {
    at(T0)
    const account = newAccount()
    const key = `launch-begin-also-${account}`
    const put = (suffix: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`INSERT INTO meta (key, value) VALUES (${`${key}-${suffix}`}, '{}'::jsonb)`).pipe(Effect.asVoid)
    const keys = () =>
      run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ key: string }>`SELECT key FROM meta WHERE key LIKE ${`${key}%`} ORDER BY key`)).then((r) =>
        r.map((x) => x.key)
      )
    // A failing also: no row, no slot, nothing of the also.
    const failed = await ledger((l) => Effect.exit(l.begin(input(account, "b-0"), () => Effect.zipRight(put("x"), put("x")))))
    expect(Exit.isFailure(failed)).toBe(true)
    expect(await rowCount(account)).toBe(0)
    expect(await used(account)).toBe(0)
    expect(await keys()).toEqual([])
    const accepted = await ledger((l) => l.begin(input(account, "b-0"), (record) => put(`a${record.attempt}`)))
    expect(accepted._tag).toBe("Accepted")
    // In flight: refused, the also does not run.
    expect((await ledger((l) => Effect.flip(l.begin(input(account, "b-0"), () => put("never")))))).toMatchObject({ reason: "in_flight" })
    expect(await keys()).toEqual([`${key}-a1`])
  })

  it("inFlight lists a path's submitted and confirming rows across accounts, oldest first, bounded", async () => {
    at(T0 + 5 * DAY_MS)
    const a = newAccount()
    const b = newAccount()
    const r1 = await accept(input(a, "f-1"))
    at(T0 + 5 * DAY_MS + 1)
    const r2 = await accept(input(b, "f-2"))
    at(T0 + 5 * DAY_MS + 2)
    const r3 = await accept(input(a, "f-3"))
    await ledger((l) => l.sent(r2, { signature: "sig" }))
    await ledger((l) => l.fail(r3, "launch_failed"))
    const listed = (await ledger((l) => l.inFlight("headless", 10_000))).filter((r) => r.accountId === a || r.accountId === b)
    expect(listed.map((r) => [r.clientLaunchId, r.state])).toEqual([
      ["f-1", "submitted"],
      ["f-2", "confirming"]
    ])
    expect(await ledger((l) => l.inFlight("self", 10_000))).not.toContainEqual(expect.objectContaining({ accountId: a }))
    expect((await ledger((l) => l.inFlight("headless", 1))).length).toBe(1)
    void r1
  })

  it("preview answers what begin would, writing nothing and taking no slot", async () => {
    at(T0)
    const account = newAccount()
    expect(await ledger((l) => l.preview(input(account, "p-0")))).toEqual({ _tag: "WouldAccept", fresh: false })
    expect(await rowCount(account)).toBe(0)
    expect(await used(account)).toBe(0)
    const refs = await Promise.all([0, 1, 2, 3, 4].map((i) => accept(input(account, `p-${i}`))))
    expect(await ledger((l) => Effect.flip(l.preview(input(account, "p-5"))))).toMatchObject({ reason: "daily_cap_reached", cap: 5, used: 5 })
    expect(await ledger((l) => Effect.flip(l.preview(input(account, "p-0"))))).toMatchObject({ reason: "in_flight" })
    await ledger((l) => l.confirm(refs[0]!, { success: true, mint: "M" }, {}))
    expect(await ledger((l) => l.preview(input(account, "p-0")))).toEqual({ _tag: "Replay", result: { success: true, mint: "M" } })
    expect(await rowCount(account)).toBe(5)
  })

  it("preview counts today's slots with the row it reads: a failed id's retry passes today's cap or is refused by it; yesterday's slots do not count", async () => {
    at(T0)
    const account = newAccount()
    const refs = await Promise.all([0, 1, 2, 3, 4].map((i) => accept(input(account, `q-${i}`))))
    await ledger((l) => l.fail(refs[0]!, "launch_failed"))
    expect(await ledger((l) => l.preview(input(account, "q-0")))).toEqual({ _tag: "WouldAccept", fresh: true })
    await accept(input(account, "q-5"))
    expect(await ledger((l) => Effect.flip(l.preview(input(account, "q-0"))))).toMatchObject({ reason: "daily_cap_reached", cap: 5, used: 5 })
    expect(await ledger((l) => Effect.flip(l.preview(input(account, "q-6"))))).toMatchObject({ reason: "daily_cap_reached", cap: 5, used: 5 })
    at(T0 + DAY_MS)
    expect(await ledger((l) => l.preview(input(account, "q-0")))).toEqual({ _tag: "WouldAccept", fresh: true })
    expect(await ledger((l) => l.preview(input(account, "q-6")))).toEqual({ _tag: "WouldAccept", fresh: false })
    expect(await used(account)).toBe(0)
  })

  it("a peek decides the preview as a fresh read would; a day turned since the peek reads that day's slots", async () => {
    at(T0)
    const account = newAccount()
    const refs = await Promise.all([0, 1, 2, 3, 4].map((i) => accept(input(account, `r-${i}`))))
    await ledger((l) => l.fail(refs[0]!, "launch_failed"))
    const peeked = await ledger((l) => l.peek(input(account, "r-0")))
    expect(peeked).toMatchObject({ record: { state: "failed", attempt: 1 }, day: new Date(T0).toISOString().slice(0, 10), dayUsed: 4 })
    expect(await ledger((l) => l.preview(input(account, "r-0"), peeked))).toEqual(await ledger((l) => l.preview(input(account, "r-0"))))
    // Decided on the peek: a slot taken since is not seen (begin decides again under its locks).
    await accept(input(account, "r-5"))
    expect(await ledger((l) => l.preview(input(account, "r-0"), peeked))).toEqual({ _tag: "WouldAccept", fresh: true })
    expect(await ledger((l) => Effect.flip(l.preview(input(account, "r-0"))))).toMatchObject({ reason: "daily_cap_reached", cap: 5, used: 5 })
    // The next day: the peek's count is of yesterday, so the preview reads today's (none).
    const full = await ledger((l) => l.peek(input(account, "r-0")))
    expect(full.dayUsed).toBe(5)
    at(T0 + DAY_MS)
    expect(await ledger((l) => l.preview(input(account, "r-0"), full))).toEqual({ _tag: "WouldAccept", fresh: true })
    const unknown = await ledger((l) => l.peek(input(account, "r-9")))
    expect(unknown.record).toBeUndefined()
    expect(await ledger((l) => l.preview(input(account, "r-9"), unknown))).toEqual({ _tag: "WouldAccept", fresh: false })
  })
}

describe("LaunchLedger on embedded PGlite", () => {
  ledgerSuite(() => ({ url: undefined, dataDir: undefined }), 1)
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(
  `LaunchLedger on a real PostgreSQL server, two connection pools${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`,
  () => {
    let url = ""
    beforeAll(async () => {
      url = await freshPostgresDatabase(serverUrl!)
    })
    ledgerSuite(() => ({ url, dataDir: undefined }), 2)
  }
)
