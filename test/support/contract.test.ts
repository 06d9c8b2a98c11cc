/**
 * The contract check (`contract.ts`) with a real JSON Schema 2020-12 validator: a document
 * generated from a route table (`openApiDocument`, as the listeners serve it) accepts the
 * documented answer and refuses an undocumented member, a wrong type, a raw amount that is not a
 * decimal string, an undocumented status, and a refusal code the route does not list.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { answer, openApiDocument, refusal } from "../../api/OpenApi.js"
import type { RouteDef } from "../../api/Router.js"
import { contractDocument, contractProblems } from "./contract.js"

const Amount = Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]*)$/))
const Thing = Schema.Struct({ id: Schema.String, amount: Amount, nested: Schema.Struct({ ok: Schema.Boolean }) }).annotations({ identifier: "Thing" })

const routes: ReadonlyArray<RouteDef> = [
  {
    method: "GET",
    path: "/things/{id}",
    operationId: "getThing",
    summary: "",
    tags: [],
    auth: "agentKey",
    responses: { 200: answer("a thing", Thing), 400: refusal(["INVALID_NAME_BYTES"]), 404: refusal(["MARKET_NOT_FOUND"]) },
    handler: () => ({ status: 200, body: "" })
  }
]
const contract = contractDocument(openApiDocument(routes, { title: "t", description: "d" }))
const check = (status: number, body: unknown, path = "/things/a") =>
  contractProblems(contract, "GET", path, status, "application/json; charset=utf-8", JSON.stringify(body))
const good = { id: "a", amount: "123", nested: { ok: true } }
const envelope = (code: string) => ({ success: false, error: { code, message: "m", retryable: false } })

describe("contract check", () => {
  it("accepts a documented answer and a listed refusal (with the router's implicit ones)", () => {
    expect(check(200, good)).toEqual([])
    expect(check(404, envelope("MARKET_NOT_FOUND"))).toEqual([])
    expect(check(401, envelope("UNAUTHORIZED"))).toEqual([])
    expect(check(400, { success: false, error: { code: "VALIDATION_FAILED", message: "m", field: "id" } })).toEqual([])
    expect(check(404, envelope("ROUTE_NOT_FOUND"), "/elsewhere")).toEqual([])
    expect(check(400, envelope("INVALID_NAME_BYTES"))).toEqual([])
    expect(contract.doc.paths["/things/{id}"].get.responses["400"].content["application/json"].schema.properties.error.properties.code.enum).toEqual(["INVALID_NAME_BYTES", "VALIDATION_FAILED"])
  })
  it("refuses an undocumented member, at the top and nested", () => {
    expect(check(200, { ...good, extra: 1 }).join()).toMatch(/additional properties/)
    expect(check(200, { ...good, nested: { ok: true, more: "x" } }).join()).toMatch(/\/nested .*additional properties/)
  })
  it("refuses a wrong type and a raw amount that is not a decimal string", () => {
    expect(check(200, { ...good, id: 7 }).join()).toMatch(/\/id must be string/)
    expect(check(200, { ...good, amount: 123 }).join()).toMatch(/\/amount must be string/)
    expect(check(200, { ...good, amount: "1.5" }).join()).toMatch(/\/amount must match pattern/)
    expect(check(200, { id: "a", nested: { ok: true } }).join()).toMatch(/required property 'amount'/)
  })
  it("refuses an undocumented status and a code the route does not list", () => {
    expect(check(418, good).join()).toMatch(/status not documented/)
    expect(check(404, envelope("JOB_NOT_FOUND")).join()).toMatch(/\/error\/code must be equal to one of the allowed values/)
    expect(check(429, envelope("DAILY_CAP_REACHED")).join()).toMatch(/not one of the router's refusals at this status \(RATE_LIMITED\)/)
    expect(check(404, { ...envelope("MARKET_NOT_FOUND"), extra: true }).join()).toMatch(/additional properties/)
  })
})
