/**
 * The counterparties of a wallet's book legs (spec 4.5 `book-legs`, Max): the other wallets its
 * trades were matched with, each with how many legs, how many distinct tokens and the volume of
 * its own legs per quote asset; the most legs first, then by address. Pure over the legs read.
 */
import type { BookLeg } from "../../../clickhouse/queries/WalletReads.js"
import { QuoteTotals } from "../prices/Money.js"
import type { TradedToken } from "./WalletFigures.js"

export interface Counterparty {
  readonly wallet: string
  readonly legs: number
  readonly tokens: number
  readonly volume: QuoteTotals
}

export const counterparties = (legs: ReadonlyArray<BookLeg>, tokenOf: (mint: string) => TradedToken): ReadonlyArray<Counterparty> => {
  const byWallet = new Map<string, { legs: number; readonly tokens: Set<string>; readonly volume: QuoteTotals }>()
  for (const { other } of legs) {
    let e = byWallet.get(other.trader)
    if (e === undefined) {
      e = { legs: 0, tokens: new Set(), volume: new QuoteTotals() }
      byWallet.set(other.trader, e)
    }
    e.legs++
    e.tokens.add(other.mint)
    const t = tokenOf(other.mint)
    e.volume.add(t.pair, t.price, other.volumeQuoteRaw)
  }
  return [...byWallet]
    .sort(([wa, a], [wb, b]) => b.legs - a.legs || (wa < wb ? -1 : wa > wb ? 1 : 0))
    .map(([wallet, e]) => ({ wallet, legs: e.legs, tokens: e.tokens.size, volume: e.volume }))
}
