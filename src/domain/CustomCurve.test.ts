import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { curveTerms, formatUnits, tokenReserveRaw } from "./CurveMath.js"
import {
  type CustomCurveInput,
  EXP_PRESET_CURVES,
  maxThresholdRaw,
  parseWholeUnits,
  validateCustomCurve
} from "./CustomCurve.js"

const SOL = 10n ** 9n
const SVC = 10n ** 6n
const SUPPLY = 10n ** 15n // 1e9 tokens at 6 decimals

/** A SOL request that passes every rule; each test breaks one thing. */
const solInput = (over: Partial<CustomCurveInput> = {}): CustomCurveInput => ({
  quoteAsset: "sol",
  curve: { virtualQuote: "4", threshold: "5" },
  stakerAllocationBps: 500n,
  supplyRaw: SUPPLY,
  buyAmountRaw: 0n,
  devBuyCeilingRaw: SOL / 2n, // DEV_BUY_MAX_LAMPORTS default 0.5 SOL
  ...over
})
const svcInput = (over: Partial<CustomCurveInput> = {}): CustomCurveInput =>
  solInput({ quoteAsset: "svc", curve: { virtualQuote: "264000", threshold: "330000" }, devBuyCeilingRaw: 2_000_000n * SVC, ...over })

/** The spec's inequality written out here, independently of the module's helper. */
const fits = (v: bigint, g: bigint, x: bigint): boolean => (v + 20n * g) * (v + 20n * g) < v * x

describe("parseWholeUnits", () => {
  it("converts exact decimal strings to raw units", () => {
    expect(parseWholeUnits("5", 9)).toEqual({ _tag: "Ok", raw: 5n * SOL })
    expect(parseWholeUnits("4.5", 9)).toEqual({ _tag: "Ok", raw: 4_500_000_000n })
    expect(parseWholeUnits("0.000000001", 9)).toEqual({ _tag: "Ok", raw: 1n })
    expect(parseWholeUnits("007.50", 6)).toEqual({ _tag: "Ok", raw: 7_500_000n })
    // zeros past the precision do not change the value, so they are not a precision problem
    expect(parseWholeUnits("5.0000000000", 9)).toEqual({ _tag: "Ok", raw: 5n * SOL })
    expect(parseWholeUnits("5.1000000000000", 6)).toEqual({ _tag: "Ok", raw: 5_100_000n })
  })

  it("refuses anything that is not a plain decimal string as curve_format", () => {
    for (const bad of [5, 5n, null, undefined, {}, [], "", " 5", "5 ", "+5", "-5", "5e9", "1e2", ".5", "5.", "0x10", "5,5", "5.5.5", "５", "NaN", "Infinity", `1${"0".repeat(64)}`]) {
      expect(parseWholeUnits(bad, 9)).toEqual({ _tag: "Error", reason: "curve_format" })
    }
  })

  it("refuses a nonzero digit past the precision as curve_precision, never rounding", () => {
    expect(parseWholeUnits("4.0000000001", 9)).toEqual({ _tag: "Error", reason: "curve_precision" })
    expect(parseWholeUnits("264000.0000001", 6)).toEqual({ _tag: "Error", reason: "curve_precision" })
    expect(parseWholeUnits("264000.000001", 6)).toEqual({ _tag: "Ok", raw: 264_000_000_001n })
  })

  it("round-trips with formatUnits", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.constantFrom(6, 9), (raw, decimals) => {
        expect(parseWholeUnits(formatUnits(raw, decimals), decimals)).toEqual({ _tag: "Ok", raw })
      })
    )
  })
})

