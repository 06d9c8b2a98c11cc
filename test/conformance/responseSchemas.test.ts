/**
 * Every answer of both documents has a schema (issue 32): each JSON success of every route of
 * both services' tables (`routeTables.ts`, as the composition roots mount them) is documented by
 * a schema whose objects are closed, and each refusal by the error envelope with the codes its
 * route can answer there (never the envelope of any code). `UNDESCRIBED` is the exact list of
 * successes still described in words only: a new route without a schema fails here, and so does a
 * schema added without taking its route off the list.
 */
import { describe, expect, it } from "vitest"
import { openApiDocument } from "../../api/OpenApi.js"
import { dataServiceRoutes, documentInfo, mainRoutes } from "../../clients/typescript/documents.js"

type Json = Record<string, any>

/** Successes whose body is not JSON (bytes, SVG, HTML). */
const NOT_JSON = new Set(["GET /api/v1/uploads/images/{file} 200", "GET /v1/strategy-lab/replay/{job_id}/chart.svg 200", "GET /v1/market/token/{address}/chart.svg 200"])

/** Successes still described in words only, by document. */
const UNDESCRIBED: Readonly<Record<string, ReadonlyArray<string>>> = {
  main: [],
  data: []
}

/**
 * Open objects inside documented successes (no `additionalProperties: false`, or an index of
 * anything, `Schema.Record` of `Unknown`), by document: the exact list, so it only shrinks. Only
 * the OpenAPI document itself, whose shape is OpenAPI's, not the engine's.
 */
const openApiDocumentIndexes = (path: string) => ["paths.*", "components.schemas", "components.securitySchemes"].map((at) => `GET ${path} 200 body.${at}`)
const OPEN_OBJECTS: Readonly<Record<string, ReadonlyArray<string>>> = {
  main: openApiDocumentIndexes("/api/v1/openapi.json"),
  data: openApiDocumentIndexes("/v1/openapi.json")
}

/**
 * Successes documented as an open record of anything (`{}` with unknown members: a description
 * in words dressed as a schema), by document: the exact list, so it only shrinks.
 */
const OPEN_RECORDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  main: [],
  data: []
}

const documents = { main: openApiDocument(mainRoutes, documentInfo) as Json, data: openApiDocument(dataServiceRoutes, documentInfo) as Json }

const resolve = (doc: Json, schema: Json): Json => (typeof schema.$ref === "string" ? doc.components.schemas[schema.$ref.split("/").pop()!] : schema)

/** Object schemas under `schema` that are open (no `additionalProperties: false` and no typed index). */
const openObjects = (doc: Json, schema: Json, at: string, seen = new Set<Json>()): Array<string> => {
  const s = resolve(doc, schema)
  if (s === undefined || seen.has(s)) return []
  seen.add(s)
  // An index of anything (`Schema.Record` of `Unknown`: `{"$id": "/schemas/unknown"}`, `{}` or `true`) is open too.
  const ap = s.additionalProperties
  const untypedIndex = ap === true || (typeof ap === "object" && (Object.keys(ap).length === 0 || ap.$id === "/schemas/unknown" || ap.$id === "/schemas/any"))
  const here = s.type === "object" && ((s.properties !== undefined && ap === undefined) || untypedIndex) ? [at] : []
  const nested = [
    ...(typeof ap === "object" ? openObjects(doc, ap as Json, `${at}.*`, seen) : []),
    ...Object.entries((s.properties ?? {}) as Json).flatMap(([k, v]) => openObjects(doc, v as Json, `${at}.${k}`, seen)),
    ...(s.items !== undefined ? openObjects(doc, s.items as Json, `${at}[]`, seen) : []),
    ...[...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].flatMap((v: Json) => openObjects(doc, v, at, seen))
  ]
  return [...here, ...nested]
}

