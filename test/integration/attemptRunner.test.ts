/**
 * The attempt runner (`src/services/attempt/AttemptRunner.ts`) over embedded PGlite and its row
 * leases, with a small machine of its own:
 *
 *   (none) ─Start─▶ sending [Send] ─Sent─▶ sent [Await] ─Observed(landed)─▶ done [Settle: an event row, in the save's transaction]
 *                                                   └ Observed(pending): unchanged
 *   owed: sending → Send (resending is safe for this machine), sent → Await
 *
 * - "saved before outputs": the Send port sees `sending` stored; the event row commits with `done`.
 * - "a crash between save and perform": a row left `sending` under a dead process's lease is
 *   resumed by a recovery pass only once that lease ends; racing passes of two processes send it
 *   exactly once; a later pass takes nothing.
 * - "a stale lease's save is refused": a driver whose lease was taken over has its next save
 *   refused by the fence (`RowLeaseLost`), writes nothing and performs nothing more.
 * - "waiting ends by the Schedule deadline": `awaitUntil` under `TestClock` (in `AwaitUntil.test.ts`),
 *   and here the Await output of a transaction that never settles leaves the attempt in flight.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { makeRowLeases } from "../../src/db/RowLease.js"
import { type AttemptMachine, type AttemptStore, makeAttemptRunner } from "../../src/services/attempt/AttemptRunner.js"
import { awaitVerdict } from "../../src/platform/AwaitUntil.js"
import { eventually } from "../support/eventually.js"

type State = { readonly _tag: "sending" } | { readonly _tag: "sent" } | { readonly _tag: "done" }
type Event = { readonly _tag: "Start" } | { readonly _tag: "Sent" } | { readonly _tag: "Observed"; readonly landed: boolean }
type Output = { readonly _tag: "Send" } | { readonly _tag: "Await" } | { readonly _tag: "Settle" }

const machine: AttemptMachine<State, Event, Output> = {
  step: (s, e) => {
    if (e._tag === "Start" && s === undefined) return [{ _tag: "sending" }, [{ _tag: "Send" }]]
    if (e._tag === "Sent" && s?._tag === "sending") return [{ _tag: "sent" }, [{ _tag: "Await" }]]
    if (e._tag === "Observed" && e.landed && s?._tag === "sent") return [{ _tag: "done" }, [{ _tag: "Settle" }]]
    return [s, []]
  },
  inFlight: (s) => s._tag !== "done",
  owed: (s) => (s._tag === "sending" ? [{ _tag: "Send" }] : s._tag === "sent" ? [{ _tag: "Await" }] : [])
}

const KIND = "test_attempt"
let scope: Scope.CloseableScope
let sql: SqlClient.SqlClient
let keys = 0
const key = () => `a-${++keys}`
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

const store = (): AttemptStore<string, State, Output> => ({
  kind: KIND,
  leaseKey: (k) => k,
  load: (k) => Effect.map(sql<{ state: State["_tag"] }>`SELECT state FROM test_attempts WHERE key = ${k}`, (rows) => (rows[0] === undefined ? undefined : { _tag: rows[0].state })),
  save: (k, prev, next, outputs) =>
    Effect.gen(function* () {
      const s = yield* SqlClient.SqlClient
      const rows =
        prev === undefined
          ? yield* s`INSERT INTO test_attempts (key, state) VALUES (${k}, ${next._tag}) ON CONFLICT (key) DO NOTHING RETURNING key`
          : yield* s`UPDATE test_attempts SET state = ${next._tag} WHERE key = ${k} AND state = ${prev._tag} RETURNING key`
      if (rows.length === 1 && outputs.some((o) => o._tag === "Settle")) yield* s`INSERT INTO test_events (key) VALUES (${k})`
      return rows.length === 1
    }),
  inFlight: Effect.map(sql<{ key: string }>`SELECT key FROM test_attempts WHERE state <> 'done' ORDER BY key LIMIT 1000`, (rows) => rows.map((r) => r.key))
})

/**
 * The same store with `saveFenced`: a save over a stored row is one statement, the lease's renewal
 * its first CTE and every write gated on it (the runner then saves through it, as the trade rail's
 * store does). Counts the statements it ran.
 */
