/**
 * What the wallet, social and directory reads share: their dependencies, the
 * `/v1/market/wallet/{address}…` route shape (any Solana wallet), what the index knows of a traded
 * token (its quote asset and price) and the formatting of its amounts, a trade's row, the wallet
 * labels a plan may see, per-quote-asset totals as written, and the `period`, `token` and integer
 * parameters (an integer refusal here carries its bounds, `minimum` and `limit`).
 *
 * Plan visibility (Tracking.ts): a wallet the plan cannot see has no label, the same as an
 * untracked one.
 */
import { Effect } from "effect"
import type { ChainId } from "../../../../ingest/ChainEvent.js"
import { formatUnits } from "../../../../src/domain/CurveMath.js"
import type { WalletTrade } from "../../../../src/services/marketdata/MarketData.js"
import { venueNameOf } from "../../../../src/services/marketdata/Venues.js"
import type { TradedToken } from "../../../../src/services/marketdata/WalletFigures.js"
import { type QuoteTotals, quotePairOf, USD_DECIMALS, usdOf } from "../../../../src/services/prices/Money.js"
import type { UsdPrice } from "../../../../src/services/prices/PriceSource.js"
import type { SocialMentionsShape } from "../../../../src/services/social/SocialMentions.js"
import type { TrackingShape } from "../../../../src/services/tracking/Tracking.js"
import type { Reply } from "../../../Http.js"
import { enumParam, isApiError, type Param, type Params, type Parsed, parseAddress, stringParam } from "../../../QueryParams.js"
import type { RouteDef } from "../../../Router.js"
import { type AddressInput, type AddressReadSpec, addressRoute, type DataCaller, DAY_MS, intQ, iso, type ReadDeps, type ReadFailure, solanaQ } from "./shared.js"
import { quotePriceOf } from "./token.js"

export interface WalletReadDeps extends ReadDeps {
  readonly tracking: TrackingShape
  readonly social: SocialMentionsShape
}

export const LIST_LIMIT_MAX = 200
export const LIST_LIMIT_DEFAULT = 50

// ---------------------------------------------------------------------------------------------
// Parameters

/** An integer parameter of a wallet read: its refusal carries its bounds (`minimum`, `limit`). */
export const intW = (description: string, min: number, max: number, dflt: number): Param<number> => intQ(description, min, max, dflt, true)

/** `limit` of a list read: 1 to `LIST_LIMIT_MAX`. */
export const listLimitQ = (description: string): Param<number> => intW(description, 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)

const PERIODS: Readonly<Record<string, number | null>> = { "1d": DAY_MS, "7d": 7 * DAY_MS, "30d": 30 * DAY_MS, "90d": 90 * DAY_MS, all: null }
export const periodQ = enumParam("1d, 7d, 30d (default), 90d or all", Object.keys(PERIODS), { default: "30d" })

/** A period's start (undefined for all). */
export const periodStart = (period: string, nowMs: number): number | undefined => {
  const span = PERIODS[period] ?? null
  return span === null ? undefined : nowMs - span
}

/** An optional `token`; its format is the chain's (`tokenAddress`). */
export const tokenQ = (description: string) => stringParam(description)

/** The `token` parameter on `chain`, normalized; undefined when absent. */
export const tokenAddress = (chain: ChainId, raw: string | undefined): Parsed<string | undefined> => (raw === undefined ? undefined : parseAddress(chain, raw, "token"))

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

/** Totals per quote asset, as written. */
export const byQuoteRows = (totals: QuoteTotals) =>
  totals.byQuote().map((e) => ({ quote_asset: e.pair.id, amount: formatUnits(e.raw, e.pair.decimals), usd: usdOf(e.raw, e.pair.decimals, e.price) }))

/** The USD sum of the totals, as written; null when a non-zero asset is unpriced. */
export const usdTotal = (totals: QuoteTotals): string | null => {
  const micros = totals.usdMicros()
  return micros === null ? null : formatUnits(micros, USD_DECIMALS)
}

export const tradeRow = (t: WalletTrade, chain: ChainId, info: TokenInfo) => ({
  signature: t.signature,
  at: iso(t.atMs),
  token: t.mint,
  symbol: info.core?.identity.symbol ?? null,
  side: t.side,
  venue: venueNameOf(chain, t.venue),
  quote_asset: info.pair?.id ?? null,
  amount: tokenFmt(info, t.tokenRaw),
  quote: quoteFmt(info, t.quoteRaw),
  quote_usd: usdFmt(info, t.quoteRaw),
  volume: quoteFmt(info, t.volumeQuoteRaw),
  volume_usd: usdFmt(info, t.volumeQuoteRaw)
})

// ---------------------------------------------------------------------------------------------
// Labels

export const kolHandle = (deps: Pick<WalletReadDeps, "tracking">, id: string | null): string | null =>
  id === null ? null : (deps.tracking.kols().find((k) => k.id === id)?.handle ?? null)

/** A Solana wallet's tracking label, when the plan can see it. */
export const labelOf = (deps: Pick<WalletReadDeps, "tracking">, address: string, plan: DataCaller["plan"]) => {
  const w = deps.tracking.byAddress("solana", address)
  const visible = w === undefined ? undefined : deps.tracking.wallet(plan, w.id)
  return visible === undefined ? null : { id: visible.id, label: visible.label, kind: visible.kind, groups: visible.groups }
}

// ---------------------------------------------------------------------------------------------
// The wallet route shape

const walletParams = { address: stringParam("Any Solana wallet (base58)", { required: true, emptyIsValue: true }), chain: solanaQ }

/** A `/v1/market/wallet/{address}…` read (Solana): the handler gets the parsed address and its decoded parameters. */
export const walletRoute = <Q extends Params = {}>(
  deps: WalletReadDeps,
  spec: AddressReadSpec<Q>,
  f: (address: string, input: AddressInput<Q>, caller: DataCaller) => Effect.Effect<Reply, ReadFailure>
): RouteDef =>
  addressRoute(deps, "/v1/market/wallet", walletParams, spec, (input, caller) => {
    const address = parseAddress("solana", input.address, "address")
    return isApiError(address) ? Effect.fail(address) : f(address, input, caller)
  })
