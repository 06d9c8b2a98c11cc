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
 * `checkAnswer` is called by the shared call helpers (`keyCall`, the launch, accounts and wallet
 * harnesses, `launchClient`); `checkedFetch` is a `fetch` that checks.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"

type Json = Record<string, any>

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/** The document paths a listener may serve (main, market data). */
const DOCUMENT_PATHS = ["/api/v1/openapi.json", "/v1/openapi.json"] as const

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

const documentOf = (origin: string): Promise<ContractDocument | undefined> => {
  let found = documents.get(origin)
  if (found === undefined) {
    found = (async () => {
      for (const p of DOCUMENT_PATHS) {
        const res = await fetch(`${origin}${p}`)
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
  const template = operationPath(contract.doc, method, path)
  // Paths and methods no route serves: the router's own 404/405 envelope.
  const responses: Json | undefined =
    template === undefined
      ? { "404": { content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } }, "405": { content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } } }
      : contract.doc.paths[template][method.toLowerCase()].responses
  const documented = responses?.[String(status)]
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
    template === undefined
      ? `${contract.id}#/components/schemas/ErrorEnvelope`
      : `${contract.id}#/paths/${escapePointer(template)}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`
  let validate = validators.get(ref)
  if (validate === undefined) {
    validate = ajv.compile({ $ref: ref })
    validators.set(ref, validate)
  }
  if (validate(body)) return []
  return (validate.errors ?? []).map(
    (e) => `${where}: ${e.instancePath === "" ? "body" : e.instancePath} ${e.message}${e.params !== undefined && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ""}`
  )
}

export class ContractViolation extends Error {
  constructor(readonly problems: ReadonlyArray<string>, body: string) {
    super(`The answer is not what the OpenAPI document says:\n  ${problems.join("\n  ")}\nbody: ${body.slice(0, 2_000)}`)
    this.name = "ContractViolation"
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

/** `fetch`, with the answer checked against the contract; its body is read once and handed back as a fresh `Response`. */
export const checkedFetch = async (input: string, init: RequestInit = {}): Promise<Response> => {
  const res = await fetch(input, init)
  const bytes = new Uint8Array(await res.arrayBuffer())
  const contentType = res.headers.get("content-type")
  await checkAnswer(input, init.method ?? "GET", res.status, contentType, contentType !== null && /json/i.test(contentType) ? new TextDecoder().decode(bytes) : "")
  const nullBody = res.status === 204 || res.status === 304 || (res.status >= 100 && res.status < 200)
  return new Response(nullBody ? null : bytes, { status: res.status, statusText: res.statusText, headers: res.headers })
}
