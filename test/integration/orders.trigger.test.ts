/**
 * Limit orders triggered by the market actors (issue 29) through the real runtime, the embedded
 * bus, PGlite and the webhook outbox: orders stored in `limit_orders` are loaded into the actors'
 * books, a crossing trade flips each order to `triggered` once and records one `order.triggered`
 * with the spec's payload; a cancelled order and an order the trades never cross stay out; a
 * replay of the whole bus with the checkpoints gone triggers nothing again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Context, Deferred, Effect, ExecutionStrategy, Exit, Layer, Scope } from "effect"
import * as MarketActors from "../../actors/MarketActors.js"
import { currentPrice } from "../../actors/orders/OrderBooks.js"
import { comparePrices, formatPrice, formatPriceE18, type Price, priceOfReserves, trailStop } from "../../actors/orders/OrderBook.js"
import { Bus, type BusError, type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { NamedStatements } from "../../src/db/Database.js"
import { cancelOrder, createOrder, markTriggeredAll, type NewOrder, readOrder, TRIGGER_STATEMENT_NAME, triggeredData } from "../../src/services/orders/OrderStore.js"
import { type OrderExecution, type OrderHooks, orderTriggerHooks } from "../../src/services/orders/OrderTriggers.js"
import { keyedEventId } from "../../src/services/webhooks/Outbox.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"
import { consistently, eventuallyEffect } from "../support/eventually.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

const PARTITIONS = 2
const SOL = 1_000_000_000n
const E18 = 10n ** 18n
const masterKey = new Uint8Array(32).fill(9)
const ACCOUNT = "acct_orders"

class Shared extends Context.Tag("test/OrdersShared")<Shared, { readonly bus: BusShape; readonly database: Context.Context<SqlClient.SqlClient> }>() {}
const sharedLayer = Layer.scoped(Shared, memoryBusAndPglite(PARTITIONS, "curvestream-orders-"))
const sqlOf = Effect.map(Shared, ({ database }) => Context.get(database, SqlClient.SqlClient))

/** What the execution port was handed (the trade rail's submit in production), by order id. */
const executed: Array<string> = []
const execution: OrderExecution = { execute: (row) => Effect.sync(() => void executed.push(row.id)) }

/**
 * One actors "process" in a scope of its own (closing it without a flush is the process dying).
 * `syncIntervalMs`: how often its follow reads `limit_orders` (an hour: only when the test calls `hooks.sync`).
 */
const openActors = (checkpointIntervalMs = 100, reloadOnAssign = false, checkpointLingerMs = 1, durableGate: Effect.Effect<void> = Effect.void, syncIntervalMs = 10) =>
  Effect.gen(function* () {
    const { bus, database } = yield* Shared
    const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    let hooks: OrderHooks | undefined
    // `durableGate` stands for a bus whose records become durable later than they are read (the embedded bus's group commit).
    const orders = (sql: SqlClient.SqlClient, state: Parameters<ReturnType<typeof orderTriggerHooks>>[1], hurry: () => void, durable: () => Effect.Effect<void, BusError>) =>
      Effect.tap(orderTriggerHooks({ syncIntervalMs, execution })(sql, state, hurry, () => Effect.zipRight(durableGate, durable())), (h) => Effect.sync(() => (hooks = h)))
    const { actors } = yield* MarketActors.make({ shards: 2, orders, checkpointIntervalMs, checkpointLingerMs, reloadOnAssign }).pipe(Effect.provideService(Bus, bus), Effect.provide(database), Scope.extend(scope))
    return { actors, hooks: hooks!, close: Scope.close(scope, Exit.void) }
  })

const committedToEnd = Effect.gen(function* () {
  const { bus } = yield* Shared
  const ends = yield* bus.endOffsets(Topics.chainEvents)
  yield* eventuallyEffect(
    Effect.map(bus.committed(MarketActors.MARKET_ACTORS_GROUP, Topics.chainEvents), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) >= end)),
    { what: "the commits to reach the end of chain.events", deadlineMs: 30_000, intervalMs: 10 }
  )
})

const scaled = (p: Price, num: bigint, den: bigint): bigint => (p.num * E18 * num) / (p.den * den)

