/** The webhook register body: URL syntax and event names here; the target's judgement is the service's. */
import { describe, expect, it } from "vitest"
import type { ApiError } from "../../src/domain/ApiError.js"
import { maxEventsInRequest } from "../../src/services/webhooks/WebhookService.js"
import { decodeWebhookCreateBody } from "./WebhookDecoders.js"

const refusal = (x: unknown) => {
  const e = x as ApiError
  expect(e._tag, JSON.stringify(x)).toBe("ApiError")
  return [e.code, e.field, e.extra?.reason]
}

describe("webhook create body", () => {
  it("keeps known events once, in first-mention order, and the trimmed URL", () => {
    expect(decodeWebhookCreateBody({ url: " https://h.example/x ", events: ["launch.confirmed", "key.access_widened", "launch.confirmed"], other: 1 })).toEqual({
      url: "https://h.example/x",
      events: ["launch.confirmed", "key.access_widened"]
    })
  })
  it("leaves scheme and target to the service (http may be a test account's loopback)", () => {
    expect(decodeWebhookCreateBody({ url: "http://127.0.0.1:9/", events: ["launch.confirmed"] })).toMatchObject({ url: "http://127.0.0.1:9/" })
  })
  it("refuses by field with the spec's reason", () => {
    expect(refusal(decodeWebhookCreateBody("x"))).toEqual(["VALIDATION_FAILED", "body", undefined])
    expect(refusal(decodeWebhookCreateBody({ events: ["launch.confirmed"] }))).toEqual(["VALIDATION_FAILED", "url", "invalid_url"])
    expect(refusal(decodeWebhookCreateBody({ url: "hooks.example.com/x", events: ["launch.confirmed"] }))).toEqual(["VALIDATION_FAILED", "url", "invalid_url"])
    expect(refusal(decodeWebhookCreateBody({ url: "https://u:p@h.example/", events: ["launch.confirmed"] }))).toEqual(["VALIDATION_FAILED", "url", "credentials_in_url"])
    expect(refusal(decodeWebhookCreateBody({ url: "https://h.example/", events: [] }))).toEqual(["VALIDATION_FAILED", "events", undefined])
    expect(refusal(decodeWebhookCreateBody({ url: "https://h.example/", events: [1] }))).toEqual(["VALIDATION_FAILED", "events", undefined])
    expect(refusal(decodeWebhookCreateBody({ url: "https://h.example/", events: ["Launch.Confirmed"] }))).toEqual(["VALIDATION_FAILED", "events", "unknown_event"])
  })
  it("bounds the events list at maxEventsInRequest entries", () => {
    const at = Array.from({ length: maxEventsInRequest }, () => "launch.confirmed")
    expect(decodeWebhookCreateBody({ url: "https://h.example/", events: at })).toMatchObject({ events: ["launch.confirmed"] })
    expect(refusal(decodeWebhookCreateBody({ url: "https://h.example/", events: [...at, "launch.confirmed"] }))).toEqual(["VALIDATION_FAILED", "events", undefined])
  })
})
