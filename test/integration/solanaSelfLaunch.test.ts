/**
 * The Solana self-signed launch service against real components: the Solana localnet over its
 * sockets (this file produces its slots, so a test can let a blockhash expire), PostgreSQL
 * (PGlite) with every migration, the local wallet provider and the wallet service (an imported
 * wallet, HPKE-sealed as a client does it; the sign relay with its P-256 authorization), the
 * launch ledger, the image service and the Solana launch service. The Effect clock of the launch
 * services is the test's (`clock.ms`), so the 30-minute sweep can be reached; the wallet service
 * keeps real time.
 *
 * Pinned: a build is the attempt's transaction with the payer's slot empty, stored with a
 * `hidden` token row and a single-use claim; the relay signs it once; the agent broadcasts; confirm
 * verifies and promotes the token row. Then 3.3 produced for real (a live build answers the same
 * transaction and writes nothing, a landed one `prior_attempt_on_chain`, a dead one a new
 * transaction), confirm's refusals (`SIGNER_MISMATCH`, another transaction, not landed yet, never
 * lands), the sweep and a swept build confirmed at the cap, and the gates that record nothing.
 *
 * The self-signed transitions, by the test that produces each (the pure tables are pinned in
 * `LaunchLedgerMachine.test.ts`, `SelfBuildRules.test.ts` and `HoodOperation.test.ts`; Hood's
 * in `hood.selfLaunch.test.ts`):
 *   3.2  build → token row hidden; confirm verified → promoted to the requested visibility ... "builds the attempt's transaction ..."
 *   3.1  (none) → submitted at build, one slot; submitted → confirmed at confirm .............. "builds the attempt's transaction ...", "concurrent confirms ..."
 *   3.3  live build, repeat → the same transaction, nothing written ........................... "a live build answers the same transaction ..."
 *   3.3  landed, repeat → 409 prior_attempt_on_chain with the mint ............................ "a landed build that was not confirmed ..."
 *   3.3  proven dead, repeat → a new transaction, mint, expiresAt (Rebuilt: attempt + 1) ....... "a build proven dead ..."
 *   3.3  chain unreadable → LAUNCH_FAILED chain_read_failed, nothing written .................. "the chain unreadable ..."
 *   3.3  swept and still able to land, repeat → 409 prior_attempt_in_flight, retryAfter ....... "a swept build that can still land ..."
 *   3.3  TEE, signed and able to land, repeat → 409 prior_attempt_in_flight .................. "launches from the TEE wallet ..."
 *   3.1  submitted older than 30 minutes → failed SELF_BUILD_EXPIRED at the next build, refund . "fails the caller's own old builds ..."
 *   3.1  failed (swept) → confirmed from its landed signature, slot taken again at the cap ..... "fails the caller's own old builds ..."
 *   confirm: not found while it can land → retryable VALIDATION_FAILED; dead → JOB_NOT_FOUND ... "a build proven dead ..."
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  address,
  appendTransactionMessageInstructions,
  createKeyPairFromPrivateKeyBytes,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressFromPublicKey,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  createSignerFromKeyPair
} from "@solana/kit"
import { Clock, Context, Duration, Effect, Either, Exit, Layer, Redacted, Scope } from "effect"
import { webcrypto } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentLaunches } from "../../actors/AgentLaunches.js"
import { getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import { decodeCurve } from "../../src/chain/solana/program/accounts/Curve.js"
import { findCurveAddresses } from "../../src/chain/solana/client/CurveInstructions.js"
import * as Database from "../../src/db/Database.js"
import { DefaultDevBuyCeilings } from "../../src/domain/Economics.js"
import { type Plan, resolvePlans } from "../../src/domain/Plans.js"
import { insertAccount } from "../../src/services/accounts/AccountRepository.js"
import { insertKey, updateKey } from "../../src/services/keys/KeyRepository.js"
import * as ImageService from "../../src/services/images/ImageService.js"
import * as LaunchLedger from "../../src/services/launch/LaunchLedger.js"
import type { LaunchError } from "../../src/services/launch/LaunchError.js"
import { decodeSelfLaunchRequest, type SelfLaunchBody } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import * as SolanaLaunch from "../../src/services/launch/SolanaLaunch.js"
import { fixedPriceSource, LOCALNET_USD_PRICES_DEFAULT } from "../../src/services/prices/PriceSource.js"
import * as SolanaSelfLaunch from "../../src/services/launch/SolanaSelfLaunch.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import type { KeyInfo, Principal } from "../../src/services/wallets/Principal.js"
import * as WalletProvider from "../../src/services/wallets/WalletProvider.js"
import * as WalletService from "../../src/services/wallets/WalletService.js"
import { eventually } from "../support/eventually.js"
import { sealForImport } from "../support/hpkeSealer.js"
import { solidImage } from "../support/testImages.js"
import { launchFailureCode, launchFailureCodesLayer } from "../../api/LaunchCodes.js"

const SOL = 1_000_000_000n
const MINT_SECRET = Redacted.make(new Uint8Array(32).fill(11))
const BASE_URL = "https://curvestream.test"
const plans = resolvePlans({}, 30)
const planOf = (id: "free" | "pro" | "max"): Plan => plans.find((p) => p.id === id)!

let scope: Scope.CloseableScope
let net: SolanaLocalnetShape
let sql: SqlClient.SqlClient
let wallets: WalletService.WalletServiceShape
let images: ImageService.ImageServiceShape
let ledger: LaunchLedger.LaunchLedgerShape
let service: SolanaSelfLaunch.SolanaSelfLaunchShape
/** The same service with `TEE_LAUNCH_BUYS_ENABLED` on (a TEE wallet may carry a dev buy). */
let teeBuysService: SolanaSelfLaunch.SolanaSelfLaunchShape
let registry: AgentLaunches
let producer: ReturnType<typeof setInterval>
const producing = { on: true }
/** The launch services' clock (epoch ms); the wallet service keeps real time. */
const clock = { offsetMs: 0 }
const keys: Array<KeyInfo> = []

const testClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => Date.now() + clock.offsetMs,
  currentTimeMillis: Effect.sync(() => Date.now() + clock.offsetMs),
  unsafeCurrentTimeNanos: () => BigInt(Date.now() + clock.offsetMs) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(Date.now() + clock.offsetMs) * 1_000_000n),
  sleep: (d: Duration.Duration) => Effect.sleep(d).pipe(Effect.withClock(Clock.make()))
} as unknown as Clock.Clock

const run = <A>(effect: Effect.Effect<A, LaunchError>) => Effect.runPromise(Effect.either(Effect.withClock(effect, testClock)))

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  // The real wallet service and local provider over one `Database.layerTest`; the key directory is this file's.
  const walletLayer = Layer.mergeAll(
    WalletService.layerTest({
      keys: { findByPrefix: (accountId, prefix) => Effect.succeed(keys.find((k) => k.accountId === accountId && k.keyPrefix === prefix)) }
    }),
    WalletProvider.layerTest,
    Database.layerTest
  )
  const stack = Layer.mergeAll(walletLayer, SolanaLocalnet.layer({ manualSlots: true }))
  const context = await Effect.runPromise(Layer.buildWithScope(stack, scope))
  net = Context.get(context, SolanaLocalnet)
  sql = Context.get(context, SqlClient.SqlClient)
  wallets = Context.get(context, WalletService.WalletService)
  const withSql = <A>(e: Effect.Effect<A, never, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))
  images = await withSql(ImageService.make({ publicBaseUrl: BASE_URL }))
  ledger = await withSql(LaunchLedger.make.pipe(Effect.provide(launchFailureCodesLayer)))
  const solana = await Effect.runPromise(
    SolanaLaunch.make({ rpcUrl: net.rpcUrl, mintSecret: MINT_SECRET, treasury: TREASURY_ADDRESS, pollIntervalMs: 20 }).pipe(
      Effect.provideService(WalletProvider.WalletProvider, Context.get(context, WalletProvider.WalletProvider))
    )
  )
  registry = new AgentLaunches()
  const config: SolanaSelfLaunch.SolanaSelfLaunchConfig = { baseUrl: BASE_URL, solanaExplorerUrl: "https://explorer.test", exclusiveHolderPassRaw: 1n, teeLaunchBuysEnabled: false, slotMs: 40 }
  const deps: SolanaSelfLaunch.SolanaSelfLaunchDeps = { ledger, images, solana, wallets, holdings: () => Effect.succeed(0n), agentLaunches: registry, prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT) }
  service = await withSql(SolanaSelfLaunch.make(config, deps))
  teeBuysService = await withSql(SolanaSelfLaunch.make({ ...config, teeLaunchBuysEnabled: true }, deps))
  producer = setInterval(() => {
    if (producing.on) net.ledger.advanceSlot()
  }, 40)
}, 60_000)

