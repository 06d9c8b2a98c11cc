/**
 * The Solana headless launch run against the real localnet over its sockets (JSON-RPC), signed by
 * the local wallet provider over PGlite (its delegation and policy apply). Slots are produced by
 * this file's block producer (`producing`), which a test stops to hold a transaction at
 * `processed` and so pass the confirmation deadline.
 *
 * What is pinned: a launch lands with the matrix's curve, the payer's tokens equal CurveMath's
 * quote to the raw unit (also as a property over amounts and pairs), the fee leg reaches the
 * treasury, the dry run's size is the landed transaction's size; an underfunded payer, a revoked
 * delegation, a denying policy and a wallet key that cannot be opened are refused before anything is sent (balances unchanged, no
 * curve); a confirmation timeout is "outcome unknown" and the recovery path then finds the launch
 * from what was recorded before sending; a recorded attempt that was never sent is found never to
 * land once its blockhash expires.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type Address,
  address,
  compileTransaction,
  createNoopSigner,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  getTransactionEncoder,
  signTransaction
} from "@solana/kit"
import { Context, Effect, Either, Exit, Layer, Redacted, Schedule, Scope } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findCurveAddresses, getBuyInstruction, getMigrateInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { buildTransactionMessage } from "../../src/chain/solana/client/Transactions.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf, expectOk, readPool, send, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { launchMintSigner } from "../../src/chain/solana/launch/LaunchMint.js"
import { decodeCurve } from "../../src/chain/solana/program/accounts/Curve.js"
import { SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import * as Database from "../../src/db/Database.js"
import { eventually } from "../support/eventually.js"
import { BPS, ceilDiv, initialState, quoteBuy, tokenReserveRaw } from "../../src/domain/CurveMath.js"
import { DefaultDevBuyCeilings, findEconomics } from "../../src/domain/Economics.js"
import { decodeLaunchRequest } from "../../src/services/launch/request/DecodeLaunchRequest.js"
import type { LaunchRequest } from "../../src/services/launch/request/LaunchRequest.js"
import * as SolanaLaunch from "../../src/services/launch/SolanaLaunch.js"
import { SolanaLaunchError } from "../../src/services/launch/SolanaLaunchError.js"
import * as WalletProvider from "../../src/services/wallets/WalletProvider.js"

const SOL = 1_000_000_000n
const MINT_SECRET = Redacted.make(new Uint8Array(32).fill(7))

let scope: Scope.CloseableScope
let net: SolanaLocalnetShape
let provider: WalletProvider.WalletProviderShape
let sql: SqlClient.SqlClient
let launcher: SolanaLaunch.SolanaLaunchShape
let producer: ReturnType<typeof setInterval>
const producing = { on: true }

const serviceWith = (options: Partial<SolanaLaunch.SolanaLaunchOptions> = {}) =>
  Effect.runPromise(
    SolanaLaunch.make({ rpcUrl: net.rpcUrl, mintSecret: MINT_SECRET, treasury: TREASURY_ADDRESS, pollIntervalMs: 20, ...options }).pipe(
      Effect.provideService(WalletProvider.WalletProvider, provider)
    )
  )

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  // The real local provider and the database it keeps its wallets in (one `Database.layerTest`).
  const stack = Layer.mergeAll(WalletProvider.layerTest, Database.layerTest, SolanaLocalnet.layer({ manualSlots: true }))
  const context = await Effect.runPromise(Layer.buildWithScope(stack, scope))
  net = Context.get(context, SolanaLocalnet)
  provider = Context.get(context, WalletProvider.WalletProvider)
  sql = Context.get(context, SqlClient.SqlClient)
  producer = setInterval(() => {
    if (producing.on) net.ledger.advanceSlot()
  }, 20)
  launcher = await serviceWith()
}, 60_000)

afterAll(async () => {
  clearInterval(producer)
  await Effect.runPromise(Scope.close(scope, Exit.void))
})

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(effect))

/** An account with a delegated embedded Solana wallet holding `sol` SOL (0: never funded). */
const owner = async (accountId: string, sol: bigint, tokens: { usdc?: bigint; svc?: bigint } = {}) => {
  const wallet = await Effect.runPromise(provider.ensureEmbeddedWallet(accountId, "solana"))
  await Effect.runPromise(provider.setDelegation(accountId, "solana", "active"))
  const payer = address(wallet.address)
  if (sol > 0n) expect(net.ledger.requestAirdrop(payer, sol * SOL)).toMatchObject({ _tag: "Landed", err: null })
  if (tokens.usdc !== undefined) expect(net.ledger.mintTestTokens(USDC_MINT_ADDRESS, payer, tokens.usdc)).toMatchObject({ err: null })
  if (tokens.svc !== undefined) expect(net.ledger.mintTestTokens(SVC_MINT_ADDRESS, payer, tokens.svc)).toMatchObject({ err: null })
  return payer
}

