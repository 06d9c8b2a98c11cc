/**
 * The OpenAPI 3.1 description (version 1.0.0, spec section 9), generated from the route table:
 * every route's path and query parameters, request body and response schemas come from the same
 * `RouteDef` the server mounts, so adding a route documents it. Parameters are documented from the
 * declarations the router decodes (`inputs`, from `route()`), the one way to declare them. Effect
 * schemas become JSON Schema through `JSONSchema.fromAST`, sharing one `components.schemas` table.
 */
import { JSONSchema, Schema } from "effect"
import { ErrorCodes } from "../src/domain/ErrorCodes.js"
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

/** The error envelope of spec section 7. */
export const ErrorEnvelope = Schema.Struct({
  success: Schema.Literal(false),
  error: Schema.Struct({
    code: Schema.Literal(...(Object.keys(ErrorCodes) as [string, ...string[]])),
    message: Schema.String,
    field: Schema.optional(Schema.String),
    retryable: Schema.optional(Schema.Boolean)
  })
}).annotations({ identifier: "ErrorEnvelope", description: "Every refusal. Branch on error.code, never on message." })

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
  const toJson = (schema: Schema.Schema.Any): JSONSchema.JsonSchema7 =>
    JSONSchema.fromAST(schema.ast, {
      definitions,
      definitionPath: "#/components/schemas/",
      target: "openApi3.1",
      additionalPropertiesStrategy: "allow"
    })
  const errorRef = toJson(ErrorEnvelope)

  const paths: Record<string, Record<string, unknown>> = {}
  for (const route of routes) {
    if (route.internal === true) continue
    const parameters = parameterDocs(route)
    const responses: Record<string, unknown> = {}
    for (const [status, doc] of Object.entries(route.responses)) {
      const isError = Number(status) >= 400
      const schema = doc.schema !== undefined ? toJson(doc.schema) : isError ? errorRef : undefined
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
      // A public route that reads x-api-key takes a key optionally (the agent quote: the caller's plan).
      security: route.auth === "public" ? (route.headers?.includes("x-api-key") === true ? [{}, { agentKey: [] }] : []) : [{ [route.auth]: [] }]
    }
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation }
  }

  return {
    openapi: "3.1.0",
    info: { title: info.title, version: OPENAPI_VERSION, description: info.description },
    ...(info.serverUrl !== undefined ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: { schemas: definitions, securitySchemes }
  }
}
