/**
 * The replay job runner's limits and refusals, on the test clock:
 *
 *   submit ──▶ queued ──▶ running ──▶ done
 *                 │           ├──────▶ failed (replay_failed)   "a failing replay"
 *                 │           ├──────▶ failed (timed_out)       "stops itself at the time limit"
 *                 └───────────┴──────▶ failed (cancelled)       "cancel"
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, TestClock } from "effect"
import { decodeReplayRequest } from "./Definition.js"
import type { ReplayResult } from "./Engine.js"
import { ReplayError } from "./Replay.js"
import { make, type ReplayJobsShape } from "./ReplayJobs.js"

const request = (() => {
  const r = decodeReplayRequest({
    definition: {
      chain: "solana",
      entry: { source: "pattern", pattern: "confluence" },
      exit: { take_profit_pct: 50 },
      sizing: { usd_per_trade: 10, max_concurrent: 1 }
    },
    from: "2024-01-01T00:00:00Z",
    to: "2024-01-02T00:00:00Z"
  })
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
})()

const result = { trade_count: 0 } as unknown as ReplayResult

/** Waits (on the test clock's scheduler) until the job leaves queued/running. */
const settle = (jobs: ReplayJobsShape, account: string, id: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100; i++) {
      const job = yield* jobs.get(account, id)
      if (job.status === "done" || job.status === "failed") return job
      yield* Effect.yieldNow()
    }
    return yield* jobs.get(account, id)
  })

describe("ReplayJobs", () => {
  it.scoped("one job at a time per account: the second is refused with the running job_id", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const jobs = yield* make({ run: () => Effect.as(Deferred.await(gate), result) })
      const first = yield* jobs.submit("a1", request)
      const refused = yield* Effect.flip(jobs.submit("a1", request))
      expect(refused.reason).toBe("Running")
      expect(refused.jobId).toBe(first.job_id)
      // Another account is not affected.
      yield* jobs.submit("a2", request)
      yield* Deferred.succeed(gate, undefined)
      const done = yield* settle(jobs, "a1", first.job_id)
      expect(done.status).toBe("done")
      expect(done.result).toBe(result)
      // Once done, the account may start another.
      yield* jobs.submit("a1", request)
    })
  )

  it.scoped("20 a day per account: the 21st is refused with quota and used, and the next UTC day resets it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(Date.UTC(2024, 0, 1, 12))
      const jobs = yield* make({ run: () => Effect.succeed(result) })
      for (let i = 0; i < 20; i++) {
        const { job_id } = yield* jobs.submit("a1", request)
        expect((yield* settle(jobs, "a1", job_id)).status).toBe("done")
      }
      const refused = yield* Effect.flip(jobs.submit("a1", request))
      expect(refused.reason).toBe("Quota")
      expect([refused.quota, refused.used]).toEqual([20, 20])
      expect(refused.resetAtMs).toBe(Date.UTC(2024, 0, 2))
      expect(yield* jobs.usage("a1")).toEqual({ quota: 20, used: 20 })
      // A refused submit does not count, and nothing started.
      expect((yield* Effect.flip(jobs.submit("a1", request))).used).toBe(20)
      yield* TestClock.setTime(Date.UTC(2024, 0, 2))
      const next = yield* jobs.submit("a1", request)
      expect(next.job_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(yield* jobs.usage("a1")).toEqual({ quota: 20, used: 1 })
    })
  )

  it.scoped("stops itself at the time limit", () =>
    Effect.gen(function* () {
      const jobs = yield* make({ timeoutMs: 600_000, run: () => Effect.never })
      const { job_id } = yield* jobs.submit("a1", request)
      yield* Effect.yieldNow()
      expect((yield* jobs.get("a1", job_id)).status).toBe("running")
      yield* TestClock.adjust("599 seconds")
      expect((yield* jobs.get("a1", job_id)).status).toBe("running")
      yield* TestClock.adjust("1 second")
      const job = yield* settle(jobs, "a1", job_id)
      expect(job.status).toBe("failed")
      expect(job.error).toEqual({ code: "timed_out", message: "the replay stopped after 600 s" })
      // The account is free again.
      yield* jobs.submit("a1", request)
    })
  )

  it.scoped("cancel stops a running job (failed, cancelled); cancelling again changes nothing", () =>
    Effect.gen(function* () {
      const interrupted = yield* Deferred.make<void>()
      const jobs = yield* make({ run: () => Effect.onInterrupt(Effect.never, () => Deferred.succeed(interrupted, undefined)) })
      const { job_id } = yield* jobs.submit("a1", request)
      yield* Effect.yieldNow()
      const cancelled = yield* jobs.cancel("a1", job_id)
      expect(cancelled.status).toBe("failed")
      expect(cancelled.error?.code).toBe("cancelled")
      yield* Deferred.await(interrupted)
      expect((yield* jobs.cancel("a1", job_id)).error?.code).toBe("cancelled")
      yield* jobs.submit("a1", request)
    })
  )

  it.scoped("a failing replay ends failed with its message", () =>
    Effect.gen(function* () {
      const jobs = yield* make({ run: () => Effect.fail(new ReplayError({ reason: "Unavailable", message: "chDB is gone" })) })
      const { job_id } = yield* jobs.submit("a1", request)
      const job = yield* settle(jobs, "a1", job_id)
      expect(job.error).toEqual({ code: "replay_failed", message: "chDB is gone" })
    })
  )

  it.scoped("another account's job id and an unknown id are both NotFound", () =>
    Effect.gen(function* () {
      const jobs = yield* make({ run: () => Effect.succeed(result) })
      const { job_id } = yield* jobs.submit("a1", request)
      expect((yield* Effect.flip(jobs.get("a2", job_id))).reason).toBe("NotFound")
      expect((yield* Effect.flip(jobs.cancel("a2", job_id))).reason).toBe("NotFound")
      expect((yield* Effect.flip(jobs.get("a1", "nope"))).reason).toBe("NotFound")
    })
  )

  it.scoped("at most runningMax replays run at once; the rest wait queued", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const jobs = yield* make({ runningMax: 2, run: () => Effect.as(Deferred.await(gate), result) })
      const ids = []
      for (const a of ["a1", "a2", "a3"]) ids.push((yield* jobs.submit(a, request)).job_id)
      yield* Effect.yieldNow()
      const statuses = []
      for (const [i, a] of ["a1", "a2", "a3"].entries()) statuses.push((yield* jobs.get(a, ids[i]!)).status)
      expect(statuses).toEqual(["running", "running", "queued"])
      yield* Deferred.succeed(gate, undefined)
      expect((yield* settle(jobs, "a3", ids[2]!)).status).toBe("done")
    })
  )

  it.scoped("finished jobs beyond retainedMax are evicted, oldest first", () =>
    Effect.gen(function* () {
      const jobs = yield* make({ retainedMax: 2, run: () => Effect.succeed(result) })
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust("1 second")
        const { job_id } = yield* jobs.submit(`a${i}`, request)
        yield* settle(jobs, `a${i}`, job_id)
        ids.push(job_id)
      }
      yield* TestClock.adjust("1 second")
      yield* jobs.submit("a9", request) // eviction runs on submit
      expect((yield* Effect.flip(jobs.get("a0", ids[0]!))).reason).toBe("NotFound")
      expect((yield* jobs.get("a1", ids[1]!)).status).toBe("done")
    })
  )
})

