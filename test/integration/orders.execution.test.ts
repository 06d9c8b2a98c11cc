/**
 * Limit orders executed through the trade rail (issue 29), end to end on real parts: the Solana
 * localnet (RPC and Geyser), the Yellowstone ingester onto the embedded bus, the market actors with
 * the orders' trigger runtime, the execution hand-off, the order executor on the attempt runner
 * with row leases, the trade service over the embedded wallet, PGlite and the webhook outbox.
 * - a crossing sell on chain triggers a stop sell and a limit buy; each ends `executed` with a real
 *   trade `order:<id>` whose amounts are the wallet's balance changes on chain, and one
 *   `trade.executed`; a cancelled and an expired order on the same level never execute;
 * - a refused execution (the wallet cannot pay) ends `failed` with the rail's reason, once: more
 *   passes and submits change nothing and record no trade;
 * - a `triggered` row a dead process left (before the hand-off, or after its trade executed but
 *   before the order settled, its lease ended) is executed once by two executors' concurrent
 *   recovery passes, run twice: one trade, the balance moved once, the dead process's trade kept;
 * - an order whose account left Max, or whose key was revoked, fails once (`tier_required`,
 *   `key_revoked`) without calling the rail.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Address, address } from "@solana/kit"
import { Context, Effect, Exit, Layer, Option, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as MarketActors from "../../actors/MarketActors.js"
import { currentPrice } from "../../actors/orders/OrderBooks.js"
import { formatPriceE18, type Price } from "../../actors/orders/OrderBook.js"
import { getBuyInstruction, getSellInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf, expectOk, launchCurve, send, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { SVC_CURVE_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { SolanaIngester } from "../../ingest/solana/SolanaIngester.js"
import { resolvePlans } from "../../src/domain/Plans.js"
import * as AccountWallets from "../../src/services/accounts/AccountWallets.js"
import * as BalanceReader from "../../src/services/accounts/BalanceReader.js"
import { DefaultTierThresholds } from "../../src/services/accounts/Tier.js"
import * as TierService from "../../src/services/accounts/TierService.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { fixedPriceSource, PriceSource } from "../../src/services/prices/PriceSource.js"
import { makeRowLeases } from "../../src/db/RowLease.js"
import * as OrderHandoff from "../../src/services/orders/OrderHandoff.js"
import { makeOrderExecutor, type OrderCallers, orderCallers, type OrderExecutorShape } from "../../src/services/orders/OrderExecutor.js"
import { viewOf } from "../../src/services/orders/OrderService.js"
import { cancelOrder, createOrder, type NewOrder, orderById, type OrderRow, orderTradeId } from "../../src/services/orders/OrderStore.js"
import { type OrderHooks, orderTriggerHooks } from "../../src/services/orders/OrderTriggers.js"
import { make as makeTrades, type TradeServiceShape } from "../../src/services/trade/TradeService.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { eventually } from "../support/eventually.js"
import { startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { swapKey } from "../support/tradeRows.js"

const SOL = 1_000_000_000n
const E18 = 10n ** 18n
const ACCOUNT = "acct-orders-exec"
const KEY = "key-orders-exec"

let harness: WalletHarness
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
let ledger: Ledger
let wallet: Address
let mint: Address
let trades: TradeServiceShape
let hooks: OrderHooks
let actors: MarketActors.MarketActorsShape
let executor: OrderExecutorShape
let callers: OrderCallers
let busDir: string

const sqlRun = <A>(e: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, harness.sql) as Effect.Effect<A>)
const read = async (id: string): Promise<OrderRow> => (await sqlRun(orderById(id)))!
const tradeRows = (clientTradeId: string, accountId = ACCOUNT) =>
  sqlRun(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ state: string; signature: string; amount_out_raw: string | null; amount_in_raw: string }>`
        SELECT state, signature, amount_out_raw, amount_in_raw FROM agent_trades WHERE account_id = ${accountId} AND client_trade_id = ${clientTradeId}`
    )
  )
const executedEvents = (clientTradeId: string) =>
  sqlRun(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ data: unknown }>`SELECT data FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'trade.executed'`
    )
  ).then((rows) => rows.map((r) => (typeof r.data === "string" ? JSON.parse(r.data) : r.data) as Record<string, unknown>).filter((d) => d.clientTradeId === clientTradeId))

const walletTokens = () => tokenBalance(ledger, ataOf(wallet, mint))
const priceNow = () => currentPrice(actors.state("solana", mint))
const scaled = (p: Price, num: bigint, den: bigint): bigint => (p.num * E18 * num) / (p.den * den)

const order = (o: Partial<NewOrder> & Pick<NewOrder, "id" | "afterPosition">): NewOrder => ({
  accountId: ACCOUNT,
  clientOrderId: o.id,
  keyId: KEY,
  requestHash: "h",
  chain: "solana",
  mint,
  side: "sell",
  trigger: "stop",
  amountRaw: 1_000n,
  level: null,
  trailBps: null,
  watermark: null,
  slippageBps: 300,
  payer: "main",
  expiresAtMs: null,
  ...o
})

/** A trader's sell or buy on chain (not through the rail): what moves the market under the orders. */
const traderTrade = async (side: "buy" | "sell", amountInRaw: bigint) => {
  const trader = await devSigner(1)
  const ix =
    side === "buy"
      ? [
          getCreateAssociatedTokenInstruction({ payer: trader, ata: ataOf(trader.address, mint), owner: trader.address, mint }),
          await getBuyInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw, minAmountOutRaw: 0n })
        ]
      : [await getSellInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw, minAmountOutRaw: 0n })]
  return expectOk(ledger, await send(ledger, trader, ix))
}

