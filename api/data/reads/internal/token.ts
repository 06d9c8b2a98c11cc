/**
 * What the token reads share: the `/v1/market/token/{address}` route shape (chain and address
 * parsed, the token looked up in the live index and priced before the handler runs), a token's
 * money formatting (raw amounts to decimal strings at the token's or quote's decimals, USD through
 * the quote asset's price), and the address-list parameter.
 */
import { Effect } from "effect"
import type { MarketCore } from "../../../../actors/market/MarketActor.js"
import { priceReserves } from "../../../../actors/market/MarketRecord.js"
import type { ChainId } from "../../../../ingest/ChainEvent.js"
import { validationFailed } from "../../../../src/domain/ApiError.js"
import { formatUnits } from "../../../../src/domain/CurveMath.js"
import type { QuotePair } from "../../../../src/domain/QuotePairs.js"
import type { Position } from "../../../../src/services/marketdata/MarketData.js"
import { shareBps } from "../../../../src/services/marketdata/TokenSafety.js"
import { quotePairOf, usdOf, usdPerToken } from "../../../../src/services/prices/Money.js"
import type { UsdPrice } from "../../../../src/services/prices/PriceSource.js"
import type { Reply } from "../../../Http.js"
import { ADDRESS_FORMAT, isApiError, normalizeAddress, type Param, param, type Params, type Parsed, parseAddress, stringParam } from "../../../QueryParams.js"
import type { RouteDef } from "../../../Router.js"
import { refusal } from "../../../OpenApi.js"
import { type AddressInput, type AddressReadSpec, addressRoute, chainQ, type DataCaller, iso, type ReadDeps, type ReadFailure } from "./shared.js"

/**
 * A comma-separated list of addresses (`min..max` distinct entries): decoding keeps the trimmed,
 * non-empty items and refuses a list over four times `max` before anything else is looked at;
 * `addressList` then checks each against the chain's format.
 */
export const addressListQ = (description: string, min: number, max: number): Param<ReadonlyArray<string>> =>
  param({
    description,
    required: true,
    schema: { type: "string" },
    decode: (raw, name) => {
      if (raw === undefined) return validationFailed(name, `${name} is required (comma-separated, ${min} to ${max})`)
      const items = raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
      // Checked before parsing so a huge list costs nothing more.
      return items.length > max * 4 ? validationFailed(name, `${name} takes at most ${max} entries`, { limit: max }) : items
    }
  })

/** The list's addresses on `chain`: well-formed, normalized, de-duplicated (order kept), `min..max` of them. */
export const addressList = (items: ReadonlyArray<string>, name: string, chain: ChainId, min: number, max: number): Parsed<ReadonlyArray<string>> => {
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

/** A token's live state and its money formatting. */
export interface Token {
  readonly core: MarketCore
  readonly price: UsdPrice | null
  readonly quoteAsset: string | null
  readonly tokens: (raw: bigint) => string
  readonly quote: (raw: bigint) => string
  readonly usd: (quoteRaw: bigint) => string | null
  /** trades.price (quote raw per token raw) → quote per whole token. */
  readonly priceScale: number
}

/** The USD price of a quote asset, from `prices` (by quote asset id); null when unknown or unpriced. */
export const quotePriceOf = (pair: QuotePair | undefined, prices: ReadonlyMap<string, UsdPrice | null>): UsdPrice | null =>
  pair === undefined ? null : (prices.get(pair.id) ?? null)

/** `core`'s money formatting, its USD price taken from `prices` (by quote asset id). */
export const tokenMoney = (core: MarketCore, prices: ReadonlyMap<string, UsdPrice | null>): Token => {
  const pair = quotePairOf(core.chain, core.identity.quoteMint)
  const price = quotePriceOf(pair, prices)
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

/** USD per whole token at the spot reserves. */
export const priceUsdOf = (t: Token): string | null => {
  const r = priceReserves(t.core)
  return usdPerToken(r.quoteRaw, r.tokenRaw, t.core.identity.decimals, t.core.identity.quoteDecimals, t.price)
}

/** A wallet's position on the token, as the reads write it. */
export const positionRow = (t: Token, p: Position) => ({
  wallet: p.trader,
  bought: t.tokens(p.boughtRaw),
  sold: t.tokens(p.soldRaw),
  net: t.tokens(p.netRaw),
  held: t.tokens(p.heldRaw),
  held_bps: shareBps(p.heldRaw, t.core.params.supplyRaw),
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

const tokenParams = { address: stringParam("Token mint (Solana base58) or token address (Hood 0x…)", { required: true, emptyIsValue: true }), chain: chainQ }

/** A `/v1/market/token/{address}…` read: the handler gets the token, looked up and priced, and its decoded parameters. */
export const tokenRoute = <Q extends Params = {}>(
  deps: ReadDeps,
  spec: AddressReadSpec<Q>,
  f: (t: Token, input: AddressInput<Q>, caller: DataCaller) => Effect.Effect<Reply, ReadFailure>
): RouteDef =>
  addressRoute(deps, "/v1/market/token", tokenParams, { ...spec, responses: { 404: refusal(["MARKET_NOT_FOUND"]), ...spec.responses } }, (input, caller) =>
    Effect.gen(function* () {
      const mint = parseAddress(input.chain, input.address, "address")
      if (isApiError(mint)) return yield* mint
      const core = yield* deps.data.token(input.chain, mint)
      return yield* f(tokenMoney(core, yield* deps.data.usdOfMarkets([core])), input, caller)
    })
  )
