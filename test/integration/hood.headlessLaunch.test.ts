/**
 * The headless Hood launch against the real Hood localnet (Hardhat/EDR in process, JSON-RPC over
 * HTTP), the real launch ledger and wallet provider on PGlite.
 *
 * What each test covers:
 *   createCurve lands + dev buy + fee ........ "a launch lands: matrix terms, CurveMath's fill, the fee legs"
 *   dev buy execution == quote (property) .... "the dev buy fills exactly CurveMath's Hood quote"
 *   dev buy reverted, launch confirmed ....... "a dev buy front-run in createCurve's block reverts; ..."
 *   pending -> landed (watcher), fee forgone . "a dev buy still pending is watched until it lands"
 *   pending -> lapsed (watch bound) .......... "a dev buy whose nonce was used lapses at the watch bound"
 *   watchers at their bound .................. "at the watcher bound a pending dev buy is not watched"
 *   the 24-hour bound (TestClock) ........... "the watcher's default bound is 24 hours (TestClock)"
 *   statuses at their bound .................. "dev-buy statuses are kept up to their bound"
 *   recovery: sent, then crash ............... "recovery finds a sent launch" / "... re-sends one that never got out"
 *   refusals before the chain ................ "refuses without a linked EVM wallet" / "... revoked delegation"
 *   a wallet-key outage ...................... "a wallet key that cannot be opened is the outage Solana answers ..."
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Cause, type Context, Duration, Effect, Exit, Fiber, Layer, Option, Runtime, Scope, TestClock, TestContext } from "effect"
import fc from "fast-check"
import { type Address, getAddress, type Hash, parseEventLogs, serializeTransaction } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { bondingCurveAbi, curveFactoryAbi, feeSplitterAbi } from "../../src/chain/hood/abi.generated.js"
import { readCurve, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { hoodTestClient, type HoodTestClient, mine, publicClientOf, setAutomine, setEthBalance, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { clientsFor } from "../../src/chain/hood/localnet/testkit.js"
import * as Database from "../../src/db/Database.js"
import { quoteBuy } from "../../src/domain/CurveMath.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import { toApiError } from "../../api/ErrorTable.js"
import {
  HoodLaunchError,
  type HoodHeadlessLaunchShape,
  type HoodLaunchConfig,
  type HoodLaunchInput,
  type HoodLaunchResult,
  make as makeHoodLaunch
} from "../../src/services/launch/HoodHeadlessLaunch.js"
import { fromHood } from "../../src/services/launch/LaunchError.js"
import { type AttemptRef, LaunchLedger, layer as launchLedgerLayer } from "../../src/services/launch/LaunchLedger.js"
import { canonicalBody } from "../../src/services/launch/request/CanonicalBody.js"
import type { LaunchRequest } from "../../src/services/launch/request/LaunchRequest.js"
import * as MasterKey from "../../src/services/wallets/MasterKey.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { layerLocal as walletProviderLayer, WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { layer as walletServiceLayer, WalletService } from "../../src/services/wallets/WalletService.js"
import { makeKeyDirectory } from "../../src/services/wiring/Wiring.js"
import { launchFailureCode, launchFailureCodesLayer } from "../../api/LaunchCodes.js"

type Deps = LaunchLedger | WalletProvider | WalletService | SqlClient.SqlClient

const plans = resolvePlans({}, 0)
/** Every polled condition's deadline (vi.waitFor). */
const WAIT = { timeout: 20_000, interval: 20 }
const ETH = 10n ** 18n
const hoodEth = findEconomics("hood", "eth")!
const openTier = hoodEth.tiers.find((t) => t.tier === "open")!

let localnet: StartedHoodLocalnet
let tc: HoodTestClient
let scope: Scope.CloseableScope
let deps: Context.Context<Deps>
let seq = 0

const run = <A, E>(effect: Effect.Effect<A, E, Deps>): Promise<A> => Effect.runPromise(Effect.provide(effect, deps))

