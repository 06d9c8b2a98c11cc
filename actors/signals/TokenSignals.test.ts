/**
 * TokenSignals: each per-token detector on crafted trade sequences, at the edge of each threshold
 * (must fire / must not fire), its bounds, the position gate, and replay determinism.
 *
 * Thresholds under test (defaults, docs/signals.md): confluence 3 tracked wallets / 30 min /
 * $50 a buy; deployer $100 / 5 min cooldown; large_move +50% or −33% / 5 min / $1,000 volume;
 * dormancy 7 days; intra_book 10 min / $50 a leg; distribution top 10 / 15 min / $500 sold /
 * buys ≥ 50% of the sold quote. Prices: SOL at $100, so $1 = 10,000,000 lamports.
 */
import { describe, expect, it } from "vitest"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { SimMarket, ChainClock } from "../../test/support/marketSim.js"
import { DAY, makeInputs, MIN, sol, T0, TokenFixture, usdLamports } from "./internal/fixtures.js"
import type { Signal } from "../../src/domain/Signal.js"
import { defaultSignalConfig, signalConfig, type SignalConfig, type SignalInputs } from "./SignalConfig.js"
import { decodeTokenState, encodeTokenState } from "./SignalDetectors.js"
import { makeTokenSignalsStep, moveHolder, type TokenSignalState } from "./TokenSignals.js"

const run = (events: ReadonlyArray<ChainEvent>, inputs: SignalInputs, config: SignalConfig = defaultSignalConfig) => {
  const step = makeTokenSignalsStep(config, inputs)
  let state: TokenSignalState | undefined
  const signals: Array<Signal> = []
  for (const e of events) {
    const [next, out] = step(state, e)
    state = next
    signals.push(...out)
  }
  return { state: state!, signals }
}

const only = (signals: ReadonlyArray<Signal>, pattern: Signal["pattern"]) => signals.filter((s) => s.pattern === pattern)

const trackedABC = {
  A: { id: "w_a", groups: ["g_alpha"] },
  B: { id: "w_b", groups: ["g_alpha"] },
  C: { id: "w_c", groups: ["g_beta"] },
  D: { id: "w_d", groups: [] }
}

describe("confluence", () => {
  const inputs = makeInputs(trackedABC)

  it("fires once when 3 distinct tracked wallets buy $50+ within 30 minutes", () => {
    const t = new TokenFixture("conf1")
    const events = [
      t.created(),
      t.buy("A", T0 + 1 * MIN, usdLamports(100)),
      t.buy("B", T0 + 10 * MIN, usdLamports(50)),
      t.buy("X", T0 + 11 * MIN, usdLamports(5000)), // untracked: not counted
      t.buy("C", T0 + 31 * MIN - 1, usdLamports(70)), // 30 min − 1 ms after A's buy
      t.buy("D", T0 + 31 * MIN, usdLamports(80)) // a 4th wallet inside the cooldown: no second signal
    ]
    const { signals } = run(events, inputs)
    const conf = only(signals, "confluence")
    expect(conf).toHaveLength(1)
    const s = conf[0]!
    expect(s.wallets).toEqual(["A", "B", "C"])
    expect(s.wallet_ids).toEqual(["w_a", "w_b", "w_c"])
    expect(s.groups).toEqual(["g_alpha", "g_beta"])
    expect(s.size_usd).toBe("220")
    expect(s.direction).toBe("in")
    expect(s.venue).toBe("svc-curve")
    expect(s.age_minutes).toBe(30)
    expect(s.mcap_usd).toBe("100000") // 1000 SOL reserve / 1000 tokens × 1000 supply × $100
    expect(s.confidence).toBe(50)
    expect(s.quality).toBe("medium")
    expect(s.position).toBe(events[4]!.position)
    expect(s.id).toMatch(/^sig_[0-9a-f]{24}$/)
  })

  it("does not fire: a buy exactly 30 minutes old has left the window", () => {
    const t = new TokenFixture("conf2")
    const { signals } = run(
      [t.created(), t.buy("A", T0, usdLamports(100)), t.buy("B", T0 + 10 * MIN, usdLamports(100)), t.buy("C", T0 + 30 * MIN, usdLamports(100))],
      inputs
    )
    expect(only(signals, "confluence")).toEqual([])
  })

  it("does not fire: two wallets, one wallet three times, or a buy under $50", () => {
    const t = new TokenFixture("conf3")
    const { signals } = run(
      [
        t.created(),
        t.buy("A", T0 + MIN, usdLamports(100)),
        t.buy("A", T0 + 2 * MIN, usdLamports(100)),
        t.buy("B", T0 + 3 * MIN, usdLamports(100)),
        t.buy("C", T0 + 4 * MIN, usdLamports(49.99)),
        t.sell("C", T0 + 5 * MIN, usdLamports(500))
      ],
      inputs
    )
    expect(only(signals, "confluence")).toEqual([])
  })

  it("does not fire without a USD price for the quote asset", () => {
    const t = new TokenFixture("conf4")
    const { signals } = run(
      [t.created(), t.buy("A", T0, usdLamports(100)), t.buy("B", T0 + MIN, usdLamports(100)), t.buy("C", T0 + 2 * MIN, usdLamports(100))],
      makeInputs(trackedABC, {}, null)
    )
    expect(signals).toEqual([])
  })

  it("fires again after the cooldown with a fresh set, and the rule's wallet count is a parameter", () => {
    const t = new TokenFixture("conf5")
    const config = signalConfig({ confluence: { minWallets: 2 } })
    const { signals } = run(
      [
        t.created(),
        t.buy("A", T0, usdLamports(60)),
        t.buy("B", T0 + MIN, usdLamports(60)),
        t.buy("C", T0 + 20 * MIN, usdLamports(60)),
        t.buy("A", T0 + 31 * MIN, usdLamports(60)), // cooldown ends at T0 + 31 min
        t.buy("D", T0 + 32 * MIN, usdLamports(60))
      ],
      inputs,
      config
    )
    const conf = only(signals, "confluence")
    expect(conf.map((s) => s.wallets)).toEqual([["A", "B"], ["C", "A"]])
  })

  it("keeps at most maxBuys buys, the oldest dropped", () => {
    const t = new TokenFixture("conf6")
    const events: Array<ChainEvent> = [t.created()]
    for (let i = 0; i < 100; i++) events.push(t.buy("A", T0 + i * 1000, usdLamports(60)))
    const { state } = run(events, inputs, signalConfig({ confluence: { maxBuys: 8 } }))
    expect(state.trackedBuys).toHaveLength(8)
    expect(state.trackedBuys[0]!.atMs).toBe(T0 + 92 * 1000)
  })
})

