/**
 * The pure decisions of a Hood self-signed launch (launch spec 3.2, 3.4, endpoint rules 4 and 5):
 * the factory's `createCurve` input, the TEE dev buy on a curve not yet created, and what a mined
 * fee leg and a reported dev buy must show to count. No I/O: `HoodSelfConfirm` reads the chain and
 * asks these.
 */
import { type Address, BaseError, getAddress, type Hex } from "viem"
import { devBuyPlan, quoteTokenOf } from "../../../chain/hood/launch/HeadlessCalls.js"
import { initialState, tokenReserveRaw } from "../../../domain/CurveMath.js"
import { findEconomics } from "../../../domain/Economics.js"
import type { SpendError } from "../../spend/SpendError.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"

/** The factory's metadata URI bound (bytes). */
export const FACTORY_URI_MAX_BYTES = 512

/** How long a confirm carrying a signed leg waits for its receipt before answering the operation as it stands. */
export const OPERATION_WAIT_MS = 30_000

/** The gas limit of a TEE operation's dev-buy leg, built before its curve exists (a curve buy uses well under it). */
export const DEV_BUY_GAS_LIMIT = 500_000n

/** `retryAfter` of a TEE repeat build refused while its signed attempt can still land (an EVM transaction has no expiry to wait for). */
export const TEE_RETRY_AFTER_MS = 60_000

/** The factory's `createCurve` input for a request, its hosted metadata URI and the attempt's salt. */
export const createInput = (body: SelfLaunchBody, metadataUri: string, salt: Hex, usdg: Address) => ({
  name: body.request.name,
  symbol: body.request.symbol,
  uri: metadataUri,
  quoteToken: quoteTokenOf(body.request.quoteAsset as "eth" | "usdg", usdg),
  virtualQuoteRaw: body.request.curve.virtualQuoteRaw,
  thresholdRaw: body.request.curve.thresholdRaw,
  stakerAllocationBps: Number(body.request.stakerAllocationBps),
  dexVersion: body.request.dexVersion!,
  salt
})

/** The ETH dev buy on a curve not yet created: CurveMath's fill on the virgin curve, less 100 bps (the headless dev buy's slippage). */
export const devBuyOnVirginCurve = (body: SelfLaunchBody, curve: Address, curveFeeBps: number) => {
  const economics = findEconomics("hood", body.request.quoteAsset)!
  const params = {
    virtualQuoteRaw: body.request.curve.virtualQuoteRaw,
    thresholdRaw: body.request.curve.thresholdRaw,
    tokenReserveRaw: tokenReserveRaw(economics.tokenSupplyRaw, body.request.stakerAllocationBps),
    feeBps: BigInt(curveFeeBps),
    crossingModel: "capped-refund" as const
  }
  return devBuyPlan(curve, params, initialState(params), body.request.buyAmountRaw, 100n)
}

/** A transaction as the chain shows it (addresses checksummed). */
export interface SeenTransaction {
  readonly from: Address
  readonly to: Address | null
  readonly value: bigint
  readonly input: Hex
  readonly nonce: number
}

/** The fee leg verifies: mined successfully, from the payer, to the treasury, exactly the fee. */
export const feeLegVerifies = (
  fee: { readonly treasury: string; readonly feeRaw: string },
  payer: Address,
  receipt: { readonly status: "success" | "reverted" } | undefined,
  tx: SeenTransaction | undefined
): boolean =>
  receipt !== undefined && receipt.status === "success" && tx !== undefined && tx.from === payer && tx.to === getAddress(fee.treasury) && tx.value === BigInt(fee.feeRaw)

/** Endpoint rule 5: a reported dev buy is bound only when it went to the curve with exactly `buyAmount`. */
export const devBuyMatches = (tx: SeenTransaction | undefined, curve: Address, buyAmountRaw: bigint): boolean =>
  tx !== undefined && tx.to === curve && tx.value === buyAmountRaw

/** A bound dev buy's answer by its receipt: landed (its signature), else pending or reverted (its `pendingSignature`). */
export const devBuyOutcome = (hash: string, receipt: { readonly status: "success" | "reverted" } | undefined) => {
  const outcome = receipt === undefined ? "pending" : receipt.status === "success" ? "landed" : "reverted"
  return { ...(outcome === "landed" ? { signature: hash } : { pendingSignature: hash }), outcome }
}

