/**
 * An atomic bundle survives `kill -9` (issue 12's faults): the Solana localnet runs as its own
 * process with its block engine's fault switch on, so the engine can lose a bundle's
 * acknowledgement (the submit answers 502 `timeout`: the outcome is unknown). The engine is then
 * killed with SIGKILL between that send and the booking, and a new engine on the same data
 * directory settles the bundle from the chain: booked once (`launch.confirmed` once, one
 * `trade.executed` per buy), the repeat submit answers the stored outcome and nothing is resent.
 * Then kills at seeded random points of a submit: whatever the point, the chain holds the launch
 * at most once and the engine's records agree with it.
 */
import { address, createSolanaRpc, lamports } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, uploadImage } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"
import { solanaLaunchEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"

const SOL = 1_000_000_000n
let chain: Standalone<StandaloneSolana>
let localnet: StandaloneSolana
let engine: Engine
let dataDir: string
let key: string
let imageUrl: string
let webhookId: string

const start = async (): Promise<Engine> => startEngine({ env: solanaLaunchEnv(localnet), args: ["--quiet"], readyTimeoutMs: 120_000, ...(dataDir !== undefined ? { dataDir } : {}) })

const agentApi = agentClient(
  () => engine.url,
  () => key
)
/** The atomic launch routes and the job read through the typed client, as the local key. */
const atomic = {
  build: async (body: MainComponents["schemas"]["AtomicLaunchBuild"]) => answered(await agentApi().POST("/api/v1/launch/atomic/build", { body })),
  submit: async (bundleId: string) => answered(await agentApi().POST("/api/v1/launch/atomic/submit", { body: { bundleId, signedTxsBase64: [] } })),
  bundle: async (bundleId: string) => answered(await agentApi().GET("/api/v1/launch/atomic/bundles/{bundleId}", { params: { path: { bundleId } } })),
  job: async (clientLaunchId: string) => answered(await agentApi().GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } }))
}

/** The owner's typed client (the local account's session). */
const owner = () => engineClient({ baseUrl: engine.url, session: localCredentials(dataDir).sessionToken })

/** The localnet block engine's fault switch (its own JSON-RPC, not the engine's API: a plain fetch). */
const setFaults = async (hideOutcomes: boolean) => {
  const res = await fetch(localnet.blockEngineUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "localnet_setBundleFaults", params: [{ hideOutcomes }] })
  })
  expect(((await res.json()) as { result?: unknown }).result).toEqual({ hideOutcomes })
}

/** How many of each webhook event were recorded for the account (deliveries fail here, with no network, but are recorded once each). */
const events = async (): Promise<Readonly<Record<string, number>>> => {
  const { data } = await owner().GET("/api/v1/agent/webhooks/{id}/deliveries", { params: { path: { id: webhookId } } })
  const out: Record<string, number> = {}
  for (const d of data!.deliveries as Array<{ event: string }>) out[d.event] = (out[d.event] ?? 0) + 1
  return out
}
/** The events recorded since `before`. */
const since = async (before: Readonly<Record<string, number>>) => {
  const now = await events()
  return { confirmed: (now["launch.confirmed"] ?? 0) - (before["launch.confirmed"] ?? 0), trades: (now["trade.executed"] ?? 0) - (before["trade.executed"] ?? 0) }
}

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100", LOCALNET_BUNDLE_FAULTS: "true" })
  localnet = chain.info
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  imageUrl = await uploadImage(engine, key)
  const wallet = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl } })).body.launchWallet as string
  const rpc = createSolanaRpc(localnet.rpcUrl)
  await rpc.requestAirdrop(address(wallet), lamports(50n * SOL)).send()
  await eventually(async () => ((await rpc.getBalance(address(wallet), { commitment: "confirmed" }).send()).value > 0n ? true : undefined), { what: "the airdrop", intervalMs: 50 })
  const hook = answered(await owner().POST("/api/v1/agent/webhooks", { body: { url: "https://93.184.216.34/hook", events: ["launch.confirmed", "launch.failed", "trade.executed"] } }))
  expect(hook.status).toBe(201)
  const created = hook.body as { webhook?: { id: string }; id?: string }
  webhookId = created.webhook?.id ?? created.id!
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  chain?.stop()
})

