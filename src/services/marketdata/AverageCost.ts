/**
 * Average-cost P&L: a wallet's positions replayed over its trades (`replayLedgers`), and the
 * realized / unrealized split of one aggregated position (`positionPnl`). Pure; raw `bigint`
 * amounts only (the reads format them).
 *
 * The rule (docs/decisions: wallet P&L): a buy adds its tokens and what it paid to the position; a
 * sell takes out its tokens (at most those held) with their share of the cost, floored, and
 * realizes `received - that cost`. Tokens sold beyond those held (received by transfer, say) carry
 * no cost. A period counts the sells inside it, each against the cost built up over the whole
 * history before it.
 *
 * Invariants (property-tested in AverageCost.test.ts), per token:
 * - conservation: the cost still held plus the cost taken out by every sell equals what the buys
 *   paid; with a period covering the whole history, `realizedRaw = receivedRaw - costTakenOut`;
 * - `0 <= heldRaw`, `0 <= costRaw`, and `costRaw = 0` whenever `heldRaw = 0`;
 * - for a position split by `positionPnl`: `realized + unrealized = received + value - spent`.
 */
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { priceReserves } from "../../../actors/market/MarketRecord.js"
import type { WalletTrade } from "../../../clickhouse/queries/WalletReads.js"

/** What the replay reads of a trade. */
export type LedgerTrade = Pick<WalletTrade, "mint" | "side" | "tokenRaw" | "quoteRaw" | "volumeQuoteRaw" | "atMs">

/** One token's position replayed by average cost. */
export interface Ledger {
  /** Tokens held now (bought minus those sold out of the position). */
  heldRaw: bigint
  /** The average cost of `heldRaw`: what the buys paid, less the cost taken out by sells. */
  costRaw: bigint
  // The period's figures (trades at or after `sinceMs`):
  boughtRaw: bigint
  soldRaw: bigint
  spentRaw: bigint
  receivedRaw: bigint
  volumeRaw: bigint
  realizedRaw: bigint
  buys: number
  sells: number
  firstMs: number
  lastMs: number
  /** Whether the token had a sell in the period. */
  closed: boolean
  /** Whether the token had any trade in the period. */
  active: boolean
}

const minBig = (a: bigint, b: bigint) => (a < b ? a : b)

const emptyLedger = (): Ledger => ({
  heldRaw: 0n,
  costRaw: 0n,
  boughtRaw: 0n,
  soldRaw: 0n,
  spentRaw: 0n,
  receivedRaw: 0n,
  volumeRaw: 0n,
  realizedRaw: 0n,
  buys: 0,
  sells: 0,
  firstMs: 0,
  lastMs: 0,
  closed: false,
  active: false
})

/** Replays trades (oldest first), by token; the period's figures count only trades at or after `sinceMs` (all when undefined). */
export const replayLedgers = (trades: ReadonlyArray<LedgerTrade>, sinceMs: number | undefined): Map<string, Ledger> => {
  const out = new Map<string, Ledger>()
  for (const t of trades) {
    let l = out.get(t.mint)
    if (l === undefined) {
      l = emptyLedger()
      out.set(t.mint, l)
    }
    const inPeriod = sinceMs === undefined || t.atMs >= sinceMs
    if (t.side === "buy") {
      l.heldRaw += t.tokenRaw
      l.costRaw += t.quoteRaw
    } else {
      const matched = minBig(t.tokenRaw, l.heldRaw)
      const costOut = l.heldRaw === 0n ? 0n : (l.costRaw * matched) / l.heldRaw
      l.costRaw -= costOut
      l.heldRaw -= matched
      if (inPeriod) {
        l.realizedRaw += t.quoteRaw - costOut
        l.closed = true
      }
    }
    // Cost with no tokens left to carry it (a buy that received 0 tokens while nothing was held,
    // e.g. one too small to fill a single raw unit) is a loss taken at once, not a cost held
    // forever against an empty position.
    if (l.heldRaw === 0n && l.costRaw > 0n) {
      if (inPeriod) l.realizedRaw -= l.costRaw
      l.costRaw = 0n
    }
    if (!inPeriod) continue
    if (!l.active) l.firstMs = t.atMs
    l.active = true
    l.lastMs = t.atMs
    l.volumeRaw += t.volumeQuoteRaw
    if (t.side === "buy") {
      l.buys++
      l.boughtRaw += t.tokenRaw
      l.spentRaw += t.quoteRaw
    } else {
      l.sells++
      l.soldRaw += t.tokenRaw
      l.receivedRaw += t.quoteRaw
    }
  }
  return out
}

/** Value of `heldRaw` at the token's spot reserves, floored (raw quote units); 0 for an unknown token or one without a price. */
export const spotValueRaw = (core: MarketCore | undefined, heldRaw: bigint): bigint => {
  if (core === undefined) return 0n
  const r = priceReserves(core)
  return r.tokenRaw <= 0n ? 0n : (heldRaw * r.quoteRaw) / r.tokenRaw
}

/** A wallet's aggregated position on one token (the figures of `TokenReads.Position` it needs). */
export interface PositionTotals {
  readonly boughtRaw: bigint
  readonly soldRaw: bigint
  readonly spentQuoteRaw: bigint
  readonly receivedQuoteRaw: bigint
  /** What is held, valued at the spot price. */
  readonly valueQuoteRaw: bigint
}

export interface PositionPnl {
  /** received - the cost of the tokens sold at the average buy cost. */
  readonly realizedRaw: bigint
  /** held value - the cost of what is held. */
  readonly unrealizedRaw: bigint
}

/**
 * Splits an aggregated position's P&L by average cost: the tokens sold carry their share of what
 * was spent (tokens sold beyond those bought carry no cost), floored.
 */
export const positionPnl = (p: PositionTotals): PositionPnl => {
  const costSold = p.boughtRaw === 0n ? 0n : (p.spentQuoteRaw * minBig(p.soldRaw, p.boughtRaw)) / p.boughtRaw
  return { realizedRaw: p.receivedQuoteRaw - costSold, unrealizedRaw: p.valueQuoteRaw - (p.spentQuoteRaw - costSold) }
}
