/**
 * ChainSignals: new_ticker, deployer relaunches and tracked-wallet dormancy across the tokens of a
 * chain, at the edges of their thresholds, their LRU bounds, the per-token position gate, the
 * checkpoint codec; and SignalReplay (both detectors together) for determinism.
 */
import { describe, expect, it } from "vitest"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { type ChainSignalState, decodeChainState, encodeChainState, makeChainSignalsStep } from "./ChainSignals.js"
import { DAY, HOUR, makeInputs, MIN, T0, TokenFixture, usdLamports } from "./internal/fixtures.js"
import type { Signal } from "../../src/domain/Signal.js"
import { defaultSignalConfig, signalConfig, type SignalConfig, type SignalInputs } from "./SignalConfig.js"
import { SignalReplay } from "./SignalDetectors.js"

const run = (events: ReadonlyArray<ChainEvent>, inputs: SignalInputs = makeInputs(), config: SignalConfig = defaultSignalConfig) => {
  const step = makeChainSignalsStep(config, inputs)
  let state: ChainSignalState | undefined
  const signals: Array<Signal> = []
  for (const e of events) {
    const [next, out] = step(state, e)
    state = next
    signals.push(...out)
  }
  return { state: state!, signals }
}

describe("new_ticker", () => {
  it("fires on the first buy of a token whose symbol is new on the chain; not for a reused symbol (case and spaces ignored)", () => {
    const a = new TokenFixture("nt-a")
    const b = new TokenFixture("nt-b")
    const { signals } = run([
      a.created({ symbol: "MOON", creator: "ca" }),
      b.created({ symbol: " moon ", creator: "cb" }),
      a.sell("x", T0 + MIN, usdLamports(10)), // a sell first: still waiting for a buy
      a.buy("y", T0 + 2 * MIN, usdLamports(600)),
      a.buy("z", T0 + 3 * MIN, usdLamports(600)),
      b.buy("y", T0 + 4 * MIN, usdLamports(600))
    ])
    expect(signals).toHaveLength(1)
    const s = signals[0]!
    expect([s.pattern, s.asset, s.symbol, s.size_usd, s.confidence, s.age_minutes]).toEqual(["new_ticker", "nt-a", "MOON", "600", 50, 2])
    expect(s.wallets).toEqual(["y", "ca"])
    expect(s.details.symbol).toBe("MOON")
  })

  it("waits at most an hour for the first buy: 1 h − 1 ms fires, 1 h does not", () => {
    const a = new TokenFixture("nt-c")
    const b = new TokenFixture("nt-d")
    const { signals } = run([
      a.created({ symbol: "AAA" }),
      b.created({ symbol: "BBB" }),
      a.buy("y", T0 + HOUR - 1, usdLamports(10)),
      b.buy("y", T0 + HOUR, usdLamports(10))
    ])
    expect(signals.map((s) => s.asset)).toEqual(["nt-c"])
    expect(signals[0]!.quality).toBe("low")
  })

  it("remembers at most maxSymbols symbols (least recently seen forgotten) and maxPending launches", () => {
    const config = signalConfig({ newTicker: { maxSymbols: 3, maxPending: 2 } })
    const tokens = ["S1", "S2", "S3", "S4"].map((sym) => [new TokenFixture(`lru-${sym}`), sym] as const)
    const events: Array<ChainEvent> = tokens.map(([t, sym]) => t.created({ symbol: sym }))
    const again = new TokenFixture("lru-again")
    events.push(again.created({ symbol: "S1" })) // S1 was evicted by S4: new again
    events.push(again.buy("y", T0 + MIN, usdLamports(10)))
    events.push(tokens[0]![0].buy("y", T0 + MIN, usdLamports(10))) // S1's first token: its pending entry was evicted
    const { state, signals } = run(events, makeInputs(), config)
    expect(state.symbols.size).toBe(3)
    expect(state.pending.size).toBeLessThanOrEqual(2)
    expect(signals.map((s) => s.asset)).toEqual(["lru-again"])
  })
})