let seq = 0
const buildBody = (): MainComponents["schemas"]["AtomicLaunchBuild"] & { clientLaunchId: string } => {
  const n = ++seq
  return {
    clientLaunchId: `atomic-crash-${process.pid}-${n}`,
    name: `Crash ${n}`,
    symbol: `CR${n}`,
    imageUrl,
    payer: { type: "main" },
    firstBuys: [
      { payer: { type: "main" }, amountRaw: (SOL / 2n).toString() },
      { payer: { type: "main" }, amountRaw: (SOL / 3n).toString() }
    ]
  }
}

const restart = async () => {
  await engine.stop("SIGKILL")
  engine = await start()
}


describe("atomic bundles across kill -9", () => {
  it("an unknown outcome (lost acknowledgement), the engine killed before booking: booked once from the chain after the restart", async () => {
    const before = await events()
    const body = buildBody()
    const build = await atomic.build(body)
    expect(build.status, JSON.stringify(build.body)).toBe(200)
    await setFaults(true)
    const submitted = await atomic.submit(build.body.bundleId)
    expect([submitted.status, submitted.body]).toEqual([502, { status: "timeout", bundleId: build.body.bundleId, retryable: false }])
    await restart()
    await setFaults(false)

    const booked = await eventually(
      async () => {
        const r = await atomic.bundle(build.body.bundleId)
        return r.body.bundle?.operatorState === "booked" ? r.body.bundle : undefined
      },
      { what: "the bundle booked after the restart", deadlineMs: 30_000, intervalMs: 200 }
    )
    expect(booked).toMatchObject({ attemptState: "landed", missingPhases: [], chainOutcome: { landed: true, revertedLegs: [] } })
    // Landing proven by reading the chain: each buy booked at what its own transaction delivered, which is its ladder fill.
    const again = await atomic.submit(build.body.bundleId)
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ status: "landed", booking: { state: "booked", missing: [] } })
    expect((await atomic.job(body.clientLaunchId)).body.job).toMatchObject({ status: "confirmed", mint: build.body.mint })
    // A second restart books nothing twice.
    await restart()
    expect(await since(before)).toEqual({ confirmed: 1, trades: 2 })
  }, 180_000)

  it("killed at seeded random points of a submit: the chain holds the launch at most once and the records agree with it", async () => {
    const seed = Number(process.env.ATOMIC_CRASH_SEED ?? Date.now() % 100_000)
    console.log(`atomic crash seed ${seed} (replay: ATOMIC_CRASH_SEED=${seed})`)
    let state = seed
    const next = () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31), state / 2 ** 31)
    const rpc = createSolanaRpc(localnet.rpcUrl)
    for (let round = 0; round < 3; round++) {
      const before = await events()
      const body = buildBody()
      const build = await atomic.build(body)
      expect(build.status, JSON.stringify(build.body)).toBe(200)
      const delayMs = Math.floor(next() * 80)
      const inFlight = atomic.submit(build.body.bundleId).catch(() => undefined)
      await new Promise((r) => setTimeout(r, delayMs))
      await restart()
      await inFlight
      // Settled: whatever the kill interrupted is decided from what was stored and what the chain shows.
      const final = await eventually(
        async () => {
          const r = await atomic.bundle(build.body.bundleId)
          const s = r.body.bundle?.operatorState
          if (s === null && r.body.bundle.attemptState === "built") {
            // Killed before it was consumed (or mid-verification): still a live build; submit it now.
            await atomic.submit(build.body.bundleId)
            return undefined
          }
          return s === "booked" || s === "build_expired" || s === "reverted" ? r.body.bundle : undefined
        },
        { what: `round ${round} (kill after ${delayMs} ms) settled`, deadlineMs: 60_000, intervalMs: 300 }
      )
      const onChain = (await rpc.getAccountInfo(address(build.body.mint), { commitment: "confirmed" }).send()).value !== null
      const job = (await atomic.job(body.clientLaunchId)).body.job
      const recorded = await since(before)
      console.log(`round ${round}: killed after ${delayMs} ms, settled ${final.operatorState}`)
      if (final.operatorState === "booked") {
        expect(onChain).toBe(true)
        expect(job.status).toBe("confirmed")
        expect(recorded).toEqual({ confirmed: 1, trades: 2 })
      } else {
        expect(onChain, `round ${round}: ${final.operatorState} but the mint exists`).toBe(false)
        expect(job.status).not.toBe("confirmed")
        expect(recorded).toEqual({ confirmed: 0, trades: 0 })
      }
    }
  }, 300_000)
})
