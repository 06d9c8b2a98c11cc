/**
 * A tool's input schema is its route's request schema (`toolInputs.ts`): every tool the server
 * lists (as the SDK's client sees it) takes exactly its route's path and query parameters, each
 * with the parameter's own schema, and its body's members with the body's schemas, required as the
 * route requires them; an argument the route's schema refuses is refused before any call is made.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dataDocument, mainDocument } from "../typescript/documents.js"
import { DATA_TOOLS, ENGINE_TOOLS, toolServer } from "./server.js"
import { bodyObjectOf, splitArguments } from "./toolInputs.js"
import { rewrite } from "./toolOutputs.js"

type Json = Record<string, any>
const main = mainDocument() as Json
const data = dataDocument() as Json
const calls: Array<string> = []
let client: Client
let listed: ReadonlyArray<{ name: string; inputSchema: Json }>

beforeAll(async () => {
  // Any call reaching the network is recorded and answered 500: the refused arguments must never get here.
  const fetch = (async (input: Request) => {
    calls.push(`${input.method} ${new URL(input.url).pathname}`)
    return new Response("{}", { status: 500 })
  }) as typeof globalThis.fetch
  const server = toolServer({ baseUrl: "http://engine.test", dataUrl: "http://data.test", apiKey: "svc_test_key", fetch })
  const [a, b] = InMemoryTransport.createLinkedPair()
  await server.connect(a)
  client = new Client({ name: "test", version: "1.0.0" })
  await client.connect(b)
  listed = (await client.listTools()).tools as never
})

afterAll(async () => {
  await client?.close()
})

describe("tool input schemas", () => {
  for (const [doc, tools] of [
    [main, ENGINE_TOOLS],
    [data, DATA_TOOLS]
  ] as const) {
    for (const t of tools) {
      it(`${t.name}: the input schema is ${t.method} ${t.path}'s parameters and body`, () => {
        const schema = listed.find((x) => x.name === t.name)?.inputSchema
        expect(schema, `${t.name} is listed`).toBeDefined()
        const op = doc.paths[t.path][t.method.toLowerCase()] as Json
        const params = ((op.parameters ?? []) as Array<Json>).filter((p) => p.in === "path" || p.in === "query")
        const body = bodyObjectOf(doc, t)
        const expected: Json = {}
        for (const p of params) expected[p.name] = rewrite({ ...p.schema, ...(p.schema.description === undefined ? { description: p.description } : {}) })
        for (const [k, v] of Object.entries((body?.properties ?? {}) as Json)) expected[k] = rewrite(v)
        expect(schema!.type).toBe("object")
        expect(schema!.properties ?? {}).toEqual(expected)
        const required = [...params.filter((p) => p.required === true).map((p) => p.name), ...((body?.required ?? []) as Array<string>)]
        expect([...((schema!.required ?? []) as Array<string>)].sort()).toEqual(required.sort())
        expect(schema!.additionalProperties).toEqual(body?.additionalProperties ?? false)
      })
    }
  }

  it("the trade tool takes the agent trade request, not the signed submit", () => {
    const schema = listed.find((x) => x.name === "trade")!.inputSchema
    const request = main.components.schemas.AgentTradeRequest as Json
    expect(Object.keys(schema.properties)).toEqual(Object.keys(request.properties))
  })

  it("split a call's arguments into the route's path, query and body", () => {
    const claim = ENGINE_TOOLS.find((t) => t.name === "claim_creator_fees")!
    expect(splitArguments(main, claim, { mint: "M", dryRun: true })).toEqual({ path: { mint: "M" }, query: {}, body: { dryRun: true } })
    const quote = ENGINE_TOOLS.find((t) => t.name === "quote")!
    expect(splitArguments(main, quote, { chain: "solana", mint: "M", side: "buy", amountIn: "1" })).toEqual({
      path: {},
      query: { chain: "solana", mint: "M", side: "buy", amountIn: "1" },
      body: undefined
    })
  })

  it("refuse arguments the route's schema refuses, before any call", async () => {
    const before = calls.length
    const bad = [
      { name: "quote", arguments: { chain: "solana", mint: "M", side: "hold", amountIn: "1" } },
      { name: "quote", arguments: { chain: "solana", mint: "M", side: "buy", amountIn: "1.5" } },
      { name: "launch_job", arguments: {} },
      { name: "verify", arguments: { chain: "solana", mint: "M", extra: 1 } },
      { name: "signals", arguments: { limit: 1000 } }
    ]
    for (const call of bad) {
      const answer = await client.callTool(call).catch((e: Error) => ({ isError: true, content: [{ type: "text", text: e.message }] }))
      expect(answer.isError, `${call.name} ${JSON.stringify(call.arguments)}`).toBe(true)
      expect(JSON.stringify(answer.content)).toMatch(/Input validation error|Invalid arguments/)
    }
    expect(calls.length).toBe(before)
    // A valid call reaches the route (its path and query in place).
    await client.callTool({ name: "quote", arguments: { chain: "solana", mint: "M", side: "buy", amountIn: "1" } }).catch(() => undefined)
    expect(calls.slice(before)).toEqual(["GET /api/v1/trade/agent/quote"])
  })
})
