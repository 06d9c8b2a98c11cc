/**
 * A transfer survives `kill -9` on both chains (issue 30): the Solana localnet and the Hood node
 * run in their own processes, one engine follows both, a Withdraw key (issued over HTTP by the
 * owner's session) sends a Solana and a Hood transfer from the embedded wallets to an approved
 * withdrawal address, one chain at a time, and the engine is killed with SIGKILL as soon as the
 * transfer is recorded (its send may or may not have left; slots of 400 ms and blocks of 250 ms
 * leave it unconfirmed then). A new engine on the same data directory settles each
 * from the chain, never sending it again: confirmed once (the destination holds exactly the amount)
 * or, when the kill came before the send, failed with nothing moved (Solana: its blockhash
 * expired; Hood: its nonce released by a zero-value transfer 60 s after it was recorded). A repeat
 * of the same request answers the stored outcome and sends nothing.
 *
 * The same with the TEE payer (a TEE wallet per chain bound to the Withdraw key, its pinned vault
 * the destination): the engine is killed once after the build (the build, its claim and its hold
 * survive: the relay signs it after the restart) and once as soon as the submit recorded the
 * transfer `sending`. The restarted engine settles it from the chain: confirmed once (the vault
 * holds exactly the amount, the TEE wallet paid exactly the amount and the fee) or failed with
 * nothing moved (Solana: its blockhash expired unsent; Hood: never, the same signed bytes are
 * broadcast again after the restart). A repeat of the submit answers the stored outcome.
 */
import { address, createSolanaRpc, getBase58Decoder, lamports } from "@solana/kit"
import { type Address, createPublicClient, createWalletClient, type Hash, http } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEV_PRIVATE_KEYS, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { SOLANA_FEE_LAMPORTS } from "../../src/services/transfers/SolanaTransfers.js"
import { LevelScopes } from "../../src/services/keys/Scopes.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { agentClient, localCredentials, uploadImage } from "../support/launchClient.js"
import {
  hoodEnv,
  solanaLaunchEnv,
  type Standalone,
  type StandaloneHood,
  type StandaloneSolana,
  startStandaloneHood,
  startStandaloneSolana
} from "../support/standaloneChains.js"
import { answered } from "../support/typedReads.js"
import { engineClient, type MainComponents } from "../../clients/typescript/index.js"

let solanaNode: Standalone<StandaloneSolana>
let hoodNode: Standalone<StandaloneHood>
let engine: Engine
let dataDir: string
let withdrawKey: string
let session: string
const solanaOut = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))
const hoodOut = privateKeyToAccount(generatePrivateKey()).address

const start = (): Promise<Engine> =>
  startEngine({
    env: { ...solanaLaunchEnv(solanaNode.info), ...hoodEnv(hoodNode.info) },
    args: ["--quiet"],
    readyTimeoutMs: 300_000,
    ...(dataDir !== undefined ? { dataDir } : {})
  })
/** The Withdraw key's calls through the typed client. */
const withdrawApi = agentClient(
  () => engine.url,
  () => withdrawKey
)
const transfers = {
  build: async (body: MainComponents["schemas"]["TransferBuildBody"]) => answered(await withdrawApi().POST("/api/v1/agent/transfer/build", { body })),
  submit: async (body: MainComponents["schemas"]["TransferSubmitBody"]) => answered(await withdrawApi().POST("/api/v1/agent/transfer/submit", { body })),
  sign: async (id: string, body: { claimId: string; transaction: string }) => answered(await withdrawApi().POST("/api/v1/agent/wallets/{id}/sign", { params: { path: { id } }, body }))
}
/** The owner's session through the typed client. */
const owner = () => engineClient({ baseUrl: engine.url, session })
const solanaRpc = () => createSolanaRpc(solanaNode.info.rpcUrl)
const hoodClient = () => createPublicClient({ transport: http(hoodNode.info.rpcUrl) })
const held = async (chain: "solana" | "hood"): Promise<bigint> =>
  chain === "solana" ? (await solanaRpc().getBalance(address(solanaOut), { commitment: "confirmed" }).send()).value : hoodClient().getBalance({ address: hoodOut })

