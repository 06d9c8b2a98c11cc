/**
 * The OpenAPI 3.1 description (version 1.0.0, spec section 9), generated from the route table:
 * every route's path and query parameters, request body and response schemas come from the same
 * `RouteDef` the server mounts, so adding a route documents it. Parameters are documented from the
 * declarations the router decodes (`inputs`, from `route()`), the one way to declare them. Effect
 * schemas become JSON Schema through `JSONSchema.fromAST`, sharing one `components.schemas` table.
 */
import { JSONSchema, Schema } from "effect"
import { type ErrorCode, ErrorCodes } from "../src/domain/ErrorCodes.js"
import { isJsonMediaType, JSON_MEDIA_TYPES } from "./InputGate.js"
import type { ResponseDoc, RouteBody, RouteDef } from "./Router.js"

/** One OpenAPI parameter object. */
export interface ParameterDoc {
  readonly name: string
  readonly in: "path" | "query"
  readonly required: boolean
  readonly description: string
  readonly schema: Readonly<Record<string, unknown>>
}

/**
 * A route's parameters as OpenAPI documents them: its declarations (`inputs`, the same `Param`s
 * the router decodes; path parameters in path order). A route not built with `route()` has none.
 */
export const parameterDocs = (route: RouteDef): ReadonlyArray<ParameterDoc> => {
  const inputs = route.inputs
  if (inputs === undefined) return []
  const pathOrder = (route.path.match(/\{[^}]+\}/g) ?? []).map((m) => m.slice(1, -1))
  return [
    ...pathOrder.map((name) => {
      const p = inputs.path[name]!
      return { name, in: "path" as const, required: true, description: p.description, schema: p.schema }
    }),
    ...Object.entries(inputs.query).map(([name, p]) => ({ name, in: "query" as const, required: p.required, description: p.description, schema: p.schema }))
  ]
}

export const OPENAPI_VERSION = "1.0.0"

/**
 * The error envelope of spec section 7 with `error.code` one of `codes`: closed at the top, its
 * `error` open (a code's details: `scope`, `retryAfter`, `reason`, `limitBytes`, ...).
 */
export const errorEnvelopeOf = (codes: readonly [string, ...string[]]) =>
  Schema.Struct({
    success: Schema.Literal(false),
    error: Schema.Struct(
      {
        code: Schema.Literal(...codes),
        message: Schema.String,
        field: Schema.optional(Schema.String),
        retryable: Schema.optional(Schema.Boolean)
      },
      Schema.Record({ key: Schema.String, value: Schema.Unknown })
    )
  })

/** The error envelope of spec section 7, any code. */
export const ErrorEnvelope = errorEnvelopeOf(Object.keys(ErrorCodes) as [string, ...string[]]).annotations({
  identifier: "ErrorEnvelope",
  description: "Every refusal. Branch on error.code, never on message."
})

/**
 * A documented refusal: the envelope with `error.code` one of `codes` (the description names
 * them). The router's own refusals at the same status (`implicitRefusals`) are added to the
 * document's enum, so a route lists only what it decides; at a status the route does not
 * declare they are the operation's `x-router-refusals` (status → codes, the envelope's shape).
 */
export const refusal = (listed: readonly [ErrorCode, ...ErrorCode[]], note?: string): ResponseDoc => {
  const codes = [...new Set(listed)]
  return { description: note === undefined ? codes.join(", ") : `${codes.join(", ")}: ${note}`, codes }
}

/** A documented success: its description and the Effect schema of its body (a closed object in the document). */
export const answer = (description: string, schema: Schema.Schema.Any, headers?: ReadonlyArray<string>): ResponseDoc => ({
  description,
  schema,
  ...(headers !== undefined ? { headers } : {})
})

/**
 * The refusals the router itself answers on a route, whatever the route declares (`Router.ts`,
 * `InputGate.ts`, the credential checks): by status.
 */
export const implicitRefusals = (route: RouteDef): Readonly<Record<number, ReadonlyArray<ErrorCode>>> => ({
  400: ["VALIDATION_FAILED"],
  414: ["URI_TOO_LONG"],
  500: ["INTERNAL"],
  ...(route.body !== undefined ? { 413: ["BODY_TOO_LARGE"] } : {}),
  // An agent key past its expiry is refused with KEY_EXPIRED (401) before any route runs.
  ...(route.auth !== "public" ? { 401: route.auth === "agentKey" ? ["UNAUTHORIZED", "KEY_EXPIRED"] : ["UNAUTHORIZED"], 429: ["RATE_LIMITED"] } : {})
})

/**
 * The market-data service's plain refusal (spec document 2, section 7): `{error: message}` and
 * sometimes more members (`quota`, `used`, `job_id`), not the envelope.
 */
