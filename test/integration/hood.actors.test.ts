/**
 * Hood end to end through the REAL actor runtime: the Hood localnet → the Hood ingester → the
 * embedded bus → `MarketActors` (PGlite checkpoints) → the market record. A seeded simulation
 * (two curves, random buys and sells, one curve crossing with a refund and migrating, the other
 * crossing and cancelled into recovery with a claim) runs twice on fresh localnets: once plain,
 * once with reorgs injected (phantom trades, a phantom migration and a phantom claim on blocks
 * that are then reverted, replaced by empty blocks or by the canonical operations at the same
 * heights). The final actor states must be equal.
 *
 * "Equal" compares everything a reorg must not change: lifecycle, migration, curve reserves,
 * pool, recovery amounts, trade counts, volumes, fees claimed, identity. Block numbers, timestamps
 * and transaction hashes differ between two runs by construction (extra blocks, other times), so
 * positions, times and time windows are left out of the comparison.
 *
 * Replay a failure with HOOD_SIM_SEED=<seed>.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { maxUint256, zeroAddress } from "viem"
import { describe, expect, it } from "vitest"
import { MarketActors, layer as marketActorsLayer } from "../../actors/MarketActors.js"
import type { MarketCore } from "../../actors/market/MarketActor.js"
import { marketRecord } from "../../actors/market/MarketRecord.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import * as EmbeddedBus from "../../ingest/bus/EmbeddedBus.js"
import { HoodIngester } from "../../ingest/hood/HoodIngester.js"
import {
  approve,
  buy,
  cancelMigration,
  claimRecovery,
  createCurve,
  type HoodClients,
  migrate,
  saltOf,
  sell,
  tokenBalance
} from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, hoodTestClient, mine, publicClientOf, reorg, revertTo, snapshot, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import * as Database from "../../src/db/Database.js"
import { mulberry32 } from "../../src/domain/SeededRandom.js"
import { eventually } from "../support/eventually.js"

const ETH = 10n ** 18n
const SEED = Number(process.env["HOOD_SIM_SEED"] ?? 20261121)

const rng = mulberry32

/** What a reorg must not change (see the header). */
const projection = (core: MarketCore) => ({
  chain: core.chain,
  mint: core.mint,
  lifecycle: core.lifecycle,
  migration: { status: core.migration.status, attempts: core.migration.attempts },
  curveState: core.curveState,
  params: core.params,
  identity: { ...core.identity, createdPosition: undefined, createdAtMs: undefined, createdSignature: undefined },
  pool: core.pool,
  recovery: core.recovery === undefined ? undefined : { ...core.recovery, snapshotBlock: undefined },
  tradesTotal: core.stats.tradesTotal,
  buysTotal: core.stats.buysTotal,
  volumeTotalRaw: core.stats.volumeTotalRaw,
  creatorFeesClaimedRaw: core.creatorFeesClaimedRaw
})

interface RunResult {
  readonly states: Record<string, ReturnType<typeof projection>>
  readonly records: Record<string, Record<string, unknown>>
  readonly reorgs: number
  readonly retracted: number
}

