/**
 * The launch economics matrix: for each quote pair, the curve every tier launches on (virtual
 * quote V, threshold G, token supply and decimals). Only V, G and supply are written here; every
 * published figure (`thresholdRaw`, `raise`, `startFdv`, `bondingFdv`, `supplySoldPct`) is
 * computed from them by the curve math, so the terms a client reads are the terms the program
 * executes. `matrixVersion` changes whenever any input here changes (docs/decisions.md lists the
 * values and why).
 */
import type { Chain } from "./Chain.js"
import { curveTerms, DEFAULT_CURVE_FEE_BPS } from "./CurveMath.js"
import { findQuotePair, type QuoteAssetId, type QuotePair, QuotePairs } from "./QuotePairs.js"

export const MATRIX_VERSION = 1

export type Tier = "open" | "exclusive"

/** Staker allocation when a launch does not name one (spec 2.1): 50 bps, or 500 for `exp-*`. */
export const DEFAULT_STAKER_ALLOCATION_BPS = 50n
export const EXP_STAKER_ALLOCATION_BPS = 500n

export interface TierCurve {
  readonly tier: Tier
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
}

export interface PairEconomics {
  readonly chain: Chain
  readonly quoteAsset: QuoteAssetId
  readonly tokenSupplyRaw: bigint
  readonly tokenDecimals: number
  readonly curveFeeBps: bigint
  readonly tiers: ReadonlyArray<TierCurve>
}

const whole = (units: bigint, decimals: number) => units * 10n ** BigInt(decimals)
const milli = (thousandths: bigint, decimals: number) => (thousandths * 10n ** BigInt(decimals)) / 1000n

/** One billion tokens on every pair; 6 decimals on Solana (SPL convention), 18 on Hood (ERC-20). */
const SOLANA_SUPPLY_RAW = whole(1_000_000_000n, 6)
const HOOD_SUPPLY_RAW = whole(1_000_000_000n, 18)

export const Matrix: ReadonlyArray<PairEconomics> = [
  {
    chain: "solana", quoteAsset: "sol", tokenSupplyRaw: SOLANA_SUPPLY_RAW, tokenDecimals: 6, curveFeeBps: DEFAULT_CURVE_FEE_BPS,
    tiers: [
      { tier: "open", virtualQuoteRaw: whole(30n, 9), thresholdRaw: whole(85n, 9) },
      { tier: "exclusive", virtualQuoteRaw: whole(40n, 9), thresholdRaw: whole(100n, 9) }
    ]
  },
  {
    chain: "solana", quoteAsset: "usdc", tokenSupplyRaw: SOLANA_SUPPLY_RAW, tokenDecimals: 6, curveFeeBps: DEFAULT_CURVE_FEE_BPS,
    tiers: [{ tier: "open", virtualQuoteRaw: whole(4_500n, 6), thresholdRaw: whole(12_750n, 6) }]
  },
  {
    chain: "solana", quoteAsset: "svc", tokenSupplyRaw: SOLANA_SUPPLY_RAW, tokenDecimals: 6, curveFeeBps: DEFAULT_CURVE_FEE_BPS,
    tiers: [{ tier: "open", virtualQuoteRaw: whole(1_980_000n, 6), thresholdRaw: whole(5_610_000n, 6) }]
  },
  {
    chain: "hood", quoteAsset: "eth", tokenSupplyRaw: HOOD_SUPPLY_RAW, tokenDecimals: 18, curveFeeBps: DEFAULT_CURVE_FEE_BPS,
    tiers: [{ tier: "open", virtualQuoteRaw: milli(1_500n, 18), thresholdRaw: milli(4_250n, 18) }]
  },
  {
    chain: "hood", quoteAsset: "usdg", tokenSupplyRaw: HOOD_SUPPLY_RAW, tokenDecimals: 18, curveFeeBps: DEFAULT_CURVE_FEE_BPS,
    tiers: [{ tier: "open", virtualQuoteRaw: whole(4_500n, 6), thresholdRaw: whole(12_750n, 6) }]
  }
]

export const findEconomics = (chain: Chain, quoteAsset: string): PairEconomics | undefined =>
  Matrix.find((m) => m.chain === chain && m.quoteAsset === quoteAsset)

/** What the first buy in the curve terms spends: 1 SOL, or 66,000 platform-token units (spec 2.2). */
export const firstBuyInRaw = (pair: QuotePair): bigint => {
  switch (pair.id) {
    case "sol":
      return whole(1n, 9)
    case "svc":
      return whole(66_000n, pair.decimals)
    case "usdc":
    case "usdg":
      return whole(150n, pair.decimals)
    case "eth":
      return milli(50n, 18)
  }
}

