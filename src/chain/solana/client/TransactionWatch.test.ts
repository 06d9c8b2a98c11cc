import { Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
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
