/**
 * Launch visibility in the public reads (launch spec 2.1 `visibility`, 2.9), through the started
 * engine: the local account launches one Solana token of each visibility (`production`, `test`,
 * `local`, `hidden`) on the headless route, and the public reads apply the recorded visibility:
 *
 * - verify: "Unknown mint or non-production visibility: 200 with {candleLaunched: false}";
 * - the market record: served (the chain is public) but `candleLaunched: false`, no `launchpad`;
 * - the feed: the market stays listed as a plain market, `isAgent` false (docs/decisions.md,
 *   "Launch visibility in the public reads");
 * - the agent record: `launches` and `launchesViaApi` count the production launch only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AGENT_RECORD_TTL_MS } from "../../api/routes/AgentRoutes.js"
import { engineClient } from "../../clients/typescript/index.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"

let engine: Engine
let key: string
let accountId: string
const agentApi = agentClient(() => engine.url, () => key)
/** The public reads, through the typed client (no key). */
const reads = () => engineClient({ baseUrl: engine.url })
/** A typed answer as the assertions read it: its status, and its body (the success or the envelope). */
const answered = (r: { readonly response: Response; readonly data?: unknown; readonly error?: unknown }) => ({ status: r.response.status, body: (r.data ?? r.error) as any })
const agentRecord = async () => answered(await reads().GET("/api/v1/users/{idOrWallet}/agent", { params: { path: { idOrWallet: accountId } } }))
const marketRecord = async (mint: string) => answered(await reads().GET("/api/v1/markets/{chain}/{mint}", { params: { path: { chain: "solana", mint } } }))

beforeAll(async () => {
  engine = await startEngine({ env: { HEADLESS_LAUNCH_ENABLED: "true" }, args: ["--quiet"], readyTimeoutMs: 300_000 })
  const local = localCredentials(engine.dataDir)
  key = local.agentKey
  accountId = local.accountId
}, 360_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

const VISIBILITIES = ["production", "test", "local", "hidden"] as const

describe("the recorded visibility in the public reads (a real launch of each)", () => {
  it("verify, the market record, the feed and the agent record present only the production launch as this service's", async () => {
    const before = (await agentRecord()).body.agent as { launches: number; launchesViaApi: number }
    const imageUrl = await uploadImage(engine, key)
    const mints = {} as Record<(typeof VISIBILITIES)[number], string>
    for (const visibility of VISIBILITIES) {
      const id = `visibility-${visibility}-${process.pid}`
      const launched = answered(
        await engineClient({ baseUrl: engine.url, apiKey: key }).POST("/api/v1/launch/headless", {
          body: { clientLaunchId: id, name: `Vis ${visibility}`, symbol: "VIS", imageUrl, visibility, async: true }
        })
      )
      expect(launched.status, JSON.stringify(launched.body)).toBe(202)
      const job = await settledJob(agentApi, () => engine, id)
      expect(job.status, JSON.stringify(job)).toBe("confirmed")
      mints[visibility] = job.mint as string
    }
    for (const visibility of VISIBILITIES) {
      const mint = mints[visibility]
      const market = await eventually(
        async () => {
          const r = await marketRecord(mint)
          return r.status === 200 ? r.body.market : undefined
        },
        { what: `the ${visibility} market to be ingested`, deadlineMs: 60_000, intervalMs: 100 }
      )
      const verify = await eventually(
        async () => {
          const r = answered(await reads().GET("/api/v1/verify/{chain}/{mint}", { params: { path: { chain: "solana", mint } } }))
          return r.status === 200 && (visibility === "production") === (r.body.candleLaunched === true) ? r.body : undefined
        },
        { what: `verify of the ${visibility} launch`, deadlineMs: 10_000, intervalMs: 100 }
      )
      const record = (await marketRecord(mint)).body.market
      if (visibility === "production") {
        expect(verify).toMatchObject({ success: true, candleLaunched: true, chain: "solana", mint, viaAgentKey: true })
        expect(record).toMatchObject({ candleLaunched: true, mint })
        expect(record.launchpad).not.toBeNull()
      } else {
        expect(verify, visibility).toEqual({ success: true, candleLaunched: false })
        // The market itself is public (it trades on chain): served, not as this service's launch.
        expect(record, visibility).toMatchObject({ candleLaunched: false, launchpad: null, mint, lifecycle: market.lifecycle })
      }
    }

    const feed = await eventually(
      async () => {
        const r = answered(await reads().GET("/api/v1/markets/feed", { params: { query: { bucket: "new", chain: "solana", limit: 100 } } }))
        const rows = (r.body.tokens ?? []) as Array<{ address: string; isAgent: boolean }>
        return VISIBILITIES.every((v) => rows.some((t) => t.address === mints[v])) ? rows : undefined
      },
      { what: "the four markets in the new feed", deadlineMs: 30_000, intervalMs: 100 }
    )
    for (const visibility of VISIBILITIES) {
      expect(feed.find((t) => t.address === mints[visibility])!.isAgent, visibility).toBe(visibility === "production")
    }

    // The agent record is cached 30 s per user (AGENT_RECORD_TTL_MS) and `before` filled that
    // cache: wait until the record is read afresh, then count.
    const agent = await eventually(
      async () => {
        const a = (await agentRecord()).body.agent as { launches: number; launchesViaApi: number }
        return a.launches !== before.launches ? a : undefined
      },
      { what: "the agent record read after its cache expired", deadlineMs: AGENT_RECORD_TTL_MS + 15_000, intervalMs: 500 }
    )
    expect(agent.launches - before.launches).toBe(1)
    expect(agent.launchesViaApi - before.launchesViaApi).toBe(1)
  }, 240_000)
})
