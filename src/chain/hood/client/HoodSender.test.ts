/**
 * The sender's bound on calls in flight to its node: a burst waits its turn in the sender, so the
 * node never holds more than the bound at once, and every call is answered (none times out in a
 * queue it could not see).
 */
import { Effect } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { defineChain } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import { HOOD_READS_IN_FLIGHT, makeHoodSender } from "./HoodSender.js"

let server: Server
let url = ""
let inFlight = 0
let peak = 0
let served = 0
/** Held calls are answered when the test lets them go. */
let held: Array<() => void> = []

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (c: Buffer) => (body += c.toString()))
    req.on("end", () => {
      inFlight += 1
      peak = Math.max(peak, inFlight)
      const { id } = JSON.parse(body) as { id: number }
      held.push(() => {
        inFlight -= 1
        served += 1
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify({ jsonrpc: "2.0", id, result: "0x2a" }))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const chain = defineChain({ id: 31_337, name: "bound", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: ["http://127.0.0.1:1"] } } })

describe("HoodSender: calls in flight to the node", () => {
  it(`a burst of 40 reads holds at most the bound (${HOOD_READS_IN_FLIGHT} by default; 3 here) in the node at once, and every read is answered`, async () => {
    const sender = makeHoodSender({ chain, rpcUrl: url, readsInFlight: 3 }, (message) => message)
    const burst = Effect.runPromise(Effect.all(Array.from({ length: 40 }, (_, i) => sender.read("balance", (c) => c.getBalance({ address: `0x${(i + 1).toString(16).padStart(40, "0")}` }))), { concurrency: "unbounded" }))
    // Let the node answer one held call at a time, until all 40 are served.
    await Effect.runPromise(
      awaitUntil(
        Effect.sync(() => {
          const next = held.shift()
          next?.()
          return served
        }),
        (n) => n === 40,
        { what: "every read answered", intervalMs: 5, timeoutMs: 20_000 }
      )
    )
    expect(await burst).toEqual(Array.from({ length: 40 }, () => 42n))
    expect(peak).toBe(3)
  })
})
