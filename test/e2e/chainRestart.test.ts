/**
 * The embedded chains across restarts, and the engine knowing which chain it follows:
 *
 * 1. The simulation trades on both embedded localnets, the engine is killed with SIGKILL mid-stream
 *    and started again on the same data directory: both localnets continue their chains (no
 *    "chain was reset", no reorg past the window), and every market the first run served is
 *    served again with the state its chain holds.
 * 2. The localnets' chains are deleted between two runs, with a crash's uncommitted tail of old
 *    events left on the bus: the engine says, once per chain, that it rebuilt that chain's derived
 *    state, and serves none of the old markets.
 * 3. Against a configured Solana node that turns out to be another chain, the engine refuses to
 *    start and names RESET_CHAIN_STATE; with it set, it rebuilds and starts.
 */
import type { ChildProcess } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import * as path from "node:path"
import { createSolanaRpc } from "@solana/kit"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import type { Address } from "viem"
import { bondingCurveAbi } from "../../src/chain/hood/abi.generated.js"
import { hoodPublicClient } from "../../src/chain/hood/client/HoodClient.js"
import { hoodChain } from "../../src/chain/hood/localnet/Deploy.js"
import { decodeCurve } from "../../src/chain/solana/program/accounts/Curve.js"
import { Topics } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { ingestionCaughtUp } from "../support/ingestion.js"
import { solanaEnv, startStandaloneSolana } from "../support/standaloneChains.js"
import { engineClient } from "../../clients/typescript/index.js"
import { publicReads } from "../support/typedReads.js"

const engines: Engine[] = []
const children: ChildProcess[] = []
afterAll(async () => {
  for (const e of engines) await e.stop("SIGKILL")
  for (const e of engines) e.cleanup()
  for (const c of children) c.kill("SIGTERM")
})

const start = async (options: Parameters<typeof startEngine>[0] = {}) => {
  const e = await startEngine({ readyTimeoutMs: 150_000, ...options, env: { LOCALNET_SLOT_MS: "100", ...options.env } })
  engines.push(e)
  return e
}

type Chain = "solana" | "hood"
interface MarketRecord {
  readonly mint: string
  readonly curveAddress: string
  readonly tradesTotal: number
  readonly lifecycle: string
  readonly migration: { readonly reserveRaw?: string }
}

const feed = async (engine: Engine, chain: Chain): Promise<ReadonlyArray<string>> => {
  const { data } = await engineClient({ baseUrl: engine.url }).GET("/api/v1/markets/feed", { params: { query: { bucket: "new", chain, limit: 50 } } })
  return ((data?.tokens ?? []) as Array<{ address: string }>).map((t) => t.address)
}

const market = async (engine: Engine, chain: Chain, mint: string): Promise<{ status: number; record?: MarketRecord }> => {
  const res = await publicReads(() => engine.url).market(chain, mint)
  const body = res.body as { market?: MarketRecord }
  return { status: res.status, ...(body.market === undefined ? {} : { record: body.market }) }
}

interface LocalnetFile {
  readonly solana: { readonly rpcUrl: string }
  readonly hood: { readonly rpcUrl: string; readonly chainId: number }
}
const localnets = (engine: Engine): LocalnetFile => JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as LocalnetFile

/** What the chain holds for a market: its trade count (and, on Solana, its quote reserve). */
const onChain = async (engine: Engine, chain: Chain, curve: string): Promise<{ trades: number; reserveRaw?: string }> => {
  const nets = localnets(engine)
  if (chain === "solana") {
    const info = await createSolanaRpc(nets.solana.rpcUrl).getAccountInfo(curve as never, { encoding: "base64", commitment: "confirmed" }).send()
    const c = decodeCurve(Buffer.from(info.value!.data[0], "base64"))!
    return { reserveRaw: c.realQuoteRaw.toString(), trades: Number(c.buyCount + c.sellCount) }
  }
  const pc = hoodPublicClient(hoodChain(nets.hood.chainId, nets.hood.rpcUrl), nets.hood.rpcUrl)
  const trades = await pc.getContractEvents({ address: curve as Address, abi: bondingCurveAbi, eventName: "Trade", fromBlock: 0n })
  return { trades: trades.length }
}

/**
 * What a crash leaves on the bus: events no consumer has committed. Copies of one market's events
 * (its creation first) are appended after everything the consumers committed.
 */
const plantUncommittedTail = (dataDir: string, key: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const bus = yield* EmbeddedBus.make({ dir: path.join(dataDir, "bus") })
        const partition = bus.partitionFor(Topics.chainEvents, key)
        const records = (yield* bus.read(Topics.chainEvents, partition, 0, 10_000)).filter((r) => r.key === key)
        yield* bus.publish(Topics.chainEvents, records.map((r) => ({ key: r.key, value: r.value })))
        return records.length
      })
    )
  )

const RESET_LINES = /the chain was reset|reorg deeper than the block window|chain reset:/

