/**
 * What the staking service answers (spec document 2, 4.2), as typed views: the routes write them
 * inside the envelope (`{success: true, ...view}`), in the member order written here. Money is raw
 * units as decimal strings; times as ISO strings or seconds, as the spec shows them.
 */
import type { StakeAction } from "./StakingChain.js"
import type { OperationRowState } from "./StakingStore.js"

/** A staking operation as it stands (`status` is its state). */
export type StakeOperationView = {
  readonly clientStakeId: string
  readonly wallet: string
  readonly payer: "main" | "linked"
  readonly action: StakeAction
  readonly amountRaw?: string
  readonly withdrawal?: string
  readonly signature: string | null
  readonly status: OperationRowState
  readonly replay: boolean
  readonly warnings: ReadonlyArray<string>
  /** A linked or TEE build (`status` built): the transaction to sign at the relay and its lifetime. */
  readonly transaction?: string | null
  readonly recentBlockhash?: string | null
  readonly builtAt?: string | null
  readonly lastValidBlockHeight?: string | null
  readonly claimId?: string | null
  readonly linkedWalletId?: string | null
}

/** A dry run's figures: every check a build makes, nothing recorded. */
export type StakeDryRunView = {
  readonly dryRun: true
  readonly wallet: string
  readonly payer: "main" | "linked"
  readonly action: StakeAction
  readonly amountRaw: string
  readonly feeLamports: string
  readonly rentLamports: string
  readonly reserveLamports: string
  readonly solRequiredLamports: string
  readonly solBalanceLamports: string
  readonly withdrawalTimelockSeconds: number
  readonly withdrawal?: string
} & { readonly [K in Exclude<keyof StakeOperationView, "wallet" | "payer" | "action" | "amountRaw" | "withdrawal">]?: undefined }

/** A build's answer: the dry run's figures or the operation (a reader tells them apart by `dryRun`). */
export type StakeBuildView = StakeDryRunView | StakeOperationView

export type WithdrawalPositionView = {
  readonly withdrawal: string
  readonly amountRaw: string
  readonly startTime: number
  readonly endTime: number
  readonly claimTime: number | null
  readonly claimable: boolean
}

export type RewardPositionView = {
  readonly rewardId: string
  readonly mint: string
  readonly symbol: string
  readonly name: string
  readonly amountRaw: string
  readonly distributedAt: string
  readonly claiming: boolean
}

export type WalletPositionView = {
  readonly payer: "main" | "linked"
  readonly address: string
  readonly linkedWalletId: string | null
  readonly label: string | null
  readonly tee: boolean
  readonly platformMint: string
  readonly stakedMint: string
  readonly decimals: number
  readonly amountRaw: string
  readonly cndlValueRaw: string
  readonly heldRaw: string
  readonly pendingWithdrawalRaw: string
  readonly activeWithdrawals: ReadonlyArray<WithdrawalPositionView>
  readonly finishedWithdrawals: ReadonlyArray<WithdrawalPositionView>
  readonly unclaimedRewards: ReadonlyArray<RewardPositionView>
  readonly eligibility: ReadonlyArray<string>
}

export type PositionsView = {
  readonly withdrawalTimelockSeconds: number
  readonly paused: boolean
  readonly maxActiveWithdrawals: number
  readonly wallets: Array<WalletPositionView>
}

/** A paid (or being-paid, answered once it landed) reward claim. */
export type RewardClaimView = {
  readonly rewardId: string
  readonly owner: string
  readonly mint: string
  readonly amountRaw: string
  readonly signature: string
}