/**
 * A TEE operation's dev-buy hold once its legs settled (the record; rule 4, document 2 4.1), from
 * the legs' own statuses, never a fresh read: the buy mined → `book` (buy and fee); the buy
 * reverted after its fee leg mined → `book_fee` (the fee moved, the buy did not); the buy reverted
 * with no fee leg → `release`; a buy not settled → `keep`. No dev-buy leg → `none`.
 */
export type SettledHold = "book" | "book_fee" | "release" | "keep" | "none"

export const settledHoldOf = (legs: ReadonlyArray<{ readonly kind: string; readonly status: string }>): SettledHold => {
  const buy = legs.find((l) => l.kind === "devBuy")
  if (buy === undefined) return "none"
  if (buy.status === "mined") return "book"
  if (buy.status !== "reverted") return "keep"
  return legs.some((l) => l.kind === "feeTransfer" && l.status === "mined") ? "book_fee" : "release"
}

/**
 * How deep under the node's head the payer's nonce is read before a signed leg with no receipt is
 * taken for one that can never land: its nonce used at `head - NEVER_LANDS_DEPTH_BLOCKS` (so a
 * transaction of ours at that nonce was mined at least this many blocks ago) and its receipt still
 * absent when read again after. A receipt read answered by a node further behind than this is
 * the case left open (docs/decisions.md "A Hood TEE leg that can never land, on evidence").
 */
export const NEVER_LANDS_DEPTH_BLOCKS = 2n

/** The block the payer's nonce is read at: `NEVER_LANDS_DEPTH_BLOCKS` under the head (never below 0). */
export const nonceBlockOf = (head: bigint): bigint => (head > NEVER_LANDS_DEPTH_BLOCKS ? head - NEVER_LANDS_DEPTH_BLOCKS : 0n)

/**
 * A signed leg as the chain shows it (`HoodSelfChain.legOnChain`, for the operation's sent legs
 * and a dead or superseded attempt's signed claims alike): its receipt (`success`, `reverted`);
 * else `used` only on positive evidence: the payer's nonce passed the leg's at the block
 * `nonceBlockOf(head)` AND the receipt, read again after that, still absent; else `open` (it can
 * still land, or it landed and this node does not show it yet: no verdict).
 */
export type LegOnChain = "success" | "reverted" | "used" | "open"

export const legOnChainOf = (seen: {
  readonly receipt: "success" | "reverted" | undefined
  /** The payer's transaction count at `nonceBlockOf(head)`; undefined when not read (a receipt answered first). */
  readonly nonceAtDepth: number | undefined
  readonly legNonce: number
  /** The receipt read after the nonce; undefined when absent or not read. */
  readonly receiptAgain: "success" | "reverted" | undefined
}): LegOnChain => {
  const receipt = seen.receipt ?? seen.receiptAgain
  if (receipt !== undefined) return receipt
  return seen.nonceAtDepth !== undefined && seen.nonceAtDepth > seen.legNonce ? "used" : "open"
}

/**
 * A dead attempt's dev-buy hold (its `createCurve` reverted, or a rebuild proved it dead): decided
 * by the leg's sign claim, not by time. Never signed (the claim expired unsigned first) →
 * `release`: those bytes can never exist. Signed: its bytes (to the predicted curve, a plain ETH
 * transfer when no curve exists) as the chain shows them (`LegOnChain`): mined successfully →
 * `book` (the ETH moved), reverted or `used` (another transaction took its nonce, on evidence) →
 * `release`; `open`, or not read → `keep`: they can still land.
 */
export const deadHoldOf = (claim: { readonly signed: boolean }, chain: LegOnChain | undefined): "book" | "release" | "keep" => {
  if (!claim.signed) return "release"
  if (chain === undefined || chain === "open") return "keep"
  return chain === "success" ? "book" : "release"
}

/**
 * A dead attempt's hold from both of its value legs (each by `deadHoldOf`: `book` = landed,
 * `release` = never moves ETH, `keep` = can still land): either can still land → `keep`; the buy
 * landed → `book` with the fee when the fee leg landed too (its nonce was its own), else
 * `book_buy` (the buy alone); the buy never → `book_fee` when the fee leg landed (rule 4), else
 * `release`.
 */
