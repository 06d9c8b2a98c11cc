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
 *
 * A post carries a fixed gas limit (`ETH_USD_UPDATE_GAS`), as the engine's own Hood rails do: the
 * feed stamps its round with `block.timestamp`, so an estimate taken against a pending block of
 * the same second as the last round (the write a no-op) falls 2,800 gas short when the post is
 * mined a second later, and the receipt says `reverted` (out of gas).
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

/** `updateAnswer`'s gas limit: the heaviest post (every slot rewritten with a new value) uses 38,424. */
export const ETH_USD_UPDATE_GAS = 60_000n

type Clients = { readonly publicClient: PublicClient; readonly wallet: HoodWallet; readonly chain: Chain; readonly account: Account }

/** Posts one answer and waits for its receipt; throws unless it landed with `success` (a reverted update left the answer as it was). */
export const postEthUsdAnswer = async (clients: Clients, feed: Address, answer: bigint): Promise<void> => {
  const hash = await clients.wallet.writeContract({ address: feed, abi: ethUsdFeedAbi, functionName: "updateAnswer", args: [answer], chain: clients.chain, account: clients.account, gas: ETH_USD_UPDATE_GAS })
  const receipt = await clients.publicClient.waitForTransactionReceipt({ hash, timeout: 30_000 })
  if (receipt.status !== "success") throw new Error(`updateAnswer reverted in ${hash}`)
}

export const runEthUsdPublisher = (clients: Clients, o: EthUsdPublisherOptions) =>
  publishLoop(o.startAnswer, o, "ETH/USD reporter: post failed", (answer) => postEthUsdAnswer(clients, o.feed, answer)).pipe(Effect.withRandom(Random.make(o.seed + 1)))
