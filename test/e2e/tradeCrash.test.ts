/**
 * An agent trade survives `kill -9` (issue 28, item 3): the chain runs in its own process (the
 * standalone Solana localnet), the engine is killed with SIGKILL right after an async trade's 202
 * (recorded `sending`: its send may or may not have left) and while a blocking trade waits for its
 * verdict, and a new engine on the same data directory settles each from the chain, never sending
 * it again: executed once (the wallet holds exactly the executed amounts) or, when the kill came
 * before the send, failed `NEVER_LANDED` with nothing moved; a repeat answers the stored outcome.
 */
import { address, createSolanaRpc, lamports } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findAssociatedTokenAddress } from "../../src/chain/solana/client/SplInstructions.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"
import { solanaLaunchEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { answered } from "../support/typedReads.js"
import type { MainComponents } from "../../clients/typescript/index.js"

let chain: Standalone<StandaloneSolana>
let localnet: StandaloneSolana
let engine: Engine
let dataDir: string
let key: string
let mint: string
let wallet: string

const start = async (): Promise<Engine> =>
  startEngine({ env: solanaLaunchEnv(localnet), args: ["--quiet"], readyTimeoutMs: 240_000, ...(dataDir !== undefined ? { dataDir } : {}) })

const agentApi = agentClient(() => engine.url, () => key)
/** The trade rail through the typed client, as the local key. */
const rail = {
  submit: async (body: MainComponents["schemas"]["AgentTradeRequest"]) => answered(await agentApi().POST("/api/v1/trade/agent/submit", { body })),
  trade: async (clientTradeId: string) => answered(await agentApi().GET("/api/v1/trade/agent/trades/{clientTradeId}", { params: { path: { clientTradeId } } })),
  list: async (mint: string) => answered(await agentApi().GET("/api/v1/agent/trades", { params: { query: { mint, limit: 100 } } }))
}

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  localnet = chain.info
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  const imageUrl = await uploadImage(engine, key)
  wallet = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl } })).body.launchWallet as string
  const rpc = createSolanaRpc(localnet.rpcUrl)
  await rpc.requestAirdrop(address(wallet), lamports(50_000_000_000n)).send()
  await eventually(async () => (await rpc.getBalance(address(wallet), { commitment: "confirmed" }).send()).value > 0n, { what: "the airdrop", intervalMs: 50 })
  const launched = answered(await agentApi().POST("/api/v1/launch/headless", { body: { clientLaunchId: "trade-crash-token", name: "Crash Trade", symbol: "CRT", imageUrl, async: true } }))
  expect(launched.status).toBe(202)
  const job = await settledJob(agentApi, () => engine, "trade-crash-token")
  expect(job.status).toBe("confirmed")
  mint = job.mint as string
}, 360_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  chain?.stop()
})

const tokensHeld = async (): Promise<bigint> => {
  const rpc = createSolanaRpc(localnet.rpcUrl)
  const ata = await findAssociatedTokenAddress(address(wallet), address(mint))
  const a = await rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send().catch(() => undefined)
  return a === undefined ? 0n : BigInt(a.value.amount)
}

const killPoints: ReadonlyArray<{ readonly name: string; readonly async: boolean }> = [
  { name: "right after the 202", async: true },
  { name: "while a blocking trade waits for its verdict", async: false }
]

describe("kill -9 during a trade", () => {
  it.each(killPoints)("$name: the restarted engine settles the trade once from the chain", async (point) => {
    const id = `crash-${process.pid}-${point.async ? "async" : "blocking"}`
    const body: MainComponents["schemas"]["AgentTradeRequest"] = { clientTradeId: id, chain: "solana", mint, side: "buy", amountIn: "50000000", slippageBps: 100, async: point.async }
    const held = await tokensHeld()
    const sent = rail.submit(body).then(
      (r) => r.status,
      () => "reset" as const
    )
    if (point.async) expect(await sent).toBe(202)
    else {
      const seen = await eventually(async () => {
        const r = await rail.trade(id)
        return r.status === 200 ? (r.body.status as string) : undefined
      }, { what: `trade ${id} recorded`, intervalMs: 5, deadlineMs: 30_000 })
      console.info(`${point.name}: killed with the trade ${seen}`)
    }
    await engine.stop("SIGKILL")

    engine = await start()
    const settled = await eventually(
      async () => {
        const r = await rail.trade(id)
        return r.status === 200 && r.body.status !== "sending" ? (r.body as Record<string, any>) : undefined
      },
      { what: `trade ${id} to settle after the restart`, deadlineMs: 90_000, intervalMs: 100, detail: () => engine.output().slice(-3000) }
    )
    console.info(`${point.name}: settled ${settled.status} ${settled.errorCode ?? ""}`)
    const moved = (await tokensHeld()) - held
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
  }, 420_000)
})