describe("deployer (its own token)", () => {
  const inputs = makeInputs()

  it("fires on a $100 sell by the creator, not on $99.99; then waits 5 minutes per side", () => {
    const t = new TokenFixture("dev1")
    const creator = "creator-dev1"
    const { signals } = run(
      [
        t.created({ creator }),
        t.sell(creator, T0 + MIN, usdLamports(99.99)),
        t.sell(creator, T0 + 2 * MIN, usdLamports(100)),
        t.sell(creator, T0 + 7 * MIN - 1, usdLamports(500)), // inside the cooldown
        t.sell(creator, T0 + 7 * MIN, usdLamports(500))
      ],
      inputs
    )
    const dev = only(signals, "deployer")
    expect(dev.map((s) => [s.details.kind, s.direction, s.size_usd, s.confidence])).toEqual([
      ["dev_sell", "out", "100", 60],
      ["dev_sell", "out", "500", 60]
    ])
  })

  it("ignores the launch transaction's dev buy; fires on a later creator buy of $100", () => {
    const t = new TokenFixture("dev2")
    const creator = "creator-dev2"
    const created = t.created({ creator })
    const { signals } = run(
      [
        created,
        t.buy(creator, T0, usdLamports(1000), { signature: created.signature }),
        t.buy("someone", T0 + MIN, usdLamports(1000)),
        t.buy(creator, T0 + 2 * MIN, usdLamports(100))
      ],
      inputs
    )
    const dev = only(signals, "deployer")
    expect(dev).toHaveLength(1)
    expect(dev[0]!.details.kind).toBe("dev_buy")
    expect(dev[0]!.quality).toBe("medium")
  })
})

