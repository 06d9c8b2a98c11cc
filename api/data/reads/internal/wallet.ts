/**
 * What the wallet, social and directory reads share: their dependencies, the
 * `/v1/market/wallet/{address}…` route shape (any Solana wallet), what the index knows of a traded
 * token (its quote asset and price) and the formatting of its amounts, a trade's row, the wallet
 * labels a plan may see, per-quote-asset totals as written, and the `period` and integer
 * parameters (an integer refusal here carries its bounds, `minimum` and `limit`).
 *
 * Plan visibility (Tracking.ts): a wallet the plan cannot see has no label, the same as an
 * untracked one.
 */
import { Effect } from "effect"
import type { WalletTrade } from "../../../../clickhouse/queries/WalletReads.js"
import type { ChainId } from "../../../../ingest/ChainEvent.js"
import { type ApiError, validationFailed } from "../../../../src/domain/ApiError.js"
import { formatUnits } from "../../../../src/domain/CurveMath.js"
import type { TradedToken } from "../../../../src/services/marketdata/WalletFigures.js"
import { type QuoteTotals, quotePairOf, USD_DECIMALS, usdOf } from "../../../../src/services/prices/Money.js"
import type { UsdPrice } from "../../../../src/services/prices/PriceSource.js"
import type { SocialMentionsShape } from "../../../../src/services/social/SocialMentions.js"
import type { TrackingShape } from "../../../../src/services/tracking/Tracking.js"
import type { Reply } from "../../../Http.js"
import { isApiError, opt, type Parsed, parseAddress, parseChainParam, parseIntParam } from "../../../QueryParams.js"
import type { ParamDoc, ResponseDoc, RouteDef } from "../../../Router.js"
import { chRead, type DataCaller, DAY_MS, iso, paramQ, queryOf, type ReadDeps, readRoute, solanaQ } from "./shared.js"
import { pricesOf, quotePriceOf } from "./token.js"

export interface WalletSocialDeps extends ReadDeps {
  readonly tracking: TrackingShape
  readonly social: SocialMentionsShape
}

export const LIST_LIMIT_MAX = 200
export const LIST_LIMIT_DEFAULT = 50

/** A ClickHouse read of a wallet read (a failure is the retryable 503). */
export const walletRead = chRead("wallet read")

// ---------------------------------------------------------------------------------------------
// Parameters

/** An integer parameter of a wallet read: its refusal carries its bounds (`minimum`, `limit`). */
export const parseIntW = (q: URLSearchParams, name: string, min: number, max: number, dflt: number): Parsed<number> => parseIntParam(q, name, min, max, dflt, true)

const PERIODS: Readonly<Record<string, number | null>> = { "1d": DAY_MS, "7d": 7 * DAY_MS, "30d": 30 * DAY_MS, "90d": 90 * DAY_MS, all: null }
const PERIOD_DEFAULT = "30d"
export const periodQ = paramQ("period", "1d, 7d, 30d (default), 90d or all", { type: "string", enum: Object.keys(PERIODS), default: PERIOD_DEFAULT })

/** `period`: 1d, 7d, 30d (default), 90d or all → its start (undefined for all). */
export const parsePeriod = (q: URLSearchParams, nowMs: number): Parsed<{ readonly name: string; readonly sinceMs: number | undefined }> => {
  const v = opt(q, "period") ?? PERIOD_DEFAULT
  if (!(v in PERIODS)) return validationFailed("period", `period must be one of ${Object.keys(PERIODS).join(", ")}`)
  const span = PERIODS[v]!
  return { name: v, sinceMs: span === null ? undefined : nowMs - span }
}

/** An optional `token` address on `chain`. */
export const parseTokenQ = (q: URLSearchParams, chain: ChainId): Parsed<string | undefined> =>
  opt(q, "token") === undefined ? undefined : parseAddress(chain, opt(q, "token"), "token")

// ---------------------------------------------------------------------------------------------
// Traded tokens

/** What the live market index knows of a traded token: its market, quote asset and price. */
export type TokenInfo = TradedToken