let oneStatementSaves = 0
const oneStatementStore = (): AttemptStore<string, State, Output> => ({
  ...store(),
  saveFenced: (k, prev, next, outputs, fence) =>
    Effect.gen(function* () {
      const s = yield* SqlClient.SqlClient
      oneStatementSaves++
      const settle = outputs.some((o) => o._tag === "Settle") ? s`, ev AS (INSERT INTO test_events (key) SELECT key FROM moved)` : s.literal("")
      const rows = yield* s<{ held: boolean; moved: boolean }>`
        WITH lease AS (${fence ?? s`SELECT 1`}),
          moved AS (UPDATE test_attempts SET state = ${next._tag} WHERE key = ${k} AND state = ${prev._tag} AND EXISTS (SELECT 1 FROM lease) RETURNING key)${settle}
        SELECT EXISTS (SELECT 1 FROM lease) AS held, EXISTS (SELECT 1 FROM moved) AS moved`
      return rows[0]!
    })
})

/** The "chain": which keys were sent, how often, and what state each send saw stored. */
const chain = () => {
  const sends = new Map<string, number>()
  const sawStored: Array<string | undefined> = []
  const ports = (options: { gate?: Deferred.Deferred<void>; landed?: boolean } = {}) => ({
    perform: (k: string, _s: State, o: Output) =>
      Effect.gen(function* () {
        switch (o._tag) {
          case "Send": {
            sawStored.push((yield* store().load(k))?._tag)
            if (options.gate !== undefined) yield* Deferred.await(options.gate)
            sends.set(k, (sends.get(k) ?? 0) + 1)
            return { _tag: "Sent" } as Event
          }
          case "Await": {
            const seen = yield* awaitVerdict(Effect.succeed(options.landed ?? true), (landed) => landed, { what: "a verdict", intervalMs: 20, timeoutMs: 200 })
            return Option.isSome(seen) ? ({ _tag: "Observed", landed: true } as Event) : undefined
          }
          case "Settle":
            return undefined
        }
      })
  })
  return { sends, sawStored, ports }
}