/** A tier as the quote-pairs and presets reads publish it. */
export interface TierTerms {
  readonly symbol: string
  readonly virtualQuoteRaw: string
  readonly thresholdRaw: string
  readonly raise: string
  readonly startFdv: string
  readonly bondingFdv: string
  readonly supplySoldPct: string
  readonly tokenSupplyRaw: string
  readonly tokenDecimals: number
  readonly stakerAllocationBps: number
  readonly curveFeeBps: number
}

export const tierTerms = (economics: PairEconomics, curve: TierCurve): TierTerms => {
  const pair = findQuotePair(economics.chain, economics.quoteAsset)
  if (pair === undefined) throw new Error(`matrix names an unknown pair ${economics.chain}/${economics.quoteAsset}`)
  const terms = curveTerms({
    symbol: pair.symbol,
    quoteDecimals: pair.decimals,
    virtualQuoteRaw: curve.virtualQuoteRaw,
    thresholdRaw: curve.thresholdRaw,
    supplyRaw: economics.tokenSupplyRaw,
    tokenDecimals: economics.tokenDecimals,
    stakerAllocationBps: DEFAULT_STAKER_ALLOCATION_BPS,
    feeBps: economics.curveFeeBps,
    firstBuyInRaw: firstBuyInRaw(pair)
  })
  return {
    symbol: terms.symbol,
    virtualQuoteRaw: terms.virtualQuoteRaw,
    thresholdRaw: terms.thresholdRaw,
    raise: terms.raise,
    startFdv: terms.startFdv,
    bondingFdv: terms.bondingFdv,
    supplySoldPct: terms.supplySoldPct,
    tokenSupplyRaw: economics.tokenSupplyRaw.toString(),
    tokenDecimals: economics.tokenDecimals,
    stakerAllocationBps: Number(DEFAULT_STAKER_ALLOCATION_BPS),
    curveFeeBps: Number(economics.curveFeeBps)
  }
}

/** Per-pair ceilings of the headless dev buy, in the quote's raw units (server variables, spec 2.1). */
export interface DevBuyCeilings {
  readonly DEV_BUY_MAX_LAMPORTS: bigint
  readonly DEV_BUY_MAX_USDC_RAW: bigint
  readonly DEV_BUY_MAX_CNDL_RAW: bigint
  readonly DEV_BUY_MAX_WEI: bigint
}

export const DefaultDevBuyCeilings: DevBuyCeilings = {
  DEV_BUY_MAX_LAMPORTS: 500_000_000n, // 0.5 SOL
  DEV_BUY_MAX_USDC_RAW: 500_000_000n, // 500 USDC
  DEV_BUY_MAX_CNDL_RAW: whole(2_000_000n, 6), // 2,000,000 platform-token units
  DEV_BUY_MAX_WEI: 20_000_000_000_000_000n // 0.02 ETH
}

export const devBuyCeilingRaw = (pair: QuotePair, ceilings: DevBuyCeilings): bigint | null =>
  pair.devBuyCeilingVariable === null ? null : ceilings[pair.devBuyCeilingVariable as keyof DevBuyCeilings]

/** The quote-pair record (spec 2.9) with its live tier terms. */
export const quotePairRecord = (pair: QuotePair, ceilings: DevBuyCeilings) => {
  const economics = findEconomics(pair.chain, pair.id)
  const tiers: Partial<Record<Tier, TierTerms>> = {}
  for (const curve of economics?.tiers ?? []) tiers[curve.tier] = tierTerms(economics!, curve)
  const ceiling = devBuyCeilingRaw(pair, ceilings)
  return {
    chain: pair.chain,
    id: pair.id,
    symbol: pair.symbol,
    address: pair.address,
    decimals: pair.decimals,
    isNative: pair.isNative,
    supportsDevBuy: pair.supportsDevBuy,
    headlessDevBuy: pair.headlessDevBuy,
    devBuy: {
      path: pair.devBuyPath,
      maxRaw: ceiling === null ? null : ceiling.toString(),
      ceilingVariable: pair.devBuyCeilingVariable
    },
    tiers
  }
}

export const quotePairsFor = (chain: Chain | undefined): ReadonlyArray<QuotePair> =>
  chain === undefined ? QuotePairs : QuotePairs.filter((p) => p.chain === chain)
