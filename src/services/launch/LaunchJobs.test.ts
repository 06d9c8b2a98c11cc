import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { selfOrAtomicJob } from "./LaunchJobs.js"
import { launchFailure } from "./LaunchError.js"

const ref = { accountId: "a", clientLaunchId: "l" }

describe("selfOrAtomicJob", () => {
  it("a self-signed record answers without asking the atomic path", async () => {
    let asked = 0
    const job = selfOrAtomicJob({ job: () => Effect.succeed({ path: "self" }) }, { job: () => Effect.sync(() => void asked++).pipe(Effect.as({ path: "atomic" })) })
    expect(await Effect.runPromise(job(ref))).toEqual({ path: "self" })
    expect(asked).toBe(0)
  })

  it("no self-signed record: the atomic record, or undefined when neither names the id", async () => {
    expect(await Effect.runPromise(selfOrAtomicJob({ job: () => Effect.succeed(undefined) }, { job: () => Effect.succeed({ bundleId: "bnd_1" }) })(ref))).toEqual({ bundleId: "bnd_1" })
    expect(await Effect.runPromise(selfOrAtomicJob({ job: () => Effect.succeed(undefined) }, { job: () => Effect.succeed(undefined) })(ref))).toBeUndefined()
  })

  it("a failed self-signed read fails the job read (the atomic path is not asked)", async () => {
    const failed = launchFailure("launch_failed", "storage", { retryable: true })
    const exit = await Effect.runPromiseExit(selfOrAtomicJob({ job: () => Effect.fail(failed) }, { job: () => Effect.succeed({ bundleId: "x" }) })(ref))
    expect(exit._tag).toBe("Failure")
  })
})
