/**
 * The agent tool server (issue 32): the engine's capabilities as Model Context Protocol tools,
 * each one call of the typed client (`clients/typescript`) with the agent's key; a tool's input
 * schema is its route's parameters and body (`toolInputs.ts`) and its output schema the route's
 * documented answer (`toolOutputs.ts`), both read from the OpenAPI document the route table makes. A refusal
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
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js"
import type { Client } from "openapi-fetch"
import { dataDocument, mainDocument } from "../typescript/documents.js"
import { dataClient, engineClient } from "../typescript/index.js"
import { splitArguments, toolInputSchema, type ToolRoute } from "./toolInputs.js"
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
  /**
   * The fetch of one call, from the caller the transport authenticated (the main listener's
   * endpoint calls its routes in process for the MCP client's address); absent: `fetch`.
   */
  readonly fetchOf?: (authInfo: AuthInfo | undefined) => typeof globalThis.fetch
  /** The OpenAPI documents the tools' schemas are read from (default: both, as `documents.ts` builds them). */
  readonly documents?: { readonly main: Record<string, unknown>; readonly data?: Record<string, unknown> }
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

/** A tool: the route it calls on which listener, and what it says of itself. Its input and output schemas are the route's (`toolInputs.ts`, `toolOutputs.ts`). */
interface ToolDef extends ToolRoute {
  readonly name: string
  readonly description: string
}

/** The engine's tools (the main listener). */
export const ENGINE_TOOLS: ReadonlyArray<ToolDef> = [
  { name: "quote_pairs", method: "GET", path: "/api/v1/launch/quote-pairs", description: "The launch quote pairs (chain, quote asset, decimals, dev-buy bounds)" },
  { name: "market", method: "GET", path: "/api/v1/markets/{chain}/{mint}", description: "A market's record (curve state, lifecycle, venue)" },
  { name: "quote", method: "GET", path: "/api/v1/trade/agent/quote", description: "An exact-input trade quote on the venue the market trades on now, with the plan's fees (raw units)" },
  {
    name: "trade",
    method: "POST",
    path: "/api/v1/trade/agent/submit",
    bodyVariant: "AgentTradeRequest",
    description:
      "One-shot trade from the agent's embedded wallet (payer main): priced on the venue now, signed server-side, sent once, answered confirmed; idempotent on clientTradeId (a repeat answers the stored outcome); dryRun: the figures only; async: answered once recorded, poll trade_status"
  },
  { name: "trade_status", method: "GET", path: "/api/v1/trade/agent/trades/{clientTradeId}", description: "A trade as it stands (status sending, executed or failed)" },
  { name: "feed", method: "GET", path: "/api/v1/markets/feed", description: "The market feed (new, graduated, onfire, finalstretch)" },
  { name: "launch_dry_run", method: "POST", path: "/api/v1/launch/headless/dry-run", description: "Every check of a headless launch; nothing recorded or sent (launch spec 2.6)" },
  { name: "launch", method: "POST", path: "/api/v1/launch/headless", description: "A headless launch from the agent's embedded wallet; idempotent on clientLaunchId (launch spec 2.5); async answers 202 with the job URL" },
  { name: "launch_job", method: "GET", path: "/api/v1/launch/headless/jobs/{clientLaunchId}", description: "A launch's job record (launch spec 2.7): status submitted, confirming, confirmed or failed" },
  { name: "staking_positions", method: "GET", path: "/api/v1/agent/staking", description: "The account's staking pool figures and wallets (stake, withdrawals, unclaimed rewards)" },
  { name: "claim_staking_reward", method: "POST", path: "/api/v1/agent/staking/rewards/{rewardId}/claim", description: "Claim a staking reward to its recorded owner, at most once" },
  { name: "creator_fees", method: "GET", path: "/api/v1/agent/fees", description: "Creator fees of the account's launched tokens (what the chain would pay now)" },
  { name: "claim_creator_fees", method: "POST", path: "/api/v1/agent/fees/{mint}/claim", description: "Claim a launched token's creator fees to the recipient fixed at launch; dryRun: what a claim would do" },
  {
    name: "verify",
    method: "GET",
    path: "/api/v1/verify/{chain}/{mint}",
    description: "Whether this service launched a mint, with its attribution (Solana) or provenance (Hood); unknown mints answer candleLaunched: false"
  }
]

