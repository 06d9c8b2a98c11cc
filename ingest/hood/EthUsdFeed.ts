/**
 * Follows an AggregatorV3-style ETH/USD feed on Hood (the localnet's `EthUsdFeed`, or a Chainlink
 * aggregator on a real node) by polling `latestRoundData` every `pollIntervalMs`, and keeps the
 * latest round for the price source (`src/services/prices/OraclePrice.ts` judges its age and sign).
 * Polling rather than following `AnswerUpdated` logs: one `eth_call` a second is cheaper than a log
 * subscription for one value, works against any aggregator (proxies emit no logs), and needs no
 * reorg handling (a read at the head simply follows the head).
 * A round counts as trading when it was answered in the round it reports (`answeredInRound ≥
 * roundId`) and has an update time. A read older than one already held (a lower round) is ignored.
 * Bounds: one read in flight, each with a `timeoutMs` deadline; a failed read keeps the last round
 * (its age then makes it stale) and is logged at debug level.
 */
import { type Address, type PublicClient } from "viem"
import { Duration, Effect, Schedule } from "effect"
import { ethUsdFeedAbi } from "../../src/chain/hood/abi.generated.js"
import type { OracleFeed, OracleObservation } from "../../src/domain/OracleObservation.js"

/** How often the feed reads `latestRoundData` unless told (`pollIntervalMs`). */
export const ETH_USD_FEED_POLL_MS = 1_000

export interface EthUsdFeedOptions {
  readonly client: PublicClient
  readonly address: Address
  /** Default 1 s. */
  readonly pollIntervalMs?: number
  /** Deadline of one read (default 2 s). */
  readonly timeoutMs?: number
}

export interface LatestRound {
  readonly roundId: bigint
  readonly answer: bigint
  readonly updatedAt: bigint
  readonly answeredInRound: bigint
}

/** A round as the price source's observation. Pure. */
export const roundObservation = (r: LatestRound, decimals: number): OracleObservation => ({
  price: r.answer,
  conf: 0n,
  exponent: -decimals,
  publishTimeMs: Number(r.updatedAt) * 1000,
  trading: r.updatedAt > 0n && r.answeredInRound >= r.roundId
})

export const ethUsdFeed = (o: EthUsdFeedOptions): { readonly feed: OracleFeed; readonly run: Effect.Effect<never> } => {
  let held: { readonly roundId: bigint; readonly observation: OracleObservation } | undefined
  let decimals: number | undefined
  const timeout = Duration.millis(o.timeoutMs ?? 2_000)
  const read = Effect.gen(function* () {
    if (decimals === undefined) {
      decimals = yield* Effect.tryPromise(() => o.client.readContract({ address: o.address, abi: ethUsdFeedAbi, functionName: "decimals" })).pipe(Effect.timeout(timeout))
    }
    const [roundId, answer, , updatedAt, answeredInRound] = yield* Effect.tryPromise(() =>
      o.client.readContract({ address: o.address, abi: ethUsdFeedAbi, functionName: "latestRoundData" })
    ).pipe(Effect.timeout(timeout))
    if (held !== undefined && roundId < held.roundId) return
    held = { roundId, observation: roundObservation({ roundId, answer, updatedAt, answeredInRound }, decimals) }
  }).pipe(Effect.catchAll((e) => Effect.logDebug(`ETH/USD feed ${o.address}: read failed`, String(e))))
  const run = read.pipe(Effect.repeat(Schedule.spaced(Duration.millis(o.pollIntervalMs ?? ETH_USD_FEED_POLL_MS))), Effect.flatMap(() => Effect.never))
  return { feed: { name: `aggregator:${o.address}`, latest: () => held?.observation }, run }
}
