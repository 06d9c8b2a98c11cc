/**
 * The watchlist's webhook events (keys document section 6) from the ingested stream, through the
 * real runner on the embedded bus and PGlite into the outbox: `tracked_wallet.traded` and
 * `tracked_wallet.launched` reach every watching account's endpoint once with the spec payload,
 * never for the account's own wallet's trade, and nothing more on a restart that replays the bus
 * from offset 0 or when partitions move between two members of the group.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Layer, Scope } from "effect"
import { type BusShape, Topics } from "../../ingest/bus/Bus.js"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { makePersonalStore } from "../../src/services/personal/PersonalStore.js"
import { type MarketFacts, runTrackedWallets, TRACKED_WALLETS_GROUP } from "../../src/services/personal/TrackedWallets.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { WSOL_MINT } from "../../src/domain/QuotePairs.js"
import { keyedEventId } from "../../src/services/webhooks/Outbox.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"
import { eventuallyEffect } from "../support/eventually.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { memoryBusAndPglite, publishEvents } from "../support/marketWorkload.js"

const PARTITIONS = 4
const masterKey = new Uint8Array(32).fill(9)
const SOL = 1_000_000_000n
const ETH = 10n ** 18n
const WHALE = "Wha1eWa11et1111111111111111111111111111111"
const HOOD_WALLET = "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"

class Shared extends Context.Tag("test/TrackedShared")<Shared, { readonly bus: BusShape; readonly database: Context.Context<SqlClient.SqlClient> }>() {}
const sharedLayer = Layer.scoped(Shared, memoryBusAndPglite(PARTITIONS, "curvestream-tracked-"))
const sqlOf = Effect.map(Shared, ({ database }) => Context.get(database, SqlClient.SqlClient))

/** The markets the runner knows (the engine passes the market index's). */
const markets = new Map<string, MarketFacts>()
/** SOL is priced; ETH is not, so Hood trades carry no `usdAmount`. */
const prices = fixedPriceSource({ sol: "150" })

/** One runner "process" in a scope of its own. */
const openRunner = Effect.gen(function* () {
  const { bus, database } = yield* Shared
  const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  const runner = yield* runTrackedWallets(bus, { refreshMs: 60_000, prices, marketOf: (chain, mint) => markets.get(`${chain}:${mint}`) }).pipe(
    Effect.provide(database),
    Scope.extend(scope)
  )
  return { runner, close: Scope.close(scope, Exit.void) }
})

const committedToEnd = Effect.gen(function* () {
  const { bus } = yield* Shared
  const ends = yield* bus.endOffsets(Topics.chainEvents)
  yield* eventuallyEffect(
    Effect.map(bus.committed(TRACKED_WALLETS_GROUP, Topics.chainEvents), (c) => [...ends].every(([p, end]) => (c.get(p) ?? 0) >= end)),
    { what: "the tracked-wallets commits to reach the end of chain.events", deadlineMs: 30_000, intervalMs: 10 }
  )
})

const account = (accountId: string) =>
  Effect.gen(function* () {
    const { database } = yield* Shared
    const service = yield* WebhookService.make({ masterKey, allowLoopbackForTests: true }).pipe(Effect.provide(database))
    return yield* service.create({ accountId, testAccount: true }, { url: "http://127.0.0.1:9/hook", events: ["tracked_wallet.traded", "tracked_wallet.launched"] })
  })

const rowsOf = (endpointId: string) =>
  Effect.flatMap(sqlOf, (sql) =>
    sql<{ id: string; event: string; data: unknown }>`SELECT id, event, data FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY id`.pipe(
      Effect.map((rows) => rows.map((r) => ({ id: r.id, event: r.event, data: (typeof r.data === "string" ? JSON.parse(r.data) : r.data) as Record<string, unknown> })))
    )
  )

const tradeIds = (events: ReadonlyArray<ChainEvent>, trader: string) =>
  events.filter((e): e is Extract<ChainEvent, { _tag: "Trade" }> => e._tag === "Trade" && e.trader === trader).map((e) => keyedEventId(`tracked_wallet.traded:${e.id}`))

