/**
 * The local faucet's operations on a `Ledger` that no JSON-RPC method offers (minting localnet
 * USDC/SVC, recording svc-stake rewards): the embedded mode's funding of the local account and its
 * simulated staking rewards. They run where the ledger lives (the embedded localnet's thread,
 * `thread.ts`, called over the worker port), and every transaction they make is the ledger's own
 * faucet transaction (journaled like any other).
 */
import type { Address } from "@solana/kit"
import { STAKED_SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../program/ProgramIds.js"
import { unclaimedRewardsOf } from "../program/staking/Rewards.js"
import type { Ledger } from "./Ledger.js"
import { ataOf, tokenBalance } from "./LedgerTokens.js"

/** Tops `owner` up to at least `lamports` and, per mint, the raw amount given; never beyond. */
export const topUp = (ledger: Ledger, owner: Address, lamports: bigint, tokens: ReadonlyArray<readonly [Address, bigint]>): void => {
  const held = ledger.getBalance(owner)
  if (held < lamports) ledger.requestAirdrop(owner, lamports - held)
  for (const [mint, want] of tokens) {
    const has = tokenBalance(ledger, ataOf(owner, mint))
    if (has < want) ledger.mintTestTokens(mint, owner, want - has)
  }
}

export interface StakingRewardsRound {
  readonly baseRaw: bigint
  readonly stakedRawPerUnit: bigint
  readonly maxUnclaimedPerOwner: number
}

/**
 * One round of simulated staking rewards: for each owner below `maxUnclaimedPerOwner` unclaimed
 * rewards, `baseRaw` USDC plus one raw unit per `stakedRawPerUnit` staked-receipt units it holds.
 * The ids distributed.
 */
export const distributeRound = (ledger: Ledger, owners: ReadonlyArray<Address>, o: StakingRewardsRound): bigint[] => {
  const ids: bigint[] = []
  for (const owner of owners) {
    if (unclaimedRewardsOf((filters) => ledger.getProgramAccounts(...filters), owner).length >= o.maxUnclaimedPerOwner) continue
    const amountRaw = o.baseRaw + tokenBalance(ledger, ataOf(owner, STAKED_SVC_MINT_ADDRESS)) / o.stakedRawPerUnit
    const r = ledger.distributeStakingReward(owner, USDC_MINT_ADDRESS, amountRaw)
    if (r._tag === "Landed" && r.err === null) ids.push(r.rewardId)
  }
  return ids
}
