/**
 * The Hood localnet's managed mining: block timestamps that follow the clock (driven here over
 * simulated minutes, no real waiting), and a chain kept in a directory that a restart continues
 * (same block 0, same blocks, same deployment; a torn last journal line dropped).
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Hex, parseEther } from "viem"
import { afterAll, describe, expect, it } from "vitest"
import { HOOD_JOURNAL_FILE } from "../../src/chain/hood/localnet/HoodStore.js"
import type { Eip1193Like } from "../../src/chain/hood/localnet/HoodNode.js"
import { startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

interface Block {
  readonly number: string
  readonly hash: Hex
  readonly timestamp: string
}

const block = async (p: Eip1193Like, tag: string): Promise<Block> => (await p.request({ method: "eth_getBlockByNumber", params: [tag, false] })) as Block

/** A signed ETH transfer from a trader, sent as raw bytes through the node's provider (what viem clients do). */
const transfer = async (net: StartedHoodLocalnet, from: number, nonce: number) => {
  const account = net.roles.traders[from]!.account
  const raw = await account.signTransaction({
    chainId: net.chainId,
    type: "eip1559",
    nonce,
    to: net.roles.treasury.address,
    value: parseEther("0.001"),
    gas: 21_000n,
    maxFeePerGas: 100_000_000_000n,
    maxPriorityFeePerGas: 1n
  })
  return (await net.provider.request({ method: "eth_sendRawTransaction", params: [raw] })) as Hex
}

const nonceOf = async (net: StartedHoodLocalnet, from: number) =>
  Number(BigInt((await net.provider.request({ method: "eth_getTransactionCount", params: [net.roles.traders[from]!.address, "latest"] })) as string))

describe("Hood localnet block timestamps", () => {
  it("never run ahead of the clock over five simulated minutes of busy blocks, and keep up with it", async () => {
    let now = Date.UTC(2026, 0, 1)
    const net = await startHoodLocalnet({ clockMs: () => now })
    try {
      const miner = net.node.miner!
      let nonce = await nonceOf(net, 0)
      for (let second = 0; second < 300; second++) {
        // Four transactions and an interval block in each simulated second: EDR's own clock gives
        // every block a second of its own, so it would run five times faster than this one.
        for (let i = 0; i < 4; i++) {
          now += 200
          await transfer(net, 0, nonce++)
        }
        now += 200
        await miner.mineEmpty()
        const latest = await block(net.provider, "latest")
        expect(Number(BigInt(latest.timestamp))).toBeLessThanOrEqual(Math.floor(now / 1000))
      }
      expect(Number(BigInt((await block(net.provider, "latest")).timestamp))).toBe(Math.floor(now / 1000))
    } finally {
      await net.close()
    }
  }, 120_000)
})

describe("Hood localnet kept in a directory", () => {
  it("continues the same chain after a restart, without deploying again", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "hood-persist-"))
    dirs.push(dir)
    let now = Date.UTC(2026, 0, 1)
    const first = await startHoodLocalnet({ dataDir: dir, clockMs: () => now })
    const hashes: Hex[] = []
    for (let i = 0; i < 5; i++) {
      now += 700
      hashes.push(await transfer(first, 1, await nonceOf(first, 1)))
    }
    await first.node.miner!.mineEmpty()
    const genesis = await block(first.provider, "0x0")
    const latest = await block(first.provider, "latest")
    await expect(first.provider.request({ method: "evm_snapshot" })).rejects.toThrow(/not available on this node/)
    await first.close()
    appendFileSync(path.join(dir, HOOD_JOURNAL_FILE), "12345678 {\"op\":\"tx\",\"ts\":") // torn by a crash

    now += 60_000
    const second = await startHoodLocalnet({ dataDir: dir, clockMs: () => now })
    try {
      expect(second.addresses).toEqual(first.addresses)
      expect(await block(second.provider, "0x0")).toEqual(genesis)
      expect(await block(second.provider, latest.number)).toEqual(latest)
      expect(await block(second.provider, "latest")).toEqual(latest) // nothing was deployed again
      for (const h of hashes) {
        const receipt = (await second.provider.request({ method: "eth_getTransactionReceipt", params: [h] })) as { status: string }
        expect(receipt.status).toBe("0x1")
      }
      // The chain goes on: the next nonce, a block stamped by the clock.
      await transfer(second, 1, await nonceOf(second, 1))
      const next = await block(second.provider, "latest")
      expect(BigInt(next.number)).toBe(BigInt(latest.number) + 1n)
      expect(Number(BigInt(next.timestamp))).toBe(Math.floor(now / 1000))
    } finally {
      await second.close()
    }
  }, 120_000)
})
