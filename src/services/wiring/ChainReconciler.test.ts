import { Effect, Fiber, ManagedRuntime, TestClock, TestContext } from "effect"
import * as http from "node:http"
import { createPublicClient, http as viemHttp } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../../../test/support/eventually.js"
import { closeLoopback, listenLoopback } from "../../../test/support/loopbackHttp.js"
import { jsonRpcPending } from "../../chain/internal/JsonRpcHttp.js"
import { chainClaimReconciler } from "./ChainReconciler.js"

/** A Solana RPC that takes every request and never answers; it counts requests whose connection closed unanswered. */
let requests = 0
let closedUnanswered = 0
const server = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    requests++
    res.on("close", () => {
      if (!res.writableFinished) closedUnanswered++
    })
  })
})
let url = ""

beforeAll(async () => {
  url = await listenLoopback(server)
})
afterAll(async () => {
  await closeLoopback(server)
})

describe("chainClaimReconciler", () => {
  it("a Solana read past its timeout is unavailable and ends its HTTP call (no pending call left to the 60 s deadline)", async () => {
    const reconciler = chainClaimReconciler({ solanaRpcUrl: url, hood: createPublicClient({ transport: viemHttp(url) }), timeoutMs: 1_000 })
    // The read's timeout runs on a test clock: it passes only once the request is at the server, whatever the machine's load.
    const runtime = ManagedRuntime.make(TestContext.TestContext)
    try {
      const fiber = runtime.runFork(
        reconciler.outcome({ claimId: "c1", chain: "solana", signature: "1111111111111111111111111111111111111111111111111111111111111111" }).pipe(Effect.either)
      )
      await eventually(() => requests === 1, { what: "the read's request at the server", deadlineMs: 20_000, intervalMs: 20 })
      expect(fiber.unsafePoll()).toBeNull()
      await runtime.runPromise(TestClock.adjust("1 second"))
      const outcome = await runtime.runPromise(Fiber.join(fiber))
      expect(outcome._tag).toBe("Left")
      expect(requests).toBe(1)
      // The fiber's signal aborted the call: nothing is pending once the read answered.
      expect(jsonRpcPending()).toBe(0)
      await eventually(() => closedUnanswered === 1, { what: "the server seeing the request closed", deadlineMs: 20_000, intervalMs: 20 })
    } finally {
      await runtime.dispose()
    }
  })
})
