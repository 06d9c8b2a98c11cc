/**
 * Strategy-lab replay routes of the market-data service (spec 4.5, 3.6, 8): start a replay
 * (202 `{job_id}`), poll it, cancel it, and its SVG chart. Max only.
 *
 * Refusals, exactly: a bad body is 400 `VALIDATION_FAILED` whose message is the first problem
 * as `<path>: <message>` (and `field` the path); a second replay while one runs is 409
 * `REPLAY_RUNNING` with `job_id`; the 21st replay of a UTC day is 429 `RATE_LIMITED` with
 * `quota` and `used` (and `Retry-After` to the next UTC midnight); another account's or an
 * unknown job is 404 `JOB_NOT_FOUND`; a plan other than Max is 403 `TIER_REQUIRED`.
 */
import { Effect, Either, Schema } from "effect"
import { type ApiError, ApiError as ApiErrorClass, apiError, validationFailed } from "../../src/domain/ApiError.js"
import type { PlanId } from "../../src/domain/Plans.js"
import { equityChartSvg } from "../../src/services/strategy/Chart.js"
import { decodeReplayRequest, problemText, ReplayRequest } from "../../src/services/strategy/Definition.js"
import type { ReplayJobsShape, ReplayRefusal } from "../../src/services/strategy/ReplayJobs.js"
import { json, type Reply, type Request } from "../Http.js"
import { stringParam } from "../QueryParams.js"
import { refusal } from "../OpenApi.js"
import { ReplayResultDoc } from "../ReplayResultDoc.js"
import { StrategyDefinitionDoc } from "../StrategyDefinitionDoc.js"
import { route, type RouteDef } from "../Router.js"

export const REPLAY_PATH = "/v1/strategy-lab/replay"
export const replayBodyMaxBytes = 64 * 1024

export interface StrategyLabRoutesDeps {
  readonly authenticate: (req: Request) => Effect.Effect<{ readonly accountId: string; readonly plan: PlanId }, ApiError>
  readonly jobs: ReplayJobsShape
  /** Request headers the authenticator reads (default `authorization`). */
  readonly authHeaders?: ReadonlyArray<string>
}

/** The replay body as OpenAPI shows it: the definition's own schema, the window's bounds as ISO 8601 text (checked by `ReplayRequest`). */
const ReplayBodyDoc = Schema.Struct({
  definition: StrategyDefinitionDoc,
  from: Schema.String.annotations({ format: "date-time" }),
  to: Schema.String.annotations({ format: "date-time" }),
  asset_ids: Schema.optional(Schema.Array(Schema.String))
})

/** The replay body, decoded strictly (unknown fields refused) with its first problem as the refusal. */
const replayBody = {
  schema: ReplayRequest,
  documented: ReplayBodyDoc,
  maxBytes: replayBodyMaxBytes,
  decode: (body: unknown) =>
    Either.match(decodeReplayRequest(body), {
      onLeft: (problem): ApiError => validationFailed(problem.path || "body", problemText(problem)),
      onRight: (request) => request
    })
}
const JobIdDoc = Schema.Struct({ job_id: Schema.String })
const JobDoc = Schema.Struct({
  job_id: Schema.String,
  status: Schema.Literal("queued", "running", "done", "failed"),
  created_at: Schema.String.annotations({ description: "ISO 8601" }),
  started_at: Schema.NullOr(Schema.String).annotations({ description: "ISO 8601; null while queued" }),
  finished_at: Schema.NullOr(Schema.String).annotations({ description: "ISO 8601; null until done or failed" }),
  result: Schema.NullOr(ReplayResultDoc),
  error: Schema.NullOr(Schema.Struct({ code: Schema.Literal("timed_out", "cancelled", "replay_failed"), message: Schema.String }))
})

export const refusalToApiError = (e: ReplayRefusal): ApiError => {
  switch (e.reason) {
    case "Running":
      // Not in the shared code table yet (see the report): built directly with its status.
      return new ApiErrorClass({
        code: "REPLAY_RUNNING",
        message: "A replay is already running for this account; poll or cancel it first",
        status: 409,
        retryable: true,
        extra: { job_id: e.jobId ?? null }
      })
    case "Quota":
      return apiError("RATE_LIMITED", `Daily replay quota reached (${e.used} of ${e.quota})`, {
        extra: { quota: e.quota, used: e.used },
        headers: { "Retry-After": String(Math.max(1, Math.ceil((e.retryAfterMs ?? 0) / 1000))) }
      })
    case "NotFound":
      return apiError("JOB_NOT_FOUND", "No replay job with this id")
  }
}

