/**
 * Venue names and which one is active: each chain and lifecycle, the names agreeing with the
 * signal vocabulary (`VENUES`) and the active venue being exactly the market record's current one.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Lifecycle } from "../../../actors/market/MarketActor.js"
import type { VenueTotals } from "../../../clickhouse/queries/TokenReads.js"
import { VENUES } from "../../domain/Signal.js"
import { tokenVenues, venueNameOf } from "./Venues.js"

const totals = (venue: "curve" | "pool"): VenueTotals => ({
  venue,
  trades: 1,
  buys: 1,
  sells: 0,
  volumeQuoteRaw: 1n,
  trades24h: 1,
  volume24hQuoteRaw: 1n,
  firstTradeMs: 0,
  lastTradeMs: 0
})
const LIFECYCLES: ReadonlyArray<Lifecycle> = ["trading", "completed", "migrated", "recovery"]

describe("venues", () => {
  it("names a trade's venue per chain", () => {
    expect([venueNameOf("solana", "curve"), venueNameOf("solana", "pool"), venueNameOf("hood", "curve"), venueNameOf("hood", "pool")]).toEqual([
      "svc-curve",
      "dex",
      "svc-curve",
      "hood-dex"
    ])
  })

  it("marks the venue trading now as active, and none while completed or in recovery", () => {
    const rows = [totals("curve"), totals("pool")]
    const table = (["solana", "hood"] as const).flatMap((chain) =>
      LIFECYCLES.map((lifecycle) => {
        const r = tokenVenues(chain, lifecycle, rows)
        return [chain, lifecycle, r.current, r.venues.filter((v) => v.active).map((v) => v.venue)]
      })
    )
    expect(table).toEqual([
      ["solana", "trading", "svc-curve", ["svc-curve"]],
      ["solana", "completed", null, []],
      ["solana", "migrated", "dex", ["dex"]],
      ["solana", "recovery", null, []],
      ["hood", "trading", "svc-curve", ["svc-curve"]],
      ["hood", "completed", null, []],
      ["hood", "migrated", "hood-dex", ["hood-dex"]],
      ["hood", "recovery", null, []]
    ])
  })

  it("keeps each row's totals, in order, every name in the signal vocabulary", () => {
    const rows = [totals("pool"), totals("curve")]
    const { venues } = tokenVenues("hood", "migrated", rows)
    expect(venues.map((v) => v.totals)).toEqual(rows)
    for (const v of venues) expect(VENUES).toContain(v.venue)
    expect(tokenVenues("solana", "trading", []).venues).toEqual([])
  })
})
