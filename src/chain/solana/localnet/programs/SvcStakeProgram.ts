/**
 * svc-stake, the localnet's staking program for the platform token (layouts and account lists in
 * `program/staking/`, documented in docs/solana-program.md "svc-stake"). One pool (PDA
 * ["stake_pool"]) holds the staked platform token in its vault and is the mint authority of the
 * staked receipt: `stake` takes platform tokens and mints the same number of receipt units;
 * `unstake` burns receipt units and opens a withdrawal (a keypair account the transaction co-signs)
 * that `finish` pays out once `withdrawalTimelockSeconds` have passed on the program clock; there is
 * no instant unstake. A staker may hold at most `maxActiveWithdrawals` unfinished withdrawals; a
 * paused pool refuses stake, unstake and finish. The reward distributor records per-owner rewards
 * (PDA ["reward", id], ids from the pool's counter), funds them into a per-mint reward vault, and
 * `claim_reward` pays a reward to its recorded owner's token account exactly once.
 *
 * Invariants: vault balance ≥ totalStakedRaw = receipt supply + pendingWithdrawalRaw (the
 * receipt is only minted here); each reward vault holds the sum of its unclaimed rewards. Funds
 * move only through CPIs into System and SPL Token, so the runtime's account rules hold.
 */
import type { Address } from "@solana/kit"
import { decodeSplTokenAccount } from "../../program/accounts/SplTokenAccount.js"
import { U64_MAX } from "../../program/internal/bytes.js"
import { SVC_STAKE_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../program/ProgramIds.js"
import {
  decodeReward,
  decodeStakePool,
  decodeStaker,
  decodeWithdrawal,
  encodeReward,
  encodeStakePool,
  encodeStaker,
  encodeWithdrawal,
  POOL_ACTIVE_WITHDRAWALS_CEILING,
  REWARD_ACCOUNT_SIZE,
  type StakePoolAccount,
  STAKER_ACCOUNT_SIZE,
  STAKER_LISTED_WITHDRAWALS_MAX,
  type StakerAccount,
  WITHDRAWAL_ACCOUNT_SIZE
} from "../../program/staking/Accounts.js"
import { SvcStakeError } from "../../program/staking/Errors.js"
import {
  ClaimRewardAccounts,
  ConfigureAccounts,
  decodeSvcStakeInstruction,
  DistributeRewardAccounts,
  FinishAccounts,
  type PoolParams,
  StakeAccounts,
  StakeSeeds,
  UnstakeAccounts
} from "../../program/staking/Instructions.js"
import { findProgramAddressSync, type Seed } from "../../program/Pda.js"
import { type AccountHandle, fail, failCustom, type InvokeContext, type Program } from "../internal/runtime.js"
import { createAccount, createTokenAccount, meta, named, type Signer, tokenTransfer, u64Data } from "./support.js"
import { TokenInstruction } from "./TokenProgram.js"

const err = (ctx: InvokeContext, code: number, message: string): never => {
  ctx.log(`Error: ${message}`)
  return failCustom(code)
}

const expectPda = (ctx: InvokeContext, h: AccountHandle, seeds: Seed[], what: string): number => {
  const found = findProgramAddressSync(seeds, SVC_STAKE_PROGRAM_ID)
  if (h.address !== found.address) err(ctx, SvcStakeError.InvalidAccount, `${what}: expected ${found.address}, got ${h.address}`)
  return found.bump
}

const expectAddress = (ctx: InvokeContext, h: AccountHandle, expected: Address, what: string): void => {
  if (h.address !== expected) err(ctx, SvcStakeError.InvalidAccount, `${what}: expected ${expected}, got ${h.address}`)
}

const expectTokenProgram = (h: AccountHandle): void => {
  if (h.address !== TOKEN_PROGRAM_ID) fail("IncorrectProgramId")
}

const owned = (ctx: InvokeContext, h: AccountHandle, what: string): Uint8Array => {
  if (h.account.owner !== SVC_STAKE_PROGRAM_ID) err(ctx, SvcStakeError.InvalidAccount, `${what} is not a svc-stake account`)
  return h.account.data
}

const loadPool = (ctx: InvokeContext, h: AccountHandle): StakePoolAccount => {
  expectPda(ctx, h, StakeSeeds.pool(), "pool")
  const p = decodeStakePool(owned(ctx, h, "pool"))
  return p ?? err(ctx, SvcStakeError.InvalidAccount, "stake pool account expected")
}

const poolSigner = (pool: StakePoolAccount): Signer => [[...StakeSeeds.pool(), Uint8Array.of(pool.bump)]]

const add64 = (ctx: InvokeContext, a: bigint, b: bigint): bigint => {
  const s = a + b
  if (s > U64_MAX) err(ctx, SvcStakeError.MathOverflow, "u64 overflow")
  return s
}

const requireLive = (ctx: InvokeContext, pool: StakePoolAccount): void => {
  if (pool.paused) err(ctx, SvcStakeError.PoolPaused, "the pool is paused")
}

const requirePositive = (ctx: InvokeContext, amountRaw: bigint): void => {
  if (amountRaw === 0n) err(ctx, SvcStakeError.ZeroAmount, "amount must be positive")
}

const tokenCpi = (ctx: InvokeContext, tag: number, accounts: ReturnType<typeof meta>[], amount: bigint, signer: Signer = []): void =>
  ctx.invoke({ programId: TOKEN_PROGRAM_ID, accounts, data: u64Data(tag, 1, amount) }, signer)

// --- Instructions ----------------------------------------------------------------------------

const stake = (ctx: InvokeContext, amountRaw: bigint): void => {
  ctx.log("Instruction: Stake")
  ctx.consumeUnits(4_000)
  const a = named(ctx, StakeAccounts)
  expectTokenProgram(a.tokenProgram)
  const pool = loadPool(ctx, a.pool)
  requireLive(ctx, pool)
  requirePositive(ctx, amountRaw)
  expectAddress(ctx, a.receiptMint, pool.receiptMint, "receiptMint")
  expectAddress(ctx, a.vault, pool.vault, "vault")
  // The Token program checks the source's mint against the vault's (platform mint) on transfer.
  tokenTransfer(ctx, a.ownerPlatformAccount, a.vault, a.owner, amountRaw)
  tokenCpi(ctx, TokenInstruction.MintTo, [meta(a.receiptMint, false, true), meta(a.ownerReceiptAccount, false, true), meta(a.pool, true, false)], amountRaw, poolSigner(pool))
  a.pool.account.data = encodeStakePool({ ...pool, totalStakedRaw: add64(ctx, pool.totalStakedRaw, amountRaw) })
}

const unstake = (ctx: InvokeContext, amountRaw: bigint): void => {
  ctx.log("Instruction: Unstake")
  ctx.consumeUnits(5_000)
  const a = named(ctx, UnstakeAccounts)
  if (a.systemProgram.address !== SYSTEM_PROGRAM_ID) fail("IncorrectProgramId")
  expectTokenProgram(a.tokenProgram)
  const pool = loadPool(ctx, a.pool)
  requireLive(ctx, pool)
  requirePositive(ctx, amountRaw)
  expectAddress(ctx, a.receiptMint, pool.receiptMint, "receiptMint")
  const stakerBump = expectPda(ctx, a.staker, StakeSeeds.staker(a.owner.address), "staker")
  let staker: StakerAccount
  if (a.staker.account.owner === SYSTEM_PROGRAM_ID && a.staker.account.data.length === 0) {
    createAccount(ctx, a.owner, a.staker, STAKER_ACCOUNT_SIZE, SVC_STAKE_PROGRAM_ID, [[...StakeSeeds.staker(a.owner.address), Uint8Array.of(stakerBump)]])
    staker = { bump: stakerBump, owner: a.owner.address, activeWithdrawals: 0, withdrawals: [] }
  } else {
    staker = decodeStaker(owned(ctx, a.staker, "staker")) ?? err(ctx, SvcStakeError.InvalidAccount, "staker account expected")
  }
  if (staker.activeWithdrawals >= pool.maxActiveWithdrawals) {
    err(ctx, SvcStakeError.TooManyWithdrawals, `at most ${pool.maxActiveWithdrawals} active withdrawals`)
  }
  tokenCpi(ctx, TokenInstruction.Burn, [meta(a.ownerReceiptAccount, false, true), meta(a.receiptMint, false, true), meta(a.owner, true, false)], amountRaw)
  createAccount(ctx, a.owner, a.withdrawal, WITHDRAWAL_ACCOUNT_SIZE, SVC_STAKE_PROGRAM_ID, [])
  const now = ctx.unixTimestampSec
  a.withdrawal.account.data = encodeWithdrawal({
    owner: a.owner.address,
    amountRaw,
    startTimeSec: now,
    endTimeSec: add64(ctx, now, pool.withdrawalTimelockSeconds),
    claimTimeSec: 0n
  })
  let listed = staker.withdrawals
  if (listed.length >= STAKER_LISTED_WITHDRAWALS_MAX) {
    // Active withdrawals are at most POOL_ACTIVE_WITHDRAWALS_CEILING < the list's size: one is finished.
    const oldestFinished = listed.findIndex((w) => w.finished)
    listed = listed.filter((_, i) => i !== oldestFinished)
  }
  a.staker.account.data = encodeStaker({
    ...staker,
    activeWithdrawals: staker.activeWithdrawals + 1,
    withdrawals: [...listed, { address: a.withdrawal.address, finished: false }]
  })
  a.pool.account.data = encodeStakePool({ ...pool, pendingWithdrawalRaw: add64(ctx, pool.pendingWithdrawalRaw, amountRaw) })
}

const finish = (ctx: InvokeContext): void => {
  ctx.log("Instruction: Finish")
  ctx.consumeUnits(4_000)
  const a = named(ctx, FinishAccounts)
  expectTokenProgram(a.tokenProgram)
  const pool = loadPool(ctx, a.pool)
  requireLive(ctx, pool)
  expectAddress(ctx, a.vault, pool.vault, "vault")
  expectPda(ctx, a.staker, StakeSeeds.staker(a.owner.address), "staker")
  const staker = decodeStaker(owned(ctx, a.staker, "staker")) ?? err(ctx, SvcStakeError.InvalidAccount, "staker account expected")
  const w = decodeWithdrawal(owned(ctx, a.withdrawal, "withdrawal")) ?? err(ctx, SvcStakeError.InvalidAccount, "withdrawal account expected")
  if (w.owner !== a.owner.address) err(ctx, SvcStakeError.NotWithdrawalOwner, "the withdrawal belongs to another wallet")
  if (w.claimTimeSec !== 0n) err(ctx, SvcStakeError.WithdrawalFinished, "the withdrawal was already finished")
  const now = ctx.unixTimestampSec
  if (now < w.endTimeSec) err(ctx, SvcStakeError.WithdrawalLocked, `the wait ends at ${w.endTimeSec}, now ${now}`)
  tokenTransfer(ctx, a.vault, a.ownerPlatformAccount, a.pool, w.amountRaw, poolSigner(pool))
  a.withdrawal.account.data = encodeWithdrawal({ ...w, claimTimeSec: now })
  a.staker.account.data = encodeStaker({
    ...staker,
    activeWithdrawals: staker.activeWithdrawals - 1,
    withdrawals: staker.withdrawals.map((e) => (e.address === a.withdrawal.address ? { ...e, finished: true } : e))
  })
  a.pool.account.data = encodeStakePool({
    ...pool,
    totalStakedRaw: pool.totalStakedRaw - w.amountRaw,
    pendingWithdrawalRaw: pool.pendingWithdrawalRaw - w.amountRaw
  })
}

const configure = (ctx: InvokeContext, params: PoolParams): void => {
  ctx.log("Instruction: Configure")
  ctx.consumeUnits(1_000)
  const a = named(ctx, ConfigureAccounts)
  const pool = loadPool(ctx, a.pool)
  if (a.authority.address !== pool.authority) err(ctx, SvcStakeError.NotAuthority, "only the pool authority configures it")
  if (params.maxActiveWithdrawals < 1 || params.maxActiveWithdrawals > POOL_ACTIVE_WITHDRAWALS_CEILING) {
    err(ctx, SvcStakeError.InvalidPoolParams, `maxActiveWithdrawals must be 1..${POOL_ACTIVE_WITHDRAWALS_CEILING}`)
  }
  a.pool.account.data = encodeStakePool({ ...pool, ...params })
}

const distributeReward = (ctx: InvokeContext, owner: Address, amountRaw: bigint): void => {
  ctx.log("Instruction: DistributeReward")
  ctx.consumeUnits(5_000)
  const a = named(ctx, DistributeRewardAccounts)
  if (a.systemProgram.address !== SYSTEM_PROGRAM_ID) fail("IncorrectProgramId")
  expectTokenProgram(a.tokenProgram)
  const pool = loadPool(ctx, a.pool)
  if (a.authority.address !== pool.authority) err(ctx, SvcStakeError.NotAuthority, "only the pool authority distributes rewards")
  requirePositive(ctx, amountRaw)
  const rewardId = pool.nextRewardId
  const rewardBump = expectPda(ctx, a.reward, StakeSeeds.reward(rewardId), "reward")
  const vaultBump = expectPda(ctx, a.rewardVault, StakeSeeds.rewardVault(a.mint.address), "rewardVault")
  if (a.rewardVault.account.data.length === 0) {
    createTokenAccount(ctx, a.authority, a.rewardVault, a.mint, a.pool.address, [[...StakeSeeds.rewardVault(a.mint.address), Uint8Array.of(vaultBump)]])
  }
  tokenTransfer(ctx, a.authorityTokenAccount, a.rewardVault, a.authority, amountRaw)
  createAccount(ctx, a.authority, a.reward, REWARD_ACCOUNT_SIZE, SVC_STAKE_PROGRAM_ID, [[...StakeSeeds.reward(rewardId), Uint8Array.of(rewardBump)]])
  a.reward.account.data = encodeReward({
    bump: rewardBump,
    rewardId,
    owner,
    mint: a.mint.address,
    amountRaw,
    distributedAtSec: ctx.unixTimestampSec,
    claimedAtSec: 0n
  })
  a.pool.account.data = encodeStakePool({ ...pool, nextRewardId: add64(ctx, rewardId, 1n) })
}

const claimReward = (ctx: InvokeContext): void => {
  ctx.log("Instruction: ClaimReward")
  ctx.consumeUnits(3_000)
  const a = named(ctx, ClaimRewardAccounts)
  expectTokenProgram(a.tokenProgram)
  const pool = loadPool(ctx, a.pool)
  const reward = decodeReward(owned(ctx, a.reward, "reward")) ?? err(ctx, SvcStakeError.InvalidAccount, "reward account expected")
  if (reward.claimedAtSec !== 0n) err(ctx, SvcStakeError.RewardAlreadyClaimed, `reward ${reward.rewardId} was already claimed`)
  expectPda(ctx, a.rewardVault, StakeSeeds.rewardVault(reward.mint), "rewardVault")
  const dest = a.ownerTokenAccount.account.owner === TOKEN_PROGRAM_ID ? decodeSplTokenAccount(a.ownerTokenAccount.account.data) : undefined
  if (dest === undefined || dest.owner !== reward.owner || dest.mint !== reward.mint) {
    err(ctx, SvcStakeError.InvalidAccount, "ownerTokenAccount must be the reward owner's token account of its mint")
  }
  tokenTransfer(ctx, a.rewardVault, a.ownerTokenAccount, a.pool, reward.amountRaw, poolSigner(pool))
  a.reward.account.data = encodeReward({ ...reward, claimedAtSec: ctx.unixTimestampSec === 0n ? 1n : ctx.unixTimestampSec })
}

export const SvcStakeProgram: Program = {
  programId: SVC_STAKE_PROGRAM_ID,
  name: "svc-stake",
  baseComputeUnits: 5_000,
  process(ctx) {
    const ix = decodeSvcStakeInstruction(ctx.data)
    if (ix === undefined) return err(ctx, SvcStakeError.InvalidInstruction, "malformed svc-stake instruction")
    switch (ix.kind) {
      case "stake":
        return stake(ctx, ix.amountRaw)
      case "unstake":
        return unstake(ctx, ix.amountRaw)
      case "finish":
        return finish(ctx)
      case "configure":
        return configure(ctx, ix)
      case "distribute_reward":
        return distributeReward(ctx, ix.owner, ix.amountRaw)
      case "claim_reward":
        return claimReward(ctx)
    }
  }
}