export const tokenInfo = (deps: Pick<ReadDeps, "index">, chain: ChainId, mint: string, usd: ReadonlyMap<string, UsdPrice | null>): TokenInfo => {
  const core = deps.index.market(chain, mint)
  const pair = core === undefined ? undefined : quotePairOf(chain, core.identity.quoteMint)
  return { core, pair, price: quotePriceOf(pair, usd) }
}

export const quoteFmt = (t: TokenInfo, raw: bigint): string | null => (t.core === undefined ? null : formatUnits(raw, t.core.identity.quoteDecimals))
export const tokenFmt = (t: TokenInfo, raw: bigint): string | null => (t.core === undefined ? null : formatUnits(raw, t.core.identity.decimals))
export const usdFmt = (t: TokenInfo, raw: bigint): string | null => (t.core === undefined ? null : usdOf(raw, t.core.identity.quoteDecimals, t.price))

/** The USD prices of the quote assets of the tokens `mints` (those the index knows). */
export const pricesFor = (deps: Pick<ReadDeps, "index" | "prices">, chain: ChainId, mints: Iterable<string>) =>
  pricesOf(
    deps,
    Array.from(mints, (m) => deps.index.market(chain, m))
  )

/** Totals per quote asset, as written. */
export const byQuoteRows = (totals: QuoteTotals) =>
  totals.byQuote().map((e) => ({ quote_asset: e.pair.id, amount: formatUnits(e.raw, e.pair.decimals), usd: usdOf(e.raw, e.pair.decimals, e.price) }))

/** The USD sum of the totals, as written; null when a non-zero asset is unpriced. */
export const usdTotal = (totals: QuoteTotals): string | null => {
  const micros = totals.usdMicros()
  return micros === null ? null : formatUnits(micros, USD_DECIMALS)
}

export const tradeRow = (t: WalletTrade, info: TokenInfo) => ({
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

// ---------------------------------------------------------------------------------------------
// Labels

export const kolHandle = (deps: Pick<WalletSocialDeps, "tracking">, id: string | null): string | null =>
  id === null ? null : (deps.tracking.kols().find((k) => k.id === id)?.handle ?? null)

/** A Solana wallet's tracking label, when the plan can see it. */
export const labelOf = (deps: Pick<WalletSocialDeps, "tracking">, address: string, plan: DataCaller["plan"]) => {
  const w = deps.tracking.byAddress("solana", address)
  const visible = w === undefined ? undefined : deps.tracking.wallet(plan, w.id)
  return visible === undefined ? null : { id: visible.id, label: visible.label, kind: visible.kind, groups: visible.groups }
}

// ---------------------------------------------------------------------------------------------
// The wallet route shape

const walletAddressParam: ParamDoc = { name: "address", description: "Any Solana wallet (base58)", schema: { type: "string" } }

export interface WalletRouteSpec {
  /** After `/v1/market/wallet/{address}`. */
  readonly suffix: string
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  /** Besides `chain`. */
  readonly query: ReadonlyArray<ParamDoc>
  readonly responses?: Readonly<Record<number, ResponseDoc>>
}

/** A `/v1/market/wallet/{address}…` read (Solana): the handler gets the parsed address. */
export const walletRoute = (
  deps: WalletSocialDeps,
  spec: WalletRouteSpec,
  f: (address: string, caller: DataCaller, q: URLSearchParams) => Effect.Effect<Reply, ApiError>
): RouteDef =>
  readRoute(
    deps,
    {
      path: `/v1/market/wallet/{address}${spec.suffix}`,
      operationId: spec.operationId,
      summary: spec.summary,
      ...(spec.description === undefined ? {} : { description: spec.description }),
      pathParams: [walletAddressParam],
      query: [solanaQ, ...spec.query],
      ...(spec.responses === undefined ? {} : { responses: spec.responses })
    },
    (req, caller) => {
      const q = queryOf(req)
      const chain = parseChainParam(q, "solana")
      if (isApiError(chain)) return Effect.fail(chain)
      const address = parseAddress(chain, req.params[0], "address")
      if (isApiError(address)) return Effect.fail(address)
      return f(address, caller, q)
    }
  )
