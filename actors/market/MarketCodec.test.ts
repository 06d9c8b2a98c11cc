import { describe, expect, it } from "@effect/vitest"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { makeStep, type MarketState } from "./MarketActor.js"
import { decodeMarketState, encodeMarketState } from "./MarketCodec.js"

const fold = (events: ReadonlyArray<ChainEvent>, f = makeStep({ retractHistory: { solana: 0, hood: 4 } })) => {
  let s: MarketState | undefined = undefined
  for (const e of events) s = f(s, e)[0]
  return s!
}

describe("MarketCodec", () => {
  it("round-trips a Solana market through every lifecycle stage", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Codec", name: "$$money", symbol: "$n:1" })
    const events: Array<ChainEvent> = [m.created()]
    expect(decodeMarketState(encodeMarketState(fold(events)))).toEqual(fold(events))
    for (let i = 0; i < 20; i++) {
      m.clock.advance(400_000)
      events.push(...m.buy(`t${i}`, 100_000_000n))
    }
    events.push(...m.buy("whale", 100_000_000_000n), m.progress("delayed", 3), m.migrated(150), m.poolBuy("p", 1_000_000n), m.feeClaimed(7n))
    const s = fold(events)
    expect(s.core!.lifecycle).toBe("migrated")
    const decoded = decodeMarketState(encodeMarketState(s))
    expect(decoded).toEqual(s)
    // Strings that look like the codec's escapes come back as themselves.
    expect(decoded.core!.identity.name).toBe("$$money")
    expect(decoded.core!.identity.symbol).toBe("$n:1")
  })

  it("round-trips a Hood market with its retract window (events come back as the same classes)", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xcodec" })
    const events: Array<ChainEvent> = [m.created(), ...m.buy("a", 10n ** 16n), ...m.buy("b", 10n ** 16n)]
    events.push(m.retracted([events[events.length - 1]!.id]))
    const s = fold(events)
    const decoded = decodeMarketState(encodeMarketState(s))
    expect(decoded).toEqual(s)
    expect(Object.getPrototypeOf(decoded.window!.events[0])).toBe(Object.getPrototypeOf(s.window!.events[0]))
  })

  it("refuses what it did not write", () => {
    expect(() => decodeMarketState("{}")).toThrow()
    expect(() => decodeMarketState('{"v":2,"core":null,"window":null}')).toThrow()
    expect(() => decodeMarketState('{"v":1,"core":{"chain":"eth"},"window":null}')).toThrow()
    expect(() => decodeMarketState('{"v":1,"core":null,"window":{"base":null,"events":[{"_tag":"Nope"}],"retracted":[]}}')).toThrow()
    expect(() => decodeMarketState('{"v":1,"core":"$x","window":null}')).toThrow()
    expect(decodeMarketState('{"v":1,"core":null,"window":null}')).toEqual({ core: undefined, window: null })
  })
})
