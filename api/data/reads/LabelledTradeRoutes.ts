/**
 * Spec 4.5 `GET /v1/market/labelled-trades?kind=smartmoney|kol`: Solana trades by the tracked
 * smart-money or KOL wallets the plan can see, newest first, each with its wallet's label.
 */
import { Effect } from "effect"
import { type LabelKind, labelledAs } from "../../../src/services/marketdata/LabelledWallets.js"
import { json } from "../../Http.js"
import { enumParam, isApiError, timeParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { readRoute, solanaQ } from "./internal/shared.js"
import {
  kolHandle,
  listLimitQ,
  tokenAddress,
  tokenInfo,
  tokenQ,
  tradeRow,
  type WalletReadDeps
} from "./internal/wallet.js"
import { answer } from "../../OpenApi.js"
import { LabelledTrades } from "./internal/responses.js"

export const labelledTradeRoutes = (deps: WalletReadDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/labelled-trades",
      operationId: "dataLabelledTrades",
      summary: "Solana trades by tracked smart-money or KOL wallets the plan can see, newest first",
      query: {
        chain: solanaQ,
        kind: enumParam<LabelKind>("smartmoney or kol (default: both)", ["smartmoney", "kol"]),
        token: tokenQ("Only this token"),
        since: timeParam("From this time: ISO 8601 or epoch ms"),
        before: timeParam("Before this time (exclusive; the previous page's oldest `at`)"),
        limit: listLimitQ("Rows")
      },
      responses: { 200: answer("Trades by labelled wallets, newest first", LabelledTrades) }
    },
    ({ chain, kind, since, before, limit, ...input }, caller) =>
      Effect.gen(function* () {
        const token = tokenAddress(chain, input.token)
        if (isApiError(token)) return yield* token
        const wallets = deps.tracking.wallets(caller.plan, chain).filter((w) => labelledAs(w, kind))
        const byAddress = new Map(wallets.map((w) => [w.address, w]))
        const trades = yield* deps.data.tradesOf(chain, [...byAddress.keys()], { sinceMs: since, beforeMs: before, mint: token }, limit)
        const usd = yield* deps.data.usdOfMints(chain, new Set(trades.map((t) => t.mint)))
        return json(200, {
          chain,
          kind: kind ?? ("all" as const),
          wallets: wallets.length,
          trades: trades.map((t) => {
            const w = byAddress.get(t.trader)!
            return { ...tradeRow(t, chain, tokenInfo(deps, chain, t.mint, usd)), wallet: { address: w.address, id: w.id, label: w.label, kind: w.kind, kol: kolHandle(deps, w.kolId) } }
          })
        } satisfies typeof LabelledTrades.Type)
      })
  )
]