describe("validateCustomCurve: shape and format", () => {
  it.each([
    ["absent", undefined],
    ["null", null],
    ["a string", "4,5"],
    ["an array", ["4", "5"]],
    ["missing threshold", { virtualQuote: "4" }],
    ["missing virtualQuote", { threshold: "5" }],
    ["a null member (reads as absent)", { virtualQuote: "4", threshold: null }]
  ])("curve %s is VALIDATION_FAILED on field curve", (_, curve) => {
    expect(validateCustomCurve(solInput({ curve }))).toMatchObject({
      _tag: "Refused",
      code: "VALIDATION_FAILED",
      field: "curve",
      reason: "curve_format"
    })
  })

  it.each([
    ["virtualQuote", "curve.virtualQuote", { virtualQuote: 4, threshold: "5" }],
    ["virtualQuote", "curve.virtualQuote", { virtualQuote: "4e0", threshold: "5" }],
    ["threshold", "curve.threshold", { virtualQuote: "4", threshold: "-5" }],
    ["threshold", "curve.threshold", { virtualQuote: "4", threshold: "" }]
  ])("a non-decimal %s is curve_format on %s", (_, field, curve) => {
    expect(validateCustomCurve(solInput({ curve }))).toMatchObject({ code: "VALIDATION_FAILED", field, reason: "curve_format" })
  })

  it.each([
    ["sol", "curve.virtualQuote", { virtualQuote: "4.0000000001", threshold: "5" }],
    ["sol", "curve.threshold", { virtualQuote: "4", threshold: "5.0000000001" }],
    ["svc", "curve.virtualQuote", { virtualQuote: "264000.0000001", threshold: "330000" }],
    ["svc", "curve.threshold", { virtualQuote: "264000", threshold: "330000.0000001" }]
  ] as const)("too many decimals on %s is curve_precision on %s", (quoteAsset, field, curve) => {
    const input = quoteAsset === "sol" ? solInput({ curve }) : svcInput({ curve })
    expect(validateCustomCurve(input)).toMatchObject({ code: "VALIDATION_FAILED", field, reason: "curve_precision" })
  })

  it("every format error outranks every precision error", () => {
    expect(validateCustomCurve(solInput({ curve: { virtualQuote: "4.0000000001", threshold: "five" } }))).toMatchObject({
      field: "curve.threshold",
      reason: "curve_format"
    })
  })

  it("the precision is the quote's: 7 decimals fit SOL, not svc", () => {
    expect(validateCustomCurve(solInput({ curve: { virtualQuote: "4.0000001", threshold: "5" } }))).toMatchObject({
      _tag: "Accepted",
      virtualQuoteRaw: 4_000_000_100n
    })
    expect(validateCustomCurve(svcInput({ curve: { virtualQuote: "264000.0000001", threshold: "330000" } }))._tag).toBe("Refused")
  })
})

describe("validateCustomCurve: outer limits", () => {
  const cases = [
    ["sol", "0.999999999", "5", "virtual_quote_out_of_range", "curve.virtualQuote"],
    ["sol", "100.000000001", "5", "virtual_quote_out_of_range", "curve.virtualQuote"],
    ["sol", "4", "0.999999999", "threshold_out_of_range", "curve.threshold"],
    ["sol", "4", "250.000000001", "threshold_out_of_range", "curve.threshold"],
    ["svc", "65999.999999", "330000", "virtual_quote_out_of_range", "curve.virtualQuote"],
    ["svc", "6600000.000001", "330000", "virtual_quote_out_of_range", "curve.virtualQuote"],
    ["svc", "264000", "65999.999999", "threshold_out_of_range", "curve.threshold"],
    ["svc", "264000", "16500000.000001", "threshold_out_of_range", "curve.threshold"],
    // V is checked before G
    ["sol", "0", "0", "virtual_quote_out_of_range", "curve.virtualQuote"]
  ] as const
  it.each(cases)("%s V=%s G=%s is CURVE_OUT_OF_RANGE %s", (quoteAsset, virtualQuote, threshold, reason, field) => {
    const curve = { virtualQuote, threshold }
    const input = quoteAsset === "sol" ? solInput({ curve }) : svcInput({ curve })
    expect(validateCustomCurve(input)).toMatchObject({ _tag: "Refused", code: "CURVE_OUT_OF_RANGE", reason, field })
  })

  it("the bounds themselves are inside", () => {
    // a big supply so the price ceiling cannot interfere
    const big = { supplyRaw: 10n ** 27n }
    for (const [v, g] of [["1", "1"], ["100", "250"], ["1", "250"]]) {
      expect(validateCustomCurve(solInput({ ...big, curve: { virtualQuote: v, threshold: g } }))._tag).toBe("Accepted")
    }
    for (const [v, g] of [["66000", "66000"], ["6600000", "16500000"]]) {
      expect(validateCustomCurve(svcInput({ ...big, curve: { virtualQuote: v, threshold: g } }))._tag).toBe("Accepted")
    }
  })
})

