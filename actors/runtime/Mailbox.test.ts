import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Mailbox } from "./Mailbox.js"
import { shardOf } from "./ShardedRuntime.js"

describe("Mailbox", () => {
  it("is FIFO and drains in batches of at most `max`", () => {
    const box = new Mailbox<number>(8)
    for (let i = 0; i < 5; i++) expect(box.tryPush(`k${i}`, i)).toBe(true)
    const seen: Array<string> = []
    expect(box.drain(3, (k, v) => seen.push(`${k}=${v}`))).toBe(3)
    expect(box.drain(10, (k, v) => seen.push(`${k}=${v}`))).toBe(2)
    expect(seen).toEqual(["k0=0", "k1=1", "k2=2", "k3=3", "k4=4"])
    expect({ pushed: box.pushed, taken: box.taken, size: box.size }).toEqual({ pushed: 5, taken: 5, size: 0 })
  })

  it("refuses at the bound (never holds more than its capacity) and wraps around", () => {
    const box = new Mailbox<number>(3)
    for (let round = 0; round < 4; round++) {
      expect([box.tryPush("a", 1), box.tryPush("b", 2), box.tryPush("c", 3)]).toEqual([true, true, true])
      expect(box.tryPush("d", 4)).toBe(false)
      expect(box.size).toBe(3)
      const got: Array<number> = []
      box.drain(5, (_, v) => got.push(v))
      expect(got).toEqual([1, 2, 3])
    }
    expect(box.fullWaits).toBe(4)
  })

  it.effect("a producer waiting for space resumes when the consumer drains (backpressure)", () =>
    Effect.gen(function* () {
      const box = new Mailbox<number>(1)
      expect(box.tryPush("a", 1)).toBe(true)
      const waiter = yield* Effect.fork(Effect.zipRight(box.awaitSpace, Effect.sync(() => box.tryPush("b", 2))))
      yield* Effect.yieldNow()
      expect(waiter.unsafePoll()).toBeNull()
      box.drain(1, () => {})
      expect(yield* Fiber.join(waiter)).toBe(true)
      expect(box.size).toBe(1)
    })
  )

  it.effect("the consumer wakes on the first push, and a push while nobody waits is not lost", () =>
    Effect.gen(function* () {
      const box = new Mailbox<number>(4)
      const consumer = yield* Effect.fork(box.awaitItems)
      yield* Effect.yieldNow()
      box.tryPush("a", 1)
      yield* Fiber.join(consumer)
      box.drain(4, () => {})
      box.tryPush("b", 2) // nobody waits now
      yield* box.awaitItems // resolves at once
    })
  )

  it("rejects a capacity that is not a positive integer", () => {
    expect(() => new Mailbox(0)).toThrow(RangeError)
    expect(() => new Mailbox(1.5)).toThrow(RangeError)
  })
})

describe("shardOf", () => {
  it("is stable (FNV-1a) and spreads keys", () => {
    expect(shardOf("solana:So1", 8)).toBe(shardOf("solana:So1", 8))
    // Pinned values: changing the hash would move every mint to another shard.
    expect([shardOf("", 1000), shardOf("a", 1000), shardOf("solana:mint", 1000)]).toEqual([0x811c9dc5 % 1000, 0xe40c292c % 1000, shardOf("solana:mint", 1000)])
    const counts = new Array<number>(8).fill(0)
    for (let i = 0; i < 8000; i++) counts[shardOf(`solana:Mint${i}`, 8)]!++
    for (const c of counts) expect(c).toBeGreaterThan(800)
  })
})
