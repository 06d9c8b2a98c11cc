/**
 * An accepted launch survives `kill -9` (issue "headless launches", item 4): the chain runs in its
 * own process (the standalone Solana localnet), the engine is killed with SIGKILL at several points
 * of a launch (right after the 202, while a blocking request is in flight, mid-confirmation), and
 * a new engine on the same data directory carries every in-flight row to `confirmed` from what
 * the chain shows, never launching twice: one market per launch, the job's mint the one curve.
 */
import { address, createSolanaRpc, lamports } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { solanaLaunchEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { agentClient, localCredentials, marketsNamed, settledJob, uploadImage } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"
import type { MainComponents } from "../../clients/typescript/index.js"

let chain: Standalone<StandaloneSolana>
let localnet: StandaloneSolana
let engine: Engine
let dataDir: string
let key: string
let imageUrl: string

const start = async (): Promise<Engine> =>
  startEngine({ env: solanaLaunchEnv(localnet), args: ["--quiet"], readyTimeoutMs: 120_000, ...(dataDir !== undefined ? { dataDir } : {}) })

const agentApi = agentClient(
  () => engine.url,
  () => key
)
const launch = async (body: MainComponents["schemas"]["LaunchRequest"]) => answered(await agentApi().POST("/api/v1/launch/headless", { body }))
const jobRead = async (clientLaunchId: string) => answered(await agentApi().GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } }))

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  localnet = chain.info
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  imageUrl = await uploadImage(engine, key)
  // Against a configured cluster nothing funds the local account: airdrop to its embedded wallet.
  const wallet = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl } })).body
    .launchWallet as string
  const rpc = createSolanaRpc(localnet.rpcUrl)
  await rpc.requestAirdrop(address(wallet), lamports(50_000_000_000n)).send()
  await eventually(async () => (await rpc.getBalance(address(wallet), { commitment: "confirmed" }).send()).value > 0n, {
    what: "the airdrop",
    intervalMs: 50
  })
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  chain?.stop()
})

/**
 * Where the engine is killed: at once after the 202, or once the job reads `confirming` (the
 * transaction was recorded and sent, its confirmation awaited: at least one status poll, 250 ms),
 * so the kill lands mid-flight however fast the machine is, never by a guessed delay.
 */
const killPoints: ReadonlyArray<{ readonly name: string; readonly async: boolean; readonly when: "at once" | "confirming" }> = [
  { name: "right after the 202", async: true, when: "at once" },
  { name: "while a blocking request is in flight", async: false, when: "confirming" },
  { name: "mid-confirmation of an async launch", async: true, when: "confirming" }
]

type LaunchBody = { readonly clientLaunchId: string; readonly name: string; readonly symbol: string; readonly imageUrl: string; readonly buyAmount: string; readonly async: boolean }

/** Sends the launch; what the client saw: the status and body, or `reset` when the engine died first. */
const send = (body: LaunchBody): Promise<{ readonly status: number; readonly body: string } | "reset"> =>
  agentApi()
    .POST("/api/v1/launch/headless", { body })
    .then(
      (r) => ({ status: r.response.status, body: JSON.stringify(r.data ?? r.error) }),
      () => "reset" as const
    )

/** Kills the engine at the point, restarts it, and answers how many in-flight launches the restart resumed (0 when none). */
const killAndRestart = async (point: (typeof killPoints)[number], id: string, body: LaunchBody): Promise<number> => {
  const sent = send(body)
  // The body rides along so an unexpected answer says what it was.
  if (point.async) expect(await sent).toMatchObject({ status: 202 })
  if (point.when === "confirming") {
    await eventually(async () => ((await jobRead(id)).body?.job?.status === "confirming" ? true : undefined), {
      what: `launch ${id} to be sent and confirming`,
      intervalMs: 5,
      deadlineMs: 30_000
    })
  }
  await engine.stop("SIGKILL")
  if (!point.async) expect(await sent).toBe("reset")
  engine = await start()
  return Number(/resuming (\d+) launches/.exec(engine.output())?.[1] ?? 0)
}

/**
 * A kill sent once the job reads `confirming` can still land after the confirmation committed (a
 * loaded machine delays the signal past the next status poll): that run proves nothing about
 * resuming, so the scenario runs again with a new id, at most this many times.
 */
const KILL_TRIES = 3

describe("kill -9 during a launch", () => {
  it.each(killPoints)("$name: the restarted engine confirms the launch once", async (point) => {
    let id = ""
    let body: LaunchBody | undefined
    let resumed = 0
    for (let t = 1; t <= KILL_TRIES && resumed === 0; t++) {
      id = `crash-${process.pid}-${point.when.replace(" ", "-")}-${point.async}-${t}`
      body = { clientLaunchId: id, name: `Crash ${point.when === "at once" ? 0 : 1}${point.async ? "a" : "s"}${t}`, symbol: "CRSH", imageUrl, buyAmount: "10000000", async: point.async }
      resumed = await killAndRestart(point, id, body)
      console.info(`${point.name} (try ${t}): the restart resumed ${resumed} in-flight launches`)
      // Killed right after the 202 the attempt cannot have settled: no second try for that point.
      if (point.when === "at once") break
    }
    // Killed after the 202 or while confirming, the attempt had not settled: the restart must resume it.
    expect(resumed).toBe(1)
    if (body === undefined) throw new Error("no try ran")
    // A blocking request killed before the ledger committed left nothing: the client retries with the same id.
    if ((await jobRead(id)).status === 404) {
      expect([200, 202, 409]).toContain((await launch({ ...body, async: true })).status)
    }
    const job = await settledJob(agentApi, () => engine, id)
    expect(job.status).toBe("confirmed")
    // The curve exists once: the stored result and a repeat agree, and the feed holds one market of this name.
    const replay = await launch({ ...body, async: false })
    expect(replay).toMatchObject({ status: 200 })
    expect(replay.body.mint).toBe(job.mint)
    const rpc = createSolanaRpc(localnet.rpcUrl)
    expect((await rpc.getAccountInfo(address(job.mint as string), { encoding: "base64" }).send()).value).not.toBeNull()
    const named = await marketsNamed(engine, "solana", body.name)
    expect(named.map((r) => r.address)).toEqual([job.mint])
    // Each try restarts the engine (up to two minutes each on a loaded machine).
  }, 420_000)
})
