/**
 * The market state machine (spec 3.6), driven through `step` directly.
 *
 *   Lifecycle                                                       test
 *   (none) ──CurveCreated──────────────────────▶ trading            "created"
 *   trading ──Trade (buy/sell below G)─────────▶ trading            "buys and sells below the threshold"
 *   trading ──crossing Trade (Solana, full fill)▶ completed         "Solana crossing"
 *   trading ──crossing Trade (Hood, capped)─────▶ completed         "Hood crossing"
 *   trading ──CurveCompleted───────────────────▶ completed          "CurveCompleted alone"
 *   completed ──CurveMigrated──────────────────▶ migrated           "migration happy path"
 *   completed ──MigrationProgress cancelled (Hood)▶ recovery        "Hood cancellation"
 *   any ──Retracted────────────────────────────▶ state before       "Retracted rollback", "retracting the creation"
 *
 *   Migration status
 *   not_started ──MigrationProgress in_progress──▶ in_progress      "migration happy path"
 *   in_progress ──CurveMigrated───────────────────▶ completed       "migration happy path"
 *   in_progress ──MigrationProgress delayed───────▶ delayed         "delayed and resumed"
 *   delayed ──MigrationProgress in_progress───────▶ in_progress     "delayed and resumed"
 *   in_progress|delayed ──cancelled (Hood)────────▶ cancelled       "Hood cancellation"
 *
 *   Refused (anomalies: the position advances, nothing else): "events that do not fit the state";
 *   Solana cancellation: "Solana cancellation is an anomaly".
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { type ChainEvent, CurveCompleted } from "../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { makeStep, type MarketCore, type MarketOutput, type MarketState, priceFloatOf, step, stepCore } from "./MarketActor.js"
import { decodeMarketState, encodeMarketState } from "./MarketCodec.js"
import { progressBpsOf } from "./MarketRecord.js"

const SOL = 1_000_000_000n
const ETH = 10n ** 18n

const run = (events: ReadonlyArray<ChainEvent>, s: MarketState | undefined = undefined, f = step) => {
  const outputs: Array<MarketOutput> = []
  for (const e of events) {
    const [next, out] = f(s, e)
    s = next
    outputs.push(...out)
  }
  return { state: s, outputs }
}

const solanaMarket = (mint = "MintA") => new SimMarket(new ChainClock("solana"), { mint })
const hoodMarket = (mint = "0xmint") => new SimMarket(new ChainClock("hood"), { mint })

describe("MarketActor lifecycle", () => {
  it("created: (none) → trading with migration not_started", () => {
    const m = solanaMarket()
    const { state, outputs } = run([m.created()])
    const core = state!.core!
    expect(core.lifecycle).toBe("trading")
    expect(core.migration.status).toBe("not_started")
    expect(core.curveState).toEqual({ virtualQuoteRaw: 30n * SOL, virtualTokenRaw: 995_000_000_000_000n, realQuoteRaw: 0n, complete: false })
    expect(outputs).toEqual([expect.objectContaining({ _tag: "LifecycleChanged", from: null, to: "trading" })])
  })

  it("buys and sells below the threshold stay trading; progress follows the real quote", () => {
    const m = solanaMarket()
    const events = [m.created(), ...m.buy("alice", 10n * SOL), m.sell("alice", 1_000_000_000n)]
    const core = run(events).state!.core!
    expect(core.lifecycle).toBe("trading")
    expect(core.curveState).toEqual(m.curve)
    expect(core.stats.tradesTotal).toBe(2)
    expect(core.stats.buysTotal).toBe(1)
    // progress = floor(real·10000/G)
    expect(progressBpsOf(core)).toBe(Number((m.curve.realQuoteRaw * 10_000n) / (85n * SOL)))
  })

  it("Solana crossing: fills in full, real may exceed G, progress capped at 10000, trading → completed", () => {
    const m = solanaMarket()
    const events = [m.created(), ...m.buy("whale", 100n * SOL)]
    expect(events.map((e) => e._tag)).toEqual(["CurveCreated", "Trade", "CurveCompleted"])
    const { state, outputs } = run(events)
    const core = state!.core!
    expect(core.lifecycle).toBe("completed")
    expect(core.curveState.realQuoteRaw).toBe(99n * SOL) // 100 SOL less the 1% fee, beyond G = 85
    expect(core.curveState.realQuoteRaw > core.params.thresholdRaw).toBe(true)
    expect(progressBpsOf(core)).toBe(10_000)
    expect(outputs).toContainEqual(expect.objectContaining({ _tag: "LifecycleChanged", from: "trading", to: "completed" }))
  })

  it("Hood crossing: the capped refund leaves real == G exactly, trading → completed", () => {
    const m = hoodMarket()
    const events = [m.created(), ...m.buy("whale", 10n * ETH)]
    const trade = events[1] as Extract<ChainEvent, { _tag: "Trade" }>
    expect(trade.refundRaw > 0n).toBe(true)
    const core = run(events).state!.core!
    expect(core.lifecycle).toBe("completed")
    expect(core.curveState.realQuoteRaw).toBe(core.params.thresholdRaw)
    expect(progressBpsOf(core)).toBe(10_000)
  })

  it("CurveCompleted alone completes a trading curve", () => {
    const m = solanaMarket()
    const created = m.created()
    const completed = new CurveCompleted({
      id: "solana:done:0",
      position: m.clock.next(),
      chain: "solana",
      mint: m.mint,
      timestampMs: m.clock.nowMs,
      signature: "done",
      curve: created.curve,
      realQuoteRaw: 85n * SOL
    })
    const core = run([created, completed]).state!.core!
    expect(core.lifecycle).toBe("completed")
    expect(core.curveState).toMatchObject({ realQuoteRaw: 85n * SOL, complete: true })
  })

  it("migration happy path: not_started → in_progress → completed; lifecycle migrated; pool and fee recorded", () => {
    const m = solanaMarket()
    const { state, outputs } = run([m.created(), ...m.buy("whale", 90n * SOL), m.progress("in_progress", 1, m.clock.nowMs + 60_000)])
    expect(state!.core!.migration).toMatchObject({ status: "in_progress", attempts: 1, nextAttemptAtMs: m.clock.nowMs + 60_000 })
    expect(outputs).toContainEqual(expect.objectContaining({ _tag: "MigrationChanged", status: "in_progress" }))
    m.clock.advance(1000)
    const migrated = m.migrated(50)
    const after = run([migrated], state).state!.core!
    expect(after.lifecycle).toBe("migrated")
    expect(after.migration).toMatchObject({ status: "completed", attempts: 1, migratedAtMs: m.clock.nowMs })
    expect(after.pool).toEqual({ address: `pool-${m.mint}`, feeBps: 50, quoteReserveRaw: m.pool!.quoteRaw, tokenReserveRaw: m.pool!.tokenRaw })
    expect(after.migratedPosition).toBe(migrated.position)
    // Trading continues on the pool.
    const pooled = run([m.poolBuy("bob", SOL)], run([migrated], state).state).state!.core!
    expect(pooled.pool!.quoteReserveRaw).toBe(m.pool!.quoteRaw)
    expect(pooled.stats.tradesTotal).toBe(after.stats.tradesTotal + 1)
  })

  it("Hood migration keeps the pool address null", () => {
    const m = hoodMarket()
    const core = run([m.created(), ...m.buy("w", 10n * ETH), m.migrated(30)]).state!.core!
    expect(core.lifecycle).toBe("migrated")
    expect(core.pool!.address).toBeNull()
  })

  it("delayed and resumed: in_progress → delayed → in_progress", () => {
    const m = hoodMarket()
    const base = run([m.created(), ...m.buy("w", 10n * ETH), m.progress("in_progress", 1)]).state
    const delayedState = run([m.progress("delayed", 5)], base).state
    const delayed = delayedState!.core!
    expect(delayed.migration).toMatchObject({ status: "delayed", attempts: 5, gaveUpAtMs: m.clock.nowMs, lastError: "seeding failed" })
    expect(delayed.lifecycle).toBe("completed")
    const resumed = run([m.progress("in_progress", 6)], delayedState).state!.core!
    expect(resumed.migration.status).toBe("in_progress")
  })

  it("Hood cancellation: completed → recovery, migration cancelled (overriding retries)", () => {
    const m = hoodMarket()
    const { state } = run([m.created(), ...m.buy("w", 10n * ETH), m.progress("in_progress", 2), m.progress("cancelled", 2)])
    expect(state!.core!.lifecycle).toBe("recovery")
    expect(state!.core!.migration.status).toBe("cancelled")
    // A pool never opens after cancellation: a late CurveMigrated is refused.
    const late = run([m.migrated()], state)
    expect(late.state!.core!.lifecycle).toBe("recovery")
    expect(late.outputs).toContainEqual(expect.objectContaining({ _tag: "Anomaly", reason: "migrated_while_recovery" }))
  })

  it("Solana cancellation is an anomaly: only the position moves", () => {
    const m = solanaMarket()
    const before = run([m.created(), ...m.buy("w", 90n * SOL)]).state!
    const cancel = m.progress("cancelled", 1)
    const { state, outputs } = run([cancel], before)
    expect(state!.core).toEqual({ ...before.core!, lastPosition: cancel.position, lastEventAtMs: cancel.timestampMs })
    expect(outputs).toEqual([expect.objectContaining({ _tag: "Anomaly", reason: "cancelled_on_solana" })])
  })

  it("events that do not fit the state are anomalies (negative space)", () => {
    const m = solanaMarket()
    const trading = run([m.created()]).state!
    const progress = run([m.progress("in_progress", 1)], trading)
    expect(progress.state!.core!.migration.status).toBe("not_started")
    expect(progress.outputs).toContainEqual(expect.objectContaining({ reason: "migration_progress_while_trading" }))
    const recreate = run([m.created()], trading)
    expect(recreate.outputs).toContainEqual(expect.objectContaining({ reason: "curve_already_created" }))
    expect(recreate.state!.core!.identity).toBe(trading.core!.identity)
    // Events for a mint never created are ignored outright.
    const other = solanaMarket("Unknown")
    other.created()
    const ignored = run([...other.buy("x", SOL)])
    expect(ignored.state).toBeUndefined()
    expect(ignored.outputs).toEqual([expect.objectContaining({ _tag: "Ignored", reason: "unknown_mint" })])
  })
})

describe("MarketActor idempotence", () => {
  it("the same event twice is applied once (same state object back)", () => {
    const m = solanaMarket()
    const events = [m.created(), ...m.buy("a", SOL)]
    const once = run(events).state
    const [again, out] = step(once, events[1]!)
    expect(again).toBe(once)
    expect(out).toEqual([])
  })

  it("an event at or below the last applied position is skipped", () => {
    const m = solanaMarket()
    const created = m.created()
    const b1 = m.buy("a", SOL)[0]!
    const b2 = m.buy("b", SOL)[0]!
    const s = run([created, b2]).state
    // b1 has a lower position than b2: out of order, skipped.
    expect(step(s, b1)[0]).toBe(s)
    expect(s!.core!.stats.tradesTotal).toBe(1)
  })
})

describe("MarketActor Retracted", () => {
  const config = { retractHistory: { solana: 0, hood: 4 } }
  const stepH = makeStep(config)

  it("Retracted rollback restores the state before the undone events", () => {
    const m = hoodMarket()
    const before = run([m.created(), ...m.buy("a", ETH / 10n)], undefined, stepH).state!
    const snapshot = m.snapshot()
    const reorged = m.buy("b", ETH / 5n)
    const withTrade = run(reorged, before, stepH).state!
    expect(withTrade.core!.stats.tradesTotal).toBe(2)
    m.restore(snapshot)
    const { state, outputs } = run([m.retracted(reorged.map((e) => e.id))], withTrade, stepH)
    expect(state!.core).toEqual(before.core)
    expect(state!.window!.retracted).toEqual(reorged.map((e) => ({ id: e.id, position: e.position })))
    expect(outputs).toContainEqual({ _tag: "Undone", eventId: expect.any(String), undoneIds: reorged.map((e) => e.id) })
    // A replayed copy of the undone trade stays undone; a new canonical trade applies.
    expect(stepH(state, reorged[0]!)[0]).toBe(state)
    const canonical = run(m.buy("c", ETH / 5n), state, stepH).state!
    expect(canonical.core!.stats.tradesTotal).toBe(2)
  })

  it("retracting the creation leaves a tombstone that skips replays of the undone events", () => {
    const m = hoodMarket()
    const created = m.created()
    const buy = m.buy("a", ETH)
    const s = run([created, ...buy], undefined, stepH).state!
    const { state } = run([m.retracted([created.id, ...buy.map((e) => e.id)])], s, stepH)
    expect(state!.core).toBeUndefined()
    expect(stepH(state, created)[0]).toBe(state)
  })

  it("an id beyond the retract window cannot be undone: reported, state kept", () => {
    const m = hoodMarket()
    const created = m.created()
    const trades = [1, 2, 3, 4, 5].flatMap((i) => m.buy(`t${i}`, ETH / 100n))
    const s = run([created, ...trades], undefined, stepH).state!
    expect(s.window!.events).toHaveLength(4)
    const { state, outputs } = run([m.retracted([created.id])], s, stepH)
    expect(state).toBe(s)
    expect(outputs).toEqual([expect.objectContaining({ _tag: "RetractionUnresolved", ids: [created.id] })])
  })

  it("Solana keeps no retract window by default: a retraction is unresolved", () => {
    const m = solanaMarket()
    const events = [m.created(), ...m.buy("a", SOL)]
    const s = run(events).state!
    expect(s.window).toBeNull()
    const { state, outputs } = run([m.retracted([events[1]!.id])], s)
    expect(state).toBe(s)
    expect(outputs[0]?._tag).toBe("RetractionUnresolved")
  })

  it("the window slides: the base absorbs the oldest event (equal to folding everything)", () => {
    const m = hoodMarket()
    const events = [m.created(), ...[1, 2, 3, 4, 5, 6].flatMap((i) => m.buy(`t${i}`, ETH / 50n))]
    const s = run(events, undefined, stepH).state!
    let base = undefined
    for (const e of events.slice(0, events.length - 4)) base = stepCore(base, e, [])
    expect(s.window!.base).toEqual(base)
  })
})

// ---------------------------------------------------------------------------------------------
// Property: duplicates, replays from random offsets and checkpoint round trips change nothing.

type Action =
  | { readonly kind: "buy" | "sell" | "claim" | "retract" | "complete" | "progress" | "migrate" | "poolBuy" | "tick"; readonly market: number; readonly amount: number }

const arbAction: fc.Arbitrary<Action> = fc.record({
  kind: fc.constantFrom("buy", "buy", "buy", "sell", "claim", "retract", "complete", "progress", "migrate", "poolBuy", "tick"),
  market: fc.nat(2),
  amount: fc.integer({ min: 1, max: 1000 })
}) as fc.Arbitrary<Action>

/** Interprets actions on three simulated markets (two Solana, one Hood) into a valid event stream. */
const simulate = (actions: ReadonlyArray<Action>): Array<ChainEvent> => {
  const solana = new ChainClock("solana")
  const hood = new ChainClock("hood")
  const markets = [new SimMarket(solana, { mint: "S1" }), new SimMarket(solana, { mint: "S2" }), new SimMarket(hood, { mint: "0xH1" })]
  const out: Array<ChainEvent> = []
  const history = markets.map(() => [] as Array<{ ids: Array<string>; before: ReturnType<SimMarket["snapshot"]> }>)
  const stage = markets.map(() => "trading" as "trading" | "completed" | "migrated")
  for (const m of markets) out.push(m.created())
  for (const a of actions) {
    const m = markets[a.market]!
    const unit = m.chain === "solana" ? SOL / 10n : ETH / 100n
    const before = m.snapshot()
    let events: Array<ChainEvent> = []
    switch (a.kind) {
      case "tick":
        solana.advance(a.amount * 60_000)
        hood.advance(a.amount * 60_000)
        continue
      case "buy":
        if (stage[a.market] !== "trading") continue
        events = m.buy(`trader${a.amount % 5}`, unit * BigInt(a.amount % 50 + 1))
        if (m.curve.complete) stage[a.market] = "completed"
        break
      case "sell": {
        const sold = m.params.tokenReserveRaw - m.curve.virtualTokenRaw
        if (stage[a.market] !== "trading" || sold <= 0n) continue
        events = [m.sell(`trader${a.amount % 5}`, (sold * BigInt(a.amount % 100 + 1)) / 100n)]
        break
      }
      case "claim":
        events = [m.feeClaimed(BigInt(a.amount))]
        break
      case "complete":
        if (stage[a.market] !== "trading") continue
        events = m.buy("whale", 200n * unit * 10n)
        stage[a.market] = "completed"
        break
      case "progress":
        if (stage[a.market] !== "completed") continue
        events = [m.progress(a.amount % 3 === 0 ? "delayed" : "in_progress", a.amount % 7)]
        break
      case "migrate":
        if (stage[a.market] !== "completed") continue
        events = [m.migrated()]
        stage[a.market] = "migrated"
        break
      case "poolBuy":
        if (stage[a.market] !== "migrated") continue
        events = [m.poolBuy("pooler", unit)]
        break
      case "retract": {
        const h = history[a.market]!
        const k = Math.min(h.length, (a.amount % 3) + 1)
        if (k === 0) continue
        const undone = h.splice(h.length - k, k)
        m.restore(undone[0]!.before)
        stage[a.market] = m.pool !== undefined ? "migrated" : m.curve.complete ? "completed" : "trading"
        out.push(m.retracted([...undone.flatMap((u) => u.ids), a.amount % 4 === 0 ? "never-seen" : undone[0]!.ids[0]!]))
        continue
      }
    }
    history[a.market]!.push({ ids: events.map((e) => e.id), before })
    out.push(...events)
  }
  return out
}