describe("every answer has a schema", () => {
  for (const [name, doc] of Object.entries(documents)) {
    it(`${name}: each JSON success has a closed schema but the listed ones, each refusal the envelope`, () => {
      const undescribed: Array<string> = []
      const open: Array<string> = []
      for (const [path, ops] of Object.entries(doc.paths as Json)) {
        for (const [method, op] of Object.entries(ops as Json)) {
          for (const [status, r] of Object.entries((op as Json).responses as Json)) {
            const where = `${method.toUpperCase()} ${path} ${status}`
            const schema = (r as Json).content?.["application/json"]?.schema as Json | undefined
            const code = Number(status)
            if (code >= 400) {
              expect(schema, `${where}: a refusal's schema`).toBeDefined()
              continue
            }
            if (code === 204 || code === 304 || NOT_JSON.has(where)) continue
            if (schema === undefined) {
              undescribed.push(where)
              continue
            }
            for (const at of openObjects(doc, schema, "body")) open.push(`${where} ${at}`)
          }
        }
      }
      expect(undescribed).toEqual(UNDESCRIBED[name])
      expect(open, "objects without additionalProperties: false or a typed index").toEqual(OPEN_OBJECTS[name])
    })

    it(`${name}: no success is an open record of anything but the listed ones`, () => {
      const open: Array<string> = []
      for (const [path, ops] of Object.entries(doc.paths as Json)) {
        for (const [method, op] of Object.entries(ops as Json)) {
          for (const [status, r] of Object.entries((op as Json).responses as Json)) {
            const schema = (r as Json).content?.["application/json"]?.schema as Json | undefined
            if (Number(status) >= 300 || schema === undefined) continue
            const s = resolve(doc, schema)
            const members = Object.keys((s.properties ?? {}) as Json).length
            if (s.type === "object" && members === 0 && s.additionalProperties !== false && (s.additionalProperties === undefined || s.additionalProperties.type === undefined)) {
              open.push(`${method.toUpperCase()} ${path} ${status}`)
            }
          }
        }
      }
      expect(open).toEqual(OPEN_RECORDS[name])
    })
  }

  /**
   * The codes a refusal schema allows: each envelope branch's `error.code` enum (`undefined` for
   * an envelope that allows any code), a plain `{error}` branch none (the market-data service's
   * own shape carries no code).
   */
  const refusalBranches = (doc: Json, schema: Json): Array<{ readonly plain: boolean; readonly codes: ReadonlyArray<string> | undefined }> => {
    if (schema.$ref === "#/components/schemas/ErrorEnvelope") return [{ plain: false, codes: undefined }]
    if (schema.$ref === "#/components/schemas/PlainError") return [{ plain: true, codes: [] }]
    const s = resolve(doc, schema)
    const branches = [...(s.anyOf ?? []), ...(s.oneOf ?? [])] as Array<Json>
    if (branches.length > 0) return branches.flatMap((b) => refusalBranches(doc, b))
    const code = s.properties?.error?.properties?.code as Json | undefined
    return [{ plain: code === undefined, codes: code?.enum as ReadonlyArray<string> | undefined }]
  }

  for (const [name, doc] of Object.entries(documents)) {
    it(`${name}: every refusal names its codes (an envelope's error.code is an enum at every status of every operation)`, () => {
      const uncoded: Array<string> = []
      for (const [path, ops] of Object.entries(doc.paths as Json)) {
        for (const [method, op] of Object.entries(ops as Json)) {
          for (const [status, r] of Object.entries((op as Json).responses as Json)) {
            if (Number(status) < 400) continue
            const schema = (r as Json).content?.["application/json"]?.schema as Json
            for (const b of refusalBranches(doc, schema)) {
              if (!b.plain && (b.codes === undefined || b.codes.length === 0)) uncoded.push(`${method.toUpperCase()} ${path} ${status}`)
            }
          }
          for (const [status, codes] of Object.entries((op as Json)["x-router-refusals"] as Json)) {
            if (!Array.isArray(codes) || codes.length === 0) uncoded.push(`${method.toUpperCase()} ${path} ${status} (router)`)
          }
        }
      }
      expect(uncoded).toEqual([])
    })
  }

  it("a paused key's refusal (403 VALIDATION_FAILED) is documented wherever the key check refuses a paused key", () => {
    // The headless launch refuses a paused key; its job read (a read a paused key may use) does not.
    const main = documents.main.paths
    const codes403 = (path: string, method: string) => main[path][method].responses["403"].content["application/json"].schema.properties.error.properties.code.enum
    expect(codes403("/api/v1/launch/headless", "post")).toContain("VALIDATION_FAILED")
    expect(codes403("/api/v1/agent/staking/stake/build", "post")).toEqual(expect.arrayContaining(["SCOPE_MISSING", "TEST_ENVIRONMENT_FORBIDDEN", "VALIDATION_FAILED"]))
    expect(codes403("/api/v1/launch/headless/jobs/{clientLaunchId}", "get")).toEqual(["SCOPE_MISSING"])
  })

  it("every agent-key operation documents KEY_EXPIRED at 401 (the key check answers it before any route)", () => {
    const missing: Array<string> = []
    for (const [path, ops] of Object.entries(documents.main.paths as Json)) {
      for (const [method, op] of Object.entries(ops as Json)) {
        const o = op as Json
        if (!(o.security as Array<Json>).some((s) => "agentKey" in s) || o.security.length !== 1) continue
        const declared = o.responses["401"]?.content?.["application/json"]?.schema as Json | undefined
        const codes: ReadonlyArray<string> | undefined =
          declared === undefined ? o["x-router-refusals"]["401"] : declared.$ref !== undefined ? undefined : declared.properties.error.properties.code.enum
        if (codes !== undefined && !codes.includes("KEY_EXPIRED")) missing.push(`${method.toUpperCase()} ${path}`)
      }
    }
    expect(missing).toEqual([])
  })

  it("the router's own refusals are beside a route's declared responses, merged into a declared status's codes", () => {
    const op = documents.main.paths["/api/v1/launch/headless/jobs/{clientLaunchId}"].get
    expect(op.responses["401"].content["application/json"].schema.properties.error.properties.code.enum).toEqual(["UNAUTHORIZED", "KEY_EXPIRED"])
    expect(Object.keys(op.responses).sort()).toEqual(["200", "401", "403", "404"])
    expect(op["x-router-refusals"]).toEqual({ 400: ["VALIDATION_FAILED"], 414: ["URI_TOO_LONG"], 429: ["RATE_LIMITED"], 500: ["INTERNAL"] })
  })
})
