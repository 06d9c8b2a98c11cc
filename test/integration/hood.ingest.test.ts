/**
 * Hood localnet (Hardhat/EDR over a real socket) → the Hood log ingester (viem) → the embedded bus
 * (temp directory) → a bus consumer, with the cursor and block window in PGlite:
 * - a curve created, bought, sold, crossed (capped refund), cancelled into recovery and claimed:
 *   every event once, in order, with `hood:<tx>:<logIndex>` ids and `hoodPosition` positions taken
 *   from the receipts, and the recovery figures equal to a read of the curve at the log's block;
 * - a migration: `CurveMigrated.pool` null, the real pool in `dexPool`; swaps in that pool after it
 *   are pool trades, and the pool is remembered across a restart;
 * - reorgs: a buy on a block that a revert then replaces by empty blocks is retracted; a buy
 *   replaced by another buy at the same height is retracted before the new one is published;
 * - a restart resumes from the stored cursor without republishing, and backfill in small ranges
 *   reads the same events as following;
 * - trades through the engine's trade router (curve buy and sell, a pool sell) are the wallet's,
 *   from the router's `RoutedTrade` in the same transaction, which is no event of its own.
 * Every wait is a polled receipt with a deadline.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Fiber, Layer, ManagedRuntime, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { type Address, numberToHex, type TransactionReceipt, zeroAddress } from "viem"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  approve,
  buy,
  cancelMigration,
  claimRecovery,
  createCurve,
  type HoodClients,
  migrate,
  readRecovery,
  saltOf,
  sell,
  swapExactIn
} from "../../src/chain/hood/client/HoodClient.js"
import { GRADUATED_POOL_FEE } from "../../src/chain/hood/localnet/Deploy.js"
import { tradeRouterAbi } from "../../src/chain/hood/abi.generated.js"
import { clientsFor, hoodTestClient, publicClientOf, reorg, revertTo, snapshot, startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import * as Database from "../../src/db/Database.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import * as EmbeddedBus from "../../ingest/bus/EmbeddedBus.js"
import { type ChainEvent, hoodPosition } from "../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { HoodIngester, type HoodIngesterOptions, type HoodIngesterStatus } from "../../ingest/hood/HoodIngester.js"
import { eventually } from "../support/eventually.js"
import { closeLoopback, listenLoopback } from "../support/loopbackHttp.js"

const ETH = 10n ** 18n

let net: StartedHoodLocalnet
let database: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
let sql: SqlClient.SqlClient
let worldCount = 0

beforeAll(async () => {
  net = await startHoodLocalnet()
  database = ManagedRuntime.make(Database.layerTest)
  sql = await database.runPromise(SqlClient.SqlClient)
}, 60_000)

afterAll(async () => {
  await database?.dispose()
  await net?.close()
})

const world = async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-hood-ingest-"))
  const source = `hood:test-${++worldCount}`
  const runtime = ManagedRuntime.make(
    Layer.merge(EmbeddedBus.layer({ dir, partitions: 4, fsync: false }).pipe(Layer.orDie), Layer.succeed(SqlClient.SqlClient, sql))
  )
  const received: Array<ChainEvent> = []
  const consumer = runtime.runFork(
    Effect.gen(function* () {
      const bus = yield* Bus
      yield* bus.subscribe({ group: "test", topic: Topics.chainEvents, fromBeginning: true }, (batch) =>
        Effect.sync(() => {
          for (const r of batch.records) {
            const d = decodeChainEvent(r.value)
            if (d._tag === "Left") throw new Error(d.left.message)
            received.push(d.right)
          }
        })
      )
      return yield* Effect.never
    }).pipe(Effect.scoped)
  )
  let scope: Scope.CloseableScope | undefined
  let ingester: Context.Tag.Service<HoodIngester> | undefined
  const start = async (options: Partial<HoodIngesterOptions> = {}) => {
    scope = await runtime.runPromise(Scope.make())
    const ctx = await runtime.runPromise(
      Layer.buildWithScope(
        HoodIngester.layer({
          rpcUrl: net.rpcUrl,
          factory: net.addresses.factory,
          feeSplitter: net.addresses.feeSplitter,
          pollIntervalMs: 10,
          source,
          ...options
        }),
        scope
      )
    )
    ingester = Context.get(ctx, HoodIngester)
  }
  const stop = async () => {
    if (scope !== undefined) await runtime.runPromise(Scope.close(scope, Exit.void))
    scope = undefined
  }
  const status = (): Promise<HoodIngesterStatus> => runtime.runPromise(ingester!.status)
  /**
   * Waits until the ingester has published through the node's current head AND this world's
   * consumer has received every record the topic then holds: the cursor moving only says the
   * records are on the bus, and a loaded machine can deliver them later than that.
   */
  const caughtUp = async () => {
    const head = await publicClientOf(net).getBlockNumber()
    await eventually(async () => ((await status()).cursorBlock ?? -1n) >= head || undefined, { what: `cursor at ${head}`, deadlineMs: 15_000, intervalMs: 5 })
    const ends = await runtime.runPromise(Effect.flatMap(Bus, (bus) => bus.endOffsets(Topics.chainEvents)))
    const onBus = [...ends.values()].reduce((sum, end) => sum + end, 0)
    await eventually(() => received.length >= onBus || undefined, { what: `the consumer at the bus's ${onBus} records`, deadlineMs: 15_000, intervalMs: 5 })
  }
  const dispose = async () => {
    await stop()
    await runtime.runPromise(Fiber.interrupt(consumer))
    await runtime.dispose()
    await fs.rm(dir, { recursive: true, force: true })
  }
  const ofMint = (mint: string) => received.filter((e) => e.mint === mint.toLowerCase())
  return { source, received, ofMint, start, stop, status, caughtUp, dispose }
}