type Delivery = { readonly at: number; readonly kind: "dup" | "replay" | "restart"; readonly from: number }

const arbDelivery: fc.Arbitrary<Delivery> = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom("dup", "replay", "restart"),
  from: fc.nat()
}) as fc.Arbitrary<Delivery>

const applyAll = (events: ReadonlyArray<ChainEvent>, f: ReturnType<typeof makeStep>, restarts: ReadonlySet<number> = new Set()) => {
  let states = new Map<string, MarketState>()
  events.forEach((e, i) => {
    const key = `${e.chain}:${e.mint}`
    const [next] = f(states.get(key), e)
    if (next === undefined) states.delete(key)
    else states.set(key, next)
    if (restarts.has(i)) {
      // A restart: every state goes through its checkpoint encoding.
      states = new Map([...states].map(([k, s]) => [k, decodeMarketState(encodeMarketState(s))]))
    }
  })
  return states
}

describe("MarketActor property", () => {
  it("duplicates, replays from random offsets and checkpoint restarts give the in-order result", () => {
    fc.assert(
      fc.property(fc.array(arbAction, { maxLength: 60, size: "large" }), fc.array(arbDelivery, { maxLength: 12, size: "large" }), fc.integer({ min: 0, max: 6 }), (actions, deliveries, history) => {
        const events = simulate(actions)
        const f = makeStep({ retractHistory: { solana: history, hood: history + 2 } })
        const delivered: Array<ChainEvent> = []
        const restarts = new Set<number>()
        events.forEach((e, i) => {
          delivered.push(e)
          for (const d of deliveries) {
            if (d.at % events.length !== i) continue
            const from = d.from % (i + 1)
            if (d.kind === "dup") delivered.push(events[from]!)
            else if (d.kind === "replay") delivered.push(...events.slice(from, i + 1))
            else {
              restarts.add(delivered.length - 1)
              delivered.push(...events.slice(from, i + 1))
            }
          }
        })
        expect(applyAll(delivered, f, restarts)).toEqual(applyAll(events, f))
      }),
      { numRuns: 300 }
    )
  })

  it("priceFloat is the float of the price the reserves set, in every state the step makes (curve, pool, migration, rollback) and the codec gives back", () => {
    const checked = { curve: 0, pool: 0 }
    const check = (core: MarketCore | undefined) => {
      if (core === undefined) return
      // Bit for bit (Object.is: NaN is NaN), so a stale float from another venue or reserves fails.
      expect(Object.is(core.priceFloat, priceFloatOf(core))).toBe(true)
      expect(Number.isNaN(core.priceFloat)).toBe(false)
      checked[core.lifecycle === "migrated" ? "pool" : "curve"]++
    }
    fc.assert(
      fc.property(fc.array(arbAction, { maxLength: 60, size: "large" }), fc.integer({ min: 0, max: 6 }), (actions, history) => {
        const f = makeStep({ retractHistory: { solana: history, hood: history + 2 } })
        const states = new Map<string, MarketState>()
        for (const e of simulate(actions)) {
          const key = `${e.chain}:${e.mint}`
          const [next] = f(states.get(key), e)
          if (next === undefined) {
            states.delete(key)
            continue
          }
          states.set(key, next)
          check(next.core)
          check(next.window?.base)
          const decoded = decodeMarketState(encodeMarketState(next))
          check(decoded.core)
          expect(encodeMarketState(next)).not.toContain("priceFloat")
        }
      }),
      { numRuns: 200 }
    )
    expect(checked.curve).toBeGreaterThan(0)
    expect(checked.pool).toBeGreaterThan(0)
  })

  it("no trade is counted twice: lifetime trades equal the trades not retracted", () => {
    fc.assert(
      fc.property(fc.array(arbAction, { maxLength: 60, size: "large" }), (actions) => {
        const events = simulate(actions)
        const f = makeStep({ retractHistory: { solana: 64, hood: 64 } })
        const states = applyAll([...events, ...events], f)
        const retracted = new Set(events.flatMap((e) => (e._tag === "Retracted" ? e.retractedIds : [])))
        for (const [key, s] of states) {
          const trades = events.filter((e) => e._tag === "Trade" && `${e.chain}:${e.mint}` === key && !retracted.has(e.id))
          expect(s.core?.stats.tradesTotal ?? 0).toBe(trades.length)
        }
      }),
      { numRuns: 200 }
    )
  })
})

