/**
 * The Hood self-signed launch service against real components: the Hood localnet (Hardhat/EDR in
 * process, JSON-RPC over HTTP), PGlite with every migration, the local wallet provider and the
 * wallet service (an EVM wallet imported over HPKE as a client does it; the relay signs with the
 * P-256 authorization), the launch ledger and the image service.
 *
 * Pinned: build answers the `createCurve` transaction and the `feeTransfer` leg, both unsigned,
 * with the predicted curve as `pool` and no token row; the relay signs each once; the agent
 * broadcasts; confirm verifies the launcher and the curve and records the token (3.2). Then 3.4:
 * a missing or non-verifying fee leg is `FEE_LEG_MISSING` and records nothing, after which paying
 * the missing fee with the build's leg confirms; `devBuySignature` is bound only when it went to
 * the curve with exactly `buyAmount`; a repeat build gets a new curve address, or 409
 * `prior_attempt_on_chain` once the earlier curve exists; someone else's transaction is
 * `SIGNER_MISMATCH`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Either, Exit, Fiber, Layer, Scope } from "effect"
import { webcrypto } from "node:crypto"
import { createServer, type Server } from "node:http"
import { type Address, createWalletClient, encodeFunctionData, getAddress, type Hex, http, keccak256 } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentLaunches } from "../../actors/AgentLaunches.js"
import { bondingCurveAbi, curveFactoryAbi } from "../../src/chain/hood/abi.generated.js"
import { readCurve } from "../../src/chain/hood/client/HoodClient.js"
import { hoodTestClient, type HoodTestClient, publicClientOf, setEthBalance, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import * as Database from "../../src/db/Database.js"
import { normalizeAddress } from "../../src/domain/Chain.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { type Plan, resolvePlans } from "../../src/domain/Plans.js"
import { insertAccount } from "../../src/services/accounts/AccountRepository.js"
import * as ImageService from "../../src/services/images/ImageService.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import type { HoodOperation } from "../../src/services/launch/HoodOperation.js"
import * as HoodSelfLaunch from "../../src/services/launch/HoodSelfLaunch.js"
import { makeHoodSelfAttempts } from "../../src/services/launch/hoodSelf/HoodSelfAttempt.js"
import { makeHoodSelfChain } from "../../src/services/launch/hoodSelf/HoodSelfChain.js"
import type { HoodSelfContext } from "../../src/services/launch/hoodSelf/HoodSelfContext.js"
import { makeHoodSelfSpend } from "../../src/services/launch/hoodSelf/HoodSelfSpend.js"
import { NEVER_LANDS_DEPTH_BLOCKS } from "../../src/services/launch/hoodSelf/HoodSelfRules.js"
import { devBuyFeeRaw } from "../../src/services/launch/internal/LaunchSpend.js"
import * as LaunchLedger from "../../src/services/launch/LaunchLedger.js"
import type { LaunchError } from "../../src/services/launch/LaunchError.js"
import { decodeSelfLaunchRequest, type SelfLaunchBody } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { SelfCaller } from "../../src/services/launch/SolanaSelfLaunch.js"
import { sweep as sweepHolds, windowUsedUsdMicros } from "../../src/services/spend/SpendStore.js"
import { fixedPriceSource, LOCALNET_USD_PRICES_DEFAULT } from "../../src/services/prices/PriceSource.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import type { KeyInfo, Principal } from "../../src/services/wallets/Principal.js"
import * as WalletProvider from "../../src/services/wallets/WalletProvider.js"
import * as WalletService from "../../src/services/wallets/WalletService.js"
import { sealForImport } from "../support/hpkeSealer.js"
import { closeLoopback, listenLoopback } from "../support/loopbackHttp.js"
import { solidImage } from "../support/testImages.js"
import { launchFailureCodesLayer } from "../../api/LaunchCodes.js"
import { rowOf, statusOf, toApiError } from "../../api/ErrorTable.js"

const ETH = 10n ** 18n
const BASE_URL = "https://curvestream.test"
const plans = resolvePlans({}, 30)
const pro: Plan = plans.find((p) => p.id === "pro")!

let localnet: StartedHoodLocalnet
let tc: HoodTestClient
let scope: Scope.CloseableScope
let sql: SqlClient.SqlClient
let wallets: WalletService.WalletServiceShape
let images: ImageService.ImageServiceShape
let ledger: LaunchLedger.LaunchLedgerShape
let service: HoodSelfLaunch.HoodSelfLaunchShape
let registry: AgentLaunches
const keys: Array<KeyInfo> = []

const run = <A>(effect: Effect.Effect<A, LaunchError>) => Effect.runPromise(Effect.either(effect))
const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))

beforeAll(async () => {
  localnet = await startHoodLocalnet()
  tc = hoodTestClient(localnet)
  scope = await Effect.runPromise(Scope.make())
  // The real wallet service and local provider over one `Database.layerTest`; the key directory is this file's.
  const walletLayer = Layer.mergeAll(
    WalletService.layerTest({
      keys: { findByPrefix: (accountId, prefix) => Effect.succeed(keys.find((k) => k.accountId === accountId && k.keyPrefix === prefix)) }
    }),
    WalletProvider.layerTest,
    Database.layerTest
  )
  const context = await Effect.runPromise(Layer.buildWithScope(walletLayer, scope))
  sql = Context.get(context, SqlClient.SqlClient)
  wallets = Context.get(context, WalletService.WalletService)
  images = await withSql(ImageService.make({ publicBaseUrl: BASE_URL }))
  ledger = await withSql(LaunchLedger.make.pipe(Effect.provide(launchFailureCodesLayer)))
  registry = new AgentLaunches()
  service = await withSql(
    HoodSelfLaunch.make(
      {
        chain: localnet.chain,
        rpcUrl: localnet.rpcUrl,
        factory: localnet.addresses.factory,
        bondingCurveBytecode: localnet.artifacts.BondingCurve.bytecode,
        baseUrl: BASE_URL,
        exclusiveHolderPassRaw: 1n,
        teeLaunchBuysEnabled: false
      },
      { ledger, images, wallets, holdings: () => Effect.succeed(0n), agentLaunches: registry, prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT) }
    )
  )
}, 180_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await localnet?.close()
})

interface Agent {
  readonly caller: SelfCaller
  readonly walletId: string
  readonly address: Address
  readonly privateKey: Hex
  readonly authorize: (bytes: Uint8Array) => Promise<Uint8Array>
  readonly imageUrl: string
}

let n = 0
const agent = async (): Promise<Agent> => {
  const i = ++n
  const keyId = `kid-hood-self-${i}`
  const keyPrefix = `h${String(i).padStart(7, "0")}`
  const account = await withSql(insertAccount({ plan: "pro", agentEnabled: true, isAdmin: false }, Date.now()))
  const scopes = ["launch:write", "launch:read", "swap:write", "account:read"]
  await withSql(
    insertKey(
      {
        id: keyId, prefix: keyPrefix, accountId: account.id, hash: `hash-h-${i}`, environment: "production", scopes, label: null, rateLimitPerMin: 300,
        dailyLaunchCap: 0, launchChains: ["hood"], embeddedWallet: "denied", expiresAtMs: null, txLimit: null, mintedByDeviceId: null, provisionedBy: null
      },
      Date.now()
    )
  )
  keys.push({ keyId, keyPrefix, accountId: account.id, label: null, environment: "production", scopes, revokedAtMs: null, expiresAtMs: null, paused: false, walletScope: "all", spendLimits: null })
  const principal: Principal = { accountId: account.id, plan: "pro", credential: "agentKey", keyId, keyPrefix, scopes, environment: "production", embeddedWallet: "denied", devicePrefix: null }
  const privateKey = generatePrivateKey()
  const owner = privateKeyToAccount(privateKey)
  const init = await Effect.runPromise(wallets.importInit(principal, "evm", owner.address))
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.encryptionPublicKey, "base64")), await exportSecretText("evm", Buffer.from(privateKey.slice(2), "hex")))
  const signer = (await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair
  const spki = new Uint8Array(await webcrypto.subtle.exportKey("spki", signer.publicKey))
  const view = await Effect.runPromise(wallets.importSubmit(principal, { ciphertext: sealed.ciphertext, encapsulatedKey: sealed.enc, signerSpki: spki }))
  await setEthBalance(tc, owner.address, 10n * ETH)
  const hosted = await withSql(images.upload({ accountId: account.id, keyId, uploadsPerMin: 100, bytes: await solidImage("png", 64, 64) }))
  return {
    caller: { accountId: account.id, keyId, keyPrefix, keyDailyCap: 0, plan: pro, spendLimits: null, principal },
    walletId: view.id,
    address: owner.address,
    privateKey,
    authorize: async (bytes) => new Uint8Array(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.privateKey, bytes)),
    imageUrl: hosted.url
  }
}

let ids = 0
const body = (a: Agent, fields: Record<string, unknown> = {}): SelfLaunchBody => {
  const decoded = decodeSelfLaunchRequest(
    { clientLaunchId: `hood-self-${++ids}`, chain: "hood", dexVersion: "v3", name: "Hood Self", symbol: "HSELF", imageUrl: a.imageUrl, linkedWalletId: a.walletId, ...fields },
    { keyEnvironment: "production" },
    { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: `${BASE_URL}/api/v1/uploads/images/` }
  )
  if (Either.isLeft(decoded)) throw new Error(`body refused: ${decoded.left.message}`)
  return decoded.right
}

const built = async (a: Agent, b: SelfLaunchBody) => {
  const r = await run(service.build(a.caller, b))
  if (Either.isLeft(r)) throw new Error(`build refused: ${r.left.reason} ${r.left.message}`)
  if (r.right._tag !== "Built") throw new Error("replayed")
  return r.right.build
}

/** The relay signs the leg (once); the agent broadcasts it and waits for its receipt. */
const signAndSend = async (a: Agent, leg: HoodSelfLaunch.HoodUnsignedLeg) => {
  const bytes = Buffer.from(leg.unsignedTransaction.slice(2), "hex")
  const signed = await Effect.runPromise(
    wallets.signClaimed(a.caller.principal, a.walletId, { claimId: leg.claimId, transaction: bytes, authorizationSignature: await a.authorize(bytes) })
  )
  const pc = publicClientOf(localnet)
  const hash = await pc.sendRawTransaction({ serializedTransaction: signed.signedTransaction as Hex })
  await pc.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: 20_000 })
  return hash
}

const tokenRows = (mint: string) =>
  Effect.runPromise(Effect.orDie(sql<{ visibility: string; path: string }>`SELECT visibility, path FROM launched_tokens WHERE chain = 'hood' AND mint = ${mint.toLowerCase()}`))

