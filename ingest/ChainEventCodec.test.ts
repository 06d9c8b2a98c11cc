/**
 * The fast ChainEvent decoder must agree with the Schema decoder (the contract in ingest/): on
 * every valid event the same value, on every mutation the same verdict (and equal values when the
 * Schema decoder accepts).
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { type ChainEvent, decodeChainEventStrict as decodeChainEvent, encodeChainEventStrict as encodeChainEvent } from "./ChainEvent.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"
import { decodeFast, encodeFast, fromWireObject, toWire } from "./ChainEventCodec.js"

const sampleEvents = (): Array<ChainEvent> => {
  const out: Array<ChainEvent> = []
  for (const chain of ["solana", "hood"] as const) {
    const m = new SimMarket(new ChainClock(chain), { mint: chain === "solana" ? "So1Codec" : "0xcodec", name: "$DOLLAR \"quoted\" ☃" })
    const unit = chain === "solana" ? 1_000_000_000n : 10n ** 18n
    out.push(m.created(), ...m.buy("alice", unit), m.sell("alice", 1000n), m.feeClaimed(5n))
    const done = m.buy("whale", 200n * unit)
    out.push(...done, m.progress("in_progress", 1, 123), m.progress("delayed", 2), m.migrated(), m.poolBuy("bob", unit), m.retracted(["a", "b"]))
    if (chain === "hood") out.push(m.progress("cancelled", 3))
  }
  return out
}

const bytes = (s: string) => new TextEncoder().encode(s)

describe("chainEventCodec", () => {
  const events = sampleEvents()

  it("decodes every variant exactly as the Schema decoder does", () => {
    expect(new Set(events.map((e) => e._tag)).size).toBe(7)
    for (const e of events) {
      const wire = encodeChainEvent(e)
      const fast = decodeFast(wire)
      const slow = decodeChainEvent(wire)
      expect(Either.isRight(fast)).toBe(true)
      expect(fast).toEqual(slow)
      expect(Object.getPrototypeOf(Either.getOrThrow(fast))).toBe(Object.getPrototypeOf(e))
    }
  })

  it("encodeFast writes what encodeChainEvent writes (as JSON values)", () => {
    for (const e of events) expect(JSON.parse(new TextDecoder().decode(encodeFast(e)))).toEqual(JSON.parse(new TextDecoder().decode(encodeChainEvent(e))))
  })

  it("refuses what the Schema decoder refuses, with its error", () => {
    for (const bad of ["{not json", "null", "[]", '{"_tag":"Nope"}', '{"_tag":"Trade","id":1}']) {
      const fast = decodeFast(bytes(bad))
      expect(Either.isLeft(fast)).toBe(true)
      expect(fast).toEqual(decodeChainEvent(bytes(bad)))
    }
  })

  it("property: on any mutation of a valid event both decoders agree", () => {
    const fields = (e: ChainEvent) => Object.keys(toWire(e))
    const weird = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double(),
      fc.string(),
      fc.constantFrom(" 12", "0x10", "1e3", "-5", "007", "", "+1", "12n", "solana", "hood", "v3", "buy", "pool", "cancelled"),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.array(fc.integer(), { maxLength: 2 })
    )
    fc.assert(
      fc.property(fc.nat(events.length - 1), fc.nat(40), weird, fc.boolean(), (i, f, value, extra) => {
        const e = events[i]!
        const wire = toWire(e)
        const name = fields(e)[f % fields(e).length]!
        const mutated: Record<string, unknown> = { ...wire }
        if (value === undefined) delete mutated[name]
        else mutated[name] = value
        if (extra) mutated["unexpected"] = 1
        const text = bytes(JSON.stringify(mutated))
        const fast = decodeFast(text)
        const slow = decodeChainEvent(text)
        expect(Either.isRight(fast)).toBe(Either.isRight(slow))
        if (Either.isRight(fast)) expect(fast).toEqual(slow)
        // The fast path alone never accepts what the Schema decoder refuses.
        if (Either.isLeft(slow)) expect(fromWireObject(mutated)).toBeUndefined()
      }),
      { numRuns: 2000 }
    )
  })
})