describe("MarketActor announcements (keys document section 6 webhook events)", () => {
  const announced = (outputs: ReadonlyArray<MarketOutput>) => outputs.flatMap((o) => (o._tag === "Announced" ? [o.notice] : []))

  it("curve.graduated: announced once, by the crossing trade, with chain, mint and curve; the CurveCompleted after it and later trades announce nothing", () => {
    const m = solanaMarket("MintGrad")
    const { state, outputs } = run([m.created(), ...m.buy("alice", SOL), ...m.buy("whale", 100n * SOL)])
    expect(announced(outputs)).toEqual([{ event: "curve.graduated", chain: "solana", mint: "MintGrad", curve: "curve-MintGrad" }])
    const [, out] = step(state, m.progress("in_progress", 1))
    expect(announced(out)).toEqual([])
  })

  it("curve.graduated: a CurveCompleted alone announces it; a market migrated without a completion announces it with the migration", () => {
    const m = hoodMarket("0xgrad")
    const created = m.created()
    const completed = new CurveCompleted({
      id: "hood:done:0",
      position: m.clock.next(),
      chain: "hood",
      mint: m.mint,
      timestampMs: m.clock.nowMs,
      signature: "done",
      curve: created.curve,
      realQuoteRaw: 5n * ETH
    })
    expect(announced(run([created, completed]).outputs)).toEqual([{ event: "curve.graduated", chain: "hood", mint: "0xgrad", curve: "curve-0xgrad" }])
    const n = hoodMarket("0xjump")
    const jumped = run([n.created(), n.migrated()])
    expect(announced(jumped.outputs).map((x) => x.event)).toEqual(["curve.graduated", "migration.completed"])
  })

  it("trades that change no lifecycle output nothing (the shared empty outputs)", () => {
    const m = solanaMarket("MintQuiet")
    const [s] = step(undefined, m.created())
    const [, out1] = step(s, m.buy("a", SOL)[0]!)
    const [, out2] = step(s, m.buy("b", SOL)[0]!)
    expect(out1).toHaveLength(0)
    expect(out1).toBe(out2)
  })

  it("migration.completed: chain, mint, pool and migratedAt (the block time of CurveMigrated); the pool is null on Hood", () => {
    const m = solanaMarket("MintMig")
    const h = hoodMarket("0xmig")
    const sol = run([m.created(), ...m.buy("whale", 100n * SOL), m.progress("in_progress", 1)])
    const migrated = m.migrated()
    expect(announced(step(sol.state, migrated)[1])).toEqual([{ event: "migration.completed", chain: "solana", mint: "MintMig", pool: "pool-MintMig", migratedAtMs: migrated.timestampMs }])
    const hd = run([h.created(), ...h.buy("whale", 10n * ETH)])
    const hm = h.migrated()
    expect(announced(step(hd.state, hm)[1])).toEqual([{ event: "migration.completed", chain: "hood", mint: "0xmig", pool: null, migratedAtMs: hm.timestampMs }])
  })

  it("migration.delayed (Hood only today): chain, mint, curve, attempts and lastError once per delay; nothing on Solana", () => {
    const h = hoodMarket("0xdelay")
    const { state } = run([h.created(), ...h.buy("whale", 10n * ETH), h.progress("in_progress", 4)])
    const [delayed, out] = step(state, h.progress("delayed", 5))
    expect(announced(out)).toEqual([{ event: "migration.delayed", chain: "hood", mint: "0xdelay", curve: "curve-0xdelay", attempts: 5, lastError: "seeding failed" }])
    // Already delayed: a repeated report announces nothing.
    expect(announced(step(delayed, h.progress("delayed", 5))[1])).toEqual([])
    const s = solanaMarket("MintDelay")
    const sol = run([s.created(), ...s.buy("whale", 100n * SOL), s.progress("in_progress", 1), s.progress("delayed", 5)])
    expect(sol.state!.core!.migration.status).toBe("delayed")
    expect(announced(sol.outputs).map((x) => x.event)).toEqual(["curve.graduated"])
  })

  it("a replayed transition (position at or below the market's) announces nothing", () => {
    const m = solanaMarket("MintReplay")
    const events = [m.created(), ...m.buy("whale", 100n * SOL)]
    const { state } = run(events)
    expect(announced(run(events, state).outputs)).toEqual([])
  })
})
