/**
 * The agent tool server (issue 32): the engine's capabilities as Model Context Protocol tools,
 * each one call of the typed client (`clients/typescript`) with the agent's key, so a tool's
 * input is the route's declared input and its output the route's documented answer. A refusal
 * comes back as a tool error whose structured content is the envelope's `error` (its `code`).
 *
 *   npm run mcp                       stdio (CURVESTREAM_URL, CURVESTREAM_API_KEY, CURVESTREAM_DATA_URL)
 *   npm run mcp -- --http 8765        streamable HTTP at http://127.0.0.1:8765/mcp
 *
 * The OpenAPI documents the listeners serve are resources (`curvestream://openapi/main.json`,
 * `curvestream://openapi/data.json`).
 *
 * With the market-data listener's address (`dataUrl`, `CURVESTREAM_DATA_URL`) the server also
 * offers its tools: the recent signals (the tape) and the strategy replay (start, poll). That
 * service answers some refusals in its plain `{error}` shape (spec document 2, section 7); their
 * tool errors carry the code the status means (`PLAIN_CODES`).
 */
import * as http from "node:http"
import { fileURLToPath } from "node:url"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { z } from "zod"
import { dataDocument, mainDocument } from "../typescript/documents.js"
import { dataClient, engineClient } from "../typescript/index.js"
import { PLAIN_CODES, plainCode, toolOutputSchema } from "./toolOutputs.js"

export { PLAIN_CODES }

export const MCP_HTTP_PATH = "/mcp"

export interface ToolServerOptions {
  /** The engine's main listener. */
  readonly baseUrl: string
  /** The agent key the tools call with. */
  readonly apiKey: string
  /** The market-data listener; its tools are offered only with it. */
  readonly dataUrl?: string | undefined
  readonly fetch?: typeof globalThis.fetch
}

type Answer = { readonly data?: unknown; readonly error?: unknown; readonly response: Response }

/** A typed call's answer as a tool result: the body, or a tool error carrying the envelope's `error` (`code`, `message`, ...). */
const result = ({ data, error, response }: Answer) => {
  if (error === undefined) {
    const body = (data ?? {}) as Record<string, unknown>
    return { content: [{ type: "text" as const, text: JSON.stringify(body) }], structuredContent: body }
  }
  const envelope = error as { error?: Record<string, unknown> | string }
  const detail =
    typeof envelope.error === "object" && envelope.error !== null
      ? envelope.error
      : { code: plainCode(response.status), message: String(envelope.error ?? response.statusText) }
  return {
    isError: true,
    content: [{ type: "text" as const, text: `${String(detail.code)}: ${String(detail.message)}` }],
    structuredContent: { status: response.status, ...detail }
  }
}

const chain = z.enum(["solana", "hood"])
const rawAmount = z.string().regex(/^(0|[1-9][0-9]*)$/)

/** Both documents, built once: each tool's output schema is its route's (`toolOutputs.ts`). */
let documents: { readonly main: Record<string, unknown>; readonly data: Record<string, unknown> } | undefined
const engineOutput = (method: string, path: string) => toolOutputSchema((documents ??= { main: mainDocument(), data: dataDocument() }).main, method, path)
const dataOutput = (method: string, path: string) => toolOutputSchema((documents ??= { main: mainDocument(), data: dataDocument() }).data, method, path)