export const PlainError = Schema.Struct({ error: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
  identifier: "PlainError",
  description: "A market-data refusal in the service's plain shape: {error: message, ...details}."
})

/** A documented plain refusal (`{error: ...}`): its description and the `PlainError` schema. */
export const plainError = (description: string): ResponseDoc => ({ description, schema: PlainError })

/**
 * A status the market-data service answers either plainly (its own refusal, e.g. a cap) or with
 * the envelope (the router's, e.g. the failed-credential throttle's `RATE_LIMITED`): `PlainError`
 * or the envelope with one of `codes`.
 */
export const plainErrorOrEnvelope = (description: string, codes: readonly [ErrorCode, ...ErrorCode[]]): ResponseDoc => ({
  description: `${description}; or the envelope (${codes.join(", ")})`,
  schema: Schema.Union(PlainError, errorEnvelopeOf(codes))
})

const securitySchemes = {
  agentKey: { type: "apiKey", in: "header", name: "x-api-key", description: "Agent API key (svc_live_... or svc_test_...)" },
  session: { type: "http", scheme: "bearer", description: "Session token or device token (owner routes)" },
  bearer: { type: "http", scheme: "bearer", description: "Agent API key as a bearer token (market-data service)" }
} as const

/** A request body's content by media type: the JSON schema for JSON types, bytes for the others a route accepts. */
const requestContent = (body: RouteBody, toJson: (schema: Schema.Schema.Any) => JSONSchema.JsonSchema7): Record<string, unknown> =>
  Object.fromEntries(
    (body.accepts ?? JSON_MEDIA_TYPES).map((t) => [t, { schema: isJsonMediaType(t) ? toJson(body.schema) : { type: "string", format: "binary" } }])
  )

export const openApiDocument = (
  routes: ReadonlyArray<RouteDef>,
  info: { readonly title: string; readonly description: string; readonly serverUrl?: string }
): Record<string, unknown> => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  // Request bodies stay open as documented (the decoders ignore members they do not read);
  // responses are the engine's own shapes, closed (`additionalProperties: false`). A named
  // schema is documented once, by its first use.
  const convert = (schema: Schema.Schema.Any, additionalPropertiesStrategy: "allow" | "strict"): JSONSchema.JsonSchema7 =>
    JSONSchema.fromAST(schema.ast, { definitions, definitionPath: "#/components/schemas/", target: "openApi3.1", additionalPropertiesStrategy })
  const toJson = (schema: Schema.Schema.Any) => convert(schema, "allow")
  const toResponseJson = (schema: Schema.Schema.Any) => convert(schema, "strict")
  const errorRef = toResponseJson(ErrorEnvelope)

  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    if (route.internal === true) continue
    const parameters = parameterDocs(route)
    const responses: Record<string, unknown> = {}
    const implicit = implicitRefusals(route)
    // The router's refusals at a status the route does not declare: beside the responses (an
    // extension), so `responses` stays exactly what the route declares.
    const routerRefusals = Object.fromEntries(Object.entries(implicit).filter(([status]) => route.responses[Number(status)] === undefined))
    for (const [status, doc] of Object.entries(route.responses)) {
      const isError = Number(status) >= 400
      const codes = doc.codes === undefined ? undefined : [...new Set([...doc.codes, ...(implicit[Number(status)] ?? [])])]
      const schema =
        doc.schema !== undefined
          ? toResponseJson(doc.schema)
          : codes !== undefined && codes.length > 0
            ? toResponseJson(errorEnvelopeOf(codes as [string, ...string[]]))
            : isError
              ? errorRef
              : undefined
      responses[status] = {
        description: doc.description,
        ...(doc.headers !== undefined && doc.headers.length > 0
          ? { headers: Object.fromEntries(doc.headers.map((h) => [h, { schema: { type: "string" } }])) }
          : {}),
        ...(schema !== undefined ? { content: { "application/json": { schema } } } : {})
      }
    }
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description !== undefined ? { description: route.description } : {}),
      tags: route.tags,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body !== undefined
        ? { requestBody: { required: true, content: requestContent(route.body, toJson) } }
        : {}),
      responses,
      "x-router-refusals": routerRefusals,
      // A public route that reads x-api-key takes a key optionally (the agent quote: the caller's plan).
      security: route.auth === "public" ? (route.headers?.includes("x-api-key") === true ? [{}, { agentKey: [] }] : []) : [{ [route.auth]: [] }]
    }
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation }
  }

  return {
    openapi: "3.1.0",
    info: { title: info.title, version: OPENAPI_VERSION, description: info.description },
    // Without a configured address the server is the listener that served the document ("/", relative to it).
    servers: [{ url: info.serverUrl ?? "/", description: info.serverUrl === undefined ? "The listener that served this document" : "This engine" }],
    paths,
    components: { schemas: definitions, securitySchemes }
  }
}
