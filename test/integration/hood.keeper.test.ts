/**
 * The Hood migration keeper against the real Hood localnet and the real pipeline: the keeper
 * (MigrationKeeper + HoodMigrationExecutor, keeper account #1 over JSON-RPC) finds completed
 * curves in the MarketIndex, sends `migrate()` / `cancelMigration()` as real transactions and
 * publishes MigrationProgress to the embedded bus, which the market actors apply. The real Hood
 * ingester turns the contracts' logs into ChainEvents on the same bus.
 *
 * Migration status on Hood and the test covering each transition:
 *
 *   not_started ──keeper attempt──▶ in_progress ──CurveMigrated──▶ completed (lifecycle migrated)
 *                                     │  "migrates a completed curve into Uniswap v3"
 *                                     ├─failure, budget left──▶ in_progress (lastError, nextAttemptAt)
 *                                     │  "retries a blocked migration with backoff, then cancels"
 *                                     ├─budget spent, chain keeps refusing──▶ cancelled (lifecycle recovery)
 *                                     │  "retries a blocked migration with backoff, then cancels"
 *                                     └─budget spent, transient failures──▶ delayed
 *                                        "a node that keeps failing ends delayed, never cancelled"
 *   default policy bound: "a completed curve is live within 10 minutes under the default policy"
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, type PublicClient, zeroAddress } from "viem"
import * as MarketActors from "../../actors/MarketActors.js"
import { marketEventHooks } from "../../src/services/webhooks/MarketEvents.js"
import { MarketIndex, type MarketIndexShape } from "../../actors/MarketIndex.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { busKey, type ChainEvent, hoodPosition, type MigrationProgress } from "../../ingest/ChainEvent.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { HoodIngester } from "../../ingest/hood/HoodIngester.js"
import { nonfungiblePositionManagerAbi } from "../../src/chain/hood/abi.generated.js"
import { buy, createCurve, type HoodClients, readCurve, saltOf } from "../../src/chain/hood/client/HoodClient.js"
import { GRADUATED_POOL_FEE } from "../../src/chain/hood/localnet/Deploy.js"
import { clientsFor, publicClientOf, startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import * as Database from "../../src/db/Database.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { hoodMigrationExecutor, nextKeeperPosition } from "../../src/services/keeper/HoodMigrationExecutor.js"
import { backoffMs, DefaultKeeperPolicy, type KeeperPolicyOptions, worstCaseLastAttemptMs } from "../../src/services/keeper/KeeperPolicy.js"
import { type MigrationExecutor, runMigrationKeeper } from "../../src/services/keeper/MigrationKeeper.js"
import { eventually } from "../support/eventually.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"

/**
 * An account that launched `token` here, with an endpoint subscribed to the market events; its
 * outbox rows are read back (the delivery itself is covered by webhooks.marketEvents.test.ts).
 */
const launchedHere = async (accountId: string, token: Address) => {
  const service = await Effect.runPromise(Effect.provideService(WebhookService.make({ masterKey: new Uint8Array(32).fill(5), allowLoopbackForTests: true }), SqlClient.SqlClient, sql))
  const endpoint = await Effect.runPromise(
    service.create({ accountId, testAccount: true }, { url: "http://127.0.0.1:9/hook", events: ["curve.graduated", "migration.completed", "migration.delayed"] })
  )
  await Effect.runPromise(sql`
    INSERT INTO launched_tokens (chain, mint, account_id, key_id, client_launch_id, path, visibility, attributed_at, confirmed_at)
    VALUES ('hood', ${token.toLowerCase()}, ${accountId}, NULL, ${`L-${token}`}, 'headless', 'production', now(), now())`)
  return (events: number) =>
    eventually(async () => {
      const rows = await Effect.runPromise(sql<{ event: string; data: unknown }>`SELECT event, data FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id} ORDER BY event`)
      return rows.length >= events ? rows.map((r) => ({ event: r.event, data: typeof r.data === "string" ? JSON.parse(r.data) : r.data })) : undefined
    }, { what: `${events} market events in the outbox`, deadlineMs: 20_000, intervalMs: 20 })
}

const ethTier = findEconomics("hood", "eth")!.tiers[0]!
const FAST: KeeperPolicyOptions = { sweepIntervalMs: 250, maxAttempts: 3, backoffBaseMs: 300, backoffMaxMs: 600 }

