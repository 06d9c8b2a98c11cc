/**
 * The six launch presets of spec 2.9: client-side vocabulary that expands into an ordinary,
 * economics-free launch body (`chain`, `quoteAsset`, `mode`, `stakerAllocationBps`, and
 * `dexVersion` on Hood), joined with the live terms of the tier it resolves to. The launch
 * endpoints never see preset names.
 */
import type { Chain } from "./Chain.js"
import { DEFAULT_STAKER_ALLOCATION_BPS, findEconomics, type Tier, tierTerms, type TierTerms } from "./Economics.js"
import type { QuoteAssetId } from "./QuotePairs.js"

export type PresetName =
  | "solana-open-sol"
  | "solana-exclusive-sol"
  | "solana-open-usdc"
  | "hood-open-eth-v4"
  | "hood-open-eth-v3"
  | "hood-open-usdg-v4"

interface PresetSpec {
  readonly name: PresetName
  readonly description: string
  readonly chain: Chain
  readonly quoteAsset: QuoteAssetId
  readonly mode: Tier
  readonly dexVersion?: "v3" | "v4"
}

const PresetSpecs: ReadonlyArray<PresetSpec> = [
  { name: "solana-open-sol", description: "Open launch on Solana against SOL", chain: "solana", quoteAsset: "sol", mode: "open" },
  {
    name: "solana-exclusive-sol",
    description: "Holder-pass launch on Solana against SOL (requires exclusive eligibility)",
    chain: "solana",
    quoteAsset: "sol",
    mode: "exclusive"
  },
  { name: "solana-open-usdc", description: "Open launch on Solana against USDC", chain: "solana", quoteAsset: "usdc", mode: "open" },
  {
    name: "hood-open-eth-v4",
    description: "Open launch on Hood against ETH, graduating to the v4 venue",
    chain: "hood",
    quoteAsset: "eth",
    mode: "open",
    dexVersion: "v4"
  },
  {
    name: "hood-open-eth-v3",
    description: "Open launch on Hood against ETH, graduating to the v3 venue",
    chain: "hood",
    quoteAsset: "eth",
    mode: "open",
    dexVersion: "v3"
  },
  {
    name: "hood-open-usdg-v4",
    description: "Open launch on Hood against USDG, graduating to the v4 venue",
    chain: "hood",
    quoteAsset: "usdg",
    mode: "open",
    dexVersion: "v4"
  }
]

export interface Preset {
  readonly name: PresetName
  readonly description: string
  /** Spread into a launch body as is (add clientLaunchId, name, symbol, imageUrl). */
  readonly launch: {
    readonly chain: Chain
    readonly quoteAsset: QuoteAssetId
    readonly mode: Tier
    readonly stakerAllocationBps: number
    readonly dexVersion?: "v3" | "v4"
  }
  readonly tier: Tier
  readonly terms: TierTerms
}

export const resolvePresets = (): ReadonlyArray<Preset> =>
  PresetSpecs.map((spec) => {
    const economics = findEconomics(spec.chain, spec.quoteAsset)
    const curve = economics?.tiers.find((t) => t.tier === spec.mode)
    if (economics === undefined || curve === undefined) {
      throw new Error(`preset ${spec.name} resolves to no tier in the matrix`)
    }
    return {
      name: spec.name,
      description: spec.description,
      launch: {
        chain: spec.chain,
        quoteAsset: spec.quoteAsset,
        mode: spec.mode,
        stakerAllocationBps: Number(DEFAULT_STAKER_ALLOCATION_BPS),
        ...(spec.dexVersion !== undefined ? { dexVersion: spec.dexVersion } : {})
      },
      tier: spec.mode,
      terms: tierTerms(economics, curve)
    }
  })