const configOf = (over: Partial<HoodLaunchConfig> = {}): HoodLaunchConfig => ({
  chain: localnet.chain,
  rpcUrl: localnet.rpcUrl,
  factory: localnet.addresses.factory,
  bondingCurveBytecode: localnet.artifacts.BondingCurve.bytecode,
  baseUrl: "http://127.0.0.1:3000",
  plans,
  pollMs: 20,
  ...over
})

/** A launch service on the shared dependencies; its watchers live in the file's scope. */
const service = (over: Partial<HoodLaunchConfig> = {}): Promise<HoodHeadlessLaunchShape> =>
  run(Scope.extend(makeHoodLaunch(configOf(over)), scope))

let defaultService: HoodHeadlessLaunchShape

beforeAll(async () => {
  localnet = await startHoodLocalnet()
  tc = hoodTestClient(localnet)
  scope = await Effect.runPromise(Scope.make())
  const infra = Layer.mergeAll(walletProviderLayer({}), launchLedgerLayer.pipe(Layer.provide(launchFailureCodesLayer))).pipe(
    Layer.provideMerge(MasterKey.layer({ masterKey: undefined, dataDir: undefined })),
    Layer.provideMerge(Database.layerTest)
  )
  const wallets = Layer.unwrapEffect(Effect.map(SqlClient.SqlClient, (sql) => walletServiceLayer({ plans, keys: makeKeyDirectory(sql) })))
  const all = wallets.pipe(Layer.provideMerge(infra))
  deps = (await Effect.runPromise(Layer.buildWithScope(all, scope))) as unknown as Context.Context<Deps>
  defaultService = await service()
}, 180_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await localnet?.close()
})

interface Account {
  readonly accountId: string
  readonly principal: Principal
  readonly wallet: Address
}

/** A Max account with a delegated, funded embedded EVM wallet and a linked EVM wallet. */
const newAccount = async (o: { linked?: boolean } = {}): Promise<Account> => {
  const accountId = `acct-hood-${process.pid}-${++seq}`
  const principal: Principal = {
    accountId,
    plan: "max",
    credential: "agentKey",
    keyId: "key-1",
    keyPrefix: "abcd1234",
    scopes: ["launch:write"],
    environment: "production",
    embeddedWallet: "allowed",
    devicePrefix: null
  }
  const embedded = await run(
    Effect.gen(function* () {
      const provider = yield* WalletProvider
      const w = yield* provider.ensureEmbeddedWallet(accountId, "evm")
      yield* provider.setDelegation(accountId, "evm", "active")
      if (o.linked !== false) {
        const owner = privateKeyToAccount(generatePrivateKey())
        const signature = yield* Effect.promise(() => owner.signMessage({ message: provider.linkChallenge(accountId, "evm", owner.address) }))
        const wallets = yield* WalletService
        yield* wallets.link({ ...principal, credential: "session", keyId: null, keyPrefix: null, scopes: [], environment: null, embeddedWallet: null }, {
          chain: "evm",
          address: owner.address,
          signature
        })
      }
      return w
    })
  )
  const wallet = getAddress(embedded.address)
  await setEthBalance(tc, wallet, 10n * ETH)
  return { accountId, principal, wallet }
}

const requestOf = (clientLaunchId: string, buyAmountRaw: bigint, curve = { virtualQuoteRaw: openTier.virtualQuoteRaw, thresholdRaw: openTier.thresholdRaw }): LaunchRequest => ({
  clientLaunchId,
  chain: "hood",
  quoteAsset: "eth",
  mode: "open",
  curve,
  stakerAllocationBps: 50n,
  creatorFeeBps: 0n,
  dexVersion: "v3",
  buyAmountRaw,
  name: `Hood ${clientLaunchId}`.slice(0, 32),
  symbol: "HOOD",
  image: { _tag: "Hosted", url: "http://127.0.0.1:3000/uploads/x.png" },
  banner: null,
  description: null,
  socials: {},
  visibility: "production",
  async: false
})

