/**
 * The split of one Hood (EVM-chain) staking reward (spec document 2, 2.4): a graduated Hood
 * token's staker allocation, shared pro rata over the accounts' eligible staked receipt. Pure.
 *
 * - An account's weight is its staked receipt summed over its eligible Solana wallets (the tier
 *   snapshot's set: shared wallets and wallets past the 200 cap already left out by the caller).
 * - An account with no EVM wallet earns nothing and its weight leaves the denominator, so its share
 *   goes to the others, permanently for that token (the split is recorded once).
 * - Each recipient gets floor(allocation × weight / Σ weights of recipients); the remainder (less
 *   than one raw unit per recipient) stays undistributed in the staker vault.
 * Invariants: Σ amounts + undistributed = allocation; every amount ≥ 0; accounts of weight 0 get
 * no share and are not recorded.
 */

export interface HoodRewardWeight {
  readonly accountId: string
  /** Eligible staked receipt, raw units. */
  readonly stakedRaw: bigint
  /** Where the reward is owed (the account's EVM wallet); undefined: the account has none. */
  readonly evmWallet: string | undefined
}

export interface HoodRewardShare {
  readonly accountId: string
  readonly evmWallet: string
  readonly stakedRaw: bigint
  readonly amountRaw: bigint
}

export interface HoodRewardSplit {
  readonly shares: ReadonlyArray<HoodRewardShare>
  /** Accounts with staked receipt and no EVM wallet: their weight went to the others. */
  readonly forfeited: ReadonlyArray<{ readonly accountId: string; readonly stakedRaw: bigint }>
  /** Σ weights of the recipients (the denominator). */
  readonly eligibleStakedRaw: bigint
  readonly distributedRaw: bigint
  readonly undistributedRaw: bigint
}

export const splitHoodReward = (allocationRaw: bigint, weights: ReadonlyArray<HoodRewardWeight>): HoodRewardSplit => {
  const staked = weights.filter((w) => w.stakedRaw > 0n)
  const recipients = staked.filter((w): w is HoodRewardWeight & { evmWallet: string } => w.evmWallet !== undefined)
  const forfeited = staked.filter((w) => w.evmWallet === undefined).map((w) => ({ accountId: w.accountId, stakedRaw: w.stakedRaw }))
  const eligibleStakedRaw = recipients.reduce((s, w) => s + w.stakedRaw, 0n)
  const shares =
    eligibleStakedRaw === 0n || allocationRaw <= 0n
      ? []
      : recipients
          .map((w) => ({ accountId: w.accountId, evmWallet: w.evmWallet, stakedRaw: w.stakedRaw, amountRaw: (allocationRaw * w.stakedRaw) / eligibleStakedRaw }))
          .filter((s) => s.amountRaw > 0n)
  const distributedRaw = shares.reduce((s, x) => s + x.amountRaw, 0n)
  return { shares, forfeited, eligibleStakedRaw, distributedRaw, undistributedRaw: (allocationRaw > 0n ? allocationRaw : 0n) - distributedRaw }
}
