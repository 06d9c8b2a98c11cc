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
import { decodeReplayRequest, problemText } from "../../src/services/strategy/Definition.js"
import type { ReplayJobsShape, ReplayRefusal } from "../../src/services/strategy/ReplayJobs.js"
import { json, type Reply, type Request } from "../Http.js"
import type { RouteDef } from "../Router.js"

export const REPLAY_PATH = "/v1/strategy-lab/replay"
export const replayBodyMaxBytes = 64 * 1024

export interface StrategyLabRoutesDeps {
  readonly authenticate: (req: Request) => Effect.Effect<{ readonly accountId: string; readonly plan: PlanId }, ApiError>
  readonly jobs: ReplayJobsShape
  /** Request headers the authenticator reads (default `authorization`). */
  readonly authHeaders?: ReadonlyArray<string>
}

/** Body as documented (the handler decodes it strictly with `decodeReplayRequest`). */
const ReplayBodyDoc = Schema.Struct({
  definition: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  from: Schema.String,
  to: Schema.String,
  asset_ids: Schema.optional(Schema.Array(Schema.String))
})
const JobIdDoc = Schema.Struct({ job_id: Schema.String })
const JobDoc = Schema.Struct({
  job_id: Schema.String,
  status: Schema.Literal("queued", "running", "done", "failed"),
  result: Schema.NullOr(Schema.Unknown),
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String }))
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
        headers: { "Retry-After": String(Math.max(1, Math.ceil(((e.resetAtMs ?? 0) - Date.now()) / 1000))) }
      })
    case "NotFound":
      return apiError("JOB_NOT_FOUND", "No replay job with this id")
  }
}

const common = {
  401: { description: "invalid api key" },
  403: { description: "TIER_REQUIRED: the strategy lab needs Max" }
} as const

export const strategyLabRoutes = (deps: StrategyLabRoutesDeps): ReadonlyArray<RouteDef> => {
  const headers = deps.authHeaders ?? ["authorization"]
  const maxOnly =
    (f: (accountId: string, req: Request) => Effect.Effect<Reply, ApiError | ReplayRefusal>) =>
    (req: Request): Effect.Effect<Reply, ApiError> =>
      Effect.gen(function* () {
        const who = yield* deps.authenticate(req)
        if (who.plan !== "max") return yield* apiError("TIER_REQUIRED", "requires Max", { extra: { required: "max" } })
        return yield* f(who.accountId, req).pipe(
          Effect.catchIf(
            (e): e is ReplayRefusal => (e as { readonly _tag?: string })._tag === "ReplayRefusal",
            (e) => Effect.fail(refusalToApiError(e))
          )
        )
      })
  const jobIdParam = { name: "job_id", description: "The replay job", required: true, schema: { type: "string" } }

  return [
    {
      method: "POST",
      path: REPLAY_PATH,
      operationId: "startReplay",
      summary: "Start a strategy replay (Max); poll the job until done or failed",
      description:
        "Body `{definition, from, to, asset_ids?}`: window at most 14 days, at most 50 asset_ids; one replay at a time per account, 20 a day; a replay stops after 10 minutes.",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      body: { schema: ReplayBodyDoc, maxBytes: replayBodyMaxBytes },
      responses: {
        202: { description: "Started", schema: JobIdDoc },
        400: { description: "VALIDATION_FAILED: the first problem as `<path>: <message>`" },
        409: { description: "REPLAY_RUNNING with the running job_id" },
        429: { description: "RATE_LIMITED with quota and used" },
        ...common
      },
      handler: maxOnly((accountId, req) =>
        Effect.gen(function* () {
          const decoded = decodeReplayRequest(req.body)
          if (Either.isLeft(decoded)) return yield* validationFailed(decoded.left.path || "body", problemText(decoded.left))
          const started = yield* deps.jobs.submit(accountId, decoded.right)
          return json(202, started)
        })
      )
    },
    {
      method: "GET",
      path: `${REPLAY_PATH}/{job_id}`,
      operationId: "getReplay",
      summary: "A replay job: status, then the result or the error",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      pathParams: [jobIdParam],
      responses: { 200: { description: "The job", schema: JobDoc }, 404: { description: "JOB_NOT_FOUND" }, ...common },
      handler: maxOnly((accountId, req) => Effect.map(deps.jobs.get(accountId, req.params[0] ?? ""), (job) => json(200, job)))
    },
    {
      method: "POST",
      path: `${REPLAY_PATH}/{job_id}/cancel`,
      operationId: "cancelReplay",
      summary: "Stop a replay (it ends as failed with error code cancelled)",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      pathParams: [jobIdParam],
      responses: { 200: { description: "The job after cancelling", schema: JobDoc }, 404: { description: "JOB_NOT_FOUND" }, ...common },
      handler: maxOnly((accountId, req) => Effect.map(deps.jobs.cancel(accountId, req.params[0] ?? ""), (job) => json(200, job)))
    },
    {
      method: "GET",
      path: `${REPLAY_PATH}/{job_id}/chart.svg`,
      operationId: "replayChart",
      summary: "The replay's equity curve and drawdown as SVG",
      tags: ["strategy-lab"],
      auth: "bearer",
      headers,
      pathParams: [jobIdParam],
      responses: {
        200: { description: "image/svg+xml" },
        404: { description: "JOB_NOT_FOUND" },
        409: { description: "VALIDATION_FAILED: the job is not done" },
        ...common
      },
      handler: maxOnly((accountId, req) =>
        Effect.gen(function* () {
          const job = yield* deps.jobs.get(accountId, req.params[0] ?? "")
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
          return { status: 200, body, contentType: "image/svg+xml; charset=utf-8", headers: [["Cache-Control", "private, max-age=60"]] }
        })
      )
    }
  ]
}
