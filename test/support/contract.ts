/**
 * Every answer a test receives, checked against the documented contract (issue 32): the
 * operation is looked up by method and path in the OpenAPI document the answering listener
 * serves itself (`/api/v1/openapi.json` on the main listener, `/v1/openapi.json` on the
 * market-data one: generated from the very route table it mounts), then the status, then the
 * JSON body is validated by Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) against that
 * response's schema. An undocumented operation or status, an undocumented member of a closed
 * object or a wrong type throws, failing the test that received the answer.
 *
 * A documented response with no schema (a success still described in words) is not checked
 * here; `test/conformance/responseSchemas.test.ts` keeps the list of those routes and fails when
 * one is added. Answers that are not JSON (images, HTML, metrics) are checked only for status.
 *
 * `contractSetup.ts` (a vitest setup file) installs `checkingFetch` as the global `fetch` in the
 * end-to-end, conformance and property suites, so every call helper (the typed client, the launch and
 * accounts harnesses, `launchClient`, each file's own `call`) is checked without knowing it. An
 * origin that serves no OpenAPI document (a chain's RPC, a webhook receiver) is passed through.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/** The document paths a listener may serve (main, market data). */
const DOCUMENT_PATHS = ["/api/v1/openapi.json", "/v1/openapi.json"] as const
/** Endpoints of a listener that are not OpenAPI operations: the MCP endpoint (`src/McpEndpoint.ts` `MCP_PATH`; its test checks the two agree). */
export const NOT_OPENAPI_PATHS: ReadonlyArray<string> = ["/api/v1/mcp"]

export interface ContractDocument {
  readonly doc: Json
  readonly id: string
}

const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateFormats: true }))
const documents = new Map<string, Promise<ContractDocument | undefined>>()
const validators = new Map<string, ValidateFunction>()
let registered = 0

/** Effect marks `Unknown` and `{}` with a relative `$id` (`/schemas/unknown`), repeated: an annotation here, not a resource. */
const withoutNestedIds = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(withoutNestedIds)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== "$id").map(([k, x]) => [k, withoutNestedIds(x)]))
      : v

/** Registers a document with the validator (its components resolve by JSON pointer). */
export const contractDocument = (doc: Json): ContractDocument => {
  const id = `urn:curvestream:openapi:${registered++}`
  ajv.addSchema({ ...(withoutNestedIds(doc) as Json), $id: id }, id)
  return { doc, id }
}

/** The `fetch` the check itself uses (the platform's, whatever the global is now). */
const plainFetch: typeof fetch = globalThis.fetch

const documentOf = (origin: string): Promise<ContractDocument | undefined> => {
  let found = documents.get(origin)
  if (found === undefined) {
    found = (async () => {
      for (const p of DOCUMENT_PATHS) {
        const res = await plainFetch(`${origin}${p}`)
        if (res.status === 200) return contractDocument((await res.json()) as Json)
        await res.body?.cancel()
      }
      return undefined
    })()
    // A listener that is not up yet is asked again next time.
    found.catch(() => documents.delete(origin))
    documents.set(origin, found)
  }
  return found
}

const escapePointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1")

