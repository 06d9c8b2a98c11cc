/**
 * Headless launches, their dry run and job read, and hosted images (launch spec 4: the headless,
 * jobs and upload rows; endpoint rules 1, 2, 3 and 11). HTTP only: the kill switch (before the key
 * is parsed), key auth with its scope and rate limit, the launch body decoded with the caller's key
 * environment (`decodeLaunchRequest`), then one call to `HeadlessLaunch` or `ImageService`;
 * failures go through the error table (`LaunchError` rows).
 *
 * Decided here (docs/decisions.md "Headless launches"): the job read is not behind the kill switch
 * (in-flight launches stay pollable); hosted images are served publicly with immutable caching.
 */
import { Effect, Either, Schema } from "effect"
import { type ApiError, apiError } from "../../src/domain/ApiError.js"
import { uploadBodyBytesMax, uploadBytes } from "../../src/services/images/UploadBody.js"
import type { ImageServiceShape } from "../../src/services/images/ImageService.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import type { HeadlessCaller, HeadlessLaunchShape, LaunchJobView } from "../../src/services/launch/HeadlessLaunch.js"
import type { LaunchRef } from "../../src/services/launch/LaunchLedger.js"
import { fromImage, fromRequest, type LaunchError } from "../../src/services/launch/LaunchError.js"
import { decodeLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { LaunchRequestRefused, LaunchRequestSettings } from "../../src/services/launch/request/LaunchRequest.js"
import { AGENT_AUTH_HEADERS, type AgentAuth, WHILE_PAUSED } from "../auth/AgentKeyAuth.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { codesAt, ErrorTable, mapFailure, toApiError } from "../ErrorTable.js"
import { answer, refusal } from "../OpenApi.js"
import { errorReply, json, type Reply, type Request } from "../Http.js"
import { stringParam } from "../QueryParams.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { LaunchAccepted, LaunchDryRun, LaunchJob, LaunchResult, UploadedImage } from "./LaunchResponses.js"
import { jobAnswer } from "../LaunchCodes.js"

export interface LaunchRoutesOptions {
  /** `HEADLESS_LAUNCH_ENABLED` is exactly `true`. */
  readonly enabled: boolean
  readonly agentAuth: AgentAuth
  readonly launches: HeadlessLaunchShape
  readonly images: ImageServiceShape
  readonly settings: LaunchRequestSettings
  /** Any path's job record (2.7: `LaunchJobs.launchJob`, one ledger read); an unknown or foreign id is `job_not_found`. */
  readonly job: (ref: LaunchRef) => Effect.Effect<LaunchJobView, LaunchError>
}

/** Launch bodies are small; images travel by URL. */
export const LAUNCH_BODY_BYTES_MAX = 16 * 1024

const Socials = Schema.Struct({
  twitter: Schema.optional(Schema.String),
  telegram: Schema.optional(Schema.String),
  website: Schema.optional(Schema.String),
  discord: Schema.optional(Schema.String)
})

/** The hosted metadata document (`TokenMetadataDocument.ts`). */
const TokenMetadataDocumentWire = Schema.Struct({
  name: Schema.String,
  symbol: Schema.String,
  description: Schema.optional(Schema.String),
  image: Schema.String,
  external_url: Schema.optional(Schema.String),
  extensions: Schema.optional(
    Schema.Struct({
      twitter: Schema.optional(Schema.String),
      telegram: Schema.optional(Schema.String),
      website: Schema.optional(Schema.String),
      discord: Schema.optional(Schema.String),
      banner: Schema.optional(Schema.String)
    })
  )
}).annotations({ identifier: "TokenMetadataDocument" })

/** The wire shape of spec 2.1 (documentation; the route's `decodeLaunchRequest` decodes it, once, with the spec's messages). */
export const LaunchRequestWire = Schema.Struct({
  clientLaunchId: Schema.String.annotations({ description: "1 to 128 chars, unique per account; the idempotency key" }),
  chain: Schema.optional(Schema.Literal("solana", "hood")),
  quoteAsset: Schema.optional(Schema.String),
  mode: Schema.optional(Schema.Literal("open", "exclusive", "exp-a", "exp-b", "exp-c", "exp-custom")),
  curve: Schema.optional(Schema.Struct({ virtualQuote: Schema.String, threshold: Schema.String })),
  stakerAllocationBps: Schema.optional(Schema.Int),
  creatorFeeBps: Schema.optional(Schema.Literal(0, 100, 200)).annotations({
    description: "exp-* modes only (refused on others): the extra creator fee the pool charges after graduation, making its feeBps 150 or 250; default 0"
  }),
  dexVersion: Schema.optional(Schema.Literal("v3", "v4")),
  buyAmount: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  name: Schema.String,
  symbol: Schema.String,
  imageUrl: Schema.String,
  bannerUrl: Schema.optional(Schema.NullOr(Schema.String)),
  description: Schema.optional(Schema.String),
  socials: Schema.optional(Socials),
  visibility: Schema.optional(Schema.Literal("production", "test", "local", "hidden")),
  async: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "LaunchRequest" })

/** A launch body's decoding as the router takes it: the value, or the refusal through the error table. */
export const refusedOr = <A>(decoded: Either.Either<A, LaunchRequestRefused>): A | ApiError =>
  Either.isRight(decoded) ? decoded.right : toApiError(fromRequest(decoded.left))

/** The kill switch's answer (general rule 5), before the key is parsed. */
export const disabled = (): Reply =>
  errorReply(apiError("LAUNCH_DISABLED", "Launches are disabled on this server (HEADLESS_LAUNCH_ENABLED is not true)"))

const callerOf = (p: AgentPrincipal): HeadlessCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  embeddedWallet: p.key.embeddedWallet,
  keyDailyCap: p.key.dailyLaunchCap,
  plan: p.plan,
  principal: agentToWalletPrincipal(p),
  spendKey: p.key
})

