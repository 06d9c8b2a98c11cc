import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ApiError } from "../src/domain/ApiError.js"
import { compareDecimal, type FeedPlan, matches, parseFeedPlan, project, sortRows } from "./FeedQuery.js"

const plan = (q: string): FeedPlan => {
  const p = parseFeedPlan(new URLSearchParams(q))
  if (p instanceof ApiError) throw new Error(`${p.field}: ${p.message}`)
  return p
}
const refusal = (q: string) => {
  const p = parseFeedPlan(new URLSearchParams(q))
  return p instanceof ApiError ? { code: p.code, field: p.field } : undefined
}

const rows = [
  { chain: "solana", address: "A", price: "0.000000031", progressBps: 6000, volume24h: "12.5", lifecycle: "trading", lastTradeAt: null },
  { chain: "solana", address: "B", price: "0.00000003", progressBps: 9000, volume24h: "100", lifecycle: "trading", lastTradeAt: "2026-11-21T09:00:00.000Z" },
  { chain: "hood", address: "C", price: null, progressBps: 5000, volume24h: "12.50", lifecycle: "completed", lastTradeAt: "2026-11-21T08:00:00.000Z" }
]

describe("feed query grammar", () => {
  it("compares decimals exactly", () => {
    expect(compareDecimal("12.5", "12.50")).toBe(0)
    expect(compareDecimal("0.000000031", "0.00000003")).toBe(1)
    expect(compareDecimal("-1", "0")).toBe(-1)
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (a, b, d) => {
        const f = (v: bigint) => {
          const neg = v < 0n
          const s = (neg ? -v : v).toString().padStart(d + 1, "0")
          return (neg ? "-" : "") + (d === 0 ? s : `${s.slice(0, -d)}.${s.slice(-d)}`)
        }
        expect(compareDecimal(f(a), f(b))).toBe(a < b ? -1 : a > b ? 1 : 0)
      })
    )
  })

  it("filters with every operator, null never matching", () => {
    expect(rows.filter((r) => matches(plan("where=progressBps>=6000"), r)).map((r) => r.address)).toEqual(["A", "B"])
    expect(rows.filter((r) => matches(plan("where=volume24h=12.5"), r)).map((r) => r.address)).toEqual(["A", "C"])
    expect(rows.filter((r) => matches(plan("where=lifecycle!=trading"), r)).map((r) => r.address)).toEqual(["C"])
    expect(rows.filter((r) => matches(plan("where=price>0.00000003"), r)).map((r) => r.address)).toEqual(["A"])
    expect(rows.filter((r) => matches(plan("where=progressBps<9000,volume24h<=12.5"), r)).map((r) => r.address)).toEqual(["A", "C"])
    expect(rows.filter((r) => matches(plan("where=lastTradeAt>2026-11-21T08:30:00Z"), r)).map((r) => r.address)).toEqual(["B"])
  })

  it("sorts stably, nulls last, both directions", () => {
    expect(sortRows(plan("sort=-progressBps"), rows).map((r) => r.address)).toEqual(["B", "A", "C"])
    expect(sortRows(plan("sort=price"), rows).map((r) => r.address)).toEqual(["B", "A", "C"])
    expect(sortRows(plan("sort=-price"), rows).map((r) => r.address)).toEqual(["A", "B", "C"])
    expect(sortRows(plan("sort=volume24h"), rows).map((r) => r.address)).toEqual(["A", "C", "B"])
  })

  it("projects fields, always keeping chain and address", () => {
    expect(project(plan("fields=price"), rows[0]!)).toEqual({ chain: "solana", address: "A", price: "0.000000031" })
  })

  it("refuses malformed queries naming the parameter", () => {
    expect(refusal("where=progress>=1")).toEqual({ code: "VALIDATION_FAILED", field: "where" })
    expect(refusal("where=progressBps~1")).toEqual({ code: "VALIDATION_FAILED", field: "where" })
    expect(refusal("where=price>abc")).toEqual({ code: "VALIDATION_FAILED", field: "where" })
    expect(refusal("where=lastTradeAt>yesterday")).toEqual({ code: "VALIDATION_FAILED", field: "where" })
    expect(refusal(`where=${Array(17).fill("trades1h>1").join(",")}`)).toEqual({ code: "VALIDATION_FAILED", field: "where" })
    expect(refusal("sort=-nope")).toEqual({ code: "VALIDATION_FAILED", field: "sort" })
    expect(refusal("fields=price,nope")).toEqual({ code: "VALIDATION_FAILED", field: "fields" })
    for (const l of ["0", "201", "-1", "1.5", "x"]) expect(refusal(`limit=${l}`)).toEqual({ code: "VALIDATION_FAILED", field: "limit" })
    expect(plan("limit=200").limit).toBe(200)
    expect(plan("").limit).toBe(50)
  })
})
