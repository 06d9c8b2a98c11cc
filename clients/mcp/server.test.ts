/**
 * The agent tool server with the SDK's own client over both real transports: stdio (the server
 * spawned as `npm run mcp` runs it) and streamable HTTP. The engine side is the real route
 * declarations and router over HTTP (`mountRoutes`: the launch configuration and market routes
 * over a market index that has not loaded yet), so a success is the route's documented answer and
 * a refusal (the market read's retryable 503 `FEED_UNAVAILABLE` while the index warms) comes back
 * as a tool error carrying the spec's `code`. The market-data side is the strategy lab's real
 * routes over a replay job runner whose replay answers a fixed result (the replay engine has its
 * own tests): a replay is started and polled to done, and an unknown job is `JOB_NOT_FOUND`.
 * Every tool lists an `outputSchema` (its route's documented answer, or the tool error of one of
 * its refusals), and each structured result, refusals included, validates against it.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Ajv } from "ajv"
import addFormatsModule from "ajv-formats"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Exit, Scope } from "effect"
import { apiError } from "../../src/domain/ApiError.js"
import { make as replayJobs } from "../../src/services/strategy/ReplayJobs.js"
import type { ReplayResult } from "../../src/services/strategy/Engine.js"
import { strategyLabRoutes } from "../../api/routes/StrategyLabRoutes.js"
import { eventually } from "../../test/support/eventually.js"
import type * as http from "node:http"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { launchConfigRoutes } from "../../api/routes/LaunchConfigRoutes.js"
import { marketRoutes } from "../../api/routes/MarketRoutes.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { projectRoot } from "../../test/support/engine.js"
import { mountRoutes } from "../../test/support/httpRoutes.js"
import { withOpenApi } from "../../api/routes/OpenApiRoute.js"
import { tradeRoutes } from "../../api/routes/TradeRoutes.js"
import { documentInfo } from "../typescript/documents.js"
import { MCP_HTTP_PATH, serveHttp } from "./server.js"

// Draft-07, as the tools list their schemas (and as the SDK's client validates).
const ajv = (addFormatsModule as unknown as (a: Ajv) => Ajv)(new Ajv({ strict: false, allErrors: true }))
let scope: Scope.CloseableScope
let engineUrl: string
let dataUrl: string
let httpServer: http.Server
const KEY = "svc_test_max_agent"
/** A whole replay result (the documented `ReplayResult` is closed: every member is checked). */
const result: ReplayResult = {
  verdict: "pass",
  verdict_reason: "fixed result of this test's replay runner",
  from: "2024-01-01T00:00:00.000Z",
  to: "2024-01-02T00:00:00.000Z",
  trade_count: 0,
  pnl_usd: "0",
  max_drawdown_pct: 0,
  required_start_usd: "0",
  start_usd: "1000",
  final_usd: "1000",
  peak_capital_at_risk_usd: "0",
  skips: { already_open: 0, max_concurrent: 0, insufficient_capital: 0, no_trade_after_signal: 0, zero_fill: 0 },
  trades: [],
  trades_truncated: false,
  universe: { candidates: 0, priceable: 0, tokens: 0 },
  win_rate: null,
  profit_factor: null,
  expectancy_usd: null,
  sharpe: null,
  sortino: null,
  fees_paid_usd: "0",
  fees: { curve_usd: "0", platform_usd: "0" },
  slippage_usd: "0",
  exit_reasons: { take_profit: 0, stop_loss: 0, trailing: 0, ladder: 0, max_hold: 0, exit_signal: 0, end_of_window: 0 },
  per_token: [],
  per_token_truncated: false,
  benchmark: { kind: "buy_and_hold", tokens: 0, invested_usd: "0", final_usd: "0", pnl_usd: "0", return_pct: null },
  equity: [],
  history: { trades_read: 0, history_start: null },
  fill_model: "fixed"
}

beforeAll(async () => {
  scope = Effect.runSync(Scope.make())
  // The trade rail behind a key check that refuses every key: the trade tool's refusal path.
  const refusingAuth = { authenticate: () => Effect.fail(apiError("UNAUTHORIZED", "Missing, malformed, unknown or revoked API key")), verify: () => Effect.fail(apiError("UNAUTHORIZED", "no")) }
  const routes = withOpenApi(
    [
      ...launchConfigRoutes(DefaultDevBuyCeilings),
      ...marketRoutes({ index: new MarketIndexStore(), nowMs: () => Date.now(), curveProgram: "SVCcurve11111111111111111111111111111111111" }),
      ...tradeRoutes({ agentAuth: refusingAuth, trades: undefined as never, transactions: undefined as never })
    ],
    documentInfo
  )
  engineUrl = await Effect.runPromise(Scope.extend(mountRoutes(routes, "mcp-test-engine"), scope))
  const jobs = await Effect.runPromise(Scope.extend(replayJobs({ run: () => Effect.succeed(result) }), scope))
  const lab = strategyLabRoutes({
    jobs,
    authenticate: (req) =>
      req.headers.authorization === `Bearer ${KEY}` ? Effect.succeed({ accountId: "acct_mcp", plan: "max" as const }) : Effect.fail(apiError("UNAUTHORIZED", "invalid api key"))
  })
  dataUrl = await Effect.runPromise(Scope.extend(mountRoutes(withOpenApi(lab, documentInfo, "/v1/openapi.json"), "mcp-test-data"), scope))
  httpServer = await serveHttp({ baseUrl: engineUrl, apiKey: KEY, dataUrl, port: 0 })
})