export const launchRoutes = (options: LaunchRoutesOptions): ReadonlyArray<RouteDef> => {
  const { agentAuth, launches, images, settings } = options
  const guard = options.enabled ? undefined : () => disabled()
  const writer = (req: Request) => agentAuth.authenticate(req.headers, { scopes: ["launch:write"] })
  const reader = (req: Request) => agentAuth.authenticate(req.headers, { scopes: ["launch:read"], ...WHILE_PAUSED })
  // Hand-written (`decodeLaunchRequest`): the spec's refusal order, reasons and codes read the key's environment first (test keys: general rule 7) and the pair's economics and server settings, which no Schema's first error can say.
  const launchBody = decodedBody({
    schema: LaunchRequestWire,
    maxBytes: LAUNCH_BODY_BYTES_MAX,
    decode: (body: unknown, p: AgentPrincipal) => refusedOr(decodeLaunchRequest(body, { keyEnvironment: p.key.environment }, settings))
  })

  const headless = route({
    method: "POST",
    path: "/api/v1/launch/headless",
    operationId: "launchHeadless",
    summary: "Launch a token from the account's embedded wallet, signed server-side",
    description:
      "Idempotent on clientLaunchId (endpoint rule 1). `async: true` answers 202 after the pre-flight gates and runs in the background; poll the job.",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: launchBody,
    responses: {
      200: answer("Launch result (2.5); also the stored result of a confirmed same-body repeat", LaunchResult),
      202: answer("Accepted (async): {success, accepted, clientLaunchId, status, jobUrl}", LaunchAccepted),
      400: refusal(codesAt(400, ErrorTable.LaunchError), "the launch body's rules (2.2)"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      402: refusal(codesAt(402, ErrorTable.LaunchError)),
      403: refusal(["SCOPE_MISSING", ...codesAt(403, ErrorTable.LaunchError), "VALIDATION_FAILED"], "the key's scope, wallet and delegation refusals; a paused key (reason key_paused)"),
      409: refusal(codesAt(409, ErrorTable.LaunchError)),
      429: refusal(["RATE_LIMITED", ...codesAt(429, ErrorTable.LaunchError)]),
      500: refusal(codesAt(500, ErrorTable.LaunchError), "retry with the same clientLaunchId"),
      503: refusal(["LAUNCH_DISABLED", ...codesAt(503, ErrorTable.LaunchError)]),
      504: refusal(codesAt(504, ErrorTable.LaunchError))
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) =>
      mapFailure(launches.launch(callerOf(principal), body)).pipe(
        Effect.map((outcome) =>
          outcome._tag === "Launched"
            ? json(200, { success: true, ...outcome.result })
            : json(202, {
                success: true,
                accepted: true,
                clientLaunchId: outcome.clientLaunchId,
                status: outcome.status,
                jobUrl: `/api/v1/launch/headless/jobs/${encodeURIComponent(outcome.clientLaunchId)}`
              })
        )
      )
  })

  const dryRun = route({
    method: "POST",
    path: "/api/v1/launch/headless/dry-run",
    operationId: "launchHeadlessDryRun",
    summary: "Every check of a headless launch; nothing written, no cap slot, nothing on chain",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: launchBody,
    responses: {
      200: answer("Dry-run result (2.6)", LaunchDryRun),
      400: refusal(codesAt(400, ErrorTable.LaunchError), "the launch body's rules (2.2)"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      402: refusal(codesAt(402, ErrorTable.LaunchError)),
      403: refusal(["SCOPE_MISSING", ...codesAt(403, ErrorTable.LaunchError), "VALIDATION_FAILED"], "the key's scope, wallet refusals; a paused key (reason key_paused)"),
      409: refusal(codesAt(409, ErrorTable.LaunchError)),
      429: refusal(["RATE_LIMITED", ...codesAt(429, ErrorTable.LaunchError)]),
      500: refusal(codesAt(500, ErrorTable.LaunchError), "a Hood launch without a linked EVM wallet, rule 8"),
      503: refusal(["LAUNCH_DISABLED", ...codesAt(503, ErrorTable.LaunchError)]),
      504: refusal(codesAt(504, ErrorTable.LaunchError))
    },
    ...(guard !== undefined ? { guard } : {}),
    authenticate: writer,
    handler: (_req, { body }, principal) => mapFailure(launches.dryRun(callerOf(principal), body)).pipe(Effect.map((result) => json(200, { success: true, ...result })))
  })

  const job = route({
    method: "GET",
    path: "/api/v1/launch/headless/jobs/{clientLaunchId}",
    operationId: "getHeadlessLaunchJob",
    summary: "A launch's job record (2.7), headless or self-signed; reading it never resends anything",
    tags: ["launch"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { clientLaunchId: stringParam("The launch's clientLaunchId", { required: true, emptyIsValue: true }) },
    responses: {
      200: answer("Job record", LaunchJob),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "launch:read"),
      404: refusal(["JOB_NOT_FOUND"], "unknown or another account's id")
    },
    authenticate: reader,
    // The job read serves every path's rows (headless, self-signed, atomic) from one ledger read.
    // A failed row records its reason (or, written before, the code): the job says the code.
    handler: (_req, { clientLaunchId }, principal) =>
      mapFailure(options.job({ accountId: principal.accountId, clientLaunchId })).pipe(Effect.map((job) => json(200, { success: true, job: jobAnswer(job) })))
  })

  const upload = route({
    method: "POST",
    path: "/api/v1/uploads/agent-image",
    operationId: "uploadAgentImage",
    summary: "Host an image: multipart field `image`, or raw bytes with an image content type",
    description: "JPEG, PNG, GIF or WebP under 10 MB, cropped to a centered square unless already square (then kept byte for byte).",
    tags: ["launch"],
    auth: "agentKey",
    headers: [...AGENT_AUTH_HEADERS, "content-type"],
    body: decodedBody({
      schema: Schema.Uint8ArrayFromSelf,
      maxBytes: uploadBodyBytesMax,
      accepts: ["multipart/form-data", "image/*"],
      refuseContentType: (mediaType) =>
        apiError("UPLOAD_INVALID", `Send multipart/form-data with a file field \`image\`, or the image bytes with an image/* Content-Type (not ${mediaType || "none"})`, {
          field: "image"
        }),
      decode: (body: unknown) => (body instanceof Uint8Array ? body : new Uint8Array())
    }),
    responses: {
      200: answer("{success, imageUrl}", UploadedImage),
      400: refusal(["UPLOAD_INVALID"]),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING", "VALIDATION_FAILED"], "launch:write; a paused key (reason key_paused)"),
      413: refusal(["BODY_TOO_LARGE"]),
      429: refusal(["RATE_LIMITED"], "uploads per minute of the plan")
    },
    authenticate: writer,
    handler: (req, { body }, principal) =>
      uploadBytes(req.headers["content-type"], body).pipe(
        Effect.flatMap((bytes) =>
          images.upload({ accountId: principal.accountId, keyId: principal.key.id, uploadsPerMin: principal.plan.limits.uploadsPerMin, bytes })
        ),
        Effect.catchTag("ImageRefused", (e) => Effect.fail(fromImage(e))),
        mapFailure,
        Effect.map((image) => json(200, { success: true, imageUrl: image.url }))
      )
  })

  const served = route({
    method: "GET",
    path: "/api/v1/uploads/images/{file}",
    operationId: "getHostedImage",
    summary: "A hosted image, by its content address (public, immutable)",
    tags: ["launch"],
    auth: "public",
    pathParams: { file: stringParam("<sha256>.<ext>", { required: true, emptyIsValue: true }) },
    responses: {
      200: { description: "The image bytes with their content type", headers: ["Content-Type", "Cache-Control"] },
      404: refusal(["ROUTE_NOT_FOUND"], "no hosted image by that name")
    },
    handler: (_req, { file }) =>
      images.serve(file).pipe(
        Effect.catchTag("SqlError", (e) =>
          Effect.zipRight(Effect.logError("hosted image read failed", e), Effect.fail(apiError("INTERNAL", "The image could not be read")))
        ),
        Effect.flatMap((found) =>
          found._tag === "None"
            ? Effect.fail(apiError("ROUTE_NOT_FOUND", `No hosted image named ${file}`))
            : Effect.succeed<Reply>({
                status: 200,
                body: found.value.body,
                headers: Object.entries(found.value.headers)
              })
        )
      )
  })

  const metadataDocument = route({
    method: "GET",
    path: "/api/v1/uploads/metadata/{file}",
    operationId: "getTokenMetadata",
    summary: "A launch's token metadata document (the on-chain metadata URI), by its content address (public, immutable)",
    tags: ["launch"],
    auth: "public",
    pathParams: { file: stringParam("<sha256>.json", { required: true, emptyIsValue: true }) },
    responses: {
      200: answer("The metadata document wallets and explorers read: name, symbol, description, image, external_url, extensions (the links and banner)", TokenMetadataDocumentWire, [
        "Content-Type",
        "Cache-Control"
      ]),
      404: refusal(["ROUTE_NOT_FOUND"], "no metadata document by that name")
    },
    handler: (_req, { file }) =>
      images.serveMetadata(file).pipe(
        Effect.catchTag("SqlError", (e) =>
          Effect.zipRight(Effect.logError("hosted metadata read failed", e), Effect.fail(apiError("INTERNAL", "The metadata document could not be read")))
        ),
        Effect.flatMap((found) =>
          found._tag === "None"
            ? Effect.fail(apiError("ROUTE_NOT_FOUND", `No metadata document named ${file}`))
            : Effect.succeed<Reply>({ status: 200, body: found.value.body, headers: Object.entries(found.value.headers) })
        )
      )
  })

  return [headless, dryRun, job, upload, served, metadataDocument]
}
