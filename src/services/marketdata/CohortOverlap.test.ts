/**
 * Cohort overlap: each pair's shared wallets and Jaccard overlap, empty cohorts, wallets in every
 * cohort; as a property, the overlap stays within 0..10000 and matches sets built by hand.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { inAllCohorts, overlapPairs } from "./CohortOverlap.js"

describe("overlapPairs", () => {
  it("counts each pair's shared wallets over the union, floored", () => {
    const shared = [{ mints: ["A", "B"] }, { mints: ["A", "B", "C"] }, { mints: ["B", "C"] }]
    expect(overlapPairs(["A", "B", "C"], [{ wallets: 3 }, { wallets: 4 }, { wallets: 2 }], shared)).toEqual([
      { a: "A", b: "B", shared: 2, overlapBps: Math.floor((2 * 10_000) / (3 + 4 - 2)) },
      { a: "A", b: "C", shared: 1, overlapBps: Math.floor(10_000 / (3 + 2 - 1)) },
      { a: "B", b: "C", shared: 2, overlapBps: Math.floor((2 * 10_000) / (4 + 2 - 2)) }
    ])
    expect(inAllCohorts(shared, 3)).toBe(1)
  })

  it("two empty cohorts overlap 0", () => {
    expect(overlapPairs(["A", "B"], [{ wallets: 0 }, { wallets: 0 }], [])).toEqual([{ a: "A", b: "B", shared: 0, overlapBps: 0 }])
    expect(inAllCohorts([], 2)).toBe(0)
  })

  it("agrees with the cohorts as sets", () => {
    const mints = ["A", "B", "C", "D"]
    const cohortsArb = fc.array(fc.subarray(mints), { maxLength: 40 })
    fc.assert(
      fc.property(cohortsArb, (memberships) => {
        // Wallet i is in the cohorts memberships[i].
        const sizes = mints.map((m) => ({ wallets: memberships.filter((ms) => ms.includes(m)).length }))
        const shared = memberships.filter((ms) => ms.length >= 2).map((ms) => ({ mints: ms }))
        for (const p of overlapPairs(mints, sizes, shared)) {
          const inA = new Set(memberships.flatMap((ms, i) => (ms.includes(p.a) ? [i] : [])))
          const inB = new Set(memberships.flatMap((ms, i) => (ms.includes(p.b) ? [i] : [])))
          const both = [...inA].filter((i) => inB.has(i)).length
          const union = new Set([...inA, ...inB]).size
          expect(p.shared).toBe(both)
          expect(p.overlapBps).toBe(union === 0 ? 0 : Math.floor((both * 10_000) / union))
          expect(p.overlapBps >= 0 && p.overlapBps <= 10_000).toBe(true)
        }
        expect(inAllCohorts(shared, mints.length)).toBe(memberships.filter((ms) => ms.length === mints.length).length)
      })
    )
  })
})
