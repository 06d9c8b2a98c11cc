/**
 * The market-data read service: what the read routes (`api/data/reads/*`) ask of history, the live
 * index and USD prices. Each history read is a ClickHouse query bound to the service's client, its
 * failure logged once and turned into `MarketDataError` `history_unavailable` (retryable); a token
 * lookup fails `market_not_found` (with the chain it trades on, when another) or `markets_loading`
 * while the engine warms up; price lookups never fail (an unpriced asset is null).
 *
 * Plain functions over their dependencies, built once per route assembly: no layer, no per-call
 * allocation beyond the query itself (each bound method is created in `make`).
 */
import { Effect, Schema } from "effect"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import { ClickHouse, type ClickHouseShape } from "../../../clickhouse/ClickHouse.js"
import type { ClickHouseError } from "../../../clickhouse/ClickHouseError.js"
import * as Candles from "../../../clickhouse/queries/Candles.js"
import * as TokenReads from "../../../clickhouse/queries/TokenReads.js"
import * as Trades from "../../../clickhouse/queries/Trades.js"
import * as WalletReads from "../../../clickhouse/queries/WalletReads.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { failureFields, failureOf } from "../../domain/ServiceFailure.js"
import { type QuotePair, QuotePairs } from "../../domain/QuotePairs.js"
import { quotePairOf, usdPrices } from "../prices/Money.js"
import type { PriceSourceShape, UsdPrice } from "../prices/PriceSource.js"

export type { Candle, CandleInterval, CandleSeries } from "../../../clickhouse/queries/Candles.js"
export { candlesMax, intervalMinutes } from "../../../clickhouse/queries/Candles.js"
export type { Position, PositionOrder, SpotReserves } from "../../../clickhouse/queries/TokenReads.js"
export type { WalletTrade } from "../../../clickhouse/queries/WalletReads.js"
export { bookLegsMax } from "../../../clickhouse/queries/WalletReads.js"

export const MarketDataErrorReason = Schema.Literal("history_unavailable", "markets_loading", "market_not_found", "not_found")
export type MarketDataErrorReason = typeof MarketDataErrorReason.Type

export class MarketDataError extends Schema.TaggedError<MarketDataError>()("MarketDataError", { reason: MarketDataErrorReason, ...failureFields }) {}

export const marketDataError = failureOf<MarketDataError, MarketDataErrorReason>(MarketDataError)

export const isMarketDataError = (e: unknown): e is MarketDataError => e instanceof MarketDataError

/** History unavailable: the client sees the reason of the ClickHouse failure, never its cause. */
export const historyUnavailable = (e: ClickHouseError): MarketDataError =>
  marketDataError("history_unavailable", `Market history is unavailable; retry shortly (${e.reason})`, { retryable: true })

export interface MarketDataDeps {
  readonly clickhouse: ClickHouseShape
  readonly index: MarketIndexShape
  readonly prices: PriceSourceShape
}

/** A query `(ch, ...args)` bound to the client, failing with `MarketDataError`. */
type Bound<F> = F extends (ch: ClickHouseShape, ...args: infer A) => Effect.Effect<infer R, ClickHouseError> ? (...args: A) => Effect.Effect<R, MarketDataError> : never
type BoundAll<Q> = { readonly [K in keyof Q]: Bound<Q[K]> }

/** The history reads, by name: each is the query of the same name, bound (`Bound`). */
const tokenQueries = {
  topPositions: TokenReads.topPositions,
  walletPositions: TokenReads.walletPositions,
  venueTotals: TokenReads.venueTotals,
  launchAggregates: TokenReads.launchAggregates,
  priceMoves: TokenReads.priceMoves,
  tokenActivity: TokenReads.tokenActivity,
  recentGraduations: TokenReads.recentGraduations,
  cohorts: TokenReads.cohorts
}
const walletQueries = {
  tradesOf: WalletReads.tradesOf,
  walletHistory: WalletReads.walletHistory,
  bookLegs: WalletReads.bookLegs,
  mintVolumes: WalletReads.mintVolumes,
  pricesAt: WalletReads.pricesAt
}

type Prices = Effect.Effect<ReadonlyMap<string, UsdPrice | null>>