let net: StartedHoodLocalnet
let pc: PublicClient
let keeper: HoodClients
let traders: ReadonlyArray<HoodClients>
let scope: Scope.CloseableScope
let index: MarketIndexShape
let publishEvents: (events: ReadonlyArray<ChainEvent>) => Effect.Effect<void, unknown>
let sql: SqlClient.SqlClient
const published: MigrationProgress[] = []

const startKeeper = (executor: MigrationExecutor, policy: KeeperPolicyOptions) =>
  Effect.runFork(
    runMigrationKeeper({
      candidates: () => index.markets(),
      executors: [executor],
      publish: (events) =>
        Effect.sync(() => published.push(...events)).pipe(Effect.zipRight(publishEvents(events))),
      policy
    })
  )

const completedEthCurve = async (label: string, before?: (token: Address) => Promise<void>) => {
  const created = await createCurve(traders[0]!, net.addresses.factory, {
    name: label,
    symbol: label.slice(0, 6).toUpperCase(),
    quoteToken: zeroAddress,
    virtualQuoteRaw: ethTier.virtualQuoteRaw,
    thresholdRaw: ethTier.thresholdRaw,
    dexVersion: "v3",
    salt: saltOf(label)
  })
  if (before !== undefined) await before(created.token)
  const bought = await buy(traders[1]!, created.curve, { amountInRaw: ethTier.thresholdRaw * 2n, quoteToken: zeroAddress })
  expect(bought.completed).toBeDefined()
  expect(bought.trade.refund).toBeGreaterThan(0n)
  return { curve: created.curve, token: created.token, mint: created.token.toLowerCase() }
}

beforeAll(async () => {
  net = await startHoodLocalnet()
  pc = publicClientOf(net)
  keeper = clientsFor(net, net.roles.keeper)
  traders = net.roles.traders.map((t) => clientsFor(net, t))
  scope = await Effect.runPromise(Scope.make())
  const layer = Layer.merge(
    MarketActors.layer({ shards: 2, checkpointIntervalMs: 20, announcements: marketEventHooks }),
    HoodIngester.layer({ rpcUrl: net.rpcUrl, factory: net.addresses.factory, feeSplitter: net.addresses.feeSplitter, pollIntervalMs: 20 })
  ).pipe(Layer.provideMerge(Layer.mergeAll(EmbeddedBus.layer({ dir: undefined, partitions: 4 }), Database.layerTest)))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  index = context.unsafeMap.get(MarketIndex.key) as MarketIndexShape
  const bus = context.unsafeMap.get(Bus.key) as Bus["Type"]
  sql = context.unsafeMap.get(SqlClient.SqlClient.key) as SqlClient.SqlClient
  publishEvents = (events) => Effect.asVoid(bus.publish(Topics.chainEvents, events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))))
}, 120_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (net !== undefined) await net.close()
})

