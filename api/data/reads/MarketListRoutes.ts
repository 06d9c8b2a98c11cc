/**
 * Spec 4.5 `GET /v1/market/gainers`, `/v1/market/metas` and `/v1/market/activity`: Solana tokens
 * with the largest price rise over a window (`MarketRankings.rankGainers`), narratives from the
 * words of recent launches' names (`Metas`), and the tokens most traded by the tracked wallets the
 * caller's plan sees.
 */
import { Effect } from "effect"
import { marketRecord } from "../../../actors/market/MarketRecord.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { formatUnits } from "../../../src/domain/CurveMath.js"
import { rankGainers } from "../../../src/services/marketdata/MarketRankings.js"
import { rankMetas } from "../../../src/services/marketdata/Metas.js"
import { quotePairOf, USD_DECIMALS, usdMicrosOf } from "../../../src/services/prices/Money.js"
import { json } from "../../Http.js"
import { enumParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { chainQ, type DataPlan, DAY_MS, intQ, iso, type ReadDeps, readRoute, solanaQ } from "./internal/shared.js"
import { priceUsdOf, quotePriceOf, tokenMoney } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { Gainers, MarketActivity, Metas } from "./internal/responses.js"

export interface MarketListDeps extends ReadDeps {
  /** Tracked wallets visible to a plan on a chain (`/v1/market/activity`); all wallets when absent. */
  readonly trackedWallets?: (plan: DataPlan, chain: ChainId) => ReadonlyArray<{ readonly address: string }>
}

const GAINER_WINDOWS: Readonly<Record<string, number>> = { "5m": 5 * 60_000, "1h": 3_600_000, "6h": 6 * 3_600_000, "24h": DAY_MS }

export const marketListRoutes = (deps: MarketListDeps): ReadonlyArray<RouteDef> => {
  const asOf = (chain: ChainId) => deps.index.clockMs(chain)

  const gainers = readRoute(
    deps,
    {
      path: "/v1/market/gainers",
      operationId: "dataGainers",
      summary: "Solana tokens with the largest price rise over the window",
      query: {
        chain: solanaQ,
        window: enumParam("5m, 1h (default), 6h or 24h", ["5m", "1h", "6h", "24h"] as const, { default: "1h" }),
        limit: intQ("Rows", 1, 100, 20)
      },
      responses: { 200: answer("Tokens with the largest price rise", Gainers) }
    },
    ({ chain, window, limit }) =>
      Effect.gen(function* () {
        const now = deps.nowMs()
        const moves = yield* deps.data.priceMoves(chain, now - GAINER_WINDOWS[window]!, now)
        const ranked = rankGainers(moves, (mint) => deps.index.market(chain, mint), limit)
        const usd = yield* deps.data.usdOfMarkets(ranked.map((g) => g.core)
        )
        return json(200, {
          chain,
          window,
          gainers: ranked.map(({ move, core, changePct }) => {
            const t = tokenMoney(core, usd)
            const r = marketRecord(core, asOf(chain), deps.index.metadata())
            return {
              address: core.mint,
              name: core.identity.name,
              symbol: core.identity.symbol,
              change_pct: Math.round(changePct * 100) / 100,
              price: r.price,
              price_usd: priceUsdOf(t),
              market_cap: r.marketCap,
              volume: t.quote(move.volumeQuoteRaw),
              volume_usd: t.usd(move.volumeQuoteRaw),
              trades: move.trades,
              lifecycle: core.lifecycle
            }
          })
        } satisfies typeof Gainers.Type)
      })
  )

  const activity = readRoute(
    deps,
    {
      path: "/v1/market/activity",
      operationId: "dataActivity",
      summary: "Tokens most traded by tracked wallets (those the plan sees) over the window",
      query: { chain: chainQ, hours: intQ("Window in hours", 1, 168, 24), limit: intQ("Rows", 1, 100, 20) },
      responses: { 200: answer("Tokens most traded by tracked wallets", MarketActivity) }
    },
    ({ chain, hours, limit }, caller) =>
      Effect.gen(function* () {
        const wallets = deps.trackedWallets === undefined ? undefined : deps.trackedWallets(caller.plan, chain).map((w) => w.address)
        const rows = wallets !== undefined && wallets.length === 0 ? [] : yield* deps.data.tokenActivity(chain, deps.nowMs() - hours * 3_600_000, wallets, limit)
        const cores = rows.map((r) => deps.index.market(chain, r.mint))
        const usd = yield* deps.data.usdOfMarkets(cores)
        return json(200, {
          chain,
          hours,
          wallets: wallets === undefined ? ("all" as const) : ("tracked" as const),
          tokens: rows.map((r, i) => {
            const core = cores[i]
            const t = core === undefined ? undefined : tokenMoney(core, usd)
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
        } satisfies typeof MarketActivity.Type)
      })
  )

  const metas = readRoute(
    deps,
    {
      path: "/v1/market/metas",
      operationId: "dataMetas",
      summary: "Narratives: the words shared by the names of tokens launched in the window, ranked by their volume",
      query: { chain: chainQ, hours: intQ("Launch window in hours", 1, 168, 24), limit: intQ("Narratives", 1, 50, 20) },
      responses: { 200: answer("Narratives ranked by volume", Metas) }
    },
    ({ chain, hours, limit }) =>
      Effect.gen(function* () {
        const since = deps.nowMs() - hours * 3_600_000
        const onChain = [...deps.index.markets()].filter((c) => c.chain === chain)
        const usd = yield* deps.data.usdOfMarkets(onChain)
        const ranked = rankMetas(onChain, chain, since, limit, (core) =>
          usdMicrosOf(core.stats.volumeTotalRaw, core.identity.quoteDecimals, quotePriceOf(quotePairOf(chain, core.identity.quoteMint), usd))
        )
        return json(200, {
          chain,
          hours,
          metas: ranked.map((m) => ({
            meta: m.word,
            tokens: m.tokens.length,
            volume_usd: formatUnits(m.volumeUsdMicros, USD_DECIMALS),
            top: m.top.map((c) => ({ address: c.mint, symbol: c.identity.symbol, name: c.identity.name }))
          }))
        } satisfies typeof Metas.Type)
      })
  )

  return [gainers, metas, activity]
}