const worlds: Array<Awaited<ReturnType<typeof world>>> = []
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.dispose()
})
const open = async () => {
  const w = await world()
  worlds.push(w)
  return w
}

/** The id and position of the receipt's log at `index` among the logs of `address`. */
const at = (receipt: TransactionReceipt, address: string, index = 0) => {
  const log = receipt.logs.filter((l) => l.address.toLowerCase() === address.toLowerCase())[index]!
  return { id: `hood:${receipt.transactionHash}:${log.logIndex}`, position: hoodPosition(receipt.blockNumber, log.logIndex) }
}

let saltCounter = 0
const launch = (c: HoodClients, label: string, thresholdRaw = 2n * ETH) =>
  createCurve(c, net.addresses.factory, {
    name: label,
    symbol: "HOOD",
    quoteToken: zeroAddress,
    virtualQuoteRaw: ETH,
    thresholdRaw,
    dexVersion: "v3",
    salt: saltOf(`hood-ingest-${label}-${++saltCounter}`)
  })

describe("Hood ingester", () => {
  it("publishes create, buy, sell, a capped crossing, recovery and a claim, with receipt ids and positions", async () => {
    const w = await open()
    await w.start()
    const creator = clientsFor(net, 4)
    const trader = clientsFor(net, 5)
    const keeper = clientsFor(net, net.roles.keeper)
    const c = await launch(creator, "lifecycle")
    const b1 = await buy(trader, c.curve, { amountInRaw: ETH / 10n, quoteToken: zeroAddress })
    const half = b1.trade.amountOut / 2n
    await approve(trader, c.token, c.curve, half)
    const s = await sell(trader, c.curve, half)
    const b2 = await buy(trader, c.curve, { amountInRaw: 5n * ETH, quoteToken: zeroAddress })
    expect(b2.trade.refund > 0n).toBe(true)
    const cancel = await cancelMigration(keeper, c.curve)
    const claim = await claimRecovery(trader, c.curve, c.token, half / 3n)

    const events = await eventually(() => {
      const e = w.ofMint(c.token)
      return e.length >= 7 ? e : undefined
    }, { what: "seven events", deadlineMs: 15_000, intervalMs: 5 })
    expect(events.map((e) => e._tag)).toEqual(["CurveCreated", "Trade", "Trade", "Trade", "CurveCompleted", "RecoverySnapshot", "RecoverySnapshot"])
    const [createdE, buyE, sellE, crossE, completedE, startedE, claimedE] = events as [ChainEvent, ...Array<ChainEvent>]
    expect(createdE).toMatchObject({ ...at(c.receipt, net.addresses.factory), curve: c.curve, dexVersion: "v3", quoteMint: zeroAddress, mode: "open" })
    expect(buyE).toMatchObject({ ...at(b1.receipt, c.curve), side: "buy", amountInRaw: ETH / 10n, amountOutRaw: b1.trade.amountOut, refundRaw: 0n })
    expect(sellE).toMatchObject({ ...at(s.receipt, c.curve), side: "sell", amountInRaw: half, refundRaw: 0n, quoteConsumedRaw: half })
    expect(crossE).toMatchObject({
      ...at(b2.receipt, c.curve),
      side: "buy",
      crossesGraduation: true,
      refundRaw: b2.trade.refund,
      quoteConsumedRaw: b2.trade.quoteConsumed,
      realQuoteRaw: 2n * ETH
    })
    expect((crossE as Extract<ChainEvent, { _tag: "Trade" }>).refundRaw + (crossE as Extract<ChainEvent, { _tag: "Trade" }>).quoteConsumedRaw).toBe(5n * ETH)
    expect(completedE).toMatchObject({ ...at(b2.receipt, c.curve, 1), curve: c.curve, realQuoteRaw: 2n * ETH })
    // The recovery figures: one read of the curve at the log's block.
    const pc = publicClientOf(net)
    const startedAt = await readRecovery(pc, c.curve, cancel.receipt.blockNumber)
    expect(startedE).toMatchObject({
      ...at(cancel.receipt, c.curve),
      cause: "started",
      curve: c.curve,
      quoteToken: zeroAddress,
      reserveSnapshotRaw: startedAt!.reserveSnapshotRaw,
      eligibleSupplyRaw: startedAt!.eligibleSupplyRaw,
      surrenderedRaw: 0n,
      snapshotBlock: cancel.receipt.blockNumber
    })
    expect(startedAt!.reserveSnapshotRaw).toBe(2n * ETH)
    const claimedAt = await readRecovery(pc, c.curve, claim.receipt.blockNumber)
    expect(claimedAt!.surrenderedRaw).toBe(half / 3n)
    expect(claimedAt!.surrenderedRaw).toBe(claim.event.surrenderedRaw)
    expect(claimedAt!.surrenderedRaw).toBeGreaterThan(0n)
    expect(claimedE).toMatchObject({ cause: "claimed", surrenderedRaw: half / 3n, reserveSnapshotRaw: startedAt!.reserveSnapshotRaw, snapshotBlock: claim.receipt.blockNumber })
    // Every event exactly once.
    await w.caughtUp()
    expect(new Set(w.received.map((e) => e.id)).size).toBe(w.received.length)
  })

  it("migration: CurveMigrated.pool is null, the real pool rides in dexPool, the fee in bps", async () => {
    const w = await open()
    await w.start()
    const c = await launch(clientsFor(net, 6), "migrates")
    await buy(clientsFor(net, 7), c.curve, { amountInRaw: 3n * ETH, quoteToken: zeroAddress })
    const m = await migrate(clientsFor(net, net.roles.keeper), c.curve)
    const e = await eventually(() => w.ofMint(c.token).find((x) => x._tag === "CurveMigrated"), { what: "CurveMigrated", deadlineMs: 15_000, intervalMs: 5 })
    expect(e).toMatchObject({ ...at(m.receipt, c.curve, m.receipt.logs.filter((l) => l.address.toLowerCase() === c.curve.toLowerCase()).length - 1), pool: null, dexPool: m.event.pool, feeBps: 30 })
    expect(e).toMatchObject({ quoteRaw: m.event.quoteAmount, tokensRaw: m.event.tokenAmount })
  })

  it("graduated pool: swaps after the migration are pool trades; the pool is remembered across a restart", async () => {
    const w = await open()
    await w.start()
    const c = await launch(clientsFor(net, 14), "pool-swaps")
    await buy(clientsFor(net, 15), c.curve, { amountInRaw: 3n * ETH, quoteToken: zeroAddress })
    const m = await migrate(clientsFor(net, net.roles.keeper), c.curve)
    const pool = m.event.pool
    const swapper = clientsFor(net, 16)
    const swap = (amountIn: bigint) =>
      swapExactIn(swapper, {
        router: net.addresses.swapRouter,
        tokenIn: net.addresses.weth9,
        tokenOut: c.token,
        fee: GRADUATED_POOL_FEE,
        amountInRaw: amountIn,
        payWithEth: true
      })
    const first = await swap(ETH / 10n)
    const firstAt = at(first, pool)
    const trade = await eventually(() => w.ofMint(c.token).find((e) => e.id === firstAt.id), { what: "the first pool swap", deadlineMs: 15_000, intervalMs: 5 })
    expect(trade).toMatchObject({
      _tag: "Trade",
      position: firstAt.position,
      venue: "pool",
      side: "buy",
      amountInRaw: ETH / 10n,
      quoteConsumedRaw: ETH / 10n,
      feeRaw: (ETH / 10n) * 3_000n / 1_000_000n, // exact: 0.1 ETH × 0.3 %
      refundRaw: 0n
    })
    expect((trade as { trader: string }).trader.toLowerCase()).toBe(swapper.wallet.account.address.toLowerCase())
    const migratedAt = w.ofMint(c.token).findIndex((e) => e._tag === "CurveMigrated")
    expect(migratedAt).toBeGreaterThan(-1)
    expect(w.ofMint(c.token).indexOf(trade)).toBeGreaterThan(migratedAt)
    // Stopped: a swap happens; the restarted ingester knows the pool from the database.
    await w.caughtUp()
    await w.stop()
    const second = await swap(ETH / 20n)
    await w.start()
    const secondAt = at(second, pool)
    await eventually(() => w.ofMint(c.token).find((e) => e.id === secondAt.id), { what: "the swap made while stopped", deadlineMs: 15_000, intervalMs: 5 })
    expect(w.ofMint(c.token).filter((e) => e._tag === "Trade" && (e as { venue: string }).venue === "pool")).toHaveLength(2)
  })

  it("routed trades: a curve buy and sell and a pool sell through the trade router are the wallet's, not the router's", async () => {
    const router = net.addresses.tradeRouter!
    const w = await open()
    await w.start({ tradeRouter: router })
    const c = await launch(clientsFor(net, 17), "routed", 3n * ETH)
    const trader = clientsFor(net, 18)
    const me = trader.wallet.account.address
    const routed = async (functionName: "buyOnCurve" | "sellOnCurve", amount: bigint, value: bigint) => {
      const hash = await trader.wallet.writeContract({ address: router, abi: tradeRouterAbi, functionName, args: [c.token, amount, 0n, 1_000n], value, chain: net.chain, account: trader.wallet.account } as never)
      return publicClientOf(net).waitForTransactionReceipt({ hash })
    }
    const bought = await routed("buyOnCurve", ETH / 2n, ETH / 2n + 1_000n)
    await approve(trader, c.token, router, 2n ** 255n)
    const held = await publicClientOf(net).readContract({ address: c.token, abi: [{ type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ type: "address" }], outputs: [{ type: "uint256" }] }] as const, functionName: "balanceOf", args: [me] })
    const sold = await routed("sellOnCurve", held / 4n, 0n)
    // Graduate (another wallet's crossing buy), then a routed pool sell.
    await buy(clientsFor(net, 19), c.curve, { amountInRaw: 4n * ETH, quoteToken: zeroAddress })
    await migrate(clientsFor(net, net.roles.keeper), c.curve)
    const poolHash = await trader.wallet.writeContract({
      address: router,
      abi: tradeRouterAbi,
      functionName: "sellOnPool",
      args: [c.token, GRADUATED_POOL_FEE, held / 4n, 0n, 1_000n, 2n ** 40n],
      chain: net.chain,
      account: trader.wallet.account
    })
    const poolSold = await publicClientOf(net).waitForTransactionReceipt({ hash: poolHash })
    const trades = await eventually(
      () => {
        const t = w.ofMint(c.token).filter((e) => e._tag === "Trade" && [bought, sold, poolSold].some((r) => e.signature === r.transactionHash))
        return t.length === 3 ? t : undefined
      },
      { what: "the three routed trades", deadlineMs: 15_000, intervalMs: 5 }
    )
    expect(trades.map((t) => [(t as { venue: string }).venue, (t as { side: string }).side, (t as { trader: string }).trader.toLowerCase()])).toEqual([
      ["curve", "buy", me.toLowerCase()],
      ["curve", "sell", me.toLowerCase()],
      ["pool", "sell", me.toLowerCase()]
    ])
    // The router's own log is no event: one event per routed transaction.
    for (const r of [bought, sold, poolSold]) expect(w.received.filter((e) => e.signature === r.transactionHash)).toHaveLength(1)
    // Without the router configured, the same logs name the router (what the chain's own events say).
    const plain = await open()
    await plain.start({ source: `${plain.source}-plain` })
    const first = await eventually(() => plain.ofMint(c.token).find((e) => e.signature === bought.transactionHash), { what: "the buy, unrouted", deadlineMs: 15_000, intervalMs: 5 })
    expect(((first as { trader: string }).trader as Address).toLowerCase()).toBe(router.toLowerCase())
  })

  /**
   * A proxy in front of the node that notes each call's method and first parameter. `hold()` keeps
   * the calls that arrive from then on (none is forwarded) until `release()` forwards them.
   * `script`, when set, sees each call as it is forwarded and may answer it itself (a result).
   */
  const notingProxy = async () => {
    const calls: Array<string> = []
    let held: Array<() => void> | undefined
    let script: ((method: string, first: unknown) => { readonly result: unknown } | undefined) | undefined
    const proxy = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8")
        const parsed = JSON.parse(body) as { id: unknown; method: string; params?: ReadonlyArray<unknown> }
        calls.push(`${parsed.method} ${String(parsed.params?.[0] ?? "")}`)
        const forward = () => {
          const scripted = script?.(parsed.method, parsed.params?.[0])
          if (scripted !== undefined) {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify({ jsonrpc: "2.0", id: parsed.id, result: scripted.result }))
            return
          }
          void fetch(net.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body }).then(async (r) => {
            res.writeHead(r.status, { "content-type": "application/json" })
            res.end(await r.text())
          })
        }
        if (held === undefined) forward()
        else held.push(forward)
      })
    })
    const url = await listenLoopback(proxy)
    return {
      url,
      calls,
      hold: () => {
        held ??= []
      },
      release: () => {
        const waiting = held ?? []
        held = undefined
        for (const forward of waiting) forward()
      },
      setScript: (f: typeof script) => {
        script = f
      },
      close: () => closeLoopback(proxy)
    }
  }

  it("at rest: a poll that finds the newest block unchanged reads only that block; a new block is still followed", async () => {
    const proxy = await notingProxy()
    const { calls } = proxy
    const proxyUrl = proxy.url
    try {
      const w = await open()
      await w.start({ rpcUrl: proxyUrl })
      const c = await launch(clientsFor(net, 13), "at-rest")
      await w.caughtUp()
      // No block is mined now (the test node mines on transactions only): 30 polls at rest. The
      // first may still check the tip it followed last (one header read); then one read a poll.
      const from = calls.length
      await eventually(() => (calls.length >= from + 31 ? true : undefined), { what: "30 polls at rest", deadlineMs: 30_000, intervalMs: 5 })
      const atRest = calls.slice(from, from + 31)
      expect(atRest.filter((m) => m !== "eth_getBlockByNumber latest").length).toBeLessThanOrEqual(1)
      const bought = await buy(clientsFor(net, 13), c.curve, { amountInRaw: ETH / 9n, quoteToken: zeroAddress })
      await eventually(() => w.received.find((e) => e.id === at(bought.receipt, c.curve).id), { what: "the buy after the rest", deadlineMs: 15_000, intervalMs: 5 })
    } finally {
      await proxy.close()
    }
  })

  it("at rest: a block replaced at the same height while the ingester idles is a reorg (the idle poll compares the hash, not only the number)", async () => {
    const proxy = await notingProxy()
    try {
      const w = await open()
      await w.start({ rpcUrl: proxy.url })
      const tc = hoodTestClient(net)
      const c = await launch(clientsFor(net, 14), "rest-reorg")
      await w.caughtUp()
      const snap = await snapshot(tc)
      const old = await buy(clientsFor(net, 11), c.curve, { amountInRaw: ETH / 3n, quoteToken: zeroAddress })
      const oldAt = at(old.receipt, c.curve)
      await eventually(() => w.received.find((e) => e.id === oldAt.id), { what: "the old buy", deadlineMs: 15_000, intervalMs: 5 })
      // The ingester idles at the old buy's block: three polls in a row that read only `latest`.
      await eventually(
        () => {
          const last = proxy.calls.slice(-3)
          return last.length === 3 && last.every((m) => m === "eth_getBlockByNumber latest") ? true : undefined
        },
        { what: "three idle polls", deadlineMs: 15_000, intervalMs: 5 }
      )
      // Nothing reaches the node from the ingester while the block is replaced at the same height.
      proxy.hold()
      try {
        await revertTo(tc, snap)
        const replacing = await buy(clientsFor(net, 12), c.curve, { amountInRaw: ETH / 4n, quoteToken: zeroAddress })
        expect(replacing.receipt.blockNumber).toBe(old.receipt.blockNumber)
        expect(replacing.receipt.blockHash).not.toBe(old.receipt.blockHash)
        const newAt = at(replacing.receipt, c.curve)
        proxy.release()
        await eventually(() => w.received.find((e) => e.id === newAt.id), { what: "the replacing buy", deadlineMs: 15_000, intervalMs: 5 })
        const ids = w.ofMint(c.token).map((e) => (e._tag === "Retracted" ? `R:${e.retractedIds.join(",")}` : e.id))
        expect(ids.indexOf(`R:${oldAt.id}`)).toBeGreaterThan(-1)
        expect(ids.indexOf(`R:${oldAt.id}`)).toBeLessThan(ids.indexOf(newAt.id))
      } finally {
        proxy.release()
      }
    } finally {
      await proxy.close()
    }
  })

  it("at rest: the idle head is the block the tip check compared (latest = X while a second read of its height still says T: a reorg)", async () => {
    const proxy = await notingProxy()
    try {
      const w = await open()
      await w.start({ rpcUrl: proxy.url })
      const tc = hoodTestClient(net)
      const c = await launch(clientsFor(net, 15), "rest-verified")
      await w.caughtUp()
      const snap = await snapshot(tc)
      const old = await buy(clientsFor(net, 11), c.curve, { amountInRaw: ETH / 3n, quoteToken: zeroAddress })
      const oldAt = at(old.receipt, c.curve)
      await eventually(() => w.received.find((e) => e.id === oldAt.id), { what: "the old buy", deadlineMs: 15_000, intervalMs: 5 })
      const height = numberToHex(old.receipt.blockNumber)
      // The old block T as the node served it at its height.
      const t = (await (
        await fetch(net.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: [height, false] }) })
      ).json()) as { result: { hash: string } }
      expect(t.result.hash).toBe(old.receipt.blockHash)
      proxy.hold()
      try {
        await revertTo(tc, snap)
        const replacing = await buy(clientsFor(net, 12), c.curve, { amountInRaw: ETH / 4n, quoteToken: zeroAddress })
        expect(replacing.receipt.blockNumber).toBe(old.receipt.blockNumber)
        const newAt = at(replacing.receipt, c.curve)
        // The first `latest` read after the release finds X; the call right after it, if it reads
        // that height again, is answered with T (a node that changed between two reads); then the
        // node answers X everywhere.
        let phase: "armed" | "afterLatest" | "done" = "armed"
        proxy.setScript((method, first) => {
          if (phase === "armed") {
            if (method === "eth_getBlockByNumber" && first === "latest") phase = "afterLatest"
            return undefined
          }
          if (phase === "afterLatest") {
            phase = "done"
            return method === "eth_getBlockByNumber" && first === height ? { result: t.result } : undefined
          }
          return undefined
        })
        proxy.release()
        await eventually(() => w.received.find((e) => e.id === newAt.id), { what: "the replacing buy", deadlineMs: 15_000, intervalMs: 5 })
        const ids = w.ofMint(c.token).map((e) => (e._tag === "Retracted" ? `R:${e.retractedIds.join(",")}` : e.id))
        expect(ids.indexOf(`R:${oldAt.id}`)).toBeGreaterThan(-1)
        expect(ids.indexOf(`R:${oldAt.id}`)).toBeLessThan(ids.indexOf(newAt.id))
      } finally {
        proxy.release()
      }
    } finally {
      await proxy.close()
    }
  })

  it("reorg to empty blocks: the dropped buy is retracted; later blocks are followed", async () => {
    const w = await open()
    await w.start()
    const tc = hoodTestClient(net)
    const c = await launch(clientsFor(net, 8), "reorg-empty")
    await w.caughtUp()
    const snap = await snapshot(tc)
    const dropped = await buy(clientsFor(net, 9), c.curve, { amountInRaw: ETH / 5n, quoteToken: zeroAddress })
    const droppedId = at(dropped.receipt, c.curve).id
    await eventually(() => w.received.find((e) => e.id === droppedId), { what: "the buy to be published", deadlineMs: 15_000, intervalMs: 5 })
    await reorg(tc, snap, 3)
    const retracted = await eventually(() => w.received.find((e) => e._tag === "Retracted" && e.retractedIds.includes(droppedId)), { what: "the retraction", deadlineMs: 15_000, intervalMs: 5 })
    expect(retracted).toMatchObject({ chain: "hood", mint: c.token.toLowerCase(), retractedIds: [droppedId] })
    const after = await buy(clientsFor(net, 9), c.curve, { amountInRaw: ETH / 7n, quoteToken: zeroAddress })
    await eventually(() => w.received.find((e) => e.id === at(after.receipt, c.curve).id), { what: "the buy after the reorg", deadlineMs: 15_000, intervalMs: 5 })
    const st = await w.status()
    expect(st.reorgs).toBeGreaterThanOrEqual(1)
    expect(st.retractedEvents).toBeGreaterThanOrEqual(1)
  })

  it("reorg to another branch: the old buy is retracted before the replacing buy at the same height is published", async () => {
    const w = await open()
    await w.start()
    const tc = hoodTestClient(net)
    const c = await launch(clientsFor(net, 10), "reorg-branch")
    await w.caughtUp()
    const snap = await snapshot(tc)
    const old = await buy(clientsFor(net, 11), c.curve, { amountInRaw: ETH / 3n, quoteToken: zeroAddress })
    const oldAt = at(old.receipt, c.curve)
    await eventually(() => w.received.find((e) => e.id === oldAt.id), { what: "the old buy", deadlineMs: 15_000, intervalMs: 5 })
    await revertTo(tc, snap)
    const replacing = await buy(clientsFor(net, 12), c.curve, { amountInRaw: ETH / 4n, quoteToken: zeroAddress })
    const newAt = at(replacing.receipt, c.curve)
    expect(newAt.position).toBe(oldAt.position) // same height, same log index: a new branch
    await eventually(() => w.received.find((e) => e.id === newAt.id), { what: "the replacing buy", deadlineMs: 15_000, intervalMs: 5 })
    const ids = w.ofMint(c.token).map((e) => (e._tag === "Retracted" ? `R:${e.retractedIds.join(",")}` : e.id))
    expect(ids.indexOf(`R:${oldAt.id}`)).toBeGreaterThan(-1)
    expect(ids.indexOf(`R:${oldAt.id}`)).toBeLessThan(ids.indexOf(newAt.id))
  })

  it("restart: resumes from the stored cursor without republishing; small backfill ranges read the same events", async () => {
    const w = await open()
    await w.start({ backfillBlocks: 3, reorgWindowBlocks: 4 })
    await w.caughtUp()
    const firstRun = w.received.length
    expect(firstRun).toBeGreaterThan(0)
    const st = await w.status()
    expect(st.windowBlocks).toBeLessThanOrEqual(4)
    await w.stop()
    const c = await launch(clientsFor(net, 13), "restart")
    await w.start({ backfillBlocks: 3, reorgWindowBlocks: 4 })
    await eventually(() => w.ofMint(c.token)[0], { what: "the curve created while stopped", deadlineMs: 15_000, intervalMs: 5 })
    await w.caughtUp()
    expect(new Set(w.received.map((e) => e.id)).size).toBe(w.received.length)
    // Everything a fresh ingester (following from block 0) publishes, this one published once.
    const fresh = await open()
    await fresh.start({ maxBlocksPerStep: 7 })
    await fresh.caughtUp()
    const live = (list: ReadonlyArray<ChainEvent>) => list.filter((e) => e._tag !== "Retracted").map((e) => e.id)
    expect(new Set(live(w.received))).toEqual(new Set(live(fresh.received)))
    expect(live(fresh.received).length).toBeGreaterThan(0)
  })
})