let ids = 0
const request = (body: Record<string, unknown>): LaunchRequest => {
  const decoded = decodeLaunchRequest(
    { clientLaunchId: `launch-${++ids}`, name: "Curve Test", symbol: "CRVT", imageUrl: "https://example.com/i.png", ...body },
    { keyEnvironment: "production" },
    { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: null }
  )
  if (Either.isLeft(decoded)) throw new Error(`request refused: ${decoded.left.message}`)
  return decoded.right
}

const inputFor = (accountId: string, payer: Address, r: LaunchRequest, platformFeeBps = 100n): SolanaLaunch.SolanaLaunchInput => ({
  accountId,
  attempt: 1,
  request: r,
  payer,
  platformFeeBps,
  metadataUri: `https://curvestream.local/api/v1/metadata/solana/${r.clientLaunchId}.json`
})

/** Runs a launch, recording what `beforeSend` saw. */
const launch = async (input: SolanaLaunch.SolanaLaunchInput, service = launcher) => {
  const recorded: Array<SolanaLaunch.LaunchSending> = []
  const result = await run(service.launch(input, (s) => Effect.sync(() => void recorded.push(s))))
  return { result, recorded }
}

const quoteOf = (r: LaunchRequest, amountIn: bigint) => {
  const economics = findEconomics("solana", r.quoteAsset)!
  const params = {
    virtualQuoteRaw: r.curve.virtualQuoteRaw,
    thresholdRaw: r.curve.thresholdRaw,
    tokenReserveRaw: tokenReserveRaw(economics.tokenSupplyRaw, r.stakerAllocationBps),
    feeBps: economics.curveFeeBps,
    crossingModel: "full-fill-surplus" as const
  }
  const q = quoteBuy(params, initialState(params), amountIn)
  if (q._tag !== "Filled") throw new Error("quote refused")
  return q.amountOut
}

const readCurveAt = async (mint: string) => {
  const { curve } = await findCurveAddresses(address(mint))
  const account = net.ledger.getAccount(curve)
  return account === undefined ? undefined : decodeCurve(account.data)
}

const mintOf = async (accountId: string, r: LaunchRequest, attempt = 1) =>
  (await launchMintSigner(Redacted.value(MINT_SECRET), { accountId, clientLaunchId: r.clientLaunchId, attempt })).address

const treasuryHolding = (quoteAsset: string): bigint =>
  quoteAsset === "sol"
    ? net.ledger.getBalance(TREASURY_ADDRESS)
    : tokenBalance(net.ledger, ataOf(TREASURY_ADDRESS, quoteAsset === "usdc" ? USDC_MINT_ADDRESS : SVC_MINT_ADDRESS))

const failure = (e: Either.Either<unknown, unknown>): SolanaLaunchError => {
  if (Either.isRight(e) || !(e.left instanceof SolanaLaunchError)) throw new Error(`expected a SolanaLaunchError, got ${JSON.stringify(e, (_, v) => (typeof v === "bigint" ? v.toString() : v))}`)
  return e.left
}