afterAll(async () => {
  clearInterval(producer)
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const query = <A extends object>(q: (s: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) => Effect.runPromise(Effect.orDie(q(sql)))

interface Agent {
  readonly caller: SolanaSelfLaunch.SelfCaller
  readonly walletId: string
  readonly address: string
  readonly keyPair: webcrypto.CryptoKeyPair
  readonly authorize: (bytes: Uint8Array) => Promise<Uint8Array>
  readonly imageUrl: string
}

let accounts = 0

/** A Pro (or `plan`) account with an agent key and an imported Solana wallet funded with `sol` SOL. */
const agent = async (options: { plan?: Plan; sol?: bigint; spendLimits?: KeyInfo["spendLimits"] } = {}): Promise<Agent> => {
  const n = ++accounts
  const plan = options.plan ?? planOf("pro")
  const keyId = `kid-self-${n}`
  const keyPrefix = `s${String(n).padStart(7, "0")}`
  // The account and its key are real rows (usage and fee totals reference them).
  const account = await Effect.runPromise(Effect.provideService(insertAccount({ plan: plan.id, agentEnabled: true, isAdmin: false }, Date.now()), SqlClient.SqlClient, sql))
  const accountId = account.id
  await Effect.runPromise(
    Effect.provideService(
      insertKey(
        {
          id: keyId, prefix: keyPrefix, accountId, hash: `hash-${n}`, environment: "production", scopes: ["launch:write", "launch:read", "swap:write", "account:read"],
          label: null, rateLimitPerMin: 300, dailyLaunchCap: 0, launchChains: ["solana"], embeddedWallet: "denied", expiresAtMs: null, txLimit: null,
          mintedByDeviceId: null, provisionedBy: null
        },
        Date.now()
      ),
      SqlClient.SqlClient,
      sql
    )
  )
  const principal: Principal = {
    accountId,
    plan: plan.id,
    credential: "agentKey",
    keyId,
    keyPrefix,
    scopes: ["launch:write", "launch:read", "swap:write", "account:read"],
    environment: "production",
    embeddedWallet: "denied",
    devicePrefix: null
  }
  keys.push({
    keyId, keyPrefix, accountId, label: null, environment: "production", scopes: principal.scopes, revokedAtMs: null, expiresAtMs: null,
    paused: false, walletScope: "all", spendLimits: options.spendLimits ?? null
  })
  // A webhook endpoint for the launch events, so the outbox records them (one delivery row each).
  await query((q) => q`
    INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
    VALUES (${`whe-${n}`}, ${accountId}, 'https://hooks.test/launch', ${JSON.stringify(["launch.confirmed", "launch.failed"])}::jsonb, 'sealed', 'whsec_00', 'active', now())
    RETURNING id`)
  // The wallet is imported on a linking plan (Pro) whatever plan the test then launches with.
  const importer: Principal = { ...principal, plan: "pro" }
  const seed = webcrypto.getRandomValues(new Uint8Array(32))
  const pair = await createKeyPairFromPrivateKeyBytes(seed, true)
  const walletAddress = await getAddressFromPublicKey(pair.publicKey)
  const init = await Effect.runPromise(wallets.importInit(importer, "solana", walletAddress))
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.encryptionPublicKey, "base64")), await exportSecretText("solana", seed))
  const signer = (await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair
  const spki = new Uint8Array(await webcrypto.subtle.exportKey("spki", signer.publicKey))
  const view = await Effect.runPromise(wallets.importSubmit(importer, { ciphertext: sealed.ciphertext, encapsulatedKey: sealed.enc, signerSpki: spki }))
  if ((options.sol ?? 5n) > 0n) expect(net.ledger.requestAirdrop(address(walletAddress), (options.sol ?? 5n) * SOL)).toMatchObject({ err: null })
  const hosted = await Effect.runPromise(
    Effect.provideService(images.upload({ accountId, keyId, uploadsPerMin: 100, bytes: await solidImage("png", 64, 64) }), SqlClient.SqlClient, sql)
  )
  return {
    caller: { accountId, keyId, keyPrefix, keyDailyCap: 0, plan, spendLimits: (options.spendLimits ?? null) as SolanaSelfLaunch.SelfCaller["spendLimits"], principal },
    walletId: view.id,
    address: walletAddress,
    keyPair: pair,
    authorize: async (bytes) => new Uint8Array(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.privateKey, bytes)),
    imageUrl: hosted.url
  }
}

let ids = 0
const body = (a: Agent, fields: Record<string, unknown> = {}): SelfLaunchBody => {
  const decoded = decodeSelfLaunchRequest(
    { clientLaunchId: `self-${++ids}`, name: "Self Test", symbol: "SELF", imageUrl: a.imageUrl, linkedWalletId: a.walletId, ...fields },
    { keyEnvironment: "production" },
    { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: `${BASE_URL}/api/v1/uploads/images/` }
  )
  if (Either.isLeft(decoded)) throw new Error(`body refused: ${decoded.left.message}`)
  return decoded.right
}

const built = async (a: Agent, b: SelfLaunchBody) => {
  const r = await run(service.build(a.caller, b))
  if (Either.isLeft(r)) throw new Error(`build refused: ${r.left.reason} ${r.left.message}`)
  if (r.right._tag !== "Built") throw new Error("build replayed")
  return r.right.build
}

/** Signs the build through the relay (the imported wallet's signer authorizes the bytes) and broadcasts it. */
const signAndSend = async (a: Agent, build: SolanaSelfLaunch.SelfBuild) => {
  const tx = new Uint8Array(getBase64Encoder().encode(build.transaction))
  const signed = await Effect.runPromise(
    wallets.signClaimed(a.caller.principal, a.walletId, { claimId: build.signClaim.claimId, transaction: tx, authorizationSignature: await a.authorize(tx) })
  )
  await createSolanaRpc(net.rpcUrl).sendTransaction(signed.signedTransaction as never, { encoding: "base64" }).send()
  await eventually(async () => (await createSolanaRpc(net.rpcUrl).getSignatureStatuses([signed.signature as never]).send()).value[0]?.confirmationStatus === "confirmed" || undefined, {
    what: "the self-signed launch to confirm",
    intervalMs: 20
  })
  return signed.signature
}

const ledgerRow = (a: Agent, id: string) => Effect.runPromise(ledger.get({ accountId: a.caller.accountId, clientLaunchId: id }).pipe(Effect.orDie))

const tokenRow = (mint: string) =>
  query((s) => s<{ visibility: string; confirmed_at: Date | null; path: string }>`SELECT visibility, confirmed_at, path FROM launched_tokens WHERE chain = 'solana' AND mint = ${mint}`)

const buildRows = (a: Agent, id: string) =>
  query((s) => s<{ attempt: number }>`SELECT attempt FROM self_launch_builds WHERE account_id = ${a.caller.accountId} AND client_launch_id = ${id} ORDER BY attempt`)

