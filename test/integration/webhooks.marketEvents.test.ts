/**
 * The market transitions' webhook events (keys document section 6) through the real actors'
 * runtime, the embedded bus, PGlite, the outbox and the delivery worker to a local receiver:
 * `curve.graduated`, `migration.completed` and `migration.delayed` (Hood only today) each reach
 * the launching account's endpoint once with the spec payload, also when the actors restart, when
 * the bus is replayed from offset 0 with the checkpoints gone (every transition derived again),
 * and when partitions move between two actors processes. A market not launched through this
 * service notifies nobody.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Fiber, Layer, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import { marketEventHooks } from "../../src/services/webhooks/MarketEvents.js"
import { Bus, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import * as DeliveryWorker from "../../src/services/webhooks/DeliveryWorker.js"
import type { WebhookEventName } from "../../src/services/webhooks/Events.js"
import { keyedEventId } from "../../src/services/webhooks/Outbox.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"
import { eventuallyEffect } from "../support/eventually.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { foldStates, memoryBusAndPglite, publishEvents, workloadMarkets, workloadRounds } from "../support/marketWorkload.js"
import { startReceiver } from "../support/webhookReceiver.js"

const PARTITIONS = 4
const masterKey = new Uint8Array(32).fill(7)
const SOL = 1_000_000_000n
const ETH = 10n ** 18n
const MARKET_EVENTS: ReadonlyArray<WebhookEventName> = ["curve.graduated", "migration.completed", "migration.delayed"]

class Shared extends Context.Tag("test/MarketEventsShared")<Shared, { readonly bus: BusShape; readonly database: Context.Context<SqlClient.SqlClient> }>() {}

const sharedLayer = Layer.scoped(Shared, memoryBusAndPglite(PARTITIONS, "curvestream-market-events-"))

const sqlOf = Effect.map(Shared, ({ database }) => Context.get(database, SqlClient.SqlClient))

/** One actors "process" in a scope of its own (closing it is the process stopping or leaving the group). */
const openActors = (reloadOnAssign: boolean) =>
  Effect.gen(function* () {
    const { bus, database } = yield* Shared
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const { actors } = yield* MarketActors.make({ reloadOnAssign, shards: 2, announcements: marketEventHooks }).pipe(Effect.provideService(Bus, bus), Effect.provide(database), Scope.extend(scope))
    return { actors, close: Scope.close(scope, Exit.void) }
  })

const committedToEnd = Effect.gen(function* () {
  const { bus } = yield* Shared
  const ends = yield* bus.endOffsets(Topics.chainEvents)
  yield* eventuallyEffect(
    Effect.map(bus.committed(MarketActors.MARKET_ACTORS_GROUP, Topics.chainEvents), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) >= end)),
    { what: "the commits to reach the end of chain.events", deadlineMs: 30_000, intervalMs: 10 }
  )
})

/** A replay of the whole bus with nothing checkpointed: every transition is derived again. */
const forgetEverything = Effect.gen(function* () {
  const { bus } = yield* Shared
  const sql = yield* sqlOf
  yield* sql`DELETE FROM checkpoints WHERE owner = ${MarketActors.MARKET_OWNER}`
  for (let p = 0; p < PARTITIONS; p++) yield* bus.commit(MarketActors.MARKET_ACTORS_GROUP, Topics.chainEvents, p, 0)
})

/** An account with one endpoint subscribed to the market events, and the markets it launched here. */
const launchingAccount = (url: string, accountId: string, launched: ReadonlyArray<SimMarket>) =>
  Effect.gen(function* () {
    const { database } = yield* Shared
    const sql = yield* sqlOf
    const service = yield* WebhookService.make({ masterKey, allowLoopbackForTests: true }).pipe(Effect.provide(database))
    const endpoint = yield* service.create({ accountId, testAccount: true }, { url, events: MARKET_EVENTS })
    for (const m of launched) {
      yield* sql`
        INSERT INTO launched_tokens (chain, mint, account_id, key_id, client_launch_id, path, visibility, attributed_at, confirmed_at)
        VALUES (${m.chain}, ${m.mint}, ${accountId}, NULL, ${`L-${m.mint}`}, 'headless', 'production', now(), now())`
    }
    return endpoint
  })

interface OutboxRow {
  readonly id: string
  readonly event: string
  readonly data: Record<string, unknown>
}

