import { Effect } from "effect"
import * as http from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import type { BusShape } from "../../../ingest/bus/Bus.js"
import { closeLoopback, listenLoopback } from "../../../test/support/loopbackHttp.js"
import { eventually } from "../../../test/support/eventually.js"
import { createNodeSolanaRpc, JSON_RPC_MAX_PENDING, jsonRpcPending } from "../../chain/internal/JsonRpcHttp.js"
import { ingestionReport, type IngestionReport } from "./IngestionLag.js"

/** A bus that answers only what the report reads: 3 records published on partition 0, 1 applied. */
const bus = {
  endOffsets: () => Effect.succeed(new Map([[0, 3]])),
  committed: () => Effect.succeed(new Map([[0, 2]]))
} as unknown as BusShape

/** A node that holds every JSON-RPC request until the test answers it with a head of `result`. */
const heldNode = async () => {
  const requests: Array<{ method: string; res: http.ServerResponse }> = []
  const s = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => requests.push({ method: (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { method: string }).method, res }))
  })
  const url = await listenLoopback(s)
  const answerAll = (result: number) => {
    for (const r of requests) if (!r.res.headersSent) r.res.end(`{"jsonrpc":"2.0","id":1,"result":${result}}`)
  }
  return { url, requests, answerAll, close: () => closeLoopback(s) }
}

const servers: Array<{ close: () => Promise<void> }> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
})

describe("ingestionReport", () => {
  it(`shares one head read per chain among concurrent reports: ${JSON_RPC_MAX_PENDING / 2} /readyz against a slow node leave the chain clients' calls their slots`, async () => {
    const node = await heldNode()
    servers.push(node)
    const report = ingestionReport({
      solanaPublished: Effect.succeed(7n),
      solanaRpcUrl: node.url,
      solanaCommitment: "confirmed",
      hoodPublished: Effect.succeed(null),
      hoodRpcUrl: node.url,
      bus,
      actorsGroup: "actors"
    })
    // As many reports at once as would fill the process's bound if each read both heads itself.
    const reports = Array.from({ length: JSON_RPC_MAX_PENDING / 2 }, () => Effect.runPromise(report))
    await eventually(() => node.requests.length >= 2, { what: "the head reads at the node", deadlineMs: 20_000, intervalMs: 20 })
    // A trade's call to another node is not refused as busy.
    const other = await heldNode()
    servers.push(other)
    let refused: unknown
    const slot = createNodeSolanaRpc(other.url).getSlot().send()
    slot.catch((e: unknown) => (refused = e))
    await eventually(() => other.requests.length === 1 || refused !== undefined, { what: "the kit call at its node", deadlineMs: 20_000, intervalMs: 20 })
    expect(refused).toBeUndefined()
    other.answerAll(9)
    expect(await slot).toBe(9n)
    expect(node.requests).toHaveLength(2)
    expect(jsonRpcPending()).toBeLessThanOrEqual(2)
    node.answerAll(42)
    const all: Array<IngestionReport> = await Promise.all(reports)
    // Every report has the same heads (the shared reads' answer, or null had they passed their deadline first), and the node saw two reads.
    for (const r of all) expect(r).toEqual({ ...all[0]!, actorsPending: 1 })
    expect(all[0]!.solana.published).toBe("7")
    expect(node.requests.map((r) => r.method).sort()).toEqual(["eth_blockNumber", "getSlot"])
    // Once the reads settled, the next report reads again.
    const next = Effect.runPromise(report)
    await eventually(() => node.requests.length === 4, { what: "the next report's two reads", deadlineMs: 20_000, intervalMs: 20 })
    node.answerAll(43)
    expect((await next).actorsPending).toBe(1)
    expect(jsonRpcPending()).toBe(0)
  })
})
