/**
 * The embedded mode's reward distributor run: now and then it records a staking reward on
 * svc-stake for each wallet it is given (the local account's embedded Solana wallet), so a
 * newcomer sees rewards to claim. A reward is `baseRaw` USDC plus one raw USDC unit per
 * `stakedRawPerUnit` staked-receipt units the wallet holds. Bounded: a wallet with
 * `maxUnclaimedPerOwner` unclaimed rewards gets no more until it claims; a refused distribution
 * is logged and skipped. Transactions are the ledger's own faucet transactions (journaled).
 */
import type { Address } from "@solana/kit"
import { Duration, Effect } from "effect"
import type { Ledger } from "../chain/solana/localnet/Ledger.js"
import { ataOf, tokenBalance } from "../chain/solana/localnet/LedgerTokens.js"
import { STAKED_SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../chain/solana/program/ProgramIds.js"
import { unclaimedRewardsOf } from "../chain/solana/program/staking/Rewards.js"

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

/** One round: a reward for each owner below the unclaimed bound; the ids distributed. */
export const distributeRound = (ledger: Ledger, owners: ReadonlyArray<Address>, o: StakingRewardsOptions): bigint[] => {
  const ids: bigint[] = []
  for (const owner of owners) {
    if (unclaimedRewardsOf((filters) => ledger.getProgramAccounts(...filters), owner).length >= o.maxUnclaimedPerOwner) continue
    const amountRaw = o.baseRaw + tokenBalance(ledger, ataOf(owner, STAKED_SVC_MINT_ADDRESS)) / o.stakedRawPerUnit
    const r = ledger.distributeStakingReward(owner, USDC_MINT_ADDRESS, amountRaw)
    if (r._tag === "Landed" && r.err === null) ids.push(r.rewardId)
  }
  return ids
}

export const runStakingRewards = (ledger: Ledger, owners: ReadonlyArray<Address>, o: StakingRewardsOptions = DefaultStakingRewardsOptions) =>
  Effect.gen(function* () {
    for (;;) {
      const ids = yield* Effect.try(() => distributeRound(ledger, owners, o)).pipe(
        Effect.catchAll((e) => Effect.logDebug("staking reward round refused", String(e)).pipe(Effect.as([] as bigint[])))
      )
      if (ids.length > 0) yield* Effect.logDebug(`distributed staking rewards ${ids.join(", ")}`)
      yield* Effect.sleep(Duration.millis(o.everyMs))
    }
  })