describe("a Solana headless launch", () => {
  it("lands on the matrix's terms with the dev buy at CurveMath's quote to the unit and the fee leg at the treasury", async () => {
    const payer = await owner("acct-sol", 10n)
    const r = request({ buyAmount: "250000000" })
    const treasuryBefore = treasuryHolding("sol")
    const { result, recorded } = await launch(inputFor("acct-sol", payer, r))
    if (Either.isLeft(result)) throw result.left
    const launched = result.right
    const mint = await mintOf("acct-sol", r)
    expect(launched.mint).toBe(mint)
    expect(recorded).toEqual([{ mint, curve: launched.curve, signature: launched.signature, lastValidBlockHeight: expect.any(BigInt) }])

    const curve = (await readCurveAt(mint))!
    const tier = findEconomics("solana", "sol")!.tiers.find((t) => t.tier === "open")!
    expect(curve).toMatchObject({
      creator: payer,
      mode: "open",
      quoteMint: "So11111111111111111111111111111111111111112",
      virtualQuoteRaw: tier.virtualQuoteRaw,
      thresholdRaw: tier.thresholdRaw,
      supplyRaw: findEconomics("solana", "sol")!.tokenSupplyRaw,
      stakerAllocationBps: 50,
      buyCount: 1n
    })
    const expected = quoteOf(r, 250_000_000n)
    expect(tokenBalance(net.ledger, ataOf(payer, address(mint)))).toBe(expected)
    expect(launched.devBuy).toEqual({ amountInRaw: 250_000_000n, filledRaw: expected, minAmountOutRaw: expected })
    const feeRaw = ceilDiv(250_000_000n * 100n, BPS)
    expect(launched.fee).toEqual({ bps: 100n, feeRaw, treasury: TREASURY_ADDRESS })
    expect(treasuryHolding("sol") - treasuryBefore).toBe(feeRaw)
    expect(launched.slot).toBe(net.ledger.getTransaction(launched.signature)!.slot)

    // The dry run's size is the landed transaction's size (same request, a stand-in mint).
    const dry = await Effect.runPromise(launcher.size({ request: r, payer, platformFeeBps: 100n, metadataUri: inputFor("acct-sol", payer, r).metadataUri }))
    expect(dry.size).toMatchObject({ limit: 1232, fits: true, overBy: 0, maxNameBytes: 32 })
    const wire = getBase64Encoder().encode(
      ((await createSolanaRpc(net.rpcUrl).getTransaction(launched.signature as never, { encoding: "base64", maxSupportedTransactionVersion: 0 }).send())!.transaction as unknown as [string, string])[0]
    )
    expect(dry.size.txBytes).toBe(wire.byteLength)
  })

  it("an exp-* launch's creatorFeeBps reaches the program: the curve carries it and the pool it graduates into charges 50 + it (spec 2.9 feeBps 250)", async () => {
    const payer = await owner("acct-exp-fee", 10n)
    const r = request({ mode: "exp-a", creatorFeeBps: 200 })
    expect(r.creatorFeeBps).toBe(200n)
    const { result } = await launch(inputFor("acct-exp-fee", payer, r))
    if (Either.isLeft(result)) throw result.left
    const mint = address(result.right.mint)
    expect(await readCurveAt(mint)).toMatchObject({ mode: "exp-a", creatorFeeBps: 200, stakerAllocationBps: 500 })

    // Past the threshold (exp-a: G = 5 SOL), then the keeper's migration: the pool's fee is the base 50 plus the creator's 200.
    const trader = await devSigner(3)
    const trade = { trader, mint, quoteMint: WSOL_MINT_ADDRESS, minAmountOutRaw: 0n }
    expectOk(net.ledger, await send(net.ledger, trader, [
      getCreateAssociatedTokenInstruction({ payer: trader, ata: ataOf(trader.address, mint), owner: trader.address, mint }),
      await getBuyInstruction({ ...trade, amountInRaw: 6n * SOL })
    ]))
    const keeper = await keeperSigner()
    expectOk(net.ledger, await send(net.ledger, keeper, [await getMigrateInstruction({ keeper, mint, quoteMint: WSOL_MINT_ADDRESS })]))
    const { pool } = await findCurveAddresses(mint)
    expect(readPool(net.ledger, pool)).toMatchObject({ feeBps: 250, creatorFeeBps: 200 })
  })

  it("draws a USDC dev buy and its fee from the payer's token account", async () => {
    const payer = await owner("acct-usdc", 1n, { usdc: 1_000_000_000n })
    const r = request({ quoteAsset: "usdc", buyAmount: 200_000_000 })
    const before = treasuryHolding("usdc")
    const { result } = await launch(inputFor("acct-usdc", payer, r, 50n))
    if (Either.isLeft(result)) throw result.left
    const expected = quoteOf(r, 200_000_000n)
    expect(tokenBalance(net.ledger, ataOf(payer, address(result.right.mint)))).toBe(expected)
    expect(result.right.devBuy?.filledRaw).toBe(expected)
    expect(treasuryHolding("usdc") - before).toBe(1_000_000n)
    expect(tokenBalance(net.ledger, ataOf(payer, USDC_MINT_ADDRESS))).toBe(1_000_000_000n - 200_000_000n - 1_000_000n)
  })

  it("fills exactly CurveMath's quote for any dev buy on any pair (property)", async () => {
    const payer = await owner("acct-prop", 100n, { usdc: 10n ** 12n, svc: 10n ** 14n })
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.record({ quoteAsset: fc.constant("sol"), buy: fc.bigInt({ min: 1_000n, max: DefaultDevBuyCeilings.DEV_BUY_MAX_LAMPORTS }) }),
          fc.record({ quoteAsset: fc.constant("usdc"), buy: fc.bigInt({ min: 1_000n, max: DefaultDevBuyCeilings.DEV_BUY_MAX_USDC_RAW }) }),
          fc.record({ quoteAsset: fc.constant("svc"), buy: fc.bigInt({ min: 1_000n, max: DefaultDevBuyCeilings.DEV_BUY_MAX_CNDL_RAW }) })
        ),
        fc.constantFrom(25n, 50n, 100n),
        async ({ quoteAsset, buy }, feeBps) => {
          const r = request({ quoteAsset, buyAmount: buy.toString() })
          const before = treasuryHolding(quoteAsset)
          const { result } = await launch(inputFor("acct-prop", payer, r, feeBps))
          if (Either.isLeft(result)) throw result.left
          const expected = quoteOf(r, buy)
          expect(tokenBalance(net.ledger, ataOf(payer, address(result.right.mint)))).toBe(expected)
          expect(result.right.devBuy?.filledRaw).toBe(expected)
          expect(treasuryHolding(quoteAsset) - before).toBe(ceilDiv(buy * feeBps, BPS))
        }
      ),
      { numRuns: 12 }
    )
  }, 120_000)

  it("sizes a dry run without touching the chain, and refuses a dev buy that fills nothing", async () => {
    const payer = address((await Effect.runPromise(provider.ensureEmbeddedWallet("acct-dry", "solana"))).address)
    const spec = { accountId: "acct-dry", payer, platformFeeBps: 100n, metadataUri: "https://curvestream.local/m.json" }
    const dry = await Effect.runPromise(launcher.size({ ...spec, request: request({ quoteAsset: "svc", buyAmount: "5000000" }) }))
    expect(dry.size).toMatchObject({ limit: 1232, fits: true, maxNameBytes: 32 })
    expect(dry.plan.fee).toEqual({ bps: 100n, feeRaw: 50_000n, treasury: TREASURY_ADDRESS })
    expect(net.ledger.getBalance(payer)).toBe(0n)
    const unfillable = await run(launcher.size({ ...spec, request: request({ buyAmount: "1" }) }))
    expect(failure(unfillable)).toMatchObject({ reason: "dev_buy_unfillable", retryable: false })
  })

  it("launches without a dev buy: no token account, no fee leg", async () => {
    const payer = await owner("acct-bare", 1n)
    const r = request({})
    const { result } = await launch(inputFor("acct-bare", payer, r))
    if (Either.isLeft(result)) throw result.left
    expect(result.right).toMatchObject({ devBuy: null, fee: null })
    expect(await readCurveAt(result.right.mint)).toMatchObject({ creator: payer, buyCount: 0n })
  })
})