/** Accepts a new attempt in the ledger, as the route does after its gates. */
const begin = async (a: Account, request: LaunchRequest): Promise<HoodLaunchInput> => {
  const admission = await run(
    Effect.flatMap(LaunchLedger, (l) =>
      l.begin({
        accountId: a.accountId,
        clientLaunchId: request.clientLaunchId,
        keyId: "key-1",
        path: "headless",
        chain: "hood",
        payer: "embedded",
        canonicalBody: canonicalBody(request),
        dailyCap: { keyDailyCap: 1000, plan: planById(plans, "max") }
      })
    )
  )
  if (admission._tag !== "Accepted") throw new Error("expected a new attempt")
  return { attempt: admission.attempt, principal: a.principal, request, metadataUri: request.image.url }
}

const rowOf = (ref: AttemptRef) => run(Effect.flatMap(LaunchLedger, (l) => l.get(ref)))
const curveCount = () => publicClientOf(localnet).readContract({ address: localnet.addresses.factory, abi: curveFactoryAbi, functionName: "curveCount" })
const pc = () => publicClientOf(localnet)

/**
 * Runs a launch with automine off, mining only createCurve's block: the dev buy stays in the
 * mempool; `then` runs before automine is back on.
 */
const launchLeavingDevBuyPending = async (
  svc: HoodHeadlessLaunchShape,
  input: HoodLaunchInput,
  wallet: Address,
  then: (out: HoodLaunchResult) => Promise<void> = async () => {}
) => {
  await setAutomine(tc, false)
  try {
    const fiber = Effect.runFork(svc.launch(input))
    await vi.waitFor(async () => expect(await pc().getTransactionCount({ address: wallet, blockTag: "pending" })).toBe(1), WAIT)
    await mine(tc, 1)
    const out = await Effect.runPromise(Fiber.join(fiber))
    await then(out)
    return out
  } finally {
    await setAutomine(tc, true)
  }
}

/** Drops the pending dev buy and mines a self-transfer with its nonce, signed by the owner wallet: its receipt can never come. */
const replaceDevBuy = async (a: Account, out: HoodLaunchResult) => {
  const buyHash = out.devBuy!.pendingSignature! as Hash
  const pending = await pc().getTransaction({ hash: buyHash })
  await tc.dropTransaction({ hash: buyHash })
  const fees = await pc().estimateFeesPerGas()
  const tx = serializeTransaction({ type: "eip1559", chainId: localnet.chainId, nonce: pending.nonce, gas: 21_000n, ...fees, to: a.wallet, value: 0n })
  const signed = await run(Effect.flatMap(WalletProvider, (p) => p.signWithEmbedded(a.accountId, "evm", Buffer.from(tx.slice(2), "hex"))))
  await pc().sendRawTransaction({ serializedTransaction: signed.signedTransaction as Hash })
  await mine(tc, 1)
}

/**
 * The crash: a launch interrupted once createCurve is in the mempool (the row stays
 * `confirming`); `then` runs before automine is back on.
 */
const crashAfterSend = async (input: HoodLaunchInput, wallet: Address, then: () => Promise<void> = async () => {}) => {
  await setAutomine(tc, false)
  try {
    const fiber = Effect.runFork(defaultService.launch(input))
    await vi.waitFor(async () => expect(await pc().getTransactionCount({ address: wallet, blockTag: "pending" })).toBe(1), WAIT)
    await Effect.runPromise(Fiber.interrupt(fiber))
    await then()
  } finally {
    await setAutomine(tc, true)
  }
}