describe("large_move", () => {
  const inputs = makeInputs()
  const q = (n: bigint) => n * 10n ** 9n // reserves in whole SOL; tokens 1000·1e9, so the price is q/1000

  it("fires on +50% within 5 minutes with $1,000 of volume, not on +49.9%", () => {
    const hit = new TokenFixture("lm1")
    const a = run(
      [hit.created(), hit.buy("X", T0 + MIN, usdLamports(1000), { quoteReserve: q(1500n) })],
      inputs
    )
    const moves = only(a.signals, "large_move")
    expect(moves).toHaveLength(1)
    expect(moves[0]!.direction).toBe("in")
    expect(moves[0]!.details.move_bps).toBe(5000)
    expect(moves[0]!.size_usd).toBe("1000")
    expect(moves[0]!.wallets).toEqual(["X"])

    const miss = new TokenFixture("lm2")
    const b = run([miss.created(), miss.buy("X", T0 + MIN, usdLamports(5000), { quoteReserve: q(1499n) })], inputs)
    expect(only(b.signals, "large_move")).toEqual([])
  })

  it("does not fire under $1,000 of window volume, nor against a reference exactly 5 minutes old", () => {
    const t = new TokenFixture("lm3")
    const a = run([t.created(), t.buy("X", T0 + MIN, usdLamports(999.99), { quoteReserve: q(2000n) })], inputs)
    expect(only(a.signals, "large_move")).toEqual([])

    const u = new TokenFixture("lm4")
    const b = run(
      [
        u.created({ atMs: T0 - 10 * MIN }),
        u.buy("Y", T0, usdLamports(10), { quoteReserve: q(1000n) }),
        u.buy("X", T0 + 5 * MIN, usdLamports(5000), { quoteReserve: q(1600n) }) // the only earlier sample in the window is none
      ],
      inputs
    )
    expect(only(b.signals, "large_move")).toEqual([])
  })

  it("fires on −33% down, not on −32.9%, with the sellers as wallets", () => {
    const t = new TokenFixture("lm5")
    const a = run(
      [
        t.created(),
        t.sell("S1", T0 + MIN, usdLamports(600), { quoteReserve: q(800n) }),
        t.sell("S2", T0 + 2 * MIN, usdLamports(600), { quoteReserve: q(671n) })
      ],
      inputs
    )
    expect(only(a.signals, "large_move")).toEqual([])
    const u = new TokenFixture("lm6")
    const c = run(
      [
        u.created(),
        u.sell("S1", T0 + MIN, usdLamports(600), { quoteReserve: q(800n) }),
        u.sell("S2", T0 + 2 * MIN, usdLamports(600), { quoteReserve: q(670n) })
      ],
      inputs
    )
    const moves = only(c.signals, "large_move")
    expect(moves).toHaveLength(1)
    expect(moves[0]!.direction).toBe("out")
    expect(moves[0]!.details.move_bps).toBe(-3300)
    expect(moves[0]!.wallets).toEqual(["S1", "S2"])
  })

  it("keeps at most maxSamples price samples", () => {
    const t = new TokenFixture("lm7")
    const events: Array<ChainEvent> = [t.created()]
    for (let i = 0; i < 200; i++) events.push(t.buy("X", T0 + i, 1n))
    const { state } = run(events, inputs)
    expect(state.samples).toHaveLength(defaultSignalConfig.largeMove.maxSamples)
  })
})

describe("dormancy (token)", () => {
  const inputs = makeInputs(trackedABC)

  it("fires when a token silent for 7 days trades; not at 7 days − 1 ms", () => {
    const t = new TokenFixture("dorm1")
    const a = run([t.created(), t.buy("X", T0 + 7 * DAY - 1, usdLamports(10))], inputs)
    expect(only(a.signals, "dormancy")).toEqual([])
    const u = new TokenFixture("dorm2")
    const b = run([u.created(), u.buy("X", T0 + MIN, usdLamports(10)), u.buy("A", T0 + MIN + 14 * DAY, usdLamports(10))], inputs)
    const d = only(b.signals, "dormancy")
    expect(d).toHaveLength(1)
    expect(d[0]!.details).toEqual({ kind: "token", silent_days: 14, side: "buy" })
    expect(d[0]!.confidence).toBe(40 + 5 + 10) // one extra period, tracked wallet
    expect(d[0]!.wallet_ids).toEqual(["w_a"])
  })
})