export const deadSettlementOf = (buy: "book" | "release" | "keep", fee: "book" | "release" | "keep"): "book" | "book_buy" | "book_fee" | "release" | "keep" => {
  if (buy === "keep" || fee === "keep") return "keep"
  if (buy === "book") return fee === "book" ? "book" : "book_buy"
  return fee === "book" ? "book_fee" : "release"
}

/**
 * A refusal of `holdAgain` (a fee or dev-buy leg reissued after `createCurve` landed, its hold
 * reserved again or decided anew in the key's current window): the self-signed
 * confirm's `LAUNCH_FAILED`, always retryable (launch spec 7), with the gate's reason and its details
 * (`resetsAt`, `spendLimit`, `retryAfter`); never `KEY_LIMIT_REACHED` or `SPEND_LIMIT_EXCEEDED`.
 */
export const holdAgainRefused = (e: SpendError): LaunchError =>
  launchFailure("launch_failed", `the reissued leg's dev buy could not be held against the key's current window: ${e.message}; confirm again once the window allows it`, {
    retryable: true,
    details: { ...(e.details ?? {}), reason: e.reason }
  })

/**
 * A node's answer that it does not have the block a read was pinned to (geth's "header not found",
 * "block not found" / "unknown block" elsewhere, EDR's "invalid block tag" for a block past its head).
 */
export const blockMissing = (e: unknown): boolean => {
  const text = e instanceof BaseError ? `${e.message} ${e.details}` : String(e)
  return /header not found|block not found|unknown block|invalid block (?:tag|number)/i.test(text)
}

/** An earlier attempt as ONE block shows it (`HoodSelfChain.attemptAtHead`): the head, or `head - 1` when the node lacked the head (`atHead` false). */
export interface AttemptSnapshot {
  readonly block: bigint
  readonly atHead: boolean
  readonly nonce: number
  readonly curveExists: boolean
}

/**
 * The refusal when one snapshot read at `head - 1` cannot decide (`unread` of `buildAgainOf` and
 * `unminedRecordOf`): a createCurve mined in the head block is not in it. `LAUNCH_FAILED`,
 * retryable, `chain_read_failed`; `subject` is what was read, `again` what the caller does next.
 */
export const readBehindHead = (subject: string, again: "build" | "confirm"): LaunchError =>
  launchFailure("launch_failed", `${subject} was read one block behind the head, which cannot show a createCurve mined in the head block; ${again} again`, {
    retryable: true,
    details: { reason: "chain_read_failed" }
  })

/**
 * What a build again concludes from one snapshot of the earlier attempt (`attemptNonce`: its
 * createCurve's nonce; `tee`: a TEE operation whose createCurve was signed):
 * - its curve exists → `on_chain` (at either block: a curve is never removed);
 * - a TEE attempt whose nonce is not used yet → `in_flight` (at either block: a nonce only grows);
 * - otherwise a rebuild, but only on the head's snapshot: `head - 1` misses a createCurve mined in
 *   the head block itself (spec 3.4: never build again once it is mined), so there → `unread`
 *   (`chain_read_failed`, retryable).
 */
export const buildAgainOf = (seen: AttemptSnapshot, attemptNonce: number, tee: boolean): "on_chain" | "in_flight" | "rebuild" | "unread" => {
  if (seen.curveExists) return "on_chain"
  if (tee && seen.nonce <= attemptNonce) return "in_flight"
  return seen.atHead ? "rebuild" : "unread"
}

/**
 * A linked record whose createCurve has no receipt: dead (`not_found`) when the payer's nonce
 * passed the attempt's with no curve, on the head's snapshot only; "not mined yet" (`not_mined`)
 * at either block; a `head - 1` snapshot that would say dead → `unread` (retryable).
 */
export const unminedRecordOf = (seen: AttemptSnapshot, attemptNonce: number): "not_found" | "not_mined" | "unread" => {
  if (seen.curveExists || seen.nonce <= attemptNonce) return "not_mined"
  return seen.atHead ? "not_found" : "unread"
}

