/**
 * The keeper loop under a test clock, with an executor that fails on demand (fault injection at
 * the chain boundary): progress events announce each attempt, retries follow the backoff, the
 * fifth failure reports `delayed`, a market that leaves `completed` is dropped, and a keeper that
 * is not the active one sends nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import { marketActorDefinition } from "../../../actors/MarketActors.js"
import type { MarketCore, MarketState } from "../../../actors/market/MarketActor.js"
import { ChainClock, SimMarket } from "../../../test/support/marketSim.js"
import type { ChainEvent, MigrationProgress } from "../../../ingest/ChainEvent.js"
import { DefaultKeeperPolicy } from "./KeeperPolicy.js"
import { graduatedInLaunchSlot, type MigrationExecutor, runMigrationKeeper } from "./MigrationKeeper.js"

const completedMarket = (): MarketCore => {
  const m = new SimMarket(new ChainClock("solana"), { mint: "Keep1111111111111111111111111111111111111111".slice(0, 43) })
  const definition = marketActorDefinition()
  let state: MarketState | undefined
  const events: ChainEvent[] = [m.created(), ...m.buy("whale", m.params.thresholdRaw * 2n)]
  for (const e of events) state = definition.step(state, e)[0]
  expect(state?.core?.lifecycle).toBe("completed")
  return state!.core!
}

describe("migration keeper loop", () => {
  it.effect("retries with backoff and reports delayed after the last failure", () =>
    Effect.gen(function* () {
      const market = completedMarket()
      const published: MigrationProgress[] = []
      let attempts = 0
      const executor: MigrationExecutor = {
        chain: "solana",
        progressPosition: (n) => Effect.succeed(`s:${"9".repeat(20)}:999999:${String(n).padStart(4, "0")}`),
        migrate: () => Effect.sync(() => attempts++).pipe(Effect.zipRight(Effect.fail("node unavailable")))
      }
      const fiber = yield* Effect.fork(
        runMigrationKeeper({
          candidates: () => [market],
          executors: [executor],
          publish: (events) => Effect.sync(() => published.push(...events)),
          policy: DefaultKeeperPolicy
        })
      )
      yield* TestClock.adjust("1 millis")
      expect(attempts).toBe(1) // found at the first sweep
      for (const wait of [15_000, 30_000, 60_000, 120_000]) yield* TestClock.adjust(wait)
      expect(attempts).toBe(5)
      const last = published.at(-1)!
      expect(last).toMatchObject({ status: "delayed", attempts: 5, nextAttemptAtMs: null, lastError: "node unavailable" })
      expect(last.gaveUpAtMs).toBe(225_000)
      const announced = published.filter((p) => p.status === "in_progress" && p.lastError === null).map((p) => p.attempts)
      expect(announced).toEqual([1, 2, 3, 4, 5])
      const positions = published.map((p) => p.position)
      expect([...positions].sort()).toEqual(positions) // progress positions only move forward
      // Delayed is final for the automated keeper: hours later nothing more is tried.
      yield* TestClock.adjust("6 hours")
      expect(attempts).toBe(5)
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("stops trying once the market is no longer completed", () =>
    Effect.gen(function* () {
      const completed = completedMarket()
      let current: MarketCore = completed
      let attempts = 0
      const executor: MigrationExecutor = {
        chain: "solana",
        progressPosition: () => Effect.succeed("s:00000000000000000001:999999:0001"),
        migrate: () => Effect.sync(() => attempts++).pipe(Effect.as("sig"))
      }
      const fiber = yield* Effect.fork(
        runMigrationKeeper({ candidates: () => [current], executors: [executor], publish: () => Effect.void, policy: DefaultKeeperPolicy })
      )
      yield* TestClock.adjust("1 millis")
      expect(attempts).toBe(1)
      current = { ...completed, lifecycle: "migrated" }
      yield* TestClock.adjust("10 minutes")
      expect(attempts).toBe(1)
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("leaves a Solana curve that completed in its launch slot (rule 8: migration not armed), and takes one completed later", () =>
    Effect.gen(function* () {
      const later = completedMarket()
      // The actor records where the curve completed: here a later slot than its creation.
      expect(later.completedPosition).toBeDefined()
      expect(later.completedPosition!.slice(0, 22) > later.identity.createdPosition.slice(0, 22)).toBe(true)
      expect(graduatedInLaunchSlot(later)).toBe(false)
      const slot = later.identity.createdPosition.slice(0, 22)
      const inLaunchSlot: MarketCore = { ...later, mint: "Same1111111111111111111111111111111111111111".slice(0, 43), completedPosition: `${slot}:000003:0000` }
      expect(graduatedInLaunchSlot(inLaunchSlot)).toBe(true)
      // Hood has no such rule; a market from before the field existed is armed as before.
      expect(graduatedInLaunchSlot({ ...inLaunchSlot, chain: "hood" })).toBe(false)
      const { completedPosition: _dropped, ...legacy } = inLaunchSlot
      expect(graduatedInLaunchSlot(legacy)).toBe(false)
      const migrated: string[] = []
      const executor: MigrationExecutor = {
        chain: "solana",
        progressPosition: () => Effect.succeed("s:00000000000000000001:999999:0001"),
        migrate: (core) => Effect.sync(() => migrated.push(core.mint)).pipe(Effect.as("sig"))
      }
      const fiber = yield* Effect.fork(
        runMigrationKeeper({ candidates: () => [inLaunchSlot, later], executors: [executor], publish: () => Effect.void, policy: DefaultKeeperPolicy })
      )
      yield* TestClock.adjust("10 minutes")
      // (The candidate list never shows the migration landing, so the later market is tried again at each sweep.)
      expect(migrated).toContain(later.mint)
      expect(migrated).not.toContain(inLaunchSlot.mint)
      yield* Fiber.interrupt(fiber)
    })
  )

  it.effect("a keeper that is no longer the active one sends and reports nothing; once active again it sends", () =>
    Effect.gen(function* () {
      const market = completedMarket()
      const published: MigrationProgress[] = []
      let attempts = 0
      let active = false
      const executor: MigrationExecutor = {
        chain: "solana",
        progressPosition: () => Effect.succeed("s:00000000000000000001:999999:0001"),
        migrate: () => Effect.sync(() => attempts++).pipe(Effect.as("sig"))
      }
      const fiber = yield* Effect.fork(
        runMigrationKeeper({
          candidates: () => [market],
          executors: [executor],
          publish: (events) => Effect.sync(() => published.push(...events)),
          policy: DefaultKeeperPolicy,
          active: Effect.sync(() => active)
        })
      )
      yield* TestClock.adjust("10 minutes")
      expect(attempts).toBe(0)
      expect(published).toEqual([])
      active = true
      yield* TestClock.adjust(DefaultKeeperPolicy.sweepIntervalMs)
      expect(attempts).toBe(1)
      expect(published.map((p) => p.status)).toEqual(["in_progress"])
      yield* Fiber.interrupt(fiber)
    })
  )
})
