/**
 * A TEE payer's trade through the engine (issue 28): the engine as `src/main.ts` wires it (the
 * wallet service and its sign relay beside the trade rail) over a standalone Solana localnet. The
 * owner creates a TEE wallet bound to the agent key; the key builds a buy with `payer: tee`
 * (answered `built` with the unsigned transaction and its sign claim, nothing on chain), signs it
 * at the relay, and submits the signed bytes: executed to the quote's raw unit, once; a repeat
 * answers the stored outcome; a confirm of an id never built is JOB_NOT_FOUND.
 * Then a crash: two more builds; the caller sends one (relay-signed) straight to the chain and
 * never tells the engine, the other is never sent; the engine is killed with SIGKILL and started
 * again on its data. The restarted engine settles both from the chain: the sent one executed to
 * the quote (the wallet holds exactly that), the other failed `NEVER_LANDED` once its blockhash
 * expired; the account's transactions list only the executed one.
 */
import { address, type Base64EncodedWireTransaction, createSolanaRpc, lamports } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findAssociatedTokenAddress } from "../../src/chain/solana/client/SplInstructions.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"
import { solanaLaunchEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { answered } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"

let chain: Standalone<StandaloneSolana>
let engine: Engine
let key: string
let mint: string
let dataDir: string
let tee: { id: string; address: string }

const agentApi = agentClient(
  () => engine.url,
  () => key
)
/** The trade rail and the relay through the typed client, as the local key. */
const rail = {
  build: async (body: MainComponents["schemas"]["AgentTradeRequest"]) => answered(await agentApi().POST("/api/v1/trade/agent/build", { body })),
  submit: async (body: MainComponents["schemas"]["AgentTradeSignedSubmit"]) => answered(await agentApi().POST("/api/v1/trade/agent/submit", { body })),
  trade: async (clientTradeId: string) => answered(await agentApi().GET("/api/v1/trade/agent/trades/{clientTradeId}", { params: { path: { clientTradeId } } })),
  /** The relay signing the TEE wallet's claimed build (the bound key signs; no authorization signature). */
  sign: async (id: string, body: { claimId: string; transaction: string }) => answered(await agentApi().POST("/api/v1/agent/wallets/{id}/sign", { params: { path: { id } }, body }))
}

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  engine = await startEngine({ env: solanaLaunchEnv(chain.info), args: ["--quiet"], readyTimeoutMs: 240_000 })
  key = localCredentials(engine.dataDir).agentKey
  const imageUrl = await uploadImage(engine, key)
  const wallet = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl } })).body.launchWallet as string
  const rpc = createSolanaRpc(chain.info.rpcUrl)
  await rpc.requestAirdrop(address(wallet), lamports(20_000_000_000n)).send()
  dataDir = engine.dataDir
  await eventually(async () => (await rpc.getBalance(address(wallet), { commitment: "confirmed" }).send()).value > 0n, { what: "the airdrop", intervalMs: 50 })
  const launched = answered(await agentApi().POST("/api/v1/launch/headless", { body: { clientLaunchId: "tee-trade-token", name: "Tee Trade", symbol: "TTR", imageUrl, async: true } }))
  expect(launched.status).toBe(202)
  const job = await settledJob(agentApi, () => engine, "tee-trade-token")
  expect(job.status).toBe("confirmed")
  mint = job.mint as string
}, 300_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  chain?.stop()
})

