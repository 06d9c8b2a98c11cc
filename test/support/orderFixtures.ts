/**
 * Limit-order fixtures the orders suites share: a price scaled exactly (bigint, E18), a limit sell
 * placed a fraction above the market's price now, and the ids a process's books hold.
 */
import { formatPriceE18, type Price } from "../../actors/orders/OrderBook.js"
import type { OrderBooks } from "../../actors/orders/OrderBooks.js"
import type { NewOrder } from "../../src/services/orders/OrderStore.js"
import type { SimMarket } from "./marketSim.js"

export const E18 = 10n ** 18n

/** `p · num / den` as an E18 level, floored. */
export const scaledE18 = (p: Price, num: bigint, den: bigint): bigint => (p.num * E18 * num) / (p.den * den)

/** A limit sell of 1,000,000 raw units 2% above `now.price`, placed after `now.position` (payer main, 100 bps slippage). */
export const limitSellAbove = (
  id: string,
  mint: string,
  now: { readonly price: Price; readonly position: string },
  owner: { readonly accountId: string; readonly keyId: string }
): NewOrder => ({
  id,
  accountId: owner.accountId,
  clientOrderId: id,
  keyId: owner.keyId,
  requestHash: "h",
  chain: "solana",
  mint,
  side: "sell",
  trigger: "limit",
  amountRaw: 1_000_000n,
  level: formatPriceE18(scaledE18(now.price, 102n, 100n)),
  trailBps: null,
  watermark: null,
  slippageBps: 100,
  payer: "main",
  expiresAtMs: null,
  afterPosition: now.position
})

/** The ids of the orders `books` holds on the Solana markets `markets`, sorted. */
export const heldOrderIds = (books: OrderBooks, markets: ReadonlyArray<SimMarket>): Array<string> =>
  markets
    .flatMap((m) => {
      const book = books.book(`solana:${m.mint}`)
      return book === undefined ? [] : [...book.below, ...book.above, ...book.trailing].map((o) => o.id)
    })
    .sort()
