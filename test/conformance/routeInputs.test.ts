/**
 * The OpenAPI document cannot drift from what the router enforces: every route of both services'
 * tables is built with `route()` (the main service's as `src/MainApi.ts` composes it, accounts, keys,
 * wallets and webhooks included; the market-data service's as `src/DataService.ts` composes it:
 * the tape and the strategy lab, the reads, personal routes and strategies), and the document's
 * parameters are exactly the declared `Param`s (names, location, required, schema) and its request body is the
 * declared body schema (or its `documented` stand-in where the schema has no JSON Schema, whose
 * top-level fields must be the decoded schema's); and every declared parameter's decoder enforces what its schema says (the
 * required flag, defaults, integer bounds at and past each end, enum members, lengths, patterns).
 */
import { type Schema, SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { dataRoutes, type DataRoutesDeps } from "../../api/data/DataRoutes.js"
import { personalRoutes, type PersonalRoutesDeps } from "../../api/data/personal/PersonalRoutes.js"
import { type TokenReadDeps, tokenReadRoutes } from "../../api/data/reads/TokenReadRoutes.js"
import { type WalletSocialDeps, walletSocialRoutes } from "../../api/data/reads/WalletSocialRoutes.js"
import { openApiDocument } from "../../api/OpenApi.js"
import type { Param } from "../../api/QueryParams.js"
import type { RouteDef } from "../../api/Router.js"
import { strategyRoutes, type StrategyRoutesDeps } from "../../api/data/strategy/StrategyRoutes.js"
import { accountRoutes, type AccountRoutesDeps } from "../../api/routes/AccountRoutes.js"
import { agentRoutes, type AgentRoutesOptions } from "../../api/routes/AgentRoutes.js"
import { healthRoutes } from "../../api/routes/HealthRoutes.js"
import { keyRoutes, type KeyRoutesDeps } from "../../api/routes/KeyRoutes.js"
import { launchConfigRoutes } from "../../api/routes/LaunchConfigRoutes.js"
import { markRoutes, type MarkRoutesOptions } from "../../api/routes/MarkRoutes.js"
import { marketRoutes } from "../../api/routes/MarketRoutes.js"
import { withOpenApi } from "../../api/routes/OpenApiRoute.js"
import { planRoutes } from "../../api/routes/PlanRoutes.js"
import { strategyLabRoutes, type StrategyLabRoutesDeps } from "../../api/routes/StrategyLabRoutes.js"
import { walletRoutes, type WalletRoutesDeps } from "../../api/routes/WalletRoutes.js"
import { webhookRoutes, type WebhookRoutesDeps } from "../../api/routes/WebhookRoutes.js"
import { ApiError } from "../../src/domain/ApiError.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { tradeQuoteRoutes, type TradeQuoteRoutesOptions } from "../../api/routes/TradeQuoteRoutes.js"
import { tradeRoutes } from "../../api/routes/TradeRoutes.js"
import { orderRoutes, type OrderRoutesOptions } from "../../api/routes/OrderRoutes.js"

const info = { title: "t", description: "d" }
const index = new MarketIndexStore()
const nowMs = () => 0
// Construction reads no dependency but the addresses; the decoders under test never reach one.
const unused = undefined as never
/** A dependency whose presence adds routes (the lab's jobs), never called at construction. */
const present = {} as never
const tables: Record<string, ReadonlyArray<RouteDef>> = {
  main: withOpenApi(
    [
      ...healthRoutes([]),
      ...launchConfigRoutes(DefaultDevBuyCeilings),
      ...planRoutes(resolvePlans({}, 30), 30),
      ...marketRoutes({ index, nowMs, curveProgram: "SVCcurve11111111111111111111111111111111111" }),
      ...tradeQuoteRoutes({
        index, nowMs, agentAuth: unused, freePlan: planById(resolvePlans({}, 30), "free"), hoodPools: null, creatorShares: { solana: 3_000n, hood: 3_000n }
      } satisfies TradeQuoteRoutesOptions),
      ...tradeRoutes({ agentAuth: unused, trades: unused, transactions: unused }),
      ...markRoutes({
        index, nowMs, publicClient: unused, prices: unused,
        addresses: { uniswapV3Factory: `0x${"11".repeat(20)}`, weth9: `0x${"22".repeat(20)}` }
      } satisfies MarkRoutesOptions),
      ...agentRoutes({ index, nowMs, sql: unused, clickhouse: unused, prices: unused, tiers: unused, wallets: unused } satisfies AgentRoutesOptions),
      // `accountStackApi` (api/auth/Adapters.ts): accounts and keys, wallets, webhooks.
      ...keyRoutes({ keys: unused, tiers: unused, agentAuth: unused, ownerAuth: unused, nowMs } satisfies KeyRoutesDeps),
      ...accountRoutes({ devices: unused, ownerAuth: unused, wallets: unused, sql: unused, nowMs } satisfies AccountRoutesDeps),
      ...walletRoutes({ wallets: unused, authenticate: unused } satisfies WalletRoutesDeps),
      ...webhookRoutes({ service: unused, authenticate: unused } satisfies WebhookRoutesDeps),
      ...orderRoutes({ agentAuth: unused, orders: unused } satisfies OrderRoutesOptions)
    ],
    info
  ),
  strategyLab: strategyLabRoutes({ jobs: unused, authenticate: unused } satisfies StrategyLabRoutesDeps),
  // `src/DataService.ts`: the tape with the lab, the reads, personal routes, strategies.
  data: withOpenApi(
    [
      ...dataRoutes({ auth: unused, clickhouse: unused, hub: unused, tracking: unused, jobs: present } satisfies DataRoutesDeps),
      ...tokenReadRoutes({ clickhouse: unused, index, prices: unused, nowMs, authenticate: unused } satisfies TokenReadDeps),
      ...walletSocialRoutes({ clickhouse: unused, index, prices: unused, nowMs, authenticate: unused, tracking: unused, social: unused } satisfies WalletSocialDeps),
      ...personalRoutes({ sql: unused, authenticate: unused } satisfies PersonalRoutesDeps),
      ...strategyRoutes({ strategies: unused, research: unused, authenticate: unused } satisfies StrategyRoutesDeps)
    ],
    info
  )
}

type Json = Record<string, any>

/** The declared parameter's decoder against its documented schema. */
const probe = (where: string, p: Param<unknown>) => {
  const s = p.schema as Json
  const refuses = (raw: string | undefined) => expect(p.decode(raw, "x"), `${where} refuses ${raw}`).toBeInstanceOf(ApiError)
  const accepts = (raw: string) => expect(p.decode(raw, "x"), `${where} accepts ${raw}`).not.toBeInstanceOf(ApiError)
  const absent = p.decode(undefined, "x")
  expect(absent instanceof ApiError, `${where}: refused when absent exactly when required`).toBe(p.required)
  if (s.default !== undefined) expect(absent, `${where} default`).toEqual(s.default)
  if (s.type === "integer") {
    expect(p.decode(String(s.minimum), "x"), `${where} minimum`).toBe(s.minimum)
    expect(p.decode(String(s.maximum), "x"), `${where} maximum`).toBe(s.maximum)
    refuses(s.minimum > 0 ? String(s.minimum - 1) : "-1")
    refuses(String(s.maximum + 1))
    refuses("1.5")
    refuses("x")
  }
  if (Array.isArray(s.enum)) {
    for (const v of s.enum as ReadonlyArray<string>) accepts(v)
    refuses("not-a-member")
  }
  if (typeof s.maxLength === "number") refuses("a".repeat(s.maxLength + 1))
  if (typeof s.pattern === "string") {
    expect(new RegExp(s.pattern).test("\u0000"), `${where}: the probe must not match the pattern`).toBe(false)
    refuses("\u0000")
  }
}

describe("body bounds (README, HTTP_MAX_BODY_BYTES)", () => {
  it("every route that takes a body declares its own bound, 1 KiB to 64 KiB", () => {
    const bounds = Object.values(tables).flat().filter((r) => r.body !== undefined).map((r) => [`${r.method} ${r.path}`, r.body!.maxBytes] as const)
    expect(bounds.length).toBeGreaterThan(20)
    for (const [where, bound] of bounds) {
      expect(bound, where).toBeGreaterThanOrEqual(1024)
      expect(bound, where).toBeLessThanOrEqual(64 * 1024)
    }
  })
})

describe("documented refusals", () => {
  it("data: every plain `{error}` refusal is documented with the PlainError schema, never the envelope", () => {
    const doc = openApiDocument(tables.data!, info) as Json
    let plain = 0
    for (const [path, ops] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(ops as Json)) {
        for (const [status, r] of Object.entries((op as Json).responses as Json)) {
          const schema = (r as Json).content?.["application/json"]?.schema as Json | undefined
          const ref = schema?.$ref
          if (/^`?\{"error"/.test((r as Json).description)) {
            plain++
            // Plain, or (where the router's throttle answers the same status) plain or the envelope.
            const refs = schema?.anyOf !== undefined ? (schema.anyOf as Array<Json>).map((x) => x.$ref) : [ref]
            expect(refs, `${method} ${path} ${status}`).toContain("#/components/schemas/PlainError")
          } else if (Number(status) >= 400 && ref !== undefined) expect(ref, `${method} ${path} ${status}`).not.toBe("#/components/schemas/PlainError")
        }
      }
    }
    expect(plain).toBeGreaterThan(20)
    expect(doc.paths["/v1/signals"].get.responses["401"].content["application/json"].schema.$ref).toBe("#/components/schemas/PlainError")
    expect(doc.components.schemas.PlainError.required).toEqual(["error"])
  })
})

describe("declared inputs and the OpenAPI document", () => {
  for (const [name, routes] of Object.entries(tables)) {
    it(`${name}: parameters and request bodies are the declarations the router decodes`, () => {
      const doc = openApiDocument(routes, info) as Json
      for (const route of routes) {
        const where = `${route.method} ${route.path}`
        const inputs = route.inputs
        expect(inputs, `${where} is built with route()`).toBeDefined()
        if (inputs === undefined) continue
        const op = doc.paths[route.path][route.method.toLowerCase()] as Json
        const pathOrder = (route.path.match(/\{[^}]+\}/g) ?? []).map((m) => m.slice(1, -1))
        const declared = [
          ...pathOrder.map((n) => ({ name: n, in: "path", param: inputs.path[n]! })),
          ...Object.entries(inputs.query).map(([n, param]) => ({ name: n, in: "query", param }))
        ]
        const documented = (op.parameters ?? []) as ReadonlyArray<Json>
        expect(documented.map((d) => `${d.in}:${d.name}`), where).toEqual(declared.map((d) => `${d.in}:${d.name}`))
        declared.forEach((d, i) => {
          const doc = documented[i]!
          expect(doc.schema, `${where} ${d.name} schema`).toBe(d.param.schema)
          expect(doc.required, `${where} ${d.name} required`).toBe(d.in === "path" ? true : d.param.required)
          expect(doc.description).toBe(d.param.description)
          if (d.in === "path") expect(d.param.required, `${where} path ${d.name}`).toBe(true)
          probe(`${where} ${d.name}`, d.param)
        })
        if (inputs.body === undefined) {
          expect(op.requestBody, where).toBeUndefined()
          expect(route.body, where).toBeUndefined()
        } else {
          const shown = inputs.body.documented ?? inputs.body.schema
          expect(route.body?.schema, where).toBe(shown)
          const alone = openApiDocument(
            [{ method: "POST", path: "/b", operationId: "b", summary: "", tags: [], auth: "public", responses: {}, handler: unused, body: { schema: shown } }],
            info
          ) as Json
          expect(op.requestBody, where).toEqual(alone.paths["/b"].post.requestBody)
          if (inputs.body.documented !== undefined) {
            const fields = (s: Schema.Schema.Any): ReadonlyArray<string> => {
              const ast = SchemaAST.isRefinement(s.ast) ? s.ast.from : s.ast
              return SchemaAST.isTypeLiteral(ast) ? ast.propertySignatures.map((p) => `${String(p.name)}${p.isOptional ? "?" : ""}`) : []
            }
            expect(fields(inputs.body.documented), `${where}: documented fields`).toEqual(fields(inputs.body.schema))
          }
        }
      }
    })
  }
})
