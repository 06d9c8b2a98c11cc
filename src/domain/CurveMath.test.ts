import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  BPS,
  type BuyResult,
  type CrossingModel,
  type CurveParams,
  type CurveState,
  ceilDiv,
  curveTerms,
  DEFAULT_CURVE_FEE_BPS,
  formatUnits,
  initialState,
  isqrt,
  minAmountOut,
  progressBps,
  quoteBuy,
  quoteSell,
  stakerAllocationRaw,
  tokenReserveRaw
} from "./CurveMath.js"

// ---- generators (realistic ranges) ------------------------------------------------------------

const supplyArb = fc.constantFrom(10n ** 15n /* 1e9 tokens, 6 decimals */, 10n ** 27n /* 1e9 tokens, 18 decimals */)

const paramsArb = (crossing?: CrossingModel): fc.Arbitrary<CurveParams> =>
  fc
    .record({
      v: fc.bigInt({ min: 10n ** 9n, max: 10n ** 14n }),
      g: fc.bigInt({ min: 10n ** 9n, max: 3n * 10n ** 14n }),
      supply: supplyArb,
      stakerBps: fc.bigInt({ min: 50n, max: 1000n }),
      fee: fc.bigInt({ min: 0n, max: 500n }),
      crossing: crossing === undefined ? fc.constantFrom<CrossingModel>("full-fill-surplus", "capped-refund") : fc.constant(crossing)
    })
    .map(({ v, g, supply, stakerBps, fee, crossing }) => ({
      virtualQuoteRaw: v,
      thresholdRaw: g,
      tokenReserveRaw: tokenReserveRaw(supply, stakerBps),
      feeBps: fee,
      crossingModel: crossing
    }))

type Op =
  | { readonly kind: "buy"; readonly gBps: bigint; readonly extra: bigint }
  | { readonly kind: "sell"; readonly soldBps: bigint; readonly extra: bigint }

/** Buys sized relative to G (so sequences run many steps before graduating), sells relative to what was sold. */
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("buy" as const),
    // mostly small buys so sequences live long before graduating, sometimes a big one
    gBps: fc.oneof({ arbitrary: fc.bigInt({ min: 0n, max: 300n }), weight: 4 }, { arbitrary: fc.bigInt({ min: 0n, max: 12_000n }), weight: 1 }),
    extra: fc.bigInt({ min: 0n, max: 1_000n }) }),
  fc.record({ kind: fc.constant("sell" as const), soldBps: fc.bigInt({ min: 0n, max: 10_000n }), extra: fc.bigInt({ min: 0n, max: 2n }) })
)
const opsArb = fc.array(opArb, { maxLength: 40 })

const buyAmount = (p: CurveParams, op: { gBps: bigint; extra: bigint }): bigint => (p.thresholdRaw * op.gBps) / BPS + op.extra
const sold = (p: CurveParams, s: CurveState): bigint => p.tokenReserveRaw - s.virtualTokenRaw

