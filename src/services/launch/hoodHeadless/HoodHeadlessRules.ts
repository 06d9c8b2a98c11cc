/**
 * The pure parts of a headless Hood launch (spec 2.5): the factory's `createCurve` input, the
 * token a curve deploys, whether a request wants a dev buy, and the dev buy's report and its
 * stored JSON. No I/O.
 */
import { type Address, getContractAddress, type Hash, type Hex } from "viem"
import { quoteTokenOf } from "../../../chain/hood/launch/HeadlessCalls.js"
import type { DevBuyReport, HoodLaunchInput } from "../HoodHeadlessLaunch.js"
import type { LaunchRef } from "../LaunchLedger.js"

/** The token a curve deploys in its constructor: the curve's first contract creation (nonce 1, EIP-161). */
export const tokenOfCurve = (curve: Address): Address => getContractAddress({ from: curve, nonce: 1n })

export const keyOf = (ref: LaunchRef) => `${ref.accountId}\u0000${ref.clientLaunchId}`

export const createInput = (input: HoodLaunchInput, salt: Hex, usdg: Address) => ({
  name: input.request.name,
  symbol: input.request.symbol,
  uri: input.metadataUri,
  quoteToken: quoteTokenOf(input.request.quoteAsset as "eth" | "usdg", usdg),
  virtualQuoteRaw: input.request.curve.virtualQuoteRaw,
  thresholdRaw: input.request.curve.thresholdRaw,
  stakerAllocationBps: Number(input.request.stakerAllocationBps),
  dexVersion: input.request.dexVersion!,
  salt
})

/** A dev buy's report: its hash is the `signature` once landed, else the `pendingSignature` while pending, lapsed or reverted. */
export const report = (base: Omit<DevBuyReport, "signature" | "pendingSignature">, hash: Hash | null): DevBuyReport => ({
  ...base,
  signature: base.outcome === "landed" ? hash : null,
  pendingSignature: base.outcome === "pending" || base.outcome === "lapsed" || base.outcome === "reverted" ? hash : null
})

/** The stored spec 2.5 `devBuy`. */
export const devBuyJson = (d: DevBuyReport): Record<string, unknown> => ({
  ...(d.signature !== null ? { signature: d.signature } : {}),
  outcome: d.outcome,
  ...(d.pendingSignature !== null ? { pendingSignature: d.pendingSignature } : {}),
  feeOutcome: d.feeOutcome,
  fee: { bps: d.fee.bps, feeRaw: d.fee.feeRaw.toString(), treasury: d.fee.treasury }
})

/** Only an ETH launch with a nonzero `buyAmount` buys (USDG launches have no dev buy). */
export const wantsDevBuy = (input: HoodLaunchInput) => input.request.buyAmountRaw > 0n && input.request.quoteAsset === "eth"
