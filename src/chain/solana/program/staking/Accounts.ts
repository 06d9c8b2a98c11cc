/**
 * svc-stake's account layouts (docs/solana-program.md, "svc-stake"): the pool (PDA ["stake_pool"]),
 * a staker's withdrawal list (PDA ["staker", owner]), one withdrawal (a keypair account the unstake
 * co-signs) and one reward (PDA ["reward", rewardId]). Fixed size, little-endian, a discriminator
 * then a layout version (1). Decoders return undefined for data of another size, discriminator or
 * version and never throw; check the owner (svc-stake) before trusting a decode.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode } from "../internal/bytes.js"

export const STAKE_LAYOUT_VERSION = 1

export const StakeDiscriminator = { Pool: 1, Staker: 2, Withdrawal: 3, Reward: 4 } as const

/** Withdrawals a staker account lists (active ones first never evicted; finished ones make room). */
export const STAKER_LISTED_WITHDRAWALS_MAX = 16
/** The highest `maxActiveWithdrawals` a pool may set: the list must keep room for finished ones. */
export const POOL_ACTIVE_WITHDRAWALS_CEILING = 8

export interface StakePoolAccount {
  readonly bump: number
  readonly paused: boolean
  readonly maxActiveWithdrawals: number
  readonly withdrawalTimelockSeconds: bigint
  /** Configures the pool and distributes rewards. */
  readonly authority: Address
  readonly platformMint: Address
  readonly receiptMint: Address
  /** PDA ["stake_vault", pool]: token account of platformMint, authority = pool. */
  readonly vault: Address
  /** Platform-token units staked and not yet finished out (receipt supply + pending withdrawals). */
  readonly totalStakedRaw: bigint
  readonly pendingWithdrawalRaw: bigint
  /** The id the next distributed reward gets. */
  readonly nextRewardId: bigint
}

export const STAKE_POOL_ACCOUNT_SIZE = 5 + 8 + 32 * 4 + 8 * 3 // 165

export const encodeStakePool = (p: StakePoolAccount): Uint8Array =>
  new ByteWriter(STAKE_POOL_ACCOUNT_SIZE)
    .u8(StakeDiscriminator.Pool)
    .u8(STAKE_LAYOUT_VERSION)
    .u8(p.bump)
    .bool(p.paused)
    .u8(p.maxActiveWithdrawals)
    .u64(p.withdrawalTimelockSeconds)
    .address(p.authority)
    .address(p.platformMint)
    .address(p.receiptMint)
    .address(p.vault)
    .u64(p.totalStakedRaw)
    .u64(p.pendingWithdrawalRaw)
    .u64(p.nextRewardId)
    .done()

const header = (data: Uint8Array, size: number, disc: number): ByteReader | undefined => {
  if (data.length !== size || data[0] !== disc || data[1] !== STAKE_LAYOUT_VERSION) return undefined
  return new ByteReader(data, 2)
}

export const decodeStakePool = (data: Uint8Array): StakePoolAccount | undefined =>
  tryDecode(() => {
    const r = header(data, STAKE_POOL_ACCOUNT_SIZE, StakeDiscriminator.Pool)
    if (r === undefined) return undefined
    const p: StakePoolAccount = {
      bump: r.u8(),
      paused: r.bool(),
      maxActiveWithdrawals: r.u8(),
      withdrawalTimelockSeconds: r.u64(),
      authority: r.address(),
      platformMint: r.address(),
      receiptMint: r.address(),
      vault: r.address(),
      totalStakedRaw: r.u64(),
      pendingWithdrawalRaw: r.u64(),
      nextRewardId: r.u64()
    }
    r.end()
    return p
  })

export interface ListedWithdrawal {
  readonly address: Address
  readonly finished: boolean
}

export interface StakerAccount {
  readonly bump: number
  readonly owner: Address
  readonly activeWithdrawals: number
  /** Oldest first; at most STAKER_LISTED_WITHDRAWALS_MAX (a new one evicts the oldest finished). */
  readonly withdrawals: ReadonlyArray<ListedWithdrawal>
}

export const STAKER_ACCOUNT_SIZE = 3 + 32 + 2 + 33 * STAKER_LISTED_WITHDRAWALS_MAX // 565