describe("refused: nothing lands, balances unchanged", () => {
  const expectNothingLanded = async (accountId: string, r: LaunchRequest, payer: Address, balances: { sol: bigint; usdc: bigint }) => {
    expect(await readCurveAt(await mintOf(accountId, r))).toBeUndefined()
    expect(net.ledger.getBalance(payer)).toBe(balances.sol)
    expect(tokenBalance(net.ledger, ataOf(payer, USDC_MINT_ADDRESS))).toBe(balances.usdc)
  }

  it("an owner who cannot cover the dev buy, fee and rent: insufficient_owner_balance at simulation, balances unchanged", async () => {
    const payer = await owner("acct-poor", 0n)
    net.ledger.requestAirdrop(payer, 100_000_000n) // 0.1 SOL against a 0.4 SOL dev buy
    const r = request({ buyAmount: "400000000" })
    const { result, recorded } = await launch(inputFor("acct-poor", payer, r))
    expect(failure(result)).toMatchObject({ reason: "insufficient_owner_balance", retryable: true, definitive: true })
    expect(recorded).toEqual([])
    await expectNothingLanded("acct-poor", r, payer, { sol: 100_000_000n, usdc: 0n })
  })

  it("a payer that was never funded, and a USDC dev buy without a USDC account, are the same refusal", async () => {
    const unfunded = await owner("acct-empty", 0n)
    const r1 = request({})
    const first = await launch(inputFor("acct-empty", unfunded, r1))
    expect(failure(first.result).reason).toBe("insufficient_owner_balance")
    await expectNothingLanded("acct-empty", r1, unfunded, { sol: 0n, usdc: 0n })

    const noUsdc = await owner("acct-nousdc", 1n)
    const r2 = request({ quoteAsset: "usdc", buyAmount: "5000000" })
    const second = await launch(inputFor("acct-nousdc", noUsdc, r2))
    expect(failure(second.result)).toMatchObject({ reason: "insufficient_owner_balance", definitive: true })
    expect(second.recorded).toEqual([])
    await expectNothingLanded("acct-nousdc", r2, noUsdc, { sol: SOL, usdc: 0n })

    const shortUsdc = await owner("acct-shortusdc", 1n, { usdc: 5_000_000n })
    const r3 = request({ quoteAsset: "usdc", buyAmount: "5000000" }) // plus a 1% fee: 50,000 short
    expect(failure((await launch(inputFor("acct-shortusdc", shortUsdc, r3))).result).reason).toBe("insufficient_owner_balance")
    await expectNothingLanded("acct-shortusdc", r3, shortUsdc, { sol: SOL, usdc: 5_000_000n })
  })

  it("a revoked delegation and a denying wallet policy are typed refusals, nothing sent", async () => {
    const payer = await owner("acct-revoked", 1n)
    await Effect.runPromise(provider.setDelegation("acct-revoked", "solana", "revoked"))
    const r = request({})
    const revoked = await launch(inputFor("acct-revoked", payer, r))
    expect(failure(revoked.result)).toMatchObject({ reason: "delegation_revoked", retryable: true, definitive: true })
    expect(revoked.recorded).toEqual([])
    await expectNothingLanded("acct-revoked", r, payer, { sol: SOL, usdc: 0n })

    const denied = await owner("acct-denied", 1n)
    const [row] = await Effect.runPromise(sql<{ policy_id: string }>`SELECT policy_id FROM wp_wallets WHERE address = ${denied}`)
    await Effect.runPromise(provider.setPolicyState(row!.policy_id, "default_deny"))
    const r2 = request({ buyAmount: "1000000" })
    const refused = await launch(inputFor("acct-denied", denied, r2))
    expect(failure(refused.result)).toMatchObject({ reason: "policy_denied", rule: "default_deny", retryable: false })
    await expectNothingLanded("acct-denied", r2, denied, { sol: SOL, usdc: 0n })
  })

  it("a wallet key that cannot be opened is signing_failed: retryable, definitive, nothing sent (Hood answers the same outage alike)", async () => {
    const payer = await owner("acct-keyout", 1n)
    await Effect.runPromise(sql`UPDATE wp_wallets SET secret_sealed = 'v1.corrupt' WHERE address = ${payer}`)
    const r = request({})
    const { result, recorded } = await launch(inputFor("acct-keyout", payer, r))
    expect(failure(result)).toMatchObject({ reason: "signing_failed", retryable: true, definitive: true })
    expect(failure(result).message).toMatch(/^key_unavailable: /)
    expect(recorded).toEqual([])
    await expectNothingLanded("acct-keyout", r, payer, { sol: SOL, usdc: 0n })
  })

  it("a payer drained between simulation and send is refused at preflight: definitive, nothing landed", async () => {
    const payer = await owner("acct-drained", 1n)
    const r = request({ buyAmount: "300000000" })
    const sink = (await generateKeyPairSigner()).address
    // While the attempt is recorded, the owner spends almost everything elsewhere (signed by the same provider).
    const drain = () =>
      Effect.gen(function* () {
        const { value } = yield* Effect.promise(() => createSolanaRpc(net.rpcUrl).getLatestBlockhash({ commitment: "confirmed" }).send())
        const message = buildTransactionMessage({
          feePayer: createNoopSigner(payer),
          lifetime: value,
          instructions: [getTransferSolInstruction({ from: createNoopSigner(payer), to: sink, lamports: SOL - 10_000_000n })]
        })
        const unsigned = new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)))
        const signed = yield* provider.signWithEmbedded("acct-drained", "solana", unsigned)
        expect(net.ledger.submit(new Uint8Array(getBase64Encoder().encode(signed.signedTransaction)))).toMatchObject({ _tag: "Landed", err: null })
      }).pipe(Effect.orDie)
    const recorded: Array<SolanaLaunch.LaunchSending> = []
    const result = await run(launcher.launch(inputFor("acct-drained", payer, r), (s) => Effect.sync(() => void recorded.push(s)).pipe(Effect.zipRight(drain()))))
    const e = failure(result)
    expect(e).toMatchObject({ reason: "insufficient_owner_balance", definitive: true, signature: recorded[0]!.signature, mint: recorded[0]!.mint })
    expect(net.ledger.getSignatureStatus(recorded[0]!.signature)).toBeUndefined()
    await expectNothingLanded("acct-drained", r, payer, { sol: 10_000_000n - 5_000n, usdc: 0n })
  })

  it("a build deadline shorter than any round trip is build_timeout, nothing sent", async () => {
    const payer = await owner("acct-hurried", 1n)
    const r = request({})
    const hurried = await serviceWith({ buildTimeoutMs: 1 })
    const { result, recorded } = await launch(inputFor("acct-hurried", payer, r), hurried)
    expect(failure(result)).toMatchObject({ reason: "build_timeout", retryable: true, definitive: true })
    expect(recorded).toEqual([])
    await expectNothingLanded("acct-hurried", r, payer, { sol: SOL, usdc: 0n })
  })

  it("a failing beforeSend sends nothing", async () => {
    const payer = await owner("acct-hook", 1n)
    const r = request({ buyAmount: "1000000" })
    const result = await run(launcher.launch(inputFor("acct-hook", payer, r), () => Effect.fail("ledger down" as const)))
    expect(result).toEqual(Either.left("ledger down"))
    await expectNothingLanded("acct-hook", r, payer, { sol: SOL, usdc: 0n })
  })
})