beforeAll(async () => {
  harness = await startWalletHarness()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true }), scope)), SolanaLocalnet)
  ledger = net.ledger
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  await sqlRun(
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'ORDEREXEC')`
      yield* sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
        VALUES ('wh-orders-exec', ${ACCOUNT}, 'https://example.com/hook', '["trade.executed"]'::jsonb, 'x', 'x', 'active', now())`
      yield* insertKey(
        swapKey({ id: KEY, prefix: "ordexec", accountId: ACCOUNT, hash: "x", rateLimitPerMin: 600 }),
        Date.now()
      )
    })
  )
  const embedded = await Effect.runPromise(harness.provider.ensureEmbeddedWallet(ACCOUNT, "solana"))
  await Effect.runPromise(harness.provider.setDelegation(ACCOUNT, "solana", "active"))
  wallet = address(embedded.address)
  ledger.requestAirdrop(wallet, 50n * SOL)
  const creator = await devSigner(0)
  const c = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 400n * SOL })
  mint = c.mint.address

  trades = await Effect.runPromise(
    makeTrades({ solanaRpcUrl: net.rpcUrl, treasury: TREASURY_ADDRESS, pollIntervalMs: 20, confirmTimeoutMs: 15_000 }).pipe(
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(SqlClient.SqlClient, harness.sql),
      Effect.provideService(PriceSource, fixedPriceSource({ sol: "150" }))
    )
  )
  const tiers = Context.get(
    await Effect.runPromise(
      Layer.buildWithScope(
        TierService.layer({ plans: resolvePlans({}, 30), thresholds: DefaultTierThresholds, renewalUrl: "https://example.com/renew" }).pipe(
          Layer.provide(Layer.mergeAll(AccountWallets.layerTest({}), BalanceReader.layerTest({}), Layer.succeed(SqlClient.SqlClient, harness.sql)))
        ),
        scope
      )
    ),
    TierService.TierService
  )

  // The chain → bus → actors pipeline, and this "process's" executor fed by the actors' hand-off.
  busDir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-orders-exec-"))
  // Built in the suite's scope (a layer provided to one effect would close the bus when it returns).
  const infra = await Effect.runPromise(
    Layer.buildWithScope(Layer.merge(EmbeddedBus.layer({ dir: busDir, partitions: 2, fsync: false }).pipe(Layer.orDie), Layer.succeed(SqlClient.SqlClient, harness.sql)), scope)
  )
  const handoff = Context.get(await Effect.runPromise(Layer.buildWithScope(OrderHandoff.layer(), scope)), OrderHandoff.OrderHandoff)
  const built = await Effect.runPromise(
    Effect.gen(function* () {
      const ingester = SolanaIngester.layer({
        grpcUrl: net.grpcUrl,
        programId: SVC_CURVE_PROGRAM_ID,
        commitment: "confirmed",
        seed: 7,
        backoff: { initialMs: 10, maxMs: 200 },
        idleTimeoutMs: 3_000,
        source: "solana:yellowstone:orders-exec"
      })
      yield* Layer.buildWithScope(ingester, scope)
      let h: OrderHooks | undefined
      const orders = (sql: SqlClient.SqlClient, state: Parameters<ReturnType<typeof orderTriggerHooks>>[1], hurry: () => void) =>
        Effect.tap(orderTriggerHooks({ syncIntervalMs: 10, execution: OrderHandoff.handoffExecution(handoff) })(sql, state, hurry), (x) => Effect.sync(() => (h = x)))
      const made = yield* MarketActors.make({ shards: 2, orders, checkpointIntervalMs: 50 }).pipe(Scope.extend(scope))
      return { actors: made.actors, hooks: h! }
    }).pipe(Effect.provide(infra))
  )
  actors = built.actors
  hooks = built.hooks
  callers = orderCallers(harness.sql, tiers)
  executor = makeOrderExecutor({ sql: harness.sql, trades, callers }, { recoverIntervalMs: 200 })
  await Effect.runPromise(executor.run(Option.some(handoff)).pipe(Scope.extend(scope)))
}, 120_000)

