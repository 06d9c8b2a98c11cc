/**
 * The two chains the engine serves. `solana` settles curve crossings by filling in full (the
 * surplus stays in the pool); `hood`, an EVM chain, caps a crossing buy at the threshold and
 * refunds the rest.
 */
import type { CrossingModel } from "./CurveMath.js"

export const Chains = ["solana", "hood"] as const
export type Chain = (typeof Chains)[number]

export const isChain = (s: unknown): s is Chain => s === "solana" || s === "hood"

export const crossingModelOf = (chain: Chain): CrossingModel =>
  chain === "solana" ? "full-fill-surplus" : "capped-refund"

export const graduationVenueOf = (chain: Chain, dexVersion?: "v3" | "v4"): string =>
  chain === "solana" ? "dex-solana-v2" : dexVersion === "v3" ? "dex-evm-v3" : "dex-evm-v4"

/**
 * An address in the form it is stored and compared in: Hood (EVM) addresses lower-case (spec 2.3:
 * older rows may be lower-case), Solana's base58 exactly as written.
 */
export const normalizeAddress = (chain: Chain, address: string): string => (chain === "hood" ? address.toLowerCase() : address)