const runSimulation = async (seed: number, withReorgs: boolean): Promise<RunResult> => {
  const net = await startHoodLocalnet()
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-hood-sim-"))
  const infra = Layer.merge(EmbeddedBus.layer({ dir, partitions: 4, fsync: false }), Database.layerTest)
  const engine = Layer.merge(
    marketActorsLayer({}),
    HoodIngester.layer({ rpcUrl: net.rpcUrl, factory: net.addresses.factory, feeSplitter: net.addresses.feeSplitter, pollIntervalMs: 5 })
  ).pipe(Layer.provideMerge(infra))
  const runtime = ManagedRuntime.make(engine.pipe(Layer.orDie))
  try {
    const [actors, ingester, bus] = await runtime.runPromise(Effect.all([MarketActors, HoodIngester, Bus]))
    const tc = hoodTestClient(net)
    const pc = publicClientOf(net)
    const ops = rng(seed)
    const faults = rng(seed ^ 0x5eed)
    const keeper = clientsFor(net, net.roles.keeper)
    const phantom = clientsFor(net, 19)
    const traders: ReadonlyArray<HoodClients> = [6, 7, 8, 9].map((i) => clientsFor(net, i))

    const caughtUp = async () => {
      const head = await pc.getBlockNumber()
      await eventually(async () => ((await runtime.runPromise(ingester.status)).cursorBlock ?? -1n) >= head || undefined, { what: `ingester at ${head}`, deadlineMs: 20_000, intervalMs: 5 })
    }
    let reorgs = 0
    /** Runs phantom operations on a branch the chain then drops (after the ingester published them). */
    const maybeReorg = async (phantomOps: () => Promise<unknown>, force = false) => {
      if (!withReorgs || (!force && faults() > 0.35)) return
      await caughtUp()
      const snap = await snapshot(tc)
      await phantomOps()
      await caughtUp()
      if (faults() < 0.5) await reorg(tc, snap, 1 + Math.floor(faults() * 3))
      else await revertTo(tc, snap) // the canonical operations that follow take the same heights
      reorgs++
    }

    const launchOne = (label: string, creator: HoodClients) =>
      createCurve(creator, net.addresses.factory, {
        name: label,
        symbol: label.slice(0, 4).toUpperCase(),
        quoteToken: zeroAddress,
        virtualQuoteRaw: ETH,
        thresholdRaw: 5n * ETH,
        dexVersion: label === "alpha" ? "v3" : "v4",
        salt: saltOf(`hood-sim-${seed}-${label}`)
      })
    const curves = [await launchOne("alpha", clientsFor(net, 4)), await launchOne("beta", clientsFor(net, 5))]
    for (const t of [...traders, phantom]) for (const c of curves) await approve(t, c.token, c.curve, maxUint256)
    await maybeReorg(() => launchOne("ghost", phantom), true) // a phantom market: retracted to a tombstone

    for (let step = 0; step < 24; step++) {
      await maybeReorg(async () => {
        const c = curves[Math.floor(faults() * 2)]!
        await buy(phantom, c.curve, { amountInRaw: ETH / 50n + BigInt(Math.floor(faults() * 1e6)) * 10n ** 10n, quoteToken: zeroAddress })
        if (faults() < 0.5) await buy(phantom, c.curve, { amountInRaw: ETH / 40n, quoteToken: zeroAddress })
      })
      const t = traders[Math.floor(ops() * traders.length)]!
      const c = curves[Math.floor(ops() * curves.length)]!
      const held = await tokenBalance(pc, c.token, t.wallet.account.address)
      if (held > 0n && ops() < 0.4) await sell(t, c.curve, (held * BigInt(1 + Math.floor(ops() * 90))) / 100n)
      else await buy(t, c.curve, { amountInRaw: ETH / 100n + BigInt(Math.floor(ops() * 15)) * (ETH / 100n), quoteToken: zeroAddress })
    }

    // alpha: crossing with a refund, then migration (with a phantom migration reverted first).
    const [alpha, beta] = curves as [(typeof curves)[0], (typeof curves)[0]]
    const cross = await buy(traders[0]!, alpha.curve, { amountInRaw: 10n * ETH, quoteToken: zeroAddress })
    expect(cross.trade.refund > 0n).toBe(true)
    await maybeReorg(() => migrate(keeper, alpha.curve), true)
    await migrate(keeper, alpha.curve)
    // beta: crossing, cancelled into recovery (a phantom claim reverted first), then a claim.
    await buy(traders[1]!, beta.curve, { amountInRaw: 10n * ETH, quoteToken: zeroAddress })
    await cancelMigration(keeper, beta.curve)
    const held = await tokenBalance(pc, beta.token, traders[1]!.wallet.account.address)
    await maybeReorg(() => claimRecovery(phantom, beta.curve, beta.token, 1n).catch(() => claimRecovery(traders[1]!, beta.curve, beta.token, held / 2n)), true)
    await claimRecovery(traders[1]!, beta.curve, beta.token, held / 3n)

    // Drain: the ingester reached the head, and the actors received everything on the bus. One
    // empty block first: after a revert the last operation can take the height of a block the
    // ingester already published, so its cursor already "reached the head" before it noticed the
    // replaced block; a block above it can only be read after the replaced one is resolved.
    await mine(tc)
    await caughtUp()
    const total = async () => [...(await runtime.runPromise(bus.endOffsets(Topics.chainEvents))).values()].reduce((a, b) => a + b, 0)
    const published = await total()
    // Received is not applied: the shards' mailboxes must be empty of it too (every received event applied, skipped or refused).
    const drained = () => {
      const s = actors.stats()
      return s.received >= published && s.applied + s.skipped + s.defects + s.refused + s.decodeFailures >= s.received ? true : undefined
    }
    await eventually(drained, { what: "the actors to apply the whole bus", deadlineMs: 20_000, intervalMs: 5 })
    const status = await runtime.runPromise(ingester.status)
    const states: Record<string, ReturnType<typeof projection>> = {}
    const records: Record<string, Record<string, unknown>> = {}
    for (const c of curves) {
      const s = actors.state("hood", c.token.toLowerCase())
      if (s?.core === undefined) throw new Error(`no market for ${c.token}`)
      states[c.token] = projection(s.core)
      records[c.token] = marketRecord(s.core, s.core.lastEventAtMs) as unknown as Record<string, unknown>
    }
    return { states, records, reorgs: status.reorgs, retracted: status.retractedEvents }
  } finally {
    await runtime.dispose()
    await net.close()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

describe("Hood simulation with injected reorgs", () => {
  it(`ends in the same market states as the run without reorgs (seed ${SEED})`, async () => {
    const plain = await runSimulation(SEED, false)
    const reorged = await runSimulation(SEED, true)
    expect(plain.reorgs).toBe(0)
    expect(reorged.reorgs).toBeGreaterThanOrEqual(4)
    expect(reorged.retracted).toBeGreaterThanOrEqual(4)
    expect(reorged.states).toEqual(plain.states)

    // Hood semantics in the final records (spec 2.9).
    const [alpha, beta] = Object.values(plain.records) as [Record<string, unknown>, Record<string, unknown>]
    expect(alpha).toMatchObject({
      chain: "hood",
      lifecycle: "migrated",
      buysOpen: true,
      sellsOpen: true,
      poolAddress: null,
      graduationVenue: "dex-evm-v3",
      crossingModel: "capped-refund",
      migration: { status: "completed" }
    })
    expect(beta).toMatchObject({
      lifecycle: "recovery",
      buysOpen: false,
      sellsOpen: false,
      poolAddress: null,
      graduationVenue: "dex-evm-v4",
      trade: { routable: false, reason: "market_recovery" },
      migration: { status: "cancelled" },
      recovery: { method: "claimRecovery(uint256)", quoteToken: zeroAddress }
    })
    const recovery = beta["recovery"] as Record<string, string>
    expect(recovery["requiresApprovalTo"]).toBe(recovery["curve"])
    expect(BigInt(recovery["reserveSnapshotRaw"]!)).toBe(5n * ETH)
    expect(BigInt(recovery["surrenderedRaw"]!)).toBeGreaterThan(0n)
    expect(BigInt(recovery["eligibleSupplyRaw"]!)).toBeGreaterThan(BigInt(recovery["surrenderedRaw"]!))
    // The real pool is kept (not public) for the mark.
    const alphaState = Object.values(plain.states)[0]!
    expect(alphaState.pool?.address).toBeNull()
    expect(alphaState.pool?.dexPool).toMatch(/^0x[0-9a-fA-F]{40}$/)
  }, 110_000)
})
