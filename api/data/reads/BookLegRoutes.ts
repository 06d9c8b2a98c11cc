/**
 * Spec 4.5 `GET /v1/market/wallet/{address}/book-legs` (Max; 30 days by default, up to 90): the
 * wallet's trades matched with opposite-side trades by other wallets on the same token close in
 * time, with a summary by counterparty (`Counterparties`). Other plans get the plain 403.
 */
import { Effect } from "effect"
import { bookLegsMax } from "../../../src/services/marketdata/MarketData.js"
import { counterparties } from "../../../src/services/marketdata/Counterparties.js"
import { json } from "../../Http.js"
import type { RouteDef } from "../../Router.js"
import { requiresMaxReply } from "../../auth/DataBearerAuth.js"
import { DAY_MS } from "./internal/shared.js"
import {
  byQuoteRows,
  intW,
  labelOf,
  listLimitQ,
  tokenInfo,
  tradeRow,
  usdTotal,
  walletRoute,
  type WalletReadDeps
} from "./internal/wallet.js"
import { answer, plainError } from "../../OpenApi.js"
import { BookLegs } from "./internal/responses.js"

export const BOOK_LEGS_DAYS_DEFAULT = 30
export const BOOK_LEGS_DAYS_MAX = 90
export const BOOK_LEGS_WINDOW_MINUTES_DEFAULT = 10
export const BOOK_LEGS_WINDOW_MINUTES_MAX = 60

export const bookLegRoutes = (deps: WalletReadDeps): ReadonlyArray<RouteDef> => [
  walletRoute(
    deps,
    {
      suffix: "/book-legs",
      operationId: "dataWalletBookLegs",
      summary: "Max: the wallet's trades matched with opposite-side trades by other wallets on the same token close in time",
      description: "Pairs are read newest first, at most 1,000 (`truncated` past that); `counterparties` summarizes the pairs read.",
      query: {
        days: intW("Look back this many days", 1, BOOK_LEGS_DAYS_MAX, BOOK_LEGS_DAYS_DEFAULT),
        window_minutes: intW("A counter-leg is within this many minutes either side", 1, BOOK_LEGS_WINDOW_MINUTES_MAX, BOOK_LEGS_WINDOW_MINUTES_DEFAULT),
        limit: listLimitQ("Leg pairs listed")
      },
      responses: { 200: answer("Leg pairs and counterparties", BookLegs), 403: plainError("{\"error\": \"requires Max\"}") }
    },
    (address, { days, window_minutes: window, limit }, caller) =>
      Effect.gen(function* () {
        if (caller.plan !== "max") return requiresMaxReply()
        const sinceMs = deps.nowMs() - days * DAY_MS
        const pairs = yield* deps.data.bookLegs("solana", address, sinceMs, window * 60_000, bookLegsMax + 1)
        const truncated = pairs.length > bookLegsMax
        const kept = pairs.slice(0, bookLegsMax)
        const usd = yield* deps.data.usdOfMints("solana", new Set(kept.map((p) => p.mine.mint)))
        const infoOf = (mint: string) => tokenInfo(deps, "solana", mint, usd)
        return json(200, {
          chain: "solana" as const,
          address,
          days,
          window_minutes: window,
          label: labelOf(deps, address, caller.plan),
          pairs: kept.length,
          truncated,
          counterparties: counterparties(kept, infoOf).map((c) => ({
            wallet: c.wallet,
            label: labelOf(deps, c.wallet, caller.plan),
            legs: c.legs,
            tokens: c.tokens,
            volume_usd: usdTotal(c.volume),
            volume: byQuoteRows(c.volume)
          })),
          legs: kept.slice(0, limit).map((p) => {
            const info = infoOf(p.mine.mint)
            return { token: p.mine.mint, symbol: info.core?.identity.symbol ?? null, gap_ms: p.other.atMs - p.mine.atMs, leg: tradeRow(p.mine, "solana", info), counter: { ...tradeRow(p.other, "solana", info), wallet: p.other.trader } }
          })
        } satisfies typeof BookLegs.Type)
      })
  )
]
