/**
 * Staking (svc-stake on the Solana localnet; Hood rewards from graduated Hood tokens): its
 * positions read the staked figure with the same reader the tier snapshot uses, uncached so a
 * position is current. The layer owns the staking operations' and reward claims' recovery
 * (`Recovery.ts`) and the Hood reward distributor (a sweep every 5 s over graduated Hood tokens; in
 * every process that serves staking, several replicas record each distribution once).
 */
import { Effect, Layer } from "effect"
import { hoodPublicClient } from "../chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../config/AppConfig.js"
import { STAKED_SVC_MINT, SVC_MINT } from "../domain/QuotePairs.js"
import { AccountWallets } from "../services/accounts/AccountWallets.js"
import * as BalanceReader from "../services/accounts/BalanceReader.js"
import { hoodRewardChain, runHoodRewardDistributor } from "../services/staking/HoodRewards.js"
import * as StakingModule from "../services/staking/StakingService.js"
import { stakedMintOf } from "./Common.js"
import { recoveryPass } from "./Recovery.js"

const serviceLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const accountWallets = yield* AccountWallets
    const hood = yield* HoodEndpoints
    const stakedMint = stakedMintOf(config, endpoints.embedded) ?? STAKED_SVC_MINT
    return StakingModule.layer(
      // The service's Solana key (the keeper's) pays reward claims' fees and rent.
      { rpcUrl: endpoints.rpcUrl, platformMint: SVC_MINT, receiptMint: stakedMint, distributor: endpoints.keeper },
      {
        balances: BalanceReader.solanaBalanceReader({ rpcUrl: endpoints.rpcUrl, stakedMint }),
        accountWallets,
        // Hood rewards: each graduated Hood token's staker allocation, split over the accounts' staked receipt.
        hoodChain: hoodRewardChain(hoodPublicClient(hood.chain, hood.rpcUrl), hood.addresses.factory)
      }
    )
  })
)

const background = Layer.scopedDiscard(
  Effect.gen(function* () {
    const staking = yield* StakingModule.StakingService
    yield* recoveryPass({
      what: "staking operations",
      pass: staking.resumeInFlight,
      started: (n) => `settling ${n} staking operations a previous run left in flight`,
      swept: (n) => `settling ${n} staking operations and reward claims whose owner's lease ended`
    })
    yield* Effect.forkScoped(runHoodRewardDistributor(staking.hoodRewards))
  })
)

/** The staking service from the configuration and the endpoints, with its recovery and the Hood reward distributor. */
export const layerConfig = background.pipe(Layer.provideMerge(serviceLayer))
