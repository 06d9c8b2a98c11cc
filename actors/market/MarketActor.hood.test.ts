/**
 * Hood semantics of the market state machine (spec 2.9, 3.6), driven through `step`:
 *
 *   completed ──RecoverySnapshot started──▶ recovery (migration cancelled)   "cancellation by the chain"
 *   recovery ──RecoverySnapshot claimed──▶ recovery (surrendered moves)      "cancellation by the chain"
 *   recovery ──MigrationProgress cancelled (keeper)─▶ recovery (keeper's figures) "keeper after the chain"
 *   trading ──RecoverySnapshot──▶ anomaly; Solana ──RecoverySnapshot──▶ anomaly  "refused"
 *   Retracted then the same id at another position ──▶ applies; same id+position ──▶ skipped  "re-inclusion"
 */
import { describe, expect, it } from "@effect/vitest"
import { type ChainEvent, CurveMigrated, RecoverySnapshot, Trade } from "../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../test/support/marketSim.js"
import { type MarketState, step } from "./MarketActor.js"
import { marketRecord } from "./MarketRecord.js"

const ETH = 10n ** 18n

const run = (events: ReadonlyArray<ChainEvent>, s: MarketState | undefined = undefined) => {
  const outputs = []
  for (const e of events) {
    const [next, out] = step(s, e)
    s = next
    outputs.push(...out)
  }
  return { state: s, outputs }
}

const snapshotOf = (m: SimMarket, cause: "started" | "claimed", surrenderedRaw: bigint, block: bigint) =>
  new RecoverySnapshot({
    id: `hood:0xrec${cause}${surrenderedRaw}:0`,
    position: m.clock.next(),
    chain: m.chain,
    mint: m.mint,
    timestampMs: m.clock.nowMs,
    signature: "0xrec",
    cause,
    curve: `curve-${m.mint}`,
    quoteToken: "0x0000000000000000000000000000000000000000",
    reserveSnapshotRaw: 4n * ETH,
    eligibleSupplyRaw: 1000n,
    surrenderedRaw,
    snapshotBlock: block
  })

describe("MarketActor on Hood", () => {
  it("cancellation by the chain: completed → recovery with the whole recovery block; claims move surrenderedRaw", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xaa" })
    const { state: s1 } = run([m.created(), ...m.buy("whale", 10n * ETH), m.progress("delayed", 5)])
    expect(s1!.core!.lifecycle).toBe("completed")
    const { state, outputs } = run([snapshotOf(m, "started", 0n, 10n)], s1)
    const core = state!.core!
    expect(core.lifecycle).toBe("recovery")
    expect(core.migration).toMatchObject({ status: "cancelled", attempts: 5, nextAttemptAtMs: null })
    expect(core.migration.gaveUpAtMs).not.toBeNull()
    expect(outputs).toContainEqual(expect.objectContaining({ _tag: "MigrationChanged", status: "cancelled" }))
    const record = marketRecord(core, core.lastEventAtMs)
    expect(record).toMatchObject({
      lifecycle: "recovery",
      buysOpen: false,
      sellsOpen: false,
      poolAddress: null,
      crossingModel: "capped-refund",
      trade: { routable: false, reason: "market_recovery" },
      migration: { status: "cancelled", attempts: 5 },
      recovery: {
        curve: "curve-0xaa",
        quoteToken: "0x0000000000000000000000000000000000000000",
        reserveSnapshotRaw: (4n * ETH).toString(),
        eligibleSupplyRaw: "1000",
        surrenderedRaw: "0",
        method: "claimRecovery(uint256)",
        requiresApprovalTo: "curve-0xaa"
      }
    })
    const after = run([snapshotOf(m, "claimed", 300n, 12n)], state).state!.core!
    expect(marketRecord(after, after.lastEventAtMs).recovery).toMatchObject({ surrenderedRaw: "300" })
    // An older block's read never replaces a newer one.
    const stale = run([snapshotOf(m, "claimed", 100n, 11n)], { core: after, window: null }).state!.core!
    expect(stale.recovery!.surrenderedRaw).toBe(300n)
  })

  it("keeper after the chain: a cancelled MigrationProgress in recovery keeps the recovery, takes the keeper's figures", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xab" })
    const { state } = run([m.created(), ...m.buy("whale", 10n * ETH), snapshotOf(m, "started", 0n, 10n), m.progress("cancelled", 3)])
    const core = state!.core!
    expect(core.lifecycle).toBe("recovery")
    expect(core.recovery!.reserveSnapshotRaw).toBe(4n * ETH)
    expect(core.migration).toMatchObject({ status: "cancelled", attempts: 3, lastError: "seeding failed" })
  })

  it("refused: a snapshot on a trading curve or on Solana is an anomaly", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xac" })
    const { state, outputs } = run([m.created(), snapshotOf(m, "started", 0n, 1n)])
    expect(state!.core!.lifecycle).toBe("trading")
    expect(outputs).toContainEqual(expect.objectContaining({ _tag: "Anomaly", reason: "recovery_while_trading" }))
    const s = new SimMarket(new ChainClock("solana"), { mint: "So1" })
    const sol = run([s.created(), ...s.buy("whale", 100n * 10n ** 9n), snapshotOf(s, "started", 0n, 1n)])
    expect(sol.state!.core!.lifecycle).toBe("completed")
    expect(sol.outputs).toContainEqual(expect.objectContaining({ _tag: "Anomaly", reason: "recovery_on_solana" }))
  })

  it("migration keeps the real pool apart: poolAddress null, dexPool in the state; completed until seeded", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xad" })
    const { state } = run([m.created(), ...m.buy("whale", 10n * ETH)])
    expect(marketRecord(state!.core!, 0)).toMatchObject({ lifecycle: "completed", buysOpen: false, migration: { status: "not_started" } })
    const migrated = m.migrated(30)
    const withPool = new CurveMigrated({ ...migrated, dexPool: "0x4444444444444444444444444444444444444444" })
    const core = run([withPool], state).state!.core!
    expect(core.pool).toMatchObject({ address: null, dexPool: "0x4444444444444444444444444444444444444444", feeBps: 30 })
    expect(marketRecord(core, 0)).toMatchObject({ lifecycle: "migrated", poolAddress: null, feeBps: 30, graduationVenue: "dex-evm-v4" })
  })

  it("re-inclusion: after a Retracted, the same id at another position applies; a replayed copy (same id and position) does not", () => {
    const m = new SimMarket(new ChainClock("hood"), { mint: "0xae" })
    const created = m.created()
    const [b] = m.buy("alice", ETH) as [Trade]
    const retract = m.retracted([b.id])
    const moved = new Trade({ ...b, position: m.clock.next() })
    const { state } = run([created, b, retract])
    expect(state!.core!.stats.tradesTotal).toBe(0)
    expect(run([b], state).state!.core!.stats.tradesTotal).toBe(0)
    expect(run([moved], state).state!.core!.stats.tradesTotal).toBe(1)
  })
})
