/**
 * Each tool's `outputSchema`, from the OpenAPI document of the route it calls (`documents.ts`:
 * the route declarations the listeners mount and serve, the same schemas the typed client is
 * generated from). A tool's structured result is either the route's documented success body or,
 * for a refusal, the tool error's `{status, code, message, ...}` whose `code` is one of the codes
 * the route documents (its refusals, the router's, a market-data plain refusal's `PLAIN_CODES`).
 * Both are in the schema: the SDK's client validates every structured result against it, a tool
 * error's too.
 *
 * The MCP SDK takes a zod object schema and lists its JSON Schema: the object here carries the
 * document's JSON Schema as its metadata (what the listing shows, draft-07 with `definitions`) and
 * validates with Ajv against that same JSON Schema, so what is listed is what is checked.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { z } from "zod"

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
/** The JSON Schema 2020-12 validator the tool schemas check with (inputs and outputs). */
export const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }))

/** The spec code a market-data plain refusal means, by status (`{"error": "invalid api key"}` is 401, `requires Max` 403, a cap 429). */
export const PLAIN_CODES: Readonly<Record<number, string>> = { 401: "UNAUTHORIZED", 403: "TIER_REQUIRED", 404: "VALIDATION_FAILED", 429: "RATE_LIMITED" }

/** The code a tool error carries for a plain refusal at `status`. */
export const plainCode = (status: number): string => PLAIN_CODES[status] ?? `HTTP_${status}`

export const COMPONENTS = "#/components/schemas/"
const DEFINITIONS = "#/definitions/"

/** `v` with component references pointing at `definitions` and Effect's repeated relative `$id` annotations dropped. */
export const rewrite = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(rewrite)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([k]) => k !== "$id")
            .map(([k, x]) => [k, k === "$ref" && typeof x === "string" && x.startsWith(COMPONENTS) ? DEFINITIONS + x.slice(COMPONENTS.length) : rewrite(x)])
        )
      : v

/** The component names `schema` reaches, transitively. */
export const reachable = (doc: Json, schema: unknown, found = new Set<string>()): Set<string> => {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(visit)
    if (v === null || typeof v !== "object") return
    for (const [k, x] of Object.entries(v)) {
      if (k === "$ref" && typeof x === "string" && x.startsWith(COMPONENTS)) {
        const name = x.slice(COMPONENTS.length)
        if (!found.has(name)) {
          found.add(name)
          visit(doc.components.schemas[name])
        }
      } else visit(x)
    }
  }
  visit(schema)
  return found
}

/** A route's refusal codes as a tool error may carry them: the documented ones and the router's. */
const codesOf = (doc: Json, op: Json): ReadonlyArray<string> => {
  const codes = new Set<string>()
  const collect = (status: number, schema: Json | undefined): void => {
    if (schema === undefined) return
    if (schema.$ref === `${COMPONENTS}PlainError`) {
      codes.add(plainCode(status))
      return
    }
    const s: Json = typeof schema.$ref === "string" ? doc.components.schemas[schema.$ref.slice(COMPONENTS.length)] : schema
    for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? [])] as Array<Json>) collect(status, branch)
    for (const c of (s.properties?.error?.properties?.code?.enum ?? []) as Array<string>) codes.add(c)
  }
  for (const [status, r] of Object.entries(op.responses as Json)) {
    if (Number(status) >= 400) collect(Number(status), (r as Json).content?.["application/json"]?.schema)
  }
  for (const list of Object.values((op["x-router-refusals"] ?? {}) as Json)) for (const c of list as Array<string>) codes.add(c)
  return [...codes]
}

/** The JSON Schema of a tool calling `method path` of `doc`: a success body, or the tool error of one of its refusals. */
export const toolOutputJsonSchema = (doc: Json, method: string, path: string): Json => {
  const op = doc.paths?.[path]?.[method.toLowerCase()] as Json | undefined
  if (op === undefined) throw new Error(`${method} ${path} is not in the document`)
  const successes = Object.entries(op.responses as Json)
    .filter(([status]) => Number(status) >= 200 && Number(status) < 300)
    .map(([, r]) => (r as Json).content?.["application/json"]?.schema as Json | undefined)
    .filter((s): s is Json => s !== undefined)
  if (successes.length === 0) throw new Error(`${method} ${path} documents no JSON success`)
  const refusal = {
    type: "object",
    description: "A refusal (the tool result has isError: true): the HTTP status and the envelope's error, its code one the route documents",
    required: ["status", "code", "message"],
    properties: { status: { type: "integer" }, code: { enum: codesOf(doc, op) }, message: { type: "string" } }
  }
  const names = [...reachable(doc, successes)].sort()
  return rewrite({
    type: "object",
    anyOf: [...successes, refusal],
    ...(names.length > 0 ? { definitions: Object.fromEntries(names.map((n) => [n, doc.components.schemas[n]])) } : {})
  }) as Json
}

const built = new WeakMap<Json, Map<string, ReturnType<typeof buildOutputSchema>>>()

/** The zod schema the SDK takes for a tool's `outputSchema`: lists `toolOutputJsonSchema`, validates against it (built once per document and route). */
export const toolOutputSchema = (doc: Json, method: string, path: string): ReturnType<typeof buildOutputSchema> => {
  const byRoute = built.get(doc) ?? new Map<string, ReturnType<typeof buildOutputSchema>>()
  built.set(doc, byRoute)
  const key = `${method.toUpperCase()} ${path}`
  let schema = byRoute.get(key)
  if (schema === undefined) {
    schema = buildOutputSchema(doc, method, path)
    byRoute.set(key, schema)
  }
  return schema
}

const buildOutputSchema = (doc: Json, method: string, path: string) => {
  const schema = toolOutputJsonSchema(doc, method, path)
  const validate: ValidateFunction = ajv.compile(schema)
  const { type: _type, ...rest } = schema
  return z
    .looseObject({})
    .superRefine((value, ctx) => {
      if (!validate(value)) ctx.addIssue({ code: "custom", message: ajv.errorsText(validate.errors, { dataVar: "structuredContent" }) })
    })
    .meta(rest)
}
