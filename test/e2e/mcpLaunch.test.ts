/**
 * The agent tool server against the started binary (issue 32): the SDK's own client, over
 * streamable HTTP on the engine's main listener (`/api/v1/mcp`, the agent key at the door), over
 * the standalone server's streamable HTTP, and over stdio (the server spawned as `npm run mcp` runs
 * it), launches a token end to end with the local agent key: the dry run, the headless launch, and
 * the job read until the launch is confirmed; a launch's unknown job is a tool error carrying
 * `JOB_NOT_FOUND`; the main listener refuses an unknown key at its door with `UNAUTHORIZED`, and
 * offers the market-data listener's tools (signals, replays) beside the engine's.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { readFileSync } from "node:fs"
import type * as http from "node:http"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MCP_PATH } from "../../src/McpEndpoint.js"
import { MCP_HTTP_PATH, serveHttp } from "../../clients/mcp/server.js"
import { type Engine, projectRoot, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, rawBody } from "../support/launchClient.js"
import { solidImage } from "../support/testImages.js"

let engine: Engine
let key = ""
let imageUrl = ""
let mcpHttp: http.Server

beforeAll(async () => {
  engine = await startEngine({ env: { HEADLESS_LAUNCH_ENABLED: "true" }, args: ["--quiet"], readyTimeoutMs: 120_000 })
  key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  const upload = await agentClient(
    () => engine.url,
    () => key
  )().POST("/api/v1/uploads/agent-image", { ...rawBody(await solidImage("png", 64, 64)), headers: { "content-type": "image/png" } })
  expect(upload.response.status).toBe(200)
  imageUrl = upload.data!.imageUrl
  mcpHttp = await serveHttp({ baseUrl: engine.url, apiKey: key, port: 0 })
}, 150_000)

afterAll(async () => {
  await new Promise((r) => mcpHttp?.close(r))
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

type ToolAnswer = Awaited<ReturnType<Client["callTool"]>>
const body = (x: ToolAnswer) => x.structuredContent as Record<string, any>

const launchEndToEnd = async (client: Client, clientLaunchId: string) => {
  const args = { clientLaunchId, name: `Agent ${clientLaunchId}`, symbol: "AGT", imageUrl, buyAmount: "100000000" }

  const dry = await client.callTool({ name: "launch_dry_run", arguments: args })
  expect(dry.isError, JSON.stringify(dry.content)).toBeFalsy()
  expect(body(dry)).toMatchObject({ success: true, dryRun: true, resolved: { chain: "solana", quoteAsset: "sol", buyAmount: "100000000" } })
  // The dry run wrote nothing: the job is unknown, a tool error with the spec's code.
  const none = await client.callTool({ name: "launch_job", arguments: { clientLaunchId } })
  expect(none.isError).toBe(true)
  expect(body(none)).toMatchObject({ status: 404, code: "JOB_NOT_FOUND" })

  const launched = await client.callTool({ name: "launch", arguments: args })
  expect(launched.isError, JSON.stringify(launched.content)).toBeFalsy()
  const r = body(launched)
  expect(r).toMatchObject({ success: true, chain: "solana", quoteAsset: "sol" })
  expect(r.mint).toEqual(expect.any(String))

  const job = await eventually(
    async () => {
      const j = await client.callTool({ name: "launch_job", arguments: { clientLaunchId } })
      return j.isError !== true && body(j).job?.status === "confirmed" ? body(j).job : undefined
    },
    { what: "the launch job confirmed", deadlineMs: 30_000, intervalMs: 100 }
  )
  expect(job).toMatchObject({ clientLaunchId, chain: "solana", status: "confirmed", mint: r.mint, signature: r.signature })

  const verified = await client.callTool({ name: "verify", arguments: { chain: "solana", mint: r.mint } })
  expect(body(verified)).toMatchObject({ success: true, candleLaunched: true, chain: "solana", mint: r.mint, viaAgentKey: true })
}

describe("an agent launches through the MCP tool server", () => {
  it("over streamable HTTP on the main listener: dry run, headless launch, job read, verify; an unknown key refused at the door", async () => {
    const endpoint = new URL(`${engine.url}${MCP_PATH}`)
    const stranger = new Client({ name: "e2e", version: "1.0.0" })
    await expect(stranger.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { "x-api-key": "svc_live_unknown0_key" } } }))).rejects.toThrow(/UNAUTHORIZED/)
    const client = new Client({ name: "e2e", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
    try {
      await launchEndToEnd(client, `mcp-main-${process.pid}`)
      // The market-data listener's tools too, its routes called in process with the same key.
      const tools = (await client.listTools()).tools.map((t) => t.name)
      expect(tools).toEqual(expect.arrayContaining(["signals", "replay_start", "replay_poll"]))
      const signals = await client.callTool({ name: "signals", arguments: { limit: 5 } })
      expect(signals.isError, JSON.stringify(signals.content)).toBeFalsy()
      expect(body(signals)).toMatchObject({ signals: expect.any(Array) })
      const unknownJob = await client.callTool({ name: "replay_poll", arguments: { job_id: "rpl_000000000000000000000000" } })
      expect(unknownJob.isError).toBe(true)
      expect(body(unknownJob)).toMatchObject({ status: 404 })
    } finally {
      await client.close()
    }
  }, 120_000)

  it("over streamable HTTP: dry run, headless launch, job read, verify", async () => {
    const { port } = mcpHttp.address() as { port: number }
    const client = new Client({ name: "e2e", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}${MCP_HTTP_PATH}`)))
    try {
      await launchEndToEnd(client, `mcp-http-${process.pid}`)
    } finally {
      await client.close()
    }
  }, 120_000)

  it("over stdio: dry run, headless launch, job read, verify", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: path.join(projectRoot, "node_modules/.bin/tsx"),
        args: [path.join(projectRoot, "clients/mcp/server.ts")],
        env: { ...(process.env as Record<string, string>), CURVESTREAM_URL: engine.url, CURVESTREAM_API_KEY: key },
        stderr: "pipe"
      })
    )
    try {
      await launchEndToEnd(client, `mcp-stdio-${process.pid}`)
    } finally {
      await client.close()
    }
  }, 120_000)
})