describe("a confirmation deadline and the recovery path", () => {
  it("a deadline that passes is outcome-unknown (not definitive), with the recorded signature and mint; recovery says to wait while the slot is open", async () => {
    const payer = await owner("acct-slow", 5n)
    const r = request({ buyAmount: "100000000" })
    const input = inputFor("acct-slow", payer, r)
    const impatient = await serviceWith({ confirmTimeoutMs: 300 })
    producing.on = false
    try {
      const { result, recorded } = await launch(input, impatient)
      const e = failure(result)
      expect(e).toMatchObject({ reason: "confirmation_timeout", definitive: false, retryable: true })
      expect(recorded).toHaveLength(1)
      expect(e.signature).toBe(recorded[0]!.signature)
      expect(e.mint).toBe(recorded[0]!.mint)
      // Held at `processed`: recovery says to wait.
      const pending = await Effect.runPromise(launcher.recover({ ...input, signature: recorded[0]!.signature, lastValidBlockHeight: recorded[0]!.lastValidBlockHeight }))
      expect(pending).toEqual({ _tag: "Pending" })
    } finally {
      producing.on = true
    }
  })

  it("recovery of a recorded attempt: landed after the slot closes, with the mint and the fill", async () => {
    const payer = await owner("acct-recover", 5n, { svc: 100_000_000_000n })
    const r = request({ quoteAsset: "svc", buyAmount: "66000000000" })
    const input = inputFor("acct-recover", payer, r)
    producing.on = false
    let recorded: SolanaLaunch.LaunchSending
    try {
      const impatient = await serviceWith({ confirmTimeoutMs: 200 })
      const slow = await launch(input, impatient)
      expect(failure(slow.result).reason).toBe("confirmation_timeout")
      recorded = slow.recorded[0]!
    } finally {
      producing.on = true
    }
    const recovered = await Effect.runPromise(
      Effect.retry(
        launcher.recover({ ...input, signature: recorded.signature, lastValidBlockHeight: recorded.lastValidBlockHeight }).pipe(
          Effect.filterOrFail((o) => o._tag !== "Pending", () => "pending" as const)
        ),
        { times: 250, schedule: Schedule.spaced("20 millis") }
      )
    )
    expect(recovered._tag).toBe("Landed")
    if (recovered._tag !== "Landed") return
    const expected = quoteOf(r, 66_000_000_000n)
    expect(recovered.launched).toMatchObject({ mint: recorded.mint, curve: recorded.curve, signature: recorded.signature })
    expect(recovered.launched.devBuy).toEqual({ amountInRaw: 66_000_000_000n, filledRaw: expected, minAmountOutRaw: expected })
    expect(tokenBalance(net.ledger, ataOf(payer, address(recorded.mint)))).toBe(expected)
  })

  it("an attempt recorded but never sent is found never to land once its blockhash expires", async () => {
    const payer = await owner("acct-crash", 1n)
    const r = request({})
    const input = inputFor("acct-crash", payer, r)
    let recorded: SolanaLaunch.LaunchSending | undefined
    // The process "dies" after recording and before sending.
    const crashed = await run(launcher.launch(input, (s) => Effect.sync(() => void (recorded = s)).pipe(Effect.zipRight(Effect.fail("crash" as const)))))
    expect(crashed).toEqual(Either.left("crash"))
    const recoverInput = { ...input, signature: recorded!.signature, lastValidBlockHeight: recorded!.lastValidBlockHeight }
    expect(await Effect.runPromise(launcher.recover(recoverInput))).toEqual({ _tag: "Pending" })
    producing.on = false
    try {
      net.ledger.advanceSlots(Number(recorded!.lastValidBlockHeight - net.ledger.confirmedSlot) + 2)
    } finally {
      producing.on = true
    }
    expect(await Effect.runPromise(launcher.recover(recoverInput))).toEqual({ _tag: "NeverLands" })
    expect(await readCurveAt(recorded!.mint)).toBeUndefined()
  })
})

