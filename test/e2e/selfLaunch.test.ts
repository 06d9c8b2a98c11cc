/**
 * Self-signed launches through the started engine (embedded mode, both localnets, real HTTP), as
 * the local account's agent key (Max): a wallet imported over the HPKE import routes, the RFC
 * 9180 sealing done here as a client does it; the build; the sign relay over HTTP with the
 * imported wallet's P-256 authorization; the broadcast to the localnet's own RPC; the confirm; the
 * market in `new` and the job read. On Solana also a live repeat build (the same transaction).
 */
import {
  createKeyPairFromPrivateKeyBytes,
  createSolanaRpc,
  getAddressFromPublicKey,
  lamports,
  address as solanaAddress
} from "@solana/kit"
import { readFileSync } from "node:fs"
import { webcrypto } from "node:crypto"
import * as path from "node:path"
import { createPublicClient, createWalletClient, defineChain, http, type Hex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEV_PRIVATE_KEYS } from "../../src/chain/hood/localnet/DevAccounts.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, importWallet, relaySign, uploadImage } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"

let engine: Engine
let key: string
let imageUrl: string
let localnet: { solana: { rpcUrl: string }; hood: { rpcUrl: string; chainId: number } }

const agentApi = agentClient(() => engine.url, () => key)

type SelfLaunchRequest = MainComponents["schemas"]["SelfLaunchRequest"]
/** The self-signed launch routes, the job read and the relay through the typed client, as the local key. */
const self = {
  dryRun: async (body: SelfLaunchRequest) => answered(await agentApi().POST("/api/v1/launch/self/dry-run", { body })),
  build: async (body: SelfLaunchRequest) => answered(await agentApi().POST("/api/v1/launch/self/build", { body })),
  confirm: async (body: MainComponents["schemas"]["SelfLaunchConfirm"]) => answered(await agentApi().POST("/api/v1/launch/self/confirm", { body })),
  job: async (clientLaunchId: string) => answered(await agentApi().GET("/api/v1/launch/headless/jobs/{clientLaunchId}", { params: { path: { clientLaunchId } } })),
  /** The relay signing a TEE wallet's claimed build (no authorization signature: the bound key signs). */
  sign: async (id: string, body: { claimId: string; transaction: string }) => answered(await agentApi().POST("/api/v1/agent/wallets/{id}/sign", { params: { path: { id } }, body }))
}

const wallets = {
  import: (chain: "solana" | "evm", address: string, secretText: string) => importWallet(agentApi, chain, address, secretText),
  sign: (wallet: Awaited<ReturnType<typeof importWallet>>, claimId: string, transaction: string, bytes: Uint8Array) => relaySign(agentApi, wallet, claimId, transaction, bytes)
}

const newFeed = async (chain: "solana" | "hood"): Promise<ReadonlyArray<Record<string, any>>> => {
  const { data } = await engineClient({ baseUrl: engine.url }).GET("/api/v1/markets/feed", { params: { query: { bucket: "new", chain, limit: 100 } } })
  return (data?.tokens ?? []) as ReadonlyArray<Record<string, any>>
}

