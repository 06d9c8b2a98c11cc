/**
 * The USD price source, chosen by `PRICE_SOURCE` (docs/decisions.md "Oracle prices"):
 * - `oracle` (default): SOL/USD from Pyth's `PriceUpdateV2` account at `PYTH_SOL_USD_ACCOUNT`, followed
 *   over the Solana endpoints' Yellowstone stream (the embedded localnet creates it at genesis and
 *   its publisher moves it; a configured cluster serves the real feed), judged by
 *   `PRICE_MAX_AGE_MS` and `PRICE_MAX_CONFIDENCE_BPS`; ETH/USD from the AggregatorV3 feed on Hood
 *   (the embedded localnet's `EthUsdFeed`, or `HOOD_ETH_USD_FEED_ADDRESS`; none known: ETH fixed),
 *   polled, judged by the same age rule; the other assets from the fixed prices;
 * - `fixed`: `LOCALNET_USD_PRICES` over the defaults for every asset.
 * The feeds run for as long as the layer's scope is open.
 */
import { address } from "@solana/kit"
import { Effect, Layer } from "effect"
import { ethUsdFeed } from "../../ingest/hood/EthUsdFeed.js"
import { pythPriceFeed } from "../../ingest/solana/PythPriceFeed.js"
import { hoodPublicClient } from "../chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../config/AppConfig.js"
import { oraclePriceSource } from "../services/prices/OraclePrice.js"
import { fixedPriceSource, localnetPricesConfig, PriceSource } from "../services/prices/PriceSource.js"

export const layer = Layer.scoped(
  PriceSource,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const fixed = fixedPriceSource(yield* localnetPricesConfig)
    if (config.prices.source === "fixed") return fixed
    const endpoints = yield* SolanaEndpoints
    const pyth = pythPriceFeed({
      grpcUrl: endpoints.grpcUrl,
      xToken: endpoints.grpcToken,
      rpcUrl: endpoints.rpcUrl,
      account: address(config.prices.pythSolUsdAccount),
      commitment: config.solana.commitment
    })
    yield* Effect.forkScoped(pyth.run)
    const hood = yield* HoodEndpoints
    const feedAddress = hood.addresses.ethUsdFeed
    const eth = feedAddress === undefined ? undefined : ethUsdFeed({ client: hoodPublicClient(hood.chain, hood.rpcUrl), address: feedAddress })
    if (eth === undefined) yield* Effect.logWarning("no ETH/USD feed is known on Hood: ETH is valued at the fixed price")
    else yield* Effect.forkScoped(eth.run)
    return oraclePriceSource(eth === undefined ? { sol: pyth.feed } : { sol: pyth.feed, eth: eth.feed }, fixed, {
      maxAgeMs: config.prices.maxAgeMs,
      maxConfidenceBps: config.prices.maxConfidenceBps
    })
  })
)