/** The documented path template `path` matches: a literal path before a template, fewer parameters first. */
export const operationPath = (doc: Json, method: string, path: string): string | undefined => {
  const m = method.toLowerCase()
  const candidates = Object.keys(doc.paths ?? {}).filter((template) => {
    if (doc.paths[template][m] === undefined) return false
    const re = new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")).join("[^/]+")}$`)
    return re.test(path)
  })
  const params = (t: string) => (t.match(/\{/g) ?? []).length
  return candidates.sort((a, b) => params(a) - params(b))[0]
}

/** Problems of one answer against a registered document; empty when it conforms. */
export const contractProblems = (
  contract: ContractDocument,
  method: string,
  path: string,
  status: number,
  contentType: string | null | undefined,
  text: string
): ReadonlyArray<string> => {
  const where = `${method.toUpperCase()} ${path} → ${status}`
  // The MCP endpoint speaks JSON-RPC as the MCP specification has it, not the document.
  if (NOT_OPENAPI_PATHS.includes(path)) return []
  const template = operationPath(contract.doc, method, path)
  // A path no documented operation serves answers the router's own 404/405 envelope, or is one of
  // the routes left out of the document on purpose (`internal`: the probes, `/metrics`).
  if (template === undefined && status !== 404 && status !== 405) return []
  const responses: Json | undefined =
    template === undefined
      ? { "404": { content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } }, "405": { content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } } }
      : contract.doc.paths[template][method.toLowerCase()].responses
  const routerRefusals = template === undefined ? undefined : (contract.doc.paths[template][method.toLowerCase()]["x-router-refusals"] as Json | undefined)
  const documented = responses?.[String(status)] ?? (routerRefusals?.[String(status)] !== undefined ? { content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } } : undefined)
  if (documented === undefined) return [`${where}: status not documented${template === undefined ? " (no documented operation)" : ` for ${template}`}`]
  const isJson = contentType !== null && contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)
  const schemaPointer = documented.content?.["application/json"]?.schema
  if (!isJson || schemaPointer === undefined || text === "") return []
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return [`${where}: answered ${contentType} that is not JSON: ${text.slice(0, 120)}`]
  }
  const ref =
    template === undefined || responses?.[String(status)] === undefined
      ? `${contract.id}#/components/schemas/ErrorEnvelope`
      : `${contract.id}#/paths/${escapePointer(template)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`
  let validate = validators.get(ref)
  if (validate === undefined) {
    validate = ajv.compile({ $ref: ref })
    validators.set(ref, validate)
  }
  if (validate(body)) {
    // A router refusal at a status the route does not declare: one of the codes the router answers there.
    const codes = responses?.[String(status)] === undefined ? (routerRefusals?.[String(status)] as ReadonlyArray<string> | undefined) : undefined
    const code = (body as { error?: { code?: unknown } }).error?.code
    return codes === undefined || codes.includes(String(code)) ? [] : [`${where}: /error/code ${String(code)} is not one of the router's refusals at this status (${codes.join(", ")})`]
  }
  return (validate.errors ?? []).map(
    (e) => `${where}: ${e.instancePath === "" ? "body" : e.instancePath} ${e.message}${e.params !== undefined && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ""}`
  )
}

export class ContractViolation extends Error {
  constructor(readonly problems: ReadonlyArray<string>, body: string) {
    super(`The answer is not what the OpenAPI document says:\n  ${problems.join("\n  ")}\nbody: ${body.slice(0, 2_000)}`)
    this.name = "ContractViolation"
    // Also on stderr: a helper that retries on any failure (a readiness probe) must not hide it.
    console.error(this.message)
  }
}

/** Checks one answer a test received from `url` (absolute) against the listener's own document; throws on a violation. */
export const checkAnswer = async (url: string, method: string, status: number, contentType: string | null | undefined, text: string): Promise<void> => {
  const u = new URL(url)
  const contract = await documentOf(u.origin)
  if (contract === undefined) return
  const problems = contractProblems(contract, method, u.pathname, status, contentType, text)
  if (problems.length > 0) throw new ContractViolation(problems, text)
}

const isJsonType = (contentType: string | null) => contentType !== null && /^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)

/**
 * `fetch`, with an answer from a listener that serves an OpenAPI document checked against it
 * (throws `ContractViolation`); the body is read once and handed back as a fresh `Response`.
 */
export const checkingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const res = await plainFetch(input, init)
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
  if (!/^https?:\/\//.test(url)) return res
  const method = init?.method ?? (input instanceof Request ? input.method : "GET")
  const u = new URL(url)
  // A listener that went away (a crash test) or never served a document: not checked.
  const contract = await documentOf(u.origin).catch(() => undefined)
  if (contract === undefined) return res
  const contentType = res.headers.get("content-type")
  if (!isJsonType(contentType)) {
    const problems = contractProblems(contract, method, u.pathname, res.status, contentType, "")
    if (problems.length > 0) throw new ContractViolation(problems, "")
    return res
  }
  const text = await res.text()
  const problems = contractProblems(contract, method, u.pathname, res.status, contentType, text)
  if (problems.length > 0) throw new ContractViolation(problems, text)
  const copy = new Response(res.status === 204 || res.status === 304 ? null : text, { status: res.status, statusText: res.statusText, headers: res.headers })
  Object.defineProperty(copy, "url", { value: res.url })
  return copy
}
