/**
 * Every check a staking build makes before anything is signed or recorded (spec document 2, 3.3
 * and section 7's staking refusals): the pool not paused, the platform token or staked receipt
 * held, the pool's active-withdrawal limit, the withdrawal's own wait, and SOL for the fee, rent
 * and reserve. Its figures are the dry run's answer.
 */
import { Effect } from "effect"
import { operationFeeLamports, operationRentLamports, PAYER_RESERVE_LAMPORTS, type StakingChain, type WalletStake } from "../StakingChain.js"
import { stakingError } from "../StakingError.js"
import type { StakeBuildInput } from "../StakingInputs.js"
import type { StakeDryRunView } from "../StakingViews.js"

/** A dry run's figures (everything but who and what). */
export type Figures = Omit<StakeDryRunView, "dryRun" | "wallet" | "payer" | "action" | "withdrawal">

/** Every check a build makes (balances, the wait, the pool, SOL); the figures of a dry run. */
export const checkBuild = (chain: StakingChain, input: StakeBuildInput, w: WalletStake) =>
  Effect.gen(function* () {
    const pool = yield* chain.pool
    if (pool.paused) return yield* stakingError("pool_paused", "The staking pool is paused; nothing can be staked, unstaked or finished now")
    const amountRaw = input.amountRaw ?? 0n
    if (input.action === "stake" && w.platformRaw < amountRaw) {
      return yield* stakingError("insufficient_platform_token", `The wallet holds ${w.platformRaw} raw platform-token units, less than ${amountRaw}`, {
        details: { heldRaw: w.platformRaw.toString(), amountRaw: amountRaw.toString() }
      })
    }
    if (input.action === "unstake") {
      if (w.receiptRaw < amountRaw) {
        return yield* stakingError("insufficient_staked_receipt", `The wallet holds ${w.receiptRaw} raw staked-receipt units, less than ${amountRaw}`, {
          details: { stakedRaw: w.receiptRaw.toString(), amountRaw: amountRaw.toString() }
        })
      }
      if (w.activeWithdrawals >= pool.maxActiveWithdrawals) {
        return yield* stakingError("active_withdrawal_limit", `The wallet has ${w.activeWithdrawals} active withdrawals, the pool's maximum; finish one first`, {
          details: { maxActiveWithdrawals: pool.maxActiveWithdrawals }
        })
      }
    }
    let withdrawalAmount: bigint | undefined
    if (input.action === "finish") {
      const found = w.withdrawals.find((x) => x.withdrawal === input.withdrawal)
      if (found === undefined) return yield* stakingError("invalid_withdrawal", "No withdrawal of this wallet has that address")
      if (found.claimTimeSec !== 0n) return yield* stakingError("withdrawal_finished", "This withdrawal was already finished")
      const clock = yield* chain.clockSec
      if (clock < found.endTimeSec) {
        return yield* stakingError("wait_unfinished", `The withdrawal's wait ends at ${new Date(Number(found.endTimeSec) * 1000).toISOString()}`, {
          details: { endTime: Number(found.endTimeSec), waitSecondsLeft: Number(found.endTimeSec - clock) }
        })
      }
      withdrawalAmount = found.amountRaw
    }
    const feeLamports = operationFeeLamports(input.action)
    const rentLamports = operationRentLamports(input.action, w)
    const solRequiredLamports = feeLamports + rentLamports + PAYER_RESERVE_LAMPORTS
    if (w.lamports < solRequiredLamports) {
      return yield* stakingError("insufficient_sol", `The wallet holds ${w.lamports} lamports; the fee, rent and reserve need ${solRequiredLamports}`, {
        details: { solBalanceLamports: w.lamports.toString(), solRequiredLamports: solRequiredLamports.toString() }
      })
    }
    return {
      amountRaw: (withdrawalAmount ?? amountRaw).toString(),
      feeLamports: feeLamports.toString(),
      rentLamports: rentLamports.toString(),
      reserveLamports: PAYER_RESERVE_LAMPORTS.toString(),
      solRequiredLamports: solRequiredLamports.toString(),
      solBalanceLamports: w.lamports.toString(),
      withdrawalTimelockSeconds: Number(pool.withdrawalTimelockSeconds)
    } satisfies Figures
  })
