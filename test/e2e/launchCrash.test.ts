/**
 * An accepted launch survives `kill -9` (issue "headless launches", item 4): the chain runs in its
 * own process (the standalone Solana localnet), the engine is killed with SIGKILL at several points
 * of a launch (right after the 202, while a blocking request is in flight, mid-confirmation), and
 * a new engine on the same data directory carries every in-flight row to `confirmed` from what
 * the chain shows, never launching twice: one market per launch, the job's mint the one curve.
 */
import { address, createSolanaRpc, lamports } from "@solana/kit"
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import { type Engine, projectRoot, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { solidImage } from "../support/testImages.js"

interface Localnet {
  readonly rpcUrl: string
  readonly grpcUrl: string
  readonly blockEngineUrl: string
  readonly keeperSecretKey: string
}

let chain: ChildProcess
let localnet: Localnet
let engine: Engine
let dataDir: string
let key: string
let imageUrl: string

const env = () => ({
  HEADLESS_LAUNCH_ENABLED: "true",
  SOLANA_RPC_URL: localnet.rpcUrl,
  YELLOWSTONE_URL: localnet.grpcUrl,
  BLOCK_ENGINE_URL: localnet.blockEngineUrl,
  KEEPER_SECRET_KEY: localnet.keeperSecretKey,
  SOLANA_TREASURY_ADDRESS: TREASURY_ADDRESS,
  // Each start listens on a new port; one public URL keeps the hosted image's URL the engine's own.
  CURVESTREAM_PUBLIC_URL: "http://curvestream.test"
})

const start = async (): Promise<Engine> =>
  startEngine({ env: env(), args: ["--quiet"], readyTimeoutMs: 120_000, ...(dataDir !== undefined ? { dataDir } : {}) })

const call = async (method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${engine.url}${route}`, {
    method,
    headers: { "x-api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  return { status: res.status, body: await res.json() }
}

beforeAll(async () => {
  chain = spawn(process.execPath, ["--import", "tsx", "src/chain/solana/localnet/main.ts"], {
    cwd: projectRoot,
    env: { ...process.env, LOCALNET_SLOT_MS: "100" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  localnet = await new Promise<Localnet>((resolve, reject) => {
    const lines = createInterface({ input: chain.stdout! })
    lines.once("line", (line) => resolve(JSON.parse(line) as Localnet))
    chain.once("exit", (code) => reject(new Error(`localnet exited with ${code}`)))
  })
  engine = await start()
  dataDir = engine.dataDir
  key = (JSON.parse(readFileSync(path.join(dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  const upload = await fetch(`${engine.url}/api/v1/uploads/agent-image`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "image/png" },
    body: await solidImage("png", 32, 32)
  })
  imageUrl = ((await upload.json()) as { imageUrl: string }).imageUrl
  // Against a configured cluster nothing funds the local account: airdrop to its embedded wallet.
  const wallet = (await call("POST", "/api/v1/launch/headless/dry-run", { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl })).body
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
  chain?.kill("SIGTERM")
})

/** Where the engine is killed, relative to sending the request. */
const killPoints: ReadonlyArray<{ readonly name: string; readonly async: boolean; readonly afterMs: number }> = [
  { name: "right after the 202", async: true, afterMs: 0 },
  { name: "while a blocking request is in flight", async: false, afterMs: 150 },
  { name: "mid-confirmation of an async launch", async: true, afterMs: 350 }
]

describe("kill -9 during a launch", () => {
  it.each(killPoints)("$name: the restarted engine confirms the launch once", async (point) => {
    const id = `crash-${process.pid}-${point.afterMs}-${point.async}`
    const body = { clientLaunchId: id, name: `Crash ${point.afterMs}${point.async ? "a" : "s"}`, symbol: "CRSH", imageUrl, buyAmount: "10000000", async: point.async }
    const sent = fetch(`${engine.url}/api/v1/launch/headless`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body)
    }).then(
      (r) => r.status,
      () => "reset" as const
    )
    if (point.async) expect(await sent).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, point.afterMs))
    await engine.stop("SIGKILL")
    if (!point.async) expect(await sent).toBe("reset")

    engine = await start()
    const resumed = /resuming (\d+) launches/.exec(engine.output())?.[1]
    console.info(`${point.name}: the restart resumed ${resumed ?? 0} in-flight launches`)
    // Killed at once after the 202, the attempt cannot have settled: the restart must resume it.
    if (point.afterMs === 0) expect(resumed).toBe("1")
    const job = await eventually(
      async () => {
        const j = await call("GET", `/api/v1/launch/headless/jobs/${id}`)
        // A blocking request killed before the ledger committed left nothing: the client retries with the same id.
        if (j.status === 404) {
          const retried = await call("POST", "/api/v1/launch/headless", { ...body, async: true })
          expect([200, 202, 409]).toContain(retried.status)
          return undefined
        }
        return j.body.job.status === "confirmed" || j.body.job.status === "failed" ? j.body.job : undefined
      },
      { what: `launch ${id} to settle after the restart`, deadlineMs: 60_000, intervalMs: 100, detail: () => engine.output().slice(-3000) }
    )
    expect(job.status).toBe("confirmed")
    // The curve exists once: the stored result and a repeat agree, and the feed holds one market of this name.
    const replay = await call("POST", "/api/v1/launch/headless", { ...body, async: false })
    expect(replay).toMatchObject({ status: 200 })
    expect(replay.body.mint).toBe(job.mint)
    const rpc = createSolanaRpc(localnet.rpcUrl)
    expect((await rpc.getAccountInfo(address(job.mint as string), { encoding: "base64" }).send()).value).not.toBeNull()
    const named = await eventually(
      async () => {
        const res = await fetch(`${engine.url}/api/v1/markets/feed?bucket=new&chain=solana&limit=100`)
        if (res.status !== 200) return undefined
        const rows = ((await res.json()) as { tokens: Array<{ name: string; address: string }> }).tokens.filter((t) => t.name === body.name)
        return rows.length > 0 ? rows : undefined
      },
      { what: "the market in the feed", deadlineMs: 20_000, intervalMs: 100 }
    )
    expect(named.map((r) => r.address)).toEqual([job.mint])
  })
})
