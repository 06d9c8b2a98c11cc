/**
 * Spec 4.5 `GET /v1/market/labelled-trades?kind=smartmoney|kol`: Solana trades by the tracked
 * smart-money or KOL wallets the plan can see, newest first, each with its wallet's label.
 */
import { Effect } from "effect"
import { tradesOf } from "../../../clickhouse/queries/WalletReads.js"
import type { TrackedWallet } from "../../../src/services/tracking/Tracking.js"
import { json } from "../../Http.js"
import { isApiError, parseChainParam, parseEnumParam, parseTimeParam } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import { intQ, paramQ, readRoute, solanaQ, queryOf } from "./internal/shared.js"
import {
  kolHandle,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  parseIntW,
  parseTokenQ,
  pricesFor,
  tokenInfo,
  tradeRow,
  walletRead as ch,
  type WalletSocialDeps
} from "./internal/wallet.js"

const isKol = (w: TrackedWallet) => w.kind === "kol" || w.kolId !== null

/** Whether a wallet is labelled `kind` (both kinds when undefined; a KOL is never smart money). */
const labelled = (w: TrackedWallet, kind: "smartmoney" | "kol" | undefined): boolean =>
  kind === undefined ? w.kind === "smartmoney" || isKol(w) : kind === "kol" ? isKol(w) : w.kind === "smartmoney" && !isKol(w)

export const labelledTradeRoutes = (deps: WalletSocialDeps): ReadonlyArray<RouteDef> => [
  readRoute(
    deps,
    {
      path: "/v1/market/labelled-trades",
      operationId: "dataLabelledTrades",
      summary: "Solana trades by tracked smart-money or KOL wallets the plan can see, newest first",
      query: [
        solanaQ,
        paramQ("kind", "smartmoney or kol (default: both)", { type: "string", enum: ["smartmoney", "kol"] }),
        paramQ("token", "Only this token"),
        paramQ("since", "From this time: ISO 8601 or epoch ms"),
        paramQ("before", "Before this time (exclusive; the previous page's oldest `at`)"),
        intQ("limit", "Rows", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
      ]
    },
    (req, caller) =>
      Effect.gen(function* () {
        const qs = queryOf(req)
        const chain = parseChainParam(qs, "solana")
        if (isApiError(chain)) return yield* chain
        const kind = parseEnumParam(qs, "kind", ["smartmoney", "kol"] as const, undefined)
        if (isApiError(kind)) return yield* kind
        const token = parseTokenQ(qs, chain)
        if (isApiError(token)) return yield* token
        const since = parseTimeParam(qs, "since")
        if (isApiError(since)) return yield* since
        const before = parseTimeParam(qs, "before")
        if (isApiError(before)) return yield* before
        const limit = parseIntW(qs, "limit", 1, LIST_LIMIT_MAX, LIST_LIMIT_DEFAULT)
        if (isApiError(limit)) return yield* limit
        const wallets = deps.tracking.wallets(caller.plan, chain).filter((w) => labelled(w, kind))
        const byAddress = new Map(wallets.map((w) => [w.address, w]))
        const trades = yield* ch(tradesOf(deps.clickhouse, chain, [...byAddress.keys()], { sinceMs: since, beforeMs: before, mint: token }, limit))
        const usd = yield* pricesFor(deps, chain, new Set(trades.map((t) => t.mint)))
        return json(200, {
          chain,
          kind: kind ?? "all",
          wallets: wallets.length,
          trades: trades.map((t) => {
            const w = byAddress.get(t.trader)!
            return { ...tradeRow(t, tokenInfo(deps, chain, t.mint, usd)), wallet: { address: w.address, id: w.id, label: w.label, kind: w.kind, kol: kolHandle(deps, w.kolId) } }
          })
        })
      })
  )
]
