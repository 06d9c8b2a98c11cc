/**
 * svc-stake on the localnet ledger, through real signed transactions.
 *
 *   stake ──▶ receipt held ──unstake──▶ withdrawal active ──(clock ≥ endTime) finish──▶ finished
 *                                          │ finish before the wait → WithdrawalLocked
 *                                          │ finish by another wallet → NotWithdrawalOwner
 *                                          │ more than maxActiveWithdrawals → TooManyWithdrawals
 *   reward: distribute_reward ──▶ unclaimed ──claim_reward──▶ claimed (claim again → RewardAlreadyClaimed)
 *   pool paused: stake, unstake, finish → PoolPaused; configure by anyone but the authority → NotAuthority
 *
 * Transitions and the tests that cover them:
 * - stake: "stake moves platform tokens into the vault and mints the receipt one for one"
 * - unstake → active: "unstake burns the receipt and opens a withdrawal with the pool's wait"
 * - active → finished: "finish pays after the wait, never before, once, and only the owner"
 * - active bound and list eviction: "at most maxActiveWithdrawals; the list keeps the newest 16"
 * - paused / authority: "a paused pool refuses every staking write; only the authority configures"
 * - reward unclaimed → claimed: "a reward pays its owner once, whoever sends the claim"
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import {
  claimRewardInstructions,
  finishInstructions,
  getConfigureStakePoolInstruction,
  getUnstakeInstruction,
  stakeInstructions,
  stakeVaultAddress
} from "../client/StakeInstructions.js"
import { decodeSplMint } from "../program/accounts/SplMint.js"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../program/ProgramIds.js"
import { decodeReward, decodeStaker, decodeWithdrawal, STAKER_LISTED_WITHDRAWALS_MAX } from "../program/staking/Accounts.js"
import { SvcStakeError } from "../program/staking/Errors.js"
import { findRewardSync, findStakerSync } from "../program/staking/Instructions.js"
import { DEFAULT_STAKE_POOL_PARAMS, Ledger, type SubmitResult } from "./Ledger.js"
import { ataOf, expectOk, send, tokenBalance } from "./testkit.js"
import { customErrorCode } from "./TransactionError.js"

const UNIT = 1_000_000n

interface World {
  readonly ledger: Ledger
  readonly owner: KeyPairSigner
  readonly other: KeyPairSigner
  /** Moves the ledger's clock by `sec` and closes a slot, so programs see the new time. */
  readonly passSeconds: (sec: number) => void
}

const world = async (): Promise<World> => {
  let nowMs = 1_800_000_000_000
  const ledger = new Ledger({ clockMs: () => nowMs, stakePool: { withdrawalTimelockSeconds: 60n } })
  const owner = await devSigner(0)
  const other = await devSigner(1)
  expectOk(ledger, ledger.mintTestTokens(SVC_MINT_ADDRESS, owner.address, 1_000n * UNIT))
  ledger.advanceSlot()
  return {
    ledger,
    owner,
    other,
    passSeconds: (sec) => {
      nowMs += sec * 1000
      ledger.advanceSlot()
    }
  }
}

const codeOf = (r: SubmitResult): number | undefined => (r._tag === "Landed" ? customErrorCode(r.err) : undefined)
const receiptSupply = (ledger: Ledger) => decodeSplMint(ledger.getAccount(STAKED_SVC_MINT_ADDRESS)!.data)!.supply
const staker = (ledger: Ledger, owner: Address) => decodeStaker(ledger.getAccount(findStakerSync(owner).address)!.data)!
const withdrawal = (ledger: Ledger, a: Address) => decodeWithdrawal(ledger.getAccount(a)!.data)!

const stake = async (w: World, who: KeyPairSigner, amountRaw: bigint) => send(w.ledger, who, stakeInstructions({ owner: who, amountRaw }))
const unstake = async (w: World, who: KeyPairSigner, amountRaw: bigint) => {
  const wd = await generateKeyPairSigner()
  return { wd: wd.address, result: await send(w.ledger, who, [getUnstakeInstruction({ owner: who, withdrawal: wd, amountRaw })]) }
}
const finish = async (w: World, who: KeyPairSigner, wd: Address) => send(w.ledger, who, finishInstructions({ owner: who, withdrawal: wd }))