/** Runs a sequence, checking the per-step invariants; returns the final state and the ledger. */
const run = (p: CurveParams, ops: readonly Op[]) => {
  let s = initialState(p)
  let netIn = 0n
  let grossOut = 0n
  let tokensOut = 0n
  let tokensIn = 0n
  for (const op of ops) {
    const kBefore = s.virtualQuoteRaw * s.virtualTokenRaw
    if (op.kind === "buy") {
      const amountIn = buyAmount(p, op)
      const q = quoteBuy(p, s, amountIn)
      if (q._tag === "Refused") {
        expect(s.complete || amountIn - ceilDiv(amountIn * p.feeBps, BPS) <= 0n).toBe(true)
        continue
      }
      expect(q.quoteConsumed + q.refund).toBe(amountIn)
      if (p.crossingModel === "full-fill-surplus") {
        expect(q.refund).toBe(0n)
        expect(q.quoteConsumed).toBe(amountIn)
      } else {
        expect(q.next.realQuoteRaw <= p.thresholdRaw).toBe(true)
        expect(q.refund > 0n).toBe(q.next.realQuoteRaw === p.thresholdRaw && q.quoteConsumed < amountIn)
      }
      expect(q.crossesGraduation).toBe(s.realQuoteRaw < p.thresholdRaw && q.next.realQuoteRaw >= p.thresholdRaw)
      netIn += q.quoteConsumed - q.fee
      tokensOut += q.amountOut
      s = q.next
    } else {
      const t = (sold(p, s) * op.soldBps) / BPS + op.extra
      const q = quoteSell(p, s, t)
      if (q._tag === "Refused") {
        expect(s.complete || t === 0n || t > sold(p, s)).toBe(true)
        continue
      }
      expect(q.grossOut <= s.realQuoteRaw).toBe(true)
      expect(q.amountOut + q.fee).toBe(q.grossOut)
      grossOut += q.grossOut
      tokensIn += t
      s = q.next
    }
    expect(s.virtualQuoteRaw * s.virtualTokenRaw >= kBefore).toBe(true)
    expect(s.realQuoteRaw).toBe(netIn - grossOut)
    expect(s.virtualQuoteRaw - s.realQuoteRaw).toBe(p.virtualQuoteRaw)
    expect(sold(p, s)).toBe(tokensOut - tokensIn)
    expect(s.realQuoteRaw >= 0n).toBe(true)
    expect(s.complete).toBe(s.realQuoteRaw >= p.thresholdRaw)
    if (p.crossingModel === "capped-refund") expect(s.realQuoteRaw <= p.thresholdRaw).toBe(true)
  }
  return s
}

const filledOut = (q: BuyResult): bigint => (q._tag === "Filled" ? q.amountOut : 0n)

// ---- helpers ----------------------------------------------------------------------------------

describe("ceilDiv and isqrt", () => {
  it("rounds up only when there is a remainder, for every sign", () => {
    expect(ceilDiv(10n, 5n)).toBe(2n)
    expect(ceilDiv(11n, 5n)).toBe(3n)
    expect(ceilDiv(0n, 5n)).toBe(0n)
    expect(ceilDiv(-11n, 5n)).toBe(-2n)
    expect(ceilDiv(11n, -5n)).toBe(-2n)
    expect(ceilDiv(-11n, -5n)).toBe(3n)
    expect(() => ceilDiv(1n, 0n)).toThrow(RangeError)
  })

  it("ceilDiv is the least q with q*b >= a", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 128n }), fc.bigInt({ min: 1n, max: 2n ** 64n }), (a, b) => {
        const q = ceilDiv(a, b)
        expect(q * b >= a).toBe(true)
        expect((q - 1n) * b < a).toBe(true)
      })
    )
  })

  it("isqrt is the exact floor square root", () => {
    expect([0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n].map(isqrt)).toEqual([0n, 1n, 1n, 1n, 2n, 3n, 4n, 4n])
    expect(isqrt(10n ** 40n)).toBe(10n ** 20n)
    expect(isqrt(10n ** 40n - 1n)).toBe(10n ** 20n - 1n)
    expect(() => isqrt(-1n)).toThrow(RangeError)
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n }), (n) => {
        const r = isqrt(n)
        expect(r * r <= n).toBe(true)
        expect((r + 1n) * (r + 1n) > n).toBe(true)
      })
    )
  })

  it("staker allocation is floored, the reserve is the rest", () => {
    expect(stakerAllocationRaw(10n ** 15n, 500n)).toBe(5n * 10n ** 13n)
    expect(stakerAllocationRaw(12_345n, 50n)).toBe(61n) // 61.725 floored
    expect(tokenReserveRaw(12_345n, 50n)).toBe(12_284n)
  })

  it("formatUnits is exact and trimmed", () => {
    expect(formatUnits(85_000_000_000n, 9)).toBe("85")
    expect(formatUnits(4_500_000_000n, 9)).toBe("4.5")
    expect(formatUnits(1n, 9)).toBe("0.000000001")
    expect(formatUnits(0n, 9)).toBe("0")
    expect(formatUnits(-1_500_000n, 6)).toBe("-1.5")
    expect(formatUnits(10n ** 30n + 7n, 18)).toBe("1000000000000.000000000000000007")
    expect(formatUnits(42n, 0)).toBe("42")
  })
})

