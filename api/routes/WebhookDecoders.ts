/**
 * Request decoding for the webhook routes (spec 4.4): the register body `{url, events[]}` into the
 * service's `CreateInput`, or the spec's `VALIDATION_FAILED` naming the field (`reason` carries
 * `invalid_url`/the URL check's reason, or `unknown_event`). The URL's syntax is checked here so a
 * malformed URL is named before the events; whether its target is acceptable for this account
 * (loopback for test accounts, the resolved addresses) is the service's judgement. Members other
 * than `url` and `events` are ignored.
 *
 * Hand-written, not a Schema: each refusal carries the URL check's own `reason` (`invalid_url`,
 * `credentials_in_url`, `unknown_event`, ...) beside `field`, which a Schema's first error cannot.
 */
import { validationFailed } from "../../src/domain/ApiError.js"
import { parseTargetUrl, TargetRefused } from "../../src/net/PublicTarget.js"
import { isWebhookEvent, WEBHOOK_EVENTS, type WebhookEventName } from "../../src/services/webhooks/Events.js"
import { type CreateInput, maxEventsInRequest } from "../../src/services/webhooks/WebhookService.js"
import { type Decoded, isObject } from "./KeyDecoders.js"

/** Duplicate event names collapse; the order of first mention is kept. */
export const decodeWebhookCreateBody = (body: unknown): Decoded<CreateInput> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const { url, events } = body
  if (typeof url !== "string" || url.trim() === "") return validationFailed("url", "url is required (a public https URL)", { reason: "invalid_url" })
  // Syntax only (scheme and loopback are judged per account by the service).
  const parsed = parseTargetUrl(url.trim(), true)
  if (parsed instanceof TargetRefused) return validationFailed("url", parsed.message, { reason: parsed.reason })
  if (!Array.isArray(events) || events.length === 0) return validationFailed("events", "events must be a non-empty array of event names")
  if (events.length > maxEventsInRequest) return validationFailed("events", `events may list at most ${maxEventsInRequest} names`)
  const names: WebhookEventName[] = []
  for (const e of events) {
    if (typeof e !== "string") return validationFailed("events", "events must be an array of strings")
    if (!isWebhookEvent(e)) {
      return validationFailed("events", `Unknown event '${e.slice(0, 64)}'; known events: ${WEBHOOK_EVENTS.join(", ")}`, { reason: "unknown_event" })
    }
    if (!names.includes(e)) names.push(e)
  }
  return { url: url.trim(), events: names }
}