describe("intra_book", () => {
  const inputs = makeInputs(trackedABC)

  it("fires when two wallets of one group trade opposite sides within 10 minutes", () => {
    const t = new TokenFixture("ib1")
    const { signals } = run([t.created(), t.buy("A", T0, usdLamports(60)), t.sell("B", T0 + 10 * MIN - 1, usdLamports(80))], inputs)
    const ib = only(signals, "intra_book")
    expect(ib).toHaveLength(1)
    expect(ib[0]!.wallets).toEqual(["A", "B"])
    expect(ib[0]!.groups).toEqual(["g_alpha"])
    expect(ib[0]!.direction).toBe("out")
    expect(ib[0]!.size_usd).toBe("140")
  })

  it("does not fire: same wallet both sides, same side, another group, 10 minutes apart, or a leg under $50", () => {
    const cases: Array<(t: TokenFixture) => Array<ChainEvent>> = [
      (t) => [t.buy("A", T0, usdLamports(60)), t.sell("A", T0 + MIN, usdLamports(60))],
      (t) => [t.buy("A", T0, usdLamports(60)), t.buy("B", T0 + MIN, usdLamports(60))],
      (t) => [t.buy("A", T0, usdLamports(60)), t.sell("C", T0 + MIN, usdLamports(60))],
      (t) => [t.buy("A", T0, usdLamports(60)), t.sell("B", T0 + 10 * MIN, usdLamports(60))],
      (t) => [t.buy("A", T0, usdLamports(49.99)), t.sell("B", T0 + MIN, usdLamports(60))]
    ]
    cases.forEach((make, i) => {
      const t = new TokenFixture(`ib-no-${i}`)
      const { signals } = run([t.created(), ...make(t)], inputs)
      expect(only(signals, "intra_book"), `case ${i}`).toEqual([])
    })
  })

  it("keeps at most maxLegs legs and maxGroupCooldowns cooldowns", () => {
    const groups = Array.from({ length: 40 }, (_, i) => `g${i}`)
    const tracked = { P: { id: "p", groups }, Q: { id: "q", groups } }
    const t = new TokenFixture("ib2")
    const events: Array<ChainEvent> = [t.created()]
    for (let i = 0; i < 100; i++) events.push(t.trade({ trader: i % 2 === 0 ? "P" : "Q", side: i % 2 === 0 ? "buy" : "sell", atMs: T0 + i, quote: usdLamports(60) }))
    const { state, signals } = run(events, makeInputs(tracked))
    expect(state.groupLegs).toHaveLength(defaultSignalConfig.intraBook.maxLegs)
    expect(state.groupCooldowns).toHaveLength(defaultSignalConfig.intraBook.maxGroupCooldowns)
    expect(only(signals, "intra_book").length).toBeGreaterThan(0)
  })
})

describe("distribution", () => {
  const inputs = makeInputs()
  const config = signalConfig({ distribution: { topN: 2 } })

  const setup = (t: TokenFixture) => [
    t.created(),
    t.buy("H1", T0, usdLamports(1000), { tokens: 1000n }),
    t.buy("H2", T0 + 1, usdLamports(900), { tokens: 900n }),
    t.buy("small", T0 + 2, usdLamports(10), { tokens: 10n })
  ]

  it("fires when top holders sell $500 while others buy at least half of it", () => {
    const t = new TokenFixture("dist1")
    const { signals } = run(
      [
        ...setup(t),
        t.buy("R1", T0 + 20 * MIN, usdLamports(250), { tokens: 1n }),
        t.sell("H1", T0 + 21 * MIN, usdLamports(500), { tokens: 400n })
      ],
      inputs,
      config
    )
    const d = only(signals, "distribution")
    expect(d).toHaveLength(1)
    expect(d[0]!.wallets).toEqual(["H1"])
    expect(d[0]!.size_usd).toBe("500")
    expect(d[0]!.direction).toBe("out")
  })

  it("fires when the buys come after the sell, inside 15 minutes", () => {
    const t = new TokenFixture("dist2")
    const { signals } = run(
      [...setup(t), t.sell("H2", T0 + 20 * MIN, usdLamports(600), { tokens: 100n }), t.buy("R1", T0 + 35 * MIN - 1, usdLamports(300), { tokens: 1n })],
      inputs,
      config
    )
    expect(only(signals, "distribution")).toHaveLength(1)
  })

  it("does not fire: buys under half, sells under $500, a seller that is not a top holder, buys 15 minutes away", () => {
    const cases: Array<(t: TokenFixture) => Array<ChainEvent>> = [
      (t) => [t.buy("R1", T0 + 20 * MIN, usdLamports(249.99), { tokens: 1n }), t.sell("H1", T0 + 21 * MIN, usdLamports(500), { tokens: 1n })],
      (t) => [t.buy("R1", T0 + 20 * MIN, usdLamports(1000), { tokens: 1n }), t.sell("H1", T0 + 21 * MIN, usdLamports(499.99), { tokens: 1n })],
      (t) => [t.buy("R1", T0 + 20 * MIN, usdLamports(1000), { tokens: 1n }), t.sell("small", T0 + 21 * MIN, usdLamports(900), { tokens: 5n })],
      (t) => [t.buy("R1", T0 + 20 * MIN, usdLamports(1000), { tokens: 1n }), t.sell("H1", T0 + 35 * MIN, usdLamports(600), { tokens: 1n })]
    ]
    cases.forEach((make, i) => {
      const t = new TokenFixture(`dist-no-${i}`)
      const { signals } = run([...setup(t), ...make(t)], inputs, config)
      expect(only(signals, "distribution"), `case ${i}`).toEqual([])
    })
  })

  it("tracks at most maxHolders holders, largest first, evicting the smallest", () => {
    let holders: ReadonlyArray<readonly [string, bigint]> = []
    for (let i = 1; i <= 10; i++) holders = moveHolder(holders, `w${i}`, BigInt(i * 10), 4)
    expect(holders).toEqual([["w10", 100n], ["w9", 90n], ["w8", 80n], ["w7", 70n]])
    holders = moveHolder(holders, "small", 5n, 4) // not larger than the smallest: not tracked
    expect(holders.map(([w]) => w)).toEqual(["w10", "w9", "w8", "w7"])
    holders = moveHolder(holders, "w10", -100n, 4) // sold out: removed
    expect(holders.map(([w]) => w)).toEqual(["w9", "w8", "w7"])
    const t = new TokenFixture("dist3")
    const events: Array<ChainEvent> = [t.created()]
    for (let i = 0; i < 200; i++) events.push(t.buy(`b${i}`, T0 + i, 1n, { tokens: BigInt(i + 1) }))
    const { state } = run(events, inputs)
    expect(state.holders).toHaveLength(defaultSignalConfig.distribution.maxHolders)
    expect(state.holders[0]).toEqual(["b199", 200n])
    expect(state.distributionLegs.length).toBeLessThanOrEqual(defaultSignalConfig.distribution.maxLegs)
  })
})

