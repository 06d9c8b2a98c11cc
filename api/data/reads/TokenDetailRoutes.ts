/**
 * Spec 4.5 token reads `GET /v1/market/token/{address}/top-traders`, `/holders`, `/venues`,
 * `/profile` and `/launch-overview`: positions from the token's trades (P&L at the spot price),
 * its venues, its identity and launch terms with the creator's other launches
 * (`CreatorLaunches`), and how the launch went, cached 60 s (at most `OVERVIEW_CACHE_MAX` tokens;
 * concurrent requests for one token share one read).
 */
import { Effect } from "effect"
import { priceReserves, progressBpsOf } from "../../../actors/market/MarketRecord.js"
import type { MarketDataError, PositionOrder } from "../../../src/services/marketdata/MarketData.js"
import { creatorLaunches } from "../../../src/services/marketdata/CreatorLaunches.js"
import { shareBps } from "../../../src/services/marketdata/TokenSafety.js"
import { tokenVenues } from "../../../src/services/marketdata/Venues.js"
import { json, type Reply } from "../../Http.js"
import { enumParam } from "../../QueryParams.js"
import { ReadCache } from "../../ReadCache.js"
import type { RouteDef } from "../../Router.js"
import { DAY_MS, intQ, iso, type ReadDeps } from "./internal/shared.js"
import { positionRow, type Token, tokenRoute } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { TokenHolders, TokenLaunchOverview, TokenProfile, TokenTopTraders, TokenTrades, TokenVenues } from "./internal/responses.js"

export const OVERVIEW_TTL_MS = 60_000
export const OVERVIEW_CACHE_MAX = 10_000
/** Buyers within this long after creation count as early buyers in the launch overview. */
export const EARLY_WINDOW_MS = 60_000
/** The launch overview's share of the largest holders. */
const OVERVIEW_TOP_HOLDERS = 10

