/**
 * The strategy rows of the one error table on the wire: the answers the strategy routes gave from
 * their own switch before the table owned them (the plain 404, the quota's wait, the retired 409,
 * the outage's 503). The HTTP side is asserted in `test/integration/strategies.test.ts`.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { StrategyError } from "../src/services/strategy/Strategies.js"
import { answerFailure, toApiError } from "./ErrorTable.js"
import { errorReply } from "./Http.js"

const wire = (e: StrategyError) => {
  const reply = errorReply(toApiError(e))
  return { status: reply.status, headers: Object.fromEntries(reply.headers ?? []), error: JSON.parse(String(reply.body)).error as Record<string, unknown> }
}

describe("strategy rows on the wire", () => {
  it("an unknown or foreign strategy is the plain 404", async () => {
    const reply = await Effect.runPromise(Effect.either(answerFailure(new StrategyError({ reason: "not_found", message: "not found" }))))
    expect(reply._tag).toBe("Right")
    if (reply._tag === "Right") expect([reply.right.status, JSON.parse(String(reply.right.body))]).toEqual([404, { error: "not found" }])
  })

  it("the daily save quota is 429 RATE_LIMITED with quota and used, and Retry-After in whole seconds from the failure's wait", () => {
    const quota = wire(new StrategyError({ reason: "quota", message: "Daily strategy save quota reached (20 of 20)", details: { quota: 20, used: 20 }, retryAfterMs: 90_500 }))
    expect(quota.status).toBe(429)
    expect(quota.error).toEqual({ code: "RATE_LIMITED", message: "Daily strategy save quota reached (20 of 20)", retryable: true, quota: 20, used: 20 })
    expect(quota.headers).toMatchObject({ "Retry-After": "91" })
    // A wait already over still asks for one second, never zero.
    expect(wire(new StrategyError({ reason: "quota", message: "m", retryAfterMs: -5 })).headers).toMatchObject({ "Retry-After": "1" })
  })

  it("a bad field names it; a retired strategy is 409 with reason retired; the store's outage is the retryable 503", () => {
    expect(wire(new StrategyError({ reason: "invalid", field: "version", message: "version: strategy has versions 1 to 2" }))).toMatchObject({
      status: 400,
      error: { code: "VALIDATION_FAILED", field: "version" }
    })
    expect(wire(new StrategyError({ reason: "retired", field: "status", message: "The strategy is already retired" }))).toMatchObject({
      status: 409,
      error: { code: "VALIDATION_FAILED", field: "status", reason: "retired" }
    })
    expect(wire(new StrategyError({ reason: "unavailable", message: "The strategy store is unavailable; retry shortly" }))).toMatchObject({
      status: 503,
      headers: { "Retry-After": "2" },
      error: { code: "FEED_UNAVAILABLE", retryable: true }
    })
  })
})
