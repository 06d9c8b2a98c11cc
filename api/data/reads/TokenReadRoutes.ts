/**
 * The market-data service's token and market reads (spec 4.5), one module per row of the spec's
 * table: market data and safety, OHLCV history and its chart, the token detail reads (top
 * traders, holders, venues, profile, launch overview), wallet P&L, token search, gainers / metas /
 * activity, prices, cohort overlap and the final stretch.
 *
 * Sources: the live state of a token (reserves, lifecycle, identity, windowed statistics) comes
 * from the in-memory `MarketIndex`; history (candles, positions, venues, graduations) and USD
 * prices through the market-data service (`src/services/marketdata/MarketData.ts`, over ClickHouse
 * `trades` and `candles_1m` and the `PriceSource`), whose failures answer through the error table. What the reads compute lives in
 * `src/services/marketdata/` (pure, unit-tested); these modules translate HTTP to those calls and
 * their results to the wire.
 *
 * Invariants:
 * - Every route authenticates first (`deps.authenticate`); every plan reaches these reads.
 * - Money is exact: raw amounts are `bigint` until written as decimal strings in whole units
 *   (token or quote decimals) and USD (`src/services/prices/Money.ts`). Only OHLC prices and
 *   percentages are floats, for charts.
 * - Every list parameter and page is bounded and refused past its bound with a 400
 *   `VALIDATION_FAILED` naming the field; a history outage is 503 `FEED_UNAVAILABLE`
 *   (retryable); an unknown token is 404 `MARKET_NOT_FOUND`; `chain` defaults to `solana`.
 */
import { make as makeMarketData, type MarketDataDeps } from "../../../src/services/marketdata/MarketData.js"
import type { RouteDef } from "../../Router.js"
import { cohortOverlapRoutes } from "./CohortOverlapRoutes.js"
import { finalStretchRoutes } from "./FinalStretchRoutes.js"
import { type MarketListDeps, marketListRoutes } from "./MarketListRoutes.js"
import { priceRoutes } from "./PriceRoutes.js"
import { tokenDetailRoutes } from "./TokenDetailRoutes.js"
import { tokenHistoryRoutes } from "./TokenHistoryRoutes.js"
import { tokenMarketRoutes } from "./TokenMarketRoutes.js"
import { tokenSearchRoutes } from "./TokenSearchRoutes.js"
import { tokenWalletPnlRoutes } from "./TokenWalletPnlRoutes.js"

export type { DataCaller, DataPlan } from "./internal/shared.js"

/** What the assembly takes: the market-data service's dependencies and the reads' own. */
export type TokenReadDeps = MarketDataDeps & Omit<MarketListDeps, "data">

export const tokenReadRoutes = (deps: TokenReadDeps): ReadonlyArray<RouteDef> => {
  const reads: MarketListDeps = { ...deps, data: makeMarketData(deps) }
  return [
    ...tokenMarketRoutes(reads),
    ...tokenHistoryRoutes(reads),
    ...tokenDetailRoutes(reads),
    ...tokenWalletPnlRoutes(reads),
    ...tokenSearchRoutes(reads),
    ...marketListRoutes(reads),
    ...priceRoutes(reads),
    ...cohortOverlapRoutes(reads),
    ...finalStretchRoutes(reads)
  ]
}
