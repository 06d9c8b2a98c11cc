/**
 * Self-signed launches survive `kill -9`: both chains run in their own processes (the standalone
 * localnets), the engine follows them and is killed with SIGKILL between a build and its confirm
 * (Solana), and between a Hood `createCurve` and its fee leg. A new engine on the same data
 * directory confirms each from what the chain shows: the launch recorded once, one curve, a repeat
 * build answering the stored result, nothing charged twice.
 */
import { createKeyPairFromPrivateKeyBytes, createSolanaRpc, getAddressFromPublicKey, lamports, address as solanaAddress } from "@solana/kit"
import { webcrypto } from "node:crypto"
import { type Address, createPublicClient, createWalletClient, type Hex, http } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEV_PRIVATE_KEYS, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, importWallet, localCredentials, marketsNamed, relaySign, uploadImage } from "../support/launchClient.js"
import { hoodEnv, type Standalone, type StandaloneHood, type StandaloneSolana, solanaLaunchEnv, startStandaloneHood, startStandaloneSolana } from "../support/standaloneChains.js"
import { answered } from "../support/typedReads.js"
import type { MainComponents } from "../../clients/typescript/index.js"

let solanaNode: Standalone<StandaloneSolana>
let hoodNode: Standalone<StandaloneHood>
let engine: Engine
let dataDir: string
let key: string
let imageUrl: string

const start = (): Promise<Engine> =>
  startEngine({
    env: { ...solanaLaunchEnv(solanaNode.info), ...hoodEnv(hoodNode.info) },
    args: ["--quiet"],
    readyTimeoutMs: 120_000,
    ...(dataDir !== undefined ? { dataDir } : {})
  })

const agentApi = agentClient(
  () => engine.url,
  () => key
)
type SelfLaunchRequest = MainComponents["schemas"]["SelfLaunchRequest"]
/** The self-signed launch's build and confirm through the typed client, as the local key. */
const self = {
  build: async (body: SelfLaunchRequest) => answered(await agentApi().POST("/api/v1/launch/self/build", { body })),
  confirm: async (body: MainComponents["schemas"]["SelfLaunchConfirm"]) => answered(await agentApi().POST("/api/v1/launch/self/confirm", { body }))
}

const restart = async () => {
  await engine.stop("SIGKILL")
  engine = await start()
}

beforeAll(async () => {
  ;[solanaNode, hoodNode] = await Promise.all([startStandaloneSolana(), startStandaloneHood({ HOOD_LOCALNET_BLOCK_MS: "250" })])
  engine = await start()
  dataDir = engine.dataDir
  key = localCredentials(dataDir).agentKey
  imageUrl = await uploadImage(engine, key)
}, 240_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  solanaNode?.stop()
  hoodNode?.stop()
})

describe("kill -9 during a self-signed launch", () => {
  it("Solana: killed after the relay signed, the agent broadcasts meanwhile; the restarted engine confirms it once", async () => {
    const seed = webcrypto.getRandomValues(new Uint8Array(32))
    const address = await getAddressFromPublicKey((await createKeyPairFromPrivateKeyBytes(seed)).publicKey)
    const wallet = await importWallet(agentApi, "solana", address, await exportSecretText("solana", seed))
    const rpc = createSolanaRpc(solanaNode.info.rpcUrl)
    await rpc.requestAirdrop(solanaAddress(address), lamports(5_000_000_000n)).send()
    await eventually(async () => ((await rpc.getBalance(solanaAddress(address), { commitment: "confirmed" }).send()).value > 0n ? true : undefined), { what: "the airdrop", intervalMs: 50 })
    const body: SelfLaunchRequest = { clientLaunchId: `crash-self-sol-${process.pid}`, name: "Crash Self Sol", symbol: "CSS", imageUrl, linkedWalletId: wallet.walletId, buyAmount: "20000000" }
    const build = await self.build(body)
    expect(build.status).toBe(200)
    const signed = await relaySign(agentApi, wallet, build.body.signClaim.claimId, build.body.transaction, new Uint8Array(Buffer.from(build.body.transaction, "base64")))
    await restart()
    await rpc.sendTransaction(signed.signedTransaction as never, { encoding: "base64" }).send()
    const confirmed = await eventually(
      async () => {
        const r = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: signed.signature })
        return r.status === 200 ? r : r.body?.error?.retryable === true ? undefined : r
      },
      { what: "the confirm after the restart", intervalMs: 100, deadlineMs: 30_000 }
    )
    expect(confirmed).toMatchObject({ status: 200, body: { mint: build.body.mint, signature: signed.signature } })
    // A repeat build answers the stored launch; the market exists once.
    expect(await self.build(body)).toMatchObject({ status: 200, body: { mint: build.body.mint, signature: signed.signature } })
    expect((await marketsNamed(engine, "solana", body.name)).map((r) => r.address)).toEqual([build.body.mint])
  })

  it("Hood: killed between createCurve and the fee leg; after the restart the fee leg is paid once and the launch confirms, one curve", async () => {
    const privateKey = generatePrivateKey()
    const owner = privateKeyToAccount(privateKey)
    const wallet = await importWallet(agentApi, "evm", owner.address, await exportSecretText("evm", Buffer.from(privateKey.slice(2), "hex")))
    const pc = createPublicClient({ transport: http(hoodNode.info.rpcUrl) })
    const dev = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[FIRST_TRADER_INDEX]!), transport: http(hoodNode.info.rpcUrl) })
    await pc.waitForTransactionReceipt({ hash: await dev.sendTransaction({ to: owner.address as Address, value: 10n ** 18n, chain: null }) })
    const body: SelfLaunchRequest = { clientLaunchId: `crash-self-hood-${process.pid}`, chain: "hood", dexVersion: "v3", name: "Crash Self Hood", symbol: "CSH", imageUrl, linkedWalletId: wallet.walletId, buyAmount: "10000000000000000" }
    const build = await self.build(body)
    expect(build.status).toBe(200)
    const send = async (leg: { claimId: string; unsignedTransaction: string }) => {
      const signed = await relaySign(agentApi, wallet, leg.claimId, leg.unsignedTransaction, Buffer.from(leg.unsignedTransaction.slice(2), "hex"))
      const hash = await pc.sendRawTransaction({ serializedTransaction: signed.signedTransaction as Hex })
      await pc.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 30_000 })
      return hash
    }
    const createHash = await send(build.body.transaction)
    await restart()
    // 3.4: the curve exists: never build again (409 prior_attempt_on_chain); pay only the missing fee, then confirm.
    const rebuilt = await self.build(body)
    expect([rebuilt.status, rebuilt.body.error.code, rebuilt.body.error.reason]).toEqual([409, "IDEMPOTENCY_CONFLICT", "prior_attempt_on_chain"])
    const treasuryBefore = await pc.getBalance({ address: build.body.fee.treasury as Address })
    const feeHash = await send(build.body.feeTransfer)
    const confirmed = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: createHash, feeTxHash: feeHash })
    expect(confirmed).toMatchObject({ status: 200, body: { pool: build.body.pool, signature: createHash } })
    expect(await pc.getBalance({ address: build.body.fee.treasury as Address })).toBe(treasuryBefore + BigInt(build.body.fee.feeRaw))
    const again = await self.confirm({ clientLaunchId: body.clientLaunchId, signature: createHash, feeTxHash: feeHash })
    expect(again.body).toEqual(confirmed.body)
    expect((await marketsNamed(engine, "hood", body.name)).map((r) => r.address.toLowerCase())).toEqual([String(build.body.mint).toLowerCase()])
  })
})