const outboxOf = (endpointId: string) =>
  Effect.flatMap(sqlOf, (sql) =>
    sql<OutboxRow>`SELECT id, event, data FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY event, id`.pipe(
      Effect.map((rows) => rows.map((r) => ({ ...r, data: typeof r.data === "string" ? (JSON.parse(r.data) as Record<string, unknown>) : r.data })))
    )
  )

const graduate = (m: SimMarket): Array<ChainEvent> => m.buy("whale", m.chain === "solana" ? 200n * SOL : 10n * ETH)

layer(sharedLayer, { timeout: 180_000, excludeTestServices: true })("market transition webhook events", (it) => {
  it.scoped("curve.graduated, migration.completed, migration.delayed (Hood only today): once each with the spec payload, across a restart and a replay from offset 0", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const receiver = yield* Effect.acquireRelease(
        Effect.promise(() => startReceiver(() => 200)),
        (r) => Effect.promise(() => r.close())
      )
      const solana = new ChainClock("solana")
      const hood = new ChainClock("hood")
      const sol = new SimMarket(solana, { mint: "So1EventsMint" })
      const hd = new SimMarket(hood, { mint: "0xevents1" })
      const hdDelayed = new SimMarket(hood, { mint: "0xevents2" })
      const solDelayed = new SimMarket(solana, { mint: "So1EventsDelayed" })
      const foreign = new SimMarket(solana, { mint: "So1NotLaunchedHere" })
      const endpoint = yield* launchingAccount(`${receiver.url}/hooks`, "acct_market_events", [sol, hd, hdDelayed, solDelayed])

      const markets = [sol, hd, hdDelayed, solDelayed, foreign]
      const events: Array<ChainEvent> = markets.map((m) => m.created())
      for (const m of markets) events.push(...graduate(m))
      solana.advance(5_000)
      hood.advance(5_000)
      for (const m of markets) events.push(m.progress("in_progress", 1, solana.nowMs + 15_000))
      events.push(sol.migrated(), hd.migrated(), foreign.migrated())
      events.push(hdDelayed.progress("delayed", 5), solDelayed.progress("delayed", 5))
      // Traffic after the transitions announces nothing more.
      events.push(sol.poolBuy("late", SOL), hd.poolBuy("late", ETH / 10n))

      const first = yield* openActors(false)
      yield* publishEvents(bus, events)
      yield* committedToEnd

      const expected = [
        { event: "curve.graduated", key: `curve.graduated:hood:${hd.mint}`, data: { chain: "hood", mint: hd.mint, curve: `curve-${hd.mint}` } },
        { event: "curve.graduated", key: `curve.graduated:hood:${hdDelayed.mint}`, data: { chain: "hood", mint: hdDelayed.mint, curve: `curve-${hdDelayed.mint}` } },
        { event: "curve.graduated", key: `curve.graduated:solana:${sol.mint}`, data: { chain: "solana", mint: sol.mint, curve: `curve-${sol.mint}` } },
        { event: "curve.graduated", key: `curve.graduated:solana:${solDelayed.mint}`, data: { chain: "solana", mint: solDelayed.mint, curve: `curve-${solDelayed.mint}` } },
        {
          event: "migration.completed",
          key: `migration.completed:hood:${hd.mint}`,
          // Hood: no public pool address (launch document 2.9), as in the market record.
          data: { chain: "hood", mint: hd.mint, pool: null, migratedAt: new Date(events.find((e) => e._tag === "CurveMigrated" && e.mint === hd.mint)!.timestampMs).toISOString() }
        },
        {
          event: "migration.completed",
          key: `migration.completed:solana:${sol.mint}`,
          data: { chain: "solana", mint: sol.mint, pool: `pool-${sol.mint}`, migratedAt: new Date(events.find((e) => e._tag === "CurveMigrated" && e.mint === sol.mint)!.timestampMs).toISOString() }
        },
        {
          event: "migration.delayed",
          key: `migration.delayed:hood:${hdDelayed.mint}:5`,
          data: { chain: "hood", mint: hdDelayed.mint, curve: `curve-${hdDelayed.mint}`, attempts: 5, lastError: "seeding failed" }
        }
      ]
      const expectedRows = expected
        .map((x) => ({ id: keyedEventId(x.key), event: x.event, data: x.data }))
        .sort((a, b) => (a.event === b.event ? (a.id < b.id ? -1 : 1) : a.event < b.event ? -1 : 1))
      expect(yield* outboxOf(endpoint.id)).toEqual(expectedRows)
      // Nobody launched `foreign` here: no delivery row of any account names it.
      const sql = yield* sqlOf
      expect(yield* sql`SELECT id FROM webhook_deliveries WHERE data->>'mint' = ${foreign.mint}`).toEqual([])

      // A restart: the checkpoints hold the transitions; nothing is announced again.
      yield* first.close
      const second = yield* openActors(false)
      yield* publishEvents(bus, [sol.poolBuy("after-restart", SOL)])
      yield* committedToEnd
      yield* second.close
      expect(yield* outboxOf(endpoint.id)).toEqual(expectedRows)

      // The bus replayed from offset 0 with no checkpoint: every transition is derived again, none recorded twice.
      yield* forgetEverything
      const third = yield* openActors(false)
      yield* committedToEnd
      const replayed = third.actors.state("solana", sol.mint)?.core
      expect(replayed?.lifecycle).toBe("migrated")
      expect(yield* outboxOf(endpoint.id)).toEqual(expectedRows)
      yield* third.close

      // Delivered once each, as the spec's body.
      const worker = yield* DeliveryWorker.make({ masterKey, allowLoopbackForTests: true, requestTimeoutMs: 5_000 }).pipe(Effect.provide(database))
      const fiber = yield* Effect.forkScoped(Effect.provide(worker.run, database))
      yield* Effect.promise(() => receiver.waitFor(expectedRows.length, 30_000))
      yield* eventuallyEffect(
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} AND status = 'delivered'`, (r) => r[0]!.n === expectedRows.length),
        { what: "every market event delivered", deadlineMs: 30_000, intervalMs: 20 }
      )
      yield* Fiber.interrupt(fiber)
      expect(receiver.requests).toHaveLength(expectedRows.length)
      const bodies = receiver.requests.map((r) => JSON.parse(r.body.toString("utf8")) as { id: string; event: string; data: unknown })
      expect(new Set(bodies.map((b) => b.id)).size).toBe(expectedRows.length)
      for (const row of expectedRows) {
        const body = bodies.find((b) => b.id === row.id)
        expect(body, row.event).toMatchObject({ id: row.id, event: row.event, data: row.data })
        expect(receiver.requests.find((r) => r.headers["x-svc-delivery"] === row.id)?.headers["x-svc-event"]).toBe(row.event)
      }
    })
  )

  it.scoped("partition moves between two actors processes announce every transition of the launched markets exactly once", () =>
    Effect.gen(function* () {
      const { bus } = yield* Shared
      const w = workloadMarkets(6, "move")
      const round1 = workloadRounds(w, 8, true)
      const round2 = workloadRounds(w, 8, false)
      const round3 = workloadRounds(w, 8, false)
      const endpoint = yield* launchingAccount("http://127.0.0.1:9/never", "acct_market_moves", w.sims)

      const a = yield* openActors(true)
      yield* publishEvents(bus, round1)
      yield* committedToEnd
      const b = yield* openActors(true)
      yield* eventuallyEffect(Effect.sync(() => b.actors.stats().reloads >= PARTITIONS / 2), { what: "B to reload its partitions", deadlineMs: 10_000, intervalMs: 10 })
      yield* publishEvents(bus, round2)
      yield* committedToEnd
      const aReloads = a.actors.stats().reloads
      yield* b.close
      yield* eventuallyEffect(Effect.sync(() => a.actors.stats().reloads >= aReloads + PARTITIONS / 2), { what: "A to reload B's partitions", deadlineMs: 10_000, intervalMs: 10 })
      yield* publishEvents(bus, round3)
      yield* committedToEnd
      yield* a.close

      // What the in-order fold says happened: every market that left `trading` graduated once; every `migrated` one migrated once.
      const folded = foldStates([...round1, ...round2, ...round3])
      const expectedIds: Array<string> = []
      for (const state of folded.values()) {
        const core = state.core!
        if (core.lifecycle !== "trading") expectedIds.push(keyedEventId(`curve.graduated:${core.chain}:${core.mint}`))
        if (core.lifecycle === "migrated") expectedIds.push(keyedEventId(`migration.completed:${core.chain}:${core.mint}`))
      }
      expect(expectedIds.length).toBeGreaterThanOrEqual(4)
      const rows = yield* outboxOf(endpoint.id)
      expect(rows.map((r) => r.id).sort()).toEqual(expectedIds.sort())
    })
  )
})
