/**
 * Spec 4.5 `GET /v1/market/wallet/{address}/stats`, `/activity`, `/token-breakdown`,
 * `/portfolio`: any Solana wallet over a period (1d to all). Figures come from the wallet's trade
 * history replayed by average cost (`AverageCost`, `WalletFigures`); amounts are written per quote
 * asset with USD sums (`Money.QuoteTotals`).
 */
import { Effect } from "effect"
import { priceOf, priceReserves } from "../../../actors/market/MarketRecord.js"
import { replayLedgers, spotValueRaw } from "../../../src/services/marketdata/AverageCost.js"
import { tradedInPeriod, walletPortfolio, walletStats, winRateBps } from "../../../src/services/marketdata/WalletFigures.js"
import { usdPerToken } from "../../../src/services/prices/Money.js"
import { json } from "../../Http.js"
import { isApiError, timeParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { iso } from "./internal/shared.js"
import {
  byQuoteRows,
  labelOf,
  listLimitQ,
  periodQ,
  periodStart,
  quoteFmt,
  tokenAddress,
  tokenFmt,
  tokenInfo,
  tokenQ,
  tradeRow,
  usdFmt,
  usdTotal,
  walletRoute,
  type WalletReadDeps
} from "./internal/wallet.js"
import { answer } from "../../OpenApi.js"
import { WalletActivity, WalletPortfolio, WalletStats, WalletTokenBreakdown } from "./internal/responses.js"

export const walletReadRoutes = (deps: WalletReadDeps): ReadonlyArray<RouteDef> => {
  const stats = walletRoute(
    deps,
    {
      suffix: "/stats",
      operationId: "dataWalletStats",
      summary: "A wallet's volume, trades, win rate and realized P&L (average cost) over the period",
      description:
        "Volume is gross quote notional (buys' payments, sells' proceeds before the fee). A token counts as closed when it had a sell in the period, and as a win when its realized P&L there is positive; `win_rate_bps` = wins / closed (null when none).",
      query: { period: periodQ },
      responses: { 200: answer("Volume, trades, win rate and realized P&L", WalletStats) }
    },
    (address, { period }, caller) =>
      Effect.gen(function* () {
        const sinceMs = periodStart(period, deps.nowMs())
        const history = yield* deps.data.walletHistory("solana", address)
        const ledgers = replayLedgers(history.trades, sinceMs)
        const usd = yield* deps.data.usdOfMints("solana", ledgers.keys())
        const s = walletStats(ledgers, (mint) => tokenInfo(deps, "solana", mint, usd))
        return json(200, {
          chain: "solana",
          address,
          period,
          since: iso(sinceMs),
          label: labelOf(deps, address, caller.plan),
          trades: s.trades,
          buys: s.buys,
          sells: s.sells,
          tokens_traded: s.tokensTraded,
          volume_usd: usdTotal(s.volume),
          volume: byQuoteRows(s.volume),
          realized_pnl_usd: usdTotal(s.realized),
          realized_pnl: byQuoteRows(s.realized),
          tokens_closed: s.tokensClosed,
          wins: s.wins,
          losses: s.tokensClosed - s.wins,
          win_rate_bps: winRateBps(s.wins, s.tokensClosed),
          unknown_tokens: s.unknownTokens,
          history_truncated: history.truncated
        } satisfies typeof WalletStats.Type)
      })
  )

  const activity = walletRoute(
    deps,
    {
      suffix: "/activity",
      operationId: "dataWalletActivity",
      summary: "A wallet's trades over the period, newest first",
      query: {
        period: periodQ,
        token: tokenQ("Only this token"),
        before: timeParam("Before this time (exclusive; the previous page's oldest `at`)"),
        limit: listLimitQ("Rows")
      },
      responses: { 200: answer("Trades, newest first", WalletActivity) }
    },
    (address, { period, before, limit, ...input }, caller) =>
      Effect.gen(function* () {
        const token = tokenAddress("solana", input.token)
        if (isApiError(token)) return yield* token
        const trades = yield* deps.data.tradesOf("solana", [address], { sinceMs: periodStart(period, deps.nowMs()), beforeMs: before, mint: token }, limit)
        const usd = yield* deps.data.usdOfMints("solana", new Set(trades.map((t) => t.mint)))
        return json(200, {
          chain: "solana",
          address,
          period,
          label: labelOf(deps, address, caller.plan),
          trades: trades.map((t) => tradeRow(t, "solana", tokenInfo(deps, "solana", t.mint, usd))),
          next_before: trades.length === limit ? iso(trades[trades.length - 1]!.atMs) : null
        } satisfies typeof WalletActivity.Type)
      })
  )

  const tokenBreakdown = walletRoute(
    deps,
    {
      suffix: "/token-breakdown",
      operationId: "dataWalletTokenBreakdown",
      summary: "A wallet's figures per token traded in the period (average-cost P&L, holdings valued at spot)",
      query: { period: periodQ, limit: listLimitQ("Tokens") },
      responses: { 200: answer("Figures per token", WalletTokenBreakdown) }
    },
    (address, { period, limit }) =>
      Effect.gen(function* () {
        const history = yield* deps.data.walletHistory("solana", address)
        const ledgers = tradedInPeriod(replayLedgers(history.trades, periodStart(period, deps.nowMs())))
        const usd = yield* deps.data.usdOfMints(
          "solana",
          ledgers.map(([m]) => m)
        )
        return json(200, {
          chain: "solana",
          address,
          period,
          tokens_traded: ledgers.length,
          history_truncated: history.truncated,
          tokens: ledgers.slice(0, limit).map(([mint, l]) => {
            const info = tokenInfo(deps, "solana", mint, usd)
            const value = spotValueRaw(info.core, l.heldRaw)
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
        } satisfies typeof WalletTokenBreakdown.Type)
      })
  )

  const portfolio = walletRoute(
    deps,
    {
      suffix: "/portfolio",
      operationId: "dataWalletPortfolio",
      summary: "A wallet's net positions (from its trades) valued at the tokens' spot reserves",
      description:
        "Positions are what the wallet's trades on our venues net to (bought - sold > 0); tokens received outside a trade are not seen. Value = amount * quote reserve / token reserve, floored; cost is the average cost of the tokens still held.",
      query: { limit: listLimitQ("Positions") },
      responses: { 200: answer("Net positions valued at spot", WalletPortfolio) }
    },
    (address, { limit }) =>
      Effect.gen(function* () {
        const history = yield* deps.data.walletHistory("solana", address)
        const ledgers = replayLedgers(history.trades, undefined)
        const usd = yield* deps.data.usdOfMints(
          "solana",
          [...ledgers].filter(([, l]) => l.heldRaw > 0n).map(([m]) => m)
        )
        const p = walletPortfolio(ledgers, (mint) => tokenInfo(deps, "solana", mint, usd))
        return json(200, {
          chain: "solana",
          address,
          positions_count: p.holdings.length,
          value_usd: usdTotal(p.value),
          value: byQuoteRows(p.value),
          cost_usd: usdTotal(p.cost),
          history_truncated: history.truncated,
          positions: p.holdings.slice(0, limit).map(({ mint, ledger: l, token: info, valueRaw: v }) => {
            const core = info.core
            const spot = core === undefined ? undefined : priceReserves(core)
            return {
              token: mint,
              symbol: core?.identity.symbol ?? null,
              name: core?.identity.name ?? null,
              lifecycle: core?.lifecycle ?? null,
              quote_asset: info.pair?.id ?? null,
              amount: tokenFmt(info, l.heldRaw),
              price: core === undefined ? null : priceOf(core),
              price_usd: core === undefined || spot === undefined ? null : usdPerToken(spot.quoteRaw, spot.tokenRaw, core.identity.decimals, core.identity.quoteDecimals, info.price),
              value: quoteFmt(info, v),
              value_usd: usdFmt(info, v),
              cost: quoteFmt(info, l.costRaw),
              cost_usd: usdFmt(info, l.costRaw),
              unrealized_pnl: quoteFmt(info, v - l.costRaw),
              unrealized_pnl_usd: usdFmt(info, v - l.costRaw)
            }
          })
        } satisfies typeof WalletPortfolio.Type)
      })
  )

  return [stats, activity, tokenBreakdown, portfolio]
}
