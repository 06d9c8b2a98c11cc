import { Deferred, Effect, Either, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import type { WalletChain } from "./ChainKeys.js"
import { makeRecentDelegations, RECENT_DELEGATION_TTL_MS } from "./RecentDelegations.js"

/** A live read over a table the test writes (as another process would), counting its reads. */
const liveTable = () => {
  const states = new Map<string, "active" | "revoked">()
  let reads = 0
  const resolve = (accountId: string, chain: WalletChain) =>
    Effect.suspend(() => {
      reads++
      const state = states.get(`${chain}:${accountId}`)
      return state === "active" ? Effect.succeed({ accountId, chain, address: `addr-${accountId}` }) : Effect.fail(state ?? "not_delegated")
    })
  return { states, resolve, reads: () => reads }
}

const outcome = <A, E>(e: Effect.Effect<A, E>) => Effect.runSync(Effect.either(e))

describe("RecentDelegations: a dry run's delegation read", () => {
  it("keeps an active delegation for the TTL, then reads live again", () => {
    const table = liveTable()
    let now = 1_000
    const recent = makeRecentDelegations(table.resolve, () => now)
    table.states.set("solana:a", "active")
    expect(Either.isRight(outcome(recent.recent("a", "solana")))).toBe(true)
    expect(table.reads()).toBe(1)
    table.states.set("solana:a", "revoked") // another process revokes
    now += RECENT_DELEGATION_TTL_MS - 1
    expect(Either.isRight(outcome(recent.recent("a", "solana")))).toBe(true)
    expect(table.reads()).toBe(1)
    now += 1
    expect(outcome(recent.recent("a", "solana"))).toEqual(Either.left("revoked"))
    expect(table.reads()).toBe(2)
  })

  it("never keeps a refusal: an approval is seen by the next read", () => {
    const table = liveTable()
    const recent = makeRecentDelegations(table.resolve, () => 0)
    expect(outcome(recent.recent("a", "solana"))).toEqual(Either.left("not_delegated"))
    table.states.set("solana:a", "active")
    expect(Either.isRight(outcome(recent.recent("a", "solana")))).toBe(true)
    expect(table.reads()).toBe(2)
  })

  it("keeps per account and chain", () => {
    const table = liveTable()
    const recent = makeRecentDelegations(table.resolve, () => 0)
    table.states.set("solana:a", "active")
    expect(Either.isRight(outcome(recent.recent("a", "solana")))).toBe(true)
    expect(outcome(recent.recent("a", "evm"))).toEqual(Either.left("not_delegated"))
    expect(outcome(recent.recent("b", "solana"))).toEqual(Either.left("not_delegated"))
  })

  it("this process's change drops the entry at once", () => {
    const table = liveTable()
    const recent = makeRecentDelegations(table.resolve, () => 0)
    table.states.set("solana:a", "active")
    expect(Either.isRight(outcome(recent.recent("a", "solana")))).toBe(true)
    table.states.set("solana:a", "revoked")
    recent.changed("a", "solana")
    expect(outcome(recent.recent("a", "solana"))).toEqual(Either.left("revoked"))
  })

  it("a live read that began before a change does not keep what it found", async () => {
    const table = liveTable()
    table.states.set("solana:a", "active")
    const gate = Effect.runSync(Deferred.make<void>())
    let held = true
    const slow = (accountId: string, chain: WalletChain) =>
      held ? Effect.zipRight(Deferred.await(gate), table.resolve(accountId, chain)) : table.resolve(accountId, chain)
    const recent = makeRecentDelegations(slow, () => 0)
    const inFlight = Effect.runFork(recent.recent("a", "solana")) // out, waiting at the gate
    recent.changed("a", "solana") // the revoke is written and this process says so while the read is out
    const found = await Effect.runPromise(Effect.zipRight(Deferred.succeed(gate, undefined), Fiber.join(inFlight)))
    expect(found.address).toBe("addr-a") // what it read (the state before the revoke) is answered, not kept
    held = false
    table.states.set("solana:a", "revoked")
    expect(outcome(recent.recent("a", "solana"))).toEqual(Either.left("revoked"))
  })

  it("holds at most maxEntries, the least recently used evicted", () => {
    const table = liveTable()
    const recent = makeRecentDelegations(table.resolve, () => 0, { maxEntries: 2 })
    for (const a of ["a", "b", "c"]) table.states.set(`solana:${a}`, "active")
    for (const a of ["a", "b", "a", "c"]) Effect.runSync(recent.recent(a, "solana"))
    expect(recent.size()).toBe(2)
    expect(table.reads()).toBe(3)
    Effect.runSync(recent.recent("a", "solana")) // kept (used after b)
    expect(table.reads()).toBe(3)
    Effect.runSync(recent.recent("b", "solana")) // evicted by c
    expect(table.reads()).toBe(4)
  })
})