layer(sharedLayer, { timeout: 180_000, excludeTestServices: true })("watchlist webhook events", (it) => {
  it.scoped("tracked_wallet.traded and tracked_wallet.launched: once per event and watching account with the spec payload, never the account's own trade, across a replay from offset 0 and partition moves", () =>
    Effect.gen(function* () {
      const { bus } = yield* Shared
      const sql = yield* sqlOf
      const store = makePersonalStore(sql)
      const a = yield* account("acct_watch_a")
      const b = yield* account("acct_watch_b")
      const own = yield* account("acct_watch_own")
      const idle = yield* account("acct_watch_nothing")
      yield* store.addWatch("acct_watch_a", "solana", WHALE, "whale")
      yield* store.addWatch("acct_watch_a", "hood", HOOD_WALLET.toLowerCase(), null)
      yield* store.addWatch("acct_watch_b", "solana", WHALE, null)
      yield* store.addWatch("acct_watch_own", "solana", WHALE, "me")
      // The whale is acct_watch_own's own (linked) wallet.
      yield* sql`
        INSERT INTO wallets (id, account_id, chain, address, address_key, kind, created_at)
        VALUES ('wal_own_whale', 'acct_watch_own', 'solana', ${WHALE}, ${WHALE}, 'linked', now())`

      const first = yield* openRunner
      const solana = new ChainClock("solana")
      const hood = new ChainClock("hood")
      const launched = new SimMarket(solana, { mint: "So1WhaleToken", creator: WHALE, symbol: "WHL" })
      const other = new SimMarket(solana, { mint: "So1OtherToken", symbol: "OTH" })
      const hm = new SimMarket(hood, { mint: "0xtrackedtoken", symbol: "HTK" })
      markets.set(`solana:${other.mint}`, { symbol: "OTH", quoteMint: WSOL_MINT, quoteDecimals: 9 })
      markets.set(`hood:${hm.mint}`, { symbol: "HTK", quoteMint: "0x0000000000000000000000000000000000000000", quoteDecimals: 18 })
      const events: Array<ChainEvent> = [launched.created(), other.created(), hm.created()]
      events.push(...other.buy(WHALE, SOL), ...other.buy("someone", SOL), other.sell(WHALE, 1_000_000n), ...launched.buy("someone", SOL))
      events.push(...hm.buy(HOOD_WALLET, ETH / 100n), ...hm.buy("0x0000000000000000000000000000000000000001", ETH / 100n))
      yield* publishEvents(bus, events)
      yield* committedToEnd

      const whaleTrades = tradeIds(events, WHALE)
      const hoodTrades = tradeIds(events, HOOD_WALLET)
      expect(whaleTrades).toHaveLength(2)
      const launchedId = keyedEventId(`tracked_wallet.launched:solana:${launched.mint}`)
      const expectedA = [...whaleTrades, ...hoodTrades, launchedId].sort()
      const expectedB = [...whaleTrades, launchedId].sort()
      const rowsA = yield* rowsOf(a.id)
      expect(rowsA.map((r) => r.id)).toEqual(expectedA)
      expect((yield* rowsOf(b.id)).map((r) => r.id)).toEqual(expectedB)
      // Its own wallet's trades never reach acct_watch_own; the wallet's launch does.
      expect((yield* rowsOf(own.id)).map((r) => r.id)).toEqual([launchedId])
      expect(yield* rowsOf(idle.id)).toEqual([])

      // The spec payloads.
      const buy = events.find((e) => e._tag === "Trade" && e.trader === WHALE && e.side === "buy") as Extract<ChainEvent, { _tag: "Trade" }>
      expect(rowsA.find((r) => r.id === keyedEventId(`tracked_wallet.traded:${buy.id}`))).toEqual({
        id: keyedEventId(`tracked_wallet.traded:${buy.id}`),
        event: "tracked_wallet.traded",
        // 1 SOL crossed the curve (fee included) at $150.
        data: {
          chain: "solana",
          wallet: WHALE,
          label: "whale",
          side: "buy",
          signature: buy.signature,
          tokenMint: other.mint,
          tokenSymbol: "OTH",
          usdAmount: "150",
          at: new Date(buy.timestampMs).toISOString()
        }
      })
      const hoodBuy = events.find((e) => e._tag === "Trade" && e.trader === HOOD_WALLET) as Extract<ChainEvent, { _tag: "Trade" }>
      expect(rowsA.find((r) => r.id === hoodTrades[0])?.data).toEqual({
        chain: "hood",
        wallet: HOOD_WALLET,
        side: "buy",
        signature: hoodBuy.signature,
        tokenMint: hm.mint,
        tokenSymbol: "HTK",
        at: new Date(hoodBuy.timestampMs).toISOString()
      })
      const created = events[0] as Extract<ChainEvent, { _tag: "CurveCreated" }>
      expect(rowsA.find((r) => r.id === launchedId)).toEqual({
        id: launchedId,
        event: "tracked_wallet.launched",
        data: { chain: "solana", wallet: WHALE, label: "whale", mint: launched.mint, symbol: "WHL", at: new Date(created.timestampMs).toISOString() }
      })
      expect((yield* rowsOf(b.id)).find((r) => r.id === launchedId)?.data).not.toHaveProperty("label")

      // A restart that replays the bus from offset 0: nothing is recorded twice.
      yield* first.close
      for (let p = 0; p < PARTITIONS; p++) yield* bus.commit(TRACKED_WALLETS_GROUP, Topics.chainEvents, p, 0)
      const second = yield* openRunner
      yield* committedToEnd
      expect(second.runner.stats().notices).toBeGreaterThan(0)
      expect((yield* rowsOf(a.id)).map((r) => r.id)).toEqual(expectedA)
      expect((yield* rowsOf(b.id)).map((r) => r.id)).toEqual(expectedB)

      // Partitions move: a second member joins, more trades, it leaves, more trades.
      const third = yield* openRunner
      const more: Array<ChainEvent> = []
      for (let i = 0; i < 6; i++) more.push(...other.buy(WHALE, SOL / 10n), ...launched.buy(WHALE, SOL / 10n))
      yield* publishEvents(bus, more)
      yield* committedToEnd
      yield* third.close
      const last: Array<ChainEvent> = []
      for (let i = 0; i < 4; i++) last.push(...other.buy(WHALE, SOL / 10n))
      yield* publishEvents(bus, last)
      yield* committedToEnd
      yield* second.close
      const allWhale = tradeIds([...events, ...more, ...last], WHALE)
      expect(allWhale).toHaveLength(2 + 12 + 4)
      expect((yield* rowsOf(b.id)).map((r) => r.id)).toEqual([...allWhale, launchedId].sort())
      expect((yield* rowsOf(own.id)).map((r) => r.id)).toEqual([launchedId])
    })
  )

  it.scoped("the watchlist is reloaded only when an add or a remove changed it (its change count), not on every pass", () =>
    Effect.gen(function* () {
      const store = makePersonalStore(yield* sqlOf)
      const runner = yield* openRunner
      const before = runner.runner.stats()
      yield* runner.runner.refresh
      yield* runner.runner.refresh
      expect(runner.runner.stats().reloads).toBe(before.reloads)
      const added = yield* store.addWatch("acct_watch_version", "solana", "VersionWa11et111111111111111111111111111111", null)
      yield* runner.runner.refresh
      expect(runner.runner.stats()).toMatchObject({ reloads: before.reloads + 1, entries: before.entries + 1 })
      // Adding the same wallet again changes nothing, so nothing reloads.
      yield* store.addWatch("acct_watch_version", "solana", "VersionWa11et111111111111111111111111111111", null)
      yield* runner.runner.refresh
      expect(runner.runner.stats().reloads).toBe(before.reloads + 1)
      yield* store.removeWatch("acct_watch_version", added.entry.id)
      yield* runner.runner.refresh
      expect(runner.runner.stats()).toMatchObject({ reloads: before.reloads + 2, entries: before.entries })
      // Removing it again is refused and changes nothing.
      expect(Exit.isFailure(yield* Effect.exit(store.removeWatch("acct_watch_version", added.entry.id)))).toBe(true)
      yield* runner.runner.refresh
      expect(runner.runner.stats().reloads).toBe(before.reloads + 2)
      yield* runner.close
    })
  )
})