/** Once the market is applied, a limit sell 2% above its price now, read into the books. */
const placeSellAbove = (first: Effect.Effect.Success<ReturnType<typeof openActors>>, mint: string, id: string, clientOrderId: string) =>
  Effect.gen(function* () {
    const { database } = yield* Shared
    yield* eventuallyEffect(Effect.sync(() => first.actors.state("solana", mint) !== undefined), { what: "the market applied", deadlineMs: 30_000, intervalMs: 10 })
    const now = currentPrice(first.actors.state("solana", mint))!
    yield* createOrder(order({ id, clientOrderId, mint, afterPosition: now.position, level: formatPriceE18(scaled(now.price, 102n, 100n)) }), Date.now()).pipe(
      Effect.provide(database)
    )
    yield* first.hooks.sync
  })

const order = (o: Partial<NewOrder> & Pick<NewOrder, "id" | "clientOrderId" | "mint" | "afterPosition">): NewOrder => ({
  accountId: ACCOUNT,
  keyId: "key_orders",
  requestHash: "h",
  chain: "solana",
  side: "sell",
  trigger: "limit",
  amountRaw: 1_000_000n,
  level: null,
  trailBps: null,
  watermark: null,
  slippageBps: 100,
  payer: "main",
  expiresAtMs: null,
  ...o
})

interface OutboxRow {
  readonly id: string
  readonly data: Record<string, unknown>
}
const triggeredRows = (endpointId: string) =>
  Effect.flatMap(sqlOf, (sql) =>
    sql<OutboxRow>`SELECT id, data FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND event = 'order.triggered' ORDER BY id`.pipe(
      Effect.map((rows) => rows.map((r) => ({ id: r.id, data: typeof r.data === "string" ? (JSON.parse(r.data) as Record<string, unknown>) : r.data })))
    )
  )