export const encodeStaker = (s: StakerAccount): Uint8Array => {
  if (s.withdrawals.length > STAKER_LISTED_WITHDRAWALS_MAX) throw new RangeError("too many listed withdrawals")
  const w = new ByteWriter(STAKER_ACCOUNT_SIZE)
    .u8(StakeDiscriminator.Staker)
    .u8(STAKE_LAYOUT_VERSION)
    .u8(s.bump)
    .address(s.owner)
    .u8(s.activeWithdrawals)
    .u8(s.withdrawals.length)
  for (let i = 0; i < STAKER_LISTED_WITHDRAWALS_MAX; i++) {
    const e = s.withdrawals[i]
    w.address(e?.address ?? null).bool(e?.finished ?? false)
  }
  return w.done()
}

export const decodeStaker = (data: Uint8Array): StakerAccount | undefined =>
  tryDecode(() => {
    const r = header(data, STAKER_ACCOUNT_SIZE, StakeDiscriminator.Staker)
    if (r === undefined) return undefined
    const bump = r.u8()
    const owner = r.address()
    const activeWithdrawals = r.u8()
    const count = r.u8()
    if (count > STAKER_LISTED_WITHDRAWALS_MAX || activeWithdrawals > count) return undefined
    const withdrawals: ListedWithdrawal[] = []
    for (let i = 0; i < STAKER_LISTED_WITHDRAWALS_MAX; i++) {
      const e = { address: r.address(), finished: r.bool() }
      if (i < count) withdrawals.push(e)
    }
    if (withdrawals.filter((e) => !e.finished).length !== activeWithdrawals) return undefined
    r.end()
    return { bump, owner, activeWithdrawals, withdrawals }
  })

export interface WithdrawalAccount {
  readonly owner: Address
  readonly amountRaw: bigint
  readonly startTimeSec: bigint
  /** When finish becomes possible: start + the pool's timelock at unstake. */
  readonly endTimeSec: bigint
  /** 0 while not finished. */
  readonly claimTimeSec: bigint
}

export const WITHDRAWAL_ACCOUNT_SIZE = 2 + 32 + 8 * 4 // 66

export const encodeWithdrawal = (w: WithdrawalAccount): Uint8Array =>
  new ByteWriter(WITHDRAWAL_ACCOUNT_SIZE)
    .u8(StakeDiscriminator.Withdrawal)
    .u8(STAKE_LAYOUT_VERSION)
    .address(w.owner)
    .u64(w.amountRaw)
    .u64(w.startTimeSec)
    .u64(w.endTimeSec)
    .u64(w.claimTimeSec)
    .done()

export const decodeWithdrawal = (data: Uint8Array): WithdrawalAccount | undefined =>
  tryDecode(() => {
    const r = header(data, WITHDRAWAL_ACCOUNT_SIZE, StakeDiscriminator.Withdrawal)
    if (r === undefined) return undefined
    const w: WithdrawalAccount = { owner: r.address(), amountRaw: r.u64(), startTimeSec: r.u64(), endTimeSec: r.u64(), claimTimeSec: r.u64() }
    r.end()
    return w
  })

export interface RewardAccount {
  readonly bump: number
  readonly rewardId: bigint
  /** The only wallet the reward pays (to its token account of `mint`). */
  readonly owner: Address
  readonly mint: Address
  readonly amountRaw: bigint
  readonly distributedAtSec: bigint
  /** 0 while unclaimed; a claimed reward is never paid again. */
  readonly claimedAtSec: bigint
}

export const REWARD_ACCOUNT_SIZE = 3 + 8 + 32 * 2 + 8 * 3 // 99

export const encodeReward = (w: RewardAccount): Uint8Array =>
  new ByteWriter(REWARD_ACCOUNT_SIZE)
    .u8(StakeDiscriminator.Reward)
    .u8(STAKE_LAYOUT_VERSION)
    .u8(w.bump)
    .u64(w.rewardId)
    .address(w.owner)
    .address(w.mint)
    .u64(w.amountRaw)
    .u64(w.distributedAtSec)
    .u64(w.claimedAtSec)
    .done()

export const decodeReward = (data: Uint8Array): RewardAccount | undefined =>
  tryDecode(() => {
    const r = header(data, REWARD_ACCOUNT_SIZE, StakeDiscriminator.Reward)
    if (r === undefined) return undefined
    const w: RewardAccount = {
      bump: r.u8(),
      rewardId: r.u64(),
      owner: r.address(),
      mint: r.address(),
      amountRaw: r.u64(),
      distributedAtSec: r.u64(),
      claimedAtSec: r.u64()
    }
    r.end()
    return w
  })
