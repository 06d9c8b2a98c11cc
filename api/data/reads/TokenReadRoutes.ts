/**
 * The market-data service's token and market reads (spec 4.5), one module per row of the spec's
 * table: market data and safety, OHLCV history and its chart, the token detail reads (top
 * traders, holders, venues, profile, launch overview), wallet P&L, token search, gainers / metas /
 * activity, prices, cohort overlap and the final stretch.
 *
 * Sources: the live state of a token (reserves, lifecycle, identity, windowed statistics) comes
 * from the in-memory `MarketIndex`; history (candles, positions, venues, graduations) from
 * ClickHouse `trades` and `candles_1m`; USD from the `PriceSource`. What the reads compute lives in
 * `src/services/marketdata/` (pure, unit-tested); these modules translate HTTP to those calls and
 * their results to the wire.
 *
 * Invariants:
 * - Every route authenticates first (`deps.authenticate`); every plan reaches these reads.
 * - Money is exact: raw amounts are `bigint` until written as decimal strings in whole units
 *   (token or quote decimals) and USD (`src/services/prices/Money.ts`). Only OHLC prices and
 *   percentages are floats, for charts.
 * - Every list parameter and page is bounded and refused past its bound with a 400
 *   `VALIDATION_FAILED` naming the field; a ClickHouse failure is 503 `FEED_UNAVAILABLE`
 *   (retryable); an unknown token is 404 `MARKET_NOT_FOUND`; `chain` defaults to `solana`.
 */
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

export type TokenReadDeps = MarketListDeps

export const tokenReadRoutes = (deps: TokenReadDeps): ReadonlyArray<RouteDef> => [
  ...tokenMarketRoutes(deps),
  ...tokenHistoryRoutes(deps),
  ...tokenDetailRoutes(deps),
  ...tokenWalletPnlRoutes(deps),
  ...tokenSearchRoutes(deps),
  ...marketListRoutes(deps),
  ...priceRoutes(deps),
  ...cohortOverlapRoutes(deps),
  ...finalStretchRoutes(deps)
]