beforeAll(async () => {
  ;[solanaNode, hoodNode] = await Promise.all([startStandaloneSolana({ LOCALNET_SLOT_MS: "400" }), startStandaloneHood({ HOOD_LOCALNET_BLOCK_MS: "250" })])
  engine = await start()
  dataDir = engine.dataDir
  const creds = localCredentials(dataDir)
  session = creds.sessionToken
  // The embedded wallets: what a launch's dry run names as its paying wallet on each chain.
  const launchKey = creds.agentKey
  const probe = agentClient(
    () => engine.url,
    () => launchKey
  )
  const imageUrl = await uploadImage(engine, launchKey)
  const solanaWallet = answered(await probe().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe", name: "P", symbol: "P", imageUrl } })).body.launchWallet as string
  const hoodWallet = answered(await probe().POST("/api/v1/launch/headless/dry-run", { body: { clientLaunchId: "probe-h", chain: "hood", dexVersion: "v3", name: "P", symbol: "P", imageUrl } })).body
    .launchWallet as Address
  await solanaRpc().requestAirdrop(address(solanaWallet), lamports(5_000_000_000n)).send()
  const dev = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[FIRST_TRADER_INDEX]!), transport: http(hoodNode.info.rpcUrl) })
  await hoodClient().waitForTransactionReceipt({ hash: await dev.sendTransaction({ to: hoodWallet, value: 10n ** 19n, chain: null }) })
  await eventually(async () => (await solanaRpc().getBalance(address(solanaWallet), { commitment: "confirmed" }).send()).value > 0n, { what: "the airdrop", intervalMs: 50 })
  // The owner issues a Withdraw key and approves one withdrawal address per chain.
  const issued = answered(
    await owner().POST("/api/v1/agent/keys", {
      body: { scopes: LevelScopes.readwritetransfer as NonNullable<MainComponents["schemas"]["KeyIssueBody"]["scopes"]>, embeddedWallet: "allowed", label: "withdraw" }
    })
  )
  expect(issued.status).toBe(200)
  withdrawKey = issued.body.key as string
  expect(answered(await owner().POST("/api/v1/agent/withdrawal-addresses", { body: { chain: "solana", address: solanaOut } })).status).toBe(200)
  expect(answered(await owner().POST("/api/v1/agent/withdrawal-addresses", { body: { chain: "evm", address: hoodOut } })).status).toBe(200)
}, 600_000)

afterAll(async () => {
  await engine?.stop("SIGKILL")
  engine?.cleanup()
  solanaNode?.stop()
  hoodNode?.stop()
})

const transferRow = async (id: string) => {
  const r = answered(await withdrawApi().GET("/api/v1/agent/transactions", { params: { query: { kind: "transfer", limit: 100 } } }))
  return r.status === 200 ? (r.body.transactions as Array<{ id: string; status: string; signature: string; chain: string }>).filter((t) => t.id === id) : []
}

const cases: ReadonlyArray<{ readonly chain: "solana" | "hood"; readonly body: MainComponents["schemas"]["TransferBuildBody"] }> = [
  { chain: "solana" as const, body: { clientTransferId: `xfer-crash-sol-${process.pid}`, chain: "solana", asset: "sol", amountRaw: "123456789", to: solanaOut } },
  { chain: "hood" as const, body: { clientTransferId: `xfer-crash-hood-${process.pid}`, chain: "hood", asset: "eth", amountRaw: "987654321987654321", to: hoodOut } }
]