/** The tool server over the engine at `baseUrl`, calling with `apiKey`. */
export const toolServer = (o: ToolServerOptions): McpServer => {
  const engine = engineClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
  const server = new McpServer({ name: "curvestream", version: "1.0.0" })

  server.registerTool(
    "quote_pairs",
    { description: "The launch quote pairs (chain, quote asset, decimals, dev-buy bounds)", outputSchema: engineOutput("GET", "/api/v1/launch/quote-pairs"), inputSchema: {} },
    async () => result(await engine.GET("/api/v1/launch/quote-pairs"))
  )
  server.registerTool(
    "market",
    { description: "A market's record (curve state, lifecycle, venue)", outputSchema: engineOutput("GET", "/api/v1/markets/{chain}/{mint}"), inputSchema: { chain, mint: z.string() } },
    async ({ chain, mint }) => result(await engine.GET("/api/v1/markets/{chain}/{mint}", { params: { path: { chain, mint } } }))
  )
  server.registerTool(
    "quote",
    {
      description: "An exact-input trade quote on the venue the market trades on now, with the plan's fees (raw units)",
      outputSchema: engineOutput("GET", "/api/v1/trade/agent/quote"), inputSchema: { chain, mint: z.string(), side: z.enum(["buy", "sell"]), amountIn: rawAmount, slippageBps: z.number().int().min(0).max(5_000).optional() }
    },
    async ({ chain, mint, side, amountIn, slippageBps }) =>
      result(
        await engine.GET("/api/v1/trade/agent/quote", {
          params: { query: { chain, mint, side, amountIn, ...(slippageBps !== undefined ? { slippageBps } : {}) } }
        } as never) as Answer
      )
  )
  const tradeBody = {
    clientTradeId: z.string().min(1).max(128),
    chain,
    mint: z.string(),
    side: z.enum(["buy", "sell"]),
    amountIn: rawAmount,
    slippageBps: z.number().int().min(0).max(5_000).optional(),
    minAmountOut: rawAmount.optional(),
    dryRun: z.boolean().optional(),
    async: z.boolean().optional()
  }
  server.registerTool(
    "trade",
    {
      description:
        "One-shot trade from the agent's embedded wallet (payer main): priced on the venue now, signed server-side, sent once, answered confirmed; idempotent on clientTradeId (a repeat answers the stored outcome); dryRun: the figures only; async: answered once recorded, poll trade_status",
      inputSchema: tradeBody,
      outputSchema: engineOutput("POST", "/api/v1/trade/agent/submit")
    },
    async (body) => result(await engine.POST("/api/v1/trade/agent/submit", { body: body as never }))
  )
  server.registerTool(
    "trade_status",
    {
      description: "A trade as it stands (status sending, executed or failed)",
      inputSchema: { clientTradeId: z.string().min(1).max(128) },
      outputSchema: engineOutput("GET", "/api/v1/trade/agent/trades/{clientTradeId}")
    },
    async ({ clientTradeId }) => result(await engine.GET("/api/v1/trade/agent/trades/{clientTradeId}", { params: { path: { clientTradeId } } }))
  )
  server.registerTool(
    "feed",
    { description: "The market feed (new, graduating, graduated)", outputSchema: engineOutput("GET", "/api/v1/markets/feed"), inputSchema: { bucket: z.string().optional(), chain: chain.optional(), limit: z.number().int().min(1).max(100).optional() } },
    async (q) => result(await engine.GET("/api/v1/markets/feed", { params: { query: q as never } }))
  )
  const launchBody = {
    clientLaunchId: z.string().min(1).max(128),
    name: z.string(),
    symbol: z.string(),
    imageUrl: z.string(),
    chain: chain.optional(),
    quoteAsset: z.string().optional(),
    mode: z.enum(["open", "exclusive", "exp-a", "exp-b", "exp-c", "exp-custom"]).optional(),
    buyAmount: z.string().optional(),
    description: z.string().optional(),
    visibility: z.enum(["production", "test", "local", "hidden"]).optional()
  }
  server.registerTool(
    "launch_dry_run",
    { description: "Every check of a headless launch; nothing recorded or sent (launch spec 2.6)", outputSchema: engineOutput("POST", "/api/v1/launch/headless/dry-run"), inputSchema: launchBody },
    async (body) => result(await engine.POST("/api/v1/launch/headless/dry-run", { body: body as never }))
  )
  server.registerTool(
    "launch",
    { description: "A headless launch from the agent's embedded wallet; idempotent on clientLaunchId (launch spec 2.5); async answers 202 with the job URL", outputSchema: engineOutput("POST", "/api/v1/launch/headless"), inputSchema: { ...launchBody, async: z.boolean().optional() } },
    async (body) => result(await engine.POST("/api/v1/launch/headless", { body: body as never }))
  )
  server.registerTool(
    "launch_job",
    { description: "A launch's job record (launch spec 2.7): status submitted, confirming, confirmed or failed", outputSchema: engineOutput("GET", "/api/v1/launch/headless/jobs/{clientLaunchId}"), inputSchema: { clientLaunchId: z.string() } },
    async ({ clientLaunchId }) => result(await engine.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } }))
  )
  server.registerTool(
    "staking_positions",
    { description: "The account's staking pool figures and wallets (stake, withdrawals, unclaimed rewards)", outputSchema: engineOutput("GET", "/api/v1/agent/staking"), inputSchema: {} },
    async () => result(await engine.GET("/api/v1/agent/staking"))
  )
  server.registerTool(
    "claim_staking_reward",
    { description: "Claim a staking reward to its recorded owner, at most once", outputSchema: engineOutput("POST", "/api/v1/agent/staking/rewards/{rewardId}/claim"), inputSchema: { rewardId: z.string() } },
    async ({ rewardId }) => result(await engine.POST("/api/v1/agent/staking/rewards/{rewardId}/claim", { params: { path: { rewardId } } }))
  )
  server.registerTool(
    "creator_fees",
    { description: "Creator fees of the account's launched tokens (what the chain would pay now)", outputSchema: engineOutput("GET", "/api/v1/agent/fees"), inputSchema: { limit: z.number().int().min(1).max(100).optional(), cursor: z.string().optional() } },
    async (q) => result(await engine.GET("/api/v1/agent/fees", { params: { query: q as never } }))
  )
  server.registerTool(
    "claim_creator_fees",
    { description: "Claim a launched token's creator fees to the recipient fixed at launch; dryRun: what a claim would do", outputSchema: engineOutput("POST", "/api/v1/agent/fees/{mint}/claim"), inputSchema: { mint: z.string(), dryRun: z.boolean().optional() } },
    async ({ mint, dryRun }) =>
      result(await engine.POST("/api/v1/agent/fees/{mint}/claim", { params: { path: { mint } }, body: (dryRun !== undefined ? { dryRun } : {}) as never }))
  )
  server.registerTool(
    "verify",
    {
      description: "Whether this service launched a mint, with its attribution (Solana) or provenance (Hood); unknown mints answer candleLaunched: false",
      outputSchema: engineOutput("GET", "/api/v1/verify/{chain}/{mint}"), inputSchema: { chain, mint: z.string() }
    },
    async ({ chain, mint }) => result(await engine.GET("/api/v1/verify/{chain}/{mint}", { params: { path: { chain, mint } } }))
  )
  // The OpenAPI documents as the listeners serve them (read when asked, so always the running build's).
  const httpFetch = o.fetch ?? globalThis.fetch
  const documentResource = (name: string, url: string, description: string) =>
    server.registerResource(name, `curvestream://openapi/${name}.json`, { description, mimeType: "application/json" }, async (uri) => {
      const res = await httpFetch(url)
      if (!res.ok) throw new Error(`${url} answered ${res.status}`)
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: await res.text() }] }
    })
  documentResource("main", `${o.baseUrl}/api/v1/openapi.json`, "The engine's OpenAPI document (launch, trade, staking, fees, keys, wallets)")
  if (o.dataUrl !== undefined) documentResource("data", `${o.dataUrl}/v1/openapi.json`, "The market-data service's OpenAPI document (signals, reads, strategy lab)")
  if (o.dataUrl !== undefined) {
    const data = dataClient({ baseUrl: o.dataUrl, apiKey: o.apiKey, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
    server.registerTool(
      "signals",
      {
        description: "Recent detected signals (the tape), newest first; pass next_after back as after for the next page",
        outputSchema: dataOutput("GET", "/v1/signals"), inputSchema: {
          chain: chain.optional(),
          pattern: z.string().optional(),
          asset: z.string().optional(),
          quality: z.enum(["curated", "all", "high", "medium", "low"]).optional(),
          limit: z.number().int().min(1).max(500).optional(),
          after: z.string().optional()
        }
      },
      async (q) => result(await data.GET("/v1/signals", { params: { query: q as never } }))
    )
    server.registerTool(
      "replay_start",
      {
        description: "Start a strategy replay (Max): {definition, from, to, asset_ids?}; poll with replay_poll until done or failed",
        outputSchema: dataOutput("POST", "/v1/strategy-lab/replay"), inputSchema: { definition: z.record(z.string(), z.unknown()), from: z.string(), to: z.string(), asset_ids: z.array(z.string()).max(50).optional() }
      },
      async (body) => result(await data.POST("/v1/strategy-lab/replay", { body: body as never }))
    )
    server.registerTool(
      "replay_poll",
      { description: "A replay job: status (queued, running, done, failed), then its result or error", outputSchema: dataOutput("GET", "/v1/strategy-lab/replay/{job_id}"), inputSchema: { job_id: z.string() } },
      async ({ job_id }) => result(await data.GET("/v1/strategy-lab/replay/{job_id}", { params: { path: { job_id } } }))
    )
  }
  return server
}

/** Serves the tools over streamable HTTP at `MCP_HTTP_PATH` (stateless: a server and transport per request). */
export const serveHttp = (o: ToolServerOptions & { readonly port: number; readonly host?: string }): Promise<http.Server> =>
  new Promise((resolve) => {
    const listener = http.createServer(async (req, res) => {
      if (new URL(req.url ?? "/", "http://x").pathname !== MCP_HTTP_PATH) {
        res.writeHead(404).end()
        return
      }
      // The agent's key: the request's own x-api-key when it sends one, else the server's.
      const key = typeof req.headers["x-api-key"] === "string" ? req.headers["x-api-key"] : o.apiKey
      const server = toolServer({ ...o, apiKey: key })
      // Stateless: no session id (the SDK's option must be present and undefined).
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined } as unknown as ConstructorParameters<typeof StreamableHTTPServerTransport>[0])
      res.on("close", () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      await transport.handleRequest(req, res)
    })
    listener.listen(o.port, o.host ?? "127.0.0.1", () => resolve(listener))
  })

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const baseUrl = process.env.CURVESTREAM_URL ?? "http://127.0.0.1:8080"
  const apiKey = process.env.CURVESTREAM_API_KEY ?? ""
  const dataUrl = process.env.CURVESTREAM_DATA_URL
  const httpAt = process.argv.indexOf("--http")
  if (httpAt >= 0) {
    const port = Number(process.argv[httpAt + 1] ?? "8765")
    const listener = await serveHttp({ baseUrl, apiKey, dataUrl, port })
    const address = listener.address() as { port: number }
    console.error(`curvestream MCP server on http://127.0.0.1:${address.port}${MCP_HTTP_PATH} (engine ${baseUrl})`)
  } else {
    await toolServer({ baseUrl, apiKey, dataUrl }).connect(new StdioServerTransport())
  }
}
