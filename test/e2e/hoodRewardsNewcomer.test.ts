/**
 * A newcomer's Hood staking rewards in embedded mode with the simulation on (no `--quiet`): the
 * local account stakes once from its embedded wallet at start, the Hood simulation pushes some of
 * its curves across their threshold, the keeper migrates them, and the distributor splits each
 * one's staker allocation; the local account (the only staker) sees each as a Hood reward in its
 * positions, the token's whole staker allocation as the chain reports it.
 */
import { getAddress } from "viem"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bondingCurveAbi, curveFactoryAbi } from "../../src/chain/hood/abi.generated.js"
import { hoodPublicClient } from "../../src/chain/hood/client/HoodClient.js"
import { hoodChain } from "../../src/chain/hood/localnet/Deploy.js"
import { LOCAL_STAKE_RAW } from "../../src/sim/LocalFunding.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"

let engine: Engine
let key: string
const agentApi = agentClient(
  () => engine.url,
  () => key
)
const positions = async () => answered(await agentApi().GET("/api/v1/agent/staking"))

beforeAll(async () => {
  engine = await startEngine({ env: { LOCALNET_SLOT_MS: "100", MIGRATION_SWEEP_INTERVAL_MS: "1000" }, readyTimeoutMs: 150_000 })
  key = localCredentials(engine.dataDir).agentKey
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

describe("a newcomer's Hood staking rewards (embedded mode, simulation on)", () => {
  it("the local account stakes once and sees a Hood reward for a simulated graduation, the whole staker allocation", async () => {
    const main = await eventually(async () => {
      const p = await positions()
      const w = (p.body.wallets as Array<{ payer: string; amountRaw: string }> | undefined)?.find((x) => x.payer === "main")
      return w !== undefined && BigInt(w.amountRaw) > 0n ? w : undefined
    }, { what: "the local account's stake", deadlineMs: 60_000, intervalMs: 500, detail: () => engine.output().slice(-3000) })
    expect(BigInt(main.amountRaw)).toBe(LOCAL_STAKE_RAW)
    const reward = await eventually(async () => {
      const p = await positions()
      return (p.body.wallets as Array<{ unclaimedRewards: Array<Record<string, string>> }>).flatMap((w) => w.unclaimedRewards).find((r) => r.rewardId?.startsWith("hood-") === true)
    }, { what: "a Hood reward from a simulated graduation", deadlineMs: 420_000, intervalMs: 2_000, detail: () => engine.output().slice(-3000) })
    const nets = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { hood: { rpcUrl: string; chainId: number; addresses: { factory: `0x${string}` } } }
    const pc = hoodPublicClient(hoodChain(nets.hood.chainId, nets.hood.rpcUrl), nets.hood.rpcUrl)
    const curve = await pc.readContract({ address: nets.hood.addresses.factory, abi: curveFactoryAbi, functionName: "curveOf", args: [getAddress(reward.mint!)] })
    const allocation = await pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "stakerAllocation" })
    expect(reward).toMatchObject({ amountRaw: allocation.toString(), claiming: false })
    expect(reward.mint).toMatch(/^0x[0-9a-f]{40}$/)
  }, 600_000)
})
