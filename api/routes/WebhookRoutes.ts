/**
 * Webhook endpoint management (spec 4.4): register, list, rotate, revoke, last deliveries.
 *
 * Credential: an owner session (`Authorization: Bearer <session token>`, spec 4.4 "normal
 * authenticated session"); agent keys are refused by the `authenticate` dependency the
 * composition root provides. The account must have agent features enabled (a `false`
 * `agentEnabled` from `authenticate` is 403 `VALIDATION_FAILED`, as for key issuance).
 *
 * Refusals (every one records nothing):
 * - malformed body or URL, non-HTTPS URL, a host that is not public: 400 `VALIDATION_FAILED`,
 *   `field` `body`/`url`/`events`, `reason` = the public-target check's reason for URLs;
 * - an event name not in the events table: 400 `VALIDATION_FAILED`, `field: "events"`,
 *   `reason: "unknown_event"`;
 * - a 4th active endpoint: 400 `WEBHOOK_LIMIT_REACHED`;
 * - an unknown id (or another account's): 404 `VALIDATION_FAILED`, `field: "id"`,
 *   `reason: "webhook_not_found"`; rotate or deliveries on a revoked endpoint: 409
 *   `VALIDATION_FAILED`, `reason: "webhook_revoked"`. Revoking a revoked endpoint answers it again.
 *
 * The router authenticates (with the agent-features check), then decodes the path and the body
 * (`WebhookDecoders.ts`); service failures map through the one table (`ErrorTable.ts`), a storage
 * failure to 500 `INTERNAL`.
 */
import { Effect, Schema } from "effect"
import { type ApiError, apiError } from "../../src/domain/ApiError.js"
import { WEBHOOK_EVENTS } from "../../src/services/webhooks/Events.js"
import { maxActiveEndpoints, type WebhookError, type WebhookOwner, type WebhookServiceShape } from "../../src/services/webhooks/WebhookService.js"
import { toApiError } from "../ErrorTable.js"
import { refusal } from "../OpenApi.js"
import { json, type Reply, type Request } from "../Http.js"
import { stringParam } from "../QueryParams.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { decodeWebhookCreateBody } from "./WebhookDecoders.js"

export interface AuthenticatedOwner {
  readonly accountId: string
  /** A test account (may register loopback targets when the test flag is on). */
  readonly testAccount?: boolean | undefined
  /** Agent features enabled for the account; `false` refuses every webhook route (absent: enabled). */
  readonly agentEnabled?: boolean | undefined
}

export interface WebhookRoutesDeps {
  readonly service: WebhookServiceShape
  /** Verifies the owner session of the request; fails with the spec's 401/403 errors. */
  readonly authenticate: (req: Request) => Effect.Effect<AuthenticatedOwner, ApiError>
  /** Request headers `authenticate` reads (default `authorization`; with owner auth, `OWNER_AUTH_HEADERS`). */
  readonly authHeaders?: ReadonlyArray<string>
}

export const WEBHOOKS_PATH = "/api/v1/agent/webhooks"
/** Body bound of the register route. */
export const webhookBodyMaxBytes = 8 * 1024

const EventName = Schema.Literal(...WEBHOOK_EVENTS)

const endpointFields = {
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventName),
  secretPrefix: Schema.String,
  status: Schema.Literal("active", "revoked"),
  createdAt: Schema.String,
  rotatedAt: Schema.optional(Schema.String),
  revokedAt: Schema.optional(Schema.String)
}

const WebhookEndpoint = Schema.Struct(endpointFields).annotations({ identifier: "WebhookEndpoint" })

const WebhookEndpointWithSecret = Schema.Struct({
  success: Schema.Literal(true),
  ...endpointFields,
  secret: Schema.String.annotations({ description: "The signing secret (whsec_...), shown only here" })
}).annotations({ identifier: "WebhookEndpointWithSecret" })

const WebhookList = Schema.Struct({ success: Schema.Literal(true), webhooks: Schema.Array(WebhookEndpoint) }).annotations({
  identifier: "WebhookList"
})

const WebhookRevoked = Schema.Struct({ success: Schema.Literal(true), ...endpointFields }).annotations({ identifier: "WebhookRevoked" })

const Delivery = Schema.Struct({
  eventId: Schema.String,
  event: Schema.String,
  status: Schema.Literal("pending", "delivered", "failed", "cancelled"),
  attempts: Schema.Int,
  lastStatusCode: Schema.NullOr(Schema.Int),
  lastError: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  lastAttemptAt: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.String),
  deliveredAt: Schema.NullOr(Schema.String)
}).annotations({ identifier: "WebhookDelivery" })

const DeliveryList = Schema.Struct({
  success: Schema.Literal(true),
  webhookId: Schema.String,
  deliveries: Schema.Array(Delivery)
}).annotations({ identifier: "WebhookDeliveryList" })

const CreateBody = Schema.Struct({
  url: Schema.String.annotations({ description: "Public https URL" }),
  events: Schema.Array(EventName)
}).annotations({ identifier: "WebhookCreateBody" })

