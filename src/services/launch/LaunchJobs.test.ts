import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { launchFailure } from "./LaunchError.js"
import { type JobOfRow, jobNotFound, launchJob } from "./LaunchJobs.js"
import type { LaunchRecord, LaunchRef } from "./LaunchLedger.js"
import type { LaunchPath } from "./LaunchLedgerMachine.js"

const ref: LaunchRef = { accountId: "a", clientLaunchId: "l" }
/** The fields the dispatch reads; the rest of a row is the path services' business. */
const rowOf = (path: LaunchPath): LaunchRecord => ({ accountId: ref.accountId, clientLaunchId: ref.clientLaunchId, path }) as LaunchRecord

/** A job read over `row`, counting the ledger reads and which path services were asked. */
const reader = (row: LaunchRecord | undefined, answers: Partial<Record<LaunchPath, JobOfRow<string>>> = {}) => {
  const counts = { reads: 0, asked: [] as Array<LaunchPath> }
  const part =
    (path: LaunchPath): JobOfRow<string> =>
    (r, found) =>
      Effect.suspend(() => {
        counts.asked.push(path)
        const own = answers[path]
        if (own !== undefined) return own(r, found)
        return Effect.succeed(found.path === path ? `${path} record` : undefined)
      })
  const job = launchJob<string>({
    read: () => Effect.sync(() => (counts.reads++, row)),
    paths: { headless: part("headless"), self: part("self"), atomic: part("atomic") }
  })
  return { job, counts }
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined => (Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined)

describe("launchJob: one ledger read per job read", () => {
  it("each path's row is answered by its own service alone, from the one read", async () => {
    for (const path of ["headless", "self", "atomic"] as const) {
      const { job, counts } = reader(rowOf(path))
      expect(await Effect.runPromise(job(ref))).toBe(`${path} record`)
      expect(counts).toEqual({ reads: 1, asked: [path] })
    }
  })

  it("an unknown or foreign id is job_not_found with the route's message, no path service asked", async () => {
    const { job, counts } = reader(undefined)
    const e = failureOf(await Effect.runPromiseExit(job(ref)))
    expect(e).toMatchObject({ reason: "job_not_found", message: "No launch job with this clientLaunchId on this account" })
    expect(e).toMatchObject({ reason: jobNotFound().reason, message: jobNotFound().message })
    expect(counts).toEqual({ reads: 1, asked: [] })
  })

  it("a row its path's service does not answer is job_not_found (never another path's record)", async () => {
    const { job, counts } = reader(rowOf("self"), { self: () => Effect.succeed(undefined) })
    expect(failureOf(await Effect.runPromiseExit(job(ref)))).toMatchObject({ reason: "job_not_found" })
    expect(counts).toEqual({ reads: 1, asked: ["self"] })
  })

  it("a failed ledger read or path read fails the job read with that failure", async () => {
    const storage = launchFailure("launch_failed", "reading the job failed", { retryable: true })
    const failedRead = launchJob<string>({ read: () => Effect.fail(storage), paths: { headless: () => Effect.die("not asked"), self: () => Effect.die("not asked"), atomic: () => Effect.die("not asked") } })
    expect(failureOf(await Effect.runPromiseExit(failedRead(ref)))).toBe(storage)
    const { job } = reader(rowOf("atomic"), { atomic: () => Effect.fail(storage) })
    expect(failureOf(await Effect.runPromiseExit(job(ref)))).toBe(storage)
  })
})
