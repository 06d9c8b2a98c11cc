/**
 * The atomic build's spend gating and the main payer's holds (launch spec 4 rule 7; document 2,
 * 2.1 and 4.1): pure rules, no I/O, time a parameter. The service reads the key, the window's
 * usage and open holds, and a USD price, then asks `gateBundle`; it reserves `holdsOf` before the
 * owner signs anything.
 *
 * Order, first refusal wins, so no failed check ever reaches the block engine:
 * 1. each leg alone: `amountRaw + feeRaw` against the key's per-asset cap (`SPEND_LIMIT_EXCEEDED`,
 *    field `firstBuys[i].amountRaw`);
 * 2. summed per distinct payer wallet across the bundle, against the same cap (field names the
 *    first leg of that wallet);
 * 3. the key's `txLimit` once, against the USD value of all buy legs (amount plus fee) added to
 *    what the window holds (bookings plus open holds): `KEY_LIMIT_REACHED`, whoever pays. With a
 *    main-payer leg, an unreadable window or price fails closed (`limit_unavailable`, retryable);
 *    with linked payers only (whose checks document 2, 4.1 calls advisory) an unreadable figure
 *    lets the build through.
 * Holds: one per main-payer leg, `amountRaw + feeRaw` and its USD value; `holdCounts` says whether
 * an open hold still weighs on the window (created in it; a `never` window always).
 */
import type { KeyError } from "../../keys/KeyError.js"
import { keyError } from "../../keys/KeyError.js"
import { checkSpendCap, checkTxLimit, type SpendAsset, type SpendLimit, type TxLimit, txWindowStart } from "../../keys/KeyRules.js"

/** Retry hint for a fail-closed limit check (`retryAfter`, seconds). */
export const LIMIT_UNAVAILABLE_RETRY_AFTER_S = 30

export interface GateLeg {
  /** Position in `firstBuys` (0-based). */
  readonly position: number
  readonly payerKind: "main" | "linked"
  /** The payer wallet's address: legs of one wallet are summed. */
  readonly wallet: string
  readonly amountRaw: bigint
  readonly feeRaw: bigint
}

export interface GateInput {
  readonly keyPrefix: string
  readonly asset: SpendAsset
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  readonly txLimit: TxLimit | null
  readonly legs: ReadonlyArray<GateLeg>
  /** Bookings plus open holds in the txLimit window; null when storage could not say. */
  readonly usedUsdMicros: number | null
  /** USD micro-dollars of a raw amount of the asset; null when no price is available. */
  readonly usdMicrosOf: (raw: bigint) => bigint | null
  readonly nowMs: number
}

export type GateRefusal = { readonly position: number; readonly field: string; readonly error: KeyError }

export type GateResult =
  | { readonly _tag: "Allowed"; readonly totalUsdMicros: bigint | null }
  | { readonly _tag: "Refused"; readonly refusal: GateRefusal }

const refuse = (position: number, error: KeyError): GateResult => ({
  _tag: "Refused",
  refusal: { position, field: `firstBuys[${position}].amountRaw`, error }
})

export const limitUnavailable = (what: string): KeyError =>
  keyError("tx_limit_reached", `This key's transaction limit cannot be checked now (${what}); nothing was built`, {
    retryable: true,
    details: { reason: "limit_unavailable", retryAfter: LIMIT_UNAVAILABLE_RETRY_AFTER_S }
  })

export const gateBundle = (i: GateInput): GateResult => {
  for (const leg of i.legs) {
    const e = checkSpendCap(i.spendLimits, i.keyPrefix, i.asset, leg.amountRaw + leg.feeRaw)
    if (e !== undefined) return refuse(leg.position, e)
  }
  const perWallet = new Map<string, { first: number; total: bigint }>()
  for (const leg of i.legs) {
    const w = perWallet.get(leg.wallet)
    perWallet.set(leg.wallet, { first: w?.first ?? leg.position, total: (w?.total ?? 0n) + leg.amountRaw + leg.feeRaw })
  }
  for (const w of perWallet.values()) {
    const e = checkSpendCap(i.spendLimits, i.keyPrefix, i.asset, w.total)
    if (e !== undefined) return refuse(w.first, e)
  }
  const totalRaw = i.legs.reduce((s, l) => s + l.amountRaw + l.feeRaw, 0n)
  const totalUsd = i.usdMicrosOf(totalRaw)
  if (i.txLimit === null) return { _tag: "Allowed", totalUsdMicros: totalUsd }
  const failClosed = i.legs.some((l) => l.payerKind === "main")
  if (totalUsd === null || i.usedUsdMicros === null) {
    if (!failClosed) return { _tag: "Allowed", totalUsdMicros: totalUsd }
    return refuse(0, limitUnavailable(totalUsd === null ? "no price for the quote asset" : "usage unreadable"))
  }
  const e = checkTxLimit(i.txLimit, i.usedUsdMicros, Number(totalUsd), i.nowMs)
  if (e !== undefined) return refuse(0, e)
  return { _tag: "Allowed", totalUsdMicros: totalUsd }
}

export interface Hold {
  readonly legIndex: number
  readonly wallet: string
  readonly amountRaw: bigint
  readonly usdMicros: bigint | null
}

/** The holds a build reserves before the owner signs: one per main-payer leg (leg index = position + 1). */
export const holdsOf = (legs: ReadonlyArray<GateLeg>, usdMicrosOf: (raw: bigint) => bigint | null): ReadonlyArray<Hold> =>
  legs
    .filter((l) => l.payerKind === "main")
    .map((l) => ({ legIndex: l.position + 1, wallet: l.wallet, amountRaw: l.amountRaw + l.feeRaw, usdMicros: usdMicrosOf(l.amountRaw + l.feeRaw) }))

/**
 * Whether an open hold created at `createdAtMs` still weighs on the key's window at `nowMs`: a
 * window reset clears its effect; a `never` window keeps it (until the owner raises the limit).
 */
export const holdCounts = (reset: TxLimit["reset"], createdAtMs: number, nowMs: number): boolean =>
  createdAtMs >= txWindowStart(reset, nowMs)
