/**
 * The atomic build's spend gating and the main payer's holds (launch spec 4 rule 7; document 2,
 * 2.1 and 4.1): pure, no I/O, time a parameter. The rules are the one spend gate's
 * (`src/services/spend/SpendGate.ts`: `capRefusal`, `windowRefusal`); this module only says how a
 * bundle of several buys asks them. The service reads the key, the window's usage (the spend
 * gate's `windowUsedUsdMicros`) and a USD price, then asks `gateBundle`; it reserves `holdsOf`
 * before the owner signs anything.
 *
 * Order, first refusal wins, so no failed check ever reaches the block engine:
 * 1. each leg alone: `amountRaw + feeRaw` against the key's per-asset cap (`SPEND_LIMIT_EXCEEDED`,
 *    field `firstBuys[i].amountRaw`);
 * 2. summed per distinct payer wallet across the bundle, against the same cap (field names the
 *    first leg of that wallet);
 * 3. the key's `txLimit` once, against the USD value of all buy legs (amount plus fee) added to
 *    what the window holds (bookings plus open holds): `KEY_LIMIT_REACHED`, whoever pays. With a
 *    main-payer leg (service signing), an unreadable window or price fails closed
 *    (`limit_unavailable`, retryable); with linked payers only (whose checks document 2, 4.1 calls
 *    advisory) an unreadable figure lets the build through.
 * Refusals keep the key's terms this rail has always answered (`KeyError`, mapped by
 * `AtomicRules.keyRefusal`): a window that cannot be checked is `tx_limit_reached` with
 * `details.reason` `limit_unavailable`.
 * Holds: one per main-payer leg, `amountRaw + feeRaw` and its USD value; `holdCounts` says whether
 * an open hold still weighs on the window (created in it; a `never` window always).
 */
import type { KeyError } from "../../keys/KeyError.js"
import { keyError } from "../../keys/KeyError.js"
import { type SpendAsset, type SpendLimit, type TxLimit, txWindowStart } from "../../keys/KeyRules.js"
import type { SpendError } from "../../spend/SpendError.js"
import { capRefusal, LIMIT_UNAVAILABLE_RETRY_AFTER_S, limitUnavailable as spendLimitUnavailable, type SpendKey, windowRefusal } from "../../spend/SpendGate.js"

export { LIMIT_UNAVAILABLE_RETRY_AFTER_S }

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

/** The one gate's refusal in the key's terms (`spend_limit_exceeded`, else `tx_limit_reached` with the same details). */
const asKeyError = (e: SpendError): KeyError =>
  keyError(e.reason === "spend_limit_exceeded" ? "spend_limit_exceeded" : "tx_limit_reached", e.message, {
    ...(e.retryable !== undefined ? { retryable: e.retryable } : {}),
    details: e.details ?? {}
  })

/** A txLimit that cannot be checked now (fail closed, retryable), in the key's terms; the transfer rail answers it too. */
export const limitUnavailable = (what: string): KeyError => asKeyError(spendLimitUnavailable(what))

export const gateBundle = (i: GateInput): GateResult => {
  const key: SpendKey = { keyPrefix: i.keyPrefix, spendLimits: i.spendLimits, txLimit: i.txLimit }
  for (const leg of i.legs) {
    const e = capRefusal(key, i.asset, leg.amountRaw + leg.feeRaw)
    if (e !== undefined) return refuse(leg.position, asKeyError(e))
  }
  const perWallet = new Map<string, { first: number; total: bigint }>()
  for (const leg of i.legs) {
    const w = perWallet.get(leg.wallet)
    perWallet.set(leg.wallet, { first: w?.first ?? leg.position, total: (w?.total ?? 0n) + leg.amountRaw + leg.feeRaw })
  }
  for (const w of perWallet.values()) {
    const e = capRefusal(key, i.asset, w.total)
    if (e !== undefined) return refuse(w.first, asKeyError(e))
  }
  const totalRaw = i.legs.reduce((s, l) => s + l.amountRaw + l.feeRaw, 0n)
  const totalUsd = i.usdMicrosOf(totalRaw)
  const over = windowRefusal(key, {
    asset: i.asset,
    usdMicros: totalUsd,
    usedUsdMicros: i.usedUsdMicros === null ? null : BigInt(i.usedUsdMicros),
    serviceSigned: i.legs.some((l) => l.payerKind === "main"),
    nowMs: i.nowMs
  })
  return over === undefined ? { _tag: "Allowed", totalUsdMicros: totalUsd } : refuse(0, asKeyError(over))
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
