import { describe, expect, it } from "@effect/vitest"
import type { ChainEvent } from "../ingest/ChainEvent.js"
import { makeStep, type MarketState, step } from "./market/MarketActor.js"
import { FIVE_MINUTES_MS } from "./market/internal/tradeWindows.js"
import { MarketIndexStore } from "./MarketIndex.js"
import { TokenMetadataDirectory } from "./TokenMetadata.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"


/** Applies events through `step` and publishes each change, as a shard does after a batch. */
const publisher = (index: MarketIndexStore, f = step) => {
  const states = new Map<string, MarketState>()
  return (events: ReadonlyArray<ChainEvent>) => {
    const changes = new Map<string, MarketState | undefined>()
    for (const e of events) {
      const key = `${e.chain}:${e.mint}`
      const [next] = f(states.get(key), e)
      if (next === states.get(key)) continue
      if (next === undefined) states.delete(key)
      else states.set(key, next)
      changes.set(key, next)
    }
    index.publish([...changes])
  }
}

describe("MarketIndex", () => {
  it("serializes a record once per version and rebuilds it only on change (or a new statistics slot)", () => {
    const index = new MarketIndexStore()
    const publish = publisher(index)
    const clock = new ChainClock("solana")
    const m = new SimMarket(clock, { mint: "So1Idx" })
    publish([m.created()])
    const first = index.get("solana", "So1Idx")!
    expect(index.get("solana", "So1Idx")).toBe(first)
    expect(first.version).toBe(1)
    expect(JSON.parse(first.json)).toMatchObject({ chain: "solana", mint: "So1Idx" })
    publish([m.feeClaimed(1n)]) // a new snapshot
    const second = index.get("solana", "So1Idx")!
    expect(second).not.toBe(first)
    expect(second.version).toBe(2)
    // Another market's event moves the chain clock into a new slot: the windows moved, so a rebuild.
    clock.advance(FIVE_MINUTES_MS)
    publish([new SimMarket(clock, { mint: "So1Other" }).created()])
    const third = index.get("solana", "So1Idx")!
    expect(third).not.toBe(second)
    expect(third.version).toBe(2)
  })

  it("a record and feed row built before the market's metadata document arrived are rebuilt with it (a new version), then cached again", () => {
    const metadata = new TokenMetadataDirectory()
    const index = new MarketIndexStore({ metadata })
    const publish = publisher(index)
    const id = "d".repeat(64)
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Doc" })
    const created = m.created()
    publish([{ ...created, uri: `https://api.example/api/v1/uploads/metadata/${id}.json` } as ChainEvent])
    const before = index.get("solana", "So1Doc")!
    expect(JSON.parse(before.json).metadata).toMatchObject({ image: null, socials: null })
    expect(index.feed("new", "solana", undefined).tokens[0]).toMatchObject({ address: "So1Doc", image: null })
    expect(index.get("solana", "So1Doc")).toBe(before)

    metadata.add(id, { image: "https://img/doc.png", banner: null, description: "d", socials: { website: "https://w.example" } })
    const after = index.get("solana", "So1Doc")!
    expect(after.version).toBe(before.version + 1)
    expect(JSON.parse(after.json).metadata).toMatchObject({ image: "https://img/doc.png", socials: { website: "https://w.example" } })
    expect(index.get("solana", "So1Doc")).toBe(after)
    expect(index.feed("new", "solana", undefined).tokens[0]).toMatchObject({ address: "So1Doc", image: "https://img/doc.png" })
    expect(index.metadataOf(index.market("solana", "So1Doc")!)).toMatchObject({ description: "d" })
  })

  it("find names the chains that know a mint; get is per chain", () => {
    const index = new MarketIndexStore()
    const publish = publisher(index)
    publish([new SimMarket(new ChainClock("hood"), { mint: "0xboth" }).created(), new SimMarket(new ChainClock("solana"), { mint: "0xboth" }).created()])
    publish([new SimMarket(new ChainClock("hood"), { mint: "0xhoodonly" }).created()])
    expect(index.find("0xboth")).toEqual(["solana", "hood"])
    expect(index.find("0xhoodonly")).toEqual(["hood"])
    expect(index.find("nope")).toEqual([])
    expect(index.get("solana", "0xhoodonly")).toBeUndefined()
    expect(index.market("hood", "0xhoodonly")?.lifecycle).toBe("trading")
  })

  it("a retracted creation removes the market from the index and the feeds", () => {
    const index = new MarketIndexStore()
    const publish = publisher(index, makeStep({ retractHistory: { solana: 0, hood: 4 } }))
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xgone" })
    const created = m.created()
    publish([created])
    expect(index.feed("new", "hood", undefined).tokens.map((t) => t.address)).toEqual(["0xgone"])
    const seq = index.feed("new", "hood", undefined).seq
    publish([m.retracted([created.id])])
    expect(index.get("hood", "0xgone")).toBeUndefined()
    expect(index.size()).toBe(0)
    expect(index.feed("new", "hood", seq)).toMatchObject({ reset: false, removed: ["0xgone"], tokens: [] })
  })

  it("carries the warming flag into feed reads", () => {
    const index = new MarketIndexStore()
    expect(index.warming()).toBe(true)
    expect(index.feed("new", undefined, undefined).warming).toBe(true)
    index.setWarming(false)
    expect(index.feed("onfire", "solana", undefined)).toMatchObject({ warming: false, reset: true, tokens: [] })
  })
})
