/**
 * The Hood market simulation against the real Hood localnet (Hardhat/EDR in process, the real
 * CurveFactory, viem over JSON-RPC): it launches ETH and USDG curves (v3 and v4), trades them,
 * pushes hot curves across the threshold with a refunded crossing buy, respects its bound on
 * traded curves, replays the same transactions from the same seed, and survives refusals.
 */
import { Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, getAddress, parseEventLogs, type PublicClient, zeroAddress } from "viem"
import { bondingCurveAbi, curveFactoryAbi } from "../../src/chain/hood/abi.generated.js"
import { readCurve } from "../../src/chain/hood/client/HoodClient.js"
import { hoodTestClient, publicClientOf, revertTo, snapshot, startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { type CurveParams, initialState, quoteBuy } from "../../src/domain/CurveMath.js"
import { findEconomics } from "../../src/domain/Economics.js"
import {
  admitCurve,
  DefaultHoodSimulationOptions,
  grossToComplete,
  type HoodSimulationOptions,
  hoodLocalnetTarget,
  hoodSimulationClients,
  runHoodSimulation
} from "../../src/sim/HoodSimulation.js"
import { eventually } from "../support/eventually.js"

let net: StartedHoodLocalnet
let pc: PublicClient

beforeAll(async () => {
  net = await startHoodLocalnet()
  pc = publicClientOf(net)
})

afterAll(async () => {
  await net?.close()
})

const FAST: HoodSimulationOptions = {
  ...DefaultHoodSimulationOptions,
  seed: 7,
  launchEveryMs: 400,
  tradeEveryMs: 10,
  maxActiveCurves: 3,
  hotShare: 0.5,
  usdgShare: 0.5,
  v4Share: 0.5
}

const abi = [...curveFactoryAbi, ...bondingCurveAbi]

/** Every CurveCreated, Trade and CurveCompleted log in (from, head], in chain order. */
const logsSince = async (fromBlock: bigint) => {
  const raw = await pc.getLogs({ fromBlock: fromBlock + 1n, toBlock: "latest" })
  return parseEventLogs({ abi, logs: raw }).filter(
    (l) => l.eventName === "CurveCreated" || l.eventName === "Trade" || l.eventName === "CurveCompleted"
  )
}

type SimLog = Awaited<ReturnType<typeof logsSince>>[number]

const summary = (logs: ReadonlyArray<SimLog>) => {
  const created = logs.flatMap((l) => (l.eventName === "CurveCreated" ? [l.args] : []))
  const trades = logs.flatMap((l) => (l.eventName === "Trade" ? [{ ...l.args, curve: getAddress(l.address) }] : []))
  const completed = logs.flatMap((l) => (l.eventName === "CurveCompleted" ? [getAddress(l.address)] : []))
  return { created, trades, completed }
}


describe("Hood simulation helpers", () => {
  it("keeps at most max curves, dropping completed ones first, then the oldest", () => {
    const c = (id: string, done = false) => ({ id, done })
    expect(admitCurve([c("a"), c("b")], c("c"), 3).map((x) => x.id)).toEqual(["a", "b", "c"])
    expect(admitCurve([c("a"), c("b"), c("c")], c("d"), 3).map((x) => x.id)).toEqual(["b", "c", "d"])
    expect(admitCurve([c("a"), c("b", true), c("c")], c("d"), 3).map((x) => x.id)).toEqual(["a", "c", "d"])
    expect(admitCurve([c("a")], c("b"), 1).map((x) => x.id)).toEqual(["b"])
    expect(admitCurve([c("a")], c("b"), 0).map((x) => x.id)).toEqual(["b"])
  })

  it("sizes the push exactly: grossToComplete is what a crossing buy consumes, the rest is refunded", () => {
    for (const pair of ["eth", "usdg"] as const) {
      const tier = findEconomics("hood", pair)!.tiers[0]!
      const p: CurveParams = {
        virtualQuoteRaw: tier.virtualQuoteRaw,
        thresholdRaw: tier.thresholdRaw,
        tokenReserveRaw: 995_000_000n * 10n ** 18n,
        feeBps: 100n,
        crossingModel: "capped-refund"
      }
      for (const raisedPpm of [0n, 1n, 123_457n, 600_000n, 999_999n]) {
        const first = quoteBuy(p, initialState(p), (tier.thresholdRaw * raisedPpm) / 1_000_000n + 1n)
        const s = raisedPpm === 0n || first._tag !== "Filled" ? initialState(p) : first.next
        const g = grossToComplete(p.thresholdRaw, s.realQuoteRaw, p.feeBps)
        for (const extra of [g / 10n + 1n, g / 2n, g]) {
          const q = quoteBuy(p, s, g + extra)
          if (q._tag !== "Filled") throw new Error("refused")
          expect(q.crossesGraduation).toBe(true)
          expect(q.quoteConsumed).toBe(g)
          expect(q.refund).toBe(extra)
          expect(q.next.realQuoteRaw).toBe(p.thresholdRaw)
        }
      }
    }
  })
})

describe("Hood simulation on the localnet", () => {
  it("launches ETH and USDG curves (v3 and v4), trades them within its bound, and completes hot curves with a refunded crossing", async () => {
    const from = await pc.getBlockNumber()
    const fiber = Effect.runFork(runHoodSimulation(hoodSimulationClients(hoodLocalnetTarget(net)), FAST))
    const s = await eventually(
      async () => {
        const now = summary(await logsSince(from))
        const quotes = new Set(now.created.map((c) => c.quoteToken))
        const versions = new Set(now.created.map((c) => c.dexVersion))
        return now.completed.length >= 1 && quotes.size === 2 && versions.size === 2 && now.trades.some((t) => !t.isBuy) ? now : undefined
      },
      { what: "a completed curve, both quotes, both DEX versions and a sell", deadlineMs: 150_000, intervalMs: 500 }
    )
    // Still running: nothing it met (refusals included) ended it.
    expect(fiber.unsafePoll()).toBeNull()
    // The simulation's chain calls are uninterruptible: the interrupt returns once a call under way has landed.
    await Effect.runPromise(Fiber.interrupt(fiber))

    expect(s.created.length).toBeGreaterThanOrEqual(2)
    expect(new Set(s.created.map((c) => c.quoteToken))).toEqual(new Set([zeroAddress, net.addresses.usdg]))
    expect(new Set(s.created.map((c) => c.dexVersion))).toEqual(new Set([3, 4]))
    const traders = new Set(net.roles.traders.map((t) => t.address))
    for (const c of s.created) {
      expect(traders.has(c.creator)).toBe(true)
      const tier = findEconomics("hood", c.quoteToken === zeroAddress ? "eth" : "usdg")!.tiers[0]!
      expect(c.virtualQuote).toBe(tier.virtualQuoteRaw)
      expect(c.graduationThreshold).toBe(tier.thresholdRaw)
    }
    expect(s.trades.some((t) => t.isBuy)).toBe(true)
    expect(s.trades.some((t) => !t.isBuy)).toBe(true)
    for (const t of s.trades) expect(traders.has(t.trader)).toBe(true)

    // Completed by a crossing buy with a real refund, realQuote exactly at the threshold.
    expect(s.completed.length).toBeGreaterThanOrEqual(1)
    for (const curve of s.completed) {
      const crossing = s.trades.find((t) => t.curve === curve && t.crossesGraduation)!
      expect(crossing.isBuy).toBe(true)
      expect(crossing.refund).toBeGreaterThan(0n)
      expect(crossing.quoteConsumed + crossing.refund).toBe(crossing.amountIn)
      const snap = await readCurve(pc, curve)
      expect(snap.phase).toBe("completed")
      expect(snap.state.realQuoteRaw).toBe(snap.params.thresholdRaw)
      expect(crossing.realQuote).toBe(snap.params.thresholdRaw)
    }

    // The bound: each trade is on one of the maxActiveCurves most recent curves not completed before it.
    const order: Address[] = []
    const done = new Set<Address>()
    for (const l of await logsSince(from)) {
      if (l.eventName === "CurveCreated") order.push(getAddress(l.args.curve))
      else if (l.eventName === "CurveCompleted") done.add(getAddress(l.address))
      else if (l.eventName === "Trade") {
        const live = order.filter((c) => !done.has(c)).slice(-FAST.maxActiveCurves)
        expect(live).toContain(getAddress(l.address))
      }
    }
  }, 180_000)

  it("sends the same transactions from the same seed (replayed after a snapshot revert), other ones from another seed", async () => {
    const tc = hoodTestClient(net)
    const from = await pc.getBlockNumber()
    const options: HoodSimulationOptions = { ...FAST, seed: 1234, maxActions: 25, launchEveryMs: 150 }
    const run = async (seed: number) => {
      const id = await snapshot(tc)
      await Effect.runPromise(runHoodSimulation(hoodSimulationClients(hoodLocalnetTarget(net)), { ...options, seed }))
      const logs = (await logsSince(from)).map((l) => ({ address: l.address, eventName: l.eventName, args: l.args }))
      await revertTo(tc, id)
      expect(await pc.getBlockNumber()).toBe(from)
      return logs
    }
    const first = await run(1234)
    const second = await run(1234)
    const other = await run(4321)
    expect(first.filter((l) => l.eventName === "CurveCreated").length).toBeGreaterThanOrEqual(2)
    expect(first.filter((l) => l.eventName === "Trade").length).toBeGreaterThanOrEqual(10)
    expect(second).toEqual(first)
    expect(other).not.toEqual(first)
  }, 120_000)

  it("logs and skips refused transactions: a simulation whose every launch fails keeps going to its end", async () => {
    const from = await pc.getBlockNumber()
    const broken = { ...hoodSimulationClients(hoodLocalnetTarget(net)), addresses: { factory: net.addresses.usdg, usdg: net.addresses.usdg } }
    const exit = await Effect.runPromiseExit(runHoodSimulation(broken, { ...FAST, seed: 9, launchEveryMs: 10, maxActions: 8 }))
    expect(exit._tag).toBe("Success")
    expect(summary(await logsSince(from)).created).toEqual([])
  }, 60_000)
})
