/**
 * A wallet's figures from its replayed positions (`AverageCost.replayLedgers`): the period's
 * statistics (trades, volume, realized P&L, win rate) and its portfolio (the positions still held,
 * valued at the tokens' spot reserves, largest USD value first). Pure; amounts stay raw and are
 * totalled per quote asset (`QuoteTotals`), never added across assets except in USD.
 *
 * Win rate (docs/decisions: wallet reads): a token counts as closed when it had a sell in the
 * period and as a win when its realized P&L there is positive; the rate is wins / closed in basis
 * points, floored, and null when nothing closed.
 */
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import type { QuotePair } from "../../domain/QuotePairs.js"
import { QuoteTotals, usdMicrosOf } from "../prices/Money.js"
import type { UsdPrice } from "../prices/PriceSource.js"
import { type Ledger, spotValueRaw } from "./AverageCost.js"

/** What the index knows of a traded token: its market (undefined when unknown), quote asset and price. */
export interface TradedToken {
  readonly core: MarketCore | undefined
  readonly pair: QuotePair | undefined
  readonly price: UsdPrice | null
}

export interface WalletStats {
  readonly trades: number
  readonly buys: number
  readonly sells: number
  /** Tokens with a trade in the period. */
  readonly tokensTraded: number
  /** Tokens with a sell in the period. */
  readonly tokensClosed: number
  readonly wins: number
  /** Traded tokens whose quote asset is unknown (left out of the totals). */
  readonly unknownTokens: number
  readonly volume: QuoteTotals
  readonly realized: QuoteTotals
}

/** The period's statistics over the ledgers (those with a trade in the period). */
export const walletStats = (ledgers: ReadonlyMap<string, Ledger>, tokenOf: (mint: string) => TradedToken): WalletStats => {
  const volume = new QuoteTotals()
  const realized = new QuoteTotals()
  let trades = 0
  let buys = 0
  let sells = 0
  let tokensTraded = 0
  let tokensClosed = 0
  let wins = 0
  let unknownTokens = 0
  for (const [mint, l] of ledgers) {
    if (!l.active) continue
    const t = tokenOf(mint)
    if (t.pair === undefined) unknownTokens++
    tokensTraded++
    trades += l.buys + l.sells
    buys += l.buys
    sells += l.sells
    volume.add(t.pair, t.price, l.volumeRaw)
    if (l.closed) {
      tokensClosed++
      if (l.realizedRaw > 0n) wins++
      realized.add(t.pair, t.price, l.realizedRaw)
    }
  }
  return { trades, buys, sells, tokensTraded, tokensClosed, wins, unknownTokens, volume, realized }
}

/** wins / closed in basis points, floored; null when nothing closed. */
export const winRateBps = (wins: number, closed: number): number | null => (closed === 0 ? null : Math.floor((wins * 10_000) / closed))

export interface Holding {
  readonly mint: string
  readonly ledger: Ledger
  readonly token: TradedToken
  /** `ledger.heldRaw` at the spot reserves (raw quote units, floored; 0 without a price). */
  readonly valueRaw: bigint
}

export interface Portfolio {
  /** The positions held, the largest USD value first (unpriced last), then by address. */
  readonly holdings: ReadonlyArray<Holding>
  readonly value: QuoteTotals
  readonly cost: QuoteTotals
}

/** The positions still held (`heldRaw > 0`), valued at spot. */
export const walletPortfolio = (ledgers: ReadonlyMap<string, Ledger>, tokenOf: (mint: string) => TradedToken): Portfolio => {
  const value = new QuoteTotals()
  const cost = new QuoteTotals()
  const rows: Array<Holding & { readonly usdMicros: bigint }> = []
  for (const [mint, ledger] of ledgers) {
    if (ledger.heldRaw <= 0n) continue
    const token = tokenOf(mint)
    const valueRaw = spotValueRaw(token.core, ledger.heldRaw)
    value.add(token.pair, token.price, valueRaw)
    cost.add(token.pair, token.price, ledger.costRaw)
    const usdMicros = token.core === undefined ? null : usdMicrosOf(valueRaw, token.core.identity.quoteDecimals, token.price)
    rows.push({ mint, ledger, token, valueRaw, usdMicros: usdMicros ?? -1n })
  }
  rows.sort((a, b) => (b.usdMicros > a.usdMicros ? 1 : b.usdMicros < a.usdMicros ? -1 : a.mint < b.mint ? -1 : a.mint > b.mint ? 1 : 0))
  return { holdings: rows, value, cost }
}

/** The tokens traded in the period (`active`), the most recently traded first, then by address. */
export const tradedInPeriod = (ledgers: ReadonlyMap<string, Ledger>): Array<readonly [mint: string, ledger: Ledger]> => {
  const out: Array<readonly [string, Ledger]> = []
  for (const entry of ledgers) if (entry[1].active) out.push(entry)
  return out.sort(([ma, a], [mb, b]) => b.lastMs - a.lastMs || (ma < mb ? -1 : ma > mb ? 1 : 0))
}
