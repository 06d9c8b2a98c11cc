/**
 * The trade rail's write side (the embedded wallet's one-shot trades: Solana on svc-curve's curves
 * and pools, the platform fee to the treasury launches pay; Hood on the curves and their Uniswap v3
 * pools, through the engine's TradeRouter, which collects the platform fee in the same call), with what runs on it: the agent trades' recovery
 * (`Recovery.ts`) and the limit orders' executor, which takes the triggers this process's actors
 * hand off and every second the `triggered` orders no live process drives (an actors process's, or
 * a dead process's; `OrderExecutor.ts`).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { TREASURY_ADDRESS } from "../chain/solana/localnet/DevKeys.js"
import { hoodPublicClient } from "../chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { checkTradeRouter } from "../chain/hood/TradeRouterCheck.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../config/AppConfig.js"
import { TierService } from "../services/accounts/TierService.js"
import * as OrderHandoff from "../services/orders/OrderHandoff.js"
import { makeOrderExecutor, orderCallers } from "../services/orders/OrderExecutor.js"
import * as TradeModule from "../services/trade/TradeService.js"
import { solanaTreasuryOf } from "./Common.js"
import { periodicPass, recoveryPass } from "./Recovery.js"

const serviceLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const treasury = solanaTreasuryOf(config, endpoints.embedded)
    if (treasury === undefined) yield* Effect.logWarning("SOLANA_TREASURY_ADDRESS is not set: agent trades pay the localnet treasury's address")
    const router = hood.addresses.swapRouter
    const tradeRouter = hood.addresses.tradeRouter
    if (router === undefined) yield* Effect.logWarning("Hood trades refused: HOOD_SWAP_ROUTER_ADDRESS is not set for this Hood node")
    else if (tradeRouter === undefined) yield* Effect.logWarning("Hood trades refused: HOOD_TRADE_ROUTER_ADDRESS is not set for this Hood node (every Hood trade goes through it with its platform fee)")
    // A router with no code, or deployed for another factory or SwapRouter, refuses the start (TradeRouterCheck.ts).
    else yield* checkTradeRouter(hoodPublicClient(hood.chain, hood.rpcUrl), { tradeRouter, factory: hood.addresses.factory, swapRouter: router })
    return TradeModule.layer({
      solanaRpcUrl: endpoints.rpcUrl,
      treasury: treasury ?? TREASURY_ADDRESS,
      ...(router === undefined || tradeRouter === undefined
        ? {}
        : { hood: { chain: hood.chain, rpcUrl: hood.rpcUrl, factory: hood.addresses.factory, swapRouter: router, tradeRouter, weth9: hood.addresses.weth9 } })
    })
  })
)

const background = Layer.scopedDiscard(
  Effect.gen(function* () {
    const trades = yield* TradeModule.TradeService
    yield* recoveryPass({
      what: "agent trades",
      pass: trades.resumeInFlight,
      started: (n) => `settling ${n} agent trades a previous run left in flight`,
      swept: (n) => `settling ${n} agent trades whose owner's lease ended`
    })
    // Built trades no request sent: found landed (the caller broadcast it itself) or expired unlanded, from the chain.
    yield* periodicPass({ what: "built agent trades", pass: trades.watchBuilt, swept: (n) => `settled ${n} built agent trades from the chain` })
    const sql = yield* SqlClient.SqlClient
    const executor = makeOrderExecutor({ sql, trades, callers: orderCallers(sql, yield* TierService) })
    yield* executor.run(yield* Effect.serviceOption(OrderHandoff.OrderHandoff))
  })
)

/** The trade service from the configuration and the endpoints, with its recovery and the order executor. */
export const layerConfig = background.pipe(Layer.provideMerge(serviceLayer))