describe("embedded chains across restarts", () => {
  let dataDir = ""
  const before: Record<Chain, ReadonlyArray<string>> = { solana: [], hood: [] }

  it("continues both chains after SIGKILL: the same markets, in the state their chains hold", async () => {
    const first = await start()
    dataDir = first.dataDir
    // The simulation launches on both chains at once and trades every few hundred ms.
    await eventually(
      async () => {
        for (const chain of ["solana", "hood"] as const) before[chain] = await feed(first, chain)
        if (before.solana.length === 0 || before.hood.length === 0) return false
        const traded = await Promise.all([market(first, "solana", before.solana[0]!), market(first, "hood", before.hood[0]!)])
        return traded.every((m) => (m.record?.tradesTotal ?? 0) >= 2)
      },
      { what: "markets with trades on both chains", deadlineMs: 60_000, intervalMs: 250, detail: () => first.output().slice(-3000) }
    )
    await first.stop("SIGKILL") // mid-stream: the simulation is sending right now

    // --quiet: no new trades, so the markets can be compared with a chain that stands still.
    const second = await start({ dataDir, args: ["--quiet"] })
    const out = second.output()
    expect(out).toMatch(/solana localnet: continued the chain/)
    expect(out).toMatch(/hood localnet: continued the chain/)
    await ingestionCaughtUp(second, ["solana", "hood"])
    for (const chain of ["solana", "hood"] as const) {
      for (const mint of before[chain]) {
        const m = await market(second, chain, mint)
        expect(m.status, `${chain} ${mint}`).toBe(200)
        const held = await onChain(second, chain, m.record!.curveAddress)
        expect(m.record!.tradesTotal, `${chain} ${mint} trades`).toBe(held.trades)
        // The reserve is in the record while the curve trades (spec 2.9's migration block).
        if (held.reserveRaw !== undefined && m.record!.lifecycle === "trading") {
          expect(m.record!.migration.reserveRaw, `${chain} ${mint} reserve`).toBe(held.reserveRaw)
        }
      }
    }
    expect(second.output()).not.toMatch(RESET_LINES)
    expect((await second.stop("SIGTERM")).code).toBe(0)
  }, 240_000)

  it("rebuilds a chain's derived state when its chain is gone, saying so once per chain", async () => {
    expect(before.solana.length).toBeGreaterThan(0)
    expect(await plantUncommittedTail(dataDir, `solana:${before.solana[0]}`)).toBeGreaterThan(0)
    expect(await plantUncommittedTail(dataDir, `hood:${before.hood[0]}`)).toBeGreaterThan(0)
    rmSync(path.join(dataDir, "chains"), { recursive: true, force: true })
    const third = await start({ dataDir, args: ["--quiet"] })
    const out = third.output()
    expect(out.match(/Solana chain reset: /g)).toHaveLength(1)
    expect(out.match(/Hood chain reset: /g)).toHaveLength(1)
    expect(out).toMatch(/solana localnet: new chain/)
    await ingestionCaughtUp(third, ["solana", "hood"])
    for (const chain of ["solana", "hood"] as const) {
      expect(await feed(third, chain)).toEqual([])
      for (const mint of before[chain]) expect((await market(third, chain, mint)).status, `${chain} ${mint}`).toBe(404)
    }
  }, 240_000)
})

/** The standalone Solana localnet (its own process), on a genesis of its own. */
const solanaLocalnet = async (genesisSeed: string) => {
  const net = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100", LOCALNET_GENESIS_SEED: genesisSeed })
  children.push(net.child)
  return { child: net.child, env: solanaEnv(net.info) }
}

describe("a configured node on another chain", () => {
  it("refuses to start, naming RESET_CHAIN_STATE; with it set, rebuilds and starts", async () => {
    const a = await solanaLocalnet("chain-a")
    const first = await start({ env: a.env, args: ["--quiet"] })
    await ingestionCaughtUp(first, ["solana"])
    expect((await first.stop("SIGTERM")).code).toBe(0)
    a.child.kill("SIGTERM")

    const b = await solanaLocalnet("chain-b")
    const refused = await start({ dataDir: first.dataDir, env: b.env, args: ["--quiet"] }).then(
      () => undefined,
      (e: Error) => e.message
    )
    expect(refused).toMatch(/engine exited with 1 before ready/)
    expect(refused).toMatch(/the Solana node at \S+ follows another chain .* set RESET_CHAIN_STATE=solana to delete/)

    const rebuilt = await start({ dataDir: first.dataDir, env: { ...b.env, RESET_CHAIN_STATE: "solana" }, args: ["--quiet"] })
    expect(rebuilt.output().match(/Solana chain reset: /g)).toHaveLength(1)
    expect(rebuilt.output()).not.toMatch(/Hood chain reset/)
    await ingestionCaughtUp(rebuilt, ["solana"])
  }, 240_000)
})
