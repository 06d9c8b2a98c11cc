/**
 * Exact money: USD truncated toward zero to the micro-dollar, USD per whole token, the quote pair
 * of a market (Hood addresses in any case), and per-quote-asset totals whose USD sum is null only
 * when a non-zero total is unpriced; and the one USD text parser.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { QuotePairs, USDC_MINT, WSOL_MINT } from "../../domain/QuotePairs.js"
import { formatUnits } from "../../domain/CurveMath.js"
import { parseUsdMicros, QuoteTotals, quotePairOf, USD_DECIMALS, usdMicrosOf, usdOf, usdPerToken } from "./Money.js"
import type { UsdPrice } from "./PriceSource.js"

const price = (usdRaw: bigint, scale: number): UsdPrice => ({ asset: "sol", usdRaw, scale, asOfMs: 0, source: "test" })
const sol = QuotePairs.find((p) => p.id === "sol")!
const usdc = QuotePairs.find((p) => p.id === "usdc")!
const hoodPair = QuotePairs.find((p) => p.id === "usdg")!

describe("usdMicrosOf / usdOf", () => {
  it("truncates toward zero to the micro-dollar", () => {
    // 1.2345678 SOL at $150.5 = $185.8024539 → 185.802453.
    expect(usdMicrosOf(1_234_567_800n, 9, price(1505n, 1))).toBe(185_802_453n)
    expect(usdOf(1_234_567_800n, 9, price(1505n, 1))).toBe("185.802453")
    expect(usdOf(-1_234_567_800n, 9, price(1505n, 1))).toBe("-185.802453")
    expect(usdOf(1n, 9, price(150n, 0))).toBe("0")
    expect(usdOf(5n, 9, null)).toBeNull()
    expect(usdMicrosOf(5n, 9, null)).toBeNull()
  })

  it("usdOf writes usdMicrosOf's micro-dollars", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 24n), max: 10n ** 24n }), fc.integer({ min: 0, max: 18 }), fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.integer({ min: 0, max: 18 }), (raw, decimals, usdRaw, scale) => {
          const micros = usdMicrosOf(raw, decimals, price(usdRaw, scale))!
          const text = usdOf(raw, decimals, price(usdRaw, scale))!
          const [w, f = ""] = text.replace("-", "").split(".")
          const back = BigInt(w!) * 1_000_000n + BigInt((f + "000000").slice(0, 6))
          expect(text.startsWith("-") ? -back : back).toBe(micros)
        })
    )
  })
})

describe("usdPerToken", () => {
  it("prices a whole token at the reserves to 18 places; null without a price or reserve", () => {
    // 30 SOL / 1,000,000 tokens (6 decimals) at $150: $0.0045 per token.
    expect(usdPerToken(30n * 10n ** 9n, 10n ** 12n, 6, 9, price(150n, 0))).toBe("0.0045")
    expect(usdPerToken(1n, 0n, 6, 9, price(150n, 0))).toBeNull()
    expect(usdPerToken(1n, 1n, 6, 9, null)).toBeNull()
  })
})

describe("quotePairOf", () => {
  it("finds a market's quote pair on its chain; Hood addresses compare lower-case", () => {
    expect(quotePairOf("solana", WSOL_MINT)).toBe(sol)
    expect(quotePairOf("solana", USDC_MINT)).toBe(usdc)
    expect(quotePairOf("hood", WSOL_MINT)).toBeUndefined()
    expect(quotePairOf("hood", hoodPair.address.toUpperCase().replace("0X", "0x"))).toBe(hoodPair)
    expect(quotePairOf("solana", "unknown")).toBeUndefined()
  })
})

describe("QuoteTotals", () => {
  it("totals per quote asset and sums USD only when every non-zero total is priced", () => {
    const totals = new QuoteTotals()
    totals.add(usdc, null, 0n)
    totals.add(sol, price(150n, 0), 2n * 10n ** 9n)
    totals.add(sol, price(150n, 0), -(10n ** 9n))
    totals.add(undefined, null, 99n)
    expect(totals.byQuote().map((e) => [e.pair.id, e.raw])).toEqual([
      ["sol", 10n ** 9n],
      ["usdc", 0n]
    ])
    // USDC's zero total needs no price.
    expect(totals.usdMicros()).toBe(150_000_000n)
    totals.add(usdc, null, 1n)
    expect(totals.usdMicros()).toBeNull()
    expect(new QuoteTotals().usdMicros()).toBe(0n)
  })
})

describe("parseUsdMicros", () => {
  it("reads a non-negative decimal of at most 6 places as micro-dollars", () => {
    expect(parseUsdMicros("12.5")).toBe(12_500_000n)
    expect(parseUsdMicros("0")).toBe(0n)
    expect(parseUsdMicros("0.000001")).toBe(1n)
    expect(parseUsdMicros("1000000.123456")).toBe(1_000_000_123_456n)
    expect(parseUsdMicros("9".repeat(30))).toBe(BigInt("9".repeat(30)) * 1_000_000n)
  })

  it("refuses anything else", () => {
    for (const bad of ["", "-1", "1.", ".5", "1.1234567", "1e3", " 1", "1,5", "0x10", "9".repeat(31)]) expect(parseUsdMicros(bad), bad).toBeUndefined()
  })

  it("round-trips what formatUnits writes at 6 places", () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), (micros) => parseUsdMicros(formatUnits(micros, USD_DECIMALS)) === micros))
  })
})