describe("a self-signed Hood launch from an imported wallet", () => {
  it("builds createCurve and the fee leg unsigned; the relay signs, the agent sends, confirm verifies the curve and records the token", async () => {
    const a = await agent()
    const b = body(a, { buyAmount: "10000000000000000", visibility: "production" })
    const build = await built(a, b)
    expect(build.transaction.to).toBe(localnet.addresses.factory)
    expect(build.transaction.value).toBe("0")
    expect(build.fee).toEqual({ bps: 50, feeRaw: "50000000000000", treasury: expect.any(String) })
    expect(build.feeTransfer).toMatchObject({ to: build.fee!.treasury, value: "50000000000000", amountRaw: "50000000000000", quoteAsset: "eth", nonce: build.transaction.nonce + 1 })
    // 3.2: no token row at build.
    expect(await tokenRows(build.mint)).toEqual([])

    const createHash = await signAndSend(a, build.transaction)
    const feeHash = await signAndSend(a, build.feeTransfer!)
    // The agent's own dev buy: bound only when it went to the curve with exactly buyAmount.
    const pc = publicClientOf(localnet)
    const ownWallet = createWalletClient({ account: privateKeyToAccount(a.privateKey), chain: localnet.chain, transport: http(localnet.rpcUrl) })
    const curve = await readCurve(pc, getAddress(build.pool))
    expect(curve.creator).toBe(getAddress(a.address))
    const buyHash = await ownWallet.sendTransaction({
      to: getAddress(build.pool),
      value: BigInt(b.request.buyAmountRaw),
      data: encodeFunctionData({ abi: bondingCurveAbi, functionName: "buy", args: [b.request.buyAmountRaw, 0n] })
    })
    await pc.waitForTransactionReceipt({ hash: buyHash, pollingInterval: 20 })

    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash, feeTxHash: feeHash, devBuySignature: buyHash }))
    if (Either.isLeft(confirmed)) throw new Error(`confirm refused: ${confirmed.left.reason} ${confirmed.left.message}`)
    expect(confirmed.right).toMatchObject({ chain: "hood", mint: build.mint, pool: build.pool, signature: createHash, devBuy: { signature: buyHash, outcome: "landed" } })
    expect(await tokenRows(build.mint)).toEqual([{ visibility: "production", path: "self" }])
    expect(registry.has("hood", normalizeAddress("hood", build.mint))).toBe(true)
    const onChain = await pc.readContract({ address: localnet.addresses.factory, abi: curveFactoryAbi, functionName: "isCurve", args: [getAddress(build.pool)] })
    expect(onChain).toBe(true)
    // A repeat confirm replays.
    const again = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash, feeTxHash: feeHash }))
    expect(Either.isRight(again) && again.right).toEqual(confirmed.right)
  })

  it("3.4: a missing or non-verifying fee leg is FEE_LEG_MISSING and records nothing; paying the missing fee with the build's leg then confirms", async () => {
    const a = await agent()
    const b = body(a, { buyAmount: "10000000000000000" })
    const build = await built(a, b)
    const createHash = await signAndSend(a, build.transaction)
    const refusedWithout = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash }))
    expect(Either.isLeft(refusedWithout) && [refusedWithout.left.reason, refusedWithout.left.retryable]).toEqual(["fee_leg_missing", false])
    // A transfer of the wrong amount does not verify.
    const own = createWalletClient({ account: privateKeyToAccount(a.privateKey), chain: localnet.chain, transport: http(localnet.rpcUrl) })
    const pc = publicClientOf(localnet)
    const wrong = await own.sendTransaction({ to: getAddress(build.fee!.treasury), value: 1n })
    await pc.waitForTransactionReceipt({ hash: wrong, pollingInterval: 20 })
    const refusedWrong = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash, feeTxHash: wrong }))
    expect(Either.isLeft(refusedWrong) && refusedWrong.left.reason).toBe("fee_leg_missing")
    expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.state).toBe("submitted")
    expect(await tokenRows(build.mint)).toEqual([])
    // The repeat build now sees the curve: confirm it, never build again.
    const repeat = await run(service.build(a.caller, b))
    expect(Either.isLeft(repeat) && [repeat.left.reason, repeat.left.details]).toEqual(["idempotency_conflict", { reason: "prior_attempt_on_chain", mint: build.mint }])
    // Pay only the missing fee with the build's own leg (its nonce was skipped by the wrong transfer, so send it fresh as the same transfer).
    const fee = await own.sendTransaction({ to: getAddress(build.feeTransfer!.to), value: BigInt(build.feeTransfer!.value) })
    await pc.waitForTransactionReceipt({ hash: fee, pollingInterval: 20 })
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash, feeTxHash: fee, devBuySignature: wrong }))
    if (Either.isLeft(confirmed)) throw new Error(`confirm refused: ${confirmed.left.reason} ${confirmed.left.message}`)
    // A devBuySignature that is not a buy of exactly buyAmount on the curve is not recorded; the confirm succeeds.
    expect(confirmed.right.devBuy).toBeUndefined()
    expect(confirmed.right.mint).toBe(build.mint)
  })

  it("a malformed signature, feeTxHash or devBuySignature (not 0x and 32 bytes) is VALIDATION_FAILED naming it, not retryable; nothing recorded", async () => {
    const a = await agent()
    const b = body(a, { buyAmount: "10000000000000000" })
    const build = await built(a, b)
    const createHash = await signAndSend(a, build.transaction)
    const feeHash = await signAndSend(a, build.feeTransfer!)
    const solanaShaped = "z".repeat(88)
    for (const [input, field] of [
      [{ signature: solanaShaped }, "signature"],
      [{ signature: `${createHash}00` }, "signature"],
      [{ signature: createHash, feeTxHash: solanaShaped }, "feeTxHash"],
      [{ signature: createHash, feeTxHash: feeHash, devBuySignature: "0x1234" }, "devBuySignature"]
    ] as const) {
      const r = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, ...input }))
      expect(Either.isLeft(r) && [r.left.reason, r.left.field, r.left.retryable]).toEqual(["validation_failed", field, false])
    }
    expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.state).toBe("submitted")
    expect(await tokenRows(build.mint)).toEqual([])
  })

  it("a build with no dev buy has no fee leg and confirms without feeTxHash; a repeat build before broadcasting gets a NEW curve address", async () => {
    const a = await agent()
    const b = body(a)
    const first = await built(a, b)
    expect([first.fee, first.feeTransfer]).toEqual([null, null])
    const second = await built(a, b)
    expect(second.pool).not.toBe(first.pool)
    expect(second.transaction.unsignedTransaction).not.toBe(first.transaction.unsignedTransaction)
    expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.attempt).toBe(2)
    // The first build's claim still signs, but confirm records only the current attempt's curve.
    const hash = await signAndSend(a, second.transaction)
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: hash }))
    expect(Either.isRight(confirmed) && confirmed.right.pool).toBe(second.pool)
  })

  it("a fee transfer confirms one launch only; a reverted transaction that is not the build's createCurve fails nothing", async () => {
    const a = await agent()
    const first = body(a, { buyAmount: "10000000000000000" })
    const second = body(a, { buyAmount: "10000000000000000" })
    const b1 = await built(a, first)
    const b2 = await built(a, second)
    const create1 = await signAndSend(a, b1.transaction)
    const fee1 = await signAndSend(a, b1.feeTransfer!)
    const c1 = await run(service.confirm(a.caller, { clientLaunchId: first.request.clientLaunchId, signature: create1, feeTxHash: fee1 }))
    expect(Either.isRight(c1)).toBe(true)
    // The second launch's createCurve was built on later nonces; send it, then present the first launch's fee.
    const own = createWalletClient({ account: privateKeyToAccount(a.privateKey), chain: localnet.chain, transport: http(localnet.rpcUrl) })
    const pc = publicClientOf(localnet)
    // A reverted transaction from the payer (a buy on a curve that does not exist fails) is not this launch: VALIDATION_FAILED, the row stays submitted.
    const failing = await own.sendTransaction({ to: getAddress(b2.transaction.to), data: "0xdeadbeef", value: 0n, gas: 100_000n })
    await pc.waitForTransactionReceipt({ hash: failing, pollingInterval: 20 })
    const notThis = await run(service.confirm(a.caller, { clientLaunchId: second.request.clientLaunchId, signature: failing }))
    expect(Either.isLeft(notThis) && [notThis.left.reason, notThis.left.field]).toEqual(["validation_failed", "signature"])
    expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: second.request.clientLaunchId }).pipe(Effect.orDie)))?.state).toBe("submitted")
    // Its own createCurve lands (the nonces moved on: sent fresh with the build's calldata from the same wallet).
    const create2 = await own.sendTransaction({ to: getAddress(b2.transaction.to), data: b2.transaction.data as Hex, value: 0n })
    await pc.waitForTransactionReceipt({ hash: create2, pollingInterval: 20 })
    const reused = await run(service.confirm(a.caller, { clientLaunchId: second.request.clientLaunchId, signature: create2, feeTxHash: fee1 }))
    expect(Either.isLeft(reused) && reused.left.reason).toBe("fee_leg_missing")
    const fee2 = await own.sendTransaction({ to: getAddress(b2.feeTransfer!.to), value: BigInt(b2.feeTransfer!.value) })
    await pc.waitForTransactionReceipt({ hash: fee2, pollingInterval: 20 })
    const c2 = await run(service.confirm(a.caller, { clientLaunchId: second.request.clientLaunchId, signature: create2, feeTxHash: fee2 }))
    expect(Either.isRight(c2) && c2.right.pool).toBe(b2.pool)
  })

  it("JOB_NOT_FOUND (404, not retryable, no field): an unknown clientLaunchId or another account's; a build never sent is VALIDATION_FAILED (signature, retryable) until its nonce is used with no curve, then JOB_NOT_FOUND", async () => {
    const a = await agent()
    const other = await agent()
    const b = body(a)
    const build = await built(a, b)
    const never = `0x${"ab".repeat(32)}`
    const notFound = (r: Either.Either<unknown, LaunchError>) => {
      if (Either.isRight(r)) throw new Error("confirmed")
      const api = toApiError(r.left)
      return [r.left.reason, statusOf(rowOf(r.left)), api.code, api.field, api.retryable]
    }
    for (const [caller, id] of [[a.caller, "never-built"], [other.caller, b.request.clientLaunchId]] as const) {
      expect(notFound(await run(service.confirm(caller, { clientLaunchId: id, signature: never })))).toEqual(["job_not_found", 404, "JOB_NOT_FOUND", undefined, false])
    }
    // Not found while the build can still land (the payer's nonce unused): retryable VALIDATION_FAILED on signature (launch spec 3.1).
    const confirmNever = () => run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: never }))
    const early = await confirmNever()
    expect(Either.isLeft(early) && [early.left.reason, early.left.field, early.left.retryable]).toEqual(["validation_failed", "signature", true])
    // The payer's nonce taken by another transaction and no curve at that block: the build can never land.
    const pc = publicClientOf(localnet)
    const moved = await createWalletClient({ account: privateKeyToAccount(a.privateKey), chain: localnet.chain, transport: http(localnet.rpcUrl) }).sendTransaction({ to: a.address, value: 0n })
    expect((await pc.waitForTransactionReceipt({ hash: moved, pollingInterval: 20 })).status).toBe("success")
    expect(notFound(await confirmNever())).toEqual(["job_not_found", 404, "JOB_NOT_FOUND", undefined, false])
    expect(await tokenRows(build.mint)).toEqual([])
  })

  it("a createCurve sent by another wallet is SIGNER_MISMATCH; nothing is recorded", async () => {
    const a = await agent()
    const b = body(a)
    const build = await built(a, b)
    const stranger = privateKeyToAccount(generatePrivateKey())
    await setEthBalance(tc, stranger.address, ETH)
    const own = createWalletClient({ account: stranger, chain: localnet.chain, transport: http(localnet.rpcUrl) })
    const hash = await own.sendTransaction({ to: getAddress(build.transaction.to), data: build.transaction.data as Hex, value: 0n })
    await publicClientOf(localnet).waitForTransactionReceipt({ hash, pollingInterval: 20 })
    const r = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: hash }))
    expect(Either.isLeft(r) && r.left.reason).toBe("signer_mismatch")
    expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.state).toBe("submitted")
  })
})