afterAll(async () => {
  clearInterval(ticker)
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await harness?.close()
  if (busDir !== undefined) await fs.rm(busDir, { recursive: true, force: true })
})

describe("limit orders executed through the trade rail", () => {
  it("a crossing sell on chain executes a stop sell and a limit buy as real trades once; cancelled and expired orders never execute; a refused one fails once", async () => {
    // The market moves up, and the account buys tokens to sell later (a trade of its own on the rail).
    await traderTrade("buy", 20n * SOL)
    const setup = await Effect.runPromise(
      Effect.either(trades.submit({ accountId: ACCOUNT, keyId: KEY, keyPrefix: "ordexec", embeddedWallet: "allowed", planFeeBps: 0n, referred: false }, {
        clientTradeId: "setup-buy",
        chain: "solana",
        mint,
        side: "buy",
        amountInRaw: 2n * SOL,
        slippageBps: 100,
        payer: "main"
      }, false))
    )
    expect(setup._tag).toBe("Right")
    // The actors have seen both trades: the price the orders are placed at.
    const held = walletTokens()
    expect(held).toBeGreaterThan(0n)
    const now = await eventually(
      async () => {
        const p = priceNow()
        return p !== undefined && (await tradeRows("setup-buy"))[0]?.state === "executed" && p.atMs > 0 ? p : undefined
      },
      { what: "the actors to hold the market's price", deadlineMs: 30_000, intervalMs: 20 }
    )
    // Each placed against the position the actors applied last (the trigger counts later trades only).
    const at = now.position
    const level = formatPriceE18(scaled(now.price, 97n, 100n))
    const rows = [
      order({ id: "ord_stop", afterPosition: at, level, amountRaw: held / 2n }),
      order({ id: "ord_buy", afterPosition: at, level, side: "buy", trigger: "limit", amountRaw: SOL / 10n }),
      order({ id: "ord_cancelled", afterPosition: at, level, amountRaw: held / 4n }),
      order({ id: "ord_expired", afterPosition: at, level, amountRaw: held / 4n, expiresAtMs: Date.now() + 300 }),
      // More SOL than the wallet holds: the rail refuses it (insufficient_balance).
      order({ id: "ord_refused", afterPosition: at, level, side: "buy", trigger: "limit", amountRaw: 49n * SOL })
    ]
    for (const r of rows) expect((await sqlRun(createOrder(r, Date.now())))._tag).toBe("Created")
    expect((await sqlRun(cancelOrder(ACCOUNT, "ord_cancelled", Date.now())))._tag).toBe("Cancelled")
    await eventually(async () => ((await read("ord_expired")).status === "expired" ? true : undefined), { what: "ord_expired to expire", deadlineMs: 20_000, intervalMs: 20 })
    // Named, not counted: a follow read between the creates can leave three held too (ord_cancelled among them).
    const heldIds = () => {
      const book = hooks.books.book(`solana:${mint}`)
      return book === undefined ? [] : [...book.below, ...book.above, ...book.trailing].map((o) => o.id).sort()
    }
    await eventually(async () => (JSON.stringify(heldIds()) === JSON.stringify(["ord_buy", "ord_refused", "ord_stop"]) ? true : undefined), {
      what: "the books to hold the three open orders",
      deadlineMs: 20_000,
      intervalMs: 20,
      detail: () => `held: ${heldIds().join(", ")}`
    })

    // The crossing trade: a trader sells enough to take the price well below the level.
    const tokensBefore = walletTokens()
    const trader = await devSigner(1)
    await traderTrade("sell", tokenBalance(ledger, ataOf(trader.address, mint)) / 2n)
    const stop = await eventually(async () => {
      const r = await read("ord_stop")
      return r.status === "executed" ? r : undefined
    }, { what: "the stop sell to execute", deadlineMs: 60_000, intervalMs: 50 })
    const buy = await eventually(async () => {
      const r = await read("ord_buy")
      return r.status === "executed" ? r : undefined
    }, { what: "the limit buy to execute", deadlineMs: 60_000, intervalMs: 50 })
    const refusedRow = await eventually(async () => {
      const r = await read("ord_refused")
      return r.status === "failed" ? r : undefined
    }, { what: "the refused order to fail", deadlineMs: 60_000, intervalMs: 50 })

    // Real trades, named by the order, whose amounts are what moved on chain.
    for (const o of [stop, buy]) {
      expect(o.clientTradeId).toBe(orderTradeId(o.id))
      const t = await tradeRows(o.clientTradeId!)
      expect(t).toHaveLength(1)
      expect(t[0]).toMatchObject({ state: "executed", signature: o.tradeSignature, amount_out_raw: o.amountOutRaw!.toString(), amount_in_raw: o.amountRaw.toString() })
      expect(await executedEvents(o.clientTradeId!)).toHaveLength(1)
      expect(o.triggeredAtMs).not.toBeNull()
      expect(o.settledAtMs).not.toBeNull()
    }
    expect(walletTokens() - tokensBefore).toBe(buy.amountOutRaw! - stop.amountRaw)
    // What the order routes answer of it.
    expect(viewOf(stop, Date.now())).toMatchObject({
      status: "executed",
      clientTradeId: `order:${stop.id}`,
      tradeSignature: stop.tradeSignature,
      amountOut: stop.amountOutRaw!.toString(),
      settledAt: new Date(stop.settledAtMs!).toISOString(),
      failureReason: null
    })

    // Refused once, with the rail's reason; no trade recorded.
    expect(refusedRow.failureReason).toBe("insufficient_balance")
    expect(viewOf(refusedRow, Date.now())).toMatchObject({ status: "failed", failureReason: "insufficient_balance", tradeSignature: null, amountOut: null })
    expect(await tradeRows(orderTradeId("ord_refused"))).toHaveLength(0)
    // More passes and direct submits change nothing on a settled order.
    await Effect.runPromise(executor.recover)
    for (const id of ["ord_stop", "ord_refused"]) expect(await Effect.runPromise(executor.execute(id))).toBe(false)
    expect(await read("ord_refused")).toEqual(refusedRow)
    expect(await read("ord_stop")).toEqual(stop)

    // Cancelled and expired orders never triggered and never traded.
    for (const id of ["ord_cancelled", "ord_expired"]) {
      const r = await read(id)
      expect(r.status).toBe(id === "ord_cancelled" ? "cancelled" : "expired")
      expect(r.triggeredAtMs).toBeNull()
      expect(await tradeRows(orderTradeId(id))).toHaveLength(0)
    }
  }, 180_000)

  it("a triggered row a dead process left executes once under two executors' concurrent passes, run twice", async () => {
    const sql = harness.sql
    /** A row as a dead process left it: committed `triggered`, never handed off (or its trade done, the order not settled). */
    const leftTriggered = async (id: string, amountRaw: bigint) => {
      await sqlRun(createOrder(order({ id, afterPosition: "z", side: "buy", trigger: "limit", level: "1", amountRaw }), Date.now()))
      await sqlRun(
        Effect.flatMap(
          SqlClient.SqlClient,
          (s) => s`UPDATE limit_orders SET status = 'triggered', triggered_at = now(), trigger_price = '1', trigger_position = 'z', client_trade_id = ${orderTradeId(id)} WHERE id = ${id}`
        )
      )
    }
    // One process died after its order's trade executed and before the order settled, holding the
    // order's lease (ended now: its owner stopped renewing). Its trade, as it made it:
    const caller = { accountId: ACCOUNT, keyId: KEY, keyPrefix: "ordexec", embeddedWallet: "allowed" as const, planFeeBps: 25n, referred: false }
    const first = await Effect.runPromise(
      trades.submit(caller, { clientTradeId: orderTradeId("ord_dead_traded"), chain: "solana", mint, side: "buy", amountInRaw: SOL / 25n, slippageBps: 300, payer: "main" }, false)
    )
    if (!("signature" in first)) throw new Error("the dead process's trade did not settle")
    await sqlRun(
      Effect.flatMap(
        SqlClient.SqlClient,
        (s) => s`INSERT INTO row_leases (kind, key, owner, expires_at) VALUES ('limit_order', 'ord_dead_traded', 'dead-host/1/x', now() - interval '1 second')`
      )
    )
    await leftTriggered("ord_dead_traded", SOL / 25n)
    const tokensBefore = walletTokens()
    // Another died before its hand-off: committed `triggered`, never submitted.
    await leftTriggered("ord_dead", SOL / 20n)

    // Two more "processes" (own lease owners), each passing twice, concurrently with this one's loop.
    const others = [0, 1].map(() => makeOrderExecutor({ sql, trades, callers, leases: makeRowLeases(sql) }))
    await Promise.all(others.flatMap((e) => [Effect.runPromise(e.recover), Effect.runPromise(e.recover)]))
    const dead = await eventually(async () => {
      const r = await read("ord_dead")
      return r.status === "executed" ? r : undefined
    }, { what: "the dead process's order to execute", deadlineMs: 60_000, intervalMs: 50 })
    const traded = await eventually(async () => {
      const r = await read("ord_dead_traded")
      return r.status === "executed" ? r : undefined
    }, { what: "the traded order to settle", deadlineMs: 60_000, intervalMs: 50 })
    await Promise.all(others.flatMap((e) => [Effect.runPromise(e.recover), Effect.runPromise(e.execute("ord_dead"))]))

    expect(await tradeRows(orderTradeId("ord_dead"))).toHaveLength(1)
    const t = await tradeRows(orderTradeId("ord_dead_traded"))
    expect(t).toHaveLength(1)
    // Settled from the trade the dead process made: nothing sent again.
    expect(traded.tradeSignature).toBe(first.signature)
    expect(traded.amountOutRaw!.toString()).toBe(first.amountOut)
    expect(t[0]!.signature).toBe(traded.tradeSignature)
    // Only ord_dead's trade moved tokens after the dead process's trade.
    expect(walletTokens() - tokensBefore).toBe(dead.amountOutRaw!)
    expect(await executedEvents(orderTradeId("ord_dead"))).toHaveLength(1)
    expect(await executedEvents(orderTradeId("ord_dead_traded"))).toHaveLength(1)
  }, 180_000)

  it("an order whose account left Max, or whose key was revoked, fails once before the rail is called", async () => {
    const key = (id: string, accountId: string, prefix: string) =>
      insertKey(
        swapKey({ id, prefix, accountId, hash: "x", rateLimitPerMin: 600 }),
        Date.now()
      )
    await sqlRun(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO accounts (id, plan, referral_code) VALUES ('acct-orders-free', 'free', 'ORDERFREE')`
        yield* key("key-orders-free", "acct-orders-free", "ordfree")
        yield* key("key-orders-revoked", ACCOUNT, "ordrevk")
        yield* sql`UPDATE agent_keys SET revoked_at = now() WHERE id = 'key-orders-revoked'`
      })
    )
    const cases = [
      { id: "ord_free", accountId: "acct-orders-free", keyId: "key-orders-free", reason: "tier_required" },
      { id: "ord_revoked", accountId: ACCOUNT, keyId: "key-orders-revoked", reason: "key_revoked" }
    ]
    for (const c of cases) {
      await sqlRun(createOrder(order({ id: c.id, accountId: c.accountId, keyId: c.keyId, afterPosition: "z", level: "1" }), Date.now()))
      await sqlRun(
        Effect.flatMap(
          SqlClient.SqlClient,
          (s) => s`UPDATE limit_orders SET status = 'triggered', triggered_at = now(), client_trade_id = ${orderTradeId(c.id)} WHERE id = ${c.id}`
        )
      )
    }
    for (const c of cases) {
      const failed = await eventually(async () => {
        const r = await read(c.id)
        return r.status === "failed" ? r : undefined
      }, { what: `${c.id} to fail`, deadlineMs: 30_000, intervalMs: 50 })
      expect(failed.failureReason).toBe(c.reason)
      expect(await tradeRows(orderTradeId(c.id), c.accountId)).toHaveLength(0)
      await Effect.runPromise(executor.recover)
      expect(await read(c.id)).toEqual(failed)
    }
  }, 120_000)
})
