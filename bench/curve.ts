/**
 * In-process throughput of `quoteBuy`/`quoteSell` (src/domain/CurveMath.ts): the pure-math floor
 * under the quote route, before any HTTP, JSON or lookup. States are reached the way the chain
 * reaches them (buys from `initialState` on the economics matrix's own tiers), on both crossing
 * models and both amount scales (6-decimal Solana tokens, 18-decimal Hood tokens, whose bigints
 * are longer). Amounts vary per call so no call repeats its predecessor; results feed a sink so
 * the work cannot be dropped.
 *
 * Timing: a warm-up, then rounds of a calibrated batch timed with `process.hrtime.bigint`; the
 * median round is reported (robust to a GC pause or a noisy neighbour in one round).
 */
import {
  type BuyResult,
  type CurveParams,
  type CurveState,
  initialState,
  quoteBuy,
  quoteSell,
  type SellResult,
  tokenReserveRaw
} from "../src/domain/CurveMath.js"
import { DEFAULT_STAKER_ALLOCATION_BPS, findEconomics } from "../src/domain/Economics.js"
import type { Chain } from "../src/domain/Chain.js"

export interface CurveCase {
  readonly name: string
  readonly run: (i: number) => BuyResult | SellResult
  /** The path the case means to time; checked before timing, so a refusal never passes for speed. */
  readonly crossesGraduation: boolean
}

export interface CurveCaseResult {
  readonly name: string
  readonly opsPerSec: number
  readonly nsPerOp: number
  readonly rounds: number
  readonly opsTimed: number
}

export interface CurveBenchOptions {
  /** Measured time per case, seconds (after the warm-up). */
  readonly secondsPerCase: number
  readonly warmupSeconds: number
  readonly log: (line: string) => void
}

const BPS = 10_000n
/** Spread of the amounts cycled through per case (power of two: index by mask). */
const VARIANTS = 1024

const paramsOf = (chain: Chain, quoteAsset: string): CurveParams => {
  const e = findEconomics(chain, quoteAsset)
  const tier = e?.tiers[0]
  if (e === undefined || tier === undefined) throw new Error(`no economics for ${chain}/${quoteAsset}`)
  return {
    virtualQuoteRaw: tier.virtualQuoteRaw,
    thresholdRaw: tier.thresholdRaw,
    tokenReserveRaw: tokenReserveRaw(e.tokenSupplyRaw, DEFAULT_STAKER_ALLOCATION_BPS),
    feeBps: e.curveFeeBps,
    crossingModel: chain === "solana" ? "full-fill-surplus" : "capped-refund"
  }
}

/** The state after buys whose net (after fee) raises `realQuote` to `targetRaw`. */
const stateAt = (p: CurveParams, targetRaw: bigint): CurveState => {
  const gross = (targetRaw * BPS + (BPS - p.feeBps - 1n)) / (BPS - p.feeBps)
  const r = quoteBuy(p, initialState(p), gross)
  if (r._tag !== "Filled" || r.next.complete) throw new Error("bench state did not fill below graduation")
  return r.next
}

/** `base` plus a small per-variant offset, so consecutive calls differ. */
const amounts = (base: bigint, step: bigint): ReadonlyArray<bigint> =>
  Array.from({ length: VARIANTS }, (_, i) => base + BigInt(i) * step)

