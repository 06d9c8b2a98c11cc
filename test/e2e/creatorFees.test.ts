/**
 * Creator fees through the started engine (spec document 2, 2.5 and 4.3), Solana: launch a token
 * through the API from the local account's embedded wallet, trade it (a dev trader's buys over the
 * localnet's RPC), read its fees (what the fee vault owes now), dry-run and claim them: the amount
 * claimed equals, to the unit, what the fee vault paid and what the embedded wallet received
 * (its lamport change plus the transaction fee). Then the token is below dust; an unknown mint is
 * MARKET_NOT_FOUND; a key denied the embedded wallet reads but never claims, and a test key is
 * refused.
 */
import { address, createSolanaRpc, signature as asSignature } from "@solana/kit"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { getBuyInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { buildAndSignTransaction } from "../../src/chain/solana/client/Transactions.js"
import { decodeFeeVault } from "../../src/chain/solana/program/accounts/FeeVault.js"
import { curveAddressesSync, findAssociatedTokenAddressSync } from "../../src/chain/solana/program/Pda.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { zeroAddress } from "viem"
import { buy as hoodBuy, hoodPublicClient, hoodWallet } from "../../src/chain/hood/client/HoodClient.js"
import { devAccount, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { hoodChain } from "../../src/chain/hood/localnet/Deploy.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"
import { answered } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"

let engine: Engine
let key: string
let rpc: ReturnType<typeof createSolanaRpc>

const agentApi = agentClient(() => engine.url, () => key)
/** The fee routes and the launch through the typed client, with the key `of()` answers (the local one by default). */
const agent = (of: () => string = () => key) => {
  const client = () => engineClient({ baseUrl: engine.url, apiKey: of() })
  return {
    launch: async (body: MainComponents["schemas"]["LaunchRequest"]) => answered(await client().POST("/api/v1/launch/headless", { body })),
    fees: async (limit?: number) => answered(await client().GET("/api/v1/agent/fees", { params: { query: limit !== undefined ? { limit } : {} } })),
    claim: async (mint: string, body: { dryRun?: boolean }) => answered(await client().POST("/api/v1/agent/fees/{mint}/claim", { params: { path: { mint } }, body })),
    /** A key issued by the owner's session (`POST /api/v1/agent/keys`). */
    issueKey: async (session: string, body: MainComponents["schemas"]["KeyIssueBody"]) =>
      answered(await engineClient({ baseUrl: engine.url, session }).POST("/api/v1/agent/keys", { body })).body as { key: string; embeddedWallet: string }
  }
}

beforeAll(async () => {
  engine = await startEngine({ env: { HEADLESS_LAUNCH_ENABLED: "true" }, args: ["--quiet"], readyTimeoutMs: 120_000 })
  key = localCredentials(engine.dataDir).agentKey
  const nets = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string } }
  rpc = createSolanaRpc(nets.solana.rpcUrl)
}, 150_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

const buy = async (mint: string, lamportsIn: bigint) => {
  const trader = await devSigner(7)
  const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
  const signed = await buildAndSignTransaction({
    feePayer: trader,
    lifetime: value,
    instructions: [
      getCreateAssociatedTokenInstruction({ payer: trader, ata: findAssociatedTokenAddressSync(trader.address, address(mint)).address, owner: trader.address, mint: address(mint) }),
      await getBuyInstruction({ trader, mint: address(mint), quoteMint: WSOL_MINT_ADDRESS, amountInRaw: lamportsIn, minAmountOutRaw: 0n })
    ]
  })
  await rpc.sendTransaction(signed.base64 as never, { encoding: "base64", preflightCommitment: "confirmed" }).send()
  await eventually(async () => {
    const s = (await rpc.getSignatureStatuses([asSignature(signed.signature)]).send()).value[0]
    return s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized" ? true : undefined
  }, { what: "the buy", deadlineMs: 20_000, intervalMs: 50 })
}

const owed = async (mint: string) => {
  const a = (await rpc.getAccountInfo(curveAddressesSync(address(mint)).feeVault.address, { encoding: "base64", commitment: "confirmed" }).send()).value
  return decodeFeeVault(Buffer.from(a!.data[0], "base64"))!.creatorOwedRaw
}

describe("creator fees through the engine (Solana)", () => {
  it("launch, trade, read, claim: the claimed amount equals the chain's balance changes to the unit", async () => {
    const imageUrl = await uploadImage(engine, key)
    const id = `fees-${process.pid}`
    const launched = await agent().launch({ clientLaunchId: id, name: "Fee Token", symbol: "FEE", imageUrl, async: true })
    expect(launched.status).toBe(202)
    const job = await settledJob(agentApi, () => engine, id)
    expect(job.status).toBe("confirmed")
    const mint = job.mint as string
    // Trade: 5 SOL of buys earn the creator 30 % of the 1 % curve fee.
    for (let i = 0; i < 5; i++) await buy(mint, 1_000_000_000n)
    const chainOwed = await owed(mint)
    expect(chainOwed).toBeGreaterThan(50_000n)

    const list = await agent().fees(50)
    expect(list.status).toBe(200)
    const entry = list.body.tokens.find((t: { mint: string }) => t.mint === mint)
    expect(entry).toMatchObject({ chain: "solana", symbol: "FEE", name: "Fee Token", claimable: true })
    expect(entry.claimableAmounts).toEqual([{ symbol: "SOL", mint: WSOL_MINT_ADDRESS, decimals: 9, amountRaw: chainOwed.toString() }])
    const recipient = entry.recipient as string

    const dry = await agent().claim(mint, { dryRun: true })
    expect(dry.body).toMatchObject({ success: true, dryRun: true, claimable: true, chain: "solana", recipient, claimed: [{ amountRaw: chainOwed.toString(), txHash: null }] })
    expect(await owed(mint)).toBe(chainOwed)

    const before = (await rpc.getBalance(address(recipient), { commitment: "confirmed" }).send()).value
    const claimed = await agent().claim(mint, {})
    expect(claimed.status).toBe(200)
    const paid = claimed.body.claimed[0]
    expect(paid).toMatchObject({ symbol: "SOL", mint: WSOL_MINT_ADDRESS, decimals: 9 })
    const tx = await rpc.getTransaction(asSignature(paid.txHash), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send()
    const fee = tx!.meta!.fee
    const after = (await rpc.getBalance(address(recipient), { commitment: "confirmed" }).send()).value
    expect(BigInt(paid.amountRaw)).toBe(after - before + fee)
    expect(BigInt(paid.amountRaw)).toBe(chainOwed)
    expect(await owed(mint)).toBe(0n)

    // Nothing left: below dust, refused before signing; an unknown mint is not this account's token.
    const again = await agent().claim(mint, {})
    expect([again.status, again.body.error.code, again.body.error.reason]).toEqual([409, "FEE_NOT_CLAIMABLE", "below_dust"])
    const unknown = await agent().claim("1".repeat(32), {})
    expect([unknown.status, unknown.body.error.code]).toEqual([404, "MARKET_NOT_FOUND"])

    // A key whose embedded-wallet permission is denied (the default for a new key) reads, never claims.
    await buy(mint, 1_000_000_000n)
    const { sessionToken } = localCredentials(engine.dataDir)
    const issued = await agent().issueKey(sessionToken, { label: "fees-denied" })
    expect(issued.embeddedWallet).toBe("denied")
    const denied = agent(() => issued.key)
    const seen = (await denied.fees()).body.tokens.find((t: { mint: string }) => t.mint === mint)
    expect(seen).toMatchObject({ claimable: false, reason: "embedded_wallet_not_permitted" })
    const refused = await denied.claim(mint, {})
    expect([refused.status, refused.body.error.code, refused.body.error.reason]).toEqual([409, "FEE_NOT_CLAIMABLE", "embedded_wallet_not_permitted"])

    // A test key is refused before anything is read or sent (spec 4.3: test keys refused); the vault still owes it all.
    const owedBefore = await owed(mint)
    const testKey = await agent().issueKey(sessionToken, { label: "fees-test", environment: "test" })
    const asTest = agent(() => testKey.key)
    for (const body of [{}, { dryRun: true }]) {
      const r = await asTest.claim(mint, body)
      expect([r.status, r.body.error.code], JSON.stringify(body)).toEqual([403, "TEST_ENVIRONMENT_FORBIDDEN"])
    }
    expect(await owed(mint)).toBe(owedBefore)
  }, 180_000)
})

describe("creator fees through the engine (Hood)", () => {
  it("launch, trade, read, claim: calls, outcome, and the claimed amount equal the chain's balance changes", async () => {
    const nets = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { hood: { rpcUrl: string; chainId: number } }
    const chain = hoodChain(nets.hood.chainId, nets.hood.rpcUrl)
    const pc = hoodPublicClient(chain, nets.hood.rpcUrl)
    const trader = { publicClient: pc, wallet: hoodWallet(chain, devAccount(FIRST_TRADER_INDEX + 3).account, nets.hood.rpcUrl) }
    const imageUrl = await uploadImage(engine, key)
    const launched = await agent().launch({ clientLaunchId: `hood-fees-${process.pid}`, chain: "hood", dexVersion: "v3", name: "Hood Fee", symbol: "HFEE", imageUrl })
    expect(launched.status).toBe(200)
    const token = launched.body.mint as `0x${string}`
    const curve = launched.body.pool as `0x${string}`
    for (let i = 0; i < 2; i++) await hoodBuy(trader, curve, { amountInRaw: 3n * 10n ** 18n, quoteToken: zeroAddress })

    const entry = await eventually(
      async () => ((await agent().fees(50)).body.tokens as Array<Record<string, any>>).find((t) => t.mint.toLowerCase() === token.toLowerCase()),
      { what: "the Hood token in the fee list", deadlineMs: 10_000, intervalMs: 200 }
    )
    expect(entry).toMatchObject({ chain: "hood", symbol: "HFEE", name: "Hood Fee", claimable: true })
    const owedWei = BigInt(entry.claimableAmounts.find((a: { symbol: string }) => a.symbol === "ETH").amountRaw)
    expect(owedWei).toBeGreaterThan(0n)
    const recipient = entry.recipient as `0x${string}`

    const dry = await agent().claim(token, { dryRun: true })
    if (dry.status !== 200) throw new Error(JSON.stringify(dry.body))
    expect(dry.body).toMatchObject({ dryRun: true, claimable: true, chain: "hood", outcome: "not_started", calls: [{ operation: "claim", status: "not_sent", txHash: null }] })

    const before = await pc.getBalance({ address: recipient })
    const claimed = await agent().claim(token, {})
    expect(claimed.status).toBe(200)
    expect(claimed.body).toMatchObject({ success: true, chain: "hood", outcome: "complete", calls: [{ operation: "claim", status: "confirmed" }], dust: [] })
    const paid = claimed.body.claimed[0]
    expect(paid).toMatchObject({ symbol: "ETH", decimals: 18 })
    const receipt = await pc.getTransactionReceipt({ hash: paid.txHash })
    const gasWei = receipt.gasUsed * receipt.effectiveGasPrice
    const after = await pc.getBalance({ address: recipient })
    expect(BigInt(paid.amountRaw)).toBe(after - before + gasWei)
    expect(BigInt(paid.amountRaw)).toBe(owedWei)

    const again = await agent().claim(token, {})
    expect([again.status, again.body.error.code, again.body.error.reason]).toEqual([409, "FEE_NOT_CLAIMABLE", "below_dust"])
    // Six claims this minute on the account (dry runs do not count): the seventh is 429.
    const limited = await agent().claim(token, {})
    expect([limited.status, limited.body.error.code]).toEqual([429, "RATE_LIMITED"])
  }, 180_000)
})