describe("kill -9 during a transfer, on both chains", () => {
  it.each(cases)("$chain: killed once recorded, the restarted engine settles the transfer once from the chain; the destination holds exactly what the record says", async (c) => {
    expect(await held(c.chain)).toBe(0n)
    const sent = transfers.build(c.body).then(
      (r) => r.status,
      () => "reset" as const
    )
    // Recorded (`sending` is saved before its one send): the kill comes now.
    const seen = await eventually(
      async () => {
        const r = await transferRow(c.body.clientTransferId)
        return r.length === 1 ? r[0]!.status : undefined
      },
      { what: `the ${c.chain} transfer recorded`, intervalMs: 2, deadlineMs: 60_000, detail: () => engine.output().slice(-3000) }
    )
    await engine.stop("SIGKILL")
    console.info(`${c.chain}: killed with the transfer ${seen}`)
    await sent

    engine = await start()
    const settled = await eventually(
      async () => {
        const r = await transferRow(c.body.clientTransferId)
        return r.length === 1 && r[0]!.status !== "sending" ? r[0]! : undefined
      },
      { what: `the ${c.chain} transfer to settle after the restart`, deadlineMs: 180_000, intervalMs: 200, detail: () => engine.output().slice(-3000) }
    )
    console.info(`${c.chain}: settled ${settled.status}`)
    const replay = await transfers.build(c.body)
    if (settled.status === "confirmed") {
      expect(await held(c.chain)).toBe(BigInt(c.body.amountRaw))
      expect(replay).toMatchObject({ status: 200, body: { status: "confirmed", replay: true, signature: settled.signature } })
    } else {
      expect(settled.status).toBe("failed")
      expect(await held(c.chain)).toBe(0n)
      expect(replay).toMatchObject({ status: 409, body: { error: { code: "IDEMPOTENCY_CONFLICT", reason: "failed" } } })
    }
    // Never sent again: one record, and the balance stays what it settled at.
    expect(await transferRow(c.body.clientTransferId)).toHaveLength(1)
    expect(await held(c.chain)).toBe(settled.status === "confirmed" ? BigInt(c.body.amountRaw) : 0n)
  }, 600_000)
})