layer(sharedLayer, { timeout: 180_000, excludeTestServices: true })("limit orders triggered by the market actors", (it) => {
  it.scoped("a crossing trade triggers each order once with one order.triggered; cancelled and uncrossed orders stay out; a replay triggers nothing again", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const sql = yield* sqlOf
      const webhooks = yield* WebhookService.make({ masterKey, allowLoopbackForTests: true }).pipe(Effect.provide(database))
      const endpoint = yield* webhooks.create({ accountId: ACCOUNT, testAccount: true }, { url: "http://127.0.0.1:9/hooks", events: ["order.triggered"] })

      const clock = new ChainClock("solana")
      const m = new SimMarket(clock, { mint: "So1OrdersMint" })
      yield* publishEvents(bus, [m.created(), ...m.buy("early", SOL)])
      // The follow is read by hand here (\`sync\`), so what the books hold when the crossing trades come is known.
      const first = yield* openActors(100, false, 1, Effect.void, 3_600_000)
      yield* committedToEnd
      const now = currentPrice(first.actors.state("solana", m.mint))!
      const at = now.position

      const limitTarget = scaled(now.price, 105n, 100n) // sells 5% above the price now
      const stopLevel = scaled(now.price, 50n, 100n) // far below: never reached here
      const rows = [
        order({ id: "ord_limit", clientOrderId: "c-limit", mint: m.mint, afterPosition: at, level: formatPriceE18(limitTarget) }),
        order({ id: "ord_stop", clientOrderId: "c-stop", mint: m.mint, afterPosition: at, trigger: "stop", level: formatPriceE18(stopLevel) }),
        order({ id: "ord_cancelled", clientOrderId: "c-cancelled", mint: m.mint, afterPosition: at, level: formatPriceE18(limitTarget) }),
        order({ id: "ord_trail", clientOrderId: "c-trail", mint: m.mint, afterPosition: at, trigger: "trailing_stop", trailBps: 1000, watermark: now.price })
      ]
      const heldIds = () => {
        const book = first.hooks.books.book(`solana:${m.mint}`)
        return book === undefined ? [] : [...book.below, ...book.above, ...book.trailing].map((o) => o.id).sort()
      }
      for (const r of rows) {
        expect((yield* createOrder(r, Date.now()).pipe(Effect.provide(database)))._tag).toBe("Created")
        if (r.id !== "ord_cancelled") continue
        // A follow read between two creates (the loop's, every \`syncIntervalMs\`) leaves three orders
        // held too, the wrong three: the books are checked by the orders they hold, never by count
        // (waiting for "three held" once let the crossing trades in before ord_trail was placed, and
        // placed after the dump it caught up on the low, under its stop: one trigger, not two).
        yield* first.hooks.sync
        expect(heldIds()).toEqual(["ord_cancelled", "ord_limit", "ord_stop"])
      }
      // The same clientOrderId again answers the stored order (idempotent create).
      const again = yield* createOrder({ ...rows[0]!, id: "ord_other" }, Date.now()).pipe(Effect.provide(database))
      expect(again._tag === "Existing" && again.row.id).toBe("ord_limit")
      expect((yield* cancelOrder(ACCOUNT, "ord_cancelled", Date.now()).pipe(Effect.provide(database)))._tag).toBe("Cancelled")
      yield* first.hooks.sync
      expect(heldIds()).toEqual(["ord_limit", "ord_stop", "ord_trail"])

      // The crossing buy, then a sell more than 10% below the high it made.
      const pump = m.buy("whale", 5n * SOL)
      const high = priceOfReserves(m.curve.virtualQuoteRaw, m.curve.virtualTokenRaw, 6, 9)!
      const dump = m.sell("whale", (pump[0] as { amountOutRaw: bigint }).amountOutRaw)
      const low = priceOfReserves(m.curve.virtualQuoteRaw, m.curve.virtualTokenRaw, 6, 9)!
      yield* publishEvents(bus, [...pump, dump])
      yield* committedToEnd
      yield* eventuallyEffect(Effect.map(triggeredRows(endpoint.id), (r) => r.length >= 2), { what: "two order.triggered rows", deadlineMs: 10_000, intervalMs: 10 })

      const limit = (yield* readOrder(ACCOUNT, "ord_limit").pipe(Effect.provide(database)))!
      expect(limit.status).toBe("triggered")
      expect(limit.triggerPosition).toBe(pump[0]!.position)
      const trail = (yield* readOrder(ACCOUNT, "ord_trail").pipe(Effect.provide(database)))!
      expect(trail.status).toBe("triggered")
      expect(trail.triggerPosition).toBe(dump.position)
      expect((yield* readOrder(ACCOUNT, "ord_stop").pipe(Effect.provide(database)))!.status).toBe("open")
      expect((yield* readOrder(ACCOUNT, "ord_cancelled").pipe(Effect.provide(database)))!.status).toBe("cancelled")

      const expected = [
        {
          id: keyedEventId("order.triggered:ord_limit"),
          data: {
            clientOrderId: "c-limit",
            chain: "solana",
            mint: m.mint,
            side: "sell",
            amountRaw: "1000000",
            targetPrice: formatPriceE18(limitTarget),
            price: formatPrice(high),
            expiresAt: null,
            trigger: "limit"
          }
        },
        {
          id: keyedEventId("order.triggered:ord_trail"),
          data: {
            clientOrderId: "c-trail",
            chain: "solana",
            mint: m.mint,
            side: "sell",
            amountRaw: "1000000",
            targetPrice: null,
            price: formatPrice(low),
            expiresAt: null,
            trigger: "trailing_stop",
            trailBps: 1000,
            trailWatermark: formatPrice(high),
            stopPrice: formatPrice(trailStop(high, 1000))
          }
        }
      ].sort((a, b) => (a.id < b.id ? -1 : 1))
      expect(yield* triggeredRows(endpoint.id)).toEqual(expected)
      yield* first.close

      // Another writer (a replay, a partition's previous owner) triggering the same order moves nothing and records nothing.
      const [twice] = yield* markTriggeredAll([{ id: "ord_limit", price: low, position: dump.position, atMs: dump.timestampMs, watermark: null, stopPrice: null }], Date.now()).pipe(
        Effect.provide(database)
      )
      expect(twice).toBeUndefined()

      // The whole bus replayed with no checkpoint: the crossing trades are applied again, nothing triggers again.
      yield* sql`DELETE FROM checkpoints WHERE owner = ${MarketActors.MARKET_OWNER}`
      for (let p = 0; p < PARTITIONS; p++) yield* bus.commit(MarketActors.MARKET_ACTORS_GROUP, Topics.chainEvents, p, 0)
      const second = yield* openActors()
      expect(second.hooks.books.size()).toBe(1)
      yield* committedToEnd
      yield* second.hooks.sync
      expect(yield* triggeredRows(endpoint.id)).toEqual(expected)
      const limitAfter = (yield* readOrder(ACCOUNT, "ord_limit").pipe(Effect.provide(database)))!
      expect(limitAfter.triggeredAtMs).toBe(limit.triggeredAtMs)
      expect(limitAfter.triggerPrice).toBe(limit.triggerPrice)
      // Each trigger reached the execution port once, after its row committed.
      expect([...executed].sort()).toEqual(["ord_limit", "ord_trail"])
      yield* second.close
    })
  )

  it.scoped("a process that dies after the crossing trade but before the trigger is written loses no trigger: the replay triggers it once; an expired order fires nothing", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const webhooks = yield* WebhookService.make({ masterKey, allowLoopbackForTests: true }).pipe(Effect.provide(database))
      const endpoint = yield* webhooks.create({ accountId: ACCOUNT, testAccount: true }, { url: "http://127.0.0.1:9/crash", events: ["order.triggered"] })
      const clock = new ChainClock("solana")
      const m = new SimMarket(clock, { mint: "So1OrdersCrash" })
      yield* publishEvents(bus, [m.created(), ...m.buy("early", SOL)])
      // A checkpoint interval and a linger far beyond the test: nothing this process applies is
      // flushed; and the database refuses the trigger's write (the writer retries), so it dies unwritten.
      const sql = yield* sqlOf
      yield* sql`CREATE FUNCTION test_refuse_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.status = 'triggered' THEN RAISE EXCEPTION 'the trigger write is refused by the test'; END IF; RETURN NEW; END $$`
      yield* sql`CREATE TRIGGER test_refuse_trigger BEFORE UPDATE ON limit_orders FOR EACH ROW EXECUTE FUNCTION test_refuse_trigger()`
      const doomed = yield* openActors(3_600_000, false, 3_600_000)
      yield* eventuallyEffect(Effect.sync(() => doomed.actors.state("solana", m.mint) !== undefined), { what: "the market applied", deadlineMs: 30_000, intervalMs: 10 })
      const now = currentPrice(doomed.actors.state("solana", m.mint))!
      const target = formatPriceE18(scaled(now.price, 102n, 100n))
      const base = { mint: m.mint, afterPosition: now.position, level: target }
      yield* createOrder(order({ id: "ord_crash", clientOrderId: "c-crash", ...base }), Date.now()).pipe(Effect.provide(database))
      yield* createOrder(order({ id: "ord_expiring", clientOrderId: "c-expiring", ...base, side: "buy", level: formatPriceE18(now.price.num * E18 / now.price.den), expiresAtMs: Date.now() + 1_500 }), Date.now()).pipe(
        Effect.provide(database)
      )
      const held = (id: string) => {
        const book = doomed.hooks.books.book(`solana:${m.mint}`)
        return book !== undefined && [...book.below, ...book.above, ...book.trailing].some((o) => o.id === id)
      }
      yield* eventuallyEffect(Effect.sync(() => held("ord_crash")), { what: "the book to hold the order", deadlineMs: 10_000, intervalMs: 10 })
      const pump = m.buy("whale", 2n * SOL)
      yield* publishEvents(bus, pump)
      yield* eventuallyEffect(Effect.sync(() => !held("ord_crash")), { what: "the trigger in memory", deadlineMs: 10_000, intervalMs: 10 })
      yield* doomed.close // dies: the trigger was never written
      expect(doomed.hooks.triggerWrites().statements).toBe(0)
      expect((yield* readOrder(ACCOUNT, "ord_crash").pipe(Effect.provide(database)))!.status).toBe("open")
      expect(yield* triggeredRows(endpoint.id)).toEqual([])
      yield* sql`DROP TRIGGER test_refuse_trigger ON limit_orders`
      yield* sql`DROP FUNCTION test_refuse_trigger()`

      const next = yield* openActors()
      yield* committedToEnd
      yield* eventuallyEffect(Effect.map(readOrder(ACCOUNT, "ord_crash").pipe(Effect.provide(database)), (r) => r?.status === "triggered"), {
        what: "the replayed trade to trigger the order",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      expect((yield* readOrder(ACCOUNT, "ord_crash").pipe(Effect.provide(database)))!.triggerPosition).toBe(pump[0]!.position)
      expect((yield* triggeredRows(endpoint.id)).map((r) => r.data.clientOrderId)).toEqual(["c-crash"])
      // The buy-at-or-below order never crossed (the price only rose); past its time the sweep expires it, firing nothing.
      yield* eventuallyEffect(Effect.map(readOrder(ACCOUNT, "ord_expiring").pipe(Effect.provide(database)), (r) => r?.status === "expired"), {
        what: "the sweep to expire the order",
        deadlineMs: 10_000,
        intervalMs: 20
      })
      expect(yield* triggeredRows(endpoint.id)).toHaveLength(1)
      expect(executed.filter((id) => id === "ord_crash")).toEqual(["ord_crash"])
      yield* next.close
    })
  )
  it.scoped("a trigger is written and handed off without waiting for a checkpoint; a process that dies before any flush leaves it triggered, once", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const webhooks = yield* WebhookService.make({ masterKey, allowLoopbackForTests: true }).pipe(Effect.provide(database))
      const endpoint = yield* webhooks.create({ accountId: ACCOUNT, testAccount: true }, { url: "http://127.0.0.1:9/early", events: ["order.triggered"] })
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1OrdersEarly" })
      yield* publishEvents(bus, [m.created(), ...m.buy("early", SOL)])
      // No checkpoint flush within the test: the trigger cannot ride on one.
      const first = yield* openActors(3_600_000, false, 3_600_000)
      yield* placeSellAbove(first, m.mint, "ord_early", "c-early")
      const pump = m.buy("whale", 2n * SOL)
      yield* publishEvents(bus, pump)
      yield* eventuallyEffect(Effect.sync(() => executed.includes("ord_early")), { what: "the execution handed off", deadlineMs: 10_000, intervalMs: 5 })
      const row = (yield* readOrder(ACCOUNT, "ord_early").pipe(Effect.provide(database)))!
      expect(row.status).toBe("triggered")
      expect(row.triggerPosition).toBe(pump[0]!.position)
      expect(first.actors.stats().checkpoint.flushes).toBe(0)
      expect(first.hooks.triggerWrites().statements).toBe(1)
      yield* first.close // dies: no checkpoint was ever written, so the next process replays the trade

      const next = yield* openActors()
      yield* committedToEnd
      expect(next.actors.state("solana", m.mint)?.core?.lastPosition).toBe(pump.at(-1)!.position)
      yield* next.hooks.sync
      expect(next.hooks.books.book(`solana:${m.mint}`)).toBeUndefined() // not open: not loaded, so the replay cannot trigger it
      expect((yield* triggeredRows(endpoint.id)).map((r) => r.data.clientOrderId)).toEqual(["c-early"])
      expect(executed.filter((id) => id === "ord_early")).toEqual(["ord_early"])
      yield* next.close
    })
  )
  it.scoped("a trigger waits for its crossing trade to be durable on the bus: nothing is written or handed off before, then once", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const m = new SimMarket(new ChainClock("solana"), { mint: "So1OrdersDurable" })
      yield* publishEvents(bus, [m.created(), ...m.buy("early", SOL)])
      const gate = yield* Deferred.make<void>()
      const first = yield* openActors(100, false, 1, Deferred.await(gate))
      yield* placeSellAbove(first, m.mint, "ord_durable", "c-durable")
      const pump = m.buy("whale", 2n * SOL)
      yield* publishEvents(bus, pump)
      yield* eventuallyEffect(Effect.sync(() => first.actors.state("solana", m.mint)?.core?.lastPosition === pump.at(-1)!.position), {
        what: "the crossing trade applied (its trigger decided)",
        deadlineMs: 10_000,
        intervalMs: 5
      })
      // The trade is applied and the trigger decided, but the bus has not said the trade is durable: nothing is written or handed off.
      yield* Effect.promise(() =>
        consistently(async () => !executed.includes("ord_durable") && (await Effect.runPromise(readOrder(ACCOUNT, "ord_durable").pipe(Effect.provide(database))))?.status === "open", {
          what: "the order open and not handed off while its trade is not durable",
          forMs: 300,
          intervalMs: 20
        })
      )
      expect(first.hooks.triggerWrites().statements).toBe(0)
      yield* Deferred.succeed(gate, undefined)
      yield* eventuallyEffect(Effect.sync(() => executed.includes("ord_durable")), { what: "the execution handed off once the trade is durable", deadlineMs: 10_000, intervalMs: 5 })
      expect((yield* readOrder(ACCOUNT, "ord_durable").pipe(Effect.provide(database)))!.status).toBe("triggered")
      expect(executed.filter((id) => id === "ord_durable")).toEqual(["ord_durable"])
      yield* first.close
    })
  )

  it.scoped("the one-statement trigger write: its order.triggered payload is triggeredData of the row it moved (expiry and trail included); a stale fence moves nothing", () =>
    Effect.gen(function* () {
      const { database } = yield* Shared
      const sql = yield* sqlOf
      const webhooks = yield* WebhookService.make({ masterKey, allowLoopbackForTests: true }).pipe(Effect.provide(database))
      const endpoint = yield* webhooks.create({ accountId: "acct_orders_statement", testAccount: true }, { url: "http://127.0.0.1:9/statement", events: ["order.triggered"] })
      const expiresAtMs = Date.parse("2031-05-06T07:08:09.123Z")
      const base = { accountId: "acct_orders_statement", mint: "So1OrdersStatement", afterPosition: "s:0", expiresAtMs }
      yield* createOrder(order({ id: "ord_st_limit", clientOrderId: "c-st-limit", ...base, level: "1.5" }), Date.now()).pipe(Effect.provide(database))
      yield* createOrder(order({ id: "ord_st_trail", clientOrderId: "c-st-trail", ...base, trigger: "trailing_stop", trailBps: 750, watermark: { num: 3n, den: 2n } }), Date.now()).pipe(Effect.provide(database))
      yield* createOrder(order({ id: "ord_st_fenced", clientOrderId: "c-st-fenced", ...base, level: "2" }), Date.now()).pipe(Effect.provide(database))
      yield* sql`INSERT INTO partition_owners (owner, partition, epoch) VALUES ('market', 901, 3)`
      const write = { price: { num: 7n, den: 3n }, position: "s:9", atMs: Date.parse("2030-01-02T03:04:05.678Z") }
      const moved = yield* markTriggeredAll(
        [
          { id: "ord_st_limit", ...write, watermark: null, stopPrice: null, fence: { owner: "market", partition: 901, epoch: 3 } },
          { id: "ord_st_trail", ...write, watermark: { num: 5n, den: 2n }, stopPrice: { num: 37n, den: 16n } },
          { id: "ord_st_fenced", ...write, watermark: null, stopPrice: null, fence: { owner: "market", partition: 901, epoch: 2 } }
        ],
        Date.now()
      ).pipe(Effect.provide(database))
      expect(moved.map((r) => r.id).sort()).toEqual(["ord_st_limit", "ord_st_trail"])
      expect((yield* readOrder("acct_orders_statement", "ord_st_fenced").pipe(Effect.provide(database)))!.status).toBe("open")
      const stored = new Map((yield* triggeredRows(endpoint.id)).map((r) => [r.id, r.data]))
      for (const row of moved) {
        expect(row.status).toBe("triggered")
        expect(row.triggeredAtMs).toBe(write.atMs)
        expect(stored.get(keyedEventId(`order.triggered:${row.id}`))).toEqual(triggeredData(row))
      }
      expect(stored.get(keyedEventId("order.triggered:ord_st_trail"))).toMatchObject({ expiresAt: "2031-05-06T07:08:09.123Z", trailBps: 750, trailWatermark: "2.5" })
      // Again: nothing is open any more, so nothing moves and no event is added.
      expect(yield* markTriggeredAll([{ id: "ord_st_limit", ...write, watermark: null, stopPrice: null }], Date.now()).pipe(Effect.provide(database))).toEqual([])
      expect(yield* triggeredRows(endpoint.id)).toHaveLength(2)
      // It runs as the database layer's named statement (planned once per connection): one more
      // execution of it per call...
      const executions = Effect.map(
        sql<{ n: number }>`SELECT coalesce(sum(generic_plans + custom_plans), 0)::int AS n FROM pg_prepared_statements WHERE name LIKE ${`${TRIGGER_STATEMENT_NAME}_%`}`,
        (rows) => rows[0]!.n
      )
      const before = yield* executions
      yield* createOrder(order({ id: "ord_st_named", clientOrderId: "c-st-named", ...base, level: "1.5" }), Date.now()).pipe(Effect.provide(database))
      expect(yield* markTriggeredAll([{ id: "ord_st_named", ...write, watermark: null, stopPrice: null }], Date.now()).pipe(Effect.provide(database))).toHaveLength(1)
      expect((yield* executions) - before).toBe(1)
      // ...but inside a transaction it is the transaction's statement (unnamed, on its connection):
      // it waits for nothing (the embedded pool's one connection is the transaction's) and rolls back with it.
      yield* createOrder(order({ id: "ord_st_tx", clientOrderId: "c-st-tx", ...base, level: "1.5" }), Date.now()).pipe(Effect.provide(database))
      const rolledBack = yield* sql
        .withTransaction(
          Effect.zipRight(
            markTriggeredAll([{ id: "ord_st_tx", ...write, watermark: null, stopPrice: null }], Date.now()),
            Effect.fail("rolled back on purpose" as const)
          )
        )
        .pipe(Effect.provide(database), Effect.timeout("20 seconds"), Effect.flip)
      expect(rolledBack).toBe("rolled back on purpose")
      expect((yield* readOrder("acct_orders_statement", "ord_st_tx").pipe(Effect.provide(database)))!.status).toBe("open")
      expect((yield* executions) - before).toBe(1)
      // ...and where no layer provides `NamedStatements`, the same text runs unnamed, to the same rows and payloads.
      yield* createOrder(order({ id: "ord_st_unnamed", clientOrderId: "c-st-unnamed", ...base, trigger: "trailing_stop", trailBps: 500, watermark: { num: 3n, den: 2n } }), Date.now()).pipe(
        Effect.provide(database)
      )
      const unnamed = yield* markTriggeredAll([{ id: "ord_st_unnamed", ...write, watermark: { num: 5n, den: 2n }, stopPrice: { num: 19n, den: 8n } }], Date.now()).pipe(
        Effect.mapInputContext((context: Context.Context<SqlClient.SqlClient>) => Context.omit(NamedStatements)(context)),
        Effect.provide(database)
      )
      expect(unnamed.map((r) => r.id)).toEqual(["ord_st_unnamed"])
      expect((yield* triggeredRows(endpoint.id)).find((r) => r.id === keyedEventId("order.triggered:ord_st_unnamed"))?.data).toEqual(triggeredData(unnamed[0]!))
    })
  )
  it.scoped("a partition handed to another actors process: its trailing stops take the previous owner's watermark, so the stop is where the trades put it", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const clock = new ChainClock("solana")
      const markets = [0, 1, 2, 3].map((i) => new SimMarket(clock, { mint: `So1OrdersMove${i}` }))
      yield* publishEvents(bus, markets.flatMap((m) => [m.created(), ...m.buy("early", SOL)]))
      const a = yield* openActors(100, true)
      yield* committedToEnd
      const b = yield* openActors(100, true)
      yield* eventuallyEffect(Effect.sync(() => b.actors.stats().reloads >= 1), { what: "B to take a partition", deadlineMs: 10_000, intervalMs: 10 })
      // A market B owns now: B applies its next trade.
      const probes = markets.map((m) => m.buy("probe", SOL / 10n))
      yield* publishEvents(bus, probes.flat())
      yield* committedToEnd
      const i = markets.findIndex((m, k) => b.actors.state("solana", m.mint)?.core?.lastPosition === probes[k]![0]!.position)
      expect(i).toBeGreaterThanOrEqual(0)
      const m = markets[i]!
      const now = currentPrice(b.actors.state("solana", m.mint))!
      yield* createOrder(order({ id: "ord_moved", clientOrderId: "c-moved", mint: m.mint, afterPosition: now.position, trigger: "trailing_stop", trailBps: 1000, watermark: now.price }), Date.now()).pipe(
        Effect.provide(database)
      )
      const holds = (p: { hooks: OrderHooks }) => p.hooks.books.book(`solana:${m.mint}`)?.trailing.some((o) => o.id === "ord_moved") === true
      yield* eventuallyEffect(Effect.sync(() => holds(b)), { what: "B, the owner, to hold the order", deadlineMs: 10_000, intervalMs: 10 })
      yield* a.hooks.sync
      expect(holds(a)).toBe(false) // not A's partition: A's follow leaves it to B

      // B sees the pump and makes its watermark durable; A never sees it.
      const pump = m.buy("whale", 5n * SOL)
      const high = priceOfReserves(m.curve.virtualQuoteRaw, m.curve.virtualTokenRaw, 6, 9)!
      yield* publishEvents(bus, pump)
      yield* committedToEnd
      yield* eventuallyEffect(Effect.map(readOrder(ACCOUNT, "ord_moved").pipe(Effect.provide(database)), (r) => r?.watermark !== null && formatPrice(r!.watermark!) === formatPrice(high)), {
        what: "the raised watermark stored",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      const aReloads = a.actors.stats().reloads
      yield* b.close
      yield* eventuallyEffect(Effect.sync(() => a.actors.stats().reloads > aReloads), { what: "A to take B's partition", deadlineMs: 10_000, intervalMs: 10 })

      // Back near where it was placed: below 90% of the high, above 90% of the price it was placed at.
      const dump = m.sell("whale", (pump[0] as { amountOutRaw: bigint }).amountOutRaw)
      const low = priceOfReserves(m.curve.virtualQuoteRaw, m.curve.virtualTokenRaw, 6, 9)!
      expect(comparePrices(low, trailStop(high, 1000))).toBeLessThanOrEqual(0)
      expect(comparePrices(low, trailStop(now.price, 1000))).toBeGreaterThan(0)
      yield* publishEvents(bus, [dump])
      yield* committedToEnd
      yield* eventuallyEffect(Effect.map(readOrder(ACCOUNT, "ord_moved").pipe(Effect.provide(database)), (r) => r?.status === "triggered"), {
        what: "the new owner to trigger the trailing stop",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      const moved = (yield* readOrder(ACCOUNT, "ord_moved").pipe(Effect.provide(database)))!
      expect(moved.triggerPosition).toBe(dump.position)
      expect(moved.triggerWatermark).toBe(formatPrice(high))
      yield* a.close
    })
  )
  it.scoped("an order learnt after the trade that crossed it triggers on the price now and is written though its market never trades again", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const clock = new ChainClock("solana")
      const m = new SimMarket(clock, { mint: "So1OrdersCatchUp" })
      yield* publishEvents(bus, [m.created(), ...m.buy("early", SOL)])
      const p = yield* openActors()
      yield* committedToEnd
      const placedAt = currentPrice(p.actors.state("solana", m.mint))!
      const pump = m.buy("whale", 5n * SOL)
      yield* publishEvents(bus, pump)
      yield* committedToEnd
      // Placed before the pump (its position), learnt after it: a limit sell 5% above the price it was placed at.
      yield* createOrder(order({ id: "ord_catchup", clientOrderId: "c-catchup", mint: m.mint, afterPosition: placedAt.position, level: formatPriceE18(scaled(placedAt.price, 105n, 100n)) }), Date.now()).pipe(
        Effect.provide(database)
      )
      yield* p.hooks.sync
      yield* eventuallyEffect(Effect.map(readOrder(ACCOUNT, "ord_catchup").pipe(Effect.provide(database)), (r) => r?.status === "triggered"), {
        what: "the catch-up trigger written by a flush though the market did not move again",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      expect((yield* readOrder(ACCOUNT, "ord_catchup").pipe(Effect.provide(database)))!.triggerPosition).toBe(pump[0]!.position)
      yield* p.close
    })
  )
  it.scoped("the follow reads limit_orders only when a create or cancel was handed a rev: no read while nothing changed, every change still read", () =>
    Effect.gen(function* () {
      const { bus, database } = yield* Shared
      const sql = yield* sqlOf
      const clock = new ChainClock("solana")
      const m = new SimMarket(clock, { mint: "So1OrdersGate" })
      yield* publishEvents(bus, [m.created(), ...m.buy("early", SOL)])
      // A long interval: this test drives the follow itself.
      const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
      const hooks = yield* orderTriggerHooks({ syncIntervalMs: 3_600_000 })(sql, () => undefined).pipe(Scope.extend(scope))
      const inBook = () => {
        const b = hooks.books.book(`solana:${m.mint}`)
        return b === undefined ? 0 : b.below.length + b.above.length + b.trailing.length
      }
      yield* hooks.sync
      const idle = hooks.followReads()
      for (let i = 0; i < 5; i++) yield* hooks.sync
      expect(hooks.followReads()).toBe(idle)

      const at = "0"
      const row = order({ id: "ord_gate", clientOrderId: "c-gate", mint: m.mint, afterPosition: at, level: "1000" })
      yield* createOrder(row, Date.now()).pipe(Effect.provide(database))
      yield* hooks.sync
      expect(hooks.followReads()).toBe(idle + 1)
      expect(inBook()).toBe(1)
      yield* hooks.sync
      expect(hooks.followReads()).toBe(idle + 1)

      // A rev taken by a transaction that rolled back: the gate stays open (reads, finds nothing) until the next change is read.
      yield* sql`SELECT nextval('limit_orders_rev')`
      yield* hooks.sync
      expect(hooks.followReads()).toBe(idle + 2)
      yield* cancelOrder(ACCOUNT, "ord_gate", Date.now()).pipe(Effect.provide(database))
      yield* hooks.sync
      expect(inBook()).toBe(0)
      const after = hooks.followReads()
      yield* hooks.sync
      expect(hooks.followReads()).toBe(after)
      yield* Scope.close(scope, Exit.void)
    })
  )
})
