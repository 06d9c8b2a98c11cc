/**
 * Spec 4.5 `GET /v1/market/token/{address}/wallet-pnl?wallets=`: the P&L of up to
 * `WALLET_PNL_MAX` wallets on one token, split by average cost into realized and unrealized
 * (`AverageCost.positionPnl`). A wallet that never traded the token answers `traded: false`.
 */
import { Effect } from "effect"
import { marketRecord, priceReserves } from "../../../actors/market/MarketRecord.js"
import { positionPnl } from "../../../src/services/marketdata/AverageCost.js"
import { json } from "../../Http.js"
import { isApiError } from "../../QueryParams.js"
import type { RouteDef } from "../../Router.js"
import type { ReadDeps } from "./internal/shared.js"
import { addressList, addressListQ, positionRow, priceUsdOf, tokenRoute } from "./internal/token.js"
import { answer } from "../../OpenApi.js"
import { TokenWalletPnl } from "./internal/responses.js"

export const WALLET_PNL_MAX = 50

export const tokenWalletPnlRoutes = (deps: ReadDeps): ReadonlyArray<RouteDef> => [
  tokenRoute(
    deps,
    {
      suffix: "/wallet-pnl",
      operationId: "dataTokenWalletPnl",
      summary: "P&L of up to 50 wallets on the token",
      description: "realized = received - cost of the tokens sold at the average buy cost; unrealized = held value at spot - cost of what is held; pnl = realized + unrealized.",
      query: { wallets: addressListQ("Comma-separated wallet addresses, 1 to 50", 1, WALLET_PNL_MAX) },
      responses: { 200: answer("Realized and unrealized P&L per wallet", TokenWalletPnl) }
    },
    (t, input) =>
      Effect.gen(function* () {
        const wallets = addressList(input.wallets, "wallets", t.core.chain, 1, WALLET_PNL_MAX)
        if (isApiError(wallets)) return yield* wallets
        const found = yield* deps.data.walletPositions(t.core.chain, t.core.mint, priceReserves(t.core), wallets)
        const byWallet = new Map(found.map((p) => [p.trader, p]))
        return json(200, {
          chain: t.core.chain,
          address: t.core.mint,
          price: marketRecord(t.core, deps.index.clockMs(t.core.chain)).price,
          price_usd: priceUsdOf(t),
          wallets: wallets.map((w) => {
            const p = byWallet.get(w)
            if (p === undefined) return { wallet: w, traded: false as const }
            const { realizedRaw, unrealizedRaw } = positionPnl(p)
            return {
              traded: true as const,
              ...positionRow(t, p),
              realized_pnl: t.quote(realizedRaw),
              realized_pnl_usd: t.usd(realizedRaw),
              unrealized_pnl: t.quote(unrealizedRaw),
              unrealized_pnl_usd: t.usd(unrealizedRaw)
            }
          })
        } satisfies typeof TokenWalletPnl.Type)
      })
  )
]
