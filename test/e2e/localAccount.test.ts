/**
 * `LOCAL_ACCOUNT`: the local account beside a PostgreSQL server (the benches' second database,
 * development against a server). The started binary on a throwaway PostgreSQL server with
 * `LOCAL_ACCOUNT=true` provisions the account, writes its credentials and funds its embedded
 * wallet; without the variable a server start provisions none
 * (as before); with a configured chain the start is refused before anything is opened.
 */
import { address, createSolanaRpc } from "@solana/kit"
import { existsSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { engineClient } from "../../clients/typescript/index.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { findPostgresBinDir, type PostgresServer, startPostgresServer } from "../support/postgresServer.js"
import { answered } from "../support/typedReads.js"

const KEY = "cd".repeat(32)
const serverEnv = (url: string) => ({
  DATABASE_URL: url,
  WALLET_MASTER_KEY: Buffer.alloc(32, 0xcd).toString("base64"),
  WEBHOOK_SECRET_KEY: KEY,
  LAUNCH_MINT_SECRET: KEY
})

const hasServer = findPostgresBinDir() !== undefined
let postgres: PostgresServer | undefined
const engines: Array<Engine> = []

beforeAll(async () => {
  if (hasServer) postgres = await startPostgresServer()
}, 120_000)

afterAll(async () => {
  for (const e of engines) {
    await e.stop("SIGKILL")
    e.cleanup()
  }
  await postgres?.stop()
})

describe("LOCAL_ACCOUNT", () => {
  it("with a configured chain, refuses to start and names the variables", async () => {
    const error = await startEngine({ env: { LOCAL_ACCOUNT: "true", HOOD_RPC_URL: "http://127.0.0.1:9" }, args: ["--quiet"], readyTimeoutMs: 60_000 }).then(
      (e) => {
        engines.push(e)
        return undefined
      },
      (e: unknown) => String(e)
    )
    expect(error).toContain("LOCAL_ACCOUNT=true provisions a local account funded by the embedded localnets: unset SOLANA_RPC_URL, YELLOWSTONE_URL and HOOD_RPC_URL, or unset LOCAL_ACCOUNT")
  }, 90_000)

  it.skipIf(!hasServer)("on a PostgreSQL server: none by default; with true, the funded Max local account", async () => {
    const plain = await startEngine({ env: serverEnv(postgres!.url), args: ["--quiet"], readyTimeoutMs: 240_000 })
    engines.push(plain)
    expect(existsSync(path.join(plain.dataDir, "local-credentials.json"))).toBe(false)
    await plain.stop("SIGTERM")

    const engine = await startEngine({ env: { ...serverEnv(postgres!.url), LOCAL_ACCOUNT: "true" }, args: ["--quiet"], readyTimeoutMs: 240_000 })
    engines.push(engine)
    const creds = JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { accountId: string; agentKey: string }
    const agent = engineClient({ baseUrl: engine.url, apiKey: creds.agentKey })
    // The account is the local one on the server: Max, delegated embedded wallets on both chains.
    const tier = answered(await agent.GET("/api/v1/agent/tier"))
    expect(tier.status).toBe(200)
    expect(tier.body).toMatchObject({ success: true, tier: "max" })
    const wallets = answered(await agent.GET("/api/v1/agent/wallets"))
    expect(wallets.status).toBe(200)
    const embedded = wallets.body.embeddedWallets as ReadonlyArray<{ chain: string; delegation: string; address: string }>
    expect(embedded.map((w) => [w.chain, w.delegation]).sort()).toEqual([
      ["evm", "active"],
      ["solana", "active"]
    ])
    // Funded by the embedded localnet, as in embedded mode.
    const rpcUrl = (JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }).solana.rpcUrl
    const rpc = createSolanaRpc(rpcUrl)
    const solanaWallet = embedded.find((w) => w.chain === "solana")!.address
    await eventually(async () => ((await rpc.getBalance(address(solanaWallet), { commitment: "confirmed" }).send()).value > 0n ? true : undefined), { what: "the local wallet's funding", intervalMs: 100, deadlineMs: 60_000 })
  }, 600_000)
})
