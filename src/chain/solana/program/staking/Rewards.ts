/**
 * Finding a wallet's rewards on svc-stake: the `getProgramAccounts` filters (reward size, owner at
 * its offset) and the decode. Shared by the ledger's own callers and the RPC reader, so both ask
 * the same question.
 */
import type { Address } from "@solana/kit"
import { addressToBytes } from "../internal/bytes.js"
import { SVC_STAKE_PROGRAM_ID } from "../ProgramIds.js"
import { decodeReward, REWARD_ACCOUNT_SIZE, type RewardAccount } from "./Accounts.js"

/** Byte offset of `owner` in a Reward account (discriminator, version, bump, rewardId). */
export const REWARD_OWNER_OFFSET = 11

export type RewardFilters = readonly [
  programId: Address,
  filters: ReadonlyArray<{ readonly dataSize: number } | { readonly memcmp: { readonly offset: number; readonly bytes: Uint8Array } }>
]

export const rewardFiltersOf = (owner: Address): RewardFilters => [
  SVC_STAKE_PROGRAM_ID,
  [{ dataSize: REWARD_ACCOUNT_SIZE }, { memcmp: { offset: REWARD_OWNER_OFFSET, bytes: addressToBytes(owner) } }]
]

/** The owner's unclaimed rewards, by id. */
export const unclaimedRewardsOf = (
  scan: (filters: RewardFilters) => ReadonlyArray<{ readonly account: { readonly data: Uint8Array } }>,
  owner: Address
): RewardAccount[] =>
  scan(rewardFiltersOf(owner))
    .flatMap(({ account }) => {
      const r = decodeReward(account.data)
      return r !== undefined && r.owner === owner && r.claimedAtSec === 0n ? [r] : []
    })
    .sort((a, b) => (a.rewardId < b.rewardId ? -1 : 1))