const eventsOf = (k: string) => run(Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM test_events WHERE key = ${k}`, (rows) => rows[0]!.n))
const stateOf = (k: string) => run(store().load(k)).then((s) => s?._tag)

beforeAll(async () => {
  scope = await run(Scope.make())
  sql = Context.get(await run(Layer.buildWithScope(Database.layerTest, scope)), SqlClient.SqlClient)
  await run(sql`CREATE TABLE test_attempts (key text PRIMARY KEY, state text NOT NULL)`)
  await run(sql`CREATE TABLE test_events (key text NOT NULL)`)
}, 60_000)

afterAll(async () => {
  await run(Scope.close(scope, Exit.void))
})

describe("the attempt runner", () => {
  it("saves each state before performing its outputs; the settle write commits with the settled state; the lease is given back", async () => {
    const c = chain()
    const leases = makeRowLeases(sql)
    const k = key()
    const applied = await run(makeAttemptRunner({ machine, store: store(), ports: c.ports(), leases, sql }).apply(k, undefined, { _tag: "Start" }))
    expect(applied).toMatchObject({ _tag: "Saved", state: { _tag: "done" } })
    expect(c.sawStored).toEqual(["sending"])
    expect(c.sends.get(k)).toBe(1)
    expect(await stateOf(k)).toBe("done")
    expect(await eventsOf(k)).toBe(1)
    expect(await run(leases.live(KIND, [k]))).toEqual(new Set())
    // A step that changes nothing saves nothing and performs nothing: the machine's answer comes back.
    expect(await run(makeAttemptRunner({ machine, store: store(), ports: c.ports(), leases, sql }).apply(k, { _tag: "done" }, { _tag: "Start" }))).toEqual({
      _tag: "Unchanged",
      state: { _tag: "done" },
      outputs: []
    })
    expect(c.sends.get(k)).toBe(1)
  })

  it("a row saved and never acted on (the process died) is resumed once its lease ends, and its owed output is performed exactly once", async () => {
    const c = chain()
    const k = key()
    const dead = makeRowLeases(sql, { leaseMs: 500 })
    // What the dead process committed before it could send: the state and its lease, in one transaction.
    expect(
      await run(
        sql.withTransaction(
          Effect.zipLeft(store().save(k, undefined, { _tag: "sending" }, [{ _tag: "Send" }]), dead.claimIn(KIND, k)).pipe(Effect.provideService(SqlClient.SqlClient, sql))
        )
      )
    ).toBe(true)
    const b = makeAttemptRunner({ machine, store: store(), ports: c.ports(), leases: makeRowLeases(sql), sql })
    const d = makeAttemptRunner({ machine, store: store(), ports: c.ports(), leases: makeRowLeases(sql), sql })
    // The dead process's lease is live: nobody resumes it yet.
    expect(await run(b.recover)).toBe(0)
    expect(c.sends.get(k)).toBeUndefined()
    // Two processes race their recovery passes once it ended: one takes it.
    const taken = await eventually(
      async () => {
        const [byB, byD] = await run(Effect.all([b.recover, d.recover], { concurrency: "unbounded" }))
        return byB + byD > 0 ? byB + byD : undefined
      },
      { what: "the dead owner's lease to end and the attempt to be taken over", intervalMs: 50, deadlineMs: 10_000 }
    )
    expect(taken).toBe(1)
    await eventually(async () => ((await stateOf(k)) === "done" ? true : undefined), { what: "the resumed attempt to settle", intervalMs: 20, deadlineMs: 10_000 })
    expect(c.sends.get(k)).toBe(1)
    expect(await eventsOf(k)).toBe(1)
    // Settled: later passes take nothing and send nothing.
    expect(await run(Effect.all([b.recover, d.recover]))).toEqual([0, 0])
    expect(c.sends.get(k)).toBe(1)
  })

  it.each([
    ["in a transaction", store],
    ["in one statement (saveFenced)", oneStatementStore]
  ] as const)("a driver whose lease was taken over has its next save refused by the fence and performs nothing more: %s", async (_, storeOf) => {
    const c = chain()
    const k = key()
    const gate = await run(Deferred.make<void>())
    const a = makeRowLeases(sql, { leaseMs: 60_000 })
    const statements = oneStatementSaves
    const fiber = await run(Effect.forkDaemon(makeAttemptRunner({ machine, store: storeOf(), ports: c.ports({ gate }), leases: a, sql }).apply(k, undefined, { _tag: "Start" })))
    await eventually(async () => (c.sawStored.length === 1 ? true : undefined), { what: "the driver to reach its send", intervalMs: 10, deadlineMs: 10_000 })
    // The driver stalls past its lease; another process takes the row over.
    await run(sql`UPDATE row_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE kind = ${KIND} AND key = ${k}`)
    const b = makeRowLeases(sql)
    expect(await run(b.take(KIND, k))).toBe(true)
    await run(Deferred.succeed(gate, undefined))
    const exit = await run(Fiber.await(fiber))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("RowLeaseLost")
    // Its `sent` was never saved, so no Await and no Settle followed; the row is as the new owner found it.
    expect(await stateOf(k)).toBe("sending")
    expect(await eventsOf(k)).toBe(0)
    expect(await run(b.live(KIND, [k]))).toEqual(new Set([k]))
    // The refused save was the one statement (the insert that claimed the row is a transaction's).
    expect(oneStatementSaves - statements).toBe(storeOf === oneStatementStore ? 1 : 0)
  })

  it("with saveFenced, every save over a stored row is one statement: the settle write commits with the settled state; a save that loses the race moves nothing", async () => {
    const c = chain()
    const leases = makeRowLeases(sql)
    const k = key()
    const statements = oneStatementSaves
    const runner = makeAttemptRunner({ machine, store: oneStatementStore(), ports: c.ports(), leases, sql })
    expect(await run(runner.apply(k, undefined, { _tag: "Start" }))).toMatchObject({ _tag: "Saved", state: { _tag: "done" } })
    // sending → sent (fenced), sent → done (fenced, with the event).
    expect(oneStatementSaves - statements).toBe(2)
    expect([await stateOf(k), await eventsOf(k)]).toEqual(["done", 1])
    expect(await run(leases.live(KIND, [k]))).toEqual(new Set())
    // A settle of a row another writer already moved (the stale `sent`) moves nothing and writes no event.
    expect(await run(runner.apply(k, { _tag: "sent" }, { _tag: "Observed", landed: true }))).toEqual({ _tag: "Moved" })
    expect(await eventsOf(k)).toBe(1)
  })

  it("a wait that reaches its deadline without a verdict leaves the attempt in flight, to be resumed", async () => {
    const c = chain()
    const k = key()
    const leases = makeRowLeases(sql)
    const applied = await run(makeAttemptRunner({ machine, store: store(), ports: c.ports({ landed: false }), leases, sql }).apply(k, undefined, { _tag: "Start" }))
    expect(applied).toMatchObject({ _tag: "Saved", state: { _tag: "sent" } })
    expect(await stateOf(k)).toBe("sent")
    expect(await run(leases.live(KIND, [k]))).toEqual(new Set())
    // A recovery pass with a chain that answers now settles it, without sending again.
    expect(await run(makeAttemptRunner({ machine, store: store(), ports: c.ports(), leases: makeRowLeases(sql), sql }).recover)).toBeGreaterThanOrEqual(1)
    await eventually(async () => ((await stateOf(k)) === "done" ? true : undefined), { what: "the resumed wait to settle", intervalMs: 20, deadlineMs: 10_000 })
    expect(c.sends.get(k)).toBe(1)
  })

  it("a watch pass performs what an idle state asks and applies the event found: racing passes of two processes move the row once; a failing port is logged and the pass goes on", async () => {
    // The machine with an idle state: `parked` (not in flight) asks `Look`; the port finds it sent (→ `sent`, driven to `done`) or nothing.
    type PState = State | { readonly _tag: "parked" }
    type PEvent = Event | { readonly _tag: "Park" }
    type POutput = Output | { readonly _tag: "Look" }
    const parkedMachine: AttemptMachine<PState, PEvent, POutput> = {
      step: (s, e) => {
        if (e._tag === "Park" && s === undefined) return [{ _tag: "parked" }, []]
        if (e._tag === "Sent" && s?._tag === "parked") return [{ _tag: "sent" }, [{ _tag: "Await" }]]
        if (e._tag === "Observed" && e.landed && s?._tag === "sent") return [{ _tag: "done" }, [{ _tag: "Settle" }]]
        return [s, []]
      },
      inFlight: (s) => s._tag === "sending" || s._tag === "sent",
      owed: (s) => (s._tag === "sent" ? [{ _tag: "Await" }] : []),
      idle: (s) => (s._tag === "parked" ? [{ _tag: "Look" }] : [])
    }
    const base = store()
    const parkedStore: AttemptStore<string, PState, POutput> = {
      ...(base as unknown as AttemptStore<string, PState, POutput>),
      idle: Effect.map(sql<{ key: string }>`SELECT key FROM test_attempts WHERE state = 'parked' ORDER BY key LIMIT 100`, (rows) => rows.map((r) => r.key))
    }
    const found = key()
    const notYet = key()
    const broken = key()
    const looks = new Map<string, number>()
    const ports = {
      perform: (k: string, _s: PState, o: POutput) =>
        Effect.gen(function* () {
          switch (o._tag) {
            case "Look":
              looks.set(k, (looks.get(k) ?? 0) + 1)
              if (k === broken) return yield* Effect.die("the chain read failed")
              return k === found ? ({ _tag: "Sent" } as PEvent) : undefined
            case "Await":
              return { _tag: "Observed", landed: true } as PEvent
            default:
              return undefined
          }
        })
    }
    const runnerOf = () => makeAttemptRunner({ machine: parkedMachine, store: parkedStore, ports, leases: makeRowLeases(sql), sql })
    for (const k of [found, notYet, broken]) expect(await run(runnerOf().apply(k, undefined, { _tag: "Park" }))).toMatchObject({ _tag: "Saved", state: { _tag: "parked" } })
    const [a, b] = await Promise.all([run(runnerOf().watch), run(runnerOf().watch)])
    expect(a + b).toBe(1)
    expect(await stateOf(found)).toBe("done")
    expect(await eventsOf(found)).toBe(1)
    // Nothing found and a failed look leave their rows parked, looked at by both passes.
    expect(await stateOf(notYet)).toBe("parked")
    expect(await stateOf(broken)).toBe("parked")
    expect(looks.get(notYet)).toBe(2)
    expect(looks.get(broken)).toBe(2)
    expect(await run(runnerOf().watch)).toBe(0)
    expect(await eventsOf(found)).toBe(1)
    // A runner whose machine has no idle states watches nothing.
    expect(await run(makeAttemptRunner({ machine, store: store(), ports: chain().ports(), leases: makeRowLeases(sql), sql }).watch)).toBe(0)
  })
})
