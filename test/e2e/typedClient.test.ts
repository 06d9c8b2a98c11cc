/**
 * The typed client (`clients/typescript`) against a started engine: public reads, a keyed read,
 * a refusal typed as the envelope with its code, the market-data tape, and the signal stream
 * (typed messages through `signalStream`). Every answer is also checked against the listener's
 * document (`contractSetup.ts`).
 */
import { describe, expect, it } from "vitest"
import { dataClient, engineClient, signalStream } from "../../clients/typescript/index.js"
import { engineForFile } from "../support/engineForFile.js"
import { eventually } from "../support/eventually.js"

const started = engineForFile({ args: ["--quiet"] })

describe("the typed client against a started engine", () => {
  it("reads public and keyed routes and gets refusals as typed envelopes", async () => {
    const engine = engineClient({ baseUrl: started.engine.url, apiKey: started.credentials.agentKey })
    const pairs = await engine.GET("/api/v1/launch/quote-pairs")
    expect(pairs.response.status).toBe(200)
    expect(pairs.data).toBeDefined()

    const job = await engine.GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId: "never-launched" } } })
    expect(job.data).toBeUndefined()
    expect(job.response.status).toBe(404)
    expect(job.error?.success).toBe(false)
    expect(job.error?.error.code).toBe("JOB_NOT_FOUND")

    const anonymous = engineClient({ baseUrl: started.engine.url })
    const refused = await anonymous.GET("/api/v1/agent/fees", { params: { query: {} } })
    expect(refused.response.status).toBe(401)
    expect(refused.error?.error.code).toBe("UNAUTHORIZED")

    const fees = await engine.GET("/api/v1/agent/fees", { params: { query: { limit: 10 } } })
    expect(fees.response.status).toBe(200)
    expect(fees.data?.success).toBe(true)
    expect(Array.isArray(fees.data?.tokens)).toBe(true)
  })

  it("reads the market-data tape and opens the signal stream", async () => {
    const data = dataClient({ baseUrl: started.dataUrl, apiKey: started.credentials.agentKey })
    const tape = await data.GET("/v1/signals", { params: { query: { limit: 5 } } })
    expect(tape.response.status).toBe(200)
    expect(tape.data !== undefined && "signals" in tape.data && Array.isArray(tape.data.signals)).toBe(true)

    const states: Array<boolean> = []
    const stream = signalStream({ baseUrl: started.dataUrl, apiKey: started.credentials.agentKey, onSignal: () => undefined, onState: (s) => states.push(s.connected) })
    try {
      await eventually(async () => (states.includes(true) ? true : undefined), { what: "the signal stream to open", deadlineMs: 30_000, intervalMs: 50 })
    } finally {
      stream.close()
    }
  })
})