// ---- hand-computed cases ----------------------------------------------------------------------

describe("crossing arithmetic, worked by hand", () => {
  // V = 1000, G = 500, X = 1,000,000, fee 100 bps, virgin curve, buy of 1000.
  // fee = ceil(1000·100/10000) = 10, net = 990 > G − real = 500.
  const base = { virtualQuoteRaw: 1000n, thresholdRaw: 500n, tokenReserveRaw: 1_000_000n, feeBps: 100n }

  it("Hood caps at the threshold and refunds the rest", () => {
    // r = 500; g = ceil(500·10000/9900) = ceil(505.05) = 506; fee(506) = ceil(5.06) = 6 = g − r.
    // refund = 1000 − 506 = 494; out = floor(1e6·500/1500) = 333333.
    const p: CurveParams = { ...base, crossingModel: "capped-refund" }
    expect(quoteBuy(p, initialState(p), 1000n)).toEqual({
      _tag: "Filled",
      amountOut: 333_333n,
      fee: 6n,
      quoteConsumed: 506n,
      refund: 494n,
      crossesGraduation: true,
      next: { virtualQuoteRaw: 1500n, virtualTokenRaw: 666_667n, realQuoteRaw: 500n, complete: true }
    })
  })

  it("Solana fills in full and keeps the surplus", () => {
    // out = floor(1e6·990/1990) = floor(497487.43) = 497487; real = 990 > G.
    const p: CurveParams = { ...base, crossingModel: "full-fill-surplus" }
    expect(quoteBuy(p, initialState(p), 1000n)).toEqual({
      _tag: "Filled",
      amountOut: 497_487n,
      fee: 10n,
      quoteConsumed: 1000n,
      refund: 0n,
      crossesGraduation: true,
      next: { virtualQuoteRaw: 1990n, virtualTokenRaw: 502_513n, realQuoteRaw: 990n, complete: true }
    })
  })

  it("a Hood buy whose net lands exactly on G is not capped", () => {
    // 506 gross: fee ceil(5.06) = 6, net 500 = G: plain fill, no refund, graduates.
    const p: CurveParams = { ...base, crossingModel: "capped-refund" }
    const q = quoteBuy(p, initialState(p), 506n)
    expect(q).toMatchObject({ _tag: "Filled", fee: 6n, quoteConsumed: 506n, refund: 0n, crossesGraduation: true })
    expect(q._tag === "Filled" && q.next.realQuoteRaw).toBe(500n)
    // one raw unit less stays below G and does not graduate
    expect(quoteBuy(p, initialState(p), 505n)).toMatchObject({ _tag: "Filled", refund: 0n, crossesGraduation: false })
    // one raw unit more: fee ceil(5.07) = 6, net 501 > 500, so capped at g = 506 with 1 refunded
    expect(quoteBuy(p, initialState(p), 507n)).toMatchObject({ _tag: "Filled", fee: 6n, quoteConsumed: 506n, refund: 1n })
  })

  it("a sell prices on the curve left by the buy", () => {
    // After buying 200 gross on V=1000, X=1e6, fee 100: fee 2, net 198, out = floor(1e6·198/1198) = 165275.
    // Selling it back: gross = floor(1198·165275/(834725+165275)) = floor(197.999...) = 197, fee ceil(1.97) = 2.
    const p: CurveParams = { ...base, crossingModel: "capped-refund" }
    const b = quoteBuy(p, initialState(p), 200n)
    if (b._tag !== "Filled") throw new Error("expected a fill")
    expect(b.amountOut).toBe(165_275n)
    expect(quoteSell(p, b.next, 165_275n)).toEqual({
      _tag: "Filled",
      amountOut: 195n,
      fee: 2n,
      grossOut: 197n,
      next: { virtualQuoteRaw: 1001n, virtualTokenRaw: 1_000_000n, realQuoteRaw: 1n, complete: false }
    })
  })
})

