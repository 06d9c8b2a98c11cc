import { it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, HashMap, Logger, Scope } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { afterAll, describe, expect } from "vitest"
import { eventuallyEffect } from "../../../test/support/eventually.js"
import { type LocalnetThreadError, maxPendingCalls, startLocalnetThread } from "./LocalnetThread.js"

const fixture = new URL("../../../test/support/localnetThreadFixture.ts", import.meta.url)
const neverReady = new URL("../../../test/support/localnetThreadNeverReady.ts", import.meta.url)
const dir = mkdtempSync(path.join(os.tmpdir(), "localnet-thread-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Logged {
  readonly level: string
  readonly message: ReadonlyArray<unknown>
  readonly annotations: Record<string, unknown>
}

/** The engine's logger, recorded: what the thread's forwarded logs and the crash log arrive as. */
const recordLogs = () => {
  const lines: Array<Logged> = []
  const layer = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ annotations, logLevel, message }) => {
      lines.push({ level: logLevel.label, message: Array.isArray(message) ? message : [message], annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
    })
  )
  return { lines, layer }
}

/** Starts the fixture in a scope of its own (the start's exit is returned, not raised). */
const start = (name: string, failStart = false) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const marker = path.join(dir, name)
    const exit = yield* Effect.exit(Scope.extend(startLocalnetThread<{ url: string; n: bigint }>(name, fixture, { marker, failStart }), scope))
    return { scope, marker, exit }
  })

/** Starts the fixture in the test's scope, keeping the worker to await its `exit`. */
const startKeepingWorker = (name: string) =>
  Effect.gen(function* () {
    let worker: Worker | undefined
    const thread = yield* startLocalnetThread<{ url: string; n: bigint }>(
      name,
      fixture,
      { marker: path.join(dir, name), failStart: false },
      { spawn: (entry, workerData) => (worker = new Worker(entry, { workerData })) }
    )
    const exited = new Promise<number>((resolve) => worker!.once("exit", resolve))
    return { thread, exited }
  })

