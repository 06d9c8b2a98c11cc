/**
 * The USD price source, chosen by `PRICE_SOURCE` (docs/decisions.md "Oracle prices"):
 * - `oracle` (default): SOL/USD from Pyth's `PriceUpdateV2` account at `PYTH_SOL_USD_ACCOUNT`, followed
 *   over the Solana endpoints' Yellowstone stream (the embedded localnet creates it at genesis and
 *   its publisher moves it; a configured cluster serves the real feed), judged by
 *   `PRICE_MAX_AGE_MS` and `PRICE_MAX_CONFIDENCE_BPS`; the other assets from the fixed prices;
 * - `fixed`: `LOCALNET_USD_PRICES` over the defaults for every asset.
 * The feed runs for as long as the layer's scope is open.
 */
import { address } from "@solana/kit"
import { Effect, Layer } from "effect"
import { pythPriceFeed } from "../../ingest/solana/PythPriceFeed.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../config/AppConfig.js"
import { oraclePriceSource } from "../services/prices/OraclePrice.js"
import { fixedPriceSource, localnetPricesConfig, PriceSource } from "../services/prices/PriceSource.js"

export const layer = Layer.scoped(
  PriceSource,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const fixed = fixedPriceSource(yield* localnetPricesConfig, Date.now)
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
    return oraclePriceSource({ sol: pyth.feed }, fixed, { maxAgeMs: config.prices.maxAgeMs, maxConfidenceBps: config.prices.maxConfidenceBps })
  })
)