describe("Hood migration keeper", () => {
  it("a completed curve is live within 10 minutes under the default policy", () => {
    // Sweep (2 min) then four backoffs (15 s, 30 s, 60 s, 120 s): the last automated attempt comes
    // 345 s after completion at the latest; a migrate lands in the block it is sent in.
    expect(worstCaseLastAttemptMs(DefaultKeeperPolicy)).toBe(345_000)
    expect(worstCaseLastAttemptMs(DefaultKeeperPolicy)).toBeLessThan(600_000)
  })

  it("orders keeper positions after the market's last event and strictly within a block", () => {
    expect(nextKeeperPosition(hoodPosition(42n, 7))).toBe("h:00000000000000000042:999999:0001")
    expect(nextKeeperPosition("h:00000000000000000042:999999:0001")).toBe("h:00000000000000000042:999999:0002")
    expect(nextKeeperPosition(hoodPosition(42n, 7)) > hoodPosition(42n, 7)).toBe(true)
    expect(nextKeeperPosition(hoodPosition(42n, 7)) < hoodPosition(43n, 0)).toBe(true)
  })

  it("migrates a completed curve into Uniswap v3 with one real transaction", async () => {
    published.length = 0
    const m = await completedEthCurve("keeper-ok")
    await eventually(() => (index.market("hood", m.mint)?.lifecycle === "completed" ? true : undefined), { what: "market completed", deadlineMs: 20_000, intervalMs: 20 })
    const fiber = startKeeper(hoodMigrationExecutor({ clients: keeper }), FAST)
    try {
      const core = await eventually(() => {
        const c = index.market("hood", m.mint)
        return c?.lifecycle === "migrated" ? c : undefined
      }, { what: "market migrated", deadlineMs: 20_000, intervalMs: 20 })
      expect(core.migration.status).toBe("completed")
      expect(core.migration.attempts).toBe(1)
      const onChain = await readCurve(pc, m.curve)
      expect(onChain.phase).toBe("migrated")
      expect(onChain.pool).not.toBeNull()
      const mine = published.filter((p) => p.mint === m.mint)
      expect(mine[0]).toMatchObject({ status: "in_progress", attempts: 1, lastError: null, gaveUpAtMs: null })
      expect(mine[0]!.nextAttemptAtMs! - mine[0]!.timestampMs).toBe(backoffMs(FAST, 1))
      // The announcement sorts after the completion and before the migration it announced.
      const record = JSON.parse(index.get("hood", m.mint)!.json)
      expect(record.lifecycle).toBe("migrated")
      expect(record.migration.status).toBe("completed")
      expect(record.poolAddress).toBeNull()
    } finally {
      await Effect.runPromise(Fiber.interrupt(fiber))
    }
  }, 60_000)

  it("retries a blocked migration with backoff, then cancels: the curve enters recovery", async () => {
    published.length = 0
    // Someone opens the v3 pool at a wrong price first (as in the contracts test): migrate reverts PoolPriceMismatch.
    const sabotage = async (token: Address) => {
      const weth = net.addresses.weth9
      const [token0, token1] = token.toLowerCase() < weth.toLowerCase() ? [token, weth] : [weth, token]
      const griefer = traders[3]!
      const hash = await griefer.wallet.writeContract({
        address: net.addresses.positionManager,
        abi: nonfungiblePositionManagerAbi,
        functionName: "createAndInitializePoolIfNecessary",
        args: [token0, token1, GRADUATED_POOL_FEE, 2n ** 96n]
      })
      expect((await pc.waitForTransactionReceipt({ hash })).status).toBe("success")
    }
    const m = await completedEthCurve("keeper-blocked", sabotage)
    await eventually(() => (index.market("hood", m.mint)?.lifecycle === "completed" ? true : undefined), { what: "market completed", deadlineMs: 20_000, intervalMs: 20 })
    const fiber = startKeeper(hoodMigrationExecutor({ clients: keeper }), FAST)
    try {
      const core = await eventually(() => {
        const c = index.market("hood", m.mint)
        return c?.lifecycle === "recovery" ? c : undefined
      }, { what: "market in recovery", deadlineMs: 20_000, intervalMs: 20 })
      expect(core.migration).toMatchObject({ status: "cancelled", attempts: FAST.maxAttempts, nextAttemptAtMs: null, lastError: "PoolPriceMismatch" })
      expect(core.migration.gaveUpAtMs).not.toBeNull()
      expect((await readCurve(pc, m.curve)).phase).toBe("recovery")

      const mine = published.filter((p) => p.mint === m.mint)
      expect(mine.map((p) => [p.status, p.attempts, p.lastError])).toEqual([
        ["in_progress", 1, null],
        ["in_progress", 1, "PoolPriceMismatch"],
        ["in_progress", 2, null],
        ["in_progress", 2, "PoolPriceMismatch"],
        ["in_progress", 3, null],
        ["cancelled", 3, "PoolPriceMismatch"]
      ])
      // Backoff: after the n-th failure the next attempt is announced backoffMs(n) later, and comes no earlier.
      expect(mine[1]!.nextAttemptAtMs! - mine[1]!.timestampMs).toBe(backoffMs(FAST, 1))
      expect(mine[3]!.nextAttemptAtMs! - mine[3]!.timestampMs).toBe(backoffMs(FAST, 2))
      expect(mine[2]!.timestampMs).toBeGreaterThanOrEqual(mine[1]!.nextAttemptAtMs!)
      expect(mine[4]!.timestampMs).toBeGreaterThanOrEqual(mine[3]!.nextAttemptAtMs!)
      expect(mine[4]!.nextAttemptAtMs).toBeNull() // the last attempt announces no next one
      expect(mine[5]!.gaveUpAtMs).toBeGreaterThanOrEqual(mine[4]!.timestampMs)
      const positions = mine.map((p) => p.position)
      expect([...positions].sort()).toEqual(positions)
      expect(new Set(positions).size).toBe(positions.length)

      const record = JSON.parse(index.get("hood", m.mint)!.json)
      expect(record).toMatchObject({ lifecycle: "recovery", buysOpen: false, sellsOpen: false })
      expect(record.migration).toMatchObject({ status: "cancelled", attempts: FAST.maxAttempts, nextAttemptAt: null })
      expect(typeof record.migration.gaveUpAt).toBe("string")
    } finally {
      await Effect.runPromise(Fiber.interrupt(fiber))
    }
  }, 60_000)

  it("a node that keeps failing ends delayed, never cancelled", async () => {
    published.length = 0
    const m = await completedEthCurve("keeper-down")
    await eventually(() => (index.market("hood", m.mint)?.lifecycle === "completed" ? true : undefined), { what: "market completed", deadlineMs: 20_000, intervalMs: 20 })
    // The same executor pointed at a port nobody listens on: every send fails before reaching a chain.
    const deadNet = { ...net, rpcUrl: "http://127.0.0.1:9", chain: { ...net.chain, rpcUrls: { default: { http: ["http://127.0.0.1:9"] } } } }
    const fiber = startKeeper(hoodMigrationExecutor({ clients: clientsFor(deadNet, net.roles.keeper) }), FAST)
    try {
      const core = await eventually(() => {
        const c = index.market("hood", m.mint)
        return c?.migration.status === "delayed" ? c : undefined
      }, { what: "market delayed", deadlineMs: 20_000, intervalMs: 20 })
      expect(core.lifecycle).toBe("completed")
      expect(core.migration.attempts).toBe(FAST.maxAttempts)
      expect(core.migration.gaveUpAtMs).not.toBeNull()
      expect(published.some((p) => p.status === "cancelled")).toBe(false)
      expect((await readCurve(pc, m.curve)).phase).toBe("completed")
      const record = JSON.parse(index.get("hood", m.mint)!.json)
      expect(record.migration).toMatchObject({ status: "delayed", attempts: FAST.maxAttempts })
      expect(record.trade.reason).toBe("migration_delayed")
    } finally {
      await Effect.runPromise(Fiber.interrupt(fiber))
    }
  }, 60_000)

  it("curve.graduated (graduation observed on the curve) and migration.completed (graduated venue seeded and trading) reach the launching account once, from the chain and the keeper", async () => {
    let outbox: ((events: number) => Promise<ReadonlyArray<{ event: string; data: Record<string, unknown> }>>) | undefined
    const m = await completedEthCurve("keeper-events", async (token) => {
      outbox = await launchedHere("acct_keeper_events", token)
    })
    const fiber = startKeeper(hoodMigrationExecutor({ clients: keeper }), FAST)
    try {
      const core = await eventually(() => {
        const c = index.market("hood", m.mint)
        return c?.lifecycle === "migrated" ? c : undefined
      }, { what: "market migrated", deadlineMs: 20_000, intervalMs: 20 })
      const rows = await outbox!(2)
      expect(rows).toEqual([
        { event: "curve.graduated", data: { chain: "hood", mint: m.mint, curve: core.identity.curveAddress } },
        { event: "migration.completed", data: { chain: "hood", mint: m.mint, pool: null, migratedAt: new Date(core.migration.migratedAtMs!).toISOString() } }
      ])
      expect(core.identity.curveAddress.toLowerCase()).toBe(m.curve.toLowerCase())
    } finally {
      await Effect.runPromise(Fiber.interrupt(fiber))
    }
  }, 60_000)

  it("migration.delayed (automated migration retries exhausted, Hood): once, with attempts and lastError, when the keeper gives up", async () => {
    let outbox: ((events: number) => Promise<ReadonlyArray<{ event: string; data: Record<string, unknown> }>>) | undefined
    const m = await completedEthCurve("keeper-delayed", async (token) => {
      outbox = await launchedHere("acct_keeper_delayed", token)
    })
    const deadNet = { ...net, rpcUrl: "http://127.0.0.1:9", chain: { ...net.chain, rpcUrls: { default: { http: ["http://127.0.0.1:9"] } } } }
    const fiber = startKeeper(hoodMigrationExecutor({ clients: clientsFor(deadNet, net.roles.keeper) }), FAST)
    try {
      const core = await eventually(() => {
        const c = index.market("hood", m.mint)
        return c?.migration.status === "delayed" ? c : undefined
      }, { what: "market delayed", deadlineMs: 20_000, intervalMs: 20 })
      const rows = await outbox!(2)
      expect(rows.map((r) => r.event)).toEqual(["curve.graduated", "migration.delayed"])
      expect(rows[1]!.data).toEqual({ chain: "hood", mint: m.mint, curve: core.identity.curveAddress, attempts: FAST.maxAttempts, lastError: core.migration.lastError })
      expect(typeof core.migration.lastError).toBe("string")
    } finally {
      await Effect.runPromise(Fiber.interrupt(fiber))
    }
  }, 60_000)
})
