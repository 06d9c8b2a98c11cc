/**
 * The market-data service's wallet, group, social and asset reads (spec 4.5): the tracked-wallet
 * and group directories (filtered by plan), labelled trades, a wallet's stats, activity, token
 * breakdown, portfolio and book legs (Max), social mentions, mention marks and trending, and the
 * assets directory (the quote assets with their USD prices).
 *
 * Invariants:
 * - Every route authenticates first (`deps.authenticate`). Plan visibility: Free sees `public`
 *   wallets and groups, Pro `public`+`pro`, Max all (Tracking.ts); a wallet or group the plan
 *   cannot see answers the same plain 404 as an unknown one. Book legs are Max only (plain 403
 *   `{"error": "requires Max"}`).
 * - Money is exact: raw amounts stay `bigint` until written as decimal strings in whole units,
 *   USD truncated to the micro-dollar (`Money.ts`). Amounts in different quote assets are never
 *   added together; totals across them are in USD only (each quote asset's total converted once).
 * - Realized P&L is by average cost, replayed over the wallet's history in trade order: a buy adds
 *   its tokens and what it paid to the position; a sell takes out its tokens (at most those held)
 *   with their share of the cost, floored, and realizes `received - that cost`. Tokens sold beyond
 *   those held carry no cost. A period counts the sells inside it, each against the cost built up
 *   over the whole history before it.
 * - Every parameter is bounded and refused past its bound with a 400 `VALIDATION_FAILED` naming
 *   the field; a ClickHouse failure is 503 `FEED_UNAVAILABLE` (retryable).
 */
import { Effect } from "effect"
import type { MarketIndexShape } from "../../../actors/MarketIndex.js"
import type { MarketCore } from "../../../actors/market/MarketActor.js"
import { priceOf, priceReserves } from "../../../actors/market/MarketRecord.js"
import type { SocialMention } from "../../../actors/signals/KolMention.js"
import type { ClickHouseShape } from "../../../clickhouse/ClickHouse.js"
import { bookLegs, bookLegsMax, mintVolumes, pricesAt, tradesOf, walletHistory, type WalletTrade } from "../../../clickhouse/queries/WalletReads.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { type ApiError, apiError, validationFailed } from "../../../src/domain/ApiError.js"
import { formatUnits } from "../../../src/domain/CurveMath.js"
import { QuotePairs, type QuotePair } from "../../../src/domain/QuotePairs.js"
import type { PriceSourceShape, UsdPrice } from "../../../src/services/prices/PriceSource.js"
import type { SocialMentionsShape } from "../../../src/services/social/SocialMentions.js"
import type { TrackedWallet, TrackingShape, WalletGroup } from "../../../src/services/tracking/Tracking.js"
import { json, type Reply, type Request } from "../../Http.js"
import type { ParamDoc, RouteDef } from "../../Router.js"
import { quotePairOf, USD_DECIMALS, usdOf, usdPerToken, usdPrices } from "./Money.js"
import type { DataCaller } from "./TokenReadRoutes.js"
import { chRead, iso } from "./internal/shared.js"
import {
  isApiError as isErr,
  opt,
  type Parsed,
  parseAddress,
  parseChainParam as parseChain,
  parseEnumParam as parseEnum,
  parseIntParam,
  parseTimeParam as parseTime
} from "../../QueryParams.js"

export interface WalletSocialDeps {
  readonly clickhouse: ClickHouseShape
  readonly index: MarketIndexShape
  readonly prices: PriceSourceShape
  readonly tracking: TrackingShape
  readonly social: SocialMentionsShape
  readonly nowMs: () => number
  /** The data bearer: the caller, or a refusal (an `ApiError`, or a ready reply such as the plain 401). */
  readonly authenticate: (req: Request) => Effect.Effect<DataCaller, ApiError | Reply>
}

export const DIRECTORY_LIMIT_MAX = 500
export const DIRECTORY_LIMIT_DEFAULT = 100
export const LIST_LIMIT_MAX = 200
export const LIST_LIMIT_DEFAULT = 50
export const BOOK_LEGS_DAYS_DEFAULT = 30
export const BOOK_LEGS_DAYS_MAX = 90
export const BOOK_LEGS_WINDOW_MINUTES_DEFAULT = 10
export const BOOK_LEGS_WINDOW_MINUTES_MAX = 60
export const MENTION_MARKS_DAYS_DEFAULT = 7
export const MENTION_MARKS_DAYS_MAX = 30
/** Most mentions a trending read ranks (the newest in the window). */
export const TRENDING_SCAN_MAX = 10_000

const DAY_MS = 86_400_000
const PERIODS: Readonly<Record<string, number | null>> = { "1d": DAY_MS, "7d": 7 * DAY_MS, "30d": 30 * DAY_MS, "90d": 90 * DAY_MS, all: null }
const PERIOD_DEFAULT = "30d"
const TRENDING_WINDOWS: Readonly<Record<string, number>> = { "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": DAY_MS, "7d": 7 * DAY_MS }
const AUTH_HEADERS = ["authorization", "x-api-key"]

export const REQUIRES_MAX = { error: "requires Max" } as const

// ---------------------------------------------------------------------------------------------
// Parameters

/** Integer parameters here report their bounds (`minimum`, `limit`) on a refusal. */
const parseInt_ = (q: URLSearchParams, name: string, min: number, max: number, dflt: number): Parsed<number> => parseIntParam(q, name, min, max, dflt, true)

