/**
 * The embedded Hood localnet's ETH/USD reporter: looks at the answer every `intervalMs` and calls
 * `EthUsdFeed.updateAnswer` from the reporter account (the feed's publisher, which nothing else
 * sends from), as an aggregator's reporters keep a feed fresh. With `move` (the simulation runs)
 * the answer takes the same seeded, bounded random walk as Solana's SOL/USD
 * (`PythPublisher.walkPrice`); without it it never moves. As an aggregator's deviation-or-heartbeat
 * rule: a moved answer is posted at once, an unchanged one only when `heartbeatMs` has passed
 * since the last post (`PythPublisher.postDue`; the loop is `PythPublisher.publishLoop`). Bounded: one transaction in flight, waited for by
 * receipt; a post counts once its receipt says success (a reverted one left the answer as it
 * was); a failed post is logged at debug level and retried at the next look.
 */
import { type Account, type Address, type Chain, type PublicClient } from "viem"
import { Effect, Random } from "effect"
import { ethUsdFeedAbi } from "../chain/hood/abi.generated.js"
import type { HoodWallet } from "../chain/hood/client/HoodClient.js"
import { publishLoop } from "./PythPublisher.js"

export interface EthUsdPublisherOptions {
  readonly seed: number
  readonly feed: Address
  readonly intervalMs: number
  /** An unchanged answer is posted again once this long has passed since the last post (at the next look). */
  readonly heartbeatMs: number
  readonly move: boolean
  readonly startAnswer: bigint
  readonly stepBps?: number
}

export const runEthUsdPublisher = (clients: { readonly publicClient: PublicClient; readonly wallet: HoodWallet; readonly chain: Chain; readonly account: Account }, o: EthUsdPublisherOptions) =>
  publishLoop(o.startAnswer, o, "ETH/USD reporter: post failed", async (answer) => {
    const hash = await clients.wallet.writeContract({ address: o.feed, abi: ethUsdFeedAbi, functionName: "updateAnswer", args: [answer], chain: clients.chain, account: clients.account })
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 })
    // A reverted update left the answer as it was: not a post.
    if (receipt.status !== "success") throw new Error(`updateAnswer reverted in ${hash}`)
  }).pipe(Effect.withRandom(Random.make(o.seed + 1)))
