/**
 * The pure parts of an atomic build (launch spec 2.4, endpoint rules 7 to 9): the stored build's
 * text, the canonical body the idempotency hash covers, a spend-gate refusal as a `LaunchError`,
 * the build's answer, and the duplicate-leg check (two legs with the same bytes would carry one
 * signature). No I/O.
 */
import { randomBytes } from "node:crypto"
import type { KeyError } from "../../keys/KeyError.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import { canonicalBody } from "../request/CanonicalBody.js"
import type { AtomicLaunchBody, AtomicPayer } from "../request/DecodeLaunchRequest.js"
import type { AtomicStoredBuild, StoredLeg } from "./AtomicLaunch.js"
import { decodeStoredBuild, encodeStoredBuild } from "./BundleResume.js"
import type { BundleRow } from "./BundleStore.js"
import type { BundleIdentity } from "./BundleViews.js"
import type { GateResult } from "./SpendGate.js"

export const encodeBuild = (b: AtomicStoredBuild): string => JSON.stringify({ ...(JSON.parse(encodeStoredBuild(b)) as object), legs: b.legs })
export const decodeBuild = (text: string): AtomicStoredBuild => ({ ...decodeStoredBuild(text), legs: (JSON.parse(text) as { legs?: ReadonlyArray<StoredLeg> }).legs ?? [] })

/** A resolved payer: who signs (server for the embedded wallet) and the wallet the sign claim names. */
export interface ResolvedPayer {
  readonly kind: "main" | "linked" | "tee"
  readonly address: string
  readonly walletId: string | null
}

export const newBundleId = () => `bnd_${randomBytes(16).toString("hex")}`

export const payerText = (p: AtomicPayer): string => (p.type === "main" ? "main" : `linked:${p.linkedWalletId}`)

/** The canonical body of an atomic build: the launch, the creator and the first buys enter the idempotency hash. */
export const canonicalAtomicBody = (body: AtomicLaunchBody) => ({
  ...(canonicalBody(body.request) as Record<string, never>),
  payer: payerText(body.payer),
  firstBuys: body.firstBuys.map((b) => ({ payer: payerText(b.payer), amountRaw: b.amountRaw.toString() }))
})

/** A spend-gate refusal: the key's transaction limit (`KEY_LIMIT_REACHED`), else a spend limit naming its leg. */
export const keyRefusal = (r: Extract<GateResult, { _tag: "Refused" }>["refusal"]): LaunchError => {
  const e: KeyError = r.error
  return e.reason === "tx_limit_reached"
    ? launchFailure("key_limit_reached", e.message, { retryable: e.retryable ?? false, details: e.details ?? {} })
    : launchFailure("spend_limit_exceeded", e.message, { field: r.field, retryable: false, details: e.details ?? {} })
}

export const identity = (row: BundleRow<AtomicStoredBuild>): BundleIdentity => ({
  bundleId: row.bundleId,
  clientLaunchId: row.clientLaunchId,
  mint: row.mint,
  keyPrefix: row.keyPrefix
})

/** The build's answer (spec 2.4), which the route sends inside its envelope. */
export type AtomicBuildView = ReturnType<typeof buildBody>

/** The build's answer (spec 2.4): the bundle, its expiry and each leg (a client leg's bytes and sign claim; a buy's expected fill). */
export const buildBody = (row: BundleRow<AtomicStoredBuild>) => ({
  bundleId: row.bundleId,
  clientLaunchId: row.clientLaunchId,
  mint: row.mint,
  expiresAt: row.expiresAtMs,
  legs: row.build.legs.map((l) => {
    const buy = row.state.buys.find((b) => b.index === l.index)
    return {
      index: l.index,
      role: l.index === 0 ? "launch" : "buy",
      signer: l.signer,
      ...(buy !== undefined ? { expectedFill: { amountOutRaw: buy.expectedOutRaw.toString(), minAmountOutRaw: buy.minAmountOutRaw.toString() } } : {}),
      ...(l.signer === "client" ? { unsignedTxBase64: l.wireBase64, signClaim: l.signClaim } : {})
    }
  })
})

/** The first leg whose message repeats an earlier one's (`later`, and the earlier's index), or undefined. */
export const duplicateLeg = (messages: ReadonlyArray<string>): { readonly later: number; readonly earlier: number } | undefined => {
  for (let j = 1; j < messages.length; j++) {
    const i = messages.indexOf(messages[j]!)
    if (i < j) return { later: j, earlier: i }
  }
  return undefined
}

/** A duplicate leg refused, naming the first buy that repeats (the launch is leg 0). */
export const duplicateLegRefusal = (d: { readonly later: number; readonly earlier: number }): LaunchError =>
  launchFailure("validation_failed", `firstBuys[${d.later - 1}] builds the same transaction as ${d.earlier === 0 ? "the launch" : `firstBuys[${d.earlier - 1}]`}; change its payer or amount`, {
    field: `firstBuys[${d.later - 1}]`,
    retryable: false
  })