describe("validateCustomCurve: price ceiling", () => {
  it("refuses V 4 SOL with G 250 SOL on 1e9 tokens, naming the largest G that fits", () => {
    // X = 9.5e14, V·X = 3.8e24, sqrt ≈ 1.9493e12, so G < (1.9493e12 − 4e9)/20 ≈ 97.27 SOL.
    const r = validateCustomCurve(solInput({ curve: { virtualQuote: "4", threshold: "250" } }))
    expect(r).toMatchObject({ _tag: "Refused", code: "CURVE_OUT_OF_RANGE", reason: "price_ceiling", field: "curve.threshold" })
    if (r._tag !== "Refused" || r.maxThresholdRaw === undefined) throw new Error("expected maxThresholdRaw")
    const max = BigInt(r.maxThresholdRaw)
    const x = tokenReserveRaw(SUPPLY, 500n)
    expect(max > 97n * SOL && max < 98n * SOL).toBe(true)
    expect(fits(4n * SOL, max, x)).toBe(true)
    expect(fits(4n * SOL, max + 1n, x)).toBe(false)
    // and the named threshold is then accepted
    const again = validateCustomCurve(solInput({ curve: { virtualQuote: "4", threshold: formatUnits(max, 9) } }))
    expect(again).toEqual({ _tag: "Accepted", virtualQuoteRaw: 4n * SOL, thresholdRaw: max })
  })

  it("the staker allocation of this request sets X", () => {
    // V = 100 SOL on supply 1e14: G_max = (isqrt(1e11·X − 1) − 1e11)/20
    //   50 bps:   X = 9.95e13, sqrt(9.95e24) ≈ 3.1544e12 → ≈ 152.7 SOL
    //   1000 bps: X = 9e13,    sqrt(9e24)    = 3e12      → 144.999999999 SOL (the square must stay strictly below)
    const at = (bps: bigint) =>
      validateCustomCurve(
        solInput({ supplyRaw: 10n ** 14n, stakerAllocationBps: bps, curve: { virtualQuote: "100", threshold: "150" } })
      )
    expect(at(50n)._tag).toBe("Accepted")
    expect(at(1000n)).toMatchObject({ reason: "price_ceiling", maxThresholdRaw: "144999999999" })
  })

  it("equality is refused: the ceiling is strict", () => {
    // V = 100 SOL, X = 9e13: V + 20·145 SOL = 3e12 and (3e12)² = 9e24 = V·X exactly
    const at = (threshold: string) =>
      validateCustomCurve(
        solInput({ supplyRaw: 10n ** 14n, stakerAllocationBps: 1000n, curve: { virtualQuote: "100", threshold } })
      )
    expect(at("145")).toMatchObject({ code: "CURVE_OUT_OF_RANGE", reason: "price_ceiling" })
    expect(at("144.999999999")._tag).toBe("Accepted")
  })

  it('says "0" when no threshold fits', () => {
    // supply 1e9 raw: X = 995,000,000 < V = 1e9, so even G = 0 breaks V² < V·X
    const r = validateCustomCurve(solInput({ supplyRaw: 1_000_000_000n, stakerAllocationBps: 50n, curve: { virtualQuote: "1", threshold: "1" } }))
    expect(r).toMatchObject({ reason: "price_ceiling", maxThresholdRaw: "0" })
  })

  it("maxThresholdRaw fits and one more does not, for any V and X", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 16n }), fc.bigInt({ min: 1n, max: 10n ** 27n }), (v, x) => {
        const max = maxThresholdRaw(v, x)
        expect(max >= 0n).toBe(true)
        if (max > 0n) expect(fits(v, max, x)).toBe(true)
        expect(fits(v, max + 1n, x)).toBe(false)
      })
    )
  })
})

describe("validateCustomCurve: dev buy", () => {
  it("allows exactly 10% of G and refuses one raw unit more", () => {
    // G = 5 SOL: 10% = 0.5 SOL, which is also the default ceiling
    expect(validateCustomCurve(solInput({ buyAmountRaw: SOL / 2n }))._tag).toBe("Accepted")
    expect(validateCustomCurve(solInput({ buyAmountRaw: SOL / 2n + 1n, devBuyCeilingRaw: SOL }))).toMatchObject({
      _tag: "Refused",
      code: "DEV_BUY_TOO_HIGH",
      field: "buyAmount",
      reason: "curve_dev_buy_cap"
    })
  })

  it("compares exactly when G is not a multiple of 10", () => {
    // G = 5000000001 raw: 10% = 500000000.1, so 500000000 fits and 500000001 does not
    const curve = { virtualQuote: "4", threshold: "5.000000001" }
    expect(validateCustomCurve(solInput({ curve, devBuyCeilingRaw: SOL, buyAmountRaw: 500_000_000n }))._tag).toBe("Accepted")
    expect(validateCustomCurve(solInput({ curve, devBuyCeilingRaw: SOL, buyAmountRaw: 500_000_001n }))).toMatchObject({
      reason: "curve_dev_buy_cap"
    })
  })

  it("also refuses a buy over the ordinary ceiling though under 10% of G", () => {
    const curve = { virtualQuote: "4", threshold: "50" }
    expect(validateCustomCurve(solInput({ curve, buyAmountRaw: SOL / 2n }))._tag).toBe("Accepted")
    expect(validateCustomCurve(solInput({ curve, buyAmountRaw: SOL / 2n + 1n }))).toMatchObject({
      code: "DEV_BUY_TOO_HIGH",
      reason: "curve_dev_buy_cap",
      field: "buyAmount"
    })
    expect(validateCustomCurve(svcInput({ buyAmountRaw: 2_000_000n * SVC + 1n, curve: { virtualQuote: "264000", threshold: "330000" } }))).toMatchObject({
      reason: "curve_dev_buy_cap"
    })
  })

  it("the price ceiling is checked before the dev buy", () => {
    expect(validateCustomCurve(solInput({ curve: { virtualQuote: "4", threshold: "250" }, buyAmountRaw: 100n * SOL }))).toMatchObject({
      reason: "price_ceiling"
    })
  })
})

