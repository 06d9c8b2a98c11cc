/**
 * Token safety facts: each flag at and just past its threshold, only the ten largest holders
 * counted, and the trade flags of every lifecycle taken from the market actor's `tradeFlags`.
 */
import { describe, expect, it } from "@effect/vitest"
import { type Lifecycle, tradeFlags } from "../../../actors/market/MarketActor.js"
import { newMarket } from "../../../test/support/marketCores.js"
import { SAFETY_CREATOR_BPS, SAFETY_TOP10_BPS, shareBps, tokenSafety } from "./TokenSafety.js"

const { core } = newMarket("solana", { mint: "So1Safe" })
const supply = core.params.supplyRaw
/** The holding that is exactly `bps` of the supply. */
const atBps = (bps: number) => (supply * BigInt(bps)) / 10_000n
const holder = (heldRaw: bigint) => ({ heldRaw, boughtRaw: heldRaw, soldRaw: 0n })

describe("tokenSafety", () => {
  it("a fresh market with no holders raises nothing", () => {
    expect(tokenSafety(core, [], 0, undefined)).toEqual({
      mode: core.identity.mode,
      buysOpen: true,
      sellsOpen: true,
      holders: 0,
      top10HeldBps: 0,
      creatorHeldBps: 0,
      creatorBoughtRaw: 0n,
      creatorSoldRaw: 0n,
      flags: []
    })
  })

  it("flags the creator holding strictly over 20% of the supply", () => {
    expect(tokenSafety(core, [], 1, holder(atBps(SAFETY_CREATOR_BPS))).flags).toEqual([])
    expect(tokenSafety(core, [], 1, holder(atBps(SAFETY_CREATOR_BPS))).creatorHeldBps).toBe(SAFETY_CREATOR_BPS)
    const over = tokenSafety(core, [], 1, holder(atBps(SAFETY_CREATOR_BPS + 1)))
    expect(over.flags).toEqual(["creator_holds_over_20pct"])
  })

  it("flags the ten largest holders holding strictly over 50%, counting ten only", () => {
    const tenth = atBps(SAFETY_TOP10_BPS / 10)
    const ten = Array.from({ length: 10 }, () => ({ heldRaw: tenth }))
    expect(tokenSafety(core, ten, 10, undefined)).toMatchObject({ top10HeldBps: SAFETY_TOP10_BPS, flags: [] })
    // An eleventh holder is not in the top ten.
    expect(tokenSafety(core, [...ten, { heldRaw: supply }], 11, undefined)).toMatchObject({ top10HeldBps: SAFETY_TOP10_BPS, flags: [] })
    const over = [{ heldRaw: tenth + atBps(1) }, ...ten.slice(1)]
    expect(tokenSafety(core, over, 10, undefined).flags).toEqual(["top10_hold_over_50pct"])
  })

  it("flags a creator who sold, with what the creator bought and sold", () => {
    const s = tokenSafety(core, [], 1, { heldRaw: 5n, boughtRaw: 10n, soldRaw: 5n })
    expect(s).toMatchObject({ creatorBoughtRaw: 10n, creatorSoldRaw: 5n, flags: ["creator_sold"] })
    expect(tokenSafety(core, [], 1, { heldRaw: 10n, boughtRaw: 10n, soldRaw: 0n }).flags).toEqual([])
  })

  it("takes the trade flags of every lifecycle from tradeFlags and flags recovery and graduation", () => {
    const expected: Record<Lifecycle, ReadonlyArray<string>> = {
      trading: [],
      completed: ["graduating_not_tradable"],
      migrated: [],
      recovery: ["market_in_recovery"]
    }
    for (const lifecycle of Object.keys(expected) as Array<Lifecycle>) {
      const s = tokenSafety({ ...core, lifecycle }, [], 0, undefined)
      expect({ buysOpen: s.buysOpen, sellsOpen: s.sellsOpen }).toEqual(tradeFlags(lifecycle))
      expect(s.flags).toEqual(expected[lifecycle])
    }
  })
})

describe("shareBps", () => {
  it("is floored, and 0 of nothing", () => {
    expect(shareBps(1n, 3n)).toBe(3_333)
    expect(shareBps(3n, 3n)).toBe(10_000)
    expect(shareBps(5n, 0n)).toBe(0)
    expect(shareBps(5n, -1n)).toBe(0)
  })
})
