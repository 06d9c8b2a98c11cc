/**
 * The market-data service's wallet, group, social and asset reads (spec 4.5), one module per row
 * of the spec's table: social mentions (mentions, mention marks, trending), the tracked-wallet and
 * group directories (filtered by plan), labelled trades, a wallet's reads (stats, activity, token
 * breakdown, portfolio), book legs (Max) and the assets directory.
 *
 * What the reads compute (average-cost P&L, win rates, portfolios, counterparties, trending) lives
 * in `src/services/marketdata/` (pure, unit-tested); these modules translate HTTP to those calls
 * and their results to the wire.
 *
 * Invariants:
 * - Every route authenticates first (`deps.authenticate`). Plan visibility: Free sees `public`
 *   wallets and groups, Pro `public`+`pro`, Max all (Tracking.ts); a wallet or group the plan
 *   cannot see answers the same plain 404 as an unknown one. Book legs are Max only (plain 403
 *   `{"error": "requires Max"}`).
 * - Money is exact: raw amounts stay `bigint` until written as decimal strings in whole units,
 *   USD truncated to the micro-dollar. Amounts in different quote assets are never added
 *   together; totals across them are in USD only (each quote asset's total converted once).
 * - Every parameter is bounded and refused past its bound with a 400 `VALIDATION_FAILED` naming
 *   the field; a history outage is 503 `FEED_UNAVAILABLE` (retryable), answered through the error
 *   table from the market-data service's `MarketDataError` (`src/services/marketdata/MarketData.ts`).
 */
import { make as makeMarketData, type MarketDataDeps } from "../../../src/services/marketdata/MarketData.js"
import type { RouteDef } from "../../Router.js"
import { assetRoutes } from "./AssetRoutes.js"
import { bookLegRoutes } from "./BookLegRoutes.js"
import { directoryRoutes } from "./DirectoryRoutes.js"
import type { WalletReadDeps } from "./internal/wallet.js"
import { labelledTradeRoutes } from "./LabelledTradeRoutes.js"
import { socialRoutes } from "./SocialRoutes.js"
import { walletReadRoutes } from "./WalletReadRoutes.js"

/** What the assembly takes: the market-data service's dependencies and the reads' own. */
export type WalletSocialDeps = MarketDataDeps & Omit<WalletReadDeps, "data">

export const walletSocialRoutes = (deps: WalletSocialDeps): ReadonlyArray<RouteDef> => {
  const reads: WalletReadDeps = { ...deps, data: makeMarketData(deps) }
  return [
    ...socialRoutes(reads),
    ...directoryRoutes(reads),
    ...labelledTradeRoutes(reads),
    ...walletReadRoutes(reads),
    ...bookLegRoutes(reads),
    ...assetRoutes(reads)
  ]
}