describe("svc-stake", () => {
  it("stake moves platform tokens into the vault and mints the receipt one for one", async () => {
    const w = await world()
    expectOk(w.ledger, await stake(w, w.owner, 600n * UNIT))
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, SVC_MINT_ADDRESS))).toBe(400n * UNIT)
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, STAKED_SVC_MINT_ADDRESS))).toBe(600n * UNIT)
    expect(tokenBalance(w.ledger, stakeVaultAddress())).toBe(600n * UNIT)
    expect(receiptSupply(w.ledger)).toBe(600n * UNIT)
    expect(w.ledger.stakePool()).toMatchObject({ totalStakedRaw: 600n * UNIT, pendingWithdrawalRaw: 0n })
    // Negative space: more than held (the token program refuses), zero, and the faucet's receipt
    // path keeps the vault whole.
    const over = await stake(w, w.owner, 401n * UNIT)
    expect(over._tag === "Landed" && over.err !== null).toBe(true)
    expect(receiptSupply(w.ledger)).toBe(600n * UNIT)
    expect(codeOf(await stake(w, w.owner, 0n))).toBe(SvcStakeError.ZeroAmount)
    expectOk(w.ledger, w.ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, w.other.address, 5n * UNIT))
    expect(tokenBalance(w.ledger, ataOf(w.other.address, STAKED_SVC_MINT_ADDRESS))).toBe(5n * UNIT)
    expect(tokenBalance(w.ledger, stakeVaultAddress())).toBe(605n * UNIT)
    expect(receiptSupply(w.ledger)).toBe(605n * UNIT)
  })

  it("unstake burns the receipt and opens a withdrawal with the pool's wait", async () => {
    const w = await world()
    expectOk(w.ledger, await stake(w, w.owner, 100n * UNIT))
    const { wd, result } = await unstake(w, w.owner, 30n * UNIT)
    expectOk(w.ledger, result)
    const now = w.ledger.clockUnixSec
    expect(withdrawal(w.ledger, wd)).toEqual({ owner: w.owner.address, amountRaw: 30n * UNIT, startTimeSec: now, endTimeSec: now + 60n, claimTimeSec: 0n })
    expect(staker(w.ledger, w.owner.address)).toMatchObject({ activeWithdrawals: 1, withdrawals: [{ address: wd, finished: false }] })
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, STAKED_SVC_MINT_ADDRESS))).toBe(70n * UNIT)
    expect(receiptSupply(w.ledger)).toBe(70n * UNIT)
    expect(w.ledger.stakePool()).toMatchObject({ totalStakedRaw: 100n * UNIT, pendingWithdrawalRaw: 30n * UNIT })
    // More receipt than held fails in the burn; the withdrawal must co-sign (no signature: refused).
    const over = await unstake(w, w.owner, 71n * UNIT)
    expect(over.result._tag === "Landed" && over.result.err !== null).toBe(true)
    expect(w.ledger.getAccount(over.wd)).toBeUndefined()
  })

  it("finish pays after the wait, never before, once, and only the owner", async () => {
    const w = await world()
    expectOk(w.ledger, await stake(w, w.owner, 100n * UNIT))
    const { wd, result } = await unstake(w, w.owner, 40n * UNIT)
    expectOk(w.ledger, result)
    w.passSeconds(59)
    expect(codeOf(await finish(w, w.owner, wd))).toBe(SvcStakeError.WithdrawalLocked)
    expectOk(w.ledger, w.ledger.mintTestTokens(SVC_MINT_ADDRESS, w.other.address, UNIT))
    w.passSeconds(1)
    expectOk(w.ledger, await stake(w, w.other, UNIT))
    expectOk(w.ledger, await unstake(w, w.other, UNIT).then((u) => u.result))
    expect(codeOf(await finish(w, w.other, wd))).toBe(SvcStakeError.NotWithdrawalOwner)
    const before = tokenBalance(w.ledger, ataOf(w.owner.address, SVC_MINT_ADDRESS))
    expectOk(w.ledger, await finish(w, w.owner, wd))
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, SVC_MINT_ADDRESS))).toBe(before + 40n * UNIT)
    expect(withdrawal(w.ledger, wd).claimTimeSec).toBe(w.ledger.clockUnixSec)
    expect(staker(w.ledger, w.owner.address)).toMatchObject({ activeWithdrawals: 0, withdrawals: [{ address: wd, finished: true }] })
    expect(w.ledger.stakePool()).toMatchObject({ totalStakedRaw: 61n * UNIT, pendingWithdrawalRaw: 1n * UNIT })
    w.ledger.advanceSlot()
    expect(codeOf(await finish(w, w.owner, wd))).toBe(SvcStakeError.WithdrawalFinished)
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, SVC_MINT_ADDRESS))).toBe(before + 40n * UNIT)
  })

  it("at most maxActiveWithdrawals; the list keeps the newest 16", async () => {
    const w = await world()
    expectOk(w.ledger, await stake(w, w.owner, 100n * UNIT))
    const opened: Address[] = []
    for (let i = 0; i < DEFAULT_STAKE_POOL_PARAMS.maxActiveWithdrawals; i++) {
      const u = await unstake(w, w.owner, UNIT)
      expectOk(w.ledger, u.result)
      opened.push(u.wd)
    }
    expect(codeOf((await unstake(w, w.owner, UNIT)).result)).toBe(SvcStakeError.TooManyWithdrawals)
    w.passSeconds(60)
    for (const wd of opened) expectOk(w.ledger, await finish(w, w.owner, wd))
    // 20 more, each finished: the list holds the newest 16, oldest finished evicted first.
    const later: Address[] = []
    for (let i = 0; i < 20; i++) {
      const u = await unstake(w, w.owner, UNIT)
      expectOk(w.ledger, u.result)
      later.push(u.wd)
      if (i < 19) {
        w.passSeconds(60)
        expectOk(w.ledger, await finish(w, w.owner, u.wd))
      }
    }
    const s = staker(w.ledger, w.owner.address)
    expect(s.withdrawals.map((e) => e.address)).toEqual(later.slice(-STAKER_LISTED_WITHDRAWALS_MAX))
    expect(s.activeWithdrawals).toBe(1)
    expect(s.withdrawals.at(-1)).toEqual({ address: later.at(-1), finished: false })
  })

  it("a paused pool refuses every staking write; only the authority configures", async () => {
    const w = await world()
    expectOk(w.ledger, await stake(w, w.owner, 10n * UNIT))
    const u = await unstake(w, w.owner, UNIT)
    expectOk(w.ledger, u.result)
    w.passSeconds(60)
    const params = { ...DEFAULT_STAKE_POOL_PARAMS, paused: true }
    expect(codeOf(await send(w.ledger, w.owner, [getConfigureStakePoolInstruction({ authority: w.owner, ...params })]))).toBe(SvcStakeError.NotAuthority)
    expectOk(w.ledger, w.ledger.configureStakePool(params))
    expect(w.ledger.stakePool()?.paused).toBe(true)
    expect(codeOf(await stake(w, w.owner, UNIT))).toBe(SvcStakeError.PoolPaused)
    expect(codeOf((await unstake(w, w.owner, UNIT)).result)).toBe(SvcStakeError.PoolPaused)
    expect(codeOf(await finish(w, w.owner, u.wd))).toBe(SvcStakeError.PoolPaused)
    expect(codeOf(w.ledger.configureStakePool({ ...params, maxActiveWithdrawals: 9 }))).toBe(SvcStakeError.InvalidPoolParams)
    expectOk(w.ledger, w.ledger.configureStakePool({ ...params, paused: false, withdrawalTimelockSeconds: 5n }))
    w.ledger.advanceSlot() // a new blockhash: the same finish was refused above
    expectOk(w.ledger, await finish(w, w.owner, u.wd))
    expect(w.ledger.stakePool()).toMatchObject({ paused: false, withdrawalTimelockSeconds: 5n })
  })

  it("a reward pays its owner once, whoever sends the claim", async () => {
    const w = await world()
    const first = w.ledger.distributeStakingReward(w.owner.address, USDC_MINT_ADDRESS, 25n * UNIT)
    expectOk(w.ledger, first)
    const second = w.ledger.distributeStakingReward(w.other.address, USDC_MINT_ADDRESS, 7n * UNIT)
    expectOk(w.ledger, second)
    expect([first.rewardId, second.rewardId]).toEqual([0n, 1n])
    const reward = decodeReward(w.ledger.getAccount(findRewardSync(0n).address)!.data)!
    expect(reward).toMatchObject({ rewardId: 0n, owner: w.owner.address, mint: USDC_MINT_ADDRESS, amountRaw: 25n * UNIT, claimedAtSec: 0n })
    // A claim naming another token account than the owner's is refused; the payer is anyone.
    const payer = w.other
    const claim = (owner: Address, rewardId: bigint) => claimRewardInstructions({ payer, rewardId, owner, mint: USDC_MINT_ADDRESS })
    const wrong = claim(w.other.address, 0n)
    expect(codeOf(await send(w.ledger, payer, wrong))).toBe(SvcStakeError.InvalidAccount)
    expectOk(w.ledger, await send(w.ledger, payer, claim(w.owner.address, 0n)))
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, USDC_MINT_ADDRESS))).toBe(25n * UNIT)
    w.ledger.advanceSlot()
    expect(codeOf(await send(w.ledger, payer, claim(w.owner.address, 0n)))).toBe(SvcStakeError.RewardAlreadyClaimed)
    expect(tokenBalance(w.ledger, ataOf(w.owner.address, USDC_MINT_ADDRESS))).toBe(25n * UNIT)
    // The other reward is untouched and still in the vault; tokens sent to the vault are never paid.
    expect(decodeReward(w.ledger.getAccount(findRewardSync(1n).address)!.data)!.claimedAtSec).toBe(0n)
    expectOk(w.ledger, await send(w.ledger, payer, claim(w.other.address, 1n)))
    expect(tokenBalance(w.ledger, ataOf(w.other.address, USDC_MINT_ADDRESS))).toBe(7n * UNIT)
  })
})