describe("refusals", () => {
  const p: CurveParams = {
    virtualQuoteRaw: 1000n,
    thresholdRaw: 500n,
    tokenReserveRaw: 1_000_000n,
    feeBps: DEFAULT_CURVE_FEE_BPS,
    crossingModel: "capped-refund"
  }
  const s0 = initialState(p)

  it("zero, negative, and all-fee buys are zero_amount; 2 raw units fill", () => {
    expect(quoteBuy(p, s0, 0n)).toEqual({ _tag: "Refused", reason: "zero_amount" })
    expect(quoteBuy(p, s0, -5n)).toEqual({ _tag: "Refused", reason: "zero_amount" })
    expect(quoteBuy(p, s0, 1n)).toEqual({ _tag: "Refused", reason: "zero_amount" }) // fee ceil(0.01) = 1
    expect(quoteBuy(p, s0, 2n)._tag).toBe("Filled")
  })

  it("a sell of 0, or of more than the curve has sold, is refused", () => {
    const b = quoteBuy(p, s0, 100n)
    if (b._tag !== "Filled") throw new Error("expected a fill")
    expect(quoteSell(p, b.next, 0n)).toEqual({ _tag: "Refused", reason: "zero_amount" })
    expect(quoteSell(p, b.next, b.amountOut + 1n)).toEqual({ _tag: "Refused", reason: "exceeds_curve_supply" })
    expect(quoteSell(p, b.next, b.amountOut)._tag).toBe("Filled")
    expect(quoteSell(p, s0, 1n)).toEqual({ _tag: "Refused", reason: "exceeds_curve_supply" })
  })

  it("a complete curve refuses both sides", () => {
    const b = quoteBuy(p, s0, 10_000n)
    if (b._tag !== "Filled") throw new Error("expected a fill")
    expect(b.next.complete).toBe(true)
    expect(quoteBuy(p, b.next, 10n)).toEqual({ _tag: "Refused", reason: "curve_complete" })
    expect(quoteSell(p, b.next, 1n)).toEqual({ _tag: "Refused", reason: "curve_complete" })
  })
})

describe("curveTerms", () => {
  it("matches a curve worked by hand (exp-a on SOL)", () => {
    // V = 4 SOL = 4e9, G = 5 SOL = 5e9, supply 1e15 (1e9 tokens, 6 decimals), staker 500 bps:
    //   X = 1e15 − 5e13 = 9.5e14.
    // startFdv   = V·supply/X = 4e9·1e15/9.5e14 = 8e10/19 = 4210526315.78… lamports → "4.210526315"
    // bondingFdv = (V+G)²·supply/(V·X) = 81e18·1e15/(4e9·9.5e14) = 81e33/3.8e24 = 21315789473.68… → "21.315789473"
    // supplySoldPct = X·G/(V+G)/supply·100 = 0.95·5/9·100 = 52.777… → "52.77"
    // first buy of 1 SOL: fee = ceil(1e9·100/1e4) = 1e7, net = 9.9e8,
    //   out = floor(9.5e14·9.9e8/(4e9+9.9e8)) = floor(9.405e23/4.99e9) = 188476953907815 (rem 3.15e9)
    //   firstBuySupplyPct = 188476953907815/1e15·100 = 18.847… → "18.84"
    expect(
      curveTerms({
        symbol: "sol",
        quoteDecimals: 9,
        virtualQuoteRaw: 4_000_000_000n,
        thresholdRaw: 5_000_000_000n,
        supplyRaw: 10n ** 15n,
        tokenDecimals: 6,
        stakerAllocationBps: 500n,
        feeBps: 100n,
        firstBuyInRaw: 1_000_000_000n
      })
    ).toEqual({
      symbol: "sol",
      virtualQuoteRaw: "4000000000",
      thresholdRaw: "5000000000",
      raise: "5",
      startFdv: "4.210526315",
      bondingFdv: "21.315789473",
      supplySoldPct: "52.77",
      firstBuyRaw: "188476953907815",
      firstBuySupplyPct: "18.84"
    })
  })

  it("writes a fractional raise and keeps two decimals on round percents", () => {
    // V = 1 SOL, G = 4.5 SOL, X = supply (0 bps): sold = 4.5/5.5 = 81.8181…% → "81.81";
    // no fee, first buy 1 SOL: out = floor(1e15·1e9/2e9) = 5e14 → exactly "50.00".
    const t = curveTerms({
      symbol: "sol",
      quoteDecimals: 9,
      virtualQuoteRaw: 1_000_000_000n,
      thresholdRaw: 4_500_000_000n,
      supplyRaw: 10n ** 15n,
      tokenDecimals: 6,
      stakerAllocationBps: 0n,
      feeBps: 0n,
      firstBuyInRaw: 1_000_000_000n
    })
    expect(t).toMatchObject({ raise: "4.5", startFdv: "1", bondingFdv: "30.25", supplySoldPct: "81.81" })
    expect(t).toMatchObject({ firstBuyRaw: "500000000000000", firstBuySupplyPct: "50.00" })
  })
})

