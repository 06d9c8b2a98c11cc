/**
 * How a headless Hood launch fails (spec document 1, 2.5, 3.1): `HoodLaunchError` with a `reason`
 * union (`LaunchError.hoodLaunchReason` names the launch reason its ledger row records on a
 * definitive failure), which reasons are retryable, and how a node's error and the wallet
 * provider's refusal read as reasons.
 */
import { Schema } from "effect"
import { BaseError, decodeErrorResult, type Hex, InsufficientFundsError } from "viem"
import { hoodErrorsAbi, revertName } from "../../../chain/hood/client/HoodClient.js"
import type { WalletProviderError } from "../../wallets/WalletProvider.js"
import { type WalletRefusalReason, walletRefusal } from "../../wallets/WalletRefusal.js"

export const HoodLaunchReasons = [
  /** Hood configuration incomplete (no RPC, factory or curve bytecode): nothing broadcast. */
  "hood_unavailable",
  /** Rule 8: the account has no linked EVM wallet. */
  "no_linked_evm_wallet",
  "not_embedded",
  "not_delegated",
  "delegation_revoked",
  /** The owner wallet's policy refused to sign. */
  "policy_denied",
  /** The wallet provider could not sign (its key cannot be opened, ...): nothing was signed. */
  "signing_failed",
  "insufficient_balance",
  /** The metadata URI is over the factory's 512 bytes. */
  "metadata_too_long",
  /** Not a Hood request (the route's decoder sends Hood requests only). */
  "not_hood",
  /** The build (estimate) reverted: `revert` names the contract error. */
  "build_reverted",
  "build_timeout",
  /** The chain could not be read or written. */
  "chain_read_failed",
  /** `createCurve` was mined with status 0. */
  "reverted",
  /** No receipt within the deadline: the transaction may still land; the row stays in flight. */
  "confirm_timeout"
] as const
export type HoodLaunchReason = (typeof HoodLaunchReasons)[number]

export class HoodLaunchError extends Schema.TaggedError<HoodLaunchError>()("HoodLaunchError", {
  reason: Schema.Literal(...HoodLaunchReasons),
  message: Schema.String,
  retryable: Schema.Boolean,
  /** `build_reverted`, `reverted`: the decoded custom error, when there is one. */
  revert: Schema.optional(Schema.String),
  /** `confirm_timeout`: the createCurve hash to look for. */
  txHash: Schema.optional(Schema.String)
}) {}

const retryableReasons: ReadonlySet<HoodLaunchReason> = new Set([
  "hood_unavailable",
  "not_delegated",
  "delegation_revoked",
  "signing_failed",
  "insufficient_balance",
  "build_timeout",
  "chain_read_failed",
  "confirm_timeout",
  "no_linked_evm_wallet"
])

export const refuse = (reason: HoodLaunchReason, message: string, extra: { revert?: string; txHash?: string } = {}) =>
  new HoodLaunchError({ reason, message, retryable: retryableReasons.has(reason), ...extra })

/** The factory's metadata URI bound (bytes). */
export const FACTORY_URI_MAX_BYTES = 512

/** A refused estimate carries the revert data on the RPC error, not as a contract error: decode it. */
const estimateRevertName = (e: unknown): string | undefined => {
  if (!(e instanceof BaseError)) return undefined
  // Hardhat puts it on the JSON-RPC error as `data` (a hex string) or `data.data`.
  const hexOf = (x: unknown): Hex | undefined => {
    const d = (x as { data?: unknown }).data
    const v = typeof d === "string" ? d : typeof d === "object" && d !== null ? (d as { data?: unknown }).data : undefined
    return typeof v === "string" && v.startsWith("0x") && v.length >= 10 ? (v as Hex) : undefined
  }
  const found = e.walk((x) => x !== null && x !== undefined && hexOf(x) !== undefined)
  const data = found === null ? undefined : hexOf(found)
  if (data === undefined) return undefined
  try {
    return decodeErrorResult({ abi: hoodErrorsAbi, data }).errorName
  } catch {
    return undefined
  }
}

/** A viem error while talking to the node, as the reason the caller branches on. */
export const chainError = (e: unknown, what: string): HoodLaunchError => {
  if (e instanceof BaseError && e.walk((x) => x instanceof InsufficientFundsError) !== null) {
    return refuse("insufficient_balance", `the owner wallet cannot cover ${what}`)
  }
  const name = revertName(e) ?? estimateRevertName(e)
  if (name !== undefined) return refuse("build_reverted", `${what} would revert: ${name}`, { revert: name })
  return refuse("chain_read_failed", `${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`)
}

/** The wallet refusal's reason on this chain (`WalletRefusal` decides what the provider's failure means). */
const walletReasons: { readonly [R in WalletRefusalReason]: HoodLaunchReason } = {
  not_embedded: "not_embedded",
  not_delegated: "not_delegated",
  delegation_revoked: "delegation_revoked",
  policy_denied: "policy_denied",
  signing_failed: "signing_failed"
}

/** The wallet provider's refusal to resolve or sign, as this chain's failure. */
export const fromWalletProvider = (e: WalletProviderError): HoodLaunchError => {
  const r = walletRefusal(e)
  return refuse(walletReasons[r.reason], r.message)
}
