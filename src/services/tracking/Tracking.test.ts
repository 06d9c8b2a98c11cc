/**
 * Tracking (plan visibility, lookups, seed consistency) and the embedded mode's inputs end to
 * end: the seed's tracked wallets trading through the real detectors fire confluence, and the
 * seeded social source fires kol_mention, deterministically.
 */
import { describe, expect, it } from "vitest"
import type { ChainEvent } from "../../../ingest/ChainEvent.js"
import { KolMentionDetectors } from "../../../actors/signals/KolMention.js"
import { defaultSignalConfig, type SignalInputs } from "../../../actors/signals/SignalConfig.js"
import { SignalReplay } from "../../../actors/signals/SignalDetectors.js"
import { ChainClock, SimMarket } from "../../../test/support/marketSim.js"
import { DEV_ADDRESSES } from "../../chain/solana/localnet/DevKeys.js"
import { WSOL_MINT } from "../../domain/QuotePairs.js"
import { makeStore } from "../social/SocialMentions.js"
import { simulatedMentions, simulatedMentionsDefaults } from "../social/SimulatedMentions.js"
import { HOOD_SEED_ADDRESSES, SEED_PLAIN_AUTHORS, seedTrackingData } from "./Seed.js"
import { make } from "./Tracking.js"

const tracking = make(seedTrackingData())

describe("Tracking", () => {
  it("shows groups by plan: Free public, Pro public+pro, Max all", () => {
    expect(tracking.groups("free").map((g) => g.visibility)).toEqual(["public", "public"])
    expect(new Set(tracking.groups("pro").map((g) => g.visibility))).toEqual(new Set(["public", "pro"]))
    expect(tracking.groups("max")).toHaveLength(4)
    expect(tracking.group("free", "grp_insiders")).toBeUndefined()
    expect(tracking.group("max", "grp_insiders")?.walletIds).toEqual(["sol_dev2", "sol_dev7", "sol_dev8", "sol_dev9"])
  })

  it("shows wallets by plan and hides the groups a plan may not see", () => {
    expect(tracking.wallets("free")).toHaveLength(4 + 3)
    expect(tracking.wallets("pro", "solana")).toHaveLength(7)
    expect(tracking.wallets("max")).toHaveLength(13)
    expect(tracking.wallet("free", "sol_dev2")?.groups).toEqual(["grp_early_birds"])
    expect(tracking.wallet("max", "sol_dev2")?.groups).toEqual(["grp_early_birds", "grp_insiders"])
    expect(tracking.wallet("pro", "sol_dev8")).toBeUndefined()
  })

  it("looks up by address (EVM case-insensitive) and KOL handle (with or without @)", () => {
    expect(tracking.byAddress("solana", DEV_ADDRESSES[3]!)?.id).toBe("sol_dev3")
    expect(tracking.byAddress("solana", DEV_ADDRESSES[3]!.toLowerCase())).toBeUndefined()
    expect(tracking.byAddress("hood", HOOD_SEED_ADDRESSES[0].toLowerCase())?.id).toBe("hood_1")
    expect(tracking.kolByHandle("@MoonVoice")?.id).toBe("kol_moonvoice")
    expect(tracking.kolInfo("nobody")).toBeUndefined()
  })

  it("refuses inconsistent data", () => {
    const data = seedTrackingData()
    expect(() => make({ ...data, wallets: [...data.wallets, data.wallets[0]!] })).toThrow(/duplicate wallet/)
    expect(() => make({ ...data, groups: [...data.groups, { ...data.groups[0]!, id: "x", walletIds: ["ghost"] }] })).toThrow(/unknown wallet/)
  })
})

describe("the embedded mode's inputs fire signals", () => {
  const inputs: SignalInputs = {
    usdPrice: (_c, q) => (q === WSOL_MINT ? { num: 150n, scale: 0 } : undefined),
    trackedWallet: tracking.trackedWalletInfo,
    kolByHandle: tracking.kolInfo
  }

  it("seed wallets buying one token fire confluence (and the same run gives the same ids)", () => {
    const clock = new ChainClock("solana", Date.UTC(2025, 0, 1))
    const m = new SimMarket(clock, { mint: "SeedMint1111", symbol: "SEED" })
    const events: Array<ChainEvent> = [m.created()]
    for (const i of [0, 4, 7]) {
      clock.advance(60_000)
      events.push(...m.buy(DEV_ADDRESSES[i]!, 1_000_000_000n))
    }
    const a = new SignalReplay(inputs).applyAll(events)
    const conf = a.filter((s) => s.pattern === "confluence")
    expect(conf).toHaveLength(1)
    expect(conf[0]!.wallet_ids).toEqual(["sol_dev0", "sol_dev4", "sol_dev7"])
    expect(new SignalReplay(inputs).applyAll(events)).toEqual(a)
  })

  it("the seeded social source is deterministic and its KOL posts fire kol_mention", () => {
    const options = { ...simulatedMentionsDefaults, kolHandles: tracking.kols().map((k) => k.handle), plainAuthors: SEED_PLAIN_AUTHORS }
    const tokens = Array.from({ length: 30 }, (_, i) => ({ chain: "solana" as const, asset: `mint${i}`, symbol: `T${i}` }))
    const run = () => Array.from({ length: 40 }, (_, tick) => simulatedMentions(options, tick, 1_000_000 + tick * 5_000, tokens)).flat()
    const a = run()
    expect(run()).toEqual(a)
    expect(a.length).toBeGreaterThan(20)
    for (let tick = 0; tick < 40; tick++) expect(simulatedMentions(options, tick, 0, tokens).length).toBeLessThanOrEqual(options.maxPerTick)

    const store = makeStore(100, 2)
    const detectors = new KolMentionDetectors(defaultSignalConfig, inputs)
    const signals: Array<unknown> = []
    store.subscribe((mention) => signals.push(...detectors.apply({ mention, market: null })))
    store.publish(a)
    expect(signals.length).toBeGreaterThan(0)
    expect(store.size()).toBe(Math.min(100, a.length))
    expect(store.recent({ limit: 5 })).toEqual(a.slice(-5).reverse())
    store.subscribe(() => {})
    expect(() => store.subscribe(() => {})).toThrow(RangeError)
  })
})