describe("headless Hood launch on the localnet", () => {
  it("a launch lands: matrix terms, CurveMath's fill, the fee legs", async () => {
    const a = await newAccount()
    const buyAmount = 20_000_000_000_000_000n // the 0.02 ETH ceiling
    const settled: Array<string> = []
    const input = { ...(await begin(a, requestOf(`land-${seq}`, buyAmount))), also: (r: { state: string }) => Effect.sync(() => void settled.push(r.state)) }
    const treasury = localnet.roles.treasury.address
    const treasuryBefore = await pc().getBalance({ address: treasury })
    const out = await Effect.runPromise(defaultService.launch(input))
    expect(settled).toEqual(["confirmed"]) // the caller's 3.1 "Also" writes ran with the confirmation

    // createCurve from the owner's own embedded wallet, on the matrix's terms
    expect(await pc().readContract({ address: localnet.addresses.factory, abi: curveFactoryAbi, functionName: "isCurve", args: [out.curve] })).toBe(true)
    const created = await readCurve(pc(), out.curve, out.blockNumber)
    expect(created.creator).toBe(a.wallet)
    expect(out.creator).toBe(a.wallet)
    expect(created.params.virtualQuoteRaw).toBe(openTier.virtualQuoteRaw)
    expect(created.params.thresholdRaw).toBe(openTier.thresholdRaw)
    expect(created.stakerAllocationBps).toBe(50)
    expect(created.dexVersion).toBe("v3")
    expect(created.token).toBe(out.token)

    // the dev buy: CurveMath's Hood quote on the fresh curve, to the raw unit
    const quote = quoteBuy(created.params, created.state, buyAmount)
    if (quote._tag !== "Filled") throw new Error("quote refused")
    const d = out.devBuy!
    expect(d.outcome).toBe("landed")
    expect(d.amountOutRaw).toBe(quote.amountOut)
    expect(await tokenBalance(pc(), out.token, a.wallet)).toBe(quote.amountOut)
    const buyReceipt = await pc().getTransactionReceipt({ hash: d.signature! })
    const accrued = parseEventLogs({ abi: feeSplitterAbi, logs: buyReceipt.logs, eventName: "FeeAccrued" })
    expect(accrued.map((e) => e.args.amount)).toEqual([quote.fee]) // the curve fee reached the splitter

    // the platform fee (Max: 25 bps) reached the splitter's treasury
    expect(d.fee).toEqual({ bps: 25, feeRaw: (buyAmount * 25n) / 10_000n, treasury })
    expect(d.feeOutcome).toBe("landed")
    expect((await pc().getBalance({ address: treasury })) - treasuryBefore).toBe(d.fee.feeRaw)

    // the ledger row is confirmed with the spec 2.5 result
    const row = await rowOf(input.attempt)
    expect(row?.state).toBe("confirmed")
    expect(row?.pool).toBe(out.curve)
    expect(row?.mint).toBe(out.token)
    expect(row?.signature).toBe(out.txHash)
    expect(row?.result).not.toHaveProperty("success") // the envelope is the route's
    expect(row?.result).toMatchObject({
      chain: "hood",
      mint: out.token,
      pool: out.curve,
      signature: out.txHash,
      matrixVersion: 1,
      nextBuy: { market: out.curve, quoteAsset: "eth", marketStateUrl: `/api/v1/markets/hood/${out.token}` },
      devBuy: { signature: d.signature, outcome: "landed", feeOutcome: "landed", fee: { bps: 25, feeRaw: d.fee.feeRaw.toString(), treasury } }
    })
    expect((row?.result as { devBuy: Record<string, unknown> }).devBuy.pendingSignature).toBeUndefined()
  }, 60_000)

  it("the dev buy fills exactly CurveMath's Hood quote, also across the graduation threshold (capped refund)", async () => {
    const a = await newAccount()
    // A small threshold so amounts up to the 0.02 ETH ceiling cross it.
    const curve = { virtualQuoteRaw: 5_000_000_000_000_000n, thresholdRaw: 10_000_000_000_000_000n }
    let crossed = 0
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.bigInt({ min: 101n, max: 20_000_000_000_000_000n }), fc.bigInt({ min: 10_102_000_000_000_000n, max: 20_000_000_000_000_000n })), async (amount) => {
        const input = await begin(a, requestOf(`prop-${++seq}`, amount, curve))
        const out = await Effect.runPromise(defaultService.launch(input))
        const created = await readCurve(pc(), out.curve, out.blockNumber)
        const quote = quoteBuy(created.params, created.state, amount)
        if (quote._tag !== "Filled") throw new Error("quote refused")
        if (quote.crossesGraduation) crossed++
        expect(out.devBuy?.outcome).toBe("landed")
        const receipt = await pc().getTransactionReceipt({ hash: out.devBuy!.signature! })
        const trade = parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "Trade" })[0]!.args
        expect(trade.amountOut).toBe(quote.amountOut)
        expect(trade.refund).toBe(quote.refund)
        expect(trade.fee).toBe(quote.fee)
        expect(trade.crossesGraduation).toBe(quote.crossesGraduation)
        expect(await tokenBalance(pc(), out.token, a.wallet)).toBe(quote.amountOut)
      }),
      { numRuns: 12, seed: 1125 }
    )
    expect(crossed).toBeGreaterThan(0)
  }, 180_000)

  it("a dev buy front-run in createCurve's block reverts; the launch is confirmed", async () => {
    const a = await newAccount()
    const svc = defaultService // 1% slippage: a 0.1 ETH buy ahead of it moves the price by more
    const input = await begin(a, requestOf(`frontrun-${seq}`, 10_000_000_000_000_000n))
    await setAutomine(tc, false)
    try {
      const fiber = Effect.runFork(svc.launch(input))
      // createCurve is in the mempool; a trader's buy of the predicted curve queues right behind it
      // (the localnet mines in arrival order), so both land in one block, the trader's first.
      await vi.waitFor(async () => expect((await rowOf(input.attempt))?.state).toBe("confirming"), WAIT)
      const curve = (await rowOf(input.attempt))!.pool as Address
      await vi.waitFor(async () => expect(await pc().getTransactionCount({ address: a.wallet, blockTag: "pending" })).toBe(1), WAIT)
      const trader = clientsFor(localnet, localnet.roles.traders[0]!)
      const hash = await trader.wallet.writeContract({ address: curve, abi: bondingCurveAbi, functionName: "buy", args: [ETH / 10n, 0n], value: ETH / 10n, gas: 300_000n })
      await mine(tc, 1)
      const out = await Effect.runPromise(Fiber.join(fiber))
      expect((await pc().getTransactionReceipt({ hash })).status).toBe("success")
      // Quoted at the launch price, the dev buy cannot get its minAmountOut: the node's estimate
      // reverts (SlippageExceeded), so it is never signed: no buy is outstanding, no fee sent.
      expect(out.devBuy).toMatchObject({ outcome: "reverted", signature: null, pendingSignature: null, feeOutcome: "not_sent", amountOutRaw: null, notSentBecause: "SlippageExceeded" })
      expect(await pc().getTransactionCount({ address: a.wallet })).toBe(1)
      expect(await tokenBalance(pc(), out.token, a.wallet)).toBe(0n)
      const row = await rowOf(input.attempt)
      expect(row?.state).toBe("confirmed")
      expect(row?.result).toMatchObject({ signature: out.txHash, devBuy: { outcome: "reverted", feeOutcome: "not_sent" } })
    } finally {
      await setAutomine(tc, true)
    }
  }, 60_000)

  it("a dev buy still pending is watched until it lands; its fee is forgone", async () => {
    const a = await newAccount()
    const svc = await service({ devBuyWaitMs: 200 })
    const input = await begin(a, requestOf(`pending-${seq}`, 10_000_000_000_000_000n))
    const out = await launchLeavingDevBuyPending(svc, input, a.wallet)
    expect(out.devBuy?.outcome).toBe("pending")
    expect(out.devBuy?.pendingSignature).toMatch(/^0x[0-9a-f]{64}$/)
    expect(out.devBuy?.feeOutcome).toBe("not_sent")
    expect((await rowOf(input.attempt))?.state).toBe("confirmed")
    expect(await Effect.runPromise(svc.watching)).toBe(1)
    await mine(tc, 1)
    await vi.waitFor(async () => expect((await Effect.runPromise(svc.devBuyStatus(input.attempt)))?.outcome).toBe("landed"), WAIT)
    const now = (await Effect.runPromise(svc.devBuyStatus(input.attempt)))!
    expect(now.signature).toBe(out.devBuy!.pendingSignature)
    expect(now.pendingSignature).toBeNull()
    expect(now.feeOutcome).toBe("forgone")
    expect(now.amountOutRaw).toBe(await tokenBalance(pc(), out.token, a.wallet))
    await vi.waitFor(async () => expect(await Effect.runPromise(svc.watching)).toBe(0), WAIT)
  }, 60_000)

  it("at the watcher bound a pending dev buy is not watched: its outcome stays as the launch reported it", async () => {
    const a = await newAccount()
    const svc = await service({ devBuyWaitMs: 100, watchersMax: 0 })
    const input = await begin(a, requestOf(`nowatch-${seq}`, 10_000_000_000_000_000n))
    const out = await launchLeavingDevBuyPending(svc, input, a.wallet)
    expect(out.devBuy?.outcome).toBe("pending")
    expect(await Effect.runPromise(svc.watching)).toBe(0)
    await mine(tc, 1)
    expect((await pc().getTransactionReceipt({ hash: out.devBuy!.pendingSignature! })).status).toBe("success")
    expect((await Effect.runPromise(svc.devBuyStatus(input.attempt)))?.outcome).toBe("pending")
  }, 60_000)

  it("dev-buy statuses are kept up to their bound; the oldest is forgotten first", async () => {
    const a = await newAccount()
    const svc = await service({ statusesMax: 2 })
    const inputs = [await begin(a, requestOf(`keep-${++seq}`, ETH / 100n)), await begin(a, requestOf(`keep-${++seq}`, ETH / 100n)), await begin(a, requestOf(`keep-${++seq}`, ETH / 100n))]
    for (const input of inputs) await Effect.runPromise(svc.launch(input))
    const statuses = await Promise.all(inputs.map((i) => Effect.runPromise(svc.devBuyStatus(i.attempt))))
    expect(statuses.map((st) => st?.outcome)).toEqual([undefined, "landed", "landed"])
  }, 60_000)

  it("a dev buy whose nonce was used by another transaction lapses at the watch bound", async () => {
    const a = await newAccount()
    const watchMaxMs = 1_500
    const svc = await service({ devBuyWaitMs: 100, watchMaxMs })
    const input = await begin(a, requestOf(`lapse-${seq}`, 10_000_000_000_000_000n))
    const out = await launchLeavingDevBuyPending(svc, input, a.wallet, (o) => replaceDevBuy(a, o))
    expect(out.devBuy?.outcome).toBe("pending")
    // Before the bound: still pending although the nonce moved on; at the bound: lapsed, and the watcher stops.
    expect((await Effect.runPromise(svc.devBuyStatus(input.attempt)))?.outcome).toBe("pending")
    await vi.waitFor(async () => expect((await Effect.runPromise(svc.devBuyStatus(input.attempt)))?.outcome).toBe("lapsed"), { timeout: 30_000, interval: 20 })
    const lapsed = (await Effect.runPromise(svc.devBuyStatus(input.attempt)))!
    expect(lapsed.pendingSignature).toBe(out.devBuy!.pendingSignature)
    expect(lapsed.signature).toBeNull()
    await vi.waitFor(async () => expect(await Effect.runPromise(svc.watching)).toBe(0), WAIT)
  }, 60_000)

  it("the watcher's default bound is 24 hours (TestClock): pending until then although the nonce moved on, lapsed at it", async () => {
    const a = await newAccount()
    // Default watchMaxMs (24 h); no in-run wait for the buy. The launch and the watcher it forks run on one TestClock.
    const svc = await service({ devBuyWaitMs: 0 })
    const input = await begin(a, requestOf(`testclock-${seq}`, ETH / 100n))
    const onTestClock = await Effect.runPromise(Effect.provide(Effect.runtime<never>(), TestContext.TestContext))
    const adjust = (ms: number) => Runtime.runPromise(onTestClock)(TestClock.adjust(Duration.millis(ms)))
    const status = () => Effect.runPromise(svc.devBuyStatus(input.attempt))
    await setAutomine(tc, false)
    let out: HoodLaunchResult
    try {
      const fiber = Runtime.runFork(onTestClock)(svc.launch(input))
      await vi.waitFor(async () => expect(await pc().getTransactionCount({ address: a.wallet, blockTag: "pending" })).toBe(1), WAIT)
      await mine(tc, 1)
      // createCurve's receipt poll sleeps on the TestClock: step it until the dev buy is out.
      await vi.waitFor(async () => {
        await adjust(20)
        expect(await pc().getTransactionCount({ address: a.wallet, blockTag: "pending" })).toBe(2)
      }, WAIT)
      out = await Effect.runPromise(Fiber.join(fiber))
      await replaceDevBuy(a, out)
    } finally {
      await setAutomine(tc, true)
    }
    expect(out.devBuy?.outcome).toBe("pending")
    const hour = 3_600_000
    await adjust(23 * hour)
    await vi.waitFor(async () => expect((await status())?.watchedAtMs).toBeGreaterThanOrEqual(23 * hour), WAIT)
    expect((await status())?.outcome).toBe("pending") // the nonce moved on, but the 24 hours have not passed
    expect(await Effect.runPromise(svc.watching)).toBe(1)
    await adjust(hour)
    await vi.waitFor(async () => expect((await status())?.outcome).toBe("lapsed"), WAIT)
    await vi.waitFor(async () => expect(await Effect.runPromise(svc.watching)).toBe(0), WAIT)
  }, 60_000)

  it("recovery finds a sent launch after a crash and confirms it without sending again", async () => {
    const a = await newAccount()
    const input = await begin(a, requestOf(`recover-${seq}`, 0n))
    const before = await curveCount()
    await crashAfterSend(input, a.wallet)
    const sent = (await rowOf(input.attempt))!
    expect(sent.state).toBe("confirming")
    await mine(tc, 1)
    const fresh = await service() // a new process: nothing in memory
    const out = await Effect.runPromise(fresh.recover(input))
    expect(out.curve).toBe(sent.pool)
    expect(out.txHash).toBe(sent.signature)
    expect(await curveCount()).toBe(before + 1n)
    expect(await pc().getTransactionCount({ address: a.wallet })).toBe(1)
    expect((await rowOf(input.attempt))?.state).toBe("confirmed")
  }, 60_000)

  it("recovery re-sends a createCurve that never got out, with the same salt: one curve at the predicted address", async () => {
    const a = await newAccount()
    const input = await begin(a, requestOf(`resend-${seq}`, 0n))
    const before = await curveCount()
    await crashAfterSend(input, a.wallet, async () => {
      await tc.dropTransaction({ hash: (await rowOf(input.attempt))!.signature as Hash })
    })
    const sent = (await rowOf(input.attempt))!
    await expect(pc().getTransaction({ hash: sent.signature as Hash })).rejects.toThrow() // the node never saw it
    const out = await Effect.runPromise((await service()).recover(input))
    expect(out.curve).toBe(sent.pool)
    // Re-signed with the same salt, nonce and fees: the same bytes, so the same hash, now mined.
    expect((await pc().getTransactionReceipt({ hash: out.txHash })).status).toBe("success")
    expect(await curveCount()).toBe(before + 1n)
    const row = (await rowOf(input.attempt))!
    expect(row.state).toBe("confirmed")
    expect(row.signature).toBe(out.txHash)
  }, 60_000)

  it("refuses without a linked EVM wallet (rule 8): LAUNCH_FAILED recorded, slot refunded, nothing on chain", async () => {
    const a = await newAccount({ linked: false })
    const settled: Array<string> = []
    const input = { ...(await begin(a, requestOf(`nolink-${seq}`, 0n))), also: (r: { state: string }) => Effect.sync(() => void settled.push(r.state)) }
    const before = await curveCount()
    const exit = await Effect.runPromiseExit(defaultService.launch(input))
    expect(settled).toEqual(["failed"])
    expect(exit._tag).toBe("Failure")
    expect(JSON.stringify(exit)).toContain("no_linked_evm_wallet")
    const row = await rowOf(input.attempt)
    expect(row?.state).toBe("failed")
    expect(launchFailureCode(row?.errorCode ?? "")).toBe("LAUNCH_FAILED")
    expect(row?.slot).toBeNull()
    expect(await curveCount()).toBe(before)
    expect(await pc().getTransactionCount({ address: a.wallet })).toBe(0)
  }, 60_000)

  it("refuses a revoked delegation before signing: DELEGATION_REVOKED recorded, nothing on chain", async () => {
    const a = await newAccount()
    await run(Effect.flatMap(WalletProvider, (p) => p.setDelegation(a.accountId, "evm", "revoked")))
    const input = await begin(a, requestOf(`revoked-${seq}`, 0n))
    const exit = await Effect.runPromiseExit(defaultService.launch(input))
    expect(JSON.stringify(exit)).toContain("delegation_revoked")
    expect(launchFailureCode((await rowOf(input.attempt))?.errorCode ?? "")).toBe("DELEGATION_REVOKED")
    expect(await pc().getTransactionCount({ address: a.wallet })).toBe(0)
  }, 60_000)

  it("a wallet key that cannot be opened is the outage Solana answers (retryable LAUNCH_FAILED, signing_failed), not a policy denial", async () => {
    const a = await newAccount()
    // The sealed key no longer opens under the master key: the provider's `key_unavailable`.
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE wp_wallets SET secret_sealed = 'v1.corrupt' WHERE account_id = ${a.accountId} AND custody = 'embedded'`))
    const input = await begin(a, requestOf(`keyout-${seq}`, 0n))
    const exit = await Effect.runPromiseExit(defaultService.launch(input))
    const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
    if (!(error instanceof HoodLaunchError)) throw new Error(`expected a HoodLaunchError, got ${String(error)}`)
    expect({ reason: error.reason, retryable: error.retryable }).toEqual({ reason: "signing_failed", retryable: true })
    const answer = toApiError(fromHood(error))
    expect({ code: answer.code, retryable: answer.retryable, reason: answer.extra?.reason }).toEqual({ code: "LAUNCH_FAILED", retryable: true, reason: "signing_failed" })
    const row = await rowOf(input.attempt)
    expect(row?.state).toBe("failed")
    expect(launchFailureCode(row?.errorCode ?? "")).toBe("LAUNCH_FAILED")
    expect(await pc().getTransactionCount({ address: a.wallet })).toBe(0)
  }, 60_000)

  it("Hood configuration incomplete: HOOD_LAUNCH_UNAVAILABLE recorded failed, nothing broadcast", async () => {
    const a = await newAccount()
    const svc = await service({ factory: undefined })
    const input = await begin(a, requestOf(`unavail-${seq}`, 0n))
    const exit = await Effect.runPromiseExit(svc.launch(input))
    expect(JSON.stringify(exit)).toContain("hood_unavailable")
    expect(launchFailureCode((await rowOf(input.attempt))?.errorCode ?? "")).toBe("HOOD_LAUNCH_UNAVAILABLE")
    expect(await pc().getTransactionCount({ address: a.wallet })).toBe(0)
  }, 60_000)
})

