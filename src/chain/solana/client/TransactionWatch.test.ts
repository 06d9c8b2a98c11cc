import { Effect, Exit, Fiber } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { makeTransactionWatch } from "./TransactionWatch.js"

// No call reaches the node: `read` is tested with its own `run`.
const watch = (timeoutMs: number) => makeTransactionWatch("http://127.0.0.1:9", (message) => ({ _tag: "Unavailable", message }) as const, timeoutMs)

describe("TransactionWatch.read", () => {
  it("answers the call's value, and the call's failure as unavailable with its cause", async () => {
    const { read } = watch(1_000)
    expect(await Effect.runPromise(read("getSlot", async () => 7n))).toBe(7n)
    const failed = await Effect.runPromise(Effect.flip(read("getSlot", async () => Promise.reject(new Error("boom")))))
    expect(failed).toEqual({ _tag: "Unavailable", message: "getSlot failed: Error: boom" })
    const thrown = await Effect.runPromise(Effect.flip(read("getSlot", () => { throw new Error("sync") })))
    expect(thrown.message).toBe("getSlot failed: Error: sync")
  })

  it("fails timed out at its deadline and aborts the call", async () => {
    const { read } = watch(30)
    let aborted = false
    const never = (signal: AbortSignal) =>
      new Promise<number>((_, reject) => {
        signal.addEventListener("abort", () => {
          aborted = true
          reject(new Error("aborted"))
        })
      })
    const failed = await Effect.runPromise(Effect.flip(read("getBlockHeight", never)))
    expect(failed).toEqual({ _tag: "Unavailable", message: "getBlockHeight failed: timed out" })
    expect(aborted).toBe(true)
  })

  it("aborts the call when its fiber is interrupted, and answers nothing after", async () => {
    const { read } = watch(60_000)
    let aborted = false
    const exit = await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(read("getSlot", (signal) => new Promise<number>((_, reject) => signal.addEventListener("abort", () => ((aborted = true), reject(new Error("aborted")))))))
        yield* Effect.sleep(10)
        return yield* Fiber.interrupt(fiber)
      })
    )
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(aborted).toBe(true)
  })
})

/**
 * The deadline is one `setTimeout` per read (docs/decisions.md, "TransactionWatch.read keeps its
 * timer"): with it faked, no timer outlives a read however it ends, and a call that settles after
 * the read has ended (a late answer, or its rejection once aborted) changes nothing.
 */
describe("TransactionWatch.read leaves no timer behind", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  /** A call that answers only when told, counting its aborts. */
  const controlled = () => {
    const state = { aborts: 0, answer: (_: number) => {}, fail: (_: Error) => {} }
    const run = (signal: AbortSignal) =>
      new Promise<number>((resolve, reject) => {
        signal.addEventListener("abort", () => state.aborts++)
        state.answer = resolve
        state.fail = reject
      })
    return { state, run }
  }

  it("after success and after failure: no timer, and the deadline passing later aborts nothing", async () => {
    const { read } = watch(5_000)
    const ok = controlled()
    const answered = Effect.runPromise(read("getSlot", ok.run))
    expect(vi.getTimerCount()).toBe(1)
    ok.state.answer(7)
    expect(await answered).toBe(7)
    expect(vi.getTimerCount()).toBe(0)
    const bad = controlled()
    const failed = Effect.runPromise(Effect.flip(read("getSlot", bad.run)))
    bad.state.fail(new Error("boom"))
    expect(await failed).toEqual({ _tag: "Unavailable", message: "getSlot failed: Error: boom" })
    expect(vi.getTimerCount()).toBe(0)
    expect(await Effect.runPromise(Effect.flip(read("getSlot", () => { throw new Error("sync") })))).toMatchObject({ message: "getSlot failed: Error: sync" })
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(ok.state.aborts).toBe(0)
    expect(bad.state.aborts).toBe(0)
  })

  it("at the deadline: timed out, no timer left, and the call's late answer or rejection answers nothing", async () => {
    const { read } = watch(5_000)
    const slow = controlled()
    const outcome = Effect.runPromise(Effect.either(read("getBlockHeight", slow.run)))
    await vi.advanceTimersByTimeAsync(4_999)
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    const timedOut = await outcome
    expect(timedOut).toMatchObject({ _tag: "Left", left: { message: "getBlockHeight failed: timed out" } })
    expect(slow.state.aborts).toBe(1)
    expect(vi.getTimerCount()).toBe(0)
    slow.state.answer(9)
    slow.state.fail(new Error("aborted"))
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await outcome).toBe(timedOut)
    expect(vi.getTimerCount()).toBe(0)
  })

  it("interrupted: no timer left, the call aborted once, and its late answer resumes nothing", async () => {
    const { read } = watch(5_000)
    const cut = controlled()
    let resumed = false
    const exit = await Effect.runPromise(
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(Effect.tap(read("getSlot", cut.run), () => Effect.sync(() => (resumed = true))))
        yield* Effect.yieldNow()
        expect(vi.getTimerCount()).toBe(1)
        return yield* Fiber.interrupt(fiber)
      })
    )
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(vi.getTimerCount()).toBe(0)
    expect(cut.state.aborts).toBe(1)
    cut.state.answer(3)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(resumed).toBe(false)
    expect(cut.state.aborts).toBe(1)
  })
})
