/**
 * The embedded mode's reward distributor run: now and then it records a staking reward on
 * svc-stake for each wallet it is given (the local account's embedded Solana wallet), so a
 * newcomer sees rewards to claim. A reward is `baseRaw` USDC plus one raw USDC unit per
 * `stakedRawPerUnit` staked-receipt units the wallet holds. Bounded: a wallet with
 * `maxUnclaimedPerOwner` unclaimed rewards gets no more until it claims; a refused distribution
 * is logged and skipped. Transactions are the ledger's own faucet transactions (journaled), made
 * on the embedded localnet's thread (`LocalFaucet.distributeRewards`, `Faucet.distributeRound`).
 */
import type { Address } from "@solana/kit"
import { Duration, Effect } from "effect"
import type { LocalFaucet } from "../chain/solana/SolanaEndpoints.js"

export interface StakingRewardsOptions {
  readonly everyMs: number
  readonly baseRaw: bigint
  readonly stakedRawPerUnit: bigint
  readonly maxUnclaimedPerOwner: number
}

export const DefaultStakingRewardsOptions: StakingRewardsOptions = {
  everyMs: 120_000,
  baseRaw: 1_000_000n,
  stakedRawPerUnit: 10_000n,
  maxUnclaimedPerOwner: 20
}

export const runStakingRewards = (faucet: LocalFaucet, owners: ReadonlyArray<Address>, o: StakingRewardsOptions = DefaultStakingRewardsOptions) =>
  Effect.gen(function* () {
    const round = { baseRaw: o.baseRaw, stakedRawPerUnit: o.stakedRawPerUnit, maxUnclaimedPerOwner: o.maxUnclaimedPerOwner }
    for (;;) {
      const ids = yield* faucet.distributeRewards(owners, round).pipe(
        Effect.catchAll((e) => Effect.logDebug("staking reward round refused", e.message).pipe(Effect.as([] as ReadonlyArray<bigint>)))
      )
      if (ids.length > 0) yield* Effect.logDebug(`distributed staking rewards ${ids.join(", ")}`)
      yield* Effect.sleep(Duration.millis(o.everyMs))
    }
  })
