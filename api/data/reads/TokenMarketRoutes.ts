/**
 * Spec 4.5 `GET /v1/market/token/{address}`: a token's market data (the market record's figures
 * in snake_case, with USD) and its safety facts (`TokenSafety`, from its ten largest holders and
 * the creator's position). Solana and Hood.
 */
import { Effect } from "effect"
import { marketCapRaw, marketRecord, priceReserves, statsOf } from "../../../actors/market/MarketRecord.js"
import { liquidityQuoteRaw } from "../../../src/services/marketdata/Liquidity.js"
import { SAFETY_TOP_HOLDERS, type TokenSafety, tokenSafety } from "../../../src/services/marketdata/TokenSafety.js"
import type { TokenMetadataRead } from "../../../actors/TokenMetadata.js"
import { json } from "../../Http.js"
import type { RouteDef } from "../../Router.js"
import type { ReadDeps } from "./internal/shared.js"
import { priceUsdOf, type Token, tokenRoute } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { TokenMarket } from "./internal/responses.js"

/** The headline figures of a token (the market record's, in snake_case, with USD). */
const marketFields = (t: Token, asOfMs: number, metadata: TokenMetadataRead) => {
  const r = marketRecord(t.core, asOfMs, metadata)
  const core = t.core
  const mcapRaw = marketCapRaw(core)
  const liquidityRaw = liquidityQuoteRaw(core)
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
    liquidity: t.quote(liquidityRaw),
    liquidity_usd: t.usd(liquidityRaw),
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

const safetyFields = (t: Token, s: TokenSafety) => ({
  launched_here: true as const,
  program_curve: true as const,
  mode: s.mode,
  buys_open: s.buysOpen,
  sells_open: s.sellsOpen,
  holders: s.holders,
  top10_held_bps: s.top10HeldBps,
  creator_held_bps: s.creatorHeldBps,
  creator_bought: t.tokens(s.creatorBoughtRaw),
  creator_sold: t.tokens(s.creatorSoldRaw),
  flags: s.flags
})

export const tokenMarketRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  tokenRoute(deps, { suffix: "", operationId: "dataTokenMarket", summary: "Token market data and safety", responses: { 200: answer("Token market data and safety", TokenMarket) } }, (t) =>
    Effect.gen(function* () {
      const { chain, mint } = t.core
      const spot = priceReserves(t.core)
      const { positions, total } = yield* deps.data.topPositions(chain, mint, spot, "held", SAFETY_TOP_HOLDERS, true)
      const [creator] = yield* deps.data.walletPositions(chain, mint, spot, [t.core.identity.creator])
      return json(200, {
        token: marketFields(t, deps.index.clockMs(chain), deps.index.metadata()),
        safety: safetyFields(t, tokenSafety(t.core, positions, total, creator))
      } satisfies typeof TokenMarket.Type)
    })
  )
]
