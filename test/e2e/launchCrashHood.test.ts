/**
 * A Hood launch survives `kill -9`: the Hood node runs in its own process (the standalone
 * localnet), the engine follows it with HOOD_RPC_URL and is killed with SIGKILL right after an
 * async launch's 202 and mid-run; a new engine on the same data directory resumes the in-flight
 * row through `HoodHeadlessLaunch.recover` (a curve at the predicted address is this attempt's; a
 * known transaction is waited for; otherwise createCurve is sent again with the same salt) and
 * confirms it: one curve, the job's, in the feed.
 */
import { type Address, createPublicClient, createWalletClient, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { DEV_PRIVATE_KEYS, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngine } from "../support/engine.js"
import { hoodEnv, type Standalone, type StandaloneHood, startStandaloneHood } from "../support/standaloneChains.js"
import { agentClient, localCredentials, marketsNamed, settledJob, uploadImage } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"
import type { MainComponents } from "../../clients/typescript/index.js"

let node: Standalone<StandaloneHood>
let hood: StandaloneHood
let engine: Engine
let dataDir: string
let key: string
let imageUrl: string

const env = () => ({
  HEADLESS_LAUNCH_ENABLED: "true",
  ...hoodEnv(hood),
  CURVESTREAM_PUBLIC_URL: "http://curvestream.test"
})

const start = (): Promise<Engine> => startEngine({ env: env(), args: ["--quiet"], readyTimeoutMs: 120_000, ...(dataDir !== undefined ? { dataDir } : {}) })

const agentApi = agentClient(
  () => engine.url,
  () => key
)
type LaunchRequest = MainComponents["schemas"]["LaunchRequest"]
const launch = async (body: LaunchRequest) => answered(await agentApi().POST("/api/v1/launch/headless", { body }))

beforeAll(async () => {
  node = await startStandaloneHood({ HOOD_LOCALNET_BLOCK_MS: "250" })
  hood = node.info
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  imageUrl = await uploadImage(engine, key)
  // A configured node funds nothing: give the embedded EVM wallet ETH on the node.
  const dry = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", chain: "hood", dexVersion: "v3", name: "P", symbol: "P", imageUrl } }))
  expect(dry.status).toBe(200)
  // The node refuses state edits (it journals what it mines): a dev account pays.
  const dev = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[FIRST_TRADER_INDEX]!), transport: http(hood.rpcUrl) })
  const hash = await dev.sendTransaction({ to: dry.body.launchWallet as Address, value: 10n ** 20n, chain: null })
  await createPublicClient({ transport: http(hood.rpcUrl) }).waitForTransactionReceipt({ hash })
}, 180_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  node?.stop()
})

describe("kill -9 during a Hood launch", () => {
  it.each([0, 80])("killed %i ms after the 202: the restarted engine confirms the launch once", async (afterMs) => {
    const id = `hood-crash-${process.pid}-${afterMs}`
    const body: LaunchRequest = { clientLaunchId: id, chain: "hood", dexVersion: "v3", name: `Hood crash ${afterMs}`, symbol: "HCR", imageUrl, async: true }
    expect((await launch(body)).status).toBe(202)
    await new Promise((resolve) => setTimeout(resolve, afterMs))
    await engine.stop("SIGKILL")

    engine = await start()
    const resumed = /resuming (\d+) launches/.exec(engine.output())?.[1]
    console.info(`Hood, killed ${afterMs} ms after the 202: the restart resumed ${resumed ?? 0} in-flight launches`)
    if (afterMs === 0) expect(resumed).toBe("1")
    const job = await settledJob(agentApi, () => engine, id)
    expect(job.status).toBe("confirmed")
    const replay = await launch({ ...body, async: false })
    expect(replay).toMatchObject({ status: 200, body: { mint: job.mint, pool: job.pool } })
    const named = await marketsNamed(engine, "hood", body.name)
    expect(named.map((r) => r.address.toLowerCase())).toEqual([(job.mint as string).toLowerCase()])
  })
})