export interface MarketDataShape extends BoundAll<typeof tokenQueries>, BoundAll<typeof walletQueries> {
  /** The live token on `chain`: `markets_loading` while warming, else `market_not_found` (naming the chain it trades on). */
  readonly token: (chain: ChainId, mint: string) => Effect.Effect<MarketCore, MarketDataError>
  /** The live token on `chain`, or `market_not_found` naming `field` (the lists' plain lookup). */
  readonly tokenIn: (chain: ChainId, mint: string, field: string) => Effect.Effect<MarketCore, MarketDataError>
  /** USD prices of the quote assets `pairs` name, by quote asset id (null when unpriced). */
  readonly usdOfPairs: (pairs: Iterable<QuotePair | undefined>) => Prices
  /** USD prices of the quote assets `cores` trade against. */
  readonly usdOfMarkets: (cores: Iterable<MarketCore | undefined>) => Prices
  /** USD prices of the quote assets of the tokens `mints` on `chain` (those the index knows). */
  readonly usdOfMints: (chain: ChainId, mints: Iterable<string>) => Prices
  /** A quote asset by id (any case) with its USD price; `not_found` when no such asset. */
  readonly asset: (id: string) => Effect.Effect<{ readonly pair: QuotePair; readonly price: UsdPrice | null }, MarketDataError>
  readonly candles: (chain: ChainId, mint: string, interval: Candles.CandleInterval, fromMs: number, toMs: number) => Effect.Effect<Candles.CandleSeries, MarketDataError>
  /** The token's newest `limit` live trades (at most `Trades.tradesLimitMax`), newest first: the web page's tape. */
  readonly recentTrades: (chain: ChainId, mint: string, limit: number) => Effect.Effect<ReadonlyArray<Trades.TradeRecord>, MarketDataError>
}

const history = <A>(what: string, effect: Effect.Effect<A, ClickHouseError>): Effect.Effect<A, MarketDataError> =>
  effect.pipe(
    Effect.tapError((e) => Effect.logWarning(`${what} failed: ${e.message}`)),
    Effect.mapError(historyUnavailable)
  )

// `any` arguments: the queries' argument lists differ; `Bound` restores each one's type.
type AnyQuery = (ch: ClickHouseShape, ...args: any) => Effect.Effect<unknown, ClickHouseError>

/** Each query of `queries` bound to `clickhouse`, its failure logged as `what` and turned into `history_unavailable`. */
const bindAll = <Q extends Record<string, AnyQuery>>(clickhouse: ClickHouseShape, what: string, queries: Q): BoundAll<Q> => {
  const out: Record<string, (...args: ReadonlyArray<unknown>) => Effect.Effect<unknown, MarketDataError>> = {}
  for (const [name, query] of Object.entries(queries)) out[name] = (...args) => history(what, query(clickhouse, ...args))
  return out as BoundAll<Q>
}

export const make = (deps: MarketDataDeps): MarketDataShape => {
  const { clickhouse, index, prices } = deps
  const usdOfMarkets = (cores: Iterable<MarketCore | undefined>): Prices =>
    usdPrices(
      prices,
      Array.from(cores, (c) => (c === undefined ? undefined : quotePairOf(c.chain, c.identity.quoteMint)))
    )
  return {
    token: (chain, mint) => {
      const core = index.market(chain, mint)
      if (core !== undefined) return Effect.succeed(core)
      if (index.warming()) return Effect.fail(marketDataError("markets_loading", "Markets are loading; retry shortly", { retryable: true }))
      const other = index.find(mint).find((c) => c !== chain)
      return Effect.fail(
        other === undefined
          ? marketDataError("market_not_found", `No token ${mint} on ${chain}`)
          : marketDataError("market_not_found", `No token ${mint} on ${chain}; it trades on ${other}`, { details: { routing: { reason: "chain_mismatch", chain: other } } })
      )
    },
    tokenIn: (chain, mint, field) => {
      const core = index.market(chain, mint)
      return core !== undefined ? Effect.succeed(core) : Effect.fail(marketDataError("market_not_found", `No token ${mint} on ${chain}`, { field }))
    },
    usdOfPairs: (pairs) => usdPrices(prices, pairs),
    usdOfMarkets,
    usdOfMints: (chain, mints) => usdOfMarkets(Array.from(mints, (m) => index.market(chain, m))),
    asset: (id) => {
      const lower = id.toLowerCase()
      const pair = QuotePairs.find((p) => p.id === lower)
      if (pair === undefined) return Effect.fail(marketDataError("not_found", "asset not found"))
      return Effect.map(prices.usd(pair.id).pipe(Effect.orElseSucceed(() => null)), (price) => ({ pair, price }))
    },
    candles: (chain, mint, interval, fromMs, toMs) =>
      history("token read", Effect.provideService(Candles.candles(chain, mint, interval, fromMs, toMs), ClickHouse, clickhouse)),
    recentTrades: (chain, mint, limit) => history("token read", Effect.provideService(Trades.recentTrades(chain, mint, limit), ClickHouse, clickhouse)),
    ...bindAll(clickhouse, "token read", tokenQueries),
    ...bindAll(clickhouse, "wallet read", walletQueries)
  }
}
