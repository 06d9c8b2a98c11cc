/**
 * Which venue a market trades on now, from the engine's index (`MarketCore`), for the agent quote
 * (issue 28; launch spec 2.9 and 3.6):
 * - `trading`: the bonding curve, at its latest reserves;
 * - `migrated` on Solana: the svc-curve pool, at the reserves of its latest swap (or migration);
 * - `migrated` on Hood: the Uniswap v3 pool (`dexPool`), whose state the caller reads from the
 *   chain (see HoodPoolQuote: the index's virtual reserves cannot reproduce v3 to the unit);
 * - `completed` and `recovery`: nowhere; the refusal names where trading continues.
 * Pure.
 */
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { curveParamsOf } from "../../../actors/market/MarketRecord.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { graduationVenueOf } from "../../domain/Chain.js"
import type { VenueState } from "./VenueQuote.js"

/** The creator's share of a venue fee per chain, in bps (svc-curve's config, the Hood fee splitter's streamer share). */
export type CreatorShares = Readonly<Record<ChainId, bigint>>

export type MarketVenue =
  | { readonly _tag: "Local"; readonly state: VenueState }
  | { readonly _tag: "HoodPool"; readonly pool: string }
  | {
      readonly _tag: "Closed"
      /** The market record's `trade.reason` (`solana_graduating`, `hood_graduating`, `migration_delayed`, `market_recovery`) or `pool_unknown`. */
      readonly reason: string
      /** Where trading continues (null for recovery: the claim flow only). */
      readonly tradingContinues: { readonly venue: string; readonly afterMigration: boolean } | null
    }

export const marketVenueOf = (core: MarketCore, shares: CreatorShares): MarketVenue => {
  const graduation = graduationVenueOf(core.chain, core.identity.dexVersion ?? undefined)
  switch (core.lifecycle) {
    case "trading":
      return { _tag: "Local", state: { _tag: "Curve", params: curveParamsOf(core), state: core.curveState, creatorShareBps: shares[core.chain] } }
    case "migrated": {
      const pool = core.pool
      if (pool === null) return { _tag: "Closed", reason: "pool_unknown", tradingContinues: { venue: graduation, afterMigration: false } }
      if (core.chain === "solana") {
        return {
          _tag: "Local",
          state: {
            _tag: "SolanaPool",
            reserves: { quoteReserveRaw: pool.quoteReserveRaw, tokenReserveRaw: pool.tokenReserveRaw },
            fees: { feeBps: BigInt(pool.feeBps), creatorFeeBps: BigInt(core.params.creatorFeeBps) }
          }
        }
      }
      return pool.dexPool === undefined
        ? { _tag: "Closed", reason: "pool_unknown", tradingContinues: { venue: graduation, afterMigration: false } }
        : { _tag: "HoodPool", pool: pool.dexPool }
    }
    case "completed":
      return {
        _tag: "Closed",
        reason: core.migration.status === "delayed" ? "migration_delayed" : core.chain === "solana" ? "solana_graduating" : "hood_graduating",
        tradingContinues: { venue: graduation, afterMigration: true }
      }
    case "recovery":
      return { _tag: "Closed", reason: "market_recovery", tradingContinues: null }
  }
}