describe("LocalnetThread", () => {
  it.scopedLive("reports the thread's info, answers calls over the port, forwards its logs, and stops the thread's scope when the engine's closes", () => {
    const log = recordLogs()
    return Effect.gen(function* () {
      const { scope, marker, exit } = yield* start("serves")
      if (Exit.isFailure(exit)) return yield* Effect.die(exit.cause)
      const thread = exit.value
      expect(thread.info).toEqual({ url: "http://127.0.0.1:1", n: 42n })
      expect(yield* thread.call("echo", [[1n, "a"]])).toEqual([1n, "a"])
      expect(yield* Effect.flip(thread.call("refuse", []))).toMatchObject({ stage: "call", message: "refused on purpose" })
      expect(yield* Effect.flip(thread.call("throws", []))).toMatchObject({ stage: "call", message: "the ledger refused the transfer" })
      expect(yield* Effect.flip(thread.call("nope", []))).toMatchObject({ stage: "call", message: "no operation nope" })
      // The start's log arrived before `ready`: a bigint annotation as its decimal text, an object message part as JSON.
      expect(log.lines.filter((l) => l.message[0] === "fixture started" || String(l.message[0]).startsWith("fixture started"))).toEqual([
        { level: "INFO", message: ['fixture started {"slot":"7"}'], annotations: { at: "7", localnetThread: "serves" } }
      ])
      expect(readFileSync(marker, "utf8")).toBe("open")
      yield* Scope.close(scope, Exit.void)
      expect(readFileSync(marker, "utf8")).toBe("closed")
    }).pipe(Effect.provide(log.layer))
  })

  it.scopedLive("a logger that throws loses that log only: the start, the calls and a crash's failure go on", () =>
    Effect.gen(function* () {
      const { exit } = yield* start("loggerThrows")
      if (Exit.isFailure(exit)) return yield* Effect.die(exit.cause)
      expect(yield* exit.value.call("echo", [7n])).toBe(7n)
      // The crash's own log throws too: the crash still fails the call and `crashed`.
      const failed = yield* Effect.flip(exit.value.call("crashWhileWaiting", []))
      expect(failed).toMatchObject({ stage: "crash", message: expect.stringContaining("slot close threw") })
      expect(yield* Effect.flip(exit.value.crashed)).toBe(failed)
    }).pipe(
      Effect.provide(
        Logger.replace(
          Logger.defaultLogger,
          Logger.make(() => {
            throw new Error("the log sink is broken")
          })
        )
      )
    )
  )

  it.scopedLive("fails the start with the thread's reason, after closing what the thread had opened", () =>
    Effect.gen(function* () {
      const { exit, marker } = yield* start("fails", true)
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("the chain would not start")
      expect(readFileSync(marker, "utf8")).toBe("closed")
    })
  )

  it.scopedLive("a thread that never reports ready fails the start at the bound, typed, and is terminated", () =>
    Effect.gen(function* () {
      let worker: Worker | undefined
      const failed = yield* Effect.flip(
        startLocalnetThread("hangs", neverReady, {}, { startTimeoutMs: 2_000, spawn: (entry, workerData) => (worker = new Worker(entry, { workerData })) })
      )
      expect(failed).toMatchObject({ localnet: "hangs", stage: "start", message: "the thread was not ready within 2000 ms" })
      // Terminated: its thread id is -1 once it has exited.
      yield* eventuallyEffect(Effect.sync(() => worker!.threadId === -1), { what: "the hung thread to be terminated" })
    })
  )

  it.scopedLive("a thread that crashes after its start fails `crashed`, logs once, and fails every later call with that same error", () => {
    const log = recordLogs()
    return Effect.gen(function* () {
      const { thread, exited } = yield* startKeepingWorker("crashes")
      const watching = yield* Effect.fork(Effect.flip(thread.crashed))
      // The op replies and then throws from a timer; the worker's `error` event and the port's reply
      // are two channels and Node does not order them, so the call either got its reply or failed
      // with the crash itself (CI once saw the second).
      const reply = yield* Effect.either(thread.call("crash", []))
      const crash: LocalnetThreadError = yield* Fiber.join(watching)
      if (Either.isLeft(reply)) expect(reply.left).toBe(crash)
      // The thread emitted `error` and then `exit`; both have been handled once this resolves.
      yield* Effect.promise(() => exited)
      const later = yield* Effect.flip(thread.call("echo", [1]))
      expect(crash).toMatchObject({ localnet: "crashes", stage: "crash", message: expect.stringContaining("slot close threw") })
      // The stack names where the thread threw.
      expect(crash.message).toContain("localnetThreadFixture.ts")
      expect(later).toBe(crash)
      const crashLogs = log.lines.filter((l) => String(l.message[0]).includes("thread crashed"))
      expect(crashLogs).toHaveLength(1)
      expect(crashLogs[0]!.level).toBe("ERROR")
    }).pipe(Effect.provide(log.layer))
  })

  it.scopedLive("a call in flight when the thread crashes fails with the crash", () =>
    Effect.gen(function* () {
      const { thread } = yield* startKeepingWorker("crashes-in-flight")
      const failed = yield* Effect.flip(thread.call("crashWhileWaiting", []))
      expect(failed).toMatchObject({ localnet: "crashes-in-flight", stage: "crash", message: expect.stringContaining("slot close threw") })
      expect(yield* Effect.flip(thread.crashed)).toBe(failed)
    })
  )

  it.scopedLive("a thread whose stop never ends is terminated at the stop's bound, so the engine's shutdown ends", () =>
    Effect.gen(function* () {
      const logs = recordLogs()
      let worker: Worker | undefined
      const scope = yield* Scope.make()
      yield* startLocalnetThread(
        "stuck",
        fixture,
        { marker: path.join(dir, "stuck"), failStart: false, hangStop: true },
        { stopTimeoutMs: 1_000, spawn: (entry, workerData) => (worker = new Worker(entry, { workerData })) }
      ).pipe(Scope.extend(scope), Effect.provide(logs.layer))
      // The close runs the stop as a finalizer (uninterruptible): it must end by its own timer.
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void).pipe(Effect.provide(logs.layer)))
      yield* eventuallyEffect(Effect.map(Fiber.poll(closing), (o) => o._tag === "Some"), { what: "the stuck thread's stop to end", deadlineMs: 20_000 })
      yield* eventuallyEffect(Effect.sync(() => worker!.threadId === -1), { what: "the stuck thread to be terminated" })
      expect(readFileSync(path.join(dir, "stuck"), "utf8")).toBe("open")
      expect(logs.lines.some((l) => l.level === "WARN" && String(l.message[0]).includes("did not stop within 1000 ms"))).toBe(true)
    })
  )

  it.scopedLive("a call whose arguments the port cannot clone fails typed and takes no pending place", () =>
    Effect.gen(function* () {
      const { exit } = yield* start("uncloneable")
      if (Exit.isFailure(exit)) return yield* Effect.die(exit.cause)
      expect(yield* Effect.flip(exit.value.call("echo", [() => 1]))).toMatchObject({ stage: "call" })
      expect(yield* exit.value.call("echo", [2])).toBe(2)
    })
  )

  it.scopedLive("a call in flight when the thread stops fails instead of hanging", () =>
    Effect.gen(function* () {
      const { scope, exit } = yield* start("stops-in-flight")
      if (Exit.isFailure(exit)) return yield* Effect.die(exit.cause)
      const holding = yield* Effect.fork(Effect.flip(exit.value.call("hold", [])))
      // The call has reached the thread once an echo sent after it has come back (the port keeps order).
      yield* exit.value.call("echo", [0])
      yield* Scope.close(scope, Exit.void)
      expect(yield* Fiber.join(holding)).toMatchObject({ stage: "call", message: "the localnet stopped before it replied" })
    })
  )

  it.scopedLive(`at most ${maxPendingCalls} calls wait for a reply; one more fails at once`, () =>
    Effect.gen(function* () {
      const { scope, exit } = yield* start("bounded")
      if (Exit.isFailure(exit)) return yield* Effect.die(exit.cause)
      const thread = exit.value
      const holding = yield* Effect.forEach(Array.from({ length: maxPendingCalls }), () => Effect.fork(Effect.flip(thread.call("hold", []))))
      yield* Effect.yieldNow()
      expect(yield* Effect.flip(thread.call("echo", [1]))).toMatchObject({ stage: "call", message: `${maxPendingCalls} calls already wait for the thread's reply` })
      yield* Scope.close(scope, Exit.void)
      const failed = yield* Fiber.join(Fiber.all(holding))
      expect(failed.every((e) => e.stage === "call")).toBe(true)
    })
  )
})