describe("a self-signed Hood launch from a TEE wallet: the sequenced operation", () => {
  /** A TEE EVM wallet bound to `a`'s key with allowLaunch on, funded. */
  const teeWallet = async (a: Agent) => {
    const owner: Principal = { ...a.caller.principal, credential: "session", keyId: null, keyPrefix: null, scopes: [], environment: null, embeddedWallet: null }
    const view = await Effect.runPromise(wallets.createTee(owner, { chain: "evm", keyPrefix: a.caller.keyPrefix, allowLaunch: true }))
    await setEthBalance(tc, getAddress(view.address), 10n * ETH)
    return view
  }

  /** The relay signs a TEE leg (bound to the key: no authorization signature). */
  const teeSign = async (a: Agent, walletId: string, leg: { claimId: string; unsignedTransaction: string }) =>
    (await Effect.runPromise(wallets.signClaimed(a.caller.principal, walletId, { claimId: leg.claimId, transaction: Buffer.from(leg.unsignedTransaction.slice(2), "hex") })))
      .signedTransaction

  const teeService = (buys: boolean, walletService: typeof wallets = wallets) =>
    withSql(
      HoodSelfLaunch.make(
        {
          chain: localnet.chain,
          rpcUrl: localnet.rpcUrl,
          factory: localnet.addresses.factory,
          bondingCurveBytecode: localnet.artifacts.BondingCurve.bytecode,
          baseUrl: BASE_URL,
          exclusiveHolderPassRaw: 1n,
          teeLaunchBuysEnabled: buys
        },
        { ledger, images, wallets: walletService, holdings: () => Effect.succeed(0n), agentLaunches: registry, prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT) }
      )
    )

  it("one leg without a dev buy: an unsigned repeat answers the same operation, a signed one is in flight, the signed leg confirms the launch", async () => {
    const a = await agent()
    const tee = await teeWallet(a)
    const b = body(a, { linkedWalletId: tee.id })
    const build = await built(a, b)
    const op = build.operation!
    expect(op).toMatchObject({ state: "awaiting_signature", nextLeg: 0 })
    expect(op.legs.map((l) => [l.kind, l.status])).toEqual([["createCurve", "pending"]])
    expect(await built(a, b)).toEqual(build)
    const signed = await teeSign(a, tee.id, op.legs[0]!)
    const repeat = await run(service.build(a.caller, b))
    expect(Either.isLeft(repeat) && [repeat.left.reason, repeat.left.retryable, (repeat.left.details as { reason: string }).reason]).toEqual([
      "idempotency_conflict",
      true,
      "prior_attempt_in_flight"
    ])
    // operationId alone: nothing sent yet, the operation as it stands.
    const asIs = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId }))
    expect(Either.isRight(asIs) && asIs.right).toMatchObject({ operation: { nextLeg: 0, state: "awaiting_signature" } })
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: signed }))
    if (Either.isLeft(confirmed)) throw new Error(`confirm refused: ${confirmed.left.reason} ${confirmed.left.message}`)
    expect(confirmed.right).toMatchObject({ chain: "hood", mint: build.mint, pool: build.pool })
    expect(await tokenRows(build.mint)).toEqual([{ visibility: "production", path: "self" }])
  })

  it("with TEE launch buys on: createCurve, the fee, then the buy, one leg per confirm; a leg out of order is refused", async () => {
    const svc = await teeService(true)
    const a = await agent()
    const tee = await teeWallet(a)
    const b = body(a, { linkedWalletId: tee.id, buyAmount: "10000000000000000" })
    const r = await Effect.runPromise(Effect.either(svc.build(a.caller, b)))
    if (Either.isLeft(r) || r.right._tag !== "Built") throw new Error("build refused")
    const op = r.right.build.operation!
    expect(op.legs.map((l) => l.kind)).toEqual(["createCurve", "feeTransfer", "devBuy"])
    expect(op.legs.map((l) => l.nonce)).toEqual([op.legs[0]!.nonce, op.legs[0]!.nonce + 1, op.legs[0]!.nonce + 2])
    // The fee leg signed first is not the next leg: refused, nothing sent (the signed fee leg is handed back in its turn).
    const feeSigned = await teeSign(a, tee.id, op.legs[1]!)
    const early = await Effect.runPromise(Effect.either(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: feeSigned })))
    expect(Either.isLeft(early) && [early.left.reason, early.left.field]).toEqual(["validation_failed", "signedTransaction"])
    let state: any = { operation: op }
    for (const i of [0, 1]) {
      const signedLeg = i === 1 ? feeSigned : await teeSign(a, tee.id, op.legs[i]!)
      const next = await Effect.runPromise(Effect.either(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: signedLeg })))
      if (Either.isLeft(next)) throw new Error(`leg ${i} refused: ${next.left.reason} ${next.left.message}`)
      state = next.right
      expect(state.operation.nextLeg).toBe(i + 1)
      expect(state.operation.legs[i].status).toBe("mined")
    }
    const last = await Effect.runPromise(Effect.either(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[2]!) })))
    if (Either.isLeft(last)) throw new Error(`buy leg refused: ${last.left.reason} ${last.left.message}`)
    if ((last.right as any).operation !== undefined) throw new Error(JSON.stringify((last.right as any).operation.legs.map((l: any) => [l.kind, l.status, l.txHash])))
    expect(last.right).toMatchObject({ chain: "hood", mint: r.right.build.mint, devBuy: { outcome: "landed" } })
  })

  describe("the TEE dev buy through the spend gate: held against the bound key's USD window before signing (launch spec 3.1; document 2, 4.1)", () => {
    // 0.01 ETH plus the Pro plan's platform fee (Hood rounds down), at the localnet's $3,000 an ETH.
    const BUY = 10n ** 16n
    const spendRaw = BUY + devBuyFeeRaw("hood", BUY, pro.feeBps)
    const spendUsd = (spendRaw * 3000n * 10n ** 6n) / ETH
    let svc: HoodSelfLaunch.HoodSelfLaunchShape
    beforeAll(async () => {
      svc = await teeService(true)
    })

    const setTxLimit = (a: Agent, usdMicros: bigint) =>
      withSql(Effect.orDie(sql`UPDATE agent_keys SET tx_limit_usd_micros = ${usdMicros.toString()}, tx_limit_reset = 'daily' WHERE id = ${a.caller.keyId}`))
    const holds = (a: Agent) =>
      withSql(
        Effect.orDie(sql<{ id: string; state: string; rail: string; purpose: string; amount: string; usd: string }>`
          SELECT id, state, rail, purpose, amount_raw::text AS amount, usd_micros::text AS usd FROM spend_reservations WHERE key_id = ${a.caller.keyId} ORDER BY created_at`)
      )
    const usage = (a: Agent) =>
      withSql(
        Effect.orDie(sql<{ usd: string | null; trades: number | null; launches: number | null }>`
          SELECT sum(usd_micros)::text AS usd, sum(trade_count)::int AS trades, sum(launch_count)::int AS launches FROM agent_key_usage_daily WHERE key_id = ${a.caller.keyId}`)
      )
    const ledgerRows = (a: Agent) => withSql(Effect.orDie(sql<{ id: string }>`SELECT client_launch_id AS id FROM launch_ledger WHERE account_id = ${a.caller.accountId}`))
    const buildRows = (a: Agent) => withSql(Effect.orDie(sql<{ id: string }>`SELECT client_launch_id AS id FROM self_launch_builds WHERE account_id = ${a.caller.accountId}`))
    const claims = (a: Agent) => withSql(Effect.orDie(sql<{ n: number }>`SELECT count(*)::int AS n FROM sign_claims WHERE account_id = ${a.caller.accountId}`))
    const reasonOf = (r: Either.Either<unknown, LaunchError>) => (Either.isLeft(r) ? r.left.reason : "admitted")

    /** Signs and confirms every leg of the operation in order; the last confirm's answer. */
    const runOperation = async (a: Agent, walletId: string, b: SelfLaunchBody, op: NonNullable<HoodSelfLaunch.HoodSelfBuild["operation"]>) => {
      let answer: unknown
      for (const leg of op.legs) {
        const next = await run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, walletId, leg) }))
        if (Either.isLeft(next)) throw new Error(`leg ${leg.kind} refused: ${next.left.reason} ${next.left.message}`)
        answer = next.right
      }
      return answer as Record<string, unknown>
    }

    it("a txLimit below the buy plus its fee: the build is refused, KEY_LIMIT_REACHED with resetsAt, and records nothing (no ledger row, build, claim or hold)", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd - 1n)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      // Endpoint rule 4: the dry run does not check the USD spend window (the build's hold does).
      expect(reasonOf(await run(svc.dryRun(a.caller, b)))).toBe("admitted")
      const refused = await run(svc.build(a.caller, b))
      expect(Either.isLeft(refused) && [refused.left.reason, refused.left.retryable, typeof refused.left.details?.resetsAt]).toEqual(["key_limit_reached", true, "number"])
      expect([await holds(a), await ledgerRows(a), await buildRows(a), await claims(a)]).toEqual([[], [], [], [{ n: 0 }]])
      // Without a dev buy the TEE launch spends nothing from the window: built.
      expect(reasonOf(await run(svc.build(a.caller, body(a, { linkedWalletId: tee.id }))))).toBe("admitted")
      expect(await holds(a)).toEqual([])
    })

    it("exactly at the limit: admitted, the window holds buy plus fee once (a replayed build holds nothing more), another buy is refused; the landed buy books once", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const r = await run(svc.build(a.caller, b))
      if (Either.isLeft(r) || r.right._tag !== "Built") throw new Error("build refused")
      const op = r.right.build.operation!
      const held = [{ id: `launch:self:${JSON.stringify([a.caller.accountId, b.request.clientLaunchId, 1])}`, state: "held", rail: "tee", purpose: "dev_buy", amount: spendRaw.toString(), usd: spendUsd.toString() }]
      expect(await holds(a)).toEqual(held)
      // The same clientLaunchId again, unsigned: the same operation, and still one hold.
      const again = await run(svc.build(a.caller, b))
      expect(Either.isRight(again) && again.right._tag === "Built" && again.right.build.operation?.operationId).toBe(op.operationId)
      expect(await holds(a)).toEqual(held)
      // The window is full: another TEE buy of the key is refused at build, recording nothing.
      const other = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      expect(reasonOf(await run(svc.build(a.caller, other)))).toBe("key_limit_reached")
      expect((await ledgerRows(a)).map((x) => x.id)).toEqual([b.request.clientLaunchId])

      const result = await runOperation(a, tee.id, b, op)
      expect(result).toMatchObject({ chain: "hood", devBuy: { outcome: "landed" } })
      expect(await holds(a)).toEqual([{ ...held[0], state: "booked" }])
      expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      // A confirm replayed after the record (a retry, a recovery) answers the stored result and books nothing again.
      const replay = await run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId }))
      expect(Either.isRight(replay) && replay.right).toEqual(result)
      expect(await holds(a)).toEqual([{ ...held[0], state: "booked" }])
      expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
    })

    it("a dev buy that reverts (another buyer moved the curve past its minimum out) after its fee leg landed: the buy released, the fee booked and metered (rule 4)", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const r = await run(svc.build(a.caller, b))
      if (Either.isLeft(r) || r.right._tag !== "Built") throw new Error("build refused")
      const op = r.right.build.operation!
      const confirmLeg = async (i: number) => {
        const next = await run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[i]!) }))
        if (Either.isLeft(next)) throw new Error(`leg ${i} refused: ${next.left.reason} ${next.left.message}`)
        return next.right as Record<string, unknown>
      }
      await confirmLeg(0)
      // The curve exists: a stranger buys first, so the dev buy's 1% minimum out can no longer be met.
      const stranger = privateKeyToAccount(generatePrivateKey())
      await setEthBalance(tc, stranger.address, 10n * ETH)
      const pc = publicClientOf(localnet)
      const ahead = await createWalletClient({ account: stranger, chain: localnet.chain, transport: http(localnet.rpcUrl) }).sendTransaction({
        to: getAddress(r.right.build.pool),
        value: ETH,
        data: encodeFunctionData({ abi: bondingCurveAbi, functionName: "buy", args: [ETH, 0n] })
      })
      expect((await pc.waitForTransactionReceipt({ hash: ahead, pollingInterval: 20 })).status).toBe("success")
      await confirmLeg(1)
      const last = await confirmLeg(2)
      expect(last).toMatchObject({ chain: "hood", devBuy: { outcome: "reverted" } })
      // Rule 4: the fee leg went first and landed, a real movement: the fee is booked (its share of the hold), the buy released.
      const feeRaw = spendRaw - BUY
      const feeUsd = (spendUsd * feeRaw) / spendRaw
      const holdId = `launch:self:${JSON.stringify([a.caller.accountId, b.request.clientLaunchId, 1])}`
      expect((await holds(a)).map((h) => [h.id, h.state, h.amount, h.usd])).toEqual([
        [holdId, "released", spendRaw.toString(), spendUsd.toString()],
        [`${holdId}:fee`, "booked", feeRaw.toString(), feeUsd.toString()]
      ])
      expect(await usage(a)).toEqual([{ usd: feeUsd.toString(), trades: 0, launches: 1 }])
      // Released but the fee: the window admits a buy of the limit less the fee (the next at-limit buy is refused).
      expect(reasonOf(await run(svc.build(a.caller, body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() }))))).toBe("key_limit_reached")
      await setTxLimit(a, spendUsd + feeUsd)
      expect(reasonOf(await run(svc.build(a.caller, body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() }))))).toBe("admitted")
      expect((await holds(a)).map((h) => h.state)).toEqual(["released", "booked", "held"])
    })


    /** Builds a TEE launch with a dev buy for `a`; the operation. */
    const buildBuy = async (a: Agent, b: SelfLaunchBody, over: HoodSelfLaunch.HoodSelfLaunchShape = svc) => {
      const r = await run(over.build(a.caller, b))
      if (Either.isLeft(r) || r.right._tag !== "Built") throw new Error(`build refused: ${Either.isLeft(r) ? r.left.reason : "replay"}`)
      return r.right.build
    }
    const holdIdOf = (a: Agent, b: SelfLaunchBody, attempt: number) => `launch:self:${JSON.stringify([a.caller.accountId, b.request.clientLaunchId, attempt])}`
    const claimState = (id: string) => withSql(Effect.orDie(sql<{ state: string }>`SELECT state FROM sign_claims WHERE id = ${id}`)).then((r) => r[0]?.state)
    const backdateHolds = (a: Agent) => withSql(Effect.orDie(sql`UPDATE spend_reservations SET expires_at = ${new Date(Date.now() - 3_600_000)} WHERE key_id = ${a.caller.keyId}`))
    const sweepNow = () => withSql(Effect.orDie(sweepHolds()))
    /** The factory answering every call with a revert (a `createCurve` mined reverted), and back. */
    const withRevertingFactory = async <A>(f: () => Promise<A>): Promise<A> => {
      const code = await publicClientOf(localnet).getCode({ address: localnet.addresses.factory })
      await tc.setCode({ address: localnet.addresses.factory, bytecode: "0x60006000fd" })
      try {
        return await f()
      } finally {
        await tc.setCode({ address: localnet.addresses.factory, bytecode: code! })
      }
    }

    describe("reads through an RPC proxy that fails chosen reads", () => {
      let proxy: Server
      let proxied: HoodSelfLaunch.HoodSelfLaunchShape
      const failReceipt = new Set<string>()
      const failTransaction = new Set<string>()
      /** A lagging node: these receipts answer "not found" and the head is this block (unset: the node's own). */
      const lagReceipt = new Set<string>()
      let lagHead: bigint | undefined
      /** A contract-read backend behind: `eth_call` at "latest" is answered from this block (unset: forwarded as asked). */
      let lagCall: bigint | undefined
      /** A receipt index that catches up: these receipts answer "not found" until a nonce read pinned to a block number arrives; `hiddenReceipts` counts those answers. */
      const receiptAfterNonce = new Set<string>()
      let hiddenReceipts = 0
      /**
       * A load-balanced endpoint whose reads land on a backend behind the one that answered the head: reads pinned to a block
       * later than the last head served less `trailBlocks` answer "header not found" (unset: forwarded as asked).
       */
      let trailBlocks: bigint | undefined
      let servedHead: bigint | undefined
      /** Requests held unanswered (a process killed mid-call never hears back): `method:param` keys; `releaseHeld` answers them with an error, unforwarded. */
      const hold = new Set<string>()
      const held: Array<{ readonly id: unknown; readonly res: import("node:http").ServerResponse }> = []
      const heldCount = () => held.length
      const releaseHeld = () => {
        hold.clear()
        for (const h of held.splice(0)) {
          h.res.writeHead(200, { "content-type": "application/json" })
          h.res.end(JSON.stringify({ jsonrpc: "2.0", id: h.id, error: { code: -32000, message: "connection lost" } }))
        }
      }
      beforeAll(async () => {
        proxy = createServer((req, res) => {
          const chunks: Array<Buffer> = []
          req.on("data", (c: Buffer) => chunks.push(c))
          req.on("end", () => {
            const text = Buffer.concat(chunks).toString()
            const message = JSON.parse(text) as { id?: unknown; method?: string; params?: Array<unknown> }
            const param = String(message.params?.[0] ?? "").toLowerCase()
            const hash = message.method === "eth_sendRawTransaction" ? keccak256(param as Hex).toLowerCase() : param
            if (hold.has(`${message.method}:${hash}`)) {
              held.push({ id: message.id, res })
              return
            }
            if (message.method === "eth_getTransactionCount" && /^0x[0-9a-f]+$/i.test(String(message.params?.[1] ?? ""))) receiptAfterNonce.clear()
            if (message.method === "eth_getTransactionReceipt" && receiptAfterNonce.has(hash)) {
              hiddenReceipts += 1
              res.writeHead(200, { "content-type": "application/json" })
              res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: null }))
              return
            }
            const params = message.params ?? []
            const pinned = (message.method === "eth_getTransactionCount" || message.method === "eth_call") && /^0x[0-9a-f]+$/i.test(String(params[1] ?? ""))
            if (pinned && trailBlocks !== undefined && servedHead !== undefined && BigInt(String(params[1])) > servedHead - trailBlocks) {
              res.writeHead(200, { "content-type": "application/json" })
              res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: "header not found" } }))
              return
            }
            const forwarded =
              message.method === "eth_call" && lagCall !== undefined && params[1] === "latest"
                ? JSON.stringify({ ...message, params: [params[0], `0x${lagCall.toString(16)}`, ...params.slice(2)] })
                : text
            if ((message.method === "eth_getTransactionReceipt" && lagReceipt.has(hash)) || (message.method === "eth_blockNumber" && lagHead !== undefined)) {
              res.writeHead(200, { "content-type": "application/json" })
              res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result: message.method === "eth_blockNumber" ? `0x${lagHead!.toString(16)}` : null }))
              return
            }
            if ((message.method === "eth_getTransactionReceipt" && failReceipt.has(hash)) || (message.method === "eth_getTransactionByHash" && failTransaction.has(hash))) {
              res.writeHead(200, { "content-type": "application/json" })
              res.end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32000, message: "header not found" } }))
              return
            }
            void fetch(localnet.rpcUrl, { method: "POST", headers: { "content-type": "application/json" }, body: forwarded })
              .then(async (upstream) => {
                const answer = await upstream.text()
                if (message.method === "eth_blockNumber" && trailBlocks !== undefined) servedHead = BigInt((JSON.parse(answer) as { result: string }).result)
                res.writeHead(upstream.status, { "content-type": "application/json" })
                res.end(answer)
              })
              .catch(() => {
                res.writeHead(502)
                res.end()
              })
          })
        })
        const url = await listenLoopback(proxy)
        proxied = await withSql(
          HoodSelfLaunch.make(
            {
              chain: localnet.chain,
              rpcUrl: url,
              factory: localnet.addresses.factory,
              bondingCurveBytecode: localnet.artifacts.BondingCurve.bytecode,
              baseUrl: BASE_URL,
              exclusiveHolderPassRaw: 1n,
              teeLaunchBuysEnabled: true
            },
            { ledger, images, wallets, holdings: () => Effect.succeed(0n), agentLaunches: registry, prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT) }
          )
        )
      })
      afterAll(async () => {
        releaseHeld()
        if (proxy !== undefined) await closeLoopback(proxy)
      })

      /** Polls `f` until it holds (a deadline, no bare sleep). */
      const until = async (f: () => Promise<boolean> | boolean, what: string, ms = 30_000) => {
        const end = Date.now() + ms
        while (!(await f())) {
          if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
          await new Promise((r) => setTimeout(r, 25))
        }
      }

      it("a linked wallet's fee leg whose receipt or transaction read fails: LAUNCH_FAILED, retryable, chain_read_failed (never FEE_LEG_MISSING); nothing recorded; with reads restored it confirms", async () => {
        const a = await agent()
        const b = body(a, { buyAmount: "10000000000000000" })
        const build = await buildBuy(a, b, proxied)
        const createHash = await signAndSend(a, build.transaction)
        const feeHash = (await signAndSend(a, build.feeTransfer!)).toLowerCase()
        const confirmNow = () => run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash, feeTxHash: feeHash }))
        for (const failing of [failReceipt, failTransaction]) {
          failing.add(feeHash)
          const refused = await confirmNow().finally(() => failing.delete(feeHash))
          expect(Either.isLeft(refused) && [refused.left.reason, refused.left.retryable, refused.left.details?.reason]).toEqual(["launch_failed", true, "chain_read_failed"])
          expect(await tokenRows(build.mint)).toEqual([])
        }
        const confirmed = await confirmNow()
        expect(Either.isRight(confirmed) && confirmed.right).toMatchObject({ mint: build.mint, signature: createHash })
      })

      it("a lagging node (its head before the block that mined a sent leg, the receipt not found) is no verdict: the leg stays sent, nothing reissued; read again, it is mined", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const op = (await buildBuy(a, b, proxied)).operation!
        const pc = publicClientOf(localnet)
        const confirmOf = (signedTransaction?: string) =>
          proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(signedTransaction !== undefined ? { signedTransaction } : {}) })
        expect(Either.isRight(await run(confirmOf(await teeSign(a, tee.id, op.legs[0]!))))).toBe(true)
        // The fee leg recorded sent, its confirm cut off while waiting for the receipt (the leg mined meanwhile).
        const feeSigned = await teeSign(a, tee.id, op.legs[1]!)
        const feeHash = keccak256(feeSigned as Hex).toLowerCase()
        hold.add(`eth_getTransactionReceipt:${feeHash}`)
        const cut = Effect.runFork(confirmOf(feeSigned))
        await until(async () => (await pc.getTransactionCount({ address: getAddress(tee.address) })) > op.legs[1]!.nonce && heldCount() > 0, "the fee mined")
        await Effect.runPromise(Fiber.interrupt(cut))
        releaseHeld()
        const mined = (await pc.getTransactionReceipt({ hash: feeHash as Hex })).blockNumber
        lagReceipt.add(feeHash)
        lagHead = mined - 1n
        const lagged = await run(confirmOf()).finally(() => {
          lagReceipt.delete(feeHash)
          lagHead = undefined
        })
        expect(Either.isRight(lagged) && (lagged.right as { operation: HoodOperation }).operation.legs.map((l) => [l.kind, l.status])).toEqual([
          ["createCurve", "mined"],
          ["feeTransfer", "sent"],
          ["devBuy", "pending"]
        ])
        const read = await run(confirmOf())
        expect(Either.isRight(read) && (read.right as { operation: HoodOperation }).operation.legs[1]!.status).toBe("mined")
      })

      it("a relay-signed buy that landed, its receipt not shown by the node while the payer's nonce passed it only near the head: no verdict (signed_leg_in_flight), never replaced; shown, it is recorded mined and only the fee reissued", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const op = (await buildBuy(a, b, proxied)).operation!
        const confirmOf = async (leg?: { claimId: string; unsignedTransaction: string }) =>
          run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(leg === undefined ? {} : { signedTransaction: await teeSign(a, tee.id, leg) }) }))
        expect(Either.isRight(await confirmOf(op.legs[0]!))).toBe(true)
        const buySigned = await teeSign(a, tee.id, op.legs[2]!)
        const buyHash = keccak256(buySigned as Hex).toLowerCase()
        const treasury = getAddress(op.legs[1]!.to)
        const pcl = publicClientOf(localnet)
        const code = await pcl.getCode({ address: treasury })
        const feeBlock = (await pcl.getBlockNumber()) + 1n
        await tc.setCode({ address: treasury, bytecode: `0x63${feeBlock.toString(16).padStart(8, "0")}4314600b57005b60006000fd` })
        const refused = await confirmOf(op.legs[1]!).finally(() => tc.setCode({ address: treasury, bytecode: code ?? "0x" }))
        expect(Either.isLeft(refused) && refused.left.details?.reason).toBe("signed_leg_in_flight")
        // The old buy lands; the node answers its receipt "not found" (a backend behind), the payer's nonce past it at the head.
        const hash = await pcl.sendRawTransaction({ serializedTransaction: buySigned as Hex })
        expect((await pcl.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe("success")
        expect(await pcl.getTransactionCount({ address: getAddress(tee.address) })).toBeGreaterThan(op.legs[2]!.nonce)
        lagReceipt.add(buyHash)
        const lagged = await confirmOf().finally(() => lagReceipt.delete(buyHash))
        expect(Either.isLeft(lagged) && [lagged.left.reason, lagged.left.retryable, lagged.left.details?.reason]).toEqual(["launch_failed", true, "signed_leg_in_flight"])
        expect(await claimState(op.legs[2]!.claimId)).toBe("signed")
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        const shown = await confirmOf()
        if (Either.isLeft(shown)) throw new Error(`confirm refused: ${shown.left.reason} ${shown.left.message}`)
        const next = (shown.right as { operation: HoodOperation }).operation
        expect(next.legs.map((l) => [l.kind, l.status, l.kind === "devBuy" ? l.txHash : null])).toEqual([["createCurve", "mined", null], ["feeTransfer", "pending", null], ["devBuy", "mined", buyHash]])
      })

      it("a build again while the curve read lags the nonce read (createCurve mined, eth_call at latest answered from the block before it): 409 prior_attempt_on_chain; the attempt, its claims and its hold untouched", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const build = await buildBuy(a, b, proxied)
        const op = build.operation!
        // The relay signs createCurve; the agent sends it straight to the node (never handed back to confirm).
        const pc = publicClientOf(localnet)
        const createHash = await pc.sendRawTransaction({ serializedTransaction: (await teeSign(a, tee.id, op.legs[0]!)) as Hex })
        const created = await pc.waitForTransactionReceipt({ hash: createHash, pollingInterval: 20 })
        expect(created.status).toBe("success")
        lagCall = created.blockNumber - 1n
        const again = await run(proxied.build(a.caller, b)).finally(() => {
          lagCall = undefined
        })
        expect(Either.isLeft(again) && [again.left.reason, again.left.retryable, again.left.details]).toEqual([
          "idempotency_conflict",
          false,
          { reason: "prior_attempt_on_chain", mint: build.mint }
        ])
        expect([await claimState(op.legs[1]!.claimId), await claimState(op.legs[2]!.claimId)]).toEqual(["open", "open"])
        expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "held"]])
        expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.attempt).toBe(1)
      })

      it("a build again through a load-balanced endpoint whose backend trails the head by one block (header not found at the head): read again at head - 1, 409 prior_attempt_on_chain; two blocks behind: LAUNCH_FAILED retryable chain_read_failed; nothing changed either way", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const build = await buildBuy(a, b, proxied)
        const op = build.operation!
        // The relay signs createCurve; the agent sends it straight to the node; a block passes after it.
        const pc = publicClientOf(localnet)
        const createHash = await pc.sendRawTransaction({ serializedTransaction: (await teeSign(a, tee.id, op.legs[0]!)) as Hex })
        expect((await pc.waitForTransactionReceipt({ hash: createHash, pollingInterval: 20 })).status).toBe("success")
        await tc.mine({ blocks: 1 })
        const buildBehind = async (blocks: bigint) => {
          trailBlocks = blocks
          servedHead = undefined
          return run(proxied.build(a.caller, b)).finally(() => {
            trailBlocks = undefined
            servedHead = undefined
          })
        }
        const behind = await buildBehind(2n)
        expect(Either.isLeft(behind) && [behind.left.reason, behind.left.retryable, behind.left.details?.reason]).toEqual(["launch_failed", true, "chain_read_failed"])
        const again = await buildBehind(1n)
        expect(Either.isLeft(again) && [again.left.reason, again.left.retryable, again.left.details]).toEqual([
          "idempotency_conflict",
          false,
          { reason: "prior_attempt_on_chain", mint: build.mint }
        ])
        expect([await claimState(op.legs[1]!.claimId), await claimState(op.legs[2]!.claimId)]).toEqual(["open", "open"])
        expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "held"]])
        expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.attempt).toBe(1)
      })

      /** `f` run through the proxy while its backend trails the served head by `blocks` (pinned reads at the head answer "header not found"). */
      const trailingBy = async <A>(blocks: bigint, f: () => Promise<A>): Promise<A> => {
        trailBlocks = blocks
        servedHead = undefined
        return f().finally(() => {
          trailBlocks = undefined
          servedHead = undefined
        })
      }

      it("a linked build again whose createCurve was mined in the head block itself, read one block behind (head - 1 shows no curve): LAUNCH_FAILED retryable chain_read_failed, never a rebuild; at the head, 409 prior_attempt_on_chain, and the createCurve confirms", async () => {
        const a = await agent()
        const b = body(a)
        const r = await run(proxied.build(a.caller, b))
        if (Either.isLeft(r) || r.right._tag !== "Built") throw new Error("build refused")
        const build = r.right.build
        // Mined in the newest block: no block after it.
        const createHash = await signAndSend(a, build.transaction)
        const behind = await trailingBy(1n, () => run(proxied.build(a.caller, b)))
        expect(Either.isLeft(behind) && [behind.left.reason, behind.left.retryable, behind.left.details?.reason]).toEqual(["launch_failed", true, "chain_read_failed"])
        expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.attempt).toBe(1)
        const atHead = await run(proxied.build(a.caller, b))
        expect(Either.isLeft(atHead) && [atHead.left.reason, atHead.left.retryable, atHead.left.details]).toEqual([
          "idempotency_conflict",
          false,
          { reason: "prior_attempt_on_chain", mint: build.mint }
        ])
        const confirmed = await run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: createHash }))
        expect(Either.isRight(confirmed) && confirmed.right).toMatchObject({ mint: build.mint })
      })

      it("a TEE build again whose createCurve was mined in the head block itself, read one block behind: 409 prior_attempt_in_flight (the nonce at head - 1 not yet used), never a rebuild; the attempt, its claims and hold untouched", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const build = await buildBuy(a, b, proxied)
        const op = build.operation!
        const pc = publicClientOf(localnet)
        const createHash = await pc.sendRawTransaction({ serializedTransaction: (await teeSign(a, tee.id, op.legs[0]!)) as Hex })
        expect((await pc.waitForTransactionReceipt({ hash: createHash, pollingInterval: 20 })).status).toBe("success")
        const behind = await trailingBy(1n, () => run(proxied.build(a.caller, b)))
        expect(Either.isLeft(behind) && [behind.left.reason, behind.left.retryable, behind.left.details?.reason, behind.left.details?.operationId]).toEqual([
          "idempotency_conflict",
          true,
          "prior_attempt_in_flight",
          op.operationId
        ])
        expect([await claimState(op.legs[1]!.claimId), await claimState(op.legs[2]!.claimId)]).toEqual(["open", "open"])
        expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "held"]])
        expect((await Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId }).pipe(Effect.orDie)))?.attempt).toBe(1)
      })

      it("a TEE operation's record whose createCurve receipt a node behind answers 'not found' (its curve read behind too): LAUNCH_FAILED retryable chain_read_failed, never JOB_NOT_FOUND; nothing recorded; read again it records and books once", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const build = await buildBuy(a, b, proxied)
        const op = build.operation!
        const confirmOf = async (signedTransaction?: string) =>
          run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(signedTransaction === undefined ? {} : { signedTransaction }) }))
        const createSigned = await teeSign(a, tee.id, op.legs[0]!)
        expect(Either.isRight(await confirmOf(createSigned))).toBe(true)
        expect(Either.isRight(await confirmOf(await teeSign(a, tee.id, op.legs[1]!)))).toBe(true)
        const createHash = keccak256(createSigned as Hex).toLowerCase()
        lagReceipt.add(createHash)
        lagCall = (await publicClientOf(localnet).getTransactionReceipt({ hash: createHash as Hex })).blockNumber - 1n
        const lagged = await confirmOf(await teeSign(a, tee.id, op.legs[2]!)).finally(() => {
          lagReceipt.delete(createHash)
          lagCall = undefined
        })
        expect(Either.isLeft(lagged) && [lagged.left.reason, lagged.left.retryable, lagged.left.details?.reason]).toEqual(["launch_failed", true, "chain_read_failed"])
        expect(await tokenRows(build.mint)).toEqual([])
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        const done = await confirmOf()
        expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("a sent buy whose receipt the node shows only on the read after the nonce (the nonce at depth passed it): mined and booked, never taken for a leg that can never land", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const op = (await buildBuy(a, b, proxied)).operation!
        const pc = publicClientOf(localnet)
        const confirmOf = (signedTransaction?: string) =>
          proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(signedTransaction !== undefined ? { signedTransaction } : {}) })
        for (const leg of op.legs.slice(0, 2)) expect(Either.isRight(await run(confirmOf(await teeSign(a, tee.id, leg))))).toBe(true)
        // The buy recorded sent, its confirm cut off while waiting for the receipt (the buy mined meanwhile).
        const buySigned = await teeSign(a, tee.id, op.legs[2]!)
        const buyHash = keccak256(buySigned as Hex).toLowerCase()
        hold.add(`eth_getTransactionReceipt:${buyHash}`)
        const cut = Effect.runFork(confirmOf(buySigned))
        await until(async () => (await pc.getTransactionCount({ address: getAddress(tee.address) })) > op.legs[2]!.nonce && heldCount() > 0, "the buy mined")
        await Effect.runPromise(Fiber.interrupt(cut))
        releaseHeld()
        // Blocks pass: the payer's nonce at NEVER_LANDS_DEPTH_BLOCKS under the head has passed the buy's; its first receipt read answers "not found".
        await tc.mine({ blocks: Number(NEVER_LANDS_DEPTH_BLOCKS) })
        hiddenReceipts = 0
        receiptAfterNonce.add(buyHash)
        const done = await run(confirmOf()).finally(() => receiptAfterNonce.clear())
        expect(hiddenReceipts).toBeGreaterThan(0)
        if (Either.isLeft(done)) throw new Error(`confirm refused: ${done.left.reason} ${done.left.message}`)
        expect(done.right).toMatchObject({ chain: "hood", devBuy: { outcome: "landed", signature: buyHash } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("crash points: a confirm killed between recording a leg and sending it, and one killed after the buy landed but before the record, recover to one booking", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const op = (await buildBuy(a, b, proxied)).operation!
        const pc = publicClientOf(localnet)
        const confirmOf = (signedTransaction?: string) =>
          proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(signedTransaction !== undefined ? { signedTransaction } : {}) })
        // Killed between the hold (the build) and the send: the createCurve leg recorded signed, its broadcast never reaching the node.
        const createSigned = await teeSign(a, tee.id, op.legs[0]!)
        hold.add(`eth_sendRawTransaction:${keccak256(createSigned as Hex).toLowerCase()}`)
        const first = Effect.runFork(confirmOf(createSigned))
        await until(() => heldCount() > 0, "the held broadcast")
        await Effect.runPromise(Fiber.interrupt(first))
        releaseHeld()
        expect(await pc.getTransactionCount({ address: getAddress(tee.address) })).toBe(op.legs[0]!.nonce)
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        // The recovery (the next confirm) sends the recorded bytes again and goes on; the hold is untouched.
        await until(async () => {
          const next = await run(confirmOf())
          return Either.isRight(next) && (next.right as { operation?: { nextLeg: number } }).operation?.nextLeg === 1
        }, "createCurve mined from the recorded bytes")
        expect(Either.isRight(await run(confirmOf(await teeSign(a, tee.id, op.legs[1]!))))).toBe(true)
        // Killed after the dev buy landed, before the record: its receipt read never answered.
        const buySigned = await teeSign(a, tee.id, op.legs[2]!)
        hold.add(`eth_getTransactionReceipt:${keccak256(buySigned as Hex).toLowerCase()}`)
        const second = Effect.runFork(confirmOf(buySigned))
        await until(async () => (await pc.getTransactionCount({ address: getAddress(tee.address) })) > op.legs[2]!.nonce && heldCount() > 0, "the buy mined")
        await Effect.runPromise(Fiber.interrupt(second))
        releaseHeld()
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        const recovered = await run(confirmOf())
        expect(Either.isRight(recovered) && recovered.right).toMatchObject({ devBuy: { outcome: "landed" } })
        expect(Either.isRight(await run(confirmOf()))).toBe(true)
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("a failed receipt or transaction read is never a verdict: the confirm fails retryable and releases nothing; with reads restored the landed buy books once", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const build = await buildBuy(a, b, proxied)
        const op = build.operation!
        const confirmSigned = async (i: number) => run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[i]!) }))
        // createCurve mined, its receipt unreadable: before, two failed reads with the nonce moved marked it reverted and failed the launch.
        const createSigned = await teeSign(a, tee.id, op.legs[0]!)
        failReceipt.add(keccak256(createSigned as Hex).toLowerCase())
        const unread = await run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: createSigned }))
        expect(Either.isLeft(unread) && [unread.left.reason, unread.left.retryable, unread.left.details?.reason]).toEqual(["launch_failed", true, "chain_read_failed"])
        failReceipt.clear()
        const created = await run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId }))
        expect(Either.isRight(created) && created.right).toMatchObject({ operation: { nextLeg: 1 } })
        expect(Either.isRight(await confirmSigned(1))).toBe(true)
        // The dev buy lands; its receipt and its transaction unreadable.
        const buySigned = await teeSign(a, tee.id, op.legs[2]!)
        const buyHash = keccak256(buySigned as Hex).toLowerCase()
        failReceipt.add(buyHash)
        failTransaction.add(buyHash)
        const failed = await run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: buySigned }))
        expect(Either.isLeft(failed) && [failed.left.reason, failed.left.retryable, failed.left.details?.reason]).toEqual(["launch_failed", true, "chain_read_failed"])
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        expect((await usage(a))[0]?.launches ?? 0).toBe(0)
        // The receipt readable again, the transaction still not: the outcome is the operation's own leg (mined), never a re-read.
        failReceipt.clear()
        const done = await run(proxied.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId }))
        failTransaction.clear()
        expect(Either.isRight(done) && done.right).toMatchObject({ chain: "hood", devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })
    })

    it("the sweep keeps the hold of a build whose dev-buy leg the relay signed (those bytes can land, no expiry); an unsigned build's expired hold is swept", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      for (const leg of op.legs) await teeSign(a, tee.id, leg)
      await backdateHolds(a)
      await sweepNow()
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      expect(reasonOf(await run(svc.build(a.caller, body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() }))))).toBe("key_limit_reached")
      // Unsigned: nothing can land once its claims' lifetime passed (the hold lives that long); past it the sweep releases it.
      const c = await agent()
      const tee2 = await teeWallet(c)
      await setTxLimit(c, spendUsd)
      await buildBuy(c, body(c, { linkedWalletId: tee2.id, buyAmount: BUY.toString() }))
      const expiry = await withSql(Effect.orDie(sql<{ hold: Date; claim: Date }>`
        SELECT r.expires_at AS hold, (SELECT max(expires_at) FROM sign_claims WHERE account_id = ${c.caller.accountId}) AS claim FROM spend_reservations r WHERE r.key_id = ${c.caller.keyId}`))
      expect(new Date(expiry[0]!.hold).getTime()).toBeGreaterThanOrEqual(new Date(expiry[0]!.claim).getTime())
      // Only the hold backdated, its claims still live (signable): kept. Once the claims' lifetime passed too: released.
      await backdateHolds(c)
      await sweepNow()
      expect((await holds(c)).map((h) => h.state)).toEqual(["held"])
      await withSql(Effect.orDie(sql`UPDATE sign_claims SET expires_at = ${new Date(Date.now() - 3_600_000)} WHERE account_id = ${c.caller.accountId}`))
      await sweepNow()
      expect((await holds(c)).map((h) => h.state)).toEqual(["released"])
    })

    it("createCurve reverted, the dev buy never signed: its claims are expired first, then the hold released; a build again holds anew", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      const failed = await withRevertingFactory(async () =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[0]!) }))
      )
      expect(Either.isLeft(failed) && [failed.left.reason, failed.left.details?.reason]).toEqual(["launch_failed", "reverted"])
      expect([await claimState(op.legs[1]!.claimId), await claimState(op.legs[2]!.claimId)]).toEqual(["expired", "expired"])
      expect((await holds(a)).map((h) => h.state)).toEqual(["released"])
      expect(reasonOf(await run(svc.build(a.caller, b)))).toBe("admitted")
      expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "released"], [holdIdOf(a, b, 2), "held"]])
    })

    it("createCurve reverted after the relay signed the dev buy: the hold stays (swept or not) while those bytes can land; they land, and the build again books it once", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 2n * spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      const feeSigned = await teeSign(a, tee.id, op.legs[1]!)
      const buySigned = await teeSign(a, tee.id, op.legs[2]!)
      const failed = await withRevertingFactory(async () =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[0]!) }))
      )
      expect(Either.isLeft(failed) && failed.left.details?.reason).toBe("reverted")
      await backdateHolds(a)
      await sweepNow()
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      // The agent sends the relay-signed bytes itself: the fee, then the buy (a plain ETH transfer to the curve address no curve took).
      const pc = publicClientOf(localnet)
      for (const signed of [feeSigned, buySigned]) {
        const hash = await pc.sendRawTransaction({ serializedTransaction: signed as Hex })
        expect((await pc.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe("success")
      }
      expect(reasonOf(await run(svc.build(a.caller, b)))).toBe("admitted")
      expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "booked"], [holdIdOf(a, b, 2), "held"]])
      expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 0 }])
    })

    it("createCurve reverted after the relay signed only the fee leg: the hold stays while those fee bytes can land, swept or not (claims past their lifetime); they land, and the build again books the fee", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 2n * spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      const feeSigned = await teeSign(a, tee.id, op.legs[1]!)
      const failed = await withRevertingFactory(async () =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[0]!) }))
      )
      expect(Either.isLeft(failed) && failed.left.details?.reason).toBe("reverted")
      expect([await claimState(op.legs[1]!.claimId), await claimState(op.legs[2]!.claimId)]).toEqual(["signed", "expired"])
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      await backdateHolds(a)
      await withSql(Effect.orDie(sql`UPDATE sign_claims SET expires_at = ${new Date(Date.now() - 3_600_000)} WHERE account_id = ${a.caller.accountId}`))
      await sweepNow()
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      const pc = publicClientOf(localnet)
      const hash = await pc.sendRawTransaction({ serializedTransaction: feeSigned as Hex })
      expect((await pc.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe("success")
      expect(reasonOf(await run(svc.build(a.caller, b)))).toBe("admitted")
      const feeRaw = spendRaw - BUY
      const byId = Object.fromEntries((await holds(a)).map((h) => [h.id, h.state]))
      expect(byId).toEqual({ [holdIdOf(a, b, 1)]: "released", [`${holdIdOf(a, b, 1)}:fee`]: "booked", [holdIdOf(a, b, 2)]: "held" })
      expect(await usage(a)).toEqual([{ usd: ((spendUsd * feeRaw) / spendRaw).toString(), trades: 0, launches: 0 }])
    })

    it("a dead attempt's kept hold is decided again: once the new attempt's fee mined at the old buy's nonce, the old hold is released (swept or not); an at-limit buy is admitted", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 2n * spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      await teeSign(a, tee.id, op.legs[1]!)
      await teeSign(a, tee.id, op.legs[2]!)
      const failed = await withRevertingFactory(async () =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, op.legs[0]!) }))
      )
      expect(Either.isLeft(failed) && failed.left.details?.reason).toBe("reverted")
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      // The new attempt at the pending nonce: createCurve N+1, its fee N+2 (the old buy's nonce), its buy N+3.
      const next = (await buildBuy(a, b)).operation!
      expect(next.legs[1]!.nonce).toBe(op.legs[2]!.nonce)
      await runOperation(a, tee.id, b, next)
      // "Never lands" needs the old buy's nonce used NEVER_LANDS_DEPTH_BLOCKS under the head: blocks pass, and the next confirm of the id decides it.
      await tc.mine({ blocks: Number(NEVER_LANDS_DEPTH_BLOCKS) })
      expect(Either.isRight(await run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: next.operationId })))).toBe(true)
      expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "released"], [holdIdOf(a, b, 2), "booked"]])
      // The sweep alone ends the exemption too (a decision that never ran): the later attempt's leg mined at the old buy's nonce.
      await withSql(Effect.orDie(sql`UPDATE spend_reservations SET state = 'held', settled_at = NULL WHERE id = ${holdIdOf(a, b, 1)}`))
      await backdateHolds(a)
      await sweepNow()
      expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "released"], [holdIdOf(a, b, 2), "booked"]])
      expect(reasonOf(await run(svc.build(a.caller, body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() }))))).toBe("admitted")
    })

    it("createCurve reverted, its fee leg sent by the agent and landed, the buy never signed: the fee is booked, the buy released", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 2n * spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      const feeSigned = await teeSign(a, tee.id, op.legs[1]!)
      const pc = publicClientOf(localnet)
      const createSigned = await teeSign(a, tee.id, op.legs[0]!)
      const failed = await withRevertingFactory(async () => {
        const r = await run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: createSigned }))
        const hash = await pc.sendRawTransaction({ serializedTransaction: feeSigned as Hex })
        expect((await pc.waitForTransactionReceipt({ hash, pollingInterval: 20 })).status).toBe("success")
        return r
      })
      expect(Either.isLeft(failed) && failed.left.details?.reason).toBe("reverted")
      expect(reasonOf(await run(svc.build(a.caller, b)))).toBe("admitted")
      const feeRaw = spendRaw - BUY
      const feeUsd = (spendUsd * feeRaw) / spendRaw
      const byId = Object.fromEntries((await holds(a)).map((h) => [h.id, h.state]))
      expect(byId).toEqual({ [holdIdOf(a, b, 1)]: "released", [`${holdIdOf(a, b, 1)}:fee`]: "booked", [holdIdOf(a, b, 2)]: "held" })
      expect(await usage(a)).toEqual([{ usd: feeUsd.toString(), trades: 0, launches: 0 }])
    })

    it("a rebuild of an attempt proven dead (its createCurve nonce taken, no curve) expires its unsigned dev-buy claim and releases its hold before the new attempt holds", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 2n * spendUsd)
      const x = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const y = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const xOp = (await buildBuy(a, x)).operation!
      const yOp = (await buildBuy(a, y)).operation!
      expect(yOp.legs[0]!.nonce).toBe(xOp.legs[0]!.nonce)
      // x's createCurve signed by the relay, never sent; y's takes the nonce.
      await teeSign(a, tee.id, xOp.legs[0]!)
      const yCreated = await run(svc.confirm(a.caller, { clientLaunchId: y.request.clientLaunchId, operationId: yOp.operationId, signedTransaction: await teeSign(a, tee.id, yOp.legs[0]!) }))
      expect(Either.isRight(yCreated)).toBe(true)
      // At 2 × the buy the window only fits x's new attempt once x's dead hold is released.
      expect(reasonOf(await run(svc.build(a.caller, x)))).toBe("admitted")
      expect(await claimState(xOp.legs[2]!.claimId)).toBe("expired")
      const byId = Object.fromEntries((await holds(a)).map((h) => [h.id, h.state]))
      expect(byId).toEqual({ [holdIdOf(a, x, 1)]: "released", [holdIdOf(a, y, 1)]: "held", [holdIdOf(a, x, 2)]: "held" })
    })

    it("a reverted fee leg reissued: the later dev-buy leg gets a new claim, the old unsigned one is expired, and the hold lives as long as the new claim", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      const confirmLeg = async (leg: { claimId: string; unsignedTransaction: string }) =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: await teeSign(a, tee.id, leg) }))
      expect(Either.isRight(await confirmLeg(op.legs[0]!))).toBe(true)
      // The treasury refuses ETH in the block the fee leg is mined in (automine: the next one), and only then, so the
      // fee leg reverts and its reissue (estimated against the block after) is built: the buy is reissued after it.
      const treasury = getAddress(op.legs[1]!.to)
      const pcl = publicClientOf(localnet)
      const code = await pcl.getCode({ address: treasury })
      const feeBlock = (await pcl.getBlockNumber()) + 1n
      await tc.setCode({ address: treasury, bytecode: `0x63${feeBlock.toString(16).padStart(8, "0")}4314600b57005b60006000fd` })
      const reissued = await confirmLeg(op.legs[1]!).finally(() => tc.setCode({ address: treasury, bytecode: code ?? "0x" }))
      if (Either.isLeft(reissued)) throw new Error(`fee leg confirm refused: ${reissued.left.reason} ${reissued.left.message} ${JSON.stringify(reissued.left.details)}`)
      const next = (reissued.right as { operation: HoodOperation }).operation
      expect(next?.legs.map((l) => [l.kind, l.status])).toEqual([["createCurve", "mined"], ["feeTransfer", "pending"], ["devBuy", "pending"]])
      const newBuyClaim = next!.legs[2]!.claimId
      expect(newBuyClaim).not.toBe(op.legs[2]!.claimId)
      expect(await claimState(op.legs[2]!.claimId)).toBe("expired")
      const expiry = await withSql(Effect.orDie(sql<{ hold: Date; claim: Date }>`
        SELECT r.expires_at AS hold, (SELECT expires_at FROM sign_claims WHERE id = ${newBuyClaim}) AS claim FROM spend_reservations r WHERE r.id = ${holdIdOf(a, b, 1)}`))
      expect(new Date(expiry[0]!.hold).getTime()).toBeGreaterThanOrEqual(new Date(expiry[0]!.claim).getTime())
      // The new legs finish the launch; the hold books once.
      expect(Either.isRight(await confirmLeg(next!.legs[1]!))).toBe(true)
      const done = await confirmLeg(next!.legs[2]!)
      expect(Either.isRight(done) && done.right).toMatchObject({ devBuy: { outcome: "landed" } })
      expect((await holds(a)).map((h) => h.state)).toEqual(["booked"])
    })

    /** A TEE launch with a dev buy, built at the key's limit of one buy; `confirm` confirms a leg signed by the relay (or, without one, as it stands). */
    const teeBuyBuilt = async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const build = await buildBuy(a, b)
      const op = build.operation!
      const confirm = async (leg?: { claimId: string; unsignedTransaction: string }) =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(leg === undefined ? {} : { signedTransaction: await teeSign(a, tee.id, leg) }) }))
      return { a, tee, b, build, op, confirm }
    }

    it("a fee leg reverted after the relay signed the dev buy: no reissue while those bytes can land (retryable, the hold kept, swept or not); they land, only the fee is reissued, the launch records and books buy and fee once", async () => {
      const { a, tee, build, op, confirm: confirmLeg } = await teeBuyBuilt()
      expect(Either.isRight(await confirmLeg(op.legs[0]!))).toBe(true)
      const buySigned = await teeSign(a, tee.id, op.legs[2]!)
      const treasury = getAddress(op.legs[1]!.to)
      const pcl = publicClientOf(localnet)
      const code = await pcl.getCode({ address: treasury })
      const feeBlock = (await pcl.getBlockNumber()) + 1n
      await tc.setCode({ address: treasury, bytecode: `0x63${feeBlock.toString(16).padStart(8, "0")}4314600b57005b60006000fd` })
      const refused = await confirmLeg(op.legs[1]!).finally(() => tc.setCode({ address: treasury, bytecode: code ?? "0x" }))
      expect(Either.isLeft(refused) && [refused.left.reason, refused.left.retryable, refused.left.details?.reason]).toEqual(["launch_failed", true, "signed_leg_in_flight"])
      expect(Either.isLeft(refused) && typeof refused.left.details?.retryAfter).toBe("number")
      expect(await claimState(op.legs[2]!.claimId)).toBe("signed")
      await backdateHolds(a)
      await sweepNow()
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      // The agent sends the old buy's bytes: a real buy on the curve, before the fee.
      const buyHash = await pcl.sendRawTransaction({ serializedTransaction: buySigned as Hex })
      expect((await pcl.waitForTransactionReceipt({ hash: buyHash, pollingInterval: 20 })).status).toBe("success")
      // The next confirm records the buy mined under the claim's signature and reissues only the missing fee, on a fresh nonce; nothing booked yet.
      const again = await confirmLeg()
      if (Either.isLeft(again)) throw new Error(`confirm refused: ${again.left.reason} ${again.left.message} ${JSON.stringify(again.left.details)}`)
      const next = (again.right as { operation: HoodOperation }).operation
      expect(next.legs.map((l) => [l.kind, l.status])).toEqual([["createCurve", "mined"], ["feeTransfer", "pending"], ["devBuy", "mined"]])
      expect(next.legs[2]).toMatchObject({ txHash: keccak256(buySigned as Hex), claimId: op.legs[2]!.claimId, nonce: op.legs[2]!.nonce })
      expect(next.legs[1]!.nonce).toBe(op.legs[2]!.nonce + 1)
      expect(next.legs[1]!.claimId).not.toBe(op.legs[1]!.claimId)
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      expect(await usage(a)).toEqual([{ usd: null, trades: null, launches: null }])
      // The fee signed and sent: the launch is confirmed, one token row, buy and fee metered once.
      const done = await confirmLeg(next.legs[1]!)
      expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed", signature: keccak256(buySigned as Hex) } })
      expect(await tokenRows(build.mint)).toHaveLength(1)
      expect(Either.isRight(await confirmLeg())).toBe(true)
      expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
      expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
    })

    it("a fee leg reissued after the hold was swept: the buy is held anew against the window before its new claim (refused past the limit, nothing reissued)", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const op = (await buildBuy(a, b)).operation!
      const confirm = async (leg?: { claimId: string; unsignedTransaction: string }) =>
        run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(leg === undefined ? {} : { signedTransaction: await teeSign(a, tee.id, leg) }) }))
      expect(Either.isRight(await confirm(op.legs[0]!))).toBe(true)
      // The fee leg signed through the relay within its lifetime; the confirm comes after every claim's lifetime. The sweep keeps the
      // hold (the signed fee leg can still land); one released all the same (a sweep before that exemption) is what this reissue meets.
      const feeSigned = await teeSign(a, tee.id, op.legs[1]!)
      await backdateHolds(a)
      await withSql(Effect.orDie(sql`UPDATE sign_claims SET expires_at = ${new Date(Date.now() - 3_600_000)} WHERE account_id = ${a.caller.accountId}`))
      await sweepNow()
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      await withSql(Effect.orDie(sql`UPDATE spend_reservations SET state = 'released', settled_at = ${new Date()} WHERE key_id = ${a.caller.keyId}`))
      const treasury = getAddress(op.legs[1]!.to)
      const pcl = publicClientOf(localnet)
      const code = await pcl.getCode({ address: treasury })
      const feeBlock = (await pcl.getBlockNumber()) + 1n
      await tc.setCode({ address: treasury, bytecode: `0x63${feeBlock.toString(16).padStart(8, "0")}4314600b57005b60006000fd` })
      await setTxLimit(a, spendUsd - 1n)
      const refused = await run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, signedTransaction: feeSigned })).finally(() =>
        tc.setCode({ address: treasury, bytecode: code ?? "0x" })
      )
      // createCurve landed: the self-signed confirm's LAUNCH_FAILED, retryable, the gate's reason and resetsAt in details (launch spec 7).
      expect(Either.isLeft(refused) && [refused.left.reason, refused.left.retryable, refused.left.details?.reason]).toEqual(["launch_failed", true, "tx_limit_reached"])
      expect(Either.isLeft(refused) && typeof refused.left.details?.resetsAt).toBe("number")
      expect((await holds(a)).map((h) => h.state)).toEqual(["released"])
      // A `never` window (the gate's refusal not retryable) and a lowered per-asset cap (SPEND_LIMIT_EXCEEDED at a build): still LAUNCH_FAILED, retryable.
      await withSql(Effect.orDie(sql`UPDATE agent_keys SET tx_limit_reset = 'never' WHERE id = ${a.caller.keyId}`))
      const never = await confirm()
      expect(Either.isLeft(never) && [never.left.reason, never.left.retryable, never.left.details?.reason]).toEqual(["launch_failed", true, "tx_limit_reached"])
      await setTxLimit(a, spendUsd)
      await withSql(Effect.orDie(sql`UPDATE agent_keys SET spend_limits = ${JSON.stringify([{ asset: "eth", maxPerTxRaw: (spendRaw - 1n).toString() }])}::jsonb WHERE id = ${a.caller.keyId}`))
      const capped = await confirm()
      expect(Either.isLeft(capped) && [capped.left.reason, capped.left.retryable, capped.left.details?.reason]).toEqual(["launch_failed", true, "spend_limit_exceeded"])
      expect(Either.isLeft(capped) && capped.left.details?.spendLimit).toBeDefined()
      expect((await holds(a)).map((h) => h.state)).toEqual(["released"])
      await withSql(Effect.orDie(sql`UPDATE agent_keys SET spend_limits = NULL WHERE id = ${a.caller.keyId}`))
      const reissued = await confirm()
      if (Either.isLeft(reissued)) throw new Error(`reissue refused: ${reissued.left.reason} ${reissued.left.message}`)
      const next = (reissued.right as { operation: HoodOperation }).operation
      expect(next.legs.map((l) => [l.kind, l.status])).toEqual([["createCurve", "mined"], ["feeTransfer", "pending"], ["devBuy", "pending"]])
      expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
      expect(Either.isRight(await confirm(next.legs[1]!))).toBe(true)
      expect(Either.isRight(await confirm(next.legs[2]!))).toBe(true)
      expect((await holds(a)).map((h) => h.state)).toEqual(["booked"])
    })

    describe("the pending next leg decided from its sign claim at each confirm (an agent late past the claim's lifetime)", () => {
      const backdateClaim = (claimId: string) => withSql(Effect.orDie(sql`UPDATE sign_claims SET expires_at = ${new Date(Date.now() - 3_600_000)} WHERE id = ${claimId}`))
      const operationOf = (r: Either.Either<unknown, LaunchError>) => {
        if (Either.isLeft(r)) throw new Error(`confirm refused: ${r.left.reason} ${r.left.message} ${JSON.stringify(r.left.details)}`)
        return (r.right as { operation: HoodOperation }).operation
      }
      const relaySigns = (a: Agent, walletId: string, leg: { claimId: string; unsignedTransaction: string }) =>
        Effect.runPromise(Effect.either(wallets.signClaimed(a.caller.principal, walletId, { claimId: leg.claimId, transaction: Buffer.from(leg.unsignedTransaction.slice(2), "hex") })))

      /** A TEE launch with a dev buy whose createCurve and fee legs landed; its buy leg still pending on its claim. */
      const buyLegPending = async () => {
        const built = await teeBuyBuilt()
        for (const leg of built.op.legs.slice(0, 2)) expect(Either.isRight(await built.confirm(leg))).toBe(true)
        return built
      }
      /** The same, the buy leg's claim then expired unsigned. */
      const buyLegLapsed = async () => {
        const pending = await buyLegPending()
        await backdateClaim(pending.op.legs[2]!.claimId)
        return pending
      }
      type Confirm = () => Promise<Either.Either<unknown, LaunchError>>
      /** The key's window one micro-dollar short of the buy: the reissue is refused (LAUNCH_FAILED, retryable: createCurve landed). */
      const refusedPastLimit = async (a: Agent, confirm: Confirm) => {
        await setTxLimit(a, spendUsd - 1n)
        const refused = await confirm()
        expect(Either.isLeft(refused) && [refused.left.reason, refused.left.retryable, refused.left.details?.reason]).toEqual(["launch_failed", true, "tx_limit_reached"])
      }
      /** The window fits the buy again: the dev-buy leg is reissued at its nonce with a new claim (createCurve and the fee mined). */
      const buyReissued = async (a: Agent, op: HoodOperation, confirm: Confirm) => {
        await setTxLimit(a, spendUsd)
        const next = operationOf(await confirm())
        expect(next.legs.map((l) => [l.kind, l.status, l.nonce])).toEqual([
          ["createCurve", "mined", op.legs[0]!.nonce],
          ["feeTransfer", "mined", op.legs[1]!.nonce],
          ["devBuy", "pending", op.legs[2]!.nonce]
        ])
        expect(next.legs[2]!.claimId).not.toBe(op.legs[2]!.claimId)
        return next
      }

      it("the fee leg's claim expired unsigned after createCurve landed: the next confirm reissues it at the same nonce (the old claim never signable), it signs and the launch records, booked once", async () => {
        const { a, tee, build, op, confirm } = await teeBuyBuilt()
        expect(operationOf(await confirm(op.legs[0]!)).nextLeg).toBe(1)
        await backdateClaim(op.legs[1]!.claimId)
        expect(Either.isLeft(await relaySigns(a, tee.id, op.legs[1]!))).toBe(true)
        const next = operationOf(await confirm())
        expect(next.legs.map((l) => [l.kind, l.status, l.nonce])).toEqual([
          ["createCurve", "mined", op.legs[0]!.nonce],
          ["feeTransfer", "pending", op.legs[1]!.nonce],
          ["devBuy", "pending", op.legs[2]!.nonce]
        ])
        expect(next.legs[1]!.claimId).not.toBe(op.legs[1]!.claimId)
        expect(next.legs[2]!.claimId).toBe(op.legs[2]!.claimId)
        expect(await claimState(op.legs[1]!.claimId)).toBe("expired")
        // The old claim is never signable; a confirm again reissues nothing more (the new claim can be signed).
        expect(Either.isLeft(await relaySigns(a, tee.id, op.legs[1]!))).toBe(true)
        expect(operationOf(await confirm()).legs[1]!.claimId).toBe(next.legs[1]!.claimId)
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        expect(operationOf(await confirm(next.legs[1]!)).nextLeg).toBe(2)
        const done = await confirm(next.legs[2]!)
        expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("the fee leg's claim expired unsigned with the buy still to sign and the hold swept: the fee is reissued only once the buy's hold is reserved again, then the buy; held once, booked once", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const build = await buildBuy(a, b)
        const op = build.operation!
        const confirm = async (leg?: { claimId: string; unsignedTransaction: string }) =>
          run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(leg === undefined ? {} : { signedTransaction: await teeSign(a, tee.id, leg) }) }))
        expect(operationOf(await confirm(op.legs[0]!)).nextLeg).toBe(1)
        await backdateClaim(op.legs[1]!.claimId)
        await backdateClaim(op.legs[2]!.claimId)
        await backdateHolds(a)
        await sweepNow()
        expect((await holds(a)).map((h) => h.state)).toEqual(["released"])
        // A bare confirm: the fee's claim is reissued at its nonce, the buy's hold reserved again first (it was stuck on `hold_released` before).
        const next = operationOf(await confirm())
        expect(next.legs.map((l) => [l.kind, l.status, l.nonce])).toEqual([
          ["createCurve", "mined", op.legs[0]!.nonce],
          ["feeTransfer", "pending", op.legs[1]!.nonce],
          ["devBuy", "pending", op.legs[2]!.nonce]
        ])
        expect(next.legs[1]!.claimId).not.toBe(op.legs[1]!.claimId)
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        // The fee signs; the buy's claim had expired too: the next confirm reissues it, it signs and the launch records once.
        const afterFee = operationOf(await confirm(next.legs[1]!))
        expect(afterFee.nextLeg).toBe(2)
        const buyLeg = afterFee.legs[2]!.claimId === op.legs[2]!.claimId ? operationOf(await confirm()).legs[2]! : afterFee.legs[2]!
        expect(buyLeg.claimId).not.toBe(op.legs[2]!.claimId)
        const done = await confirm(buyLeg)
        expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("the buy leg's claim expired unsigned and its hold swept: reissued at the same nonce only once the hold is reserved again (refused past the limit: nothing reissued); held once, booked once", async () => {
        const { a, b, build, op, confirm } = await buyLegLapsed()
        await backdateHolds(a)
        await sweepNow()
        expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "released"]])
        // The window no longer fits the buy: the reissue is refused (LAUNCH_FAILED, retryable: createCurve landed), nothing reissued or held.
        await refusedPastLimit(a, confirm)
        expect((await holds(a)).map((h) => h.state)).toEqual(["released"])
        expect(await claimState(op.legs[2]!.claimId)).toBe("expired")
        const next = await buyReissued(a, op, confirm)
        expect((await holds(a)).map((h) => [h.id, h.state, h.usd])).toEqual([[holdIdOf(a, b, 1), "held", spendUsd.toString()]])
        const expiry = await withSql(Effect.orDie(sql<{ hold: Date; claim: Date }>`
          SELECT r.expires_at AS hold, (SELECT expires_at FROM sign_claims WHERE id = ${next.legs[2]!.claimId}) AS claim FROM spend_reservations r WHERE r.id = ${holdIdOf(a, b, 1)}`))
        expect(new Date(expiry[0]!.hold).getTime()).toBeGreaterThanOrEqual(new Date(expiry[0]!.claim).getTime())
        // A confirm again holds nothing more and reissues nothing more.
        expect(operationOf(await confirm()).legs[2]!.claimId).toBe(next.legs[2]!.claimId)
        const done = await confirm(next.legs[2]!)
        expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("the buy leg's claim expired unsigned, its hold still held but taken before the key's daily window reset: the reissue decides it anew in today's window (refused past the limit: nothing reissued, the hold as it was), then moves it into today's window; booked once", async () => {
        const { a, b, build, op, confirm } = await buyLegLapsed()
        // The hold was taken yesterday (before today's UTC day start) and is still held: it weighs nothing in today's window.
        const yesterday = new Date(Date.now() - 25 * 3_600_000)
        await withSql(Effect.orDie(sql`UPDATE spend_reservations SET created_at = ${yesterday} WHERE id = ${holdIdOf(a, b, 1)}`))
        const heldAt = () =>
          withSql(Effect.orDie(sql<{ state: string; created: Date; usd: string }>`
            SELECT state, created_at AS created, usd_micros::text AS usd FROM spend_reservations WHERE id = ${holdIdOf(a, b, 1)}`)).then((r) => r[0]!)
        const windowUsed = () => withSql(Effect.orDie(windowUsedUsdMicros(a.caller.keyId, "daily", Date.now())))
        expect(await windowUsed()).toBe(0n)
        // Today's window no longer fits the buy: the reissue is refused (LAUNCH_FAILED, retryable: createCurve landed); the hold is left in yesterday's window, unextended.
        await refusedPastLimit(a, confirm)
        expect(await heldAt()).toMatchObject({ state: "held", usd: spendUsd.toString() })
        expect(new Date((await heldAt()).created).getTime()).toBe(yesterday.getTime())
        expect(await claimState(op.legs[2]!.claimId)).toBe("expired")
        // It fits: the hold moves into today's window (the window now holds it) and the buy is reissued at the same nonce.
        const next = await buyReissued(a, op, confirm)
        expect(await heldAt()).toMatchObject({ state: "held", usd: spendUsd.toString() })
        expect(new Date((await heldAt()).created).getTime()).toBeGreaterThan(yesterday.getTime() + 3_600_000)
        expect(await windowUsed()).toBe(spendUsd)
        // A confirm again reissues nothing more (the new claim can be signed) and the window holds the buy once.
        expect(operationOf(await confirm()).legs[2]!.claimId).toBe(next.legs[2]!.claimId)
        expect(await windowUsed()).toBe(spendUsd)
        const done = await confirm(next.legs[2]!)
        expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("a buy leg the relay signed and the agent never handed back, past its claim's lifetime: never reissued while those bytes can land; sent by the agent and mined, a bare confirm records it Landed and books once", async () => {
        const { a, tee, build, op, confirm } = await buyLegPending()
        const buySigned = await teeSign(a, tee.id, op.legs[2]!)
        await backdateClaim(op.legs[2]!.claimId)
        await backdateHolds(a)
        await sweepNow()
        const kept = operationOf(await confirm())
        expect(kept.legs[2]).toMatchObject({ status: "pending", claimId: op.legs[2]!.claimId, nonce: op.legs[2]!.nonce })
        expect(await claimState(op.legs[2]!.claimId)).toBe("signed")
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        const pcl = publicClientOf(localnet)
        const buyHash = await pcl.sendRawTransaction({ serializedTransaction: buySigned as Hex })
        expect((await pcl.waitForTransactionReceipt({ hash: buyHash, pollingInterval: 20 })).status).toBe("success")
        const done = await confirm()
        expect(Either.isRight(done) && done.right).toMatchObject({ mint: build.mint, devBuy: { outcome: "landed", signature: buyHash } })
        expect(await tokenRows(build.mint)).toHaveLength(1)
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("the buy leg's claim expired unsigned, its hold past its expiry but not swept yet: the hold is extended before the new claim, so a sweep while the claim is recorded leaves it held; a second at-limit buy is refused; booked once", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const op = (await buildBuy(a, b)).operation!
        const confirmWith = async (s: HoodSelfLaunch.HoodSelfLaunchShape, leg?: { claimId: string; unsignedTransaction: string }) =>
          run(s.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(leg === undefined ? {} : { signedTransaction: await teeSign(a, tee.id, leg) }) }))
        for (const leg of op.legs.slice(0, 2)) expect(Either.isRight(await confirmWith(svc, leg))).toBe(true)
        await backdateClaim(op.legs[2]!.claimId)
        await backdateHolds(a)
        // The sweep (every 10 s) has not run yet: the hold is still held, past its expiry.
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        // A service whose claim record runs the sweep first: the sweep lands between the hold's decision and the new claim.
        const racing = await teeService(true, { ...wallets, recordBuilt: (input) => Effect.flatMap(Effect.promise(() => sweepNow()), () => wallets.recordBuilt(input)) })
        const next = operationOf(await confirmWith(racing))
        expect(next.legs[2]!.claimId).not.toBe(op.legs[2]!.claimId)
        expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "held"]])
        // The window still carries the first buy: a second launch's at-limit buy on the same key is refused.
        const second = await run(svc.build(a.caller, body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })))
        expect(Either.isLeft(second) && second.left.reason).toBe("key_limit_reached")
        const done = await confirmWith(svc, next.legs[2]!)
        expect(Either.isRight(done) && done.right).toMatchObject({ devBuy: { outcome: "landed" } })
        expect((await holds(a)).map((h) => [h.state, h.usd])).toEqual([["booked", spendUsd.toString()]])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })

      it("three confirms at once on the buy leg's expired claim (hold swept): none answers the dead claim as the leg to sign; one reissue, held once, booked once", async () => {
        const a = await agent()
        const tee = await teeWallet(a)
        await setTxLimit(a, spendUsd)
        const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
        const op = (await buildBuy(a, b)).operation!
        const confirm = async (leg?: { claimId: string; unsignedTransaction: string }) =>
          run(svc.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, operationId: op.operationId, ...(leg === undefined ? {} : { signedTransaction: await teeSign(a, tee.id, leg) }) }))
        for (const leg of op.legs.slice(0, 2)) expect(Either.isRight(await confirm(leg))).toBe(true)
        await backdateClaim(op.legs[2]!.claimId)
        await backdateHolds(a)
        await sweepNow()
        const answers = await Promise.all([confirm(), confirm(), confirm()])
        // Each answer is the reissued operation or a retryable failure; never the old, expired claim as the next leg.
        for (const r of answers) {
          if (Either.isLeft(r)) expect(r.left.retryable).toBe(true)
          else expect((r.right as { operation: HoodOperation }).operation.legs[2]!.claimId).not.toBe(op.legs[2]!.claimId)
        }
        const next = operationOf(await confirm())
        for (const r of answers) if (Either.isRight(r)) expect((r.right as { operation: HoodOperation }).operation.legs[2]!.claimId).toBe(next.legs[2]!.claimId)
        expect((await holds(a)).map((h) => h.state)).toEqual(["held"])
        expect(Either.isRight(await confirm(next.legs[2]!))).toBe(true)
        expect((await holds(a)).map((h) => h.state)).toEqual(["booked"])
        expect(await usage(a)).toEqual([{ usd: spendUsd.toString(), trades: 1, launches: 1 }])
      })
    })

    it("two builds of one clientLaunchId racing hold once: one ledger row, one hold", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 2n * spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      const answers = await Promise.all([run(svc.build(a.caller, b)), run(svc.build(a.caller, b))])
      expect(answers.some((r) => Either.isRight(r) && r.right._tag === "Built")).toBe(true)
      expect((await holds(a)).map((h) => [h.id, h.state])).toEqual([[holdIdOf(a, b, 1), "held"]])
      expect(await ledgerRows(a)).toEqual([{ id: b.request.clientLaunchId }])
    })

    it("a hold the sweep released is held again against the key that built the launch, whichever key of the account confirms", async () => {
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, spendUsd)
      const b = body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })
      await buildBuy(a, b)
      // A second key of the account whose window cannot fit the buy confirms (its key id and prefix on the caller).
      const keyB = { id: `${a.caller.keyId}-b`, prefix: `b${a.caller.keyPrefix.slice(1)}` }
      await withSql(
        insertKey(
          {
            id: keyB.id, prefix: keyB.prefix, accountId: a.caller.accountId, hash: `hash-${keyB.id}`, environment: "production", scopes: a.caller.principal.scopes, label: null,
            rateLimitPerMin: 300, dailyLaunchCap: 0, launchChains: ["hood"], embeddedWallet: "denied", expiresAtMs: null, txLimit: { usdMicros: 1, reset: "daily" },
            mintedByDeviceId: null, provisionedBy: null
          },
          Date.now()
        )
      )
      const callerB: SelfCaller = { ...a.caller, keyId: keyB.id, keyPrefix: keyB.prefix, principal: { ...a.caller.principal, keyId: keyB.id, keyPrefix: keyB.prefix } }
      const config: HoodSelfLaunch.HoodSelfLaunchConfig = {
        chain: localnet.chain,
        rpcUrl: localnet.rpcUrl,
        factory: localnet.addresses.factory,
        bondingCurveBytecode: localnet.artifacts.BondingCurve.bytecode,
        baseUrl: BASE_URL,
        exclusiveHolderPassRaw: 1n,
        teeLaunchBuysEnabled: true
      }
      const ctx: HoodSelfContext = {
        config,
        deps: { ledger, images, wallets, holdings: () => Effect.succeed(0n), agentLaunches: registry, prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT) },
        withSql: (self) => Effect.provideService(self, SqlClient.SqlClient, sql),
        chain: makeHoodSelfChain(config)
      }
      const spend = makeHoodSelfSpend(ctx)
      const stored = await Effect.runPromise(makeHoodSelfAttempts(ctx, spend).storedOf({ accountId: a.caller.accountId, clientLaunchId: b.request.clientLaunchId, attempt: 1 }))
      const id = holdIdOf(a, b, 1)
      await withSql(Effect.orDie(sql`UPDATE spend_reservations SET state = 'released', settled_at = ${new Date()} WHERE id = ${id}`))
      const again = await run(spend.holdAgain(callerB, stored!))
      if (Either.isLeft(again)) throw new Error(`held again refused: ${again.left.reason} ${JSON.stringify(again.left.details)}`)
      const row = await withSql(Effect.orDie(sql<{ state: string; owner: string }>`SELECT state, key_id AS owner FROM spend_reservations WHERE id = ${id}`))
      expect(row.map((r) => [r.state, r.owner])).toEqual([["held", a.caller.keyId]])
    })

    it("no ETH price: a key with a txLimit fails closed at build (KEY_LIMIT_REACHED, limit_unavailable, retryable) and records nothing", async () => {
      const noPrice = await withSql(
        HoodSelfLaunch.make(
          {
            chain: localnet.chain,
            rpcUrl: localnet.rpcUrl,
            factory: localnet.addresses.factory,
            bondingCurveBytecode: localnet.artifacts.BondingCurve.bytecode,
            baseUrl: BASE_URL,
            exclusiveHolderPassRaw: 1n,
            teeLaunchBuysEnabled: true
          },
          { ledger, images, wallets, holdings: () => Effect.succeed(0n), agentLaunches: registry, prices: fixedPriceSource({ usdg: "1" }) }
        )
      )
      const a = await agent()
      const tee = await teeWallet(a)
      await setTxLimit(a, 1_000n * spendUsd)
      const refused = await run(noPrice.build(a.caller, body(a, { linkedWalletId: tee.id, buyAmount: BUY.toString() })))
      expect(Either.isLeft(refused) && [refused.left.reason, refused.left.retryable, refused.left.details?.reason]).toEqual(["key_limit_reached", true, "limit_unavailable"])
      expect([await holds(a), await ledgerRows(a), await buildRows(a), await claims(a)]).toEqual([[], [], [], [{ n: 0 }]])
    })
  })
})
