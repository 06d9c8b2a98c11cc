import { address } from "@solana/kit"
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { GENESIS_SOL_USD } from "../chain/solana/localnet/Ledger.js"
import type { RpcSender } from "../chain/solana/RpcSender.js"
import { postDue, priceHeartbeatMs, runPythPublisher, walkPrice } from "./PythPublisher.js"
import { runLooks } from "../../test/support/publisherLooks.js"

describe("the localnet publishers' price walk", () => {
  it("moves by the drawn basis points, exactly in bigint, and stays within half and twice the start", () => {
    const start = 15_000_000_000n
    expect(walkPrice(start, start, 50)).toBe(15_075_000_000n)
    expect(walkPrice(start, start, -50)).toBe(14_925_000_000n)
    expect(walkPrice(start, start, 0)).toBe(start)
    expect(walkPrice(7_510_000_000n, start, -50)).toBe(7_500_000_000n) // clamped at start / 2
    expect(walkPrice(29_990_000_000n, start, 50)).toBe(30_000_000_000n) // clamped at 2 · start
  })
})

describe("postDue: a moved price at once, an unchanged one at the heartbeat", () => {
  it("posts the first price, a changed price at any time, and an unchanged one from exactly the heartbeat on", () => {
    expect(postDue(100n, undefined, 0, 15_000)).toBe(true)
    expect(postDue(101n, { price: 100n, atMs: 1_000 }, 1_001, 15_000)).toBe(true)
    expect(postDue(100n, { price: 100n, atMs: 1_000 }, 15_999, 15_000)).toBe(false)
    expect(postDue(100n, { price: 100n, atMs: 1_000 }, 16_000, 15_000)).toBe(true)
  })
})

describe("priceHeartbeatMs: a quarter of the age a reader may see, within it less the reader's lag, two looks and a second", () => {
  it("is a quarter of the max age, at most maxAge − commitment lag − 2 · look − 1 s, never under one look", () => {
    // PRICE_MAX_AGE_MS 60 s, 2 s looks; Solana confirmed at 400 ms slots (one slot): a quarter.
    expect(priceHeartbeatMs(60_000, 400, 2_000)).toBe(15_000)
    // Solana finalized: 32 slots of 400 ms (the quarter is still inside the bound).
    expect(priceHeartbeatMs(60_000, 32 * 400, 2_000)).toBe(15_000)
    // Finalized with a 20 s max age: the bound, 20 − 12.8 − 4 − 1 = 2.2 s, not the quarter (5 s).
    expect(priceHeartbeatMs(20_000, 32 * 400, 2_000)).toBe(2_200)
    // Hood: the feed's 1 s poll and 2 confirmations of 1 s blocks.
    expect(priceHeartbeatMs(60_000, 3_000, 2_000)).toBe(15_000)
    // A max age the margins eat up: one look (never more often than the looks).
    expect(priceHeartbeatMs(5_000, 400, 2_000)).toBe(2_000)
    // Between one look and the quarter: the bound (12 − 4.5 − 4 − 1 = 2.5 s against a 3 s quarter).
    expect(priceHeartbeatMs(12_000, 4_500, 2_000)).toBe(2_500)
    // The oldest age a reader sees (heartbeat + one look + lag) stays under the max age.
    for (const [maxAge, lag, look] of [[60_000, 400, 2_000], [60_000, 12_800, 2_000], [30_000, 3_000, 500]] as const) {
      expect(priceHeartbeatMs(maxAge, lag, look) + look + lag).toBeLessThan(maxAge)
    }
  })
})

/** A sender that records what it was asked to post, on the Clock, refusing the calls whose numbers are in `refuse`. */
const recordingSender = (refuse: ReadonlySet<number> = new Set()) => {
  const calls: Array<number> = []
  let now = 0
  const sender = {
    send: () => {
      calls.push(now)
      return refuse.has(calls.length) ? Promise.reject(new Error("refused")) : Promise.resolve("sig")
    },
    rpc: undefined as never
  } satisfies RpcSender
  return { sender, calls, setNow: (ms: number) => (now = ms) }
}

const options = { seed: 7, priceAccount: address("7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE"), intervalMs: 2_000, heartbeatMs: 15_000, start: GENESIS_SOL_USD }

describe("runPythPublisher at rest", () => {
  it.effect("a quiet publisher (no moves) posts at start and then only at each heartbeat, not every look", () =>
    Effect.gen(function* () {
      const { sender, calls, setNow } = recordingSender()
      const fiber = yield* Effect.fork(runPythPublisher(sender, { ...options, move: false }))
      yield* runLooks(setNow, 2_000, 20) // 40 s: 21 looks
      yield* Fiber.interrupt(fiber)
      expect(calls).toEqual([0, 16_000, 32_000])
    })
  )

  it.effect("a refused post is not a post: the next look posts again", () =>
    Effect.gen(function* () {
      const { sender, calls, setNow } = recordingSender(new Set([1]))
      const fiber = yield* Effect.fork(runPythPublisher(sender, { ...options, move: false }))
      yield* runLooks(setNow, 2_000, 10)
      yield* Fiber.interrupt(fiber)
      expect(calls).toEqual([0, 2_000, 18_000])
    })
  )

  it.effect("a moving publisher (the simulation) posts at every look where the walk moved the price", () =>
    Effect.gen(function* () {
      const { sender, calls, setNow } = recordingSender()
      const fiber = yield* Effect.fork(runPythPublisher(sender, { ...options, move: true }))
      yield* runLooks(setNow, 2_000, 20)
      yield* Fiber.interrupt(fiber)
      // 21 looks; a look whose drawn step is 0 bps (1 in 101) posts nothing. Seed 7 draws no 0 among
      // these 21, so every look posts (the walk is seeded: the same draws each run).
      expect(calls).toEqual(Array.from({ length: 21 }, (_, i) => i * 2_000))
    })
  )
})
