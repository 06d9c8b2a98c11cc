/**
 * A Hood agent trade survives `kill -9` (issue 28, item 3): the Hood node runs in its own process
 * (the standalone localnet, a block every 250 ms), the engine follows it with HOOD_RPC_URL (and
 * HOOD_SWAP_ROUTER_ADDRESS and HOOD_TRADE_ROUTER_ADDRESS) and is killed with SIGKILL right after an async trade's 202 (recorded
 * `sending`: its send may or may not have left) and after a blocking trade's send, while it waits
 * for its block; a
 * new engine on the same data directory settles each from the chain (receipt by hash, the wallet's
 * mined nonce), never sending it again: executed once (the wallet holds exactly the executed
 * amount) or, when the kill came before the send, failed `NEVER_LANDED` with no token moved; a
 * repeat answers the stored outcome.
 */
import { type Address, createPublicClient, createWalletClient, http } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { curveTokenAbi } from "../../src/chain/hood/abi.generated.js"
import { DEV_PRIVATE_KEYS, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"
import { hoodEnv, type Standalone, type StandaloneHood, startStandaloneHood } from "../support/standaloneChains.js"
import { answered } from "../support/typedReads.js"
import type { MainComponents } from "../../clients/typescript/index.js"

let node: Standalone<StandaloneHood>
let hood: StandaloneHood
let engine: Engine
let dataDir: string
let key: string
let mint: Address
let wallet: Address

const env = () => ({ HEADLESS_LAUNCH_ENABLED: "true", ...hoodEnv(hood), CURVESTREAM_PUBLIC_URL: "http://curvestream.test" })
const start = (): Promise<Engine> => startEngine({ env: env(), args: ["--quiet"], readyTimeoutMs: 300_000, ...(dataDir !== undefined ? { dataDir } : {}) })
const agentApi = agentClient(() => engine.url, () => key)
/** The trade rail through the typed client, as the local key. */
const rail = {
  submit: async (body: MainComponents["schemas"]["AgentTradeRequest"]) => answered(await agentApi().POST("/api/v1/trade/agent/submit", { body })),
  trade: async (clientTradeId: string) => answered(await agentApi().GET("/api/v1/trade/agent/trades/{clientTradeId}", { params: { path: { clientTradeId } } })),
  list: async (mint: string) => answered(await agentApi().GET("/api/v1/agent/trades", { params: { query: { mint, limit: 100 } } }))
}

const tokensHeld = (): Promise<bigint> =>
  createPublicClient({ transport: http(hood.rpcUrl) }).readContract({ address: mint, abi: curveTokenAbi, functionName: "balanceOf", args: [wallet] })

beforeAll(async () => {
  node = await startStandaloneHood({ HOOD_LOCALNET_BLOCK_MS: "250" })
  hood = node.info
  expect(hood.addresses.swapRouter).toBeDefined()
  expect(hood.addresses.tradeRouter).toBeDefined()
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  const imageUrl = await uploadImage(engine, key)
  const dry = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", chain: "hood", dexVersion: "v3", name: "P", symbol: "P", imageUrl } }))
  expect(dry.status).toBe(200)
  wallet = dry.body.launchWallet as Address
  // A configured node funds nothing: a dev account pays the embedded EVM wallet.
  const dev = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[FIRST_TRADER_INDEX]!), transport: http(hood.rpcUrl) })
  const hash = await dev.sendTransaction({ to: wallet, value: 10n ** 20n, chain: null })
  await createPublicClient({ transport: http(hood.rpcUrl) }).waitForTransactionReceipt({ hash })
  const launched = answered(
    await agentApi().POST("/api/v1/launch/headless", { body: { clientLaunchId: "hood-trade-crash-token", chain: "hood", dexVersion: "v3", name: "Hood Crash Trade", symbol: "HCT", imageUrl, async: true } })
  )
  expect(launched.status).toBe(202)
  const job = await settledJob(agentApi, () => engine, "hood-trade-crash-token")
  expect(job.status).toBe("confirmed")
  mint = job.mint as Address
}, 600_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  node?.stop()
})

const killPoints: ReadonlyArray<{ readonly name: string; readonly async: boolean }> = [
  { name: "right after the 202", async: true },
  { name: "after the send, while a blocking trade waits for its block", async: false }
]

describe("kill -9 during a Hood trade", () => {
  it.each(killPoints)("$name: the restarted engine settles the trade once from the chain", async (point) => {
    const id = `hood-crash-${process.pid}-${point.async ? "async" : "blocking"}`
    const body: MainComponents["schemas"]["AgentTradeRequest"] = { clientTradeId: id, chain: "hood", mint, side: "buy", amountIn: "10000000000000000", slippageBps: 100, async: point.async }
    const held = await tokensHeld()
    const sent = rail.submit(body).then(
      (r) => r.status,
      () => "reset" as const
    )
    if (point.async) expect(await sent).toBe(202)
    else {
      // Recorded, then in the node's hands (its hash known to the node): the send happened.
      const seen = await eventually(
        async () => {
          const r = await rail.trade(id)
          if (r.status !== 200) return undefined
          const tx = await createPublicClient({ transport: http(hood.rpcUrl) })
            .getTransaction({ hash: r.body.signature as `0x${string}` })
            .catch(() => undefined)
          return tx === undefined ? undefined : `${r.body.status as string}, its transaction ${tx.blockNumber === null ? "pending" : "mined"}`
        },
        { what: `trade ${id} sent`, intervalMs: 5, deadlineMs: 30_000 }
      )
      console.info(`Hood, ${point.name}: killed with the trade ${seen}`)
    }
    await engine.stop("SIGKILL")

    engine = await start()
    // A trade killed before its send is settled once its nonce is released (60 s after it was recorded).
    const settled = await eventually(
      async () => {
        const r = await rail.trade(id)
        return r.status === 200 && r.body.status !== "sending" ? (r.body as Record<string, any>) : undefined
      },
      { what: `trade ${id} to settle after the restart`, deadlineMs: 150_000, intervalMs: 100, detail: () => engine.output().slice(-3000) }
    )
    console.info(`Hood, ${point.name}: settled ${settled.status} ${settled.errorCode ?? ""}`)
    const moved = (await tokensHeld()) - held
    // Sent before the kill: it can only have executed.
    if (!point.async) expect(settled.status).toBe("executed")
    if (settled.status === "executed") {
      expect(settled.amountOut).toBe(settled.expectedOut)
      expect(moved).toBe(BigInt(settled.amountOut))
      const replay = await rail.submit({ ...body, async: false })
      expect(replay).toMatchObject({ status: 200, body: { replay: true, signature: settled.signature } })
    } else {
      expect(settled).toMatchObject({ status: "failed", errorCode: "NEVER_LANDED" })
      expect(moved).toBe(0n)
      expect((await rail.submit({ ...body, async: false })).body.error.code).toBe("SWAP_FAILED")
    }
    expect((await tokensHeld()) - held).toBe(moved)
    const listed = await rail.list(mint)
    expect(listed.body.trades.filter((t: { clientTradeId: string }) => t.clientTradeId === id)).toHaveLength(1)
  }, 600_000)
})
