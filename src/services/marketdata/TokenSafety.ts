/**
 * A token's safety facts (docs/decisions: token reads): who holds how much of the supply and what
 * the creator did, from the token's positions (built from its trades), and whether the market
 * trades now (spec 3.6, through `tradeFlags`). Pure; the read formats the amounts.
 *
 * Flags, each raised strictly past its threshold: the creator holds over 20% of the supply, the
 * ten largest holders over 50%, the creator sold, the market is in recovery, the curve completed
 * and is graduating (not tradable).
 */
import { type MarketCore, tradeFlags } from "../../../actors/market/MarketActor.js"
import type { CurveMode } from "../../../ingest/ChainEvent.js"

/** Creator holdings past this share of the supply (bps) raise `creator_holds_over_20pct`. */
export const SAFETY_CREATOR_BPS = 2_000
/** Top-10 holdings past this share of the supply (bps) raise `top10_hold_over_50pct`. */
export const SAFETY_TOP10_BPS = 5_000
/** How many of the largest holders `top10HeldBps` adds up. */
export const SAFETY_TOP_HOLDERS = 10

export type SafetyFlag = "creator_holds_over_20pct" | "top10_hold_over_50pct" | "creator_sold" | "market_in_recovery" | "graduating_not_tradable"

/** `part / whole` in basis points, floored; 0 when `whole` is not positive. */
export const shareBps = (part: bigint, whole: bigint): number => (whole <= 0n ? 0 : Number((part * 10_000n) / whole))

/** What the safety facts read of a position. */
export interface HolderPosition {
  readonly heldRaw: bigint
  readonly boughtRaw: bigint
  readonly soldRaw: bigint
}

export interface TokenSafety {
  readonly mode: CurveMode
  readonly buysOpen: boolean
  readonly sellsOpen: boolean
  /** Wallets holding the token. */
  readonly holders: number
  readonly top10HeldBps: number
  readonly creatorHeldBps: number
  readonly creatorBoughtRaw: bigint
  readonly creatorSoldRaw: bigint
  readonly flags: ReadonlyArray<SafetyFlag>
}

/**
 * The safety facts of `core`, given its largest holders (largest first; the first ten count), how
 * many wallets hold it, and the creator's position (undefined when the creator never traded).
 */
export const tokenSafety = (
  core: MarketCore,
  largestHolders: ReadonlyArray<Pick<HolderPosition, "heldRaw">>,
  holderCount: number,
  creator: HolderPosition | undefined
): TokenSafety => {
  const supply = core.params.supplyRaw
  let top10 = 0n
  for (let i = 0; i < largestHolders.length && i < SAFETY_TOP_HOLDERS; i++) top10 += largestHolders[i]!.heldRaw
  const creatorHeldBps = shareBps(creator?.heldRaw ?? 0n, supply)
  const top10HeldBps = shareBps(top10, supply)
  const flags: Array<SafetyFlag> = []
  if (creatorHeldBps > SAFETY_CREATOR_BPS) flags.push("creator_holds_over_20pct")
  if (top10HeldBps > SAFETY_TOP10_BPS) flags.push("top10_hold_over_50pct")
  if (creator !== undefined && creator.soldRaw > 0n) flags.push("creator_sold")
  if (core.lifecycle === "recovery") flags.push("market_in_recovery")
  if (core.lifecycle === "completed") flags.push("graduating_not_tradable")
  const { buysOpen, sellsOpen } = tradeFlags(core.lifecycle)
  return {
    mode: core.identity.mode,
    buysOpen,
    sellsOpen,
    holders: holderCount,
    top10HeldBps,
    creatorHeldBps,
    creatorBoughtRaw: creator?.boughtRaw ?? 0n,
    creatorSoldRaw: creator?.soldRaw ?? 0n,
    flags
  }
}
