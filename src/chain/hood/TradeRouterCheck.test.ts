/**
 * `tradeRouterMismatch`: the configured trade router is refused when the address has no code, is
 * not a router, or routes for another factory or SwapRouter; the message names the variable. And
 * `checkTradeRouter`'s bounds (below).
 */
import { it as effectIt } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Fiber, Option, TestClock } from "effect"
import type { Address, Hex, PublicClient } from "viem"
import { describe, expect, it } from "vitest"
import {
  checkTradeRouter,
  TRADE_ROUTER_CHECK_DEADLINE,
  TRADE_ROUTER_CHECK_RETRIES,
  TRADE_ROUTER_CHECK_TIMEOUT,
  TRADE_ROUTER_READ_BOUND,
  tradeRouterMismatch
} from "./TradeRouterCheck.js"

const tradeRouter = "0x1111111111111111111111111111111111111111"
const factory = "0x2222222222222222222222222222222222222222"
const swapRouter = "0x3333333333333333333333333333333333333333"
const other = "0x4444444444444444444444444444444444444444"
const expected = { tradeRouter, factory, swapRouter } as const

describe("tradeRouterMismatch", () => {
  it("accepts a router with code whose factory and SwapRouter are the configured ones (any address case)", () => {
    expect(tradeRouterMismatch(expected, { code: "0x6080", factory: factory.toUpperCase().replace("0X", "0x") as `0x${string}`, swapRouter })).toBeUndefined()
  })

  it("refuses an address with no code, naming HOOD_TRADE_ROUTER_ADDRESS", () => {
    for (const code of [undefined, "0x"] as const) {
      const m = tradeRouterMismatch(expected, { code, factory: undefined, swapRouter: undefined })
      expect(m).toContain("HOOD_TRADE_ROUTER_ADDRESS")
      expect(m).toContain("no contract code")
    }
  })

  it("refuses a contract that is not a router (its immutables' calls reverted)", () => {
    expect(tradeRouterMismatch(expected, { code: "0x6080", factory: undefined, swapRouter })).toContain("is not a TradeRouter")
  })

  it("refuses a router of another factory, or of another SwapRouter, naming both variables", () => {
    const f = tradeRouterMismatch(expected, { code: "0x6080", factory: other, swapRouter })
    expect(f).toContain("HOOD_FACTORY_ADDRESS")
    expect(f).toContain(other)
    const s = tradeRouterMismatch(expected, { code: "0x6080", factory, swapRouter: other })
    expect(s).toContain("HOOD_SWAP_ROUTER_ADDRESS")
  })
})

/**
 * `checkTradeRouter` at its bounds, on the TestClock: a read that hangs is interrupted at
 * `TRADE_ROUTER_CHECK_TIMEOUT` and tried again; a node that never answers fails the check
 * `unreachable` at `TRADE_ROUTER_READ_BOUND` (76 s), not before; reads that each answer only late
 * cannot hold the start past `TRADE_ROUTER_CHECK_DEADLINE` (80 s).
 */
describe("checkTradeRouter at its bounds", () => {
  const hang = <A>(): Promise<A> => new Promise<A>(() => {})
  /** A node whose `getCode` hangs its first `codeHangs` calls and whose immutables' reads hang their first `readHangs` calls. */
  const node = (codeHangs: number, readHangs: number) => {
    const calls = { code: 0, read: 0 }
    const client = {
      getCode: () => (++calls.code <= codeHangs ? hang<Hex>() : Promise.resolve("0x6080" as Hex)),
      readContract: ({ functionName }: { functionName: "factory" | "swapRouter" }) =>
        ++calls.read <= readHangs ? hang<Address>() : Promise.resolve(functionName === "factory" ? factory : swapRouter)
    } as unknown as PublicClient
    return { client, calls }
  }
  const ms = (d: Duration.Duration) => Duration.toMillis(d)

  effectIt.effect("the read bound is what the schedule and the per-read timeout give (76 s); the whole check's deadline is 80 s", () =>
    Effect.sync(() => {
      expect(ms(TRADE_ROUTER_CHECK_TIMEOUT)).toBe(5_000)
      expect(ms(TRADE_ROUTER_READ_BOUND)).toBe(76_000)
      expect(ms(TRADE_ROUTER_CHECK_DEADLINE)).toBe(80_000)
    })
  )

  effectIt.effect("a read that hangs is interrupted at its 5 s bound and tried again 200 ms later; the check passes on the answer", () =>
    Effect.gen(function* () {
      const { client, calls } = node(1, 0)
      const fiber = yield* Effect.fork(checkTradeRouter(client, expected))
      yield* TestClock.adjust(Duration.millis(ms(TRADE_ROUTER_CHECK_TIMEOUT) + 199))
      expect(calls.code).toBe(1)
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(fiber)).toBeUndefined()
      expect(calls).toEqual({ code: 2, read: 2 })
    })
  )

  effectIt.effect("a node that never answers fails the check unreachable at the read bound (76 s), after 11 tries, and not before", () =>
    Effect.gen(function* () {
      const { client, calls } = node(Number.MAX_SAFE_INTEGER, 0)
      const fiber = yield* Effect.fork(checkTradeRouter(client, expected))
      yield* TestClock.adjust(Duration.millis(ms(TRADE_ROUTER_READ_BOUND) - 1))
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      expect(calls.code).toBe(TRADE_ROUTER_CHECK_RETRIES + 1)
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(
        Option.some(expect.objectContaining({ _tag: "TradeRouterConfigError", reason: "unreachable", message: expect.stringContaining("eth_getCode") }))
      )
      expect(calls).toEqual({ code: TRADE_ROUTER_CHECK_RETRIES + 1, read: 0 })
    })
  )

  effectIt.effect("reads that each answer only late cannot hold the start past the check's deadline (80 s)", () =>
    Effect.gen(function* () {
      // eth_getCode answers on its last try (71 s in); factory() then hangs: its own bound would end at 147 s.
      const { client, calls } = node(TRADE_ROUTER_CHECK_RETRIES, Number.MAX_SAFE_INTEGER)
      const fiber = yield* Effect.fork(checkTradeRouter(client, expected))
      yield* TestClock.adjust(Duration.millis(ms(TRADE_ROUTER_CHECK_DEADLINE) - 1))
      expect(Option.isNone(yield* Fiber.poll(fiber))).toBe(true)
      expect(calls.code).toBe(TRADE_ROUTER_CHECK_RETRIES + 1)
      expect(calls.read).toBeGreaterThan(0)
      yield* TestClock.adjust("1 millis")
      const exit = yield* Fiber.await(fiber)
      expect(Exit.isFailure(exit) && Cause.failureOption(exit.cause)).toEqual(
        Option.some(expect.objectContaining({ _tag: "TradeRouterConfigError", reason: "unreachable", message: expect.stringContaining("within 1m 20s") }))
      )
    })
  )
})