afterAll(async () => {
  await new Promise((r) => httpServer?.close(r))
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** A structured result checked against the output schema the tool lists, by a validator of its own (the SDK's client checks too). */
const conforms = (listed: ReadonlyArray<{ name: string; outputSchema?: Record<string, unknown> | undefined }>, name: string, answer: object) => {
  const schema = listed.find((t) => t.name === name)?.outputSchema
  expect(schema, `${name} lists an outputSchema`).toBeDefined()
  const validate = ajv.compile(schema!)
  expect(validate((answer as { structuredContent?: unknown }).structuredContent), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true)
}

const exercise = async (client: Client) => {
  const listed = (await client.listTools()).tools
  const tools = listed.map((t) => t.name)
  // Every tool declares what it answers: its route's documented success, or a tool error with one of the route's codes.
  for (const t of listed) expect(t.outputSchema?.type, `${t.name}: outputSchema`).toBe("object")
  expect(tools).toEqual(
    expect.arrayContaining([
      "quote_pairs", "market", "quote", "feed", "verify", "launch_dry_run", "launch", "launch_job", "staking_positions", "claim_staking_reward",
      "creator_fees", "claim_creator_fees", "signals", "replay_start", "replay_poll", "trade", "trade_status"
    ])
  )
  // The OpenAPI documents the listeners serve, as resources.
  const resources = (await client.listResources()).resources.map((r) => r.uri)
  expect(resources).toEqual(expect.arrayContaining(["curvestream://openapi/main.json", "curvestream://openapi/data.json"]))
  const mainDoc = JSON.parse(((await client.readResource({ uri: "curvestream://openapi/main.json" })).contents[0] as { text: string }).text)
  expect(mainDoc.openapi).toBe("3.1.0")
  expect(Object.keys(mainDoc.paths)).toEqual(expect.arrayContaining(["/api/v1/launch/quote-pairs", "/api/v1/trade/agent/submit"]))
  const dataDoc = JSON.parse(((await client.readResource({ uri: "curvestream://openapi/data.json" })).contents[0] as { text: string }).text)
  expect(Object.keys(dataDoc.paths)).toContain("/v1/strategy-lab/replay")

  // The one-shot trade: the engine's refusal comes back as a tool error with its code.
  const trade = await client.callTool({ name: "trade", arguments: { clientTradeId: "t-1", chain: "solana", mint: "So11111111111111111111111111111111111111112", side: "buy", amountIn: "1000" } })
  expect(trade.isError).toBe(true)
  expect(trade.structuredContent).toMatchObject({ status: 401, code: "UNAUTHORIZED" })
  conforms(listed, "trade", trade)
  const pairs = await client.callTool({ name: "quote_pairs", arguments: {} })
  expect(pairs.isError).toBeFalsy()
  expect(JSON.stringify(pairs.structuredContent)).toContain("solana")
  conforms(listed, "quote_pairs", pairs)

  const warming = await client.callTool({ name: "market", arguments: { chain: "solana", mint: "So11111111111111111111111111111111111111112" } })
  expect(warming.isError).toBe(true)
  expect(warming.structuredContent).toMatchObject({ status: 503, code: "FEED_UNAVAILABLE", retryable: true })
  expect((warming.content as Array<{ text: string }>)[0]!.text).toMatch(/^FEED_UNAVAILABLE: /)
  conforms(listed, "market", warming)

  const verified = await client.callTool({ name: "verify", arguments: { chain: "solana", mint: "So11111111111111111111111111111111111111112" } })
  expect(verified.isError).toBeFalsy()
  expect(verified.structuredContent).toEqual({ success: true, candleLaunched: false })
  conforms(listed, "verify", verified)

  const definition = { chain: "solana", entry: { source: "pattern", pattern: "confluence" }, exit: { take_profit_pct: 50 }, sizing: { usd_per_trade: 10, max_concurrent: 1 } }
  const started = await client.callTool({ name: "replay_start", arguments: { definition, from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z" } })
  expect(started.isError, JSON.stringify(started.content)).toBeFalsy()
  const jobId = (started.structuredContent as { job_id: string }).job_id
  expect(jobId).toEqual(expect.any(String))
  conforms(listed, "replay_start", started)
  const done = await eventually(
    async () => {
      const polled = await client.callTool({ name: "replay_poll", arguments: { job_id: jobId } })
      expect(polled.isError, JSON.stringify(polled.content)).toBeFalsy()
      const job = polled.structuredContent as { status: string; result: unknown }
      return job.status === "done" ? job : undefined
    },
    { what: "the replay to finish", deadlineMs: 10_000, intervalMs: 50 }
  )
  expect(done.result).toMatchObject({ verdict: "pass", trade_count: 0 })
  conforms(listed, "replay_poll", { structuredContent: done })

  const unknown = await client.callTool({ name: "replay_poll", arguments: { job_id: "job_unknown" } })
  expect(unknown.isError).toBe(true)
  expect(unknown.structuredContent).toMatchObject({ status: 404, code: "JOB_NOT_FOUND" })
  conforms(listed, "replay_poll", unknown)
}

describe("the MCP tool server", () => {
  it("serves the tools over stdio", async () => {
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: path.join(projectRoot, "node_modules/.bin/tsx"),
        args: [path.join(projectRoot, "clients/mcp/server.ts")],
        env: { ...(process.env as Record<string, string>), CURVESTREAM_URL: engineUrl, CURVESTREAM_API_KEY: KEY, CURVESTREAM_DATA_URL: dataUrl },
        stderr: "pipe"
      })
    )
    try {
      await exercise(client)
    } finally {
      await client.close()
    }
  }, 120_000)

  it("serves the tools over streamable HTTP", async () => {
    const { port } = httpServer.address() as { port: number }
    const client = new Client({ name: "test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}${MCP_HTTP_PATH}`)))
    try {
      await exercise(client)
    } finally {
      await client.close()
    }
  })
})