const common = {
  401: refusal(["UNAUTHORIZED"], "invalid api key"),
  403: refusal(["TIER_REQUIRED"], "the strategy lab needs Max")
} as const

export const strategyLabRoutes = (deps: StrategyLabRoutesDeps): ReadonlyArray<RouteDef> => {
  const headers = deps.authHeaders ?? ["authorization"]
  /** Authentication and the plan run before the body is decoded: a stranger learns nothing of it. */
  const maxOnly = (req: Request): Effect.Effect<string, ApiError> =>
    Effect.flatMap(deps.authenticate(req), (who) =>
      who.plan === "max" ? Effect.succeed(who.accountId) : Effect.fail(apiError("TIER_REQUIRED", "requires Max", { extra: { required: "max" } }))
    )
  const refusals = <A>(e: Effect.Effect<A, ApiError | ReplayRefusal>): Effect.Effect<A, ApiError> =>
    Effect.catchIf(
      e,
      (x): x is ReplayRefusal => (x as { readonly _tag?: string })._tag === "ReplayRefusal",
      (x) => Effect.fail(refusalToApiError(x))
    )
  const jobPath = { job_id: stringParam("The replay job", { required: true }) }

  return [
    route({
      method: "POST",
      path: REPLAY_PATH,
      operationId: "startReplay",
      summary: "Start a strategy replay (Max); poll the job until done or failed",
      description:
        "Body `{definition, from, to, asset_ids?}`: window at most 14 days, at most 50 asset_ids; one replay at a time per account, 20 a day; a replay stops after 10 minutes.",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      body: replayBody,
      responses: {
        202: { description: "Started", schema: JobIdDoc },
        400: refusal(["VALIDATION_FAILED"], "the first problem as `<path>: <message>`"),
        409: refusal(["REPLAY_RUNNING"], "with the running job_id"),
        429: refusal(["RATE_LIMITED"], "with quota and used"),
        ...common
      },
      authenticate: maxOnly,
      handler: (_req, { body }, accountId) => refusals(Effect.map(deps.jobs.submit(accountId, body), (started) => json(202, started)))
    }),
    route({
      method: "GET",
      path: `${REPLAY_PATH}/{job_id}`,
      operationId: "getReplay",
      summary: "A replay job: status, then the result or the error",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      pathParams: jobPath,
      responses: { 200: { description: "The job", schema: JobDoc }, 404: refusal(["JOB_NOT_FOUND"]), ...common },
      authenticate: maxOnly,
      handler: (_req, { job_id }, accountId) => refusals(Effect.map(deps.jobs.get(accountId, job_id), (job) => json(200, job)))
    }),
    route({
      method: "POST",
      path: `${REPLAY_PATH}/{job_id}/cancel`,
      operationId: "cancelReplay",
      summary: "Stop a replay (it ends as failed with error code cancelled)",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      pathParams: jobPath,
      responses: { 200: { description: "The job after cancelling", schema: JobDoc }, 404: refusal(["JOB_NOT_FOUND"]), ...common },
      authenticate: maxOnly,
      handler: (_req, { job_id }, accountId) => refusals(Effect.map(deps.jobs.cancel(accountId, job_id), (job) => json(200, job)))
    }),
    route({
      method: "GET",
      path: `${REPLAY_PATH}/{job_id}/chart.svg`,
      operationId: "replayChart",
      summary: "The replay's equity curve and drawdown as SVG",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      pathParams: jobPath,
      responses: {
        200: { description: "image/svg+xml" },
        404: refusal(["JOB_NOT_FOUND"]),
        409: refusal(["VALIDATION_FAILED"], "the job is not done"),
        ...common
      },
      authenticate: maxOnly,
      handler: (_req, { job_id }, accountId) =>
        refusals(Effect.gen(function* () {
          const job = yield* deps.jobs.get(accountId, job_id)
          if (job.status !== "done" || job.result === null) {
            return yield* apiError("VALIDATION_FAILED", `The replay is ${job.status}; its chart exists once it is done`, {
              field: "job_id",
              status: 409
            })
          }
          const r = job.result
          const body = equityChartSvg({
            title: `Replay ${job.job_id} · ${r.from.slice(0, 16)} to ${r.to.slice(0, 16)} · ${r.trade_count} trades · ${r.verdict}`,
            equity: r.equity,
            maxDrawdownPct: r.max_drawdown_pct,
            pnlUsd: r.pnl_usd
          })
          return { status: 200, body, contentType: "image/svg+xml; charset=utf-8", headers: [["Cache-Control", "private, max-age=60"]] } satisfies Reply as Reply
        }))
    })
  ]
}