/** Any segment reaches the service, which answers 404 for an id it does not know. */
const idPath = { id: stringParam("Webhook endpoint id (wh_...)", { required: true, emptyIsValue: true }) }

const commonErrors = {
  401: refusal(["UNAUTHORIZED"], "missing or invalid session, or not a session"),
  403: refusal(["VALIDATION_FAILED"], "agent features are off for the account")
} as const

export const webhookRoutes = (deps: WebhookRoutesDeps): ReadonlyArray<RouteDef> => {
  const headers = deps.authHeaders ?? ["authorization"]

  /** The owner session, with agent features on. */
  const authenticate = (req: Request): Effect.Effect<WebhookOwner, ApiError> =>
    Effect.flatMap(deps.authenticate(req), (auth) =>
      auth.agentEnabled === false
        ? Effect.fail(apiError("VALIDATION_FAILED", "Agent features are not enabled for this account", { status: 403 }))
        : Effect.succeed({ accountId: auth.accountId, testAccount: auth.testAccount === true })
    )
  /** The service's answer in the success envelope; failures map through the table. */
  const answer = <A extends object>(call: Effect.Effect<A, WebhookError>, status = 200): Effect.Effect<Reply, ApiError> =>
    Effect.mapBoth(call, { onFailure: toApiError, onSuccess: (value) => json(status, { success: true, ...value }) })

  return [
    route({
      method: "POST",
      path: WEBHOOKS_PATH,
      operationId: "createWebhook",
      summary: "Register a webhook endpoint; the signing secret is returned only here",
      description:
        "The URL must be public HTTPS (private, loopback, link-local and other non-public targets are refused, and re-checked before every delivery). " +
        `At most ${maxActiveEndpoints} active endpoints per account.`,
      tags: ["webhooks"],
      auth: "session",
      headers,
      body: decodedBody({ schema: CreateBody, maxBytes: webhookBodyMaxBytes, decode: decodeWebhookCreateBody }),
      responses: {
        201: { description: "The endpoint with its secret", schema: WebhookEndpointWithSecret },
        400: refusal(["VALIDATION_FAILED", "WEBHOOK_LIMIT_REACHED"], "url (reason invalid_url), events; more than 3 active endpoints"),
        ...commonErrors
      },
      authenticate,
      handler: (_req, { body }, owner) => answer(deps.service.create(owner, body), 201)
    }),
    route({
      method: "GET",
      path: WEBHOOKS_PATH,
      operationId: "listWebhooks",
      summary: "List webhook endpoints (revoked included; secretPrefix only)",
      tags: ["webhooks"],
      auth: "session",
      headers,
      responses: { 200: { description: "Endpoints, newest first", schema: WebhookList }, ...commonErrors },
      authenticate,
      handler: (_req, _input, owner) => answer(Effect.map(deps.service.list(owner), (webhooks) => ({ webhooks })))
    }),
    route({
      method: "POST",
      path: `${WEBHOOKS_PATH}/{id}/rotate`,
      operationId: "rotateWebhookSecret",
      summary: "Replace the signing secret; the new secret is returned only here",
      description: "Id, events and history are kept; queued deliveries are signed at send time with the new secret.",
      tags: ["webhooks"],
      auth: "session",
      headers,
      pathParams: idPath,
      responses: {
        200: { description: "The endpoint with its new secret", schema: WebhookEndpointWithSecret },
        404: refusal(["VALIDATION_FAILED"], "unknown endpoint (reason webhook_not_found)"),
        409: refusal(["VALIDATION_FAILED"], "endpoint revoked (reason webhook_revoked)"),
        ...commonErrors
      },
      authenticate,
      handler: (_req, { id }, owner) => answer(deps.service.rotate(owner, id))
    }),
    route({
      method: "DELETE",
      path: `${WEBHOOKS_PATH}/{id}`,
      operationId: "revokeWebhook",
      summary: "Revoke a webhook endpoint (pending deliveries are cancelled)",
      tags: ["webhooks"],
      auth: "session",
      headers,
      pathParams: idPath,
      responses: {
        200: { description: "The revoked endpoint", schema: WebhookRevoked },
        404: refusal(["VALIDATION_FAILED"], "unknown endpoint (reason webhook_not_found)"),
        ...commonErrors
      },
      authenticate,
      handler: (_req, { id }, owner) => answer(deps.service.revoke(owner, id))
    }),
    route({
      method: "GET",
      path: `${WEBHOOKS_PATH}/{id}/deliveries`,
      operationId: "listWebhookDeliveries",
      summary: "The last 20 deliveries of an endpoint, newest first",
      tags: ["webhooks"],
      auth: "session",
      headers,
      pathParams: idPath,
      responses: {
        200: { description: "Deliveries", schema: DeliveryList },
        404: refusal(["VALIDATION_FAILED"], "unknown endpoint (reason webhook_not_found)"),
        409: refusal(["VALIDATION_FAILED"], "endpoint revoked (reason webhook_revoked)"),
        ...commonErrors
      },
      authenticate,
      handler: (_req, { id }, owner) => answer(Effect.map(deps.service.deliveries(owner, id), (deliveries) => ({ webhookId: id, deliveries })))
    })
  ]
}
