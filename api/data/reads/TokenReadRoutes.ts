/**
 * The market-data service's token reads (spec 4.5): market data and safety, OHLCV history and
 * its SVG chart, top traders, venues, holders, profile, launch overview (cached 60 s), wallet P&L
 * (up to 50 wallets), token search, gainers, metas, activity, prices (up to 60), cohort overlap
 * (2 to 5 mints) and the final stretch.
 *
 * Sources: the live state of a token (reserves, lifecycle, identity, windowed statistics) comes
 * from the in-memory `MarketIndex`; history (candles, positions, venues, graduations) from
 * ClickHouse `trades` and `candles_1m`; USD from the `PriceSource`.
 *
 * Invariants:
 * - Every route authenticates first (`deps.authenticate`); every plan reaches these reads.
 * - Money is exact: raw amounts are `bigint` until written as decimal strings in whole units
 *   (token or quote decimals) and USD (see `Money.ts`). Only OHLC prices and percentages are
 *   floats, for charts.
 * - Every list parameter and page is bounded and refused past its bound with a 400
 *   `VALIDATION_FAILED` naming the field; a ClickHouse failure is 503 `FEED_UNAVAILABLE`
 *   (retryable); an unknown token is 404 `MARKET_NOT_FOUND`; `chain` defaults to `solana`.
 * - The launch-overview cache holds at most `OVERVIEW_CACHE_MAX` entries for 60 s each.
 */
import { Effect } from "effect"
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { marketCapRaw, marketRecord, priceReserves, statsOf, venueOf } from "../../../actors/market/MarketRecord.js"
import type { ClickHouseShape } from "../../../clickhouse/ClickHouse.js"
import { ClickHouse } from "../../../clickhouse/ClickHouse.js"
import { type Candle, candles as readCandles, candlesMax, intervalMinutes, type CandleInterval } from "../../../clickhouse/queries/Candles.js"
import {
  cohorts,
  launchAggregates,
  type Position,
  type PositionOrder,
  priceMoves,
  recentGraduations,
  tokenActivity,
  topPositions,
  venueTotals,
  walletPositions
} from "../../../clickhouse/queries/TokenReads.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { type ApiError, apiError, validationFailed } from "../../../src/domain/ApiError.js"
import { formatUnits } from "../../../src/domain/CurveMath.js"
import type { PriceSourceShape, UsdPrice } from "../../../src/services/prices/PriceSource.js"
import { json, type Reply, type Request } from "../../Http.js"
import type { ParamDoc, RouteDef } from "../../Router.js"
import { CHART_CANDLES_MAX, CHART_HEIGHT, CHART_WIDTH, ohlcvSvg } from "./OhlcvChart.js"
import { quotePairOf, usdOf, usdPerToken, usdPrices } from "./Money.js"
import { chRead, iso } from "./internal/shared.js"
import {
  ADDRESS_FORMAT,
  isApiError as isErr,
  normalizeAddress,
  opt,
  type Parsed,
  parseAddress,
  parseChainParam as parseChain,
  parseEnumParam as parseEnum,
  parseIntParam as parseInt_,
  parseTimeParam as parseTime
} from "../../QueryParams.js"

export type DataPlan = "free" | "pro" | "max"

export interface DataCaller {
  readonly accountId: string
  readonly plan: DataPlan
}

export interface TokenReadDeps {
  readonly clickhouse: ClickHouseShape
  readonly index: MarketIndexShape
  readonly prices: PriceSourceShape
  readonly nowMs: () => number
  /** The data bearer: the caller, or a refusal (an `ApiError`, or a ready reply such as the plain 401). */
  readonly authenticate: (req: Request) => Effect.Effect<DataCaller, ApiError | Reply>
  /** Tracked wallets visible to a plan on a chain (`/v1/market/activity`); all wallets when absent. */
  readonly trackedWallets?: (plan: DataPlan, chain: ChainId) => ReadonlyArray<{ readonly address: string }>
}

export const PRICES_MAX = 60
export const WALLET_PNL_MAX = 50
export const COHORT_MIN = 2
export const COHORT_MAX = 5
export const HISTORY_DEFAULT_DAYS = 30
export const OVERVIEW_TTL_MS = 60_000
export const OVERVIEW_CACHE_MAX = 10_000
export const FINAL_STRETCH_GRADUATED_MS = 10 * 60_000
export const SEARCH_QUERY_MAX = 64
/** Buyers within this long after creation count as early buyers in the launch overview. */
export const EARLY_WINDOW_MS = 60_000

const DAY_MS = 86_400_000
const AUTH_HEADERS = ["authorization", "x-api-key"]

// ---------------------------------------------------------------------------------------------
// Parameters

const queryOf = (req: Request) => new URLSearchParams(req.query)

/** A comma-separated list of addresses: trimmed, de-duplicated (order kept), `min..max` entries. */
const parseAddressList = (q: URLSearchParams, name: string, chain: ChainId, min: number, max: number): Parsed<ReadonlyArray<string>> => {
  const v = opt(q, name)
  if (v === undefined) return validationFailed(name, `${name} is required (comma-separated, ${min} to ${max})`)
  const items = v.split(",").map((s) => s.trim()).filter((s) => s !== "")
  // Checked before parsing so a huge list costs nothing more.
  if (items.length > max * 4) return validationFailed(name, `${name} takes at most ${max} entries`, { limit: max })
  const out: Array<string> = []
  for (const item of items) {
    if (!ADDRESS_FORMAT[chain].test(item)) return validationFailed(name, `'${item.slice(0, 64)}' is not a ${chain} address`)
    const a = normalizeAddress(chain, item)
    if (!out.includes(a)) out.push(a)
  }
  if (out.length > max) return validationFailed(name, `${name} takes at most ${max} entries, got ${out.length}`, { limit: max })
  if (out.length < min) return validationFailed(name, `${name} needs at least ${min} distinct entries, got ${out.length}`, { minimum: min })
  return out
}

