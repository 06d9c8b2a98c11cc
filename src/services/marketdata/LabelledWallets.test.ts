/**
 * The labelled-trades classification: every wallet kind with and without a KOL label, under each
 * `kind` filter; a KOL is never smart money, and no wallet is in both kinds.
 */
import { describe, expect, it } from "@effect/vitest"
import type { WalletKind } from "../tracking/Tracking.js"
import { isKol, type LabelKind, labelledAs } from "./LabelledWallets.js"

const KINDS: ReadonlyArray<WalletKind> = ["smartmoney", "kol", "deployer", "fund"]
const w = (kind: WalletKind, kolId: string | null = null) => ({ kind, kolId })

describe("labelledAs", () => {
  it("classifies each kind, with and without a KOL label", () => {
    const table = KINDS.flatMap((kind) =>
      [null, "k1"].map((kolId) => [`${kind}${kolId === null ? "" : "+kol"}`, labelledAs(w(kind, kolId), "smartmoney"), labelledAs(w(kind, kolId), "kol"), labelledAs(w(kind, kolId), undefined)])
    )
    expect(table).toEqual([
      ["smartmoney", true, false, true],
      ["smartmoney+kol", false, true, true],
      ["kol", false, true, true],
      ["kol+kol", false, true, true],
      ["deployer", false, false, false],
      ["deployer+kol", false, true, true],
      ["fund", false, false, false],
      ["fund+kol", false, true, true]
    ])
  })

  it("never puts a wallet in both kinds, and both-kinds is exactly their union", () => {
    for (const kind of KINDS) {
      for (const kolId of [null, "k1"]) {
        const kinds: ReadonlyArray<LabelKind> = ["smartmoney", "kol"]
        const hits = kinds.filter((k) => labelledAs(w(kind, kolId), k))
        expect(hits.length).toBeLessThanOrEqual(1)
        expect(labelledAs(w(kind, kolId), undefined)).toBe(hits.length === 1)
      }
    }
  })

  it("isKol: the kind or the label", () => {
    expect([isKol(w("kol")), isKol(w("fund", "k")), isKol(w("smartmoney"))]).toEqual([true, true, false])
  })
})
