/**
 * Limit orders in the default engine (issue 29): `npm start` over a standalone Solana localnet runs
 * the ingest, the market actors with the orders' triggers, the hand-off and the order executor in
 * one process. A limit sell placed over HTTP is triggered by the next trade on its market (its
 * target is below the price, so it is crossed) and executed through the trade rail as the trade
 * `order:<orderId>`: the order reads `executed` with that trade, the trade route shows it executed
 * once, and the wallet's tokens on chain moved by exactly the two trades' amounts.
 */
import { address, createSolanaRpc, lamports } from "@solana/kit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findAssociatedTokenAddress } from "../../src/chain/solana/client/SplInstructions.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"
import { solanaLaunchEnv, type Standalone, type StandaloneSolana, startStandaloneSolana } from "../support/standaloneChains.js"
import { answered } from "../support/typedReads.js"

let chain: Standalone<StandaloneSolana>
let localnet: StandaloneSolana
let engine: Engine
let key: string
let mint: string
let wallet: string

const agentApi = agentClient(
  () => engine.url,
  () => key
)

beforeAll(async () => {
  chain = await startStandaloneSolana({ LOCALNET_SLOT_MS: "100" })
  localnet = chain.info
  engine = await startEngine({ env: solanaLaunchEnv(localnet), args: ["--quiet"], readyTimeoutMs: 300_000 })
  key = localCredentials(engine.dataDir).agentKey
  const imageUrl = await uploadImage(engine, key)
  wallet = answered(await agentApi().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl } })).body.launchWallet as string
  const rpc = createSolanaRpc(localnet.rpcUrl)
  await rpc.requestAirdrop(address(wallet), lamports(50_000_000_000n)).send()
  await eventually(async () => (await rpc.getBalance(address(wallet), { commitment: "confirmed" }).send()).value > 0n, { what: "the airdrop", intervalMs: 50 })
  const launched = answered(await agentApi().POST("/api/v1/launch/headless", { body: { clientLaunchId: "orders-token", name: "Orders", symbol: "ORD", imageUrl, async: true } }))
  expect(launched.status).toBe(202)
  const job = await settledJob(agentApi, () => engine, "orders-token")
  expect(job.status).toBe("confirmed")
  mint = job.mint as string
}, 480_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
  chain?.stop()
})

const tokensHeld = async (): Promise<bigint> => {
  const rpc = createSolanaRpc(localnet.rpcUrl)
  const ata = await findAssociatedTokenAddress(address(wallet), address(mint))
  const a = await rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send().catch(() => undefined)
  return a === undefined ? 0n : BigInt(a.value.amount)
}

const buy = async (clientTradeId: string) => {
  const r = answered(await agentApi().POST("/api/v1/trade/agent/submit", { body: { clientTradeId, chain: "solana", mint, side: "buy", amountIn: "100000000", slippageBps: 100 } }))
  expect(r.status).toBe(200)
  expect(r.body.status).toBe("executed")
  return r.body as { amountOut: string }
}

describe("limit orders in the default engine", () => {
  it("a crossing trade executes a limit sell through the trade rail, once", async () => {
    const first = await buy("orders-first-buy")
    const held = await tokensHeld()
    expect(held).toBe(BigInt(first.amountOut))
    const sellRaw = held / 2n
    // A target far below the price: crossed, so the next trade on the market triggers it. The market
    // is placed once the actors have the first buy (its price); retried until then.
    const placed = await eventually(
      async () => {
        const r = answered(
          await agentApi().POST("/api/v1/agent/orders", {
            body: {
              clientOrderId: "e2e-limit-sell",
              chain: "solana",
              mint,
              side: "sell",
              type: "limit",
              amount: sellRaw.toString(),
              targetPrice: "0.000000000000000001",
              slippageBps: 500
            }
          })
        )
        return r.status === 200 ? (r.body.order as Record<string, any>) : undefined
      },
      { what: "the order to be placed", deadlineMs: 60_000, intervalMs: 200 }
    )
    expect(placed.status).toBe("open")
    const crossing = await buy("orders-crossing-buy")
    const order = await eventually(
      async () => {
        const r = answered(await agentApi().GET("/api/v1/agent/orders/{orderId}", { params: { path: { orderId: placed.orderId } } }))
        return r.status === 200 && (r.body.order.status === "executed" || r.body.order.status === "failed") ? (r.body.order as Record<string, any>) : undefined
      },
      { what: "the order to execute", deadlineMs: 90_000, intervalMs: 100, detail: () => engine.output().slice(-3000) }
    )
    expect(order).toMatchObject({ status: "executed", clientTradeId: `order:${placed.orderId}`, failureReason: null })
    const trade = answered(await agentApi().GET("/api/v1/trade/agent/trades/{clientTradeId}", { params: { path: { clientTradeId: order.clientTradeId } } }))
    expect(trade).toMatchObject({ status: 200, body: { status: "executed", side: "sell", amountIn: sellRaw.toString(), signature: order.tradeSignature, amountOut: order.amountOut } })
    // On chain: the two buys in, the order's sell out.
    expect(await tokensHeld()).toBe(held + BigInt(crossing.amountOut) - sellRaw)
    const listed = answered(await agentApi().GET("/api/v1/agent/trades", { params: { query: { mint, limit: 100 } } }))
    expect(listed.body.trades.filter((t: { clientTradeId: string }) => t.clientTradeId === order.clientTradeId)).toHaveLength(1)
  }, 240_000)
})
