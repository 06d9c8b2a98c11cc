/**
 * Replay jobs (spec 3.6, 4.5, 8), in memory: submit answers a `job_id` at once and the replay
 * runs on a fiber; polling reads its status until `done` or `failed`; cancel stops it.
 *
 * Invariants:
 * - One job per account at a time: while an account's job is `queued` or `running`, another
 *   submit is refused (`Running`, carrying that `job_id`).
 * - 20 submits per account per UTC day (`dailyQuota`); the 21st is refused (`Quota` with
 *   `quota` and `used`) and starts nothing. A refused submit does not count.
 * - A job stops itself after `timeoutMs` (10 minutes): `failed` with `error.code` `timed_out`.
 *   A cancelled job is `failed` with `cancelled` (so a client polling for `done`/`failed`
 *   always ends). Cancelling a finished job changes nothing.
 * - Bounded: at most `runningMax` replays run at once across accounts (the rest wait as
 *   `queued`); finished jobs are kept `retentionMs` (24 h) and at most `retainedMax` of them
 *   (oldest finished evicted first); the quota counters hold one entry per account and day.
 * - Another account's job id answers `NotFound`, exactly like an unknown id.
 * - Jobs run in the layer's scope: closing it interrupts them.
 */
import { Clock, Context, Data, Effect, Fiber, Layer, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import type { ReplayRequest } from "./Definition.js"
import type { ReplayResult } from "./Engine.js"
import type { ReplayError } from "./Replay.js"

export type JobStatus = "queued" | "running" | "done" | "failed"

export interface JobView {
  readonly job_id: string
  readonly status: JobStatus
  readonly created_at: string
  readonly started_at: string | null
  readonly finished_at: string | null
  readonly result: ReplayResult | null
  readonly error: { readonly code: "timed_out" | "cancelled" | "replay_failed"; readonly message: string } | null
}

/**
 * `Running` carries `jobId`; `Quota` carries `quota`, `used`, `resetAtMs` and `retryAfterMs` (from
 * the refusal's own `Clock` reading, so the route words Retry-After without reading the time);
 * `NotFound` nothing.
 */
export class ReplayRefusal extends Data.TaggedError("ReplayRefusal")<{
  readonly reason: "Running" | "Quota" | "NotFound"
  readonly jobId?: string
  readonly quota?: number
  readonly used?: number
  readonly resetAtMs?: number
  readonly retryAfterMs?: number
}> {}

export interface ReplayJobsOptions {
  /** Runs one replay (already validated). */
  readonly run: (request: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError>
  readonly timeoutMs?: number
  readonly dailyQuota?: number
  readonly runningMax?: number
  readonly retentionMs?: number
  readonly retainedMax?: number
}

export const replayTimeoutMsDefault = 10 * 60_000
export const dailyQuotaDefault = 20
export const runningMaxDefault = 2
export const retentionMsDefault = 24 * 3_600_000
export const retainedMaxDefault = 200

export interface ReplayJobsShape {
  readonly submit: (accountId: string, request: ReplayRequest) => Effect.Effect<{ readonly job_id: string }, ReplayRefusal>
  readonly get: (accountId: string, jobId: string) => Effect.Effect<JobView, ReplayRefusal>
  readonly cancel: (accountId: string, jobId: string) => Effect.Effect<JobView, ReplayRefusal>
  /** The account's use of today's quota. */
  readonly usage: (accountId: string) => Effect.Effect<{ readonly quota: number; readonly used: number }>
}

export class ReplayJobs extends Context.Tag("curvestream/strategy/ReplayJobs")<ReplayJobs, ReplayJobsShape>() {
  static layer = (options: ReplayJobsOptions): Layer.Layer<ReplayJobs> => Layer.scoped(ReplayJobs, make(options))
}

interface Job {
  readonly id: string
  readonly accountId: string
  readonly createdMs: number
  status: JobStatus
  startedMs: number | undefined
  finishedMs: number | undefined
  result: ReplayResult | undefined
  error: JobView["error"]
  fiber: Fiber.RuntimeFiber<void> | undefined
}

const DAY_MS = 86_400_000
const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString())

const view = (job: Job): JobView => ({
  job_id: job.id,
  status: job.status,
  created_at: new Date(job.createdMs).toISOString(),
  started_at: iso(job.startedMs),
  finished_at: iso(job.finishedMs),
  result: job.result ?? null,
  error: job.error
})

export const make = (options: ReplayJobsOptions): Effect.Effect<ReplayJobsShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const timeoutMs = options.timeoutMs ?? replayTimeoutMsDefault
    const quota = options.dailyQuota ?? dailyQuotaDefault
    const retentionMs = options.retentionMs ?? retentionMsDefault
    const retainedMax = options.retainedMax ?? retainedMaxDefault
    const permits = yield* Effect.makeSemaphore(options.runningMax ?? runningMaxDefault)
    const scope = yield* Effect.scope
    const jobs = new Map<string, Job>()
    /** accountId -> the job queued or running. */
    const active = new Map<string, string>()
    /** accountId -> { day, used }. */
    const used = new Map<string, { day: number; used: number }>()

    const finish = (job: Job, nowMs: number, patch: Partial<Pick<Job, "status" | "result" | "error">>) => {
      if (job.status === "done" || job.status === "failed") return
      Object.assign(job, patch)
      job.finishedMs = nowMs
      job.fiber = undefined
      if (active.get(job.accountId) === job.id) active.delete(job.accountId)
    }

    const evict = (nowMs: number) => {
      const finished = [...jobs.values()].filter((j) => j.finishedMs !== undefined)
      for (const j of finished) if (nowMs - j.finishedMs! > retentionMs) jobs.delete(j.id)
      const left = finished.filter((j) => jobs.has(j.id)).sort((a, b) => a.finishedMs! - b.finishedMs!)
      for (let i = 0; i < left.length - retainedMax; i++) jobs.delete(left[i]!.id)
      const today = Math.floor(nowMs / DAY_MS)
      for (const [account, u] of used) if (u.day !== today) used.delete(account)
    }

    const runJob = (job: Job, request: ReplayRequest): Effect.Effect<void> =>
      permits.withPermits(1)(
        Effect.gen(function* () {
          job.status = "running"
          job.startedMs = yield* Clock.currentTimeMillis
          const exit = yield* options.run(request).pipe(
            Effect.timeoutFail({
              duration: timeoutMs,
              onTimeout: () => ({ _tag: "Timeout" as const })
            }),
            Effect.exit
          )
          const now = yield* Clock.currentTimeMillis
          if (exit._tag === "Success") finish(job, now, { status: "done", result: exit.value })
          else {
            const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
            finish(job, now, {
              status: "failed",
              error:
                failure !== undefined && failure._tag === "Timeout"
                  ? { code: "timed_out", message: `the replay stopped after ${Math.round(timeoutMs / 1000)} s` }
                  : { code: "replay_failed", message: failure !== undefined ? failure.message : "the replay failed unexpectedly" }
            })
          }
        })
      ).pipe(
        Effect.onInterrupt(() =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.sync(() => finish(job, now, { status: "failed", error: { code: "cancelled", message: "the replay was cancelled" } }))
          )
        )
      )

    const owned = (accountId: string, jobId: string) =>
      Effect.suspend(() => {
        const job = jobs.get(jobId)
        return job === undefined || job.accountId !== accountId ? Effect.fail(new ReplayRefusal({ reason: "NotFound" })) : Effect.succeed(job)
      })

    const usageNow = (accountId: string, nowMs: number) => {
      const u = used.get(accountId)
      return u !== undefined && u.day === Math.floor(nowMs / DAY_MS) ? u.used : 0
    }

    return {
      submit: (accountId, request) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          evict(now)
          const running = active.get(accountId)
          if (running !== undefined) return yield* new ReplayRefusal({ reason: "Running", jobId: running })
          const n = usageNow(accountId, now)
          if (n >= quota) {
            const resetAtMs = (Math.floor(now / DAY_MS) + 1) * DAY_MS
            return yield* new ReplayRefusal({ reason: "Quota", quota, used: n, resetAtMs, retryAfterMs: resetAtMs - now })
          }
          used.set(accountId, { day: Math.floor(now / DAY_MS), used: n + 1 })
          const job: Job = {
            id: randomUUID(),
            accountId,
            createdMs: now,
            status: "queued",
            startedMs: undefined,
            finishedMs: undefined,
            result: undefined,
            error: null,
            fiber: undefined
          }
          jobs.set(job.id, job)
          active.set(accountId, job.id)
          job.fiber = yield* Effect.forkIn(runJob(job, request), scope)
          return { job_id: job.id }
        }),
      get: (accountId, jobId) => Effect.map(owned(accountId, jobId), view),
      cancel: (accountId, jobId) =>
        Effect.gen(function* () {
          const job = yield* owned(accountId, jobId)
          const fiber = job.fiber
          if (fiber !== undefined && (job.status === "queued" || job.status === "running")) {
            // Marked at once; the fiber stops after the statement in flight (chDB cannot cancel one).
            finish(job, yield* Clock.currentTimeMillis, { status: "failed", error: { code: "cancelled", message: "the replay was cancelled" } })
            yield* Fiber.interruptFork(fiber)
          }
          return view(job)
        }),
      usage: (accountId) => Effect.map(Clock.currentTimeMillis, (now) => ({ quota, used: usageNow(accountId, now) }))
    } satisfies ReplayJobsShape
  })