const events = (a: Agent, type: string) =>
  query((s) => s<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = ${a.caller.accountId} AND event = ${type}`).then((r) => r[0]!.n)

/** Lets the chain pass `lastValidBlockHeight` of a build (slots are 40 ms; 150 of them make a blockhash's life). */
const outlive = async (lvbhHeight: () => Promise<bigint>) => {
  const target = await lvbhHeight()
  await eventually(async () => ((await createSolanaRpc(net.rpcUrl).getBlockHeight({ commitment: "confirmed" }).send()) > target ? true : undefined), {
    what: "the blockhash to expire",
    intervalMs: 40,
    deadlineMs: 30_000
  })
}

const storedLvbh = (a: Agent, id: string, attempt: number) => () =>
  query((s) => s<{ h: string }>`SELECT last_valid_block_height::text AS h FROM self_launch_builds WHERE account_id = ${a.caller.accountId} AND client_launch_id = ${id} AND attempt = ${attempt}`).then((r) => BigInt(r[0]!.h))

describe("a self-signed Solana launch: build, sign through the relay, broadcast, confirm", () => {
  it("builds the attempt's transaction for the payer, which the relay signs once; confirm verifies it and promotes the token row", async () => {
    const a = await agent()
    const b = body(a, { buyAmount: "100000000", visibility: "production" })
    const build = await built(a, b)
    const unsigned = getTransactionDecoder().decode(getBase64Encoder().encode(build.transaction))
    expect(unsigned.signatures[address(a.address)]).toBeNull()
    expect(unsigned.signatures[address(build.mint)]).not.toBeNull()
    expect(build.fee).toEqual({ bps: 50, feeRaw: "500000", treasury: TREASURY_ADDRESS })
    expect(build.expiresAtMs).toBeGreaterThan(Date.now())
    // 3.2: the token row exists, hidden, before anything is signed; the ledger row holds a slot.
    expect(await tokenRow(build.mint)).toEqual([{ visibility: "hidden", confirmed_at: null, path: "self" }])
    expect(registry.has("solana", build.mint)).toBe(true)
    expect((await ledgerRow(a, b.request.clientLaunchId))?.state).toBe("submitted")

    const signature = await signAndSend(a, build)
    // The relay signs a build once.
    const tx = new Uint8Array(getBase64Encoder().encode(build.transaction))
    const again = await Effect.runPromise(
      Effect.either(wallets.signClaimed(a.caller.principal, a.walletId, { claimId: build.signClaim.claimId, transaction: tx, authorizationSignature: await a.authorize(tx) }))
    )
    expect(Either.isLeft(again) && again.left._tag === "SignClaimError" && again.left.reason).toBe("no_matching_claim")

    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))
    if (Either.isLeft(confirmed)) throw new Error(`confirm refused: ${confirmed.left.reason} ${confirmed.left.message}`)
    expect(confirmed.right).toMatchObject({ chain: "solana", mint: build.mint, pool: build.pool, signature, devBuy: { signature, fee: { feeRaw: "500000" } } })
    const curve = net.ledger.getAccount((await findCurveAddresses(address(build.mint))).curve)
    expect(curve !== undefined && decodeCurve(curve.data)?.creator).toBe(a.address)
    const tokens = await tokenRow(build.mint)
    expect(tokens[0]?.visibility).toBe("production")
    expect(tokens[0]?.confirmed_at).not.toBeNull()
    expect((await ledgerRow(a, b.request.clientLaunchId))?.state).toBe("confirmed")
    expect(await events(a, "launch.confirmed")).toBe(1)

    // A repeat confirm and a repeat build replay the stored result and write nothing.
    const repeatConfirm = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))
    expect(Either.isRight(repeatConfirm) && repeatConfirm.right).toEqual(confirmed.right)
    const repeatBuild = await run(service.build(a.caller, b))
    expect(Either.isRight(repeatBuild) && repeatBuild.right).toEqual({ _tag: "Replay", result: confirmed.right })
    expect(await events(a, "launch.confirmed")).toBe(1)
  })

  it("concurrent confirms of one landed build record it once", async () => {
    const a = await agent()
    const b = body(a)
    const build = await built(a, b)
    const signature = await signAndSend(a, build)
    const answers = await Promise.all(Array.from({ length: 6 }, () => run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))))
    for (const r of answers) expect(Either.isRight(r) && r.right.mint).toBe(build.mint)
    expect(await events(a, "launch.confirmed")).toBe(1)
    expect(await Effect.runPromise(ledger.slotsUsed(a.caller.accountId))).toBe(1)
  })
})

describe("3.3: a repeat build is decided by reading the chain", () => {
  it("a live build answers the same transaction, writing nothing; overlapping first builds return one transaction", async () => {
    const a = await agent()
    const b = body(a)
    const answers = await Promise.all(Array.from({ length: 5 }, () => run(service.build(a.caller, b))))
    const builds = answers.flatMap((r) => (Either.isRight(r) && r.right._tag === "Built" ? [r.right.build] : []))
    expect(builds.length).toBeGreaterThanOrEqual(1)
    for (const x of builds) expect(x).toEqual(builds[0])
    for (const r of answers) if (Either.isLeft(r)) expect([r.left.reason, r.left.retryable]).toEqual(["launch_failed", true])
    expect(await buildRows(a, b.request.clientLaunchId)).toEqual([{ attempt: 1 }])
    const before = await ledgerRow(a, b.request.clientLaunchId)
    const repeat = await built(a, b)
    expect(repeat).toEqual(builds[0])
    expect(await ledgerRow(a, b.request.clientLaunchId)).toEqual(before)
    expect(await Effect.runPromise(ledger.slotsUsed(a.caller.accountId))).toBe(1)
  })

  it("a landed build that was not confirmed answers 409 prior_attempt_on_chain with its mint; confirm then records it", async () => {
    const a = await agent()
    const b = body(a)
    const build = await built(a, b)
    const signature = await signAndSend(a, build)
    const repeat = await run(service.build(a.caller, b))
    expect(Either.isLeft(repeat) && [repeat.left.reason, repeat.left.retryable, repeat.left.details]).toEqual([
      "idempotency_conflict",
      false,
      { reason: "prior_attempt_on_chain", mint: build.mint }
    ])
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))
    expect(Either.isRight(confirmed) && confirmed.right.mint).toBe(build.mint)
  })

  it("a build proven dead (never sent, blockhash expired, no account at its mint) answers a NEW transaction, mint and expiresAt", async () => {
    const a = await agent()
    const b = body(a)
    const first = await built(a, b)
    // Not found yet while it can still land: confirm's not-found is retryable VALIDATION_FAILED.
    const early = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: "1".repeat(64) }))
    expect(Either.isLeft(early) && [early.left.reason, early.left.field, early.left.retryable]).toEqual(["validation_failed", "signature", true])
    await outlive(storedLvbh(a, b.request.clientLaunchId, 1))
    // Dead: confirm's not-found is JOB_NOT_FOUND.
    const late = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: "1".repeat(64) }))
    expect(Either.isLeft(late) && late.left.reason).toBe("job_not_found")
    const second = await built(a, b)
    expect(second.mint).not.toBe(first.mint)
    expect(second.transaction).not.toBe(first.transaction)
    expect(second.expiresAtMs).toBeGreaterThan(first.expiresAtMs)
    expect(await buildRows(a, b.request.clientLaunchId)).toEqual([{ attempt: 1 }, { attempt: 2 }])
    expect((await ledgerRow(a, b.request.clientLaunchId))?.attempt).toBe(2)
    expect(await Effect.runPromise(ledger.slotsUsed(a.caller.accountId))).toBe(1)
    // The new one lands and confirms.
    const signature = await signAndSend(a, second)
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))
    expect(Either.isRight(confirmed) && confirmed.right.mint).toBe(second.mint)
  })

  it("the chain unreadable answers LAUNCH_FAILED chain_read_failed and writes nothing", async () => {
    const a = await agent()
    const b = body(a)
    await built(a, b)
    const before = await ledgerRow(a, b.request.clientLaunchId)
    const blind = await Effect.runPromise(
      Effect.provideService(
        SolanaSelfLaunch.make(
          { baseUrl: BASE_URL, solanaExplorerUrl: "https://explorer.test", exclusiveHolderPassRaw: 1n, teeLaunchBuysEnabled: false },
          {
            ledger,
            images,
            solana: await Effect.runPromise(
              SolanaLaunch.make({ rpcUrl: "http://127.0.0.1:9", mintSecret: MINT_SECRET, treasury: TREASURY_ADDRESS }).pipe(
                Effect.provideService(WalletProvider.WalletProvider, {} as WalletProvider.WalletProviderShape)
              )
            ),
            wallets,
            holdings: () => Effect.succeed(0n),
            agentLaunches: registry,
            prices: fixedPriceSource(LOCALNET_USD_PRICES_DEFAULT)
          }
        ),
        SqlClient.SqlClient,
        sql
      )
    )
    const r = await run(blind.build(a.caller, b))
    expect(Either.isLeft(r) && [r.left.reason, r.left.retryable, r.left.details]).toEqual(["launch_failed", true, { reason: "chain_read_failed" }])
    expect(await ledgerRow(a, b.request.clientLaunchId)).toEqual(before)
  })
})

describe("confirm verifies what the chain shows", () => {
  it("a landed transaction the payer did not sign is SIGNER_MISMATCH; one it signed that is not this launch is VALIDATION_FAILED", async () => {
    const a = await agent()
    const b = body(a)
    await built(a, b)
    const rpc = createSolanaRpc(net.rpcUrl)
    const transfer = async (signerPair: webcrypto.CryptoKeyPair) => {
      const signer = await createSignerFromKeyPair(signerPair)
      const { value: latest } = await rpc.getLatestBlockhash().send()
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(signer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
        (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ from: signer, to: address(TREASURY_ADDRESS), lamports: 1_000n })], m)
      )
      const signed = await signTransactionMessageWithSigners(message)
      await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send()
      const sig = getSignatureFromTransaction(signed)
      await eventually(async () => (await rpc.getSignatureStatuses([sig]).send()).value[0]?.confirmationStatus === "confirmed" || undefined, { what: "a transfer", intervalMs: 20 })
      return sig
    }
    const stranger = await generateKeyPairSigner()
    expect(net.ledger.requestAirdrop(stranger.address, SOL)).toMatchObject({ err: null })
    const notSigned = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: await transfer(stranger.keyPair) }))
    expect(Either.isLeft(notSigned) && notSigned.left.reason).toBe("signer_mismatch")
    const other = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: await transfer(a.keyPair) }))
    expect(Either.isLeft(other) && [other.left.reason, other.left.field, other.left.retryable]).toEqual(["validation_failed", "signature", false])
    expect((await ledgerRow(a, b.request.clientLaunchId))?.state).toBe("submitted")
  })

  it("the build's own transaction failing on chain fails the attempt (slot refunded); another failed transaction of the payer fails nothing", async () => {
    // Enough for the fees and rent, not for the 0.4 SOL dev buy: the launch transaction fails on chain.
    const a = await agent({ sol: 0n })
    expect(net.ledger.requestAirdrop(address(a.address), 60_000_000n)).toMatchObject({ err: null })
    const b = body(a, { buyAmount: "400000000" })
    const build = await built(a, b)
    const rpc = createSolanaRpc(net.rpcUrl)
    const send = async (wire: string, sig: string) => {
      await rpc.sendTransaction(wire as never, { encoding: "base64", skipPreflight: true }).send()
      await eventually(async () => (await rpc.getSignatureStatuses([sig as never]).send()).value[0]?.confirmationStatus === "confirmed" || undefined, { what: "a transaction to land", intervalMs: 20 })
    }
    // First the payer's own failing transfer (more lamports than it has): not this launch.
    const signer = await createSignerFromKeyPair(a.keyPair)
    const { value: latest } = await rpc.getLatestBlockhash().send()
    const overdraw = await signTransactionMessageWithSigners(
      pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(signer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
        (m) => appendTransactionMessageInstructions([getTransferSolInstruction({ from: signer, to: address(TREASURY_ADDRESS), lamports: 10n * SOL })], m)
      )
    )
    await send(getBase64EncodedWireTransaction(overdraw), getSignatureFromTransaction(overdraw))
    const other = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: getSignatureFromTransaction(overdraw) }))
    expect(Either.isLeft(other) && [other.left.reason, other.left.field]).toEqual(["validation_failed", "signature"])
    expect((await ledgerRow(a, b.request.clientLaunchId))?.state).toBe("submitted")
    // Then the build itself, which fails on chain: the attempt fails and its slot is refunded.
    const tx = new Uint8Array(getBase64Encoder().encode(build.transaction))
    const signed = await Effect.runPromise(
      wallets.signClaimed(a.caller.principal, a.walletId, { claimId: build.signClaim.claimId, transaction: tx, authorizationSignature: await a.authorize(tx) })
    )
    await send(signed.signedTransaction, signed.signature)
    const failed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: signed.signature }))
    expect(Either.isLeft(failed) && [failed.left.reason, failed.left.retryable, (failed.left.details as { reason: string }).reason]).toEqual(["launch_failed", true, "reverted"])
    expect((await ledgerRow(a, b.request.clientLaunchId))?.state).toBe("failed")
    expect(await Effect.runPromise(ledger.slotsUsed(a.caller.accountId))).toBe(0)
  })

  it("a malformed signature (88 base58 characters that are not 64 bytes, or an EVM hash) is VALIDATION_FAILED on signature, not retryable; the build stays confirmable", async () => {
    const a = await agent()
    const b = body(a)
    await built(a, b)
    for (const signature of ["z".repeat(88), `0x${"ab".repeat(32)}`]) {
      const r = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))
      expect(Either.isLeft(r) && [r.left.reason, r.left.field, r.left.retryable]).toEqual(["validation_failed", "signature", false])
    }
    expect((await ledgerRow(a, b.request.clientLaunchId))?.state).toBe("submitted")
  })

  it("an unknown id, or another account's, is JOB_NOT_FOUND", async () => {
    const a = await agent()
    const other = await agent()
    const b = body(a)
    await built(a, b)
    for (const [caller, id] of [[a.caller, "never-built"], [other.caller, b.request.clientLaunchId]] as const) {
      const r = await run(service.confirm(caller, { clientLaunchId: id, signature: "1".repeat(64) }))
      expect(Either.isLeft(r) && r.left.reason).toBe("job_not_found")
    }
  })
})

describe("the 30-minute sweep", () => {
  it("fails the caller's own old builds at its next build (slot refunded); a swept build that landed confirms even at the cap", async () => {
    const capped: Plan = { ...planOf("pro"), limits: { ...planOf("pro").limits, launchesPerDay: 1 } }
    const a = await agent({ plan: capped })
    const old = body(a)
    const build = await built(a, old)
    const signature = await signAndSend(a, build)
    try {
      clock.offsetMs = 31 * 60_000
      const fresh = await built(a, body(a))
      expect(fresh.mint).not.toBe(build.mint)
      const swept = await ledgerRow(a, old.request.clientLaunchId)
      expect([swept?.state, launchFailureCode(swept?.errorCode ?? "")]).toEqual(["failed", "SELF_BUILD_EXPIRED"])
      expect(await events(a, "launch.failed")).toBe(1)
      expect(await Effect.runPromise(ledger.slotsUsed(a.caller.accountId, Date.now() + clock.offsetMs))).toBe(1)
      // The swept build landed: a repeat build says so, and confirm records it although the cap is full.
      const repeat = await run(service.build(a.caller, old))
      expect(Either.isLeft(repeat) && repeat.left.details).toEqual({ reason: "prior_attempt_on_chain", mint: build.mint })
      const confirmed = await run(service.confirm(a.caller, { clientLaunchId: old.request.clientLaunchId, signature }))
      expect(Either.isRight(confirmed) && confirmed.right.mint).toBe(build.mint)
      expect(await Effect.runPromise(ledger.slotsUsed(a.caller.accountId, Date.now() + clock.offsetMs))).toBe(2)
    } finally {
      clock.offsetMs = 0
    }
  })

  it("a swept build that can still land answers 409 prior_attempt_in_flight with retryAfter", async () => {
    const a = await agent()
    const old = body(a)
    await built(a, old)
    try {
      clock.offsetMs = 31 * 60_000
      await built(a, body(a))
      const repeat = await run(service.build(a.caller, old))
      expect(Either.isLeft(repeat) && [repeat.left.reason, repeat.left.retryable, (repeat.left.details as { reason: string }).reason]).toEqual([
        "idempotency_conflict",
        true,
        "prior_attempt_in_flight"
      ])
      expect(Either.isLeft(repeat) && (repeat.left.details as { retryAfter: number }).retryAfter).toBeGreaterThan(Date.now() + clock.offsetMs)
    } finally {
      clock.offsetMs = 0
    }
  })
})

describe("the gates refuse before anything is recorded", () => {
  const refused = async (a: Agent, b: SelfLaunchBody) => {
    const r = await run(service.build(a.caller, b))
    const dry = await run(service.dryRun(a.caller, b))
    expect(await ledgerRow(a, b.request.clientLaunchId)).toBeUndefined()
    expect(await buildRows(a, b.request.clientLaunchId)).toEqual([])
    if (Either.isRight(r) || Either.isRight(dry)) throw new Error("not refused")
    // The dry run gives build's refusal: same reason, field and message.
    expect([dry.left.reason, dry.left.field, dry.left.message]).toEqual([r.left.reason, r.left.field, r.left.message])
    return r.left
  }

  it("TIER_REQUIRED below Pro", async () => {
    const a = await agent({ plan: planOf("free") })
    expect((await refused(a, body(a))).reason).toBe("tier_required")
  })

  it("a payer that is not this account's spend-capable Solana wallet is VALIDATION_FAILED on linkedWalletId", async () => {
    const a = await agent()
    const other = await agent()
    const e = await refused(a, body(a, { linkedWalletId: other.walletId }))
    expect([e.reason, e.field]).toEqual(["validation_failed", "linkedWalletId"])
  })

  it("the key's cap on buyAmount plus the platform fee is SPEND_LIMIT_EXCEEDED", async () => {
    const a = await agent({ spendLimits: [{ asset: "sol", maxPerTxRaw: "100000000" }] })
    const e = await refused(a, body(a, { buyAmount: "100000000" }))
    expect(e.reason).toBe("spend_limit_exceeded")
    expect(e.details).toMatchObject({ spendLimit: { limitSource: "key", asset: "sol", capDecimal: "0.1", attemptedDecimal: "0.1005" } })
    // Exactly at the cap passes.
    const dry = await run(service.dryRun(a.caller, body(a, { buyAmount: "99502487" })))
    expect(Either.isRight(dry)).toBe(true)
  })

  it("a linked dev buy goes through the spend gate: held at build, booked and metered at confirm; past the txLimit it is advisory (document 2, 4.1)", async () => {
    const a = await agent()
    // A daily txLimit of $1: the 0.1 SOL dev buy plus its 0.5% fee ($15.075 at the localnet's $150) is past it, yet a linked wallet's dev buy is only metered.
    await query((s) => s`UPDATE agent_keys SET tx_limit_usd_micros = 1000000, tx_limit_reset = 'daily' WHERE id = ${a.caller.keyId} RETURNING id`)
    const b = body(a, { buyAmount: "100000000" })
    const build = await built(a, b)
    const holds = () => query((s) => s<{ state: string; rail: string; purpose: string; usd: string }>`
      SELECT state, rail, purpose, usd_micros::text AS usd FROM spend_reservations WHERE key_id = ${a.caller.keyId}`)
    expect(await holds()).toEqual([{ state: "held", rail: "linked", purpose: "dev_buy", usd: "15075000" }])
    const signature = await signAndSend(a, build)
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))
    expect(Either.isRight(confirmed)).toBe(true)
    expect(await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature }))).toEqual(confirmed)
    expect(await holds()).toEqual([{ state: "booked", rail: "linked", purpose: "dev_buy", usd: "15075000" }])
    const usage = await query((s) => s<{ usd: string; trades: number; launches: number }>`
      SELECT sum(usd_micros)::text AS usd, sum(trade_count)::int AS trades, sum(launch_count)::int AS launches FROM agent_key_usage_daily WHERE key_id = ${a.caller.keyId}`)
    expect(usage).toEqual([{ usd: "15075000", trades: 1, launches: 1 }])
  })

  it("the dry run answers the wallet, its id and the size, and records nothing", async () => {
    const a = await agent()
    const b = body(a)
    const dry = await run(service.dryRun(a.caller, b))
    expect(Either.isRight(dry) && dry.right).toMatchObject({ dryRun: true, launchWallet: a.address, launchWalletId: a.walletId, size: { fits: true, limit: 1232 } })
    expect(await ledgerRow(a, b.request.clientLaunchId)).toBeUndefined()
  })
})

describe("a TEE wallet bound to the key", () => {
  /** A TEE Solana wallet created by the owner for `a`'s key, funded; `allowLaunch` as given. */
  const teeWallet = async (a: Agent, allowLaunch: boolean) => {
    const owner: Principal = { ...a.caller.principal, credential: "session", keyId: null, keyPrefix: null, scopes: [], environment: null, embeddedWallet: null }
    const view = await Effect.runPromise(wallets.createTee(owner, { chain: "solana", keyPrefix: a.caller.keyPrefix, allowLaunch }))
    expect(net.ledger.requestAirdrop(address(view.address), 5n * SOL)).toMatchObject({ err: null })
    return { owner, view }
  }

  it("launches from the TEE wallet once allowLaunch is on: buyAmount must be 0, the relay signs, confirm records it", async () => {
    const a = await agent()
    const { owner, view } = await teeWallet(a, false)
    const refusedLaunch = await run(service.build(a.caller, body(a, { linkedWalletId: view.id })))
    expect(Either.isLeft(refusedLaunch) && [refusedLaunch.left.reason, refusedLaunch.left.field, refusedLaunch.left.details]).toEqual([
      "validation_failed",
      "linkedWalletId",
      { reason: "launch_not_allowed" }
    ])
    await Effect.runPromise(wallets.update(owner, view.id, { allowLaunch: true }))
    const withBuy = await run(service.build(a.caller, body(a, { linkedWalletId: view.id, buyAmount: "1000" })))
    expect(Either.isLeft(withBuy) && [withBuy.left.reason, withBuy.left.field]).toEqual(["validation_failed", "buyAmount"])

    const b = body(a, { linkedWalletId: view.id })
    const build = await built(a, b)
    const tx = new Uint8Array(getBase64Encoder().encode(build.transaction))
    // A TEE wallet signs without an authorization signature (it is bound to the key).
    const signed = await Effect.runPromise(wallets.signClaimed(a.caller.principal, view.id, { claimId: build.signClaim.claimId, transaction: tx }))
    // Signed and still able to land: a repeat build neither rebuilds nor hands the transaction out again.
    const repeat = await run(service.build(a.caller, b))
    expect(Either.isLeft(repeat) && [repeat.left.reason, repeat.left.retryable, (repeat.left.details as { reason: string }).reason]).toEqual([
      "idempotency_conflict",
      true,
      "prior_attempt_in_flight"
    ])
    const rpc = createSolanaRpc(net.rpcUrl)
    await rpc.sendTransaction(signed.signedTransaction as never, { encoding: "base64" }).send()
    await eventually(async () => (await rpc.getSignatureStatuses([signed.signature as never]).send()).value[0]?.confirmationStatus === "confirmed" || undefined, {
      what: "the TEE launch to confirm",
      intervalMs: 20
    })
    const confirmed = await run(service.confirm(a.caller, { clientLaunchId: b.request.clientLaunchId, signature: signed.signature }))
    expect(Either.isRight(confirmed) && confirmed.right).toMatchObject({ mint: build.mint, signature: signed.signature })
    const curve = net.ledger.getAccount((await findCurveAddresses(address(build.mint))).curve)
    expect(curve !== undefined && decodeCurve(curve.data)?.creator).toBe(view.address)
  })

  it("with TEE launch buys on, a dev buy past the bound key's USD window: the dry run admits it (endpoint rule 4 leaves the window out), the build refuses KEY_LIMIT_REACHED and records nothing", async () => {
    const a = await agent()
    const { view } = await teeWallet(a, true)
    // $15 a day: 0.1 SOL plus the Pro plan's 0.5% fee is $15.075 at the localnet's $150.
    await Effect.runPromise(
      Effect.provideService(updateKey(a.caller.keyId, { _tag: "txLimit", txLimit: { usdMicros: 15_000_000, reset: "daily" } }), SqlClient.SqlClient, sql).pipe(Effect.orDie)
    )
    const b = body(a, { linkedWalletId: view.id, buyAmount: "100000000" })
    const dry = await run(teeBuysService.dryRun(a.caller, b))
    expect(Either.isRight(dry)).toBe(true)
    const refused = await run(teeBuysService.build(a.caller, b))
    expect(Either.isLeft(refused) && [refused.left.reason, typeof (refused.left.details as { resetsAt?: unknown } | undefined)?.resetsAt]).toEqual(["key_limit_reached", "number"])
    expect(await ledgerRow(a, b.request.clientLaunchId)).toBeUndefined()
  })

  it("a TEE wallet of another account cannot pay", async () => {
    const a = await agent()
    const b = await agent()
    const { view } = await teeWallet(b, true)
    // Same account is required too; a TEE wallet of another account is simply not found on this one.
    const r = await run(service.build(a.caller, body(a, { linkedWalletId: view.id })))
    expect(Either.isLeft(r) && [r.left.reason, r.left.field]).toEqual(["validation_failed", "linkedWalletId"])
  })
})