describe("exp-a/b/c presets", () => {
  it("hold the spec's values", () => {
    expect(EXP_PRESET_CURVES["exp-a"].sol).toEqual({ virtualQuoteRaw: 4_000_000_000n, thresholdRaw: 5_000_000_000n })
    expect(EXP_PRESET_CURVES["exp-b"].sol).toEqual({ virtualQuoteRaw: 6_000_000_000n, thresholdRaw: 5_000_000_000n })
    expect(EXP_PRESET_CURVES["exp-c"].sol).toEqual({ virtualQuoteRaw: 8_000_000_000n, thresholdRaw: 5_000_000_000n })
    expect(EXP_PRESET_CURVES["exp-a"].svc).toEqual({ virtualQuoteRaw: 264_000_000_000n, thresholdRaw: 330_000_000_000n })
    expect(EXP_PRESET_CURVES["exp-b"].svc).toEqual({ virtualQuoteRaw: 396_000_000_000n, thresholdRaw: 330_000_000_000n })
    expect(EXP_PRESET_CURVES["exp-c"].svc).toEqual({ virtualQuoteRaw: 528_000_000_000n, thresholdRaw: 330_000_000_000n })
  })

  it("equal exp-custom with the same V and G: same raw values, same curveTerms", () => {
    const whole = { sol: { decimals: 9, firstBuy: SOL }, svc: { decimals: 6, firstBuy: 66_000n * SVC } } as const
    fc.assert(
      fc.property(
        fc.constantFrom("exp-a", "exp-b", "exp-c"),
        fc.constantFrom("sol", "svc"),
        fc.constantFrom({ supply: 10n ** 15n, decimals: 6 }, { supply: 10n ** 27n, decimals: 18 }),
        fc.bigInt({ min: 50n, max: 1000n }),
        fc.bigInt({ min: 0n, max: 500n }),
        (mode, quote, token, stakerBps, feeBps) => {
          const preset = EXP_PRESET_CURVES[mode][quote]
          const { decimals, firstBuy } = whole[quote]
          const r = validateCustomCurve({
            quoteAsset: quote,
            curve: { virtualQuote: formatUnits(preset.virtualQuoteRaw, decimals), threshold: formatUnits(preset.thresholdRaw, decimals) },
            stakerAllocationBps: stakerBps,
            supplyRaw: token.supply,
            buyAmountRaw: preset.thresholdRaw / 10n,
            devBuyCeilingRaw: preset.thresholdRaw
          })
          expect(r).toEqual({ _tag: "Accepted", ...preset })
          if (r._tag !== "Accepted") return
          const terms = (c: { virtualQuoteRaw: bigint; thresholdRaw: bigint }) =>
            curveTerms({
              symbol: quote,
              quoteDecimals: decimals,
              virtualQuoteRaw: c.virtualQuoteRaw,
              thresholdRaw: c.thresholdRaw,
              supplyRaw: token.supply,
              tokenDecimals: token.decimals,
              stakerAllocationBps: stakerBps,
              feeBps,
              firstBuyInRaw: firstBuy
            })
          expect(terms(r)).toEqual(terms(preset))
        }
      )
    )
  })

  it("the svc presets are the SOL presets at 66,000 units per SOL", () => {
    for (const mode of ["exp-a", "exp-b", "exp-c"] as const) {
      const { sol, svc } = EXP_PRESET_CURVES[mode]
      expect(svc.virtualQuoteRaw * SOL).toBe(sol.virtualQuoteRaw * 66_000n * SVC)
      expect(svc.thresholdRaw * SOL).toBe(sol.thresholdRaw * 66_000n * SVC)
    }
  })
})
