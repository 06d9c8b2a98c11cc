/**
 * The Hood localnet for real: a Hardhat (EDR) node in process on a real socket, with the stack
 * deployed. Pins what other components rely on: USDG at USDG_ADDRESS (account #0, nonce 0), every
 * deployment at its documented address, funded dev accounts, JSON-RPC over HTTP and WebSocket,
 * interval mining, snapshot/revert reorgs that change block hashes, and a clean stop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { createPublicClient, getAddress, webSocket, zeroAddress } from "viem"
import { USDG_ADDRESS } from "../../src/domain/QuotePairs.js"
import { curveFactoryAbi, feeSplitterAbi, nonfungiblePositionManagerAbi, usdgAbi } from "../../src/chain/hood/abi.generated.js"
import { expectedAddresses, GRADUATED_POOL_FEE, STREAMER_SHARE_BPS } from "../../src/chain/hood/localnet/Deploy.js"
import { DEV_ACCOUNT_BALANCE_WEI, DEV_ACCOUNT_USDG_RAW, devAccount } from "../../src/chain/hood/localnet/DevAccounts.js"
import { HOOD_LOCALNET_CHAIN_ID } from "../../src/chain/hood/localnet/HoodNode.js"
import { HoodLocalnet } from "../../src/chain/hood/localnet/LocalnetService.js"
import {
  hoodTestClient,
  mine,
  publicClientOf,
  reorg,
  revertTo,
  snapshot,
  startHoodLocalnet,
  type StartedHoodLocalnet
} from "../../src/chain/hood/localnet/testkit.js"
import { eventually } from "../support/eventually.js"

let net: StartedHoodLocalnet

beforeAll(async () => {
  net = await startHoodLocalnet()
})

afterAll(async () => {
  await net?.close()
})

describe("Hood localnet", () => {
  it("deploys USDG first from account #0, so it lands at USDG_ADDRESS, and everything else at its documented address", async () => {
    expect(devAccount(0).address).toBe("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266")
    expect(net.addresses.usdg).toBe(getAddress(USDG_ADDRESS))
    expect(net.addresses).toEqual(expectedAddresses(net.roles.deployer.address))
    const pc = publicClientOf(net)
    for (const [name, address] of Object.entries(net.addresses)) {
      const code = await pc.getCode({ address })
      expect(code?.length ?? 0, `${name} has code`).toBeGreaterThan(2)
    }
    expect(await pc.getChainId()).toBe(HOOD_LOCALNET_CHAIN_ID)
    expect(net.chainId).toBe(31337)
  })

  it("wires the factory, the fee splitter and Uniswap v3 together", async () => {
    const pc = publicClientOf(net)
    const { factory, feeSplitter, positionManager, usdg, weth9, uniswapV3Factory } = net.addresses
    const read = (functionName: "keeper" | "feeSplitter" | "positionManager" | "weth" | "stakerVault" | "poolFee" | "curveFeeBps") =>
      pc.readContract({ address: factory, abi: curveFactoryAbi, functionName })
    expect(await read("keeper")).toBe(net.roles.keeper.address)
    expect(await read("feeSplitter")).toBe(feeSplitter)
    expect(await read("positionManager")).toBe(positionManager)
    expect(await read("weth")).toBe(weth9)
    expect(await read("stakerVault")).toBe(net.roles.stakerVault.address)
    expect(await read("poolFee")).toBe(GRADUATED_POOL_FEE)
    expect(await read("curveFeeBps")).toBe(100)
    expect(await pc.readContract({ address: factory, abi: curveFactoryAbi, functionName: "quoteAllowed", args: [usdg] })).toBe(true)
    expect(await pc.readContract({ address: factory, abi: curveFactoryAbi, functionName: "quoteAllowed", args: [zeroAddress] })).toBe(true)
    expect(await pc.readContract({ address: feeSplitter, abi: feeSplitterAbi, functionName: "factory" })).toBe(factory)
    expect(await pc.readContract({ address: feeSplitter, abi: feeSplitterAbi, functionName: "treasury" })).toBe(net.roles.treasury.address)
    expect(await pc.readContract({ address: feeSplitter, abi: feeSplitterAbi, functionName: "streamerShareBps" })).toBe(STREAMER_SHARE_BPS)
    expect(await pc.readContract({ address: positionManager, abi: nonfungiblePositionManagerAbi, functionName: "factory" })).toBe(
      uniswapV3Factory
    )
    expect(await pc.readContract({ address: positionManager, abi: nonfungiblePositionManagerAbi, functionName: "WETH9" })).toBe(weth9)
  })

  it("funds every dev account with ETH and USDG", async () => {
    const pc = publicClientOf(net)
    expect(await pc.readContract({ address: net.addresses.usdg, abi: usdgAbi, functionName: "decimals" })).toBe(6)
    for (const a of net.accounts.slice(4)) {
      expect(await pc.getBalance({ address: a.address })).toBe(DEV_ACCOUNT_BALANCE_WEI)
      expect(await pc.readContract({ address: net.addresses.usdg, abi: usdgAbi, functionName: "balanceOf", args: [a.address] })).toBe(
        DEV_ACCOUNT_USDG_RAW
      )
    }
  })

  it("serves JSON-RPC over WebSocket on the same port", async () => {
    const ws = createPublicClient({ chain: net.chain, transport: webSocket(net.wsUrl, { retryCount: 0 }) })
    try {
      expect(await ws.getBlockNumber()).toBe(await publicClientOf(net).getBlockNumber())
    } finally {
      const transport = ws.transport as unknown as { getRpcClient?: () => Promise<{ close(): void }> }
      await transport.getRpcClient?.().then((c) => c.close())
    }
  })

  it("reorgs: after a revert, the same heights carry new hashes and the dropped blocks are gone", async () => {
    const tc = hoodTestClient(net)
    const pc = publicClientOf(net)
    const id = await snapshot(tc)
    const base = await pc.getBlockNumber()
    await mine(tc, 3)
    const old = await Promise.all([1n, 2n, 3n].map((d) => pc.getBlock({ blockNumber: base + d })))
    await reorg(tc, id, 2)
    expect(await pc.getBlockNumber()).toBe(base + 2n)
    const replaced = await Promise.all([1n, 2n].map((d) => pc.getBlock({ blockNumber: base + d })))
    replaced.forEach((b, i) => {
      expect(b.hash).not.toBe(old[i]!.hash)
      expect(b.number).toBe(old[i]!.number)
    })
    expect(replaced[0]!.parentHash).toBe((await pc.getBlock({ blockNumber: base })).hash)
    await expect(pc.getBlock({ blockNumber: base + 3n })).rejects.toThrow()
    // A snapshot is consumed by its revert: a second revert to it fails.
    await expect(revertTo(tc, id)).rejects.toThrow()
  })

  it("mines on an interval when asked, and the layer's scope stops the node", async () => {
    const scope = Effect.runSync(Scope.make())
    const other = Context.get(await Effect.runPromise(Layer.buildWithScope(HoodLocalnet.layer({ blockIntervalMs: 100 }), scope)), HoodLocalnet)
    const pc = publicClientOf(other)
    const start = await pc.getBlockNumber()
    await eventually(async () => (await pc.getBlockNumber()) >= start + 3n, { what: "three blocks mined on the interval", deadlineMs: 10_000, intervalMs: 50 })
    expect(await pc.getBlockNumber()).toBeGreaterThanOrEqual(start + 3n)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    await expect(fetch(other.rpcUrl, { method: "POST", body: "{}" })).rejects.toThrow()
  })
})
