import { Effect, Fiber } from "effect"
import { describe, expect, it } from "@effect/vitest"
import type { Account, Chain, Hash, PublicClient } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { type HoodWallet, hoodWallet } from "../chain/hood/client/HoodClient.js"
import { ethUsdFeedAbi } from "../chain/hood/abi.generated.js"
import { GENESIS_ETH_USD_ANSWER } from "../chain/hood/localnet/Deploy.js"
import { ETH_USD_REPORTER_KEY } from "../chain/hood/localnet/DevAccounts.js"
import { publicClientOf, startHoodLocalnet } from "../chain/hood/localnet/testkit.js"
import { ETH_USD_UPDATE_GAS, postEthUsdAnswer, runEthUsdPublisher } from "./EthUsdPublisher.js"
import { runLooks } from "../../test/support/publisherLooks.js"

const account = privateKeyToAccount(ETH_USD_REPORTER_KEY)
const feed = "0x00000000000000000000000000000000000000f1" as const

/** Clients whose receipts say `reverted` for the posts whose numbers are in `revert`; notes each post's Clock time. */
const scriptedClients = (revert: ReadonlySet<number>) => {
  const posts: Array<number> = []
  let now = 0
  const wallet = {
    writeContract: () => {
      posts.push(now)
      return Promise.resolve(`0x${String(posts.length).padStart(64, "0")}` as Hash)
    }
  } as unknown as HoodWallet
  const publicClient = {
    waitForTransactionReceipt: ({ hash }: { hash: Hash }) => Promise.resolve({ status: revert.has(Number(BigInt(hash))) ? "reverted" : "success", transactionHash: hash })
  } as unknown as PublicClient
  return { clients: { publicClient, wallet, chain: { id: 31337 } as Chain, account: account as Account }, posts, setNow: (ms: number) => (now = ms) }
}

const options = { seed: 7, feed, intervalMs: 2_000, heartbeatMs: 15_000, move: false, startAnswer: GENESIS_ETH_USD_ANSWER }

describe("runEthUsdPublisher", () => {
  it.effect("a reverted update is not a post: the next look posts again, and the heartbeat counts from the successful one", () =>
    Effect.gen(function* () {
      const { clients, posts, setNow } = scriptedClients(new Set([1]))
      const fiber = yield* Effect.fork(runEthUsdPublisher(clients, options))
      yield* runLooks(setNow, 2_000, 10)
      yield* Fiber.interrupt(fiber)
      expect(posts).toEqual([0, 2_000, 18_000])
    })
  )

  it.effect(
    "on the Hood localnet, quiet: AnswerUpdated at start and then only at each heartbeat over 40 s of looks",
    () =>
      Effect.gen(function* () {
        const net = yield* Effect.promise(() => startHoodLocalnet())
        try {
          const ethUsdFeed = net.addresses.ethUsdFeed
          if (ethUsdFeed === undefined) throw new Error("the localnet deployed no ETH/USD feed")
          const publicClient = publicClientOf(net)
          const clients = { publicClient, wallet: hoodWallet(net.chain, account, net.rpcUrl), chain: net.chain, account }
          const from = yield* Effect.promise(() => publicClient.getBlockNumber())
          const fiber = yield* Effect.fork(runEthUsdPublisher(clients, { ...options, feed: ethUsdFeed }))
          yield* runLooks(() => undefined, 2_000, 20) // 21 looks: posts at 0, 16 and 32 s
          yield* Fiber.interrupt(fiber)
          const logs = yield* Effect.promise(() =>
            publicClient.getContractEvents({ address: ethUsdFeed, abi: ethUsdFeedAbi, eventName: "AnswerUpdated", fromBlock: from + 1n })
          )
          expect(logs.map((l) => l.args.current)).toEqual([GENESIS_ETH_USD_ANSWER, GENESIS_ETH_USD_ANSWER, GENESIS_ETH_USD_ANSWER])
        } finally {
          yield* Effect.promise(() => net.close())
        }
      }),
    120_000
  )

  it.effect(
    "a post mined in the second after the round it replaces lands (its fixed gas limit covers the write an estimate in the earlier second saw as a no-op)",
    () =>
      Effect.gen(function* () {
        const t0 = Date.now()
        let later = 0
        const net = yield* Effect.promise(() => startHoodLocalnet({ clockMs: () => t0 + later }))
        try {
          const ethUsdFeed = net.addresses.ethUsdFeed!
          const publicClient = publicClientOf(net)
          const clients = { publicClient, wallet: hoodWallet(net.chain, account, net.rpcUrl), chain: net.chain, account }
          const [, , , before] = yield* Effect.promise(() => publicClient.readContract({ address: ethUsdFeed, abi: ethUsdFeedAbi, functionName: "latestRoundData" }))
          later = 1_500
          yield* Effect.promise(() => postEthUsdAnswer(clients, ethUsdFeed, 312_345_678_901n))
          const [round, answer, , updatedAt] = yield* Effect.promise(() => publicClient.readContract({ address: ethUsdFeed, abi: ethUsdFeedAbi, functionName: "latestRoundData" }))
          expect([answer, updatedAt]).toEqual([312_345_678_901n, BigInt(Math.floor((t0 + 1_500) / 1000))])
          expect(updatedAt).not.toBe(before)
          expect(round).toBe(2n)
          const [log] = yield* Effect.promise(() => publicClient.getContractEvents({ address: ethUsdFeed, abi: ethUsdFeedAbi, eventName: "AnswerUpdated", fromBlock: 0n, args: { roundId: 2n } }))
          const receipt = yield* Effect.promise(() => publicClient.getTransactionReceipt({ hash: log!.transactionHash! }))
          expect(receipt.gasUsed < ETH_USD_UPDATE_GAS).toBe(true)
        } finally {
          yield* Effect.promise(() => net.close())
        }
      }),
    60_000
  )
})