describe("a TEE payer's trade through the engine", () => {
  it("build (built, nothing on chain) → relay sign → submit: executed once to the quote; a repeat is the stored outcome", async () => {
    const { sessionToken } = localCredentials(engine.dataDir)
    const owner = engineClient({ baseUrl: engine.url, session: sessionToken })
    const keys = answered(await owner.GET("/api/v1/agent/keys")).body.keys as Array<{ keyPrefix: string; status: string }>
    const keyPrefix = keys.find((k) => k.status === "active")!.keyPrefix
    const created = answered(await owner.POST("/api/v1/agent/tee-wallets", { body: { chain: "solana", keyPrefix, label: "trade tee" } }))
    expect(created.status).toBe(200)
    tee = created.body.wallet ?? created.body
    const rpc = createSolanaRpc(chain.info.rpcUrl)
    await rpc.requestAirdrop(address(tee.address), lamports(2_000_000_000n)).send()
    await eventually(async () => (await rpc.getBalance(address(tee.address), { commitment: "confirmed" }).send()).value > 0n, { what: "the TEE wallet's airdrop", intervalMs: 50 })

    const body: MainComponents["schemas"]["AgentTradeRequest"] = { clientTradeId: "tee-e2e-1", chain: "solana", mint, side: "buy", amountIn: "100000000", slippageBps: 100, payer: "tee", linkedWalletId: tee.id }
    const built = await rail.build(body)
    expect(built.status).toBe(200)
    expect(built.body).toMatchObject({ status: "built", payer: "tee", wallet: tee.address, walletId: tee.id, signClaim: { claimId: expect.any(String) } })
    const ata = await findAssociatedTokenAddress(address(tee.address), address(mint))
    const held = async () => {
      const a = await rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send().catch(() => undefined)
      return a === undefined ? 0n : BigInt(a.value.amount)
    }
    expect(await held()).toBe(0n)
    const signed = await rail.sign(tee.id, { claimId: built.body.signClaim.claimId, transaction: built.body.transaction })
    expect(signed.status).toBe(200)
    const submitted = await rail.submit({ clientTradeId: "tee-e2e-1", signedTransaction: signed.body.signedTransaction })
    expect(submitted.status).toBe(200)
    expect(submitted.body).toMatchObject({ status: "executed", payer: "tee", replay: false })
    expect(submitted.body.amountOut).toBe(submitted.body.expectedOut)
    expect(await held()).toBe(BigInt(submitted.body.amountOut))
    const again = await rail.submit({ clientTradeId: "tee-e2e-1", signedTransaction: signed.body.signedTransaction })
    expect(again.body).toMatchObject({ status: "executed", signature: submitted.body.signature, replay: true })
    expect(await held()).toBe(BigInt(submitted.body.amountOut))
    const unknown = answered(await agentApi().POST("/api/v1/trade/agent/confirm", { body: { clientTradeId: "never-built", signature: submitted.body.signature } }))
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "JOB_NOT_FOUND"])
  }, 180_000)

  it("kill -9 with a build the caller sent itself and one never sent: the restarted engine settles both from the chain", async () => {
    const rpc = createSolanaRpc(chain.info.rpcUrl)
    const body = (clientTradeId: string): MainComponents["schemas"]["AgentTradeRequest"] => ({ clientTradeId, chain: "solana", mint, side: "buy", amountIn: "50000000", slippageBps: 100, payer: "tee", linkedWalletId: tee.id })
    const self = await rail.build(body("tee-e2e-self"))
    expect(self.body).toMatchObject({ status: "built" })
    const ata = await findAssociatedTokenAddress(address(tee.address), address(mint))
    const held = async () => {
      const a = await rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send().catch(() => undefined)
      return a === undefined ? 0n : BigInt(a.value.amount)
    }
    const before = await held()
    const signed = await rail.sign(tee.id, { claimId: self.body.signClaim.claimId, transaction: self.body.transaction })
    expect(signed.status).toBe(200)
    // Sent straight to the chain; the engine is never told.
    const signature = await rpc.sendTransaction(signed.body.signedTransaction as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" }).send()
    const unsent = await rail.build(body("tee-e2e-unsent"))
    expect(unsent.body).toMatchObject({ status: "built" })
    await engine.stop("SIGKILL")

    engine = await startEngine({ env: solanaLaunchEnv(chain.info), args: ["--quiet"], readyTimeoutMs: 240_000, dataDir })
    const settled = async (id: string) =>
      eventually(
        async () => {
          const r = await rail.trade(id)
          return r.status === 200 && r.body.status !== "built" && r.body.status !== "sending" ? (r.body as Record<string, any>) : undefined
        },
        { what: `trade ${id} settled from the chain after the restart`, deadlineMs: 150_000, intervalMs: 250, detail: () => engine.output().slice(-3000) }
      )
    const executed = await settled("tee-e2e-self")
    expect(executed).toMatchObject({ status: "executed", signature, payer: "tee" })
    expect(executed.amountOut).toBe(executed.expectedOut)
    expect((await held()) - before).toBe(BigInt(executed.amountOut))
    expect(await settled("tee-e2e-unsent")).toMatchObject({ status: "failed", errorCode: "NEVER_LANDED" })
    const listed = answered(await agentApi().GET("/api/v1/agent/transactions", { params: { query: { kind: "trade", limit: 100 } } }))
    const ids = (listed.body.transactions as Array<{ id: string; status: string }>).map((t) => `${t.id}:${t.status}`)
    expect(ids).toContain("tee-e2e-self:executed")
    expect(ids.some((t) => t.startsWith("tee-e2e-unsent:"))).toBe(false)
  }, 420_000)
})
