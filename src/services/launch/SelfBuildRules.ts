/**
 * The self-signed launch's repeat rules, pure (launch spec 3.3 and 3.4): what a repeat Solana
 * `/launch/self/build` answers given the earlier build and what the chain shows, and what a Hood
 * launch must do after `createCurve` landed but a later step failed. The runtime (the self-signed
 * launch service) reads the chain and the stored build, calls these, and acts on the answer;
 * `SelfBuildRules.test.ts` names a test for every row of both tables.
 *
 * Invariants:
 * - Total and deterministic: every input has exactly one answer; no clock (time arrives as `nowMs`).
 * - "Proven dead" needs all three: no account at the mint, read from a node that is caught up, and
 *   the chain past the transaction's last valid block height. Anything less is not proof.
 * - A TEE wallet never gets a rebuild or the same transaction while a signed attempt can still
 *   land (3.3's last paragraph): it is told the attempt is in flight.
 */

/** The blockhash lifetime the spec states ("roughly 60 to 90 s"): the bound for a build whose transaction was not stored. */
export const BLOCKHASH_LIFETIME_MS_MAX = 90_000

export interface EarlierBuild {
  /** The build's transaction was stored (with its last valid block height). */
  readonly stored: boolean
  /** The ledger row was failed by the 30-minute sweep. */
  readonly swept: boolean
  readonly lastValidBlockHeight: bigint | null
  readonly builtAtMs: number
  readonly mint: string
  /** `tee`: the payer is a TEE wallet; `linked`: an imported linked wallet. */
  readonly payer: "linked" | "tee"
  /** The single-use sign claim was used (the relay signed this build). */
  readonly signed: boolean
}

export type ChainView =
  | { readonly _tag: "Unreadable" }
  | {
      readonly _tag: "Read"
      /** An account exists at the build's mint. */
      readonly mintAccountExists: boolean
      readonly blockHeight: bigint
      /** The node answering is caught up with the cluster (its reads prove absence). */
      readonly caughtUp: boolean
    }

export type RepeatBuild =
  /** 409 `IDEMPOTENCY_CONFLICT`, not retryable, `reason` `prior_attempt_on_chain`, `mint`: confirm it. */
  | { readonly _tag: "OnChain"; readonly mint: string }
  /** 200 with the same transaction, mint, pool, `expiresAt`, fee; nothing written. */
  | { readonly _tag: "SameTransaction" }
  /** 409 `IDEMPOTENCY_CONFLICT`, retryable, `reason` `prior_attempt_in_flight`, `retryAfter` (epoch ms). */
  | { readonly _tag: "InFlight"; readonly retryAfterMs: number }
  /** 200 with a NEW transaction, mint and `expiresAt` (a fresh attempt). */
  | { readonly _tag: "Rebuild" }
  /** `LAUNCH_FAILED`, retryable, `reason` `chain_read_failed`. */
  | { readonly _tag: "ChainReadFailed" }

/**
 * A repeat Solana self-signed build under the same id and body (3.3). `slotMs` turns the blocks
 * left before the blockhash expires into `retryAfter`.
 */
export const repeatBuild = (earlier: EarlierBuild, chain: ChainView, nowMs: number, slotMs: number): RepeatBuild => {
  if (chain._tag === "Unreadable") return { _tag: "ChainReadFailed" }
  if (chain.mintAccountExists) return { _tag: "OnChain", mint: earlier.mint }
  const lvbh = earlier.stored ? earlier.lastValidBlockHeight : null
  if (lvbh === null) {
    // Built before its transaction was stored: it may be out there until the longest blockhash life.
    const until = earlier.builtAtMs + BLOCKHASH_LIFETIME_MS_MAX
    if (nowMs < until || !chain.caughtUp) return { _tag: "InFlight", retryAfterMs: Math.max(until, nowMs + slotMs) }
    return { _tag: "Rebuild" }
  }
  const canStillLand = chain.blockHeight <= lvbh
  if (canStillLand) {
    const retryAfterMs = nowMs + Number(lvbh - chain.blockHeight + 1n) * slotMs
    if (earlier.swept) return { _tag: "InFlight", retryAfterMs }
    if (earlier.payer === "tee" && earlier.signed) return { _tag: "InFlight", retryAfterMs }
    return { _tag: "SameTransaction" }
  }
  // Past its last valid height: dead only if a caught-up node shows no account at the mint.
  if (!chain.caughtUp) return { _tag: "InFlight", retryAfterMs: nowMs + slotMs }
  return { _tag: "Rebuild" }
}

/** 3.4: the Hood step that failed after `createCurve` was mined, and what is known of the fee. */
export type HoodFailedStep = "confirm" | "fee_transfer"
export type HoodFeeKnown = "landed" | "not_required" | "unknown" | "not_broadcast" | "reverted"

export type HoodRecovery =
  /** Read the job; confirm again with the same hashes if it is not confirmed. */
  | { readonly _tag: "ConfirmAgain" }
  /** Do not pay again: find the fee hash (payer history), then confirm with it. */
  | { readonly _tag: "FindFeeThenConfirm" }
  /** Pay only the missing fee with the original build's fee leg, then confirm with both hashes. */
  | { readonly _tag: "PayMissingFeeThenConfirm" }

/** 3.4 as a function. Never "build again": the curve exists. */
export const hoodRecovery = (failed: HoodFailedStep, fee: HoodFeeKnown): HoodRecovery => {
  if (failed === "confirm" && (fee === "landed" || fee === "not_required")) return { _tag: "ConfirmAgain" }
  if (fee === "unknown") return { _tag: "FindFeeThenConfirm" }
  if (fee === "not_broadcast" || fee === "reverted") return { _tag: "PayMissingFeeThenConfirm" }
  // A failed fee transfer whose fee landed after all, or a confirm failure with nothing owed.
  return { _tag: "ConfirmAgain" }
}

/**
 * 3.4's confirm rule: a build with a nonzero fee confirms only with a fee hash that verifies
 * (`FEE_LEG_MISSING`, 402, records nothing, otherwise); a build without a fee needs none.
 */
export const feeLegSatisfied = (feeRaw: bigint, feeTxVerified: boolean | null): boolean => feeRaw === 0n || feeTxVerified === true
