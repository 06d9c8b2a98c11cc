/**
 * Where a Hood token trades now and what an exact input gets there, read from the chain: the curve
 * the factory created for it (its phase decides: trading on the curve, graduating, in recovery,
 * or migrated to its Uniswap v3 pool) and the fee splitter's creator share. Every read failure is
 * `chain_unavailable` (retryable), never a zero.
 */
import { Effect } from "effect"
import { type Address, getAddress, type PublicClient, zeroAddress } from "viem"
import { curveFactoryAbi, feeSplitterAbi, uniswapV3PoolAbi } from "../../../chain/hood/abi.generated.js"
import { readCurve } from "../../../chain/hood/client/HoodClient.js"
import type { HoodSender } from "../../../chain/hood/client/HoodSender.js"
import { quoteHoodPool, viemPoolSource } from "../HoodPoolQuote.js"
import { tradeError, type TradeError } from "../TradeError.js"
import { quoteVenue, type Side, type VenueQuote } from "../VenueQuote.js"
import type { HoodTradeVenue } from "./HoodTradeCalls.js"

export type HoodPriced =
  | {
      readonly _tag: "Quoted"
      readonly venue: HoodTradeVenue
      readonly curve: Address
      /** The Uniswap v3 pool once migrated, else null. */
      readonly pool: Address | null
      /** The pool's fee tier (pips) the router routes through; 0 on the curve. */
      readonly poolFee: number
      readonly quote: Exclude<VenueQuote, { _tag: "Need" }>
    }
  | {
      readonly _tag: "Closed"
      /** `hood_graduating` (complete, not migrated), `market_recovery`, `quote_unsupported` (a USDG pair), `too_deep`. */
      readonly reason: "hood_graduating" | "market_recovery" | "quote_unsupported" | "too_deep"
    }

/** The quote part of `HoodTradeChain` over its sender's reads, for the markets of `factory`. */
export const makeHoodQuote = (read: HoodSender<TradeError>["read"], pc: PublicClient, factory: Address) => {
  /** The curve the factory created for `mint`, or undefined (not launched here). */
  const curveOf = (mint: Address) =>
    Effect.map(
      read("curve lookup", (c) => c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "curveOf", args: [mint] })),
      (curve) => (curve === zeroAddress ? undefined : getAddress(curve))
    )

  /** The fee splitter's streamer share (the creator's part of a venue fee), in bps. */
  const creatorShareBps = Effect.map(
    read("streamer share", async (c) => {
      const splitter = await c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" })
      return c.readContract({ address: splitter, abi: feeSplitterAbi, functionName: "streamerShareBps" })
    }),
    (bps) => BigInt(bps)
  )

  /** Prices an exact input on the venue `mint` trades on now; undefined when it was not launched here. */
  const quote = (mint: Address, side: Side, amountInRaw: bigint): Effect.Effect<HoodPriced | undefined, TradeError> =>
    Effect.gen(function* () {
      const curve = yield* curveOf(mint)
      if (curve === undefined) return undefined
      const [snapshot, share] = yield* Effect.all([read("curve read", (c) => readCurve(c, curve)), creatorShareBps])
      if (snapshot.quoteToken !== zeroAddress) return { _tag: "Closed", reason: "quote_unsupported" } as const
      switch (snapshot.phase) {
        case "trading": {
          const q = quoteVenue({ _tag: "Curve", params: snapshot.params, state: snapshot.state, creatorShareBps: share }, side, amountInRaw)
          if (q._tag === "Need") return yield* tradeError("chain_unavailable", "the curve quote asked for a pool read", { retryable: true })
          return { _tag: "Quoted", venue: "svc-curve", curve, pool: null, poolFee: 0, quote: q } as const
        }
        case "completed":
          return { _tag: "Closed", reason: "hood_graduating" } as const
        case "recovery":
          return { _tag: "Closed", reason: "market_recovery" } as const
        case "migrated": {
          const pool = snapshot.pool
          if (pool === null) return { _tag: "Closed", reason: "hood_graduating" } as const
          const [q, fee] = yield* Effect.all([
            read("pool quote", () => quoteHoodPool(viemPoolSource(pc), { pool, token: mint, side, amountIn: amountInRaw, creatorShareBps: share })),
            read("pool fee", (c) => c.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "fee" }))
          ])
          if (q._tag === "TooDeep") return { _tag: "Closed", reason: "too_deep" } as const
          return { _tag: "Quoted", venue: "hood-dex", curve, pool, poolFee: Number(fee), quote: q.quote } as const
        }
      }
    })

  return { quote }
}