describe("kill -9 during a TEE transfer (build, relay sign, submit), on both chains", () => {
  const tees: Partial<Record<"solana" | "hood", { id: string; address: string; vault: string }>> = {}
  const balanceOf = async (chain: "solana" | "hood", a: string): Promise<bigint> =>
    chain === "solana" ? (await solanaRpc().getBalance(address(a), { commitment: "confirmed" }).send()).value : hoodClient().getBalance({ address: a as Address })
  const restart = async () => {
    await engine.stop("SIGKILL")
    engine = await start()
  }

  beforeAll(async () => {
    const keys = answered(await owner().GET("/api/v1/agent/keys")).body as { keys: Array<{ keyPrefix: string; label?: string | null; status: string }> }
    const keyPrefix = keys.keys.find((k) => k.label === "withdraw" && k.status === "active")!.keyPrefix
    const solanaVault = getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)))
    const hoodVault = privateKeyToAccount(generatePrivateKey()).address
    for (const [chain, walletChain, vault] of [
      ["solana", "solana", solanaVault],
      ["hood", "evm", hoodVault]
    ] as const) {
      const created = answered(await owner().POST("/api/v1/agent/tee-wallets", { body: { chain: walletChain, keyPrefix, label: `tee ${chain}`, vaultDestination: vault } }))
      expect(created.status).toBe(200)
      const w = created.body.wallet ?? created.body
      tees[chain] = { id: w.id as string, address: w.address as string, vault }
    }
    await solanaRpc().requestAirdrop(address(tees.solana!.address), lamports(2_000_000_000n)).send()
    const dev = createWalletClient({ account: privateKeyToAccount(DEV_PRIVATE_KEYS[FIRST_TRADER_INDEX]!), transport: http(hoodNode.info.rpcUrl) })
    await hoodClient().waitForTransactionReceipt({ hash: await dev.sendTransaction({ to: tees.hood!.address as Address, value: 10n ** 18n, chain: null }) })
    await eventually(async () => (await balanceOf("solana", tees.solana!.address)) > 0n, { what: "the TEE wallet's airdrop", intervalMs: 50 })
  }, 300_000)

  const teeCases = [
    { chain: "solana" as const, id: `tee-crash-sol-${process.pid}`, asset: "sol", amountRaw: "23456789" },
    { chain: "hood" as const, id: `tee-crash-hood-${process.pid}`, asset: "eth", amountRaw: "87654321987654321" }
  ]

  it.each(teeCases)("$chain: killed after the build and during the submit, the transfer moves once; the vault and the TEE wallet hold exactly what the record says", async (c) => {
    const tee = tees[c.chain]!
    const before = { tee: await balanceOf(c.chain, tee.address), vault: await balanceOf(c.chain, tee.vault) }
    expect(before.vault).toBe(0n)
    const body: MainComponents["schemas"]["TransferBuildBody"] = { clientTransferId: c.id, chain: c.chain, asset: c.asset, amountRaw: c.amountRaw, to: tee.vault, payer: "tee", linkedWalletId: tee.id }
    const built = await transfers.build(body)
    expect(built).toMatchObject({ status: 200, body: { status: "built", payer: "tee", destinationKind: "vault" } })
    // Killed with the build recorded: the build, its claim and its hold survive the restart.
    await restart()
    const again = await transfers.build(body)
    expect(again).toMatchObject({ status: 200, body: { status: "built", transaction: built.body.transaction, replay: true } })
    const signed = await transfers.sign(tee.id, { claimId: built.body.signClaim.claimId, transaction: built.body.transaction })
    expect(signed.status).toBe(200)
    const submitBody: MainComponents["schemas"]["TransferSubmitBody"] = { clientTransferId: c.id, signedTransaction: signed.body.signedTransaction }
    const sent = transfers.submit(submitBody).then(
      (r) => r.status,
      () => "reset" as const
    )
    // Recorded `sending` by the submit (saved before its one send): the kill comes now.
    const seen = await eventually(
      async () => {
        const r = await transferRow(c.id)
        return r.length === 1 ? r[0]!.status : undefined
      },
      { what: `the ${c.chain} TEE transfer recorded sending`, intervalMs: 2, deadlineMs: 60_000, detail: () => engine.output().slice(-3000) }
    )
    await engine.stop("SIGKILL")
    console.info(`${c.chain} tee: killed with the transfer ${seen}`)
    await sent
    engine = await start()
    const settled = await eventually(
      async () => {
        const r = await transferRow(c.id)
        return r.length === 1 && r[0]!.status !== "sending" ? r[0]! : undefined
      },
      { what: `the ${c.chain} TEE transfer to settle after the restart`, deadlineMs: 240_000, intervalMs: 200, detail: () => engine.output().slice(-3000) }
    )
    console.info(`${c.chain} tee: settled ${settled.status}`)
    const replay = await transfers.submit(submitBody)
    const paid = before.tee - (await balanceOf(c.chain, tee.address))
    if (settled.status === "confirmed") {
      expect(await balanceOf(c.chain, tee.vault)).toBe(BigInt(c.amountRaw))
      const fee =
        c.chain === "solana"
          ? SOLANA_FEE_LAMPORTS
          : await hoodClient()
              .getTransactionReceipt({ hash: settled.signature as Hash })
              .then((r) => r.gasUsed * r.effectiveGasPrice)
      expect(paid).toBe(BigInt(c.amountRaw) + fee)
      expect(replay).toMatchObject({ status: 200, body: { status: "confirmed", replay: true, signature: settled.signature } })
    } else {
      expect(settled.status).toBe("failed")
      expect(await balanceOf(c.chain, tee.vault)).toBe(0n)
      expect(paid).toBe(0n)
      expect(replay).toMatchObject({ status: 409, body: { error: { code: "IDEMPOTENCY_CONFLICT", reason: "failed" } } })
    }
    expect(await transferRow(c.id)).toHaveLength(1)
    expect(await balanceOf(c.chain, tee.vault)).toBe(settled.status === "confirmed" ? BigInt(c.amountRaw) : 0n)
  }, 900_000)
})