/** `period`: 1d, 7d, 30d (default), 90d or all → its start (undefined for all). */
const parsePeriod = (q: URLSearchParams, nowMs: number): Parsed<{ readonly name: string; readonly sinceMs: number | undefined }> => {
  const v = opt(q, "period") ?? PERIOD_DEFAULT
  if (!(v in PERIODS)) return validationFailed("period", `period must be one of ${Object.keys(PERIODS).join(", ")}`)
  const span = PERIODS[v]!
  return { name: v, sinceMs: span === null ? undefined : nowMs - span }
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

const ch = chRead("wallet read")
const minBig = (a: bigint, b: bigint) => (a < b ? a : b)
const notFound = (what: string): Reply => json(404, { error: `${what} not found` })

/** What the live market index knows of a token: its quote asset and decimals. */
interface TokenInfo {
  readonly core: MarketCore | undefined
  readonly pair: QuotePair | undefined
  readonly price: UsdPrice | null
}

const tokenInfo = (index: MarketIndexShape, chain: ChainId, mint: string, usd: ReadonlyMap<string, UsdPrice | null>): TokenInfo => {
  const core = index.market(chain, mint)
  const pair = core === undefined ? undefined : quotePairOf(chain, core.identity.quoteMint)
  return { core, pair, price: pair === undefined ? null : (usd.get(pair.id) ?? null) }
}

const quoteFmt = (t: TokenInfo, raw: bigint): string | null => (t.core === undefined ? null : formatUnits(raw, t.core.identity.quoteDecimals))
const tokenFmt = (t: TokenInfo, raw: bigint): string | null => (t.core === undefined ? null : formatUnits(raw, t.core.identity.decimals))
const usdFmt = (t: TokenInfo, raw: bigint): string | null => (t.core === undefined ? null : usdOf(raw, t.core.identity.quoteDecimals, t.price))

/** USD decimal (≤ 6 places) → micro-dollars. */
const toMicros = (usd: string): bigint => {
  const neg = usd.startsWith("-")
  const [w = "0", f = ""] = (neg ? usd.slice(1) : usd).split(".")
  const v = BigInt(w) * 1_000_000n + BigInt((f + "000000").slice(0, 6))
  return neg ? -v : v
}

/** Per-quote-asset totals and their USD sum (each asset's total converted once). */
class QuoteTotals {
  private readonly raw = new Map<string, { pair: QuotePair; price: UsdPrice | null; raw: bigint }>()
  add(t: TokenInfo, amount: bigint) {
    if (t.pair === undefined) return
    const e = this.raw.get(t.pair.id) ?? { pair: t.pair, price: t.price, raw: 0n }
    e.raw += amount
    this.raw.set(t.pair.id, e)
  }
  byQuote() {
    return [...this.raw.values()]
      .sort((a, b) => (a.pair.id < b.pair.id ? -1 : 1))
      .map((e) => ({ quote_asset: e.pair.id, amount: formatUnits(e.raw, e.pair.decimals), usd: usdOf(e.raw, e.pair.decimals, e.price) }))
  }
  /** USD of all assets; null when one with a non-zero total has no price. */
  usd(): string | null {
    let micros = 0n
    for (const e of this.raw.values()) {
      const u = usdOf(e.raw, e.pair.decimals, e.price)
      if (u === null) {
        if (e.raw !== 0n) return null
        continue
      }
      micros += toMicros(u)
    }
    return formatUnits(micros, USD_DECIMALS)
  }
}

/** One token's position replayed by average cost (see the module comment). */
export interface Ledger {
  heldRaw: bigint
  costRaw: bigint
  boughtRaw: bigint
  soldRaw: bigint
  spentRaw: bigint
  receivedRaw: bigint
  volumeRaw: bigint
  realizedRaw: bigint
  buys: number
  sells: number
  firstMs: number
  lastMs: number
  /** Whether the token had a sell in the period. */
  closed: boolean
  /** Whether the token had any trade in the period. */
  active: boolean
}

/** Replays trades (oldest first); the period's figures count only trades at or after `sinceMs`. */
export const replayLedgers = (trades: ReadonlyArray<WalletTrade>, sinceMs: number | undefined): Map<string, Ledger> => {
  const out = new Map<string, Ledger>()
  for (const t of trades) {
    let l = out.get(t.mint)
    if (l === undefined) {
      l = { heldRaw: 0n, costRaw: 0n, boughtRaw: 0n, soldRaw: 0n, spentRaw: 0n, receivedRaw: 0n, volumeRaw: 0n, realizedRaw: 0n, buys: 0, sells: 0, firstMs: 0, lastMs: 0, closed: false, active: false }
      out.set(t.mint, l)
    }
    const inPeriod = sinceMs === undefined || t.atMs >= sinceMs
    if (t.side === "buy") {
      l.heldRaw += t.tokenRaw
      l.costRaw += t.quoteRaw
    } else {
      const matched = minBig(t.tokenRaw, l.heldRaw)
      const costOut = l.heldRaw === 0n ? 0n : (l.costRaw * matched) / l.heldRaw
      l.costRaw -= costOut
      l.heldRaw -= matched
      if (inPeriod) {
        l.realizedRaw += t.quoteRaw - costOut
        l.closed = true
      }
    }
    if (!inPeriod) continue
    if (!l.active) l.firstMs = t.atMs
    l.active = true
    l.lastMs = t.atMs
    l.volumeRaw += t.volumeQuoteRaw
    if (t.side === "buy") {
      l.buys++
      l.boughtRaw += t.tokenRaw
      l.spentRaw += t.quoteRaw
    } else {
      l.sells++
      l.soldRaw += t.tokenRaw
      l.receivedRaw += t.quoteRaw
    }
  }
  return out
}

/** Value of `heldRaw` at the token's spot reserves, floored (raw quote units); 0 without a price. */
const spotValue = (core: MarketCore | undefined, heldRaw: bigint): bigint => {
  if (core === undefined) return 0n
  const r = priceReserves(core)
  return r.tokenRaw <= 0n ? 0n : (heldRaw * r.quoteRaw) / r.tokenRaw
}

const walletRow = (w: TrackedWallet, kolHandle: string | null) => ({
  id: w.id,
  chain: w.chain,
  address: w.address,
  label: w.label,
  kind: w.kind,
  visibility: w.visibility,
  groups: w.groups,
  kol: w.kolId === null ? null : { id: w.kolId, handle: kolHandle }
})

const groupRow = (g: WalletGroup, members: ReadonlyArray<string>) => ({
  id: g.id,
  name: g.name,
  description: g.description,
  visibility: g.visibility,
  wallet_ids: members,
  wallets: members.length
})

// ---------------------------------------------------------------------------------------------
// Routes

const q = (name: string, description: string, schema: Record<string, unknown> = { type: "string" }, required = false): ParamDoc => ({
  name,
  description,
  schema,
  ...(required ? { required: true } : {})
})
const intQ = (name: string, description: string, min: number, max: number, dflt: number): ParamDoc =>
  q(name, description, { type: "integer", minimum: min, maximum: max, default: dflt })
const chainQ = q("chain", "solana (default) or hood", { type: "string", enum: ["solana", "hood"], default: "solana" })
const solanaQ = q("chain", "solana only (the default)", { type: "string", enum: ["solana"], default: "solana" })
const periodQ = q("period", "1d, 7d, 30d (default), 90d or all", { type: "string", enum: Object.keys(PERIODS), default: PERIOD_DEFAULT })

const standardResponses = {
  400: { description: "VALIDATION_FAILED naming the field" },
  401: { description: "{\"error\": \"invalid api key\"}" },
  503: { description: "FEED_UNAVAILABLE (retryable)" }
}

export const walletSocialRoutes = (deps: WalletSocialDeps): ReadonlyArray<RouteDef> => {
  const authed =
    (f: (req: Request, caller: DataCaller) => Effect.Effect<Reply, ApiError>) =>
    (req: Request): Effect.Effect<Reply, ApiError> =>
      deps.authenticate(req).pipe(
        Effect.matchEffect({
          onFailure: (e) => (isErr(e) ? Effect.fail(e) : Effect.succeed(e)),
          onSuccess: (caller) => f(req, caller)
        })
      )

  const route = (
    path: string,
    operationId: string,
    summary: string,
    query: ReadonlyArray<ParamDoc>,
    f: (req: Request, caller: DataCaller, qs: URLSearchParams) => Effect.Effect<Reply, ApiError>,
    extra: { readonly pathParams?: ReadonlyArray<ParamDoc>; readonly responses?: Record<number, { description: string }>; readonly description?: string } = {}
  ): RouteDef => ({
    method: "GET",
    path,
    operationId,
    summary,
    ...(extra.description === undefined ? {} : { description: extra.description }),
    tags: ["market-data"],
    auth: "bearer",
    ...(extra.pathParams === undefined ? {} : { pathParams: extra.pathParams }),
    query,
    headers: AUTH_HEADERS,
    responses: { 200: { description: summary }, ...standardResponses, ...extra.responses },
    handler: authed((req, caller) => f(req, caller, new URLSearchParams(req.query)))
  })

  const kolHandle = (id: string | null) => (id === null ? null : (deps.tracking.kols().find((k) => k.id === id)?.handle ?? null))
  const idParam = (what: string): ParamDoc => ({ name: "id", description: `The ${what}'s id`, schema: { type: "string" } })
  const walletAddressParam: ParamDoc = { name: "address", description: "Any Solana wallet (base58)", schema: { type: "string" } }

  // -- Directories ------------------------------------------------------------------------------

  const wallets = route(
    "/v1/wallets",
    "dataWallets",
    "Tracked wallets the plan can see (Free: public; Pro: public and pro; Max: all)",
    [
      chainQ,
      q("kind", "smartmoney, kol, deployer or fund", { type: "string", enum: ["smartmoney", "kol", "deployer", "fund"] }),
      q("group", "Only members of this group (one the plan can see)"),
      intQ("limit", "Rows", 1, DIRECTORY_LIMIT_MAX, DIRECTORY_LIMIT_DEFAULT),
      intQ("offset", "Rows skipped", 0, 100_000, 0)
    ],
    (_req, caller, qs) =>
      Effect.gen(function* () {
        const chain = parseChain(qs)
        if (isErr(chain)) return yield* chain
        const kind = parseEnum(qs, "kind", ["smartmoney", "kol", "deployer", "fund"] as const, undefined)
        if (isErr(kind)) return yield* kind
        const groupId = opt(qs, "group")
        if (groupId !== undefined && deps.tracking.group(caller.plan, groupId) === undefined) return yield* validationFailed("group", `Unknown group '${groupId}'`)
        const limit = parseInt_(qs, "limit", 1, DIRECTORY_LIMIT_MAX, DIRECTORY_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const offset = parseInt_(qs, "offset", 0, 100_000, 0)
        if (isErr(offset)) return yield* offset
        const all = deps.tracking
          .wallets(caller.plan, chain)
          .filter((w) => (kind === undefined || w.kind === kind) && (groupId === undefined || w.groups.includes(groupId)))
        return json(200, { chain, plan: caller.plan, total: all.length, wallets: all.slice(offset, offset + limit).map((w) => walletRow(w, kolHandle(w.kolId))) })
      })
  )

  const wallet = route(
    "/v1/wallets/{id}",
    "dataWallet",
    "One tracked wallet with its visible groups and KOL label",
    [],
    (req, caller) =>
      Effect.sync(() => {
        const w = deps.tracking.wallet(caller.plan, req.params[0] ?? "")
        if (w === undefined) return notFound("wallet")
        const kol = w.kolId === null ? undefined : deps.tracking.kols().find((k) => k.id === w.kolId)
        return json(200, {
          ...walletRow(w, kol?.handle ?? null),
          kol: kol === undefined ? null : { id: kol.id, handle: kol.handle, name: kol.name, followers: kol.followers },
          group_details: w.groups.flatMap((g) => {
            const group = deps.tracking.group(caller.plan, g)
            return group === undefined ? [] : [{ id: group.id, name: group.name, visibility: group.visibility }]
          })
        })
      }),
    { pathParams: [idParam("wallet")], responses: { 404: { description: "{\"error\": \"wallet not found\"} (unknown or not visible to the plan)" } } }
  )

  const visibleMembers = (plan: DataCaller["plan"], g: WalletGroup) => g.walletIds.filter((id) => deps.tracking.wallet(plan, id) !== undefined)

  const groups = route("/v1/groups", "dataGroups", "Wallet groups the plan can see", [], (_req, caller) =>
    Effect.sync(() => json(200, { plan: caller.plan, groups: deps.tracking.groups(caller.plan).map((g) => groupRow(g, visibleMembers(caller.plan, g))) }))
  )

  const group = route(
    "/v1/groups/{id}",
    "dataGroup",
    "One wallet group with its members the plan can see",
    [],
    (req, caller) =>
      Effect.sync(() => {
        const g = deps.tracking.group(caller.plan, req.params[0] ?? "")
        if (g === undefined) return notFound("group")
        const members = visibleMembers(caller.plan, g)
        return json(200, {
          ...groupRow(g, members),
          members: members.map((id) => {
            const w = deps.tracking.wallet(caller.plan, id)!
            return walletRow(w, kolHandle(w.kolId))
          })
        })
      }),
    { pathParams: [idParam("group")], responses: { 404: { description: "{\"error\": \"group not found\"} (unknown or not visible to the plan)" } } }
  )

  // -- Trades -----------------------------------------------------------------------------------

  const tradeRow = (t: WalletTrade, info: TokenInfo) => ({
    signature: t.signature,
    at: iso(t.atMs),
    token: t.mint,
    symbol: info.core?.identity.symbol ?? null,
    side: t.side,
    venue: t.venue === "pool" ? "dex" : "svc-curve",
    quote_asset: info.pair?.id ?? null,
    amount: tokenFmt(info, t.tokenRaw),
    quote: quoteFmt(info, t.quoteRaw),
    quote_usd: usdFmt(info, t.quoteRaw),
    volume: quoteFmt(info, t.volumeQuoteRaw),
    volume_usd: usdFmt(info, t.volumeQuoteRaw)
  })

  const pricesFor = (chain: ChainId, mints: Iterable<string>) =>
    usdPrices(
      deps.prices,
      [...mints].map((m) => {
        const core = deps.index.market(chain, m)
        return core === undefined ? undefined : quotePairOf(chain, core.identity.quoteMint)
      })
    )

  const labelledTrades = route(
    "/v1/market/labelled-trades",
    "dataLabelledTrades",
    "Solana trades by tracked smart-money or KOL wallets the plan can see, newest first",
    [
      solanaQ,
      q("kind", "smartmoney or kol (default: both)", { type: "string", enum: ["smartmoney", "kol"] }),
      q("token", "Only this token"),
      q("since", "From this time: ISO 8601 or epoch ms"),
      q("before", "Before this time (exclusive; the previous page's oldest `at`)"),
      intQ("limit", "Rows", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
    ],
    (_req, caller, qs) =>
      Effect.gen(function* () {
        const chain = parseChain(qs, "solana")
        if (isErr(chain)) return yield* chain
        const kind = parseEnum(qs, "kind", ["smartmoney", "kol"] as const, undefined)
        if (isErr(kind)) return yield* kind
        const token = opt(qs, "token") === undefined ? undefined : parseAddress(chain, opt(qs, "token"), "token")
        if (isErr(token)) return yield* token
        const since = parseTime(qs, "since")
        if (isErr(since)) return yield* since
        const before = parseTime(qs, "before")
        if (isErr(before)) return yield* before
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const isKol = (w: TrackedWallet) => w.kind === "kol" || w.kolId !== null
        const labelled = deps.tracking
          .wallets(caller.plan, chain)
          .filter((w) => (kind === undefined ? w.kind === "smartmoney" || isKol(w) : kind === "kol" ? isKol(w) : w.kind === "smartmoney" && !isKol(w)))
        const byAddress = new Map(labelled.map((w) => [w.address, w]))
        const trades = yield* ch(tradesOf(deps.clickhouse, chain, [...byAddress.keys()], { sinceMs: since, beforeMs: before, mint: token }, limit))
        const usd = yield* pricesFor(chain, new Set(trades.map((t) => t.mint)))
        return json(200, {
          chain,
          kind: kind ?? "all",
          wallets: labelled.length,
          trades: trades.map((t) => {
            const w = byAddress.get(t.trader)!
            return { ...tradeRow(t, tokenInfo(deps.index, chain, t.mint, usd)), wallet: { address: w.address, id: w.id, label: w.label, kind: w.kind, kol: kolHandle(w.kolId) } }
          })
        })
      })
  )

  // -- One wallet --------------------------------------------------------------------------------

  const walletRoute = (
    suffix: string,
    operationId: string,
    summary: string,
    query: ReadonlyArray<ParamDoc>,
    f: (address: string, caller: DataCaller, qs: URLSearchParams) => Effect.Effect<Reply, ApiError>,
    extra: { readonly responses?: Record<number, { description: string }>; readonly description?: string } = {}
  ) =>
    route(
      `/v1/market/wallet/{address}${suffix}`,
      operationId,
      summary,
      [solanaQ, ...query],
      (req, caller, qs) =>
        Effect.gen(function* () {
          const chain = parseChain(qs, "solana")
          if (isErr(chain)) return yield* chain
          const address = parseAddress(chain, req.params[0], "address")
          if (isErr(address)) return yield* address
          return yield* f(address, caller, qs)
        }),
      { pathParams: [walletAddressParam], ...extra }
    )

  const labelOf = (address: string, plan: DataCaller["plan"]) => {
    const w = deps.tracking.byAddress("solana", address)
    const visible = w === undefined ? undefined : deps.tracking.wallet(plan, w.id)
    return visible === undefined ? null : { id: visible.id, label: visible.label, kind: visible.kind, groups: visible.groups }
  }

  const stats = walletRoute(
    "/stats",
    "dataWalletStats",
    "A wallet's volume, trades, win rate and realized P&L (average cost) over the period",
    [periodQ],
    (address, caller, qs) =>
      Effect.gen(function* () {
        const period = parsePeriod(qs, deps.nowMs())
        if (isErr(period)) return yield* period
        const history = yield* ch(walletHistory(deps.clickhouse, "solana", address))
        const ledgers = replayLedgers(history.trades, period.sinceMs)
        const usd = yield* pricesFor("solana", ledgers.keys())
        const volume = new QuoteTotals()
        const realized = new QuoteTotals()
        let trades = 0
        let buys = 0
        let sells = 0
        let tokens = 0
        let closed = 0
        let wins = 0
        let unpriced = 0
        for (const [mint, l] of ledgers) {
          if (!l.active) continue
          const info = tokenInfo(deps.index, "solana", mint, usd)
          if (info.pair === undefined) unpriced++
          tokens++
          trades += l.buys + l.sells
          buys += l.buys
          sells += l.sells
          volume.add(info, l.volumeRaw)
          if (l.closed) {
            closed++
            if (l.realizedRaw > 0n) wins++
            realized.add(info, l.realizedRaw)
          }
        }
        return json(200, {
          chain: "solana",
          address,
          period: period.name,
          since: iso(period.sinceMs),
          label: labelOf(address, caller.plan),
          trades,
          buys,
          sells,
          tokens_traded: tokens,
          volume_usd: volume.usd(),
          volume: volume.byQuote(),
          realized_pnl_usd: realized.usd(),
          realized_pnl: realized.byQuote(),
          tokens_closed: closed,
          wins,
          losses: closed - wins,
          win_rate_bps: closed === 0 ? null : Math.floor((wins * 10_000) / closed),
          unknown_tokens: unpriced,
          history_truncated: history.truncated
        })
      }),
    {
      description:
        "Volume is gross quote notional (buys' payments, sells' proceeds before the fee). A token counts as closed when it had a sell in the period, and as a win when its realized P&L there is positive; `win_rate_bps` = wins / closed (null when none)."
    }
  )

  const activity = walletRoute(
    "/activity",
    "dataWalletActivity",
    "A wallet's trades over the period, newest first",
    [periodQ, q("token", "Only this token"), q("before", "Before this time (exclusive; the previous page's oldest `at`)"), intQ("limit", "Rows", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)],
    (address, caller, qs) =>
      Effect.gen(function* () {
        const period = parsePeriod(qs, deps.nowMs())
        if (isErr(period)) return yield* period
        const token = opt(qs, "token") === undefined ? undefined : parseAddress("solana", opt(qs, "token"), "token")
        if (isErr(token)) return yield* token
        const before = parseTime(qs, "before")
        if (isErr(before)) return yield* before
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const trades = yield* ch(tradesOf(deps.clickhouse, "solana", [address], { sinceMs: period.sinceMs, beforeMs: before, mint: token }, limit))
        const usd = yield* pricesFor("solana", new Set(trades.map((t) => t.mint)))
        return json(200, {
          chain: "solana",
          address,
          period: period.name,
          label: labelOf(address, caller.plan),
          trades: trades.map((t) => tradeRow(t, tokenInfo(deps.index, "solana", t.mint, usd))),
          next_before: trades.length === limit ? iso(trades[trades.length - 1]!.atMs) : null
        })
      })
  )

  const tokenBreakdown = walletRoute(
    "/token-breakdown",
    "dataWalletTokenBreakdown",
    "A wallet's figures per token traded in the period (average-cost P&L, holdings valued at spot)",
    [periodQ, intQ("limit", "Tokens", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)],
    (address, _caller, qs) =>
      Effect.gen(function* () {
        const period = parsePeriod(qs, deps.nowMs())
        if (isErr(period)) return yield* period
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const history = yield* ch(walletHistory(deps.clickhouse, "solana", address))
        const ledgers = [...replayLedgers(history.trades, period.sinceMs)].filter(([, l]) => l.active)
        ledgers.sort(([ma, a], [mb, b]) => b.lastMs - a.lastMs || (ma < mb ? -1 : 1))
        const usd = yield* pricesFor("solana", ledgers.map(([m]) => m))
        return json(200, {
          chain: "solana",
          address,
          period: period.name,
          tokens_traded: ledgers.length,
          history_truncated: history.truncated,
          tokens: ledgers.slice(0, limit).map(([mint, l]) => {
            const info = tokenInfo(deps.index, "solana", mint, usd)
            const value = spotValue(info.core, l.heldRaw)
            return {
              token: mint,
              symbol: info.core?.identity.symbol ?? null,
              name: info.core?.identity.name ?? null,
              quote_asset: info.pair?.id ?? null,
              trades: l.buys + l.sells,
              buys: l.buys,
              sells: l.sells,
              bought: tokenFmt(info, l.boughtRaw),
              sold: tokenFmt(info, l.soldRaw),
              spent: quoteFmt(info, l.spentRaw),
              received: quoteFmt(info, l.receivedRaw),
              volume: quoteFmt(info, l.volumeRaw),
              volume_usd: usdFmt(info, l.volumeRaw),
              realized_pnl: quoteFmt(info, l.realizedRaw),
              realized_pnl_usd: usdFmt(info, l.realizedRaw),
              held: tokenFmt(info, l.heldRaw),
              cost_held: quoteFmt(info, l.costRaw),
              value: quoteFmt(info, value),
              value_usd: usdFmt(info, value),
              unrealized_pnl: quoteFmt(info, value - l.costRaw),
              unrealized_pnl_usd: usdFmt(info, value - l.costRaw),
              first_trade_at: iso(l.firstMs),
              last_trade_at: iso(l.lastMs)
            }
          })
        })
      })
  )

  const portfolio = walletRoute(
    "/portfolio",
    "dataWalletPortfolio",
    "A wallet's net positions (from its trades) valued at the tokens' spot reserves",
    [intQ("limit", "Positions", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)],
    (address, _caller, qs) =>
      Effect.gen(function* () {
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const history = yield* ch(walletHistory(deps.clickhouse, "solana", address))
        const held = [...replayLedgers(history.trades, undefined)].filter(([, l]) => l.heldRaw > 0n)
        const usd = yield* pricesFor("solana", held.map(([m]) => m))
        const value = new QuoteTotals()
        const cost = new QuoteTotals()
        const rows = held.map(([mint, l]) => {
          const info = tokenInfo(deps.index, "solana", mint, usd)
          const v = spotValue(info.core, l.heldRaw)
          value.add(info, v)
          cost.add(info, l.costRaw)
          const valueUsd = usdFmt(info, v)
          return { mint, l, info, v, micros: valueUsd === null ? -1n : toMicros(valueUsd) }
        })
        rows.sort((a, b) => (b.micros > a.micros ? 1 : b.micros < a.micros ? -1 : a.mint < b.mint ? -1 : 1))
        return json(200, {
          chain: "solana",
          address,
          positions_count: rows.length,
          value_usd: value.usd(),
          value: value.byQuote(),
          cost_usd: cost.usd(),
          history_truncated: history.truncated,
          positions: rows.slice(0, limit).map(({ mint, l, info, v }) => ({
            token: mint,
            symbol: info.core?.identity.symbol ?? null,
            name: info.core?.identity.name ?? null,
            lifecycle: info.core?.lifecycle ?? null,
            quote_asset: info.pair?.id ?? null,
            amount: tokenFmt(info, l.heldRaw),
            price: info.core === undefined ? null : priceOf(info.core),
            price_usd:
              info.core === undefined
                ? null
                : usdPerToken(priceReserves(info.core).quoteRaw, priceReserves(info.core).tokenRaw, info.core.identity.decimals, info.core.identity.quoteDecimals, info.price),
            value: quoteFmt(info, v),
            value_usd: usdFmt(info, v),
            cost: quoteFmt(info, l.costRaw),
            cost_usd: usdFmt(info, l.costRaw),
            unrealized_pnl: quoteFmt(info, v - l.costRaw),
            unrealized_pnl_usd: usdFmt(info, v - l.costRaw)
          }))
        })
      }),
    {
      description:
        "Positions are what the wallet's trades on our venues net to (bought - sold > 0); tokens received outside a trade are not seen. Value = amount * quote reserve / token reserve, floored; cost is the average cost of the tokens still held."
    }
  )

  const legs = walletRoute(
    "/book-legs",
    "dataWalletBookLegs",
    "Max: the wallet's trades matched with opposite-side trades by other wallets on the same token close in time",
    [
      intQ("days", "Look back this many days", 1, BOOK_LEGS_DAYS_MAX, BOOK_LEGS_DAYS_DEFAULT),
      intQ("window_minutes", "A counter-leg is within this many minutes either side", 1, BOOK_LEGS_WINDOW_MINUTES_MAX, BOOK_LEGS_WINDOW_MINUTES_DEFAULT),
      intQ("limit", "Leg pairs listed", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
    ],
    (address, caller, qs) =>
      Effect.gen(function* () {
        if (caller.plan !== "max") return json(403, REQUIRES_MAX)
        const days = parseInt_(qs, "days", 1, BOOK_LEGS_DAYS_MAX, BOOK_LEGS_DAYS_DEFAULT)
        if (isErr(days)) return yield* days
        const window = parseInt_(qs, "window_minutes", 1, BOOK_LEGS_WINDOW_MINUTES_MAX, BOOK_LEGS_WINDOW_MINUTES_DEFAULT)
        if (isErr(window)) return yield* window
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const sinceMs = deps.nowMs() - days * DAY_MS
        const pairs = yield* ch(bookLegs(deps.clickhouse, "solana", address, sinceMs, window * 60_000, bookLegsMax + 1))
        const truncated = pairs.length > bookLegsMax
        const kept = pairs.slice(0, bookLegsMax)
        const usd = yield* pricesFor("solana", new Set(kept.map((p) => p.mine.mint)))
        const byCounterparty = new Map<string, { legs: number; tokens: Set<string>; volume: QuoteTotals }>()
        for (const p of kept) {
          const e = byCounterparty.get(p.other.trader) ?? { legs: 0, tokens: new Set<string>(), volume: new QuoteTotals() }
          e.legs++
          e.tokens.add(p.other.mint)
          e.volume.add(tokenInfo(deps.index, "solana", p.other.mint, usd), p.other.volumeQuoteRaw)
          byCounterparty.set(p.other.trader, e)
        }
        return json(200, {
          chain: "solana",
          address,
          days,
          window_minutes: window,
          label: labelOf(address, caller.plan),
          pairs: kept.length,
          truncated,
          counterparties: [...byCounterparty]
            .sort(([wa, a], [wb, b]) => b.legs - a.legs || (wa < wb ? -1 : 1))
            .map(([wallet, e]) => ({ wallet, label: labelOf(wallet, caller.plan), legs: e.legs, tokens: e.tokens.size, volume_usd: e.volume.usd(), volume: e.volume.byQuote() })),
          legs: kept.slice(0, limit).map((p) => {
            const info = tokenInfo(deps.index, "solana", p.mine.mint, usd)
            return { token: p.mine.mint, symbol: info.core?.identity.symbol ?? null, gap_ms: p.other.atMs - p.mine.atMs, leg: tradeRow(p.mine, info), counter: { ...tradeRow(p.other, info), wallet: p.other.trader } }
          })
        })
      }),
    {
      responses: { 403: { description: "{\"error\": \"requires Max\"}" } },
      description: "Pairs are read newest first, at most 1,000 (`truncated` past that); `counterparties` summarizes the pairs read."
    }
  )

  // -- Social -----------------------------------------------------------------------------------

  const mentionRow = (m: SocialMention) => {
    const kol = deps.tracking.kolByHandle(m.author)
    return {
      id: m.id,
      chain: m.chain,
      token: m.asset,
      symbol: deps.index.market(m.chain, m.asset)?.identity.symbol ?? null,
      author: m.author,
      kol: kol === undefined ? null : { id: kol.id, handle: kol.handle, name: kol.name, followers: kol.followers },
      text: m.text,
      url: m.url,
      at: iso(m.atMs)
    }
  }

  const mentions = route(
    "/v1/social/mentions",
    "dataSocialMentions",
    "Recent social posts naming tokens, newest first",
    [
      chainQ,
      q("token", "Only this token"),
      q("since", "From this time: ISO 8601 or epoch ms"),
      q("kol", "true: only KOL authors", { type: "boolean" }),
      intQ("limit", "Rows", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
    ],
    (_req, _caller, qs) =>
      Effect.gen(function* () {
        const chain = parseChain(qs)
        if (isErr(chain)) return yield* chain
        const token = opt(qs, "token") === undefined ? undefined : parseAddress(chain, opt(qs, "token"), "token")
        if (isErr(token)) return yield* token
        const since = parseTime(qs, "since")
        if (isErr(since)) return yield* since
        const kol = parseEnum(qs, "kol", ["true", "false"] as const, "false")
        if (isErr(kol)) return yield* kol
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const base = { chain, ...(token === undefined ? {} : { asset: token }), ...(since === undefined ? {} : { sinceMs: since }) }
        const found =
          kol === "true"
            ? deps.social.recent({ ...base, limit: TRENDING_SCAN_MAX }).filter((m) => deps.tracking.kolByHandle(m.author) !== undefined).slice(0, limit)
            : deps.social.recent({ ...base, limit })
        return json(200, { chain, mentions: found.map(mentionRow) })
      })
  )

  const mentionMarks = route(
    "/v1/social/mention-marks",
    "dataSocialMentionMarks",
    "A token's mentions plotted against its price: each mention with the price in force when it was posted",
    [chainQ, q("token", "The token", { type: "string" }, true), intQ("days", "Look back this many days", 1, MENTION_MARKS_DAYS_MAX, MENTION_MARKS_DAYS_DEFAULT), intQ("limit", "Marks (newest)", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)],
    (_req, _caller, qs) =>
      Effect.gen(function* () {
        const chain = parseChain(qs)
        if (isErr(chain)) return yield* chain
        const token = parseAddress(chain, opt(qs, "token"), "token")
        if (isErr(token)) return yield* token
        const days = parseInt_(qs, "days", 1, MENTION_MARKS_DAYS_MAX, MENTION_MARKS_DAYS_DEFAULT)
        if (isErr(days)) return yield* days
        const limit = parseInt_(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isErr(limit)) return yield* limit
        const core = deps.index.market(chain, token)
        if (core === undefined) return yield* apiError("MARKET_NOT_FOUND", `No token ${token} on ${chain}`, { field: "token" })
        const found = deps.social.recent({ chain, asset: token, sinceMs: deps.nowMs() - days * DAY_MS, limit }).slice().reverse()
        const at = yield* ch(pricesAt(deps.clickhouse, chain, token, found.map((m) => m.atMs)))
        const usd = yield* usdPrices(deps.prices, [quotePairOf(chain, core.identity.quoteMint)])
        const info = tokenInfo(deps.index, chain, token, usd)
        const { decimals, quoteDecimals } = core.identity
        return json(200, {
          chain,
          token,
          symbol: core.identity.symbol,
          quote_asset: info.pair?.id ?? null,
          marks: found.map((m, i) => {
            const p = at[i]!
            const priced = p.tradeAtMs !== null && p.tokenReserveRaw > 0n
            return {
              ...mentionRow(m),
              price: priced ? formatUnits((p.quoteReserveRaw * 10n ** BigInt(decimals) * 10n ** 18n) / (p.tokenReserveRaw * 10n ** BigInt(quoteDecimals)), 18) : null,
              price_usd: priced ? usdPerToken(p.quoteReserveRaw, p.tokenReserveRaw, decimals, quoteDecimals, info.price) : null,
              price_at: iso(p.tradeAtMs)
            }
          })
        })
      }),
    {
      responses: { 404: { description: "MARKET_NOT_FOUND" } },
      description: "Marks are oldest first. The price is the reserves after the token's last trade at or before the mention (quote per whole token, 18 places); null before its first trade."
    }
  )

  const trending = route(
    "/v1/social/mentions/trending",
    "dataSocialTrending",
    "Tokens ranked by mentions, then by traded volume, over the window",
    [
      chainQ,
      q("window", "1h, 6h, 24h (default) or 7d", { type: "string", enum: Object.keys(TRENDING_WINDOWS), default: "24h" }),
      intQ("limit", "Tokens", 1, 100, 20)
    ],
    (_req, _caller, qs) =>
      Effect.gen(function* () {
        const chain = parseChain(qs)
        if (isErr(chain)) return yield* chain
        const window = parseEnum(qs, "window", Object.keys(TRENDING_WINDOWS), "24h")
        if (isErr(window)) return yield* window
        const limit = parseInt_(qs, "limit", 1, 100, 20)
        if (isErr(limit)) return yield* limit
        const sinceMs = deps.nowMs() - TRENDING_WINDOWS[window!]!
        const recent = deps.social.recent({ chain, sinceMs, limit: TRENDING_SCAN_MAX })
        const byToken = new Map<string, { mentions: number; kol: number; authors: Set<string>; lastMs: number }>()
        for (const m of recent) {
          const e = byToken.get(m.asset) ?? { mentions: 0, kol: 0, authors: new Set<string>(), lastMs: m.atMs }
          e.mentions++
          if (deps.tracking.kolByHandle(m.author) !== undefined) e.kol++
          e.authors.add(m.author.toLowerCase())
          if (m.atMs > e.lastMs) e.lastMs = m.atMs
          byToken.set(m.asset, e)
        }
        const volumes = yield* ch(mintVolumes(deps.clickhouse, chain, [...byToken.keys()], sinceMs))
        const volumeOf = new Map(volumes.map((v) => [v.mint, v]))
        const usd = yield* pricesFor(chain, byToken.keys())
        const ranked = [...byToken].map(([mint, e]) => {
          const info = tokenInfo(deps.index, chain, mint, usd)
          const v = volumeOf.get(mint)
          const volumeUsd = v === undefined ? "0" : usdFmt(info, v.volumeQuoteRaw)
          return { mint, e, info, v, volumeUsd, micros: volumeUsd === null ? -1n : toMicros(volumeUsd) }
        })
        ranked.sort((a, b) => b.e.mentions - a.e.mentions || (b.micros > a.micros ? 1 : b.micros < a.micros ? -1 : 0) || (a.mint < b.mint ? -1 : 1))
        return json(200, {
          chain,
          window,
          since: iso(sinceMs),
          mentions_scanned: recent.length,
          tokens: ranked.slice(0, limit).map(({ mint, e, info, v, volumeUsd }) => ({
            token: mint,
            symbol: info.core?.identity.symbol ?? null,
            name: info.core?.identity.name ?? null,
            mentions: e.mentions,
            kol_mentions: e.kol,
            authors: e.authors.size,
            last_mention_at: iso(e.lastMs),
            trades: v?.trades ?? 0,
            traders: v?.traders ?? 0,
            volume: v === undefined ? "0" : quoteFmt(info, v.volumeQuoteRaw),
            volume_usd: volumeUsd
          }))
        })
      }),
    { description: "Ranked by mentions in the window, then by gross quote volume in USD, then by address. At most the newest 10,000 mentions of the window are counted." }
  )

  // -- Assets -----------------------------------------------------------------------------------

  const assetRow = (pair: QuotePair, price: UsdPrice | null) => ({
    id: pair.id,
    chain: pair.chain,
    symbol: pair.symbol,
    address: pair.address,
    decimals: pair.decimals,
    native: pair.isNative,
    price_usd: price === null ? null : formatUnits(price.usdRaw, price.scale),
    price_as_of: price === null ? null : iso(price.asOfMs),
    price_source: price?.source ?? null
  })

  const assets = route("/v1/assets", "dataAssets", "The quote assets tokens trade against, with their USD prices", [], () =>
    Effect.map(usdPrices(deps.prices, QuotePairs), (usd) => json(200, { assets: QuotePairs.map((p) => assetRow(p, usd.get(p.id) ?? null)) }))
  )

  const asset = route(
    "/v1/assets/{id}",
    "dataAsset",
    "One quote asset (sol, usdc, svc, eth, usdg) with its USD price",
    [],
    (req) => {
      const pair = QuotePairs.find((p) => p.id === (req.params[0] ?? "").toLowerCase())
      if (pair === undefined) return Effect.succeed(notFound("asset"))
      return Effect.map(usdPrices(deps.prices, [pair]), (usd) => json(200, assetRow(pair, usd.get(pair.id) ?? null)))
    },
    { pathParams: [idParam("asset")], responses: { 404: { description: "{\"error\": \"asset not found\"}" } } }
  )

  return [wallets, wallet, groups, group, labelledTrades, stats, activity, tokenBreakdown, portfolio, legs, mentions, mentionMarks, trending, assets, asset]
}