beforeAll(async () => {
  engine = await startEngine({ env: { HEADLESS_LAUNCH_ENABLED: "true" }, args: ["--quiet"], readyTimeoutMs: 120_000 })
  key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  localnet = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8"))
  imageUrl = await uploadImage(engine, key, 64)
}, 150_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

describe("a self-signed Solana launch through the engine", () => {
  it("imports a wallet over HPKE, builds, signs through the relay, broadcasts, confirms; the market reaches the new feed", async () => {
    const seed = webcrypto.getRandomValues(new Uint8Array(32))
    const pair = await createKeyPairFromPrivateKeyBytes(seed)
    const address = await getAddressFromPublicKey(pair.publicKey)
    const wallet = await wallets.import("solana", address, await exportSecretText("solana", seed))
    const rpc = createSolanaRpc(localnet.solana.rpcUrl)
    await rpc.requestAirdrop(solanaAddress(address), lamports(5_000_000_000n)).send()
    await eventually(async () => ((await rpc.getBalance(solanaAddress(address), { commitment: "confirmed" }).send()).value > 0n ? true : undefined), {
      what: "the airdrop",
      intervalMs: 50
    })

    const body: SelfLaunchRequest = { clientLaunchId: `self-sol-${process.pid}`, name: "Self Solana", symbol: "SSOL", imageUrl, linkedWalletId: wallet.walletId, buyAmount: "50000000" }
    const dry = await self.dryRun(body)
    expect(dry.status).toBe(200)
    expect(dry.body).toMatchObject({ success: true, dryRun: true, launchWallet: address, launchWalletId: wallet.walletId, size: { fits: true } })

    const build = await self.build(body)
    expect(build.status).toBe(200)
    expect(build.body).toMatchObject({ success: true, chain: "solana", clientLaunchId: body.clientLaunchId, signClaim: { walletId: wallet.walletId } })
    // Live: a repeat answers the same transaction.
    expect((await self.build(body)).body).toEqual(build.body)
    // Before it lands, the job is submitted with the build's mint.
    const pending = await self.job(body.clientLaunchId)
    expect(pending.body.job).toMatchObject({ status: "submitted", chain: "solana", mint: build.body.mint })

    const bytes = new Uint8Array(Buffer.from(build.body.transaction, "base64"))
    const signed = await wallets.sign(wallet, build.body.signClaim.claimId, build.body.transaction, bytes)
    await rpc.sendTransaction(signed.signedTransaction as never, { encoding: "base64" }).send()
    const confirmed = await eventually(
      async () => {
        const r = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: signed.signature })
        return r.status === 200 ? r : r.body?.error?.retryable === true ? undefined : r
      },
      { what: "the confirm", intervalMs: 100, deadlineMs: 30_000 }
    )
    expect(confirmed.status).toBe(200)
    expect(confirmed.body).toMatchObject({ success: true, chain: "solana", mint: build.body.mint, pool: build.body.pool, signature: signed.signature })
    const row = await eventually(async () => (await newFeed("solana")).find((t) => t.address === build.body.mint), { what: "the market in new", deadlineMs: 20_000, intervalMs: 50 })
    expect(row).toMatchObject({ name: body.name, isAgent: true })
    expect((await self.job(body.clientLaunchId)).body.job).toMatchObject({ status: "confirmed", signature: signed.signature })
  })
})

describe("a self-signed Hood launch through the engine", () => {
  it("imports an EVM wallet, builds createCurve and the fee leg, signs both through the relay, broadcasts, confirms; the market reaches the new feed", async () => {
    const privateKey = generatePrivateKey()
    const owner = privateKeyToAccount(privateKey)
    const wallet = await wallets.import("evm", owner.address, await exportSecretText("evm", Buffer.from(privateKey.slice(2), "hex")))
    const chain = defineChain({ id: localnet.hood.chainId, name: "hood-local", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [localnet.hood.rpcUrl] } } })
    const pc = createPublicClient({ chain, transport: http(localnet.hood.rpcUrl) })
    const funder = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[1]!), chain, transport: http(localnet.hood.rpcUrl) })
    await pc.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: owner.address, value: 10n ** 18n }), pollingInterval: 50 })

    const body: SelfLaunchRequest = { clientLaunchId: `self-hood-${process.pid}`, chain: "hood", dexVersion: "v3", name: "Self Hood", symbol: "SHOOD", imageUrl, linkedWalletId: wallet.walletId, buyAmount: "10000000000000000" }
    const build = await self.build(body)
    expect(build.status).toBe(200)
    expect(build.body).toMatchObject({ success: true, chain: "hood", fee: { feeRaw: expect.any(String) }, feeTransfer: { quoteAsset: "eth" } })
    const send = async (leg: { claimId: string; unsignedTransaction: string }) => {
      const signed = await wallets.sign(wallet, leg.claimId, leg.unsignedTransaction, Buffer.from(leg.unsignedTransaction.slice(2), "hex"))
      const hash = await pc.sendRawTransaction({ serializedTransaction: signed.signedTransaction as Hex })
      await pc.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 30_000 })
      return hash
    }
    const createHash = await send(build.body.transaction)
    // Without the fee leg: FEE_LEG_MISSING, nothing recorded.
    const unpaid = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: createHash })
    expect([unpaid.status, unpaid.body.error.code]).toEqual([402, "FEE_LEG_MISSING"])
    const feeHash = await send(build.body.feeTransfer)
    const confirmed = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: createHash, feeTxHash: feeHash })
    expect(confirmed.status).toBe(200)
    expect(confirmed.body).toMatchObject({ success: true, chain: "hood", pool: build.body.pool, mint: build.body.mint, signature: createHash })
    const row = await eventually(async () => (await newFeed("hood")).find((t) => String(t.address).toLowerCase() === String(build.body.mint).toLowerCase()), {
      what: "the Hood market in new",
      deadlineMs: 30_000,
      intervalMs: 100
    })
    expect(row).toMatchObject({ name: body.name, isAgent: true })
  })
})

