/** Creator fees of the account's launched tokens (Solana: svc-curve's fee vaults; Hood: the fee splitter and the pools' positions). */
import { Effect, Layer } from "effect"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import * as CreatorFeesModule from "../services/fees/CreatorFees.js"

/** The creator-fee service from the endpoints. */
export const layerConfig = Layer.unwrapEffect(
  Effect.gen(function* () {
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    return CreatorFeesModule.layer({
      solanaRpcUrl: endpoints.rpcUrl,
      hood: {
        chain: hood.chain,
        rpcUrl: hood.rpcUrl,
        factory: hood.addresses.factory,
        feeSplitter: hood.addresses.feeSplitter,
        weth9: hood.addresses.weth9,
        usdg: hood.addresses.usdg,
        positionManager: hood.addresses.positionManager
      }
    })
  })
)