// ---- properties -------------------------------------------------------------------------------

describe("properties", () => {
  it("no trade creates value: real = Σnet in − Σgross out, k never decreases (checked each step)", () => {
    fc.assert(
      fc.property(paramsArb(), opsArb, (p, ops) => {
        run(p, ops)
      }),
      { numRuns: 300 }
    )
  })

  it("buy then sell of exactly the tokens received never returns more than was paid", () => {
    fc.assert(
      fc.property(paramsArb(), opsArb, fc.bigInt({ min: 1n, max: 4_000n }), (p, ops, gBps) => {
        const s = run(p, ops)
        const b = quoteBuy(p, s, (p.thresholdRaw * gBps) / BPS)
        fc.pre(b._tag === "Filled" && !b.next.complete)
        if (b._tag !== "Filled") return
        const sell = quoteSell(p, b.next, b.amountOut)
        if (b.amountOut === 0n) {
          expect(sell).toEqual({ _tag: "Refused", reason: "zero_amount" })
          return
        }
        if (sell._tag !== "Filled") throw new Error(`sell refused: ${sell.reason}`)
        expect(sell.grossOut <= b.quoteConsumed - b.fee).toBe(true)
        expect(sell.amountOut <= b.quoteConsumed).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("quotes are monotonic in the amount", () => {
    fc.assert(
      fc.property(
        paramsArb(),
        opsArb,
        fc.bigInt({ min: 0n, max: 6n * 10n ** 14n }),
        fc.bigInt({ min: 0n, max: 6n * 10n ** 14n }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        fc.bigInt({ min: 0n, max: 10_000n }),
        (p, ops, a, b, sa, sb) => {
          const s = run(p, ops)
          const [lo, hi] = a <= b ? [a, b] : [b, a]
          expect(filledOut(quoteBuy(p, s, lo)) <= filledOut(quoteBuy(p, s, hi))).toBe(true)
          const [tLo, tHi] = [sa <= sb ? sa : sb, sa <= sb ? sb : sa].map((x) => (sold(p, s) * x) / BPS) as [bigint, bigint]
          const out = (t: bigint) => {
            const q = quoteSell(p, s, t)
            return q._tag === "Filled" ? q.amountOut : 0n
          }
          expect(out(tLo) <= out(tHi)).toBe(true)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("Hood: quoteConsumed + refund = amountIn and real never passes G, even on one huge buy", () => {
    fc.assert(
      fc.property(paramsArb("capped-refund"), opsArb, fc.bigInt({ min: 1n, max: 10n ** 16n }), (p, ops, amountIn) => {
        const s = run(p, ops)
        const q = quoteBuy(p, s, amountIn)
        if (q._tag === "Refused") return
        expect(q.quoteConsumed + q.refund).toBe(amountIn)
        expect(q.next.realQuoteRaw <= p.thresholdRaw).toBe(true)
        // the fee always equals the ceil fee on what was consumed
        expect(q.fee).toBe(ceilDiv(q.quoteConsumed * p.feeBps, BPS))
        if (q.refund > 0n) expect(q.next).toMatchObject({ realQuoteRaw: p.thresholdRaw, complete: true })
      }),
      { numRuns: 300 }
    )
  })

  it("Hood: around the cap boundary real lands on G exactly, never past it", () => {
    fc.assert(
      fc.property(paramsArb("capped-refund"), opsArb, fc.bigInt({ min: -3n, max: 3n }), (p, ops, delta) => {
        const s = run(p, ops)
        const remaining = p.thresholdRaw - s.realQuoteRaw
        const amountIn = ceilDiv(remaining * BPS, BPS - p.feeBps) + delta
        const q = quoteBuy(p, s, amountIn)
        if (q._tag === "Refused") {
          expect(s.complete || amountIn <= 1n).toBe(true)
          return
        }
        expect(q.next.realQuoteRaw <= p.thresholdRaw).toBe(true)
        expect(q.next.complete).toBe(delta >= 0n)
        // the net of amountIn (after the ceil fee) is what decides whether the cap applies
        const net = amountIn - ceilDiv(amountIn * p.feeBps, BPS)
        expect(q.refund).toBe(net > remaining ? amountIn - ceilDiv(remaining * BPS, BPS - p.feeBps) : 0n)
      }),
      { numRuns: 300 }
    )
  })

  it("Solana: a crossing buy leaves surplus above G and no refund", () => {
    fc.assert(
      fc.property(paramsArb("full-fill-surplus"), fc.bigInt({ min: 100n, max: 10n ** 9n }), (p, surplus) => {
        // the smallest gross whose net reaches G, plus a surplus of ≥ 100 raw (≥ 95 net at fee ≤ 500 bps)
        const amountIn = ceilDiv(p.thresholdRaw * BPS, BPS - p.feeBps) + surplus
        const q = quoteBuy(p, initialState(p), amountIn)
        if (q._tag !== "Filled") throw new Error(`refused: ${q.reason}`)
        expect(q).toMatchObject({ refund: 0n, quoteConsumed: amountIn, crossesGraduation: true })
        expect(q.next.realQuoteRaw).toBe(amountIn - q.fee)
        expect(q.next.realQuoteRaw > p.thresholdRaw).toBe(true)
        expect(q.next.complete).toBe(true)
      })
    )
  })

  it("progressBps is capped at 10000 and monotone in real", () => {
    fc.assert(
      fc.property(
        paramsArb(),
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        (p, a, b) => {
          const at = (real: bigint) =>
            progressBps(p, { virtualQuoteRaw: p.virtualQuoteRaw + real, virtualTokenRaw: p.tokenReserveRaw, realQuoteRaw: real, complete: real >= p.thresholdRaw })
          const [lo, hi] = a <= b ? [a, b] : [b, a]
          expect(at(lo) <= at(hi)).toBe(true)
          expect(at(hi) <= BPS).toBe(true)
          expect(at(p.thresholdRaw)).toBe(BPS)
          expect(at(p.thresholdRaw - 1n) < BPS).toBe(true)
          expect(at(0n)).toBe(0n)
        }
      )
    )
    const p: CurveParams = { virtualQuoteRaw: 1n, thresholdRaw: 3n, tokenReserveRaw: 1n, feeBps: 0n, crossingModel: "full-fill-surplus" }
    const s = (real: bigint): CurveState => ({ virtualQuoteRaw: 1n + real, virtualTokenRaw: 1n, realQuoteRaw: real, complete: false })
    expect([0n, 1n, 2n, 3n, 7n].map((r) => progressBps(p, s(r)))).toEqual([0n, 3333n, 6666n, 10_000n, 10_000n])
  })

  it("minAmountOut ≤ amountOut, equal at 0 bps, 0 at 10000 bps", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 27n }), fc.bigInt({ min: 0n, max: 10_000n }), (out, bps) => {
        const m = minAmountOut(out, bps)
        expect(m <= out).toBe(true)
        expect(m >= 0n).toBe(true)
        expect(minAmountOut(out, 0n)).toBe(out)
        expect(minAmountOut(out, 10_000n)).toBe(0n)
      })
    )
    expect(minAmountOut(1_000n, 50n)).toBe(995n)
    expect(minAmountOut(999n, 100n)).toBe(989n) // 989.01 floored
    expect(() => minAmountOut(1n, 10_001n)).toThrow(RangeError)
    expect(() => minAmountOut(1n, -1n)).toThrow(RangeError)
  })
})
