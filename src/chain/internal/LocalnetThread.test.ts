import { Effect, Exit, Fiber, Scope } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type LocalnetThreadError, startLocalnetThread } from "./LocalnetThread.js"

const fixture = new URL("../../../test/support/localnetThreadFixture.ts", import.meta.url)
const dir = mkdtempSync(path.join(os.tmpdir(), "localnet-thread-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const start = (name: string, failStart = false) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const marker = path.join(dir, name)
    const exit = yield* Effect.exit(Scope.extend(startLocalnetThread<{ url: string; n: bigint }>(name, fixture, { marker, failStart }), scope))
    return { scope, marker, exit }
  })

describe("LocalnetThread", () => {
  it("reports the thread's info, answers calls over the port, and stops the thread's scope when the engine's closes", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const { scope, marker, exit } = yield* start("serves")
        if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
        const thread = exit.value
        const echoed = yield* thread.call("echo", [[1n, "a"]])
        const refused = yield* Effect.flip(thread.call("refuse", []))
        const unknown = yield* Effect.flip(thread.call("nope", []))
        const whileOpen = readFileSync(marker, "utf8")
        yield* Scope.close(scope, Exit.void)
        return { info: thread.info, echoed, refused, unknown, whileOpen, afterClose: readFileSync(marker, "utf8") }
      })
    )
    expect(result.info).toEqual({ url: "http://127.0.0.1:1", n: 42n })
    expect(result.echoed).toEqual([1n, "a"])
    expect(result.refused).toMatchObject({ stage: "call", message: expect.stringContaining("refused on purpose") })
    expect(result.unknown).toMatchObject({ stage: "call", message: "no operation nope" })
    expect(result.whileOpen).toBe("open")
    expect(result.afterClose).toBe("closed")
  })

  it("fails the start with the thread's reason, after closing what the thread had opened", async () => {
    const { exit, marker } = await Effect.runPromise(start("fails", true))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("the chain would not start")
    expect(readFileSync(marker, "utf8")).toBe("closed")
  })

  it("a thread that crashes after its start fails `crashed` and every later call, instead of hanging", async () => {
    const result = await Effect.runPromise(
      Effect.gen(function* () {
        const { scope, exit } = yield* start("crashes")
        if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
        const thread = exit.value
        const watching = yield* Effect.fork(Effect.flip(thread.crashed))
        yield* thread.call("crash", [])
        const crash: LocalnetThreadError = yield* Fiber.join(watching)
        const later = yield* Effect.flip(thread.call("echo", [1]))
        yield* Scope.close(scope, Exit.void)
        return { crash, later }
      }).pipe(Effect.timeout("30 seconds"))
    )
    expect(result.crash).toMatchObject({ localnet: "crashes", stage: "crash", message: expect.stringContaining("slot close threw") })
    expect(result.later).toBe(result.crash)
  })
})
