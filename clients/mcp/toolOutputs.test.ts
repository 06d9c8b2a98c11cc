/**
 * A tool's output schema is its route's documented answer (`toolOutputs.ts`): the success body,
 * closed as the document closes it, or a tool error whose `code` is one the route documents; what
 * the SDK lists (the zod schema's JSON Schema) is what it checks.
 */
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { dataDocument, mainDocument } from "../typescript/documents.js"
import { toolOutputJsonSchema, toolOutputSchema } from "./toolOutputs.js"

const main = mainDocument()
const data = dataDocument()

describe("tool output schemas", () => {
  const verify = toolOutputSchema(main, "GET", "/api/v1/verify/{chain}/{mint}")

  it("accept the route's documented success and refuse an undocumented member or a wrong type", () => {
    expect(verify.safeParse({ success: true, candleLaunched: false }).success).toBe(true)
    expect(verify.safeParse({ success: true, candleLaunched: false, extra: 1 }).success).toBe(false)
    expect(verify.safeParse({ success: true, candleLaunched: "no" }).success).toBe(false)
  })

  it("accept a tool error carrying a code the route documents, and refuse one it does not", () => {
    const job = toolOutputSchema(main, "GET", "/api/v1/launch/headless/jobs/{clientLaunchId}")
    expect(job.safeParse({ status: 404, code: "JOB_NOT_FOUND", message: "m", retryable: false }).success).toBe(true)
    // The router's own refusals are the route's too.
    expect(job.safeParse({ status: 429, code: "RATE_LIMITED", message: "m", retryAfter: 3 }).success).toBe(true)
    expect(job.safeParse({ status: 409, code: "STAKING_REWARD_ALREADY_CLAIMED", message: "m" }).success).toBe(false)
    expect(job.safeParse({ code: "JOB_NOT_FOUND", message: "m" }).success).toBe(false)
  })

  it("give a market-data plain refusal the code its status means", () => {
    const poll = toolOutputJsonSchema(data, "GET", "/v1/strategy-lab/replay/{job_id}")
    const refusal = (poll.anyOf as Array<Record<string, any>>).at(-1)!
    expect(refusal.properties.code.enum).toEqual(expect.arrayContaining(["UNAUTHORIZED", "TIER_REQUIRED", "JOB_NOT_FOUND"]))
  })

  it("list, as the SDK converts it, an object schema with the document's alternatives and definitions", () => {
    const schema = toolOutputJsonSchema(main, "POST", "/api/v1/launch/headless")
    const listed = z.toJSONSchema(toolOutputSchema(main, "POST", "/api/v1/launch/headless"), { target: "draft-7", io: "output" }) as Record<string, any>
    expect(listed.type).toBe("object")
    expect(listed.anyOf).toEqual(schema.anyOf)
    expect(listed.definitions).toEqual(schema.definitions)
    // 200 (the result), 202 (accepted), and the refusal.
    expect(schema.anyOf).toHaveLength(3)
    expect(JSON.stringify(schema)).not.toContain("#/components/")
    for (const ref of JSON.stringify(schema).match(/#\/definitions\/[A-Za-z0-9_]+/g) ?? []) expect(schema.definitions).toHaveProperty(ref.slice("#/definitions/".length))
  })
})
