/**
 * Each tool's `inputSchema`, from the OpenAPI document of the route it calls (`documents.ts`: the
 * route declarations the listeners mount, the same schemas the typed client is generated from): one
 * object whose members are the route's path and query parameters (each the parameter's own schema)
 * and its JSON body's members (the body's schema, or the one branch of a body of alternatives the
 * tool names). No second copy by hand: a changed route declaration changes the tool.
 *
 * As with the outputs (`toolOutputs.ts`), the SDK takes a zod object schema: it carries the JSON
 * Schema as its metadata (what the listing shows) and validates with Ajv against that same schema.
 * `splitArguments` hands the call's arguments back to the route's places (path, query, body).
 */
import type { ValidateFunction } from "ajv/dist/2020.js"
import { z } from "zod"
import { ajv, COMPONENTS, reachable, rewrite } from "./toolOutputs.js"

type Json = Record<string, any>

/** Which route a tool calls, and for a body of alternatives, the component it takes (`AgentTradeRequest`). */
export interface ToolRoute {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly bodyVariant?: string
}

/** A route's declared parameters (path and query), as the document lists them. */
const parametersOf = (op: Json): ReadonlyArray<Json> => ((op.parameters ?? []) as ReadonlyArray<Json>).filter((p) => p.in === "path" || p.in === "query")

const operationOf = (doc: Json, r: ToolRoute): Json => {
  const op = doc.paths?.[r.path]?.[r.method.toLowerCase()] as Json | undefined
  if (op === undefined) throw new Error(`${r.method} ${r.path} is not in the document`)
  return op
}

const resolve = (doc: Json, schema: Json): Json =>
  typeof schema.$ref === "string" && schema.$ref.startsWith(COMPONENTS) ? (doc.components.schemas[schema.$ref.slice(COMPONENTS.length)] as Json) : schema

/** The route's JSON body as one object schema (the named branch of alternatives), or undefined when it takes none. */
export const bodyObjectOf = (doc: Json, r: ToolRoute): Json | undefined => {
  const declared = operationOf(doc, r).requestBody?.content?.["application/json"]?.schema as Json | undefined
  if (declared === undefined) return undefined
  let body = resolve(doc, declared)
  const branches = [...(body.anyOf ?? []), ...(body.oneOf ?? [])] as ReadonlyArray<Json>
  if (branches.length > 0) {
    const chosen = branches.find((b) => b.$ref === `${COMPONENTS}${r.bodyVariant}`)
    if (chosen === undefined) throw new Error(`${r.method} ${r.path}: name one of its body's alternatives (${branches.map((b) => b.$ref).join(", ")})`)
    body = resolve(doc, chosen)
  } else if (r.bodyVariant !== undefined) throw new Error(`${r.method} ${r.path}: its body has no alternatives`)
  if (body.type !== "object") throw new Error(`${r.method} ${r.path}: its body is not an object`)
  return body
}

/** The JSON Schema of a tool calling route `r` of `doc`: its parameters and its body's members, in one object. */
export const toolInputJsonSchema = (doc: Json, r: ToolRoute): Json => {
  const op = operationOf(doc, r)
  const properties: Json = {}
  const required: Array<string> = []
  for (const p of parametersOf(op)) {
    properties[p.name] = p.description !== undefined && p.schema.description === undefined ? { ...p.schema, description: p.description } : p.schema
    if (p.required === true) required.push(p.name)
  }
  const body = bodyObjectOf(doc, r)
  for (const [name, schema] of Object.entries((body?.properties ?? {}) as Json)) {
    if (name in properties) throw new Error(`${r.method} ${r.path}: '${name}' is both a parameter and a body member`)
    properties[name] = schema
  }
  required.push(...((body?.required ?? []) as ReadonlyArray<string>))
  const names = [...reachable(doc, properties)].sort()
  return rewrite({
    type: "object",
    properties,
    ...(required.length > 0 ? { required } : {}),
    // Members beyond the declared ones go to the body when the body admits them.
    additionalProperties: body?.additionalProperties ?? false,
    ...(names.length > 0 ? { definitions: Object.fromEntries(names.map((n) => [n, doc.components.schemas[n]])) } : {})
  }) as Json
}

/** A call's arguments in the route's places: path and query parameters by the document, the rest the body (undefined when the route takes none). */
export const splitArguments = (
  doc: Json,
  r: ToolRoute,
  args: Readonly<Record<string, unknown>>
): { readonly path: Record<string, unknown>; readonly query: Record<string, unknown>; readonly body: Record<string, unknown> | undefined } => {
  const params = new Map(parametersOf(operationOf(doc, r)).map((p) => [p.name as string, p.in as "path" | "query"]))
  const out = { path: {} as Record<string, unknown>, query: {} as Record<string, unknown>, body: {} as Record<string, unknown> }
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined) continue
    out[params.get(k) ?? "body"][k] = v
  }
  return { path: out.path, query: out.query, body: bodyObjectOf(doc, r) === undefined ? undefined : out.body }
}

const built = new WeakMap<Json, Map<string, z.ZodType<Record<string, unknown>>>>()

/** The zod schema the SDK takes for a tool's `inputSchema`: lists `toolInputJsonSchema`, validates against it (built once per document and route). */
export const toolInputSchema = (doc: Json, r: ToolRoute): z.ZodType<Record<string, unknown>> => {
  const byRoute = built.get(doc) ?? new Map<string, z.ZodType<Record<string, unknown>>>()
  built.set(doc, byRoute)
  const key = `${r.method} ${r.path} ${r.bodyVariant ?? ""}`
  let schema = byRoute.get(key)
  if (schema === undefined) {
    const json = toolInputJsonSchema(doc, r)
    const validate: ValidateFunction = ajv.compile(json)
    const { type: _type, ...rest } = json
    schema = z
      .looseObject({})
      .superRefine((value, ctx) => {
        if (!validate(value)) ctx.addIssue({ code: "custom", message: ajv.errorsText(validate.errors, { dataVar: "arguments" }) })
      })
      .meta(rest)
    byRoute.set(key, schema)
  }
  return schema
}