describe("the step", () => {
  const inputs = makeInputs(trackedABC)

  it("applies a position at most once: a replayed event returns the same state and no signals", () => {
    const t = new TokenFixture("gate")
    const step = makeTokenSignalsStep(defaultSignalConfig, inputs)
    const created = t.created()
    const [s1] = step(undefined, created)
    const buy = t.buy("A", T0 + 14 * DAY, usdLamports(10))
    const [s2, out] = step(s1, buy)
    expect(out.map((s) => s.pattern)).toEqual(["dormancy"])
    const [s3, again] = step(s2, buy)
    expect(s3).toBe(s2)
    expect(again).toEqual([])
    expect(step(s2, created)[0]).toBe(s2)
  })

  it("emits nothing for a token whose creation it never saw", () => {
    const t = new TokenFixture("nocreate")
    const { signals, state } = run([t.buy("A", T0, usdLamports(100)), t.buy("B", T0, usdLamports(100)), t.buy("C", T0, usdLamports(100))], inputs)
    expect(signals).toEqual([])
    expect(state.market).toBeNull()
  })

  it("is deterministic: the same events give the same signals and ids, also across a checkpoint", () => {
    const clock = new ChainClock("solana", T0)
    const m = new SimMarket(clock, { mint: "det1", symbol: "DET" })
    const events: Array<ChainEvent> = [m.created()]
    const traders = ["A", "B", "C", "D", "X", "Y"]
    let seed = 7
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    for (let i = 0; i < 300; i++) {
      clock.advance(Math.floor(rand() * 20_000))
      const trader = traders[Math.floor(rand() * traders.length)]!
      const bought = m.buy(trader, sol(0.5 + rand() * 1.5))
      events.push(...bought)
      if (bought.length > 1) break // graduated
      if (rand() < 0.45) events.push(m.sell(trader, 20_000_000_000_000n))
    }
    const a = run(events, inputs)
    const b = run(events, inputs)
    expect(a.signals.length).toBeGreaterThan(3)
    expect(new Set(a.signals.map((s) => s.pattern)).size).toBeGreaterThan(1)
    expect(b.signals).toEqual(a.signals)
    expect(new Set(a.signals.map((s) => s.id)).size).toBe(a.signals.length)

    // Stop half way, checkpoint (encode/decode), continue: the same signals.
    const step = makeTokenSignalsStep(defaultSignalConfig, inputs)
    const half = Math.floor(events.length / 2)
    let state: TokenSignalState | undefined
    const out: Array<Signal> = []
    for (const [i, e] of events.entries()) {
      if (i === half) state = decodeTokenState(encodeTokenState(state!))
      const [next, sigs] = step(state, e)
      state = next
      out.push(...sigs)
    }
    expect(out).toEqual(a.signals)
  })
})
