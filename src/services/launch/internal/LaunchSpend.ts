/**
 * A launch's dev buy as the spend gate sees it (`src/services/spend`): the gate's attempt (the
 * buy plus the platform fee the chain will take, valued in USD at the price source's rate), the
 * reservation id of one ledger attempt, and the booking of a landed dev buy. The headless and
 * self-signed launches call these; the gate decides.
 */
import { Effect } from "effect"
import { platformFeeRaw as hoodFeeRaw } from "../../../chain/hood/launch/HeadlessCalls.js"
import { platformFeeRaw as solanaFeeRaw } from "../../../chain/solana/launch/LaunchTransaction.js"
import type { Chain } from "../../../domain/Chain.js"
import type { PriceSourceShape } from "../../prices/PriceSource.js"
import type { SpendAttempt, SpendRail } from "../../spend/SpendGate.js"
import type { BookInput } from "../../spend/SpendStore.js"
import { usdOfQuote } from "../../spend/SpendValue.js"

/** The platform fee the chain's launch takes on a dev buy of `buyRaw` (Solana rounds up, Hood down). */
export const devBuyFeeRaw = (chain: Chain, buyRaw: bigint, feeBps: number): bigint =>
  chain === "solana" ? solanaFeeRaw(buyRaw, BigInt(feeBps)) : hoodFeeRaw(buyRaw, feeBps)

export interface DevBuy {
  readonly chain: Chain
  readonly quoteAsset: string
  readonly buyAmountRaw: bigint
}

/** The gate's attempt for a dev buy on `rail`; undefined for a launch without one. */
export const devBuyAttempt = (prices: PriceSourceShape, rail: SpendRail, buy: DevBuy, feeBps: number): Effect.Effect<SpendAttempt | undefined> =>
  buy.buyAmountRaw === 0n
    ? Effect.succeed(undefined)
    : Effect.gen(function* () {
        const amountRaw = buy.buyAmountRaw + devBuyFeeRaw(buy.chain, buy.buyAmountRaw, feeBps)
        const usdMicros = yield* usdOfQuote(prices, buy.chain, buy.quoteAsset, amountRaw)
        return { rail, purpose: "dev_buy", side: "buy", asset: buy.quoteAsset, amountRaw, usdMicros } satisfies SpendAttempt
      })

/** The reservation id of one launch attempt's dev buy (per path: `headless`, `self`). */
export const devBuyReservationId = (path: string, ref: { readonly accountId: string; readonly clientLaunchId: string; readonly attempt: number }): string =>
  `launch:${path}:${JSON.stringify([ref.accountId, ref.clientLaunchId, ref.attempt])}`

/**
 * The booking of a landed dev buy: the hold's USD value (taken at build; a missing hold books no
 * USD), and one trade, as an atomic first buy counts.
 */
export const devBuyBooking = (
  reservationId: string,
  who: { readonly accountId: string; readonly keyId: string },
  rail: SpendRail,
  buy: DevBuy,
  feeBps: number
): BookInput => ({
  reservationId,
  accountId: who.accountId,
  keyId: who.keyId,
  rail,
  purpose: "dev_buy",
  chain: buy.chain,
  side: "buy",
  asset: buy.quoteAsset,
  amountRaw: buy.buyAmountRaw + devBuyFeeRaw(buy.chain, buy.buyAmountRaw, feeBps),
  usdMicros: null,
  trades: 1
})
