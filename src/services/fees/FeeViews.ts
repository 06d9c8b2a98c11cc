/**
 * What the creator-fee service answers (spec document 2, 2.5 and 4.3), as typed views: the route
 * writes them in its envelope. Amounts are raw-unit decimal strings with their decimals.
 */
import type { CallStatus, ClaimOutcome } from "./FeeClaimOutcome.js"
import type { NotClaimableReason } from "./FeeError.js"

export interface FeeAmount {
  readonly symbol: string
  readonly mint: string
  readonly decimals: number
  readonly amountRaw: string
}

/** A token's fees as the chain would pay them now (2.5). */
export interface FeeEntry {
  readonly mint: string
  readonly chain: string
  readonly symbol: string
  readonly name: string
  readonly recipient: string
  readonly claimable: boolean
  readonly claimableAmounts: ReadonlyArray<FeeAmount>
  readonly reason?: NotClaimableReason
  /** Hood: the graduated curve's LP position. */
  readonly lpPosition?: { readonly tokenId: string; readonly positionManager: string }
}

/** A token whose fees could not be read now. */
export interface UnreadableFeeEntry {
  readonly mint: string
  readonly chain: string
  readonly unreadable: true
}

export interface FeeList {
  readonly tokens: ReadonlyArray<FeeEntry | UnreadableFeeEntry>
  readonly continueCursor: string | null
  readonly isDone: boolean
}

export interface ClaimedAmount extends FeeAmount {
  readonly txHash: string | null
}

/** Hood: one call of a claim (one per asset). */
export interface FeeCall {
  readonly operation: string
  readonly target: string
  readonly txHash: string | null
  readonly status: CallStatus
}

/** A claim, or its dry run (4.3). */
export interface FeeClaim {
  readonly mint: string
  readonly chain: "solana" | "hood"
  readonly dryRun: boolean
  readonly recipient: string
  readonly warnings: ReadonlyArray<string>
  /** Hood: assets below the dust floor, not claimed. */
  readonly dust?: ReadonlyArray<FeeAmount>
  /** Dry run: whether a claim would run now, and why not. */
  readonly claimable?: boolean
  readonly reason?: NotClaimableReason
  readonly claimed: ReadonlyArray<ClaimedAmount>
  readonly remaining: ReadonlyArray<FeeAmount>
  readonly calls?: ReadonlyArray<FeeCall>
  readonly outcome?: ClaimOutcome
}
