/**
 * The quote pairs a token can launch against: five, fixed by identifier. An identifier and its
 * decimal meaning are never repurposed (spec 9); new pairs may be added. Addresses are the mints
 * and token contracts the engine trades against; the localnets create them at these addresses.
 */
import type { Chain } from "./Chain.js"

export type QuoteAssetId = "sol" | "usdc" | "svc" | "eth" | "usdg"

export type DevBuyPath = "atomic-wrap" | "atomic-balance" | "follow-up-transaction" | "none"

export interface QuotePair {
  readonly chain: Chain
  readonly id: QuoteAssetId
  readonly symbol: string
  readonly address: string
  readonly decimals: number
  readonly isNative: boolean
  /** The web launcher's flag: true for every Solana pair, false for Hood pairs. */
  readonly supportsDevBuy: boolean
  /** Whether the headless route can carry a dev buy on this pair (spec 2.1 table). */
  readonly headlessDevBuy: boolean
  readonly devBuyPath: DevBuyPath
  /** The server variable that holds this pair's dev-buy ceiling, null when there is no dev buy. */
  readonly devBuyCeilingVariable: string | null
}

/** Wrapped SOL's mint: the native pair trades through it. */
export const WSOL_MINT = "So11111111111111111111111111111111111111112"
export const USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
/** The platform token (asset id `svc`). */
export const SVC_MINT = "SVCtkn1111111111111111111111111111111111111"
/**
 * The platform token's staked receipt on the Solana localnet (6 decimals, like SVC). Holding it
 * is what "staked" means for Pro by staking; the embedded mode reads it unless
 * `SOLANA_STAKED_MINT` names another mint.
 */
export const STAKED_SVC_MINT = "SVCstk1111111111111111111111111111111111111"
export const EVM_NATIVE = "0x0000000000000000000000000000000000000000"
/** USDG on the Hood localnet: the first contract dev account #0 deploys (docs/decisions.md). */
export const USDG_ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"

export const QuotePairs: ReadonlyArray<QuotePair> = [
  {
    chain: "solana", id: "sol", symbol: "SOL", address: WSOL_MINT, decimals: 9, isNative: true,
    supportsDevBuy: true, headlessDevBuy: true, devBuyPath: "atomic-wrap", devBuyCeilingVariable: "DEV_BUY_MAX_LAMPORTS"
  },
  {
    chain: "solana", id: "usdc", symbol: "USDC", address: USDC_MINT, decimals: 6, isNative: false,
    supportsDevBuy: true, headlessDevBuy: true, devBuyPath: "atomic-balance", devBuyCeilingVariable: "DEV_BUY_MAX_USDC_RAW"
  },
  {
    chain: "solana", id: "svc", symbol: "SVC", address: SVC_MINT, decimals: 6, isNative: false,
    supportsDevBuy: true, headlessDevBuy: true, devBuyPath: "atomic-balance", devBuyCeilingVariable: "DEV_BUY_MAX_CNDL_RAW"
  },
  {
    chain: "hood", id: "eth", symbol: "ETH", address: EVM_NATIVE, decimals: 18, isNative: true,
    supportsDevBuy: false, headlessDevBuy: true, devBuyPath: "follow-up-transaction", devBuyCeilingVariable: "DEV_BUY_MAX_WEI"
  },
  {
    chain: "hood", id: "usdg", symbol: "USDG", address: USDG_ADDRESS, decimals: 6, isNative: false,
    supportsDevBuy: false, headlessDevBuy: false, devBuyPath: "none", devBuyCeilingVariable: null
  }
]

/** The pair a chain launches against when `quoteAsset` is omitted. */
export const DefaultQuoteAsset: Readonly<Record<Chain, QuoteAssetId>> = { solana: "sol", hood: "eth" }

export const findQuotePair = (chain: Chain, id: string): QuotePair | undefined =>
  QuotePairs.find((p) => p.chain === chain && p.id === id)