export const curveCases = (): ReadonlyArray<CurveCase> => {
  const sol = paramsOf("solana", "sol")
  const eth = paramsOf("hood", "eth")
  const solHalf = stateAt(sol, sol.thresholdRaw / 2n)
  const solNearG = stateAt(sol, sol.thresholdRaw - 1_000_000_000n) // 1 SOL short
  const ethHalf = stateAt(eth, eth.thresholdRaw / 2n)
  const ethNearG = stateAt(eth, eth.thresholdRaw - 100_000_000_000_000_000n) // 0.1 ETH short

  const buy = (p: CurveParams, s: CurveState, xs: ReadonlyArray<bigint>) => (i: number) => quoteBuy(p, s, xs[i & (VARIANTS - 1)]!)
  const sell = (p: CurveParams, s: CurveState, xs: ReadonlyArray<bigint>) => (i: number) => quoteSell(p, s, xs[i & (VARIANTS - 1)]!)
  const sold = (p: CurveParams, s: CurveState) => p.tokenReserveRaw - s.virtualTokenRaw

  return [
    { name: "solana SOL: buy 1 SOL on a new curve", run: buy(sol, initialState(sol), amounts(1_000_000_000n, 997n)), crossesGraduation: false },
    { name: "solana SOL: buy 1 SOL at 50% progress", run: buy(sol, solHalf, amounts(1_000_000_000n, 997n)), crossesGraduation: false },
    { name: "solana SOL: sell 1% of sold tokens at 50%", run: sell(sol, solHalf, amounts(sold(sol, solHalf) / 100n, 991n)), crossesGraduation: false },
    { name: "solana SOL: buy 2 SOL crossing graduation (full fill)", run: buy(sol, solNearG, amounts(2_000_000_000n, 997n)), crossesGraduation: true },
    { name: "hood ETH: buy 0.05 ETH at 50% progress", run: buy(eth, ethHalf, amounts(50_000_000_000_000_000n, 997_000_000n)), crossesGraduation: false },
    { name: "hood ETH: sell 1% of sold tokens at 50%", run: sell(eth, ethHalf, amounts(sold(eth, ethHalf) / 100n, 991_000_000n)), crossesGraduation: false },
    { name: "hood ETH: buy 1 ETH crossing graduation (capped refund)", run: buy(eth, ethNearG, amounts(1_000_000_000_000_000_000n, 997_000_000n)), crossesGraduation: true }
  ]
}

let sink = 0n

const timeBatch = (c: CurveCase, n: number): bigint => {
  const t0 = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    const r = c.run(i)
    if (r._tag === "Filled") sink ^= r.amountOut
  }
  return process.hrtime.bigint() - t0
}

const check = (c: CurveCase): void => {
  for (let i = 0; i < VARIANTS; i++) {
    const r = c.run(i)
    const crosses = r._tag === "Filled" && "crossesGraduation" in r && r.crossesGraduation
    if (r._tag !== "Filled" || crosses !== c.crossesGraduation) {
      throw new Error(`curve case '${c.name}' took another path at variant ${i}: ${r._tag === "Filled" ? "crossing " + String(crosses) : r.reason}`)
    }
  }
}

const measure = (c: CurveCase, o: CurveBenchOptions): CurveCaseResult => {
  check(c)
  // Calibrate a batch of ~20 ms, warming up as we go.
  let batch = 1_000
  for (;;) {
    const ns = Number(timeBatch(c, batch))
    if (ns >= 20e6 || batch >= 1 << 26) break
    batch = Math.max(batch * 2, Math.ceil((batch * 20e6) / Math.max(ns, 1)))
  }
  const warmupEnd = process.hrtime.bigint() + BigInt(Math.round(o.warmupSeconds * 1e9))
  while (process.hrtime.bigint() < warmupEnd) timeBatch(c, batch)

  const perOp: number[] = []
  const end = process.hrtime.bigint() + BigInt(Math.round(o.secondsPerCase * 1e9))
  while (perOp.length < 5 || process.hrtime.bigint() < end) perOp.push(Number(timeBatch(c, batch)) / batch)
  perOp.sort((a, b) => a - b)
  const nsPerOp = perOp[perOp.length >> 1]!
  return { name: c.name, opsPerSec: 1e9 / nsPerOp, nsPerOp, rounds: perOp.length, opsTimed: perOp.length * batch }
}

export const runCurveBench = (o: CurveBenchOptions): ReadonlyArray<CurveCaseResult> =>
  curveCases().map((c) => {
    const r = measure(c, o)
    o.log(`curve: ${c.name}: ${Math.round(r.opsPerSec).toLocaleString("en-US")} ops/s, ${r.nsPerOp.toFixed(0)} ns/op`)
    return r
  })

/** Keeps the sink observable (and the results honest) for callers that want to print it. */
export const curveSink = (): bigint => sink