export const tokenDetailRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => {
  const spotOf = (t: Token) => priceReserves(t.core)

  const topTraders = tokenRoute(
    deps,
    {
      suffix: "/top-traders",
      operationId: "dataTokenTopTraders",
      summary: "Wallets ranked by P&L (or volume) on the token, from its trades",
      description: "P&L = quote received from sells + held tokens at the spot price - quote spent on buys (fees included).",
      query: { sort: enumParam<Extract<PositionOrder, "pnl" | "volume">>("pnl (default) or volume", ["pnl", "volume"], { default: "pnl" }), limit: intQ("Rows", 1, 100, 20) },
      responses: { 200: answer("Wallets ranked by P&L or volume", TokenTopTraders) }
    },
    (t, { sort, limit }) =>
      Effect.gen(function* () {
        const { positions, total } = yield* deps.data.topPositions(t.core.chain, t.core.mint, spotOf(t), sort, limit, false)
        return json(200, { chain: t.core.chain, address: t.core.mint, sort, traders: total, rows: positions.map((p) => positionRow(t, p)) } satisfies typeof TokenTopTraders.Type)
      })
  )

  const holders = tokenRoute(
    deps,
    { suffix: "/holders", operationId: "dataTokenHolders", summary: "Holders by net position from trades (Solana and Hood)", query: { limit: intQ("Rows", 1, 200, 50) }, responses: { 200: answer("Holders by net position", TokenHolders) } },
    (t, { limit }) =>
      Effect.gen(function* () {
        const { positions, total } = yield* deps.data.topPositions(t.core.chain, t.core.mint, spotOf(t), "held", limit, true)
        return json(200, {
          chain: t.core.chain,
          address: t.core.mint,
          supply: t.tokens(t.core.params.supplyRaw),
          holders: total,
          rows: positions.map((p) => ({
            wallet: p.trader,
            amount: t.tokens(p.heldRaw),
            held_bps: shareBps(p.heldRaw, t.core.params.supplyRaw),
            value: t.quote(p.valueQuoteRaw),
            value_usd: t.usd(p.valueQuoteRaw),
            is_creator: p.trader === t.core.identity.creator
          }))
        } satisfies typeof TokenHolders.Type)
      })
  )

  const venues = tokenRoute(deps, { suffix: "/venues", operationId: "dataTokenVenues", summary: "Where the token trades now and totals per venue", responses: { 200: answer("Venues and totals", TokenVenues) } }, (t) =>
    Effect.gen(function* () {
      const { current, venues } = tokenVenues(t.core.chain, t.core.lifecycle, yield* deps.data.venueTotals(t.core.chain, t.core.mint, deps.nowMs() - DAY_MS))
      return json(200, {
        chain: t.core.chain,
        address: t.core.mint,
        current,
        venues: venues.map(({ venue, active, totals: v }) => ({
          venue,
          active,
          trades: v.trades,
          buys: v.buys,
          sells: v.sells,
          volume: t.quote(v.volumeQuoteRaw),
          volume_usd: t.usd(v.volumeQuoteRaw),
          trades_24h: v.trades24h,
          volume_24h: t.quote(v.volume24hQuoteRaw),
          volume_24h_usd: t.usd(v.volume24hQuoteRaw),
          first_trade_at: iso(v.firstTradeMs),
          last_trade_at: iso(v.lastTradeMs)
        }))
      } satisfies typeof TokenVenues.Type)
    })
  )

  /** The trade tape: the token's newest trades, newest first (the web page's token page reads it when the market moves). */
  const trades = tokenRoute(
    deps,
    { suffix: "/trades", operationId: "dataTokenTrades", summary: "The token's newest trades, newest first (the trade tape)", query: { limit: intQ("Rows", 1, 200, 50) }, responses: { 200: answer("The trade tape", TokenTrades) } },
    (t, { limit }) =>
      Effect.gen(function* () {
        const rows = yield* deps.data.recentTrades(t.core.chain, t.core.mint, limit)
        return json(200, {
          chain: t.core.chain,
          address: t.core.mint,
          quote_asset: t.quoteAsset,
          trades: rows.map((r) => ({
            id: r.id,
            signature: r.signature,
            at: iso(r.timestampMs),
            side: r.side,
            venue: r.venue,
            trader: r.trader,
            amount: t.tokens(r.volumeTokenRaw),
            quote: t.quote(r.volumeQuoteRaw),
            quote_usd: t.usd(r.volumeQuoteRaw)
          }))
        } satisfies typeof TokenTrades.Type)
      })
  )

  const profile = tokenRoute(deps, { suffix: "/profile", operationId: "dataTokenProfile", summary: "Identity, launch terms and the creator's other launches", responses: { 200: answer("Identity, launch terms and the creator's launches", TokenProfile) } }, (t) =>
    Effect.sync(() => {
      const id = t.core.identity
      const meta = deps.index.metadataOf(t.core)
      const { launches, others } = creatorLaunches(deps.index.markets(), t.core)
      return json(200, {
        chain: t.core.chain,
        address: t.core.mint,
        name: id.name,
        symbol: id.symbol,
        image: meta.image,
        uri: id.uri,
        socials: meta.socials,
        description: meta.description,
        decimals: id.decimals,
        supply: t.tokens(t.core.params.supplyRaw),
        quote_asset: t.quoteAsset,
        mode: id.mode,
        fee_bps: t.core.params.feeBps,
        creator_fee_bps: t.core.params.creatorFeeBps,
        staker_allocation_bps: t.core.params.stakerAllocationBps,
        curve_address: id.curveAddress,
        created_at: iso(id.createdAtMs),
        created_signature: id.createdSignature,
        creator: {
          address: id.creator,
          launches,
          other_launches: others.map((m) => ({ chain: m.chain, address: m.mint, symbol: m.identity.symbol, lifecycle: m.lifecycle }))
        }
      } satisfies typeof TokenProfile.Type)
    })
  )

  const overviewCache = new ReadCache<{ readonly atMs: number; readonly body: string }, MarketDataError>(OVERVIEW_TTL_MS, OVERVIEW_CACHE_MAX)
  const overviewBody = (t: Token, nowMs: number) =>
    Effect.gen(function* () {
      const id = t.core.identity
      const agg = yield* deps.data.launchAggregates(t.core.chain, t.core.mint, id.creator, id.createdAtMs, EARLY_WINDOW_MS)
      const { positions, total } = yield* deps.data.topPositions(t.core.chain, t.core.mint, spotOf(t), "held", OVERVIEW_TOP_HOLDERS, true)
      const top10 = positions.reduce((s, p) => s + p.heldRaw, 0n)
      return JSON.stringify({
        chain: t.core.chain,
        address: t.core.mint,
        name: id.name,
        symbol: id.symbol,
        created_at: iso(id.createdAtMs),
        creator: id.creator,
        lifecycle: t.core.lifecycle,
        progress_bps: progressBpsOf(t.core),
        first_trade_at: iso(agg.firstTradeMs),
        last_trade_at: iso(agg.lastTradeMs),
        trades: agg.trades,
        buys: agg.buys,
        sells: agg.sells,
        traders: agg.traders,
        holders: total,
        early_buyers: agg.earlyBuyers,
        early_window_seconds: EARLY_WINDOW_MS / 1000,
        volume: t.quote(agg.volumeQuoteRaw),
        volume_usd: t.usd(agg.volumeQuoteRaw),
        raised: t.quote(t.core.curveState.realQuoteRaw),
        raised_usd: t.usd(t.core.curveState.realQuoteRaw),
        threshold: t.quote(t.core.params.thresholdRaw),
        dev_buy: { bought: t.tokens(agg.creatorBoughtRaw), sold: t.tokens(agg.creatorSoldRaw), spent: t.quote(agg.creatorSpentQuoteRaw), spent_usd: t.usd(agg.creatorSpentQuoteRaw) },
        top10_held_bps: shareBps(top10, t.core.params.supplyRaw),
        graduated_at: iso(agg.graduatedAtMs),
        seconds_to_graduation: agg.graduatedAtMs === null ? null : Math.max(0, Math.floor((agg.graduatedAtMs - id.createdAtMs) / 1000)),
        migrated_at: iso(t.core.migration.migratedAtMs),
        cached_at: iso(nowMs)
      } satisfies typeof TokenLaunchOverview.Type)
    })

  const launchOverview = tokenRoute(deps, { suffix: "/launch-overview", operationId: "dataTokenLaunchOverview", summary: "How the launch went (cached 60 s)", responses: { 200: answer("How the launch went", TokenLaunchOverview) } }, (t) => {
    const now = deps.nowMs()
    const read = Effect.map(overviewBody(t, now), (body) => ({ atMs: now, body }))
    return Effect.map(
      overviewCache.get(`${t.core.chain}:${t.core.mint}`, now, read),
      ({ atMs, body }): Reply => ({
        status: 200,
        body,
        contentType: "application/json; charset=utf-8",
        headers: [
          ["Cache-Control", `private, max-age=${Math.max(0, Math.ceil((atMs + OVERVIEW_TTL_MS - now) / 1000))}`],
          ["Age", String(Math.max(0, Math.floor((now - atMs) / 1000)))]
        ]
      })
    )
  })

  return [topTraders, holders, venues, trades, profile, launchOverview]
}
