/**
 * A Hood launch survives `kill -9`: the Hood node runs in its own process (the standalone
 * localnet), the engine follows it with HOOD_RPC_URL and is killed with SIGKILL right after an
 * async launch's 202 and mid-run; a new engine on the same data directory resumes the in-flight
 * row through `HoodHeadlessLaunch.recover` (a curve at the predicted address is this attempt's; a
 * known transaction is waited for; otherwise createCurve is sent again with the same salt) and
 * confirms it: one curve, the job's, in the feed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { createTestClient, http, type Address } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, projectRoot, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { solidImage } from "../support/testImages.js"

interface HoodNode {
  readonly rpcUrl: string
  readonly chainId: number
  readonly addresses: { readonly factory: string; readonly feeSplitter: string; readonly uniswapV3Factory: string; readonly weth9: string }
  readonly keeperPrivateKey: string
}

let node: ChildProcess
let hood: HoodNode
let engine: Engine
let dataDir: string
let key: string
let imageUrl: string

const env = () => ({
  HEADLESS_LAUNCH_ENABLED: "true",
  HOOD_RPC_URL: hood.rpcUrl,
  HOOD_CHAIN_ID: String(hood.chainId),
  HOOD_FACTORY_ADDRESS: hood.addresses.factory,
  HOOD_FEE_SPLITTER_ADDRESS: hood.addresses.feeSplitter,
  HOOD_UNISWAP_V3_FACTORY_ADDRESS: hood.addresses.uniswapV3Factory,
  HOOD_WETH9_ADDRESS: hood.addresses.weth9,
  HOOD_KEEPER_PRIVATE_KEY: hood.keeperPrivateKey,
  CURVESTREAM_PUBLIC_URL: "http://curvestream.test"
})

const start = (): Promise<Engine> => startEngine({ env: env(), args: ["--quiet"], readyTimeoutMs: 120_000, ...(dataDir !== undefined ? { dataDir } : {}) })

const call = async (method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> => {
  const res = await fetch(`${engine.url}${route}`, {
    method,
    headers: { "x-api-key": key, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  return { status: res.status, body: await res.json() }
}

beforeAll(async () => {
  node = spawn(process.execPath, ["--import", "tsx", "src/chain/hood/localnet/main.ts"], {
    cwd: projectRoot,
    env: { ...process.env, HOOD_LOCALNET_BLOCK_MS: "250" },
    stdio: ["ignore", "pipe", "inherit"]
  })
  hood = await new Promise<HoodNode>((resolve, reject) => {
    const lines = createInterface({ input: node.stdout! })
    lines.once("line", (line) => resolve(JSON.parse(line) as HoodNode))
    node.once("exit", (code) => reject(new Error(`hood localnet exited with ${code}`)))
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
  // A configured node funds nothing: give the embedded EVM wallet ETH on the node.
  const dry = await call("POST", "/api/v1/launch/headless/dry-run", { clientLaunchId: "probe", chain: "hood", dexVersion: "v3", name: "P", symbol: "P", imageUrl })
  expect(dry.status).toBe(200)
  const tc = createTestClient({ mode: "hardhat", transport: http(hood.rpcUrl) })
  await tc.setBalance({ address: dry.body.launchWallet as Address, value: 10n ** 20n })
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  node?.kill("SIGTERM")
})

describe("kill -9 during a Hood launch", () => {
  it.each([0, 80])("killed %i ms after the 202: the restarted engine confirms the launch once", async (afterMs) => {
    const id = `hood-crash-${process.pid}-${afterMs}`
    const body = { clientLaunchId: id, chain: "hood", dexVersion: "v3", name: `Hood crash ${afterMs}`, symbol: "HCR", imageUrl, async: true }
    expect((await call("POST", "/api/v1/launch/headless", body)).status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, afterMs))
    await engine.stop("SIGKILL")

    engine = await start()
    const resumed = /resuming (\d+) launches/.exec(engine.output())?.[1]
    console.info(`Hood, killed ${afterMs} ms after the 202: the restart resumed ${resumed ?? 0} in-flight launches`)
    if (afterMs === 0) expect(resumed).toBe("1")
    const job = await eventually(
      async () => {
        const j = await call("GET", `/api/v1/launch/headless/jobs/${id}`)
        return j.body.job?.status === "confirmed" || j.body.job?.status === "failed" ? j.body.job : undefined
      },
      { what: `Hood launch ${id} to settle after the restart`, deadlineMs: 60_000, intervalMs: 100, detail: () => engine.output().slice(-3000) }
    )
    expect(job.status).toBe("confirmed")
    const replay = await call("POST", "/api/v1/launch/headless", { ...body, async: false })
    expect(replay).toMatchObject({ status: 200, body: { mint: job.mint, pool: job.pool } })
    const named = await eventually(
      async () => {
        const res = await fetch(`${engine.url}/api/v1/markets/feed?bucket=new&chain=hood&limit=100`)
        if (res.status !== 200) return undefined
        const rows = ((await res.json()) as { tokens: Array<{ name: string; address: string }> }).tokens.filter((t) => t.name === body.name)
        return rows.length > 0 ? rows : undefined
      },
      { what: "the Hood market in the feed", deadlineMs: 30_000, intervalMs: 100 }
    )
    expect(named.map((r) => r.address.toLowerCase())).toEqual([(job.mint as string).toLowerCase()])
  })
})