/** The market-data service's tools (offered with its address). */
export const DATA_TOOLS: ReadonlyArray<ToolDef> = [
  { name: "signals", method: "GET", path: "/v1/signals", description: "Recent detected signals (the tape), newest first; pass next_after back as after for the next page" },
  { name: "replay_start", method: "POST", path: "/v1/strategy-lab/replay", description: "Start a strategy replay (Max): {definition, from, to, asset_ids?}; poll with replay_poll until done or failed" },
  { name: "replay_poll", method: "GET", path: "/v1/strategy-lab/replay/{job_id}", description: "A replay job: status (queued, running, done, failed), then its result or error" }
]

/** Both documents, built once: each tool's schemas are its route's. */
let documents: { readonly main: Record<string, unknown>; readonly data: Record<string, unknown> } | undefined
const documentsOnce = () => (documents ??= { main: mainDocument(), data: dataDocument() })

/** A typed client as the tools call it: one method by name, over the route's path. */
type Caller = (method: "GET" | "POST", path: string, init: Record<string, unknown>) => Promise<Answer>
const callerOf =
  (client: Client<any>): Caller =>
  (method, path, init) =>
    (method === "GET" ? client.GET(path as never, init as never) : client.POST(path as never, init as never)) as Promise<Answer>

const registerTools = (
  server: McpServer,
  doc: Record<string, unknown>,
  tools: ReadonlyArray<ToolDef>,
  call: Caller,
  fetchOf: ToolServerOptions["fetchOf"]
) => {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown> | undefined>
  // A tool is offered when the document serves its route (every one in the full documents: `toolInputs.test.ts`).
  for (const t of tools.filter((t) => paths[t.path]?.[t.method.toLowerCase()] !== undefined)) {
    server.registerTool(
      t.name,
      { description: t.description, inputSchema: toolInputSchema(doc, t), outputSchema: toolOutputSchema(doc, t.method, t.path) },
      async (args: Record<string, unknown>, extra) => {
        const { path, query, body } = splitArguments(doc, t, args)
        const init = { params: { path, query }, ...(body !== undefined ? { body } : {}), ...(fetchOf !== undefined ? { fetch: fetchOf(extra.authInfo) } : {}) }
        return result(await call(t.method, t.path, init))
      }
    )
  }
}

/** The tool server over the engine at `baseUrl`, calling with `apiKey`. */
export const toolServer = (o: ToolServerOptions): McpServer => {
  const engine = engineClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
  const server = new McpServer({ name: "curvestream", version: "1.0.0" })
  const main = o.documents?.main ?? documentsOnce().main
  registerTools(server, main, ENGINE_TOOLS, callerOf(engine), o.fetchOf)
  // The OpenAPI documents as the listeners serve them (read when asked, so always the running build's).
  const documentResource = (name: string, url: string, description: string) =>
    server.registerResource(name, `curvestream://openapi/${name}.json`, { description, mimeType: "application/json" }, async (uri, extra) => {
      const res = await (o.fetchOf?.(extra.authInfo) ?? o.fetch ?? globalThis.fetch)(url)
      if (!res.ok) throw new Error(`${url} answered ${res.status}`)
      return { contents: [{ uri: uri.href, mimeType: "application/json", text: await res.text() }] }
    })
  documentResource("main", `${o.baseUrl}/api/v1/openapi.json`, "The engine's OpenAPI document (launch, trade, staking, fees, keys, wallets)")
  if (o.dataUrl !== undefined) documentResource("data", `${o.dataUrl}/v1/openapi.json`, "The market-data service's OpenAPI document (signals, reads, strategy lab)")
  if (o.dataUrl !== undefined) {
    const data = dataClient({ baseUrl: o.dataUrl, apiKey: o.apiKey, ...(o.fetch !== undefined ? { fetch: o.fetch } : {}) })
    registerTools(server, o.documents?.data ?? documentsOnce().data, DATA_TOOLS, callerOf(data), o.fetchOf)
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
