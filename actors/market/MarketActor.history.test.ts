/**
 * The Hood retract window bounded by block depth: kept events a newer event's block has made final
 * (at or below it less `retractDepthBlocks`) are folded into the base, on the market's next event
 * or by `makeTrimHistory` for an idle market; what a reorg can still retract stays retractable.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { decodeMarketState, encodeMarketState } from "./MarketCodec.js"
import { historyHeldUntil, hoodBlockOf, keep, makeStep, makeTrimHistory, type MarketActorConfig, type MarketState, unkeep } from "./MarketActor.js"
import { encodeChainEvent } from "../../ingest/ChainEventCodec.js"

const DEPTH = 10
const config: MarketActorConfig = { retractHistory: { solana: 0, hood: 8 }, retractDepthBlocks: DEPTH }
const step = makeStep(config)
const trim = makeTrimHistory(config)

const run = (events: ReadonlyArray<ChainEvent>, from?: MarketState): MarketState | undefined => {
  let state = from
  for (const e of events) state = step(state, e)[0]
  return state
}

const blockOf = (e: ChainEvent) => hoodBlockOf(e.position)!

describe("MarketActor retract window by block depth (Hood)", () => {
  it("keeps a Hood trade in the kept form (its tx hash once) and a cold event as on the bus; both come back equal", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: `0x${"ab".repeat(20)}` })
    const created = m.created()
    const [trade] = m.buy(`0x${"cd".repeat(20)}`, 10n ** 17n)
    const kept = keep(trade!)
    expect(kept.wire.length).toBe(encodeChainEvent(trade!).length - (trade!.signature.length - 1))
    expect(unkeep(kept)).toEqual(trade)
    expect(kept.block).toBe(blockOf(trade!))
    expect(keep(created).wire).toBe(Buffer.from(encodeChainEvent(created)).toString("latin1"))
    expect(unkeep(keep(created))).toEqual(created)
  })

  it("a new event folds kept events exactly retractDepthBlocks below it, keeps one block less deep", () => {
    const clock = new ChainClock("hood")
    const m = new SimMarket(clock, { mint: "0xdepth" })
    const created = m.created()
    const [b1] = m.buy("alice", 10n ** 17n)
    // b2 lands DEPTH - 1 blocks after b1: b1 is still retractable.
    clock.skipBlocks(DEPTH - 2)
    const [b2] = m.buy("bob", 10n ** 17n)
    expect(blockOf(b2!) - blockOf(b1!)).toBe(DEPTH - 1)
    const s2 = run([created, b1!, b2!])!
    expect(s2.window!.events.map((e) => unkeep(e).id)).toEqual([b1!.id, b2!.id])
    // b3 lands DEPTH blocks after b1: b1 is final, b2 is not.
    const [b3] = m.buy("carol", 10n ** 17n)
    expect(blockOf(b3!) - blockOf(b1!)).toBe(DEPTH)
    const s3 = step(s2, b3!)[0]!
    expect(s3.window!.events.map((e) => unkeep(e).id)).toEqual([b2!.id, b3!.id])
    // The base is the market after b1; retracting b2 rebuilds from it.
    const [undone, outputs] = step(s3, m.retracted([b2!.id]))
    expect(outputs.some((o) => o._tag === "Undone")).toBe(true)
    expect(undone!.core).toEqual(run([created, b1!, b3!])!.core)
    // b1 is beyond the depth: a retraction naming it cannot be resolved and changes nothing.
    const [same, unresolved] = step(s3, m.retracted([b1!.id]))
    expect(same).toBe(s3)
    expect(unresolved).toEqual([{ _tag: "RetractionUnresolved", eventId: expect.any(String), ids: [b1!.id] }])
  })

  it("an idle market keeps no history once the chain is retractDepthBlocks past its last event", () => {
    const clock = new ChainClock("hood")
    const m = new SimMarket(clock, { mint: "0xidle" })
    const events = [m.created(), ...m.buy("alice", 10n ** 17n), ...m.buy("bob", 10n ** 17n)]
    const state = run(events)!
    const last = historyHeldUntil(state)!
    expect(last).toBe(blockOf(events[events.length - 1]!))
    // One block short of the last event's depth: only the older events are folded.
    const partly = trim(state, last + DEPTH - 1)
    expect(partly.window!.events.map(unkeep)).toEqual([events[events.length - 1]])
    expect(partly.core).toBe(state.core)
    expect(trim(partly, last + DEPTH - 1)).toBe(partly)
    const idle = trim(state, last + DEPTH)
    expect(idle.core).toBe(state.core)
    expect(idle.window!.events).toEqual([])
    expect(idle.window!.base).toBe(state.core)
    expect(historyHeldUntil(idle)).toBeUndefined()
    expect(trim(idle, last + 1000)).toBe(idle)
    // The market goes on from there as if never trimmed.
    const [next] = m.buy("carol", 10n ** 17n)
    expect(step(idle, next!)[0]!.core).toEqual(step(state, next!)[0]!.core)
    // The checkpoint keeps the sharing: the base is the core after decoding too.
    const decoded = decodeMarketState(encodeMarketState(idle))
    expect(decoded).toEqual(idle)
    expect(decoded.window!.base).toBe(decoded.core)
  })

  it("property: trimming at any head never changes the core or what a reorg within the depth undoes", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 14 }), fc.nat(30), fc.nat(13), (gaps, extra, pick) => {
        const clock = new ChainClock("hood")
        const m = new SimMarket(clock, { mint: "0xprop" })
        const events: Array<ChainEvent> = [m.created()]
        for (const gap of gaps) {
          clock.skipBlocks(gap)
          events.push(...m.buy(`t${events.length}`, 10n ** 16n))
        }
        const state = run(events)!
        const head = blockOf(events[events.length - 1]!) + extra
        const trimmed = trim(state, head)
        expect(trimmed.core).toBe(state.core)
        // Every event a reorg could still name (block above head − depth) is still in the window.
        const retractable = events.filter((e) => blockOf(e) + DEPTH > head)
        const ids = new Set(retractable.map((e) => e.id))
        const inWindow = state.window!.events.map(unkeep).filter((e) => ids.has(e.id))
        expect(trimmed.window!.events.map(unkeep).filter((e) => ids.has(e.id))).toEqual(inWindow)
        // Undoing one of them gives the same market whether or not the window was trimmed.
        const target = inWindow[pick % Math.max(1, inWindow.length)]
        if (target !== undefined) {
          const retraction = m.retracted([target.id])
          expect(step(trimmed, retraction)[0]!.core).toEqual(step(state, retraction)[0]!.core)
        }
        // Kept history never reaches the depth below the head it was trimmed at.
        for (const e of trimmed.window!.events) expect(blockOf(unkeep(e)) + DEPTH).toBeGreaterThan(head)
      }),
      { numRuns: 300 }
    )
  })
})
