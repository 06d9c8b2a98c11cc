/**
 * The one spend gate every spending rail asks (spec document 2, 2.1 "Key spend limits" and 4.1
 * "Transaction-limit rules"; first document, endpoint rules 6 and 7 and the `SPEND_LIMIT_EXCEEDED`
 * and `KEY_LIMIT_REACHED` rows). Pure: no I/O, time a parameter. `SpendStore.ts` reads the key
 * (locked) and the window's usage, asks `decide`, and writes the hold in the same transaction.
 *
 * One attempt is one transaction of one rail (`main` embedded, `linked` imported, `tee`): caps are
 * strict per rail, never combined across rails or transactions (4.1). In order, first refusal wins:
 * 1. a sell is never refused (4.1: a token sell counts when it books); it takes no hold;
 * 2. the key's per-asset cap against `amountRaw` (amount plus fee) of this transaction, on every
 *    rail (rule 6: a linked build checks the key's spend limits before building):
 *    `spend_limit_exceeded`;
 * 3. the key's `txLimit` against the USD value added to what its window holds (bookings plus
 *    open holds): over it is `tx_limit_reached` with `resetsAt`, except a linked dev buy, metered
 *    but advisory (4.1), admitted with the refusal as `advisory`; with no price or no readable
 *    usage, service-controlled signing (`main`, `tee`) fails closed (`limit_unavailable`,
 *    retryable), an imported linked wallet is let through (4.1: its checks are advisory).
 * Every admitted buy takes a hold of its USD value until it books or is released.
 * Rules 2 and 3 are exported alone (`capRefusal`, `windowRefusal`) for the atomic launch's bundle
 * (`launch/atomic/SpendGate.ts`), which asks them per leg, per payer wallet and once over the bundle.
 */
import { checkSpendCap, checkTxLimit, type SpendAsset, SpendAssets, type SpendLimit, type TxLimit } from "../keys/KeyRules.js"
import { type SpendError, spendError } from "./SpendError.js"

/** Retry hint for a fail-closed limit check (`retryAfter`, seconds). */
export const LIMIT_UNAVAILABLE_RETRY_AFTER_S = 30

/** Who signs: the service (`main` embedded wallet, `tee`) or the agent's imported `linked` wallet. */
export type SpendRail = "main" | "linked" | "tee"
export const SpendRails: ReadonlyArray<SpendRail> = ["main", "linked", "tee"]
export type SpendSide = "buy" | "sell"
/** What spends: a trade on the trade rail, a launch's dev buy (headless, self-signed, TEE), or a transfer out of a wallet. */
export type SpendPurpose = "trade" | "dev_buy" | "transfer"

/** The key's limits as stored (read under the key's row lock). */
export interface SpendKey {
  readonly keyPrefix: string
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  readonly txLimit: TxLimit | null
}

/** One transaction a rail is about to build. */
export interface SpendAttempt {
  readonly rail: SpendRail
  readonly purpose: SpendPurpose
  readonly side: SpendSide
  /** The asset spent (a buy's quote asset; a sell's token is uncapped). */
  readonly asset: string
  /** Raw units spent, amount plus platform fee. */
  readonly amountRaw: bigint
  /** Its USD value in micro-dollars; null when no price is available. */
  readonly usdMicros: bigint | null
}

export type SpendDecision =
  | {
      readonly _tag: "Admitted"
      /** A buy reserves a hold of its USD value; a sell does not (it counts when it books). */
      readonly hold: boolean
      /** A linked dev buy over the txLimit: metered, not refused (4.1); the refusal it would have been. */
      readonly advisory: SpendError | null
    }
  | { readonly _tag: "Refused"; readonly error: SpendError }

const isSpendAsset = (asset: string): asset is SpendAsset => (SpendAssets as ReadonlyArray<string>).includes(asset)

export const limitUnavailable = (what: string): SpendError =>
  spendError("limit_unavailable", `This key's transaction limit cannot be checked now (${what}); nothing was built`, {
    retryable: true,
    details: { reason: "limit_unavailable", retryAfter: LIMIT_UNAVAILABLE_RETRY_AFTER_S }
  })

/** Rule 2: the key's per-asset cap against `amountRaw` (one transaction; a bundle asks per leg and per payer wallet). */
export const capRefusal = (key: SpendKey, asset: string, amountRaw: bigint): SpendError | undefined => {
  if (!isSpendAsset(asset)) return undefined
  const capped = checkSpendCap(key.spendLimits, key.keyPrefix, asset, amountRaw)
  return capped === undefined ? undefined : spendError("spend_limit_exceeded", capped.message, { retryable: false, details: capped.details ?? {} })
}

/** What rule 3 weighs: the spend's USD value against what the key's window holds. */
export interface WindowCheck {
  /** The asset spent (named when it has no price). */
  readonly asset: string
  /** The spend's USD value; null when no price is available. */
  readonly usdMicros: bigint | null
  /** Bookings plus open holds in the window; null when storage could not say. */
  readonly usedUsdMicros: bigint | null
  /** Service-controlled signing (`main`, `tee`): unknown figures fail closed; an imported linked wallet passes. */
  readonly serviceSigned: boolean
  readonly nowMs: number
}

/**
 * Rule 3: the key's `txLimit` against the spend added to its window: `tx_limit_reached` with
 * `resetsAt` when over, `limit_unavailable` when a figure is unknown and the signing is the
 * service's; undefined when it fits (or has no txLimit, or is an advisory rail's unknown).
 */
export const windowRefusal = (key: SpendKey, w: WindowCheck): SpendError | undefined => {
  if (key.txLimit === null) return undefined
  if (w.usdMicros === null || w.usedUsdMicros === null) {
    return w.serviceSigned ? limitUnavailable(w.usdMicros === null ? `no USD price for ${w.asset}` : "usage unreadable") : undefined
  }
  const over = checkTxLimit(key.txLimit, Number(w.usedUsdMicros), Number(w.usdMicros), w.nowMs)
  return over === undefined ? undefined : spendError("tx_limit_reached", over.message, { retryable: over.retryable ?? false, details: over.details ?? {} })
}

/**
 * The decision. `usedUsdMicros` is what the key's window already holds (bookings plus open
 * holds), null when storage could not say; it is read only when the key has a `txLimit`.
 */
export const decide = (key: SpendKey, attempt: SpendAttempt, usedUsdMicros: bigint | null, nowMs: number): SpendDecision => {
  if (attempt.side === "sell") return { _tag: "Admitted", hold: false, advisory: null }
  const capped = capRefusal(key, attempt.asset, attempt.amountRaw)
  if (capped !== undefined) return { _tag: "Refused", error: capped }
  const over = windowRefusal(key, { asset: attempt.asset, usdMicros: attempt.usdMicros, usedUsdMicros, serviceSigned: attempt.rail !== "linked", nowMs })
  if (over === undefined) return { _tag: "Admitted", hold: true, advisory: null }
  if (over.reason === "tx_limit_reached" && attempt.rail === "linked" && attempt.purpose === "dev_buy") return { _tag: "Admitted", hold: true, advisory: over }
  return { _tag: "Refused", error: over }
}

/** The default life of a hold before the sweep may release it (4.1: 30 minutes). */
export const HOLD_MS = 30 * 60_000