describe("self-signed launches from TEE wallets through the engine", () => {
  /** The owner (session) creates a TEE wallet bound to the local agent key, with allowLaunch on. */
  const teeWallet = async (chain: "solana" | "evm") => {
    const session = JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")).sessionToken as string
    const owner = engineClient({ baseUrl: engine.url, session })
    const keys = answered(await owner.GET("/api/v1/agent/keys"))
    const keyPrefix = (keys.body.keys as Array<{ keyPrefix: string; revokedAt: unknown }>).find((k) => key.includes(k.keyPrefix) && k.revokedAt == null)!.keyPrefix
    const created = answered(await owner.POST("/api/v1/agent/tee-wallets", { body: { chain, keyPrefix, allowLaunch: true } }))
    expect(created.status).toBe(200)
    return (created.body.wallet ?? created.body) as { id: string; address: string }
  }

  it("Solana: the TEE wallet pays, the relay signs for the bound key, confirm records it", async () => {
    const tee = await teeWallet("solana")
    const rpc = createSolanaRpc(localnet.solana.rpcUrl)
    await rpc.requestAirdrop(solanaAddress(tee.address), lamports(5_000_000_000n)).send()
    await eventually(async () => ((await rpc.getBalance(solanaAddress(tee.address), { commitment: "confirmed" }).send()).value > 0n ? true : undefined), { what: "the airdrop", intervalMs: 50 })
    const body: SelfLaunchRequest = { clientLaunchId: `self-tee-sol-${process.pid}`, name: "Tee Solana", symbol: "TSOL", imageUrl, linkedWalletId: tee.id }
    // TEE launch buys are off: a dev buy is refused before anything is recorded.
    const withBuy = await self.build({ ...body, buyAmount: "1000" })
    expect([withBuy.status, withBuy.body.error.code, withBuy.body.error.field]).toEqual([400, "VALIDATION_FAILED", "buyAmount"])
    const build = await self.build(body)
    expect(build.status).toBe(200)
    const signed = await self.sign(tee.id, { claimId: build.body.signClaim.claimId, transaction: build.body.transaction })
    expect(signed.status).toBe(200)
    await rpc.sendTransaction(signed.body.signedTransaction as never, { encoding: "base64" }).send()
    const confirmed = await eventually(
      async () => {
        const r = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: signed.body.signature })
        return r.status === 200 ? r : r.body?.error?.retryable === true ? undefined : r
      },
      { what: "the TEE confirm", intervalMs: 100, deadlineMs: 30_000 }
    )
    expect(confirmed).toMatchObject({ status: 200, body: { mint: build.body.mint, signature: signed.body.signature } })
  })

  it("Hood: the sequenced operation, its leg signed through the relay and handed back, confirms the launch; the job carries the operation", async () => {
    const tee = await teeWallet("evm")
    const chain = defineChain({ id: localnet.hood.chainId, name: "hood-local", nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [localnet.hood.rpcUrl] } } })
    const pc = createPublicClient({ chain, transport: http(localnet.hood.rpcUrl) })
    const funder = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[2]!), chain, transport: http(localnet.hood.rpcUrl) })
    await pc.waitForTransactionReceipt({ hash: await funder.sendTransaction({ to: tee.address as Hex, value: 10n ** 18n }), pollingInterval: 50 })
    const body: SelfLaunchRequest = { clientLaunchId: `self-tee-hood-${process.pid}`, chain: "hood", dexVersion: "v3", name: "Tee Hood", symbol: "THOOD", imageUrl, linkedWalletId: tee.id }
    const build = await self.build(body)
    expect(build.status).toBe(200)
    const op = build.body.operation
    expect(op).toMatchObject({ state: "awaiting_signature", nextLeg: 0 })
    const leg = op.legs[0]
    const signed = await self.sign(tee.id, { claimId: leg.claimId, transaction: leg.unsignedTransaction })
    expect(signed.status).toBe(200)
    const confirmed = await self.confirm({ clientLaunchId: body.clientLaunchId, operationId: op.operationId, signedTransaction: signed.body.signedTransaction })
    expect(confirmed).toMatchObject({ status: 200, body: { success: true, chain: "hood", pool: build.body.pool } })
    const job = await self.job(body.clientLaunchId)
    expect(job.body.job).toMatchObject({ status: "confirmed", operation: { operationId: op.operationId, state: "confirmed", nextLeg: null } })
  })
})