const INTERVALS: Record<string, CandleInterval> = { "1m": "1m", "5m": "5m", "15m": "15m", "1h": "1h", "4h": "4h", "1d": "1d" }
const parseInterval = (q: URLSearchParams, dflt: CandleInterval): Parsed<CandleInterval> => {
  const v = opt(q, "interval")
  if (v === undefined) return dflt
  const i = INTERVALS[v.toLowerCase()]
  return i ?? validationFailed("interval", "interval must be one of 1m, 5m, 15m, 1h, 4h, 1D")
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

/** A ClickHouse read; its failure is logged (the client sees only the retryable 503). */
const ch = chRead("token read")

/** `part / whole` in basis points, floored; 0 when whole is 0. */
const bps = (part: bigint, whole: bigint): number => (whole <= 0n ? 0 : Number((part * 10_000n) / whole))

/** A token's live state and its money helpers. */
interface Token {
  readonly core: MarketCore
  readonly price: UsdPrice | null
  readonly quoteAsset: string | null
  readonly tokens: (raw: bigint) => string
  readonly quote: (raw: bigint) => string
  readonly usd: (quoteRaw: bigint) => string | null
  /** trades.price (quote raw per token raw) → quote per whole token. */
  readonly priceScale: number
}

const tokenOf = (deps: TokenReadDeps, core: MarketCore): Effect.Effect<Token> =>
  Effect.map(usdPrices(deps.prices, [quotePairOf(core.chain, core.identity.quoteMint)]), (prices) => helpers(core, prices))

const helpers = (core: MarketCore, prices: ReadonlyMap<string, UsdPrice | null>): Token => {
  const pair = quotePairOf(core.chain, core.identity.quoteMint)
  const price = pair === undefined ? null : (prices.get(pair.id) ?? null)
  const { decimals, quoteDecimals } = core.identity
  return {
    core,
    price,
    quoteAsset: pair?.id ?? null,
    tokens: (raw) => formatUnits(raw, decimals),
    quote: (raw) => formatUnits(raw, quoteDecimals),
    usd: (raw) => usdOf(raw, quoteDecimals, price),
    priceScale: 10 ** (decimals - quoteDecimals)
  }
}

const priceUsdOf = (t: Token): string | null => {
  const r = priceReserves(t.core)
  return usdPerToken(r.quoteRaw, r.tokenRaw, t.core.identity.decimals, t.core.identity.quoteDecimals, t.price)
}

/** Looks the token up: 404 when unknown (503 while the engine warms up). */
const lookup = (deps: TokenReadDeps, chain: ChainId, mint: string): MarketCore | ApiError => {
  const core = deps.index.market(chain, mint)
  if (core !== undefined) return core
  if (deps.index.warming()) return apiError("FEED_UNAVAILABLE", "Markets are loading; retry shortly", { retryable: true, headers: { "Retry-After": "2" } })
  const other = deps.index.find(mint).find((c) => c !== chain)
  return apiError("MARKET_NOT_FOUND", other === undefined ? `No token ${mint} on ${chain}` : `No token ${mint} on ${chain}; it trades on ${other}`, {
    ...(other === undefined ? {} : { extra: { routing: { reason: "chain_mismatch", chain: other } } })
  })
}

const positionRow = (t: Token, p: Position) => ({
  wallet: p.trader,
  bought: t.tokens(p.boughtRaw),
  sold: t.tokens(p.soldRaw),
  net: t.tokens(p.netRaw),
  held: t.tokens(p.heldRaw),
  held_bps: bps(p.heldRaw, t.core.params.supplyRaw),
  spent: t.quote(p.spentQuoteRaw),
  received: t.quote(p.receivedQuoteRaw),
  value: t.quote(p.valueQuoteRaw),
  pnl: t.quote(p.pnlQuoteRaw),
  spent_usd: t.usd(p.spentQuoteRaw),
  received_usd: t.usd(p.receivedQuoteRaw),
  value_usd: t.usd(p.valueQuoteRaw),
  pnl_usd: t.usd(p.pnlQuoteRaw),
  buys: p.buys,
  sells: p.sells,
  first_trade_at: iso(p.firstTradeMs),
  last_trade_at: iso(p.lastTradeMs)
})

/** The headline figures of a token (the market record's, in snake_case, with USD). */
const marketFields = (t: Token, asOfMs: number) => {
  const r = marketRecord(t.core, asOfMs)
  const core = t.core
  const mcapRaw = marketCapRaw(core)
  return {
    chain: core.chain,
    address: core.mint,
    name: core.identity.name,
    symbol: core.identity.symbol,
    image: r.metadata.image,
    decimals: core.identity.decimals,
    quote_asset: t.quoteAsset,
    quote_mint: core.identity.quoteMint,
    lifecycle: core.lifecycle,
    venue: r.venue,
    progress_bps: r.progressBps,
    price: r.price,
    price_usd: priceUsdOf(t),
    market_cap: r.marketCap,
    market_cap_usd: mcapRaw === null ? null : t.usd(mcapRaw),
    liquidity: t.quote(core.lifecycle === "migrated" && core.pool !== null ? core.pool.quoteReserveRaw : core.curveState.realQuoteRaw),
    liquidity_usd: t.usd(core.lifecycle === "migrated" && core.pool !== null ? core.pool.quoteReserveRaw : core.curveState.realQuoteRaw),
    volume_1h: r.volume1h,
    trades_1h: r.trades1h,
    volume_24h: r.volume24h,
    volume_24h_usd: t.usd(statsOf(core, asOfMs).day.volumeRaw),
    trades_24h: r.trades24h,
    buys_24h: r.buys24h,
    sells_24h: r.sells24h,
    volume_total: r.volumeTotal,
    trades_total: r.tradesTotal,
    created_at: r.createdAt,
    last_trade_at: r.lastTradeAt,
    creator: core.identity.creator,
    stats_as_of: r.statsAsOf
  }
}

const SAFETY_CREATOR_BPS = 2_000
const SAFETY_TOP10_BPS = 5_000

/** Safety facts derivable from the chain record and the trades (docs/decisions: token safety). */
const safetyOf = (t: Token, holders: ReadonlyArray<Position>, holderCount: number, creator: Position | undefined) => {
  const supply = t.core.params.supplyRaw
  const top10 = holders.slice(0, 10).reduce((s, p) => s + p.heldRaw, 0n)
  const creatorHeld = creator?.heldRaw ?? 0n
  const flags: Array<string> = []
  const creatorBps = bps(creatorHeld, supply)
  const top10Bps = bps(top10, supply)
  if (creatorBps > SAFETY_CREATOR_BPS) flags.push("creator_holds_over_20pct")
  if (top10Bps > SAFETY_TOP10_BPS) flags.push("top10_hold_over_50pct")
  if (creator !== undefined && creator.soldRaw > 0n) flags.push("creator_sold")
  if (t.core.lifecycle === "recovery") flags.push("market_in_recovery")
  if (t.core.lifecycle === "completed") flags.push("graduating_not_tradable")
  return {
    launched_here: true,
    program_curve: true,
    mode: t.core.identity.mode,
    buys_open: t.core.lifecycle === "trading" || t.core.lifecycle === "migrated",
    sells_open: t.core.lifecycle === "trading" || t.core.lifecycle === "migrated",
    holders: holderCount,
    top10_held_bps: top10Bps,
    creator_held_bps: creatorBps,
    creator_bought: t.tokens(creator?.boughtRaw ?? 0n),
    creator_sold: t.tokens(creator?.soldRaw ?? 0n),
    flags
  }
}

// ---------------------------------------------------------------------------------------------
// Routes

const addressParam: ParamDoc = { name: "address", description: "Token mint (Solana base58) or token address (Hood 0x…)", schema: { type: "string" } }
const chainQ: ParamDoc = { name: "chain", description: "solana (default) or hood", schema: { type: "string", enum: ["solana", "hood"], default: "solana" } }
const solanaQ: ParamDoc = { name: "chain", description: "solana only (the default)", schema: { type: "string", enum: ["solana"], default: "solana" } }
const intQ = (name: string, description: string, min: number, max: number, dflt: number): ParamDoc => ({
  name,
  description,
  schema: { type: "integer", minimum: min, maximum: max, default: dflt }
})

const standardResponses = {
  400: { description: "VALIDATION_FAILED naming the field" },
  401: { description: "{\"error\": \"invalid api key\"}" },
  503: { description: "FEED_UNAVAILABLE (retryable)" }
}
const tokenResponses = { ...standardResponses, 404: { description: "MARKET_NOT_FOUND" } }

export const tokenReadRoutes = (deps: TokenReadDeps): ReadonlyArray<RouteDef> => {
  /** Authenticates, then runs the read; a refusal reply passes through as the answer. */
  const authed =
    (f: (req: Request, caller: DataCaller) => Effect.Effect<Reply, ApiError>) =>
    (req: Request): Effect.Effect<Reply, ApiError> =>
      deps.authenticate(req).pipe(
        Effect.matchEffect({
          onFailure: (e) => (isErr(e) ? Effect.fail(e) : Effect.succeed(e)),
          onSuccess: (caller) => f(req, caller)
        })
      )

  /** For `/v1/market/token/{address}/…`: parse chain and address, look the token up, price it. */
  const withToken =
    (f: (req: Request, t: Token, q: URLSearchParams, caller: DataCaller) => Effect.Effect<Reply, ApiError>) =>
    authed((req, caller) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q)
        if (isErr(chain)) return yield* chain
        const mint = parseAddress(chain, req.params[0], "address")
        if (isErr(mint)) return yield* mint
        const core = lookup(deps, chain, mint)
        if (isErr(core)) return yield* core
        return yield* f(req, yield* tokenOf(deps, core), q, caller)
      })
    )

  const tokenRoute = (
    suffix: string,
    operationId: string,
    summary: string,
    query: ReadonlyArray<ParamDoc>,
    f: (req: Request, t: Token, q: URLSearchParams, caller: DataCaller) => Effect.Effect<Reply, ApiError>,
    description?: string
  ): RouteDef => ({
    method: "GET",
    path: `/v1/market/token/{address}${suffix}`,
    operationId,
    summary,
    ...(description === undefined ? {} : { description }),
    tags: ["market-data"],
    auth: "bearer",
    pathParams: [addressParam],
    query: [chainQ, ...query],
    headers: AUTH_HEADERS,
    responses: { 200: { description: summary }, ...tokenResponses },
    handler: withToken(f)
  })

  const plainRoute = (
    path: string,
    operationId: string,
    summary: string,
    query: ReadonlyArray<ParamDoc>,
    f: (req: Request, caller: DataCaller) => Effect.Effect<Reply, ApiError>
  ): RouteDef => ({
    method: "GET",
    path,
    operationId,
    summary,
    tags: ["market-data"],
    auth: "bearer",
    query,
    headers: AUTH_HEADERS,
    responses: { 200: { description: summary }, ...standardResponses },
    handler: authed(f)
  })

  const spotOf = (core: MarketCore) => priceReserves(core)
  const asOf = (core: MarketCore) => deps.index.clockMs(core.chain)

  // 1. Market data and safety.
  const market = tokenRoute("", "dataTokenMarket", "Token market data and safety", [], (_req, t) =>
    Effect.gen(function* () {
      const { positions, total } = yield* ch(topPositions(deps.clickhouse, t.core.chain, t.core.mint, spotOf(t.core), "held", 10, true))
      const [creator] = yield* ch(walletPositions(deps.clickhouse, t.core.chain, t.core.mint, spotOf(t.core), [t.core.identity.creator]))
      return json(200, { token: marketFields(t, asOf(t.core)), safety: safetyOf(t, positions, total, creator) })
    })
  )

  // 2. OHLCV history.
  const readHistory = (t: Token, q: URLSearchParams, dfltInterval: CandleInterval, maxCandles: number, dfltCandles?: number) =>
    Effect.gen(function* () {
      const interval = parseInterval(q, dfltInterval)
      if (isErr(interval)) return yield* interval
      const to = parseTime(q, "to")
      if (isErr(to)) return yield* to
      const from = parseTime(q, "from")
      if (isErr(from)) return yield* from
      const stepMs = intervalMinutes[interval] * 60_000
      const toMs = to ?? deps.nowMs()
      const fromMs = from ?? (dfltCandles === undefined ? toMs - HISTORY_DEFAULT_DAYS * DAY_MS : toMs - dfltCandles * stepMs)
      if (fromMs >= toMs) return yield* validationFailed("from", "from must be before to")
      const count = Math.ceil(toMs / stepMs) - Math.floor(fromMs / stepMs)
      if (count > maxCandles) {
        return yield* validationFailed("interval", `The range covers ${count} ${interval} candles; at most ${maxCandles} per request (use a wider interval)`, {
          limit: maxCandles
        })
      }
      return yield* ch(Effect.provideService(readCandles(t.core.chain, t.core.mint, interval, fromMs, toMs), ClickHouse, deps.clickhouse))
    })

  const candleRow = (t: Token, c: Candle) => ({
    t: iso(c.startMs),
    open: c.open * t.priceScale,
    high: c.high * t.priceScale,
    low: c.low * t.priceScale,
    close: c.close * t.priceScale,
    volume: t.quote(c.volumeQuoteRaw),
    volume_usd: t.usd(c.volumeQuoteRaw),
    volume_tokens: t.tokens(c.volumeTokenRaw),
    trades: c.trades,
    buys: c.buys,
    sells: c.sells
  })

  const history = tokenRoute(
    "/history",
    "dataTokenHistory",
    "OHLCV candles (1m, 5m, 15m, 1h, 4h, 1D) with a summary; 30 days by default",
    [
      { name: "interval", description: "1m, 5m, 15m, 1h (default), 4h or 1D", schema: { type: "string", default: "1h" } },
      { name: "from", description: "ISO 8601 or epoch ms; default to - 30 days", schema: { type: "string" } },
      { name: "to", description: "ISO 8601 or epoch ms; default now", schema: { type: "string" } }
    ],
    (_req, t, q) =>
      Effect.gen(function* () {
        const series = yield* readHistory(t, q, "1h", candlesMax)
        const s = series.summary
        return json(200, {
          chain: t.core.chain,
          address: t.core.mint,
          interval: series.interval === "1d" ? "1D" : series.interval,
          price_unit: `${t.quoteAsset ?? "quote"} per whole token`,
          from: iso(series.fromMs),
          to: iso(series.toMs),
          candles: series.candles.map((c) => candleRow(t, c)),
          summary:
            s === null
              ? null
              : {
                  open: s.open * t.priceScale,
                  high: s.high * t.priceScale,
                  low: s.low * t.priceScale,
                  close: s.close * t.priceScale,
                  change: s.change * t.priceScale,
                  change_pct: s.changePct,
                  volume: t.quote(s.volumeQuoteRaw),
                  volume_usd: t.usd(s.volumeQuoteRaw),
                  volume_tokens: t.tokens(s.volumeTokenRaw),
                  trades: s.trades,
                  buys: s.buys,
                  sells: s.sells
                }
        })
      })
  )

  const chart: RouteDef = {
    ...tokenRoute(
      "/chart.svg",
      "dataTokenChart",
      "OHLCV chart as SVG (at most 500 candles; default the last 200 of the interval)",
      [
        { name: "interval", description: "1m, 5m, 15m (default), 1h, 4h or 1D", schema: { type: "string", default: "15m" } },
        { name: "from", description: "ISO 8601 or epoch ms", schema: { type: "string" } },
        { name: "to", description: "ISO 8601 or epoch ms; default now", schema: { type: "string" } },
        intQ("width", "Pixels", CHART_WIDTH.min, CHART_WIDTH.max, CHART_WIDTH.default),
        intQ("height", "Pixels", CHART_HEIGHT.min, CHART_HEIGHT.max, CHART_HEIGHT.default)
      ],
      (_req, t, q) =>
        Effect.gen(function* () {
          const width = parseInt_(q, "width", CHART_WIDTH.min, CHART_WIDTH.max, CHART_WIDTH.default)
          if (isErr(width)) return yield* width
          const height = parseInt_(q, "height", CHART_HEIGHT.min, CHART_HEIGHT.max, CHART_HEIGHT.default)
          if (isErr(height)) return yield* height
          const series = yield* readHistory(t, q, "15m", CHART_CANDLES_MAX, 200)
          const body = ohlcvSvg({
            title: `${t.core.identity.name} (${t.core.identity.symbol})`,
            interval: series.interval === "1d" ? "1D" : series.interval,
            candles: series.candles,
            priceScale: t.priceScale,
            width,
            height
          })
          return { status: 200, body, contentType: "image/svg+xml; charset=utf-8", headers: [["Cache-Control", "private, max-age=15"]] }
        })
    ),
    responses: { 200: { description: "image/svg+xml" }, ...tokenResponses }
  }

  // 4. Top traders and holders.
  const topTraders = tokenRoute(
    "/top-traders",
    "dataTokenTopTraders",
    "Wallets ranked by P&L (or volume) on the token, from its trades",
    [
      { name: "sort", description: "pnl (default) or volume", schema: { type: "string", enum: ["pnl", "volume"], default: "pnl" } },
      intQ("limit", "Rows", 1, 100, 20)
    ],
    (_req, t, q) =>
      Effect.gen(function* () {
        const sort = parseEnum<PositionOrder, PositionOrder>(q, "sort", ["pnl", "volume"], "pnl")
        if (isErr(sort)) return yield* sort
        const limit = parseInt_(q, "limit", 1, 100, 20)
        if (isErr(limit)) return yield* limit
        const { positions, total } = yield* ch(topPositions(deps.clickhouse, t.core.chain, t.core.mint, spotOf(t.core), sort, limit, false))
        return json(200, { chain: t.core.chain, address: t.core.mint, sort, traders: total, rows: positions.map((p) => positionRow(t, p)) })
      }),
    "P&L = quote received from sells + held tokens at the spot price - quote spent on buys (fees included)."
  )

  const holders = tokenRoute("/holders", "dataTokenHolders", "Holders by net position from trades (Solana and Hood)", [intQ("limit", "Rows", 1, 200, 50)], (_req, t, q) =>
    Effect.gen(function* () {
      const limit = parseInt_(q, "limit", 1, 200, 50)
      if (isErr(limit)) return yield* limit
      const { positions, total } = yield* ch(topPositions(deps.clickhouse, t.core.chain, t.core.mint, spotOf(t.core), "held", limit, true))
      return json(200, {
        chain: t.core.chain,
        address: t.core.mint,
        supply: t.tokens(t.core.params.supplyRaw),
        holders: total,
        rows: positions.map((p) => ({
          wallet: p.trader,
          amount: t.tokens(p.heldRaw),
          held_bps: bps(p.heldRaw, t.core.params.supplyRaw),
          value: t.quote(p.valueQuoteRaw),
          value_usd: t.usd(p.valueQuoteRaw),
          is_creator: p.trader === t.core.identity.creator
        }))
      })
    })
  )

  // 9. Venues and profile.
  const venues = tokenRoute("/venues", "dataTokenVenues", "Where the token trades now and totals per venue", [], (_req, t) =>
    Effect.gen(function* () {
      const rows = yield* ch(venueTotals(deps.clickhouse, t.core.chain, t.core.mint, deps.nowMs() - DAY_MS))
      const current = venueOf(t.core.chain, t.core.lifecycle)
      const name = (v: "curve" | "pool") => (v === "curve" ? "svc-curve" : t.core.chain === "solana" ? "dex" : "hood-dex")
      return json(200, {
        chain: t.core.chain,
        address: t.core.mint,
        current,
        venues: rows.map((v) => ({
          venue: name(v.venue),
          active: name(v.venue) === current,
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
      })
    })
  )

  const profile = tokenRoute("/profile", "dataTokenProfile", "Identity, launch terms and the creator's other launches", [], (_req, t) =>
    Effect.sync(() => {
      const id = t.core.identity
      const others: Array<{ chain: ChainId; address: string; symbol: string; lifecycle: string }> = []
      let launches = 0
      for (const m of deps.index.markets()) {
        if (m.identity.creator !== id.creator) continue
        launches++
        if (m.mint !== t.core.mint && others.length < 20) others.push({ chain: m.chain, address: m.mint, symbol: m.identity.symbol, lifecycle: m.lifecycle })
      }
      return json(200, {
        chain: t.core.chain,
        address: t.core.mint,
        name: id.name,
        symbol: id.symbol,
        image: id.uri === "" ? null : id.uri,
        uri: id.uri,
        socials: null,
        description: null,
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
        creator: { address: id.creator, launches, other_launches: others }
      })
    })
  )

  // 6. Launch overview, cached 60 s.
  const overviewCache = new Map<string, { readonly atMs: number; readonly body: string }>()
  const launchOverview = tokenRoute("/launch-overview", "dataTokenLaunchOverview", "How the launch went (cached 60 s)", [], (_req, t) =>
    Effect.gen(function* () {
      const key = `${t.core.chain}:${t.core.mint}`
      const now = deps.nowMs()
      const hit = overviewCache.get(key)
      const reply = (body: string, atMs: number): Reply => ({
        status: 200,
        body,
        contentType: "application/json; charset=utf-8",
        headers: [
          ["Cache-Control", `private, max-age=${Math.max(0, Math.ceil((atMs + OVERVIEW_TTL_MS - now) / 1000))}`],
          ["Age", String(Math.max(0, Math.floor((now - atMs) / 1000)))]
        ]
      })
      if (hit !== undefined && now - hit.atMs < OVERVIEW_TTL_MS) return reply(hit.body, hit.atMs)
      const id = t.core.identity
      const agg = yield* ch(launchAggregates(deps.clickhouse, t.core.chain, t.core.mint, id.creator, id.createdAtMs, EARLY_WINDOW_MS))
      const { positions, total } = yield* ch(topPositions(deps.clickhouse, t.core.chain, t.core.mint, spotOf(t.core), "held", 10, true))
      const top10 = positions.reduce((s, p) => s + p.heldRaw, 0n)
      const body = JSON.stringify({
        chain: t.core.chain,
        address: t.core.mint,
        name: id.name,
        symbol: id.symbol,
        created_at: iso(id.createdAtMs),
        creator: id.creator,
        lifecycle: t.core.lifecycle,
        progress_bps: marketRecord(t.core, asOf(t.core)).progressBps,
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
        top10_held_bps: bps(top10, t.core.params.supplyRaw),
        graduated_at: iso(agg.graduatedAtMs),
        seconds_to_graduation: agg.graduatedAtMs === null ? null : Math.max(0, Math.floor((agg.graduatedAtMs - id.createdAtMs) / 1000)),
        migrated_at: iso(t.core.migration.migratedAtMs),
        cached_at: iso(now)
      })
      if (overviewCache.size >= OVERVIEW_CACHE_MAX) {
        // Drop expired entries first, then the oldest insertion.
        for (const [k, v] of overviewCache) if (now - v.atMs >= OVERVIEW_TTL_MS) overviewCache.delete(k)
        if (overviewCache.size >= OVERVIEW_CACHE_MAX) overviewCache.delete(overviewCache.keys().next().value!)
      }
      overviewCache.delete(key)
      overviewCache.set(key, { atMs: now, body })
      return reply(body, now)
    })
  )

  // 7. Wallet P&L.
  const walletPnl = tokenRoute(
    "/wallet-pnl",
    "dataTokenWalletPnl",
    "P&L of up to 50 wallets on the token",
    [{ name: "wallets", required: true, description: "Comma-separated wallet addresses, 1 to 50", schema: { type: "string" } }],
    (_req, t, q) =>
      Effect.gen(function* () {
        const wallets = parseAddressList(q, "wallets", t.core.chain, 1, WALLET_PNL_MAX)
        if (isErr(wallets)) return yield* wallets
        const found = yield* ch(walletPositions(deps.clickhouse, t.core.chain, t.core.mint, spotOf(t.core), wallets))
        const byWallet = new Map(found.map((p) => [p.trader, p]))
        return json(200, {
          chain: t.core.chain,
          address: t.core.mint,
          price: marketRecord(t.core, asOf(t.core)).price,
          price_usd: priceUsdOf(t),
          wallets: wallets.map((w) => {
            const p = byWallet.get(w)
            if (p === undefined) return { wallet: w, traded: false }
            // Average cost: the tokens sold carry their share of what was spent (tokens sold beyond
            // those bought, e.g. received by transfer, carry no cost).
            const costSold = p.boughtRaw === 0n ? 0n : (p.spentQuoteRaw * (p.soldRaw < p.boughtRaw ? p.soldRaw : p.boughtRaw)) / p.boughtRaw
            const realized = p.receivedQuoteRaw - costSold
            const costHeld = p.spentQuoteRaw - costSold
            const unrealized = p.valueQuoteRaw - costHeld
            return {
              traded: true,
              ...positionRow(t, p),
              realized_pnl: t.quote(realized),
              realized_pnl_usd: t.usd(realized),
              unrealized_pnl: t.quote(unrealized),
              unrealized_pnl_usd: t.usd(unrealized)
            }
          })
        })
      }),
    "realized = received - cost of the tokens sold at the average buy cost; unrealized = held value at spot - cost of what is held; pnl = realized + unrealized."
  )

  // 3. Prices.
  const prices = plainRoute(
    "/v1/market/prices",
    "dataPrices",
    "Prices of up to 60 tokens",
    [chainQ, { name: "addresses", required: true, description: "Comma-separated token addresses, 1 to 60", schema: { type: "string" } }],
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q)
        if (isErr(chain)) return yield* chain
        const addresses = parseAddressList(q, "addresses", chain, 1, PRICES_MAX)
        if (isErr(addresses)) return yield* addresses
        const cores = addresses.map((a) => deps.index.market(chain, a))
        const usd = yield* usdPrices(deps.prices, cores.map((c) => (c === undefined ? undefined : quotePairOf(chain, c.identity.quoteMint))))
        const rows: Array<Record<string, unknown>> = []
        const missing: Array<string> = []
        addresses.forEach((a, i) => {
          const core = cores[i]
          if (core === undefined) return missing.push(a)
          const t = helpers(core, usd)
          const r = marketRecord(core, asOf(core))
          rows.push({ address: a, symbol: core.identity.symbol, quote_asset: t.quoteAsset, price: r.price, price_usd: priceUsdOf(t), market_cap: r.marketCap, lifecycle: core.lifecycle, last_trade_at: r.lastTradeAt })
        })
        return json(200, { chain, prices: rows, missing })
      })
  )

  // 5. Search, gainers, activity.
  const search = plainRoute(
    "/v1/market/token-search",
    "dataTokenSearch",
    "Find tokens by name, ticker or address",
    [chainQ, { name: "q", required: true, description: `1 to ${SEARCH_QUERY_MAX} characters`, schema: { type: "string" } }, intQ("limit", "Rows", 1, 50, 20)],
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q)
        if (isErr(chain)) return yield* chain
        const text = (q.get("q") ?? "").trim()
        if (text === "" || text.length > SEARCH_QUERY_MAX) return yield* validationFailed("q", `q must be 1 to ${SEARCH_QUERY_MAX} characters`)
        const limit = parseInt_(q, "limit", 1, 50, 20)
        if (isErr(limit)) return yield* limit
        const needle = text.toLowerCase().replace(/^\$/, "")
        const scored: Array<{ core: MarketCore; rank: number; volume: bigint }> = []
        for (const core of deps.index.markets()) {
          if (core.chain !== chain) continue
          const sym = core.identity.symbol.toLowerCase()
          const name = core.identity.name.toLowerCase()
          const rank =
            normalizeAddress(chain, text) === core.mint ? 0
            : sym === needle ? 1
            : name === needle ? 2
            : sym.startsWith(needle) ? 3
            : name.startsWith(needle) ? 4
            : sym.includes(needle) || name.includes(needle) ? 5
            : -1
          if (rank >= 0) scored.push({ core, rank, volume: core.stats.volumeTotalRaw })
        }
        scored.sort((a, b) => a.rank - b.rank || (b.volume > a.volume ? 1 : b.volume < a.volume ? -1 : 0) || (a.core.mint < b.core.mint ? -1 : 1))
        const top = scored.slice(0, limit)
        const usd = yield* usdPrices(deps.prices, top.map((s) => quotePairOf(chain, s.core.identity.quoteMint)))
        return json(200, {
          chain,
          q: text,
          matched: scored.length,
          results: top.map(({ core, rank }) => {
            const t = helpers(core, usd)
            const r = marketRecord(core, asOf(core))
            return {
              address: core.mint,
              name: core.identity.name,
              symbol: core.identity.symbol,
              image: r.metadata.image,
              match: ["address", "symbol", "name", "symbol_prefix", "name_prefix", "contains"][rank],
              lifecycle: core.lifecycle,
              price: r.price,
              price_usd: priceUsdOf(t),
              market_cap: r.marketCap,
              volume_24h: r.volume24h,
              created_at: r.createdAt
            }
          })
        })
      })
  )

  const WINDOWS: Record<string, number> = { "5m": 5 * 60_000, "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": DAY_MS }
  const gainers = plainRoute(
    "/v1/market/gainers",
    "dataGainers",
    "Solana tokens with the largest price rise over the window",
    [solanaQ, { name: "window", description: "5m, 1h (default), 6h or 24h", schema: { type: "string", enum: Object.keys(WINDOWS), default: "1h" } }, intQ("limit", "Rows", 1, 100, 20)],
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q, "solana")
        if (isErr(chain)) return yield* chain
        const window = parseEnum(q, "window", Object.keys(WINDOWS), "1h")
        if (isErr(window)) return yield* window
        const limit = parseInt_(q, "limit", 1, 100, 20)
        if (isErr(limit)) return yield* limit
        const now = deps.nowMs()
        const moves = yield* ch(priceMoves(deps.clickhouse, chain, now - WINDOWS[window]!, now))
        const ranked = moves
          .map((m) => ({ m, core: deps.index.market(chain, m.mint), pct: m.startPrice > 0 ? (m.lastPrice / m.startPrice - 1) * 100 : null }))
          .filter((x): x is { m: typeof x.m; core: MarketCore; pct: number } => x.core !== undefined && x.pct !== null && x.pct > 0)
          .sort((a, b) => b.pct - a.pct || (a.m.mint < b.m.mint ? -1 : 1))
          .slice(0, limit)
        const usd = yield* usdPrices(deps.prices, ranked.map((x) => quotePairOf(chain, x.core.identity.quoteMint)))
        return json(200, {
          chain,
          window,
          gainers: ranked.map(({ m, core, pct }) => {
            const t = helpers(core, usd)
            const r = marketRecord(core, asOf(core))
            return {
              address: core.mint,
              name: core.identity.name,
              symbol: core.identity.symbol,
              change_pct: Math.round(pct * 100) / 100,
              price: r.price,
              price_usd: priceUsdOf(t),
              market_cap: r.marketCap,
              volume: t.quote(m.volumeQuoteRaw),
              volume_usd: t.usd(m.volumeQuoteRaw),
              trades: m.trades,
              lifecycle: core.lifecycle
            }
          })
        })
      })
  )

  const activity = plainRoute(
    "/v1/market/activity",
    "dataActivity",
    "Tokens most traded by tracked wallets (those the plan sees) over the window",
    [chainQ, intQ("hours", "Window in hours", 1, 168, 24), intQ("limit", "Rows", 1, 100, 20)],
    (req, caller) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q)
        if (isErr(chain)) return yield* chain
        const hours = parseInt_(q, "hours", 1, 168, 24)
        if (isErr(hours)) return yield* hours
        const limit = parseInt_(q, "limit", 1, 100, 20)
        if (isErr(limit)) return yield* limit
        const wallets = deps.trackedWallets === undefined ? undefined : deps.trackedWallets(caller.plan, chain).map((w) => w.address)
        const rows = wallets !== undefined && wallets.length === 0 ? [] : yield* ch(tokenActivity(deps.clickhouse, chain, deps.nowMs() - hours * 3_600_000, wallets, limit))
        const cores = rows.map((r) => deps.index.market(chain, r.mint))
        const usd = yield* usdPrices(deps.prices, cores.map((c) => (c === undefined ? undefined : quotePairOf(chain, c.identity.quoteMint))))
        return json(200, {
          chain,
          hours,
          wallets: wallets === undefined ? "all" : "tracked",
          tokens: rows.map((r, i) => {
            const core = cores[i]
            const t = core === undefined ? undefined : helpers(core, usd)
            return {
              address: r.mint,
              name: core?.identity.name ?? null,
              symbol: core?.identity.symbol ?? null,
              wallets: r.wallets,
              trades: r.trades,
              buys: r.buys,
              sells: r.sells,
              volume: t === undefined ? null : t.quote(r.volumeQuoteRaw),
              volume_usd: t === undefined ? null : t.usd(r.volumeQuoteRaw),
              last_trade_at: iso(r.lastTradeMs)
            }
          })
        })
      })
  )

  // 8. Cohort overlap.
  const cohortOverlap = plainRoute(
    "/v1/market/cohort-overlap",
    "dataCohortOverlap",
    "Wallets shared by the holders (or traders) of 2 to 5 tokens",
    [
      chainQ,
      { name: "mints", required: true, description: "Comma-separated token addresses, 2 to 5", schema: { type: "string" } },
      { name: "basis", description: "holders (default: net position > 0) or traders (any trade)", schema: { type: "string", enum: ["holders", "traders"], default: "holders" } },
      intQ("limit", "Shared wallets listed", 0, 500, 100)
    ],
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q)
        if (isErr(chain)) return yield* chain
        const mints = parseAddressList(q, "mints", chain, COHORT_MIN, COHORT_MAX)
        if (isErr(mints)) return yield* mints
        const basis = parseEnum(q, "basis", ["holders", "traders"] as const, "holders")
        if (isErr(basis)) return yield* basis
        const limit = parseInt_(q, "limit", 0, 500, 100)
        if (isErr(limit)) return yield* limit
        const unknown = mints.find((m) => deps.index.market(chain, m) === undefined)
        if (unknown !== undefined) return yield* apiError("MARKET_NOT_FOUND", `No token ${unknown} on ${chain}`, { field: "mints" })
        const c = yield* ch(cohorts(deps.clickhouse, chain, mints, basis))
        const pairs: Array<Record<string, unknown>> = []
        for (let i = 0; i < mints.length; i++) {
          for (let j = i + 1; j < mints.length; j++) {
            const a = mints[i]!
            const b = mints[j]!
            const shared = c.shared.filter((w) => w.mints.includes(a) && w.mints.includes(b)).length
            const sa = c.sizes[i]!.wallets
            const sb = c.sizes[j]!.wallets
            const union = sa + sb - shared
            pairs.push({ a, b, shared, overlap_bps: union === 0 ? 0 : Math.floor((shared * 10_000) / union) })
          }
        }
        return json(200, {
          chain,
          basis,
          cohorts: c.sizes.map((s) => ({ address: s.mint, wallets: s.wallets })),
          pairs,
          in_all: c.shared.filter((w) => w.mints.length === mints.length).length,
          in_two_or_more: c.shared.length,
          truncated: c.truncated,
          wallets: c.shared.slice(0, limit).map((w) => ({ wallet: w.wallet, mints: w.mints }))
        })
      })
  )

  // 9. Final stretch.
  const finalStretch = plainRoute(
    "/v1/launches/final-stretch",
    "dataFinalStretch",
    "Solana curve tokens closest to graduating, plus those graduated in the last 10 minutes",
    [solanaQ, intQ("limit", "Curve tokens", 1, 100, 20)],
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q, "solana")
        if (isErr(chain)) return yield* chain
        const limit = parseInt_(q, "limit", 1, 100, 20)
        if (isErr(limit)) return yield* limit
        const now = deps.nowMs()
        const trading: Array<MarketCore> = []
        for (const core of deps.index.markets()) if (core.chain === chain && core.lifecycle === "trading") trading.push(core)
        const progress = new Map(trading.map((c) => [c, marketRecord(c, asOf(c)).progressBps]))
        trading.sort((a, b) => progress.get(b)! - progress.get(a)! || (b.curveState.realQuoteRaw > a.curveState.realQuoteRaw ? 1 : -1))
        const closest = trading.slice(0, limit)
        const graduations = yield* ch(recentGraduations(deps.clickhouse, chain, now - FINAL_STRETCH_GRADUATED_MS))
        const graduated = graduations
          .map((g) => ({ g, core: deps.index.market(chain, g.mint) }))
          .filter((x): x is { g: (typeof graduations)[number]; core: MarketCore } => x.core !== undefined && x.core.lifecycle !== "trading")
        const usd = yield* usdPrices(deps.prices, [...closest, ...graduated.map((x) => x.core)].map((c) => quotePairOf(chain, c.identity.quoteMint)))
        const row = (core: MarketCore) => {
          const t = helpers(core, usd)
          const r = marketRecord(core, asOf(core))
          return {
            address: core.mint,
            name: core.identity.name,
            symbol: core.identity.symbol,
            lifecycle: core.lifecycle,
            progress_bps: r.progressBps,
            raised: t.quote(core.curveState.realQuoteRaw),
            threshold: t.quote(core.params.thresholdRaw),
            remaining: t.quote(core.params.thresholdRaw > core.curveState.realQuoteRaw ? core.params.thresholdRaw - core.curveState.realQuoteRaw : 0n),
            remaining_usd: t.usd(core.params.thresholdRaw > core.curveState.realQuoteRaw ? core.params.thresholdRaw - core.curveState.realQuoteRaw : 0n),
            price: r.price,
            price_usd: priceUsdOf(t),
            market_cap: r.marketCap,
            volume_1h: r.volume1h
          }
        }
        return json(200, {
          chain,
          as_of: iso(now),
          curve: closest.map(row),
          graduated: graduated.map(({ g, core }) => ({ ...row(core), graduated_at: iso(g.graduatedAtMs) }))
        })
      })
  )

  // 9. Metas: narratives from the words in recent launches' names.
  const metas = plainRoute(
    "/v1/market/metas",
    "dataMetas",
    "Narratives: the words shared by the names of tokens launched in the window, ranked by their volume",
    [chainQ, intQ("hours", "Launch window in hours", 1, 168, 24), intQ("limit", "Narratives", 1, 50, 20)],
    (req) =>
      Effect.gen(function* () {
        const q = queryOf(req)
        const chain = parseChain(q)
        if (isErr(chain)) return yield* chain
        const hours = parseInt_(q, "hours", 1, 168, 24)
        if (isErr(hours)) return yield* hours
        const limit = parseInt_(q, "limit", 1, 50, 20)
        if (isErr(limit)) return yield* limit
        const since = deps.nowMs() - hours * 3_600_000
        const metasByWord = new Map<string, { tokens: Array<MarketCore>; volumeRaw: Map<string, bigint> }>()
        for (const core of deps.index.markets()) {
          if (core.chain !== chain || core.identity.createdAtMs < since) continue
          const words = new Set(
            `${core.identity.name} ${core.identity.symbol}`
              .toLowerCase()
              .split(/[^\p{L}\p{N}]+/u)
              .filter((w) => w.length >= 3 && !STOP_WORDS.has(w))
          )
          for (const w of words) {
            let m = metasByWord.get(w)
            if (m === undefined) {
              if (metasByWord.size >= METAS_WORDS_MAX) continue
              m = { tokens: [], volumeRaw: new Map() }
              metasByWord.set(w, m)
            }
            m.tokens.push(core)
            const qa = quotePairOf(chain, core.identity.quoteMint)?.id ?? core.identity.quoteMint
            m.volumeRaw.set(qa, (m.volumeRaw.get(qa) ?? 0n) + core.stats.volumeTotalRaw)
          }
        }
        const usd = yield* usdPrices(deps.prices, [...new Set([...deps.index.markets()].filter((c) => c.chain === chain).map((c) => quotePairOf(chain, c.identity.quoteMint)))])
        const ranked = [...metasByWord.entries()]
          .filter(([, m]) => m.tokens.length >= 2)
          .map(([word, m]) => {
            let micros = 0n
            for (const core of m.tokens) {
              const t = helpers(core, usd)
              const v = t.usd(core.stats.volumeTotalRaw)
              if (v !== null) micros += toMicros(v)
            }
            return { word, m, micros }
          })
          .sort((a, b) => b.m.tokens.length - a.m.tokens.length || (b.micros > a.micros ? 1 : b.micros < a.micros ? -1 : 0) || (a.word < b.word ? -1 : 1))
          .slice(0, limit)
        return json(200, {
          chain,
          hours,
          metas: ranked.map(({ word, m, micros }) => ({
            meta: word,
            tokens: m.tokens.length,
            volume_usd: formatUnits(micros, 6),
            top: m.tokens
              .slice()
              .sort((a, b) => (b.stats.volumeTotalRaw > a.stats.volumeTotalRaw ? 1 : b.stats.volumeTotalRaw < a.stats.volumeTotalRaw ? -1 : 0))
              .slice(0, 5)
              .map((c) => ({ address: c.mint, symbol: c.identity.symbol, name: c.identity.name }))
          }))
        })
      })
  )

  return [market, history, chart, topTraders, holders, venues, profile, launchOverview, walletPnl, prices, search, gainers, activity, cohortOverlap, finalStretch, metas]
}

const METAS_WORDS_MAX = 50_000
const STOP_WORDS = new Set(["the", "and", "token", "coin", "inu", "for", "of"])

/** A USD decimal string (≤ 6 places) → micro-dollars. */
const toMicros = (usd: string): bigint => {
  const neg = usd.startsWith("-")
  const [w = "0", f = ""] = (neg ? usd.slice(1) : usd).split(".")
  const v = BigInt(w) * 1_000_000n + BigInt((f + "000000").slice(0, 6))
  return neg ? -v : v
}

