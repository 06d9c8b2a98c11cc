import { Effect, Exit, ManagedRuntime, TestClock, TestContext } from "effect"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../test/support/eventually.js"
import { closeLoopback, listenLoopback } from "../../../test/support/loopbackHttp.js"
import { decideIdentity, type IdentityFacts, observeIdentity } from "./ChainIdentity.js"

const facts = (over: Partial<IdentityFacts>): IdentityFacts => ({
  recorded: "genesis:A",
  observed: "genesis:A",
  derivedState: true,
  embedded: true,
  resetAllowed: false,
  ...over
})

describe("decideIdentity", () => {
  it("changes nothing on the recorded chain, whatever the mode or flag", () => {
    for (const embedded of [true, false]) for (const resetAllowed of [true, false]) {
      expect(decideIdentity(facts({ embedded, resetAllowed }))._tag).toBe("Same")
    }
  })

  it("records a first chain when nothing was derived yet", () => {
    expect(decideIdentity(facts({ recorded: undefined, derivedState: false }))._tag).toBe("Record")
    expect(decideIdentity(facts({ recorded: undefined, derivedState: false, embedded: false }))._tag).toBe("Record")
  })

  it("rebuilds an embedded chain that is not the recorded one, or whose state predates identities", () => {
    expect(decideIdentity(facts({ observed: "genesis:B" }))._tag).toBe("Rebuild")
    expect(decideIdentity(facts({ recorded: undefined }))._tag).toBe("Rebuild")
  })

  it("refuses a configured node on another chain unless RESET_CHAIN_STATE names it", () => {
    expect(decideIdentity(facts({ observed: "genesis:B", embedded: false }))._tag).toBe("Refuse")
    expect(decideIdentity(facts({ observed: "genesis:B", embedded: false, resetAllowed: true }))._tag).toBe("Rebuild")
  })

  it("adopts a configured node's state from before identities were recorded (or rebuilds it when asked)", () => {
    expect(decideIdentity(facts({ recorded: undefined, embedded: false }))._tag).toBe("Adopt")
    expect(decideIdentity(facts({ recorded: undefined, embedded: false, resetAllowed: true }))._tag).toBe("Rebuild")
  })
})

/** A fake Solana RPC: answers `getGenesisHash` (or a JSON-RPC error when `failing`), recording each request's authorization. */
let failing = false
const authorizations: Array<string | undefined> = []
const server = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    authorizations.push(req.headers.authorization)
    res.writeHead(200, { "content-type": "application/json" })
    res.end(failing ? '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"down"}}' : '{"jsonrpc":"2.0","id":1,"result":"GenesisHash111"}')
  })
})
let withCredentials = ""

beforeAll(async () => {
  withCredentials = (await listenLoopback(server)).replace("http://", "http://u:s3cret@")
})
afterAll(async () => {
  await closeLoopback(server)
})

describe("observeIdentity", () => {
  it("reads a node whose URL carries user:password (sent as Basic authorization)", async () => {
    failing = false
    expect(await Effect.runPromise(observeIdentity("solana", withCredentials))).toBe("genesis:GenesisHash111")
    expect(authorizations[authorizations.length - 1]).toBe("Basic " + Buffer.from("u:s3cret").toString("base64"))
  })

  it("fails without the URL's password in its message", async () => {
    failing = true
    // The retries' pauses run on a test clock, advanced until the last attempt failed.
    const runtime = ManagedRuntime.make(TestContext.TestContext)
    try {
      const fiber = runtime.runFork(observeIdentity("solana", withCredentials).pipe(Effect.flip))
      const exit = await eventually(
        async () => {
          await runtime.runPromise(TestClock.adjust("1 second"))
          return fiber.unsafePoll() ?? undefined
        },
        { what: "observeIdentity's last attempt failing", deadlineMs: 20_000, intervalMs: 10 }
      )
      if (!Exit.isSuccess(exit)) throw new Error(`observeIdentity did not fail: ${String(exit)}`)
      const error = exit.value
      expect(error.reason).toBe("unreachable")
      expect(error.message).toContain("getGenesisHash: down")
      expect(error.message).toContain("http://***@127.0.0.1:")
      expect(error.message).not.toContain("s3cret")
    } finally {
      await runtime.dispose()
    }
  })

  it("fails at once, not retried as unreachable, when the URL's user:password does not decode, the URL does not parse or is not http(s)", async () => {
    // On a test clock never advanced: a retry would wait on it for ever, so the fiber ends only if none is made.
    const runtime = ManagedRuntime.make(TestContext.TestContext)
    try {
      for (const bad of ["http://a%zz:s3cret@127.0.0.1:1/", "http://u:s3cret@ho st/", "wss://u:s3cret@127.0.0.1:1/"]) {
        const fiber = runtime.runFork(observeIdentity("solana", bad).pipe(Effect.flip))
        const exit = await eventually(() => fiber.unsafePoll() ?? undefined, { what: "observeIdentity failing without a retry", deadlineMs: 20_000, intervalMs: 10 })
        if (!Exit.isSuccess(exit)) throw new Error(`observeIdentity did not fail: ${String(exit)}`)
        expect(exit.value.reason).toBe("misconfigured")
        expect(exit.value.retryable).toBe(false)
        expect(exit.value.message).not.toContain("s3cret")
      }
    } finally {
      await runtime.dispose()
    }
  })
})
