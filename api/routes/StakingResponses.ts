/**
 * The staking routes' answers as schemas (spec document 2, 4.2), each the envelope
 * `{success: true, ...view}` over a `StakingViews.ts` view; the type checks below keep a schema
 * and its view the same shape (a member added to one and not the other fails to compile).
 */
import { Schema } from "effect"
import type {
  PositionsView,
  RewardClaimView,
  StakeDryRunView,
  StakeOperationView
} from "../../src/services/staking/StakingViews.js"
import { RawAmount, Success } from "../ResponseSchemas.js"

const Payer = Schema.Literal("main", "linked")
const Action = Schema.Literal("stake", "unstake", "finish")

const OperationView = Schema.Struct({
  clientStakeId: Schema.String,
  wallet: Schema.String,
  payer: Payer,
  action: Action,
  amountRaw: Schema.optionalWith(RawAmount, { exact: true }),
  withdrawal: Schema.optionalWith(Schema.String, { exact: true }),
  signature: Schema.NullOr(Schema.String),
  status: Schema.Literal("sending", "built", "submitted", "confirmed", "failed", "expired"),
  replay: Schema.Boolean,
  warnings: Schema.Array(Schema.String),
  transaction: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  recentBlockhash: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  builtAt: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  lastValidBlockHeight: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  claimId: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true }),
  linkedWalletId: Schema.optionalWith(Schema.NullOr(Schema.String), { exact: true })
})

const DryRunView = Schema.Struct({
  dryRun: Schema.Literal(true),
  wallet: Schema.String,
  payer: Payer,
  action: Action,
  amountRaw: RawAmount,
  feeLamports: RawAmount,
  rentLamports: RawAmount,
  reserveLamports: RawAmount,
  solRequiredLamports: RawAmount,
  solBalanceLamports: RawAmount,
  withdrawalTimelockSeconds: Schema.Int,
  withdrawal: Schema.optional(Schema.String)
})

const Withdrawal = Schema.Struct({
  withdrawal: Schema.String,
  amountRaw: RawAmount,
  startTime: Schema.Int,
  endTime: Schema.Int,
  claimTime: Schema.NullOr(Schema.Int),
  claimable: Schema.Boolean
})

const Reward = Schema.Struct({
  rewardId: Schema.String,
  mint: Schema.String,
  symbol: Schema.String,
  name: Schema.String,
  amountRaw: RawAmount,
  distributedAt: Schema.String,
  claiming: Schema.Boolean
})

const Positions = Schema.Struct({
  withdrawalTimelockSeconds: Schema.Int,
  paused: Schema.Boolean,
  maxActiveWithdrawals: Schema.Int,
  wallets: Schema.Array(
    Schema.Struct({
      payer: Payer,
      address: Schema.String,
      linkedWalletId: Schema.NullOr(Schema.String),
      label: Schema.NullOr(Schema.String),
      tee: Schema.Boolean,
      platformMint: Schema.String,
      stakedMint: Schema.String,
      decimals: Schema.Int,
      amountRaw: RawAmount,
      cndlValueRaw: RawAmount,
      heldRaw: RawAmount,
      pendingWithdrawalRaw: RawAmount,
      activeWithdrawals: Schema.Array(Withdrawal),
      finishedWithdrawals: Schema.Array(Withdrawal),
      unclaimedRewards: Schema.Array(Reward),
      eligibility: Schema.Array(Schema.String)
    })
  )
})

const RewardClaim = Schema.Struct({ rewardId: Schema.String, owner: Schema.String, mint: Schema.String, amountRaw: RawAmount, signature: Schema.String })

const enveloped = <F extends Schema.Struct.Fields>(s: Schema.Struct<F>, identifier: string) =>
  Schema.Struct({ success: Success, ...s.fields }).annotations({ identifier })

export const StakingPositions = enveloped(Positions, "StakingPositions")
export const StakeOperation = enveloped(OperationView, "StakeOperation")
export const StakeDryRun = enveloped(DryRunView, "StakeDryRun")
export const RewardClaimed = enveloped(RewardClaim, "RewardClaimed")

// Each schema describes exactly its view: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends ReadonlyArray<infer E> ? ReadonlyArray<Mutable<E>> : T[K] extends object ? Mutable<T[K]> : T[K] }
const same = <_ extends true>() => undefined
same<Same<Mutable<typeof Positions.Type>, Mutable<PositionsView>>>()
same<Same<Mutable<typeof OperationView.Type>, Mutable<StakeOperationView>>>()
same<Same<keyof typeof DryRunView.Type, Exclude<keyof StakeDryRunView, keyof StakeOperationView> | "wallet" | "payer" | "action" | "amountRaw" | "withdrawal">>()
same<Same<Mutable<typeof RewardClaim.Type>, Mutable<RewardClaimView>>>()