describe("deployer relaunch", () => {
  it("fires when a creator with a graduated launch launches again; not before the graduation", () => {
    const first = new TokenFixture("dl-1")
    const second = new TokenFixture("dl-2")
    const third = new TokenFixture("dl-3")
    const { signals } = run(
      [
        first.created({ creator: "C", symbol: "ONE" }),
        second.created({ creator: "C", symbol: "TWO", atMs: T0 + MIN }), // no graduated launch yet
        first.completed(T0 + 2 * MIN),
        first.completed(T0 + 3 * MIN), // a duplicate completion counts once
        third.created({ creator: "C", symbol: "THREE", atMs: T0 + 4 * MIN })
      ],
      makeInputs({ C: { id: "w_c", groups: ["g"] } })
    )
    const relaunch = signals.filter((s) => s.pattern === "deployer")
    expect(relaunch).toHaveLength(1)
    const s = relaunch[0]!
    expect(s.asset).toBe("dl-3")
    expect(s.details).toEqual({ kind: "relaunch", prior_launches: 2, prior_graduated: 1 })
    expect(s.confidence).toBe(55 + 10)
    expect(s.size_usd).toBe("0")
    expect(s.wallet_ids).toEqual(["w_c"])
  })

  it("remembers at most maxCreators creators", () => {
    const config = signalConfig({ deployer: { maxCreators: 5 } })
    const events: Array<ChainEvent> = []
    for (let i = 0; i < 20; i++) events.push(new TokenFixture(`cr-${i}`).created({ creator: `c${i}`, symbol: `C${i}` }))
    const { state } = run(events, makeInputs(), config)
    expect(state.creators.size).toBe(5)
    expect([...state.creators.keys()]).toEqual(["c15", "c16", "c17", "c18", "c19"])
  })
})

describe("dormancy (tracked wallet)", () => {
  const inputs = makeInputs({ W: { id: "w_w", groups: ["g1"] } })

  it("fires when a tracked wallet silent for 7 days trades any token; not at 7 days − 1 ms; never for an untracked wallet", () => {
    const a = new TokenFixture("wd-a")
    const b = new TokenFixture("wd-b")
    const { signals } = run(
      [
        a.created({ symbol: "WDA" }),
        b.created({ symbol: "WDB" }),
        a.buy("W", T0, usdLamports(10)),
        a.buy("U", T0, usdLamports(10)),
        b.buy("W", T0 + 7 * DAY - 1, usdLamports(10)),
        b.buy("U", T0 + 8 * DAY, usdLamports(10)),
        a.sell("W", T0 + 7 * DAY - 1 + 7 * DAY, usdLamports(300))
      ],
      inputs
    )
    const d = signals.filter((s) => s.pattern === "dormancy")
    expect(d).toHaveLength(1)
    expect(d[0]!.details).toEqual({ kind: "wallet", silent_days: 7, side: "sell" })
    expect([d[0]!.asset, d[0]!.direction, d[0]!.size_usd, d[0]!.confidence, d[0]!.symbol]).toEqual(["wd-a", "out", "300", 50, "WDA"])
  })

  it("remembers at most maxWallets wallets", () => {
    const tracked = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`w${i}`, { id: `id${i}`, groups: [] }]))
    const t = new TokenFixture("wd-c")
    const events: Array<ChainEvent> = [t.created()]
    for (let i = 0; i < 50; i++) events.push(t.buy(`w${i}`, T0 + i, 1n))
    const { state } = run(events, makeInputs(tracked), signalConfig({ dormancy: { maxWallets: 10 } }))
    expect(state.wallets.size).toBe(10)
  })
})

describe("the chain step", () => {
  it("skips a token position at or below the last applied (same state object)", () => {
    const step = makeChainSignalsStep(defaultSignalConfig, makeInputs())
    const t = new TokenFixture("cg")
    const created = t.created({ symbol: "GATE" })
    const buy = t.buy("x", T0 + MIN, 1n)
    const [s1] = step(undefined, created)
    const [s2, out] = step(s1, buy)
    expect(out).toHaveLength(1)
    const [s3, again] = step(s2, buy)
    expect(s3).toBe(s2)
    expect(again).toEqual([])
    expect(step(s2, created)[0]).toBe(s2)
  })

  it("round-trips its checkpoint, keeping the LRU order", () => {
    const a = new TokenFixture("ck-a")
    const { state } = run([a.created({ symbol: "CK", creator: "cc" }), a.buy("x", T0 + MIN, 5n)], makeInputs({ x: { id: "x", groups: [] } }))
    const back = decodeChainState(encodeChainState(state))
    expect(back).toEqual(state)
    expect(() => decodeChainState(`{"v":2}`)).toThrow()
  })
})

describe("SignalReplay", () => {
  it("gives the same signals and ids for the same events, from both detectors", () => {
    const inputs = makeInputs({ A: { id: "a", groups: ["g"] }, B: { id: "b", groups: ["g"] }, C: { id: "c", groups: [] } })
    const t = new TokenFixture("rp")
    const events = [
      t.created({ symbol: "RPLY" }),
      t.buy("A", T0 + MIN, usdLamports(100)),
      t.sell("B", T0 + 2 * MIN, usdLamports(100)),
      t.buy("C", T0 + 3 * MIN, usdLamports(100))
    ]
    const one = new SignalReplay(inputs).applyAll(events)
    const two = new SignalReplay(inputs).applyAll(events)
    expect(one.map((s) => s.pattern).sort()).toEqual(["intra_book", "new_ticker"])
    expect(two).toEqual(one)
  })
})
