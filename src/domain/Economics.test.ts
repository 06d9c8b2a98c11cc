/**
 * The matrix publishes only figures the curve math computes, the presets resolve to live tier
 * terms, and the plan table carries the spec's defaults with overrides applied.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { curveTerms, initialState, quoteBuy, tokenReserveRaw } from "./CurveMath.js"
import {
  DEFAULT_STAKER_ALLOCATION_BPS, DefaultDevBuyCeilings, Matrix, MATRIX_VERSION, quotePairRecord, tierTerms
} from "./Economics.js"
import { parsePlanOverrides, resolvePlans } from "./Plans.js"
import { resolvePresets } from "./Presets.js"
import { findQuotePair, QuotePairs } from "./QuotePairs.js"

describe("economics matrix", () => {
  it("has an integer version and a curve for every pair", () => {
    expect(Number.isInteger(MATRIX_VERSION)).toBe(true)
    for (const pair of QuotePairs) {
      const record = quotePairRecord(pair, DefaultDevBuyCeilings)
      expect(record.tiers.open, `${pair.chain}/${pair.id}`).toBeDefined()
    }
    expect(quotePairRecord(findQuotePair("solana", "sol")!, DefaultDevBuyCeilings).tiers.exclusive).toBeDefined()
  })

  it("publishes the curve math's figures for each tier", () => {
    for (const economics of Matrix) {
      const pair = findQuotePair(economics.chain, economics.quoteAsset)!
      for (const curve of economics.tiers) {
        const published = tierTerms(economics, curve)
        expect(published.thresholdRaw).toBe(curve.thresholdRaw.toString())
        const computed = curveTerms({
          symbol: pair.symbol, quoteDecimals: pair.decimals, virtualQuoteRaw: curve.virtualQuoteRaw,
          thresholdRaw: curve.thresholdRaw, supplyRaw: economics.tokenSupplyRaw, tokenDecimals: economics.tokenDecimals,
          stakerAllocationBps: DEFAULT_STAKER_ALLOCATION_BPS, feeBps: economics.curveFeeBps, firstBuyInRaw: 1n
        })
        expect(published).toMatchObject({
          raise: computed.raise, startFdv: computed.startFdv, bondingFdv: computed.bondingFdv, supplySoldPct: computed.supplySoldPct
        })
      }
    }
  })

  it("gives the SOL open tier the terms worked out by hand", () => {
    // V = 30 SOL, G = 85 SOL, supply 1e9 tokens, X = 995,000,000 tokens (50 bps to stakers).
    // startFdv = V * S / X = 30 / 0.995 = 30.150753768... SOL
    // bondingFdv = (V+G)^2 * S / (V*X) = 13225 / 29.85 = 443.048576214... SOL
    // supplySoldPct = X*G/(V+G)/S = 0.995 * 85 / 115 = 73.543...%
    const sol = quotePairRecord(findQuotePair("solana", "sol")!, DefaultDevBuyCeilings)
    expect(sol.tiers.open).toMatchObject({
      symbol: "SOL", thresholdRaw: "85000000000", raise: "85", startFdv: "30.150753768", bondingFdv: "443.048576214",
      supplySoldPct: "73.54"
    })
  })

  it("lets a tier's curve graduate exactly at its threshold through the executed math", () => {
    for (const economics of Matrix) {
      for (const curve of economics.tiers) {
        const params = {
          virtualQuoteRaw: curve.virtualQuoteRaw, thresholdRaw: curve.thresholdRaw,
          tokenReserveRaw: tokenReserveRaw(economics.tokenSupplyRaw, DEFAULT_STAKER_ALLOCATION_BPS),
          feeBps: economics.curveFeeBps, crossingModel: economics.chain === "solana" ? "full-fill-surplus" as const : "capped-refund" as const
        }
        const q = quoteBuy(params, initialState(params), curve.thresholdRaw * 2n)
        expect(q._tag === "Filled" && q.crossesGraduation).toBe(true)
      }
    }
  })

  it("publishes each pair's dev-buy path and ceiling", () => {
    const usdg = quotePairRecord(findQuotePair("hood", "usdg")!, DefaultDevBuyCeilings)
    expect(usdg.headlessDevBuy).toBe(false)
    expect(usdg.devBuy).toEqual({ path: "none", maxRaw: null, ceilingVariable: null })
    const eth = quotePairRecord(findQuotePair("hood", "eth")!, DefaultDevBuyCeilings)
    expect(eth).toMatchObject({ supportsDevBuy: false, headlessDevBuy: true, devBuy: { maxRaw: "20000000000000000" } })
    expect(quotePairRecord(findQuotePair("solana", "sol")!, DefaultDevBuyCeilings).devBuy.maxRaw).toBe("500000000")
  })
})

describe("presets", () => {
  it("names the six presets of spec 2.9 with resolved launch fields and live terms", () => {
    const presets = resolvePresets()
    expect(presets.map((p) => p.name)).toEqual([
      "solana-open-sol", "solana-exclusive-sol", "solana-open-usdc", "hood-open-eth-v4", "hood-open-eth-v3", "hood-open-usdg-v4"
    ])
    const exclusive = presets.find((p) => p.name === "solana-exclusive-sol")!
    expect(exclusive.launch).toEqual({ chain: "solana", quoteAsset: "sol", mode: "exclusive", stakerAllocationBps: 50 })
    expect(exclusive.terms).toEqual(quotePairRecord(findQuotePair("solana", "sol")!, DefaultDevBuyCeilings).tiers.exclusive)
    expect(presets.find((p) => p.name === "hood-open-eth-v3")!.launch.dexVersion).toBe("v3")
    for (const p of presets.filter((p) => p.launch.chain === "solana")) expect(p.launch).not.toHaveProperty("dexVersion")
  })
})

describe("plans", () => {
  it("serves the spec's defaults", () => {
    const [free, pro, max] = resolvePlans({}, 30)
    expect(free).toMatchObject({ id: "free", feeBps: 100, perpFeeBps: 10, limits: { requestsPerMin: 30, launchesPerDay: 5, uploadsPerMin: 10, linkedWallets: 0 } })
    expect(pro).toMatchObject({ id: "pro", feeBps: 50, price: { usdMonthly: "50" }, limits: { requestsPerMin: 300, launchesPerDay: 50, uploadsPerMin: 30, linkedWallets: 10 } })
    expect(max).toMatchObject({ id: "max", feeBps: 25, perpFeeBps: null, limits: { requestsPerMin: 600, launchesPerDay: 1000, uploadsPerMin: 60, linkedWallets: 1000 } })
    expect(free!.capabilities.selfSignedLaunch).toBe(false)
    expect(pro!.capabilities.limitOrders).toBe(false)
    expect(max!.capabilities.deepAnalysis).toBe(true)
    expect(max!.promoMaxDays).toBe(30)
  })

  it("applies overrides field by field and refuses unknown or invalid ones", () => {
    const overrides = Either.getOrThrow(parsePlanOverrides('{"pro":{"limits":{"requestsPerMin":400},"feeBps":40}}'))
    const pro = resolvePlans(overrides, 0)[1]!
    expect(pro.limits).toEqual({ requestsPerMin: 400, launchesPerDay: 50, uploadsPerMin: 30, linkedWallets: 10 })
    expect(pro.feeBps).toBe(40)
    expect(Either.isLeft(parsePlanOverrides('{"pro":{"limits":{"requestsPerMinute":400}}}'))).toBe(true)
    expect(Either.isLeft(parsePlanOverrides('{"gold":{}}'))).toBe(true)
    expect(Either.isLeft(parsePlanOverrides('{"free":{"feeBps":-1}}'))).toBe(true)
    expect(Either.isLeft(parsePlanOverrides("not json"))).toBe(true)
  })
})