describe("a launch built for a payer that signs it itself (self-signed launches)", () => {
  it("the payer's signature completes the build; it lands as the attempt's curve, the size is sizeLaunch's, recovery finds it", async () => {
    const payer = await generateKeyPairSigner()
    expect(net.ledger.requestAirdrop(payer.address, 5n * SOL)).toMatchObject({ _tag: "Landed", err: null })
    const r = request({ buyAmount: "100000000" })
    const input = { ...inputFor("acct-self-1", payer.address, r), attempt: 3 }
    const built = await Effect.runPromise(launcher.buildForPayer(input))
    const wire = getBase64Encoder().encode(built.transactionBase64)
    expect(wire.byteLength).toBe(built.txBytes)
    expect(built.mint).toBe((await launchMintSigner(Redacted.value(MINT_SECRET), { accountId: "acct-self-1", clientLaunchId: r.clientLaunchId, attempt: 3 })).address)
    expect(built.fee?.feeRaw).toBe(1_000_000n)
    // The build is not yet sendable: the payer's signature slot is empty.
    const unsigned = getTransactionDecoder().decode(wire)
    expect(unsigned.signatures[payer.address]).toBeNull()
    expect(unsigned.signatures[address(built.mint)]).not.toBeNull()
    const signed = await signTransaction([payer.keyPair], unsigned)
    const sig = getSignatureFromTransaction(signed)
    await createSolanaRpc(net.rpcUrl).sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" }).send()
    const recovered = await eventually(
      async () => {
        const seen = await Effect.runPromise(launcher.recover({ ...input, signature: sig, lastValidBlockHeight: built.lastValidBlockHeight }))
        return seen._tag === "Pending" ? undefined : seen
      },
      { what: "the payer-signed launch to land", intervalMs: 20 }
    )
    expect(recovered._tag).toBe("Landed")
    if (recovered._tag !== "Landed") return
    expect(recovered.launched).toMatchObject({ mint: built.mint, curve: built.curve, signature: sig })
    const curve = net.ledger.getAccount((await findCurveAddresses(address(built.mint))).curve)
    expect(curve !== undefined && decodeCurve(curve.data)?.creator).toBe(payer.address)
  })
})
