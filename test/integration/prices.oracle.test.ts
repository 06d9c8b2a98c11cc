/**
 * USD prices from a real source (issue 31): SOL/USD is Pyth's `PriceUpdateV2` account on the
 * localnet, moved by its publisher with signed transactions, followed by the engine over the same
 * Yellowstone server it ingests markets from (`ingest/solana/PythPriceFeed.ts`); ETH/USD is the
 * Hood localnet's AggregatorV3-style `EthUsdFeed`, polled (`ingest/hood/EthUsdFeed.ts`); both are
 * valued through the configured price source (`src/layers/Prices.ts`, `PRICE_SOURCE`).
 * - the oracle's price reaches a USD figure to the exact raw unit (bigint) and follows each move;
 * - a stale or invalid price (price ≤ 0, confidence too wide) is `PriceUnavailable`, so a USD cap
 *   has no value and fails closed (spend gate), and the Hood mark answers QUOTE_UNAVAILABLE (its own test);
 * - `PRICE_SOURCE=fixed` keeps answering the configured prices whatever the oracle says.
 */
import { Context, ConfigProvider, Effect, Exit, Layer, Scope, TestClock, TestContext } from "effect"
import { privateKeyToAccount } from "viem/accounts"
import { hoodPublicClient, hoodWallet } from "../../src/chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "../../src/chain/hood/HoodEndpoints.js"
import { ETH_USD_REPORTER_KEY } from "../../src/chain/hood/localnet/DevAccounts.js"
import { HoodLocalnet, type HoodLocalnetShape } from "../../src/chain/hood/localnet/LocalnetService.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pythPublisherSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getLocalnetPostPriceInstruction } from "../../src/chain/solana/client/PythInstructions.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import { expectOk, send } from "../../src/chain/solana/localnet/testkit.js"
import { PYTH_SOL_USD_ACCOUNT } from "../../src/chain/solana/program/accounts/PythPriceUpdate.js"
import { SolanaEndpoints } from "../../src/chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../../src/config/AppConfig.js"
import * as Prices from "../../src/layers/Prices.js"
import { usdOf } from "../../src/services/prices/Money.js"
import { postEthUsdAnswer } from "../../src/sim/EthUsdPublisher.js"
import { PriceSource, type PriceSourceShape, type UsdPrice } from "../../src/services/prices/PriceSource.js"
import { usdOfQuote } from "../../src/services/spend/SpendValue.js"
import { eventually } from "../support/eventually.js"

let scope: Scope.CloseableScope
let localnet: SolanaLocalnetShape
let hood: HoodLocalnetShape

const pricesWith = async (env: Record<string, string>): Promise<PriceSourceShape> => {
  const endpoints = Layer.succeed(SolanaEndpoints, {
    embedded: false,
    rpcUrl: localnet.rpcUrl,
    grpcUrl: localnet.grpcUrl,
    grpcToken: undefined,
    blockEngineUrl: localnet.blockEngineUrl,
    keeper: undefined,
    localFaucet: undefined,
    localnetCrashed: Effect.never
  })
  const hoodEndpoints = Layer.succeed(HoodEndpoints, {
    embedded: true,
    rpcUrl: hood.rpcUrl,
    chain: hood.chain,
    addresses: hood.addresses,
    keeper: undefined,
    traderKeys: [],
    bondingCurveBytecode: undefined,
    localnetCrashed: Effect.never
  })
  const layer = Prices.layer.pipe(
    Layer.provide(Layer.mergeAll(AppConfig.layer, endpoints, hoodEndpoints)),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )
  const ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return ctx.unsafeMap.get(PriceSource.key) as PriceSourceShape
}

const post = async (price: bigint, conf: bigint) => {
  const publisher = await pythPublisherSigner()
  const r = expectOk(localnet.ledger, await send(localnet.ledger, publisher, [getLocalnetPostPriceInstruction({ publisher, priceAccount: PYTH_SOL_USD_ACCOUNT, price, conf, exponent: -8 })]))
  return r.slot
}

const solPrice = (prices: PriceSourceShape) => Effect.runPromise(Effect.either(prices.usd("sol")))

/** Waits until the source answers SOL at exactly `usdRaw` (scale 8). */
const priced = (prices: PriceSourceShape, usdRaw: bigint) =>
  eventually(
    async () => {
      const p = await solPrice(prices)
      return p._tag === "Right" && p.right.usdRaw === usdRaw && p.right
    },
    { what: `SOL at ${usdRaw}e-8 from the oracle`, deadlineMs: 30_000 }
  ) as Promise<UsdPrice>

const refusedFor = (prices: PriceSourceShape, reason: string) =>
  eventually(
    async () => {
      const p = await solPrice(prices)
      return p._tag === "Left" && p.left.reason === reason
    },
    { what: `SOL refused as ${reason}`, deadlineMs: 30_000 }
  )

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ ledger: { slotMs: 20 } }), scope))
  localnet = ctx.unsafeMap.get(SolanaLocalnet.key) as SolanaLocalnetShape
  hood = Context.get(await Effect.runPromise(Layer.buildWithScope(HoodLocalnet.layer({ clockMs: Date.now }), scope)), HoodLocalnet)
}, 300_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("USD prices from the on-chain oracle (PRICE_SOURCE=oracle)", () => {
  let prices: PriceSourceShape

  beforeAll(async () => {
    prices = await pricesWith({ PRICE_SOURCE: "oracle" })
  }, 60_000)

  it("SOL/USD flows from the localnet's Pyth account through Yellowstone to a USD figure, exact to the raw unit, and follows the oracle's moves", async () => {
    const genesis = await priced(prices, 15_000_000_000n)
    expect([genesis.scale, genesis.source]).toEqual([8, `pyth:${PYTH_SOL_USD_ACCOUNT}`])
    // 85 SOL raised: 85 × 150 = 12,750 USD; the spend gate values 2.5 SOL at 375 USD in micro-dollars.
    expect(usdOf(85_000_000_000n, 9, genesis)).toBe("12750")
    expect(await Effect.runPromise(usdOfQuote(prices, "solana", "sol", 2_500_000_000n))).toBe(375_000_000n)

    await post(16_325_123_456n, 7_000_000n)
    const moved = await priced(prices, 16_325_123_456n)
    // 85 SOL at 163.25123456 = 13,876.3549376 USD, truncated to the micro-dollar; 1 lamport at it: 0.000000163... → 0.
    expect(usdOf(85_000_000_000n, 9, moved)).toBe("13876.354937")
    expect((85_000_000_000n * 16_325_123_456n * 10n ** 6n) / 10n ** 17n).toBe(13_876_354_937n)
    expect(await Effect.runPromise(usdOfQuote(prices, "solana", "sol", 2_500_000_000n))).toBe(408_128_086n)
    expect(await Effect.runPromise(usdOfQuote(prices, "solana", "sol", 1n))).toBe(0n)
  }, 60_000)

  it("an invalid price (≤ 0, or a confidence wider than PRICE_MAX_CONFIDENCE_BPS) is PriceUnavailable: the USD cap has no value and fails closed", async () => {
    await post(0n, 0n)
    await refusedFor(prices, "invalid")
    expect(await Effect.runPromise(usdOfQuote(prices, "solana", "sol", 2_500_000_000n))).toBeNull()
    await post(16_000_000_000n, 400_000_000n) // ± 4 USD on 160 = 250 bps > 200
    await refusedFor(prices, "invalid")
    expect(await Effect.runPromise(usdOfQuote(prices, "solana", "sol", 2_500_000_000n))).toBeNull()
    await post(16_000_000_000n, 100_000_000n)
    await priced(prices, 16_000_000_000n)
  }, 60_000)

  it("a price published longer ago than PRICE_MAX_AGE_MS (by the Effect Clock) is PriceUnavailable stale", async () => {
    const fresh = await priced(prices, 16_000_000_000n)
    const at = (ms: number) => Effect.runPromise(Effect.either(Effect.zipRight(TestClock.setTime(ms), prices.usd("sol"))).pipe(Effect.provide(TestContext.TestContext)))
    const edge = await at(fresh.asOfMs + 60_000)
    expect(edge._tag === "Right" && edge.right.usdRaw).toBe(16_000_000_000n)
    const stale = await at(fresh.asOfMs + 60_001)
    expect(stale._tag === "Left" && stale.left.reason).toBe("stale")
  }, 60_000)

  it("after the Yellowstone stream drops, the feed resubscribes and catches up on the move it missed", async () => {
    const before = await priced(prices, 16_000_000_000n)
    expect(localnet.geyser.dropStreams()).toBeGreaterThan(0)
    await post(15_500_000_001n, 1_000_000n)
    const after = await priced(prices, 15_500_000_001n)
    expect(after.asOfMs).toBeGreaterThanOrEqual(before.asOfMs)
    await post(16_000_000_000n, 100_000_000n)
    await priced(prices, 16_000_000_000n)
  }, 60_000)

  it("the assets without an oracle (stablecoins, the platform token) keep their fixed prices", async () => {
    const usdc = await Effect.runPromise(prices.usd("usdc"))
    expect([usdc.usdRaw, usdc.scale, usdc.source]).toEqual([1n, 0, "localnet-fixed"])
  })
})

/** Posts an ETH/USD answer (8 decimals) from the feed's reporter and waits for its receipt. */
const postEth = async (answer: bigint) => {
  const account = privateKeyToAccount(ETH_USD_REPORTER_KEY)
  await postEthUsdAnswer({ publicClient: hoodPublicClient(hood.chain, hood.rpcUrl), wallet: hoodWallet(hood.chain, account, hood.rpcUrl), chain: hood.chain, account }, hood.addresses.ethUsdFeed!, answer)
}

const ethPrice = (prices: PriceSourceShape) => Effect.runPromise(Effect.either(prices.usd("eth")))

describe("ETH/USD from the Hood localnet's AggregatorV3 feed (PRICE_SOURCE=oracle)", () => {
  let prices: PriceSourceShape

  beforeAll(async () => {
    prices = await pricesWith({ PRICE_SOURCE: "oracle" })
  }, 60_000)

  it("ETH/USD flows from the feed deployed at genesis to a USD figure, exact to the raw unit, and follows its updates", async () => {
    const genesis = await eventually(async () => {
      const p = await ethPrice(prices)
      return p._tag === "Right" && p.right
    }, { what: "ETH from the feed", deadlineMs: 30_000 })
    expect([genesis.usdRaw, genesis.scale, genesis.source]).toEqual([300_000_000_000n, 8, `aggregator:${hood.addresses.ethUsdFeed}`])
    expect(await Effect.runPromise(usdOfQuote(prices, "hood", "eth", 1_500_000_000_000_000_000n))).toBe(4_500_000_000n)
    await postEth(312_345_678_901n)
    await eventually(async () => {
      const p = await ethPrice(prices)
      return p._tag === "Right" && p.right.usdRaw === 312_345_678_901n
    }, { what: "ETH at 3123.45678901", deadlineMs: 30_000 })
    // 1.5 ETH × 3123.45678901 = 4685.185183515 USD → 4,685,185,183 micro-dollars (truncated).
    expect(await Effect.runPromise(usdOfQuote(prices, "hood", "eth", 1_500_000_000_000_000_000n))).toBe(4_685_185_183n)
  }, 60_000)

  it("a non-positive answer is invalid and an answer older than PRICE_MAX_AGE_MS is stale: PriceUnavailable, the USD cap fails closed", async () => {
    await postEth(-1n)
    await eventually(async () => {
      const p = await ethPrice(prices)
      return p._tag === "Left" && p.left.reason === "invalid"
    }, { what: "ETH refused as invalid", deadlineMs: 30_000 })
    expect(await Effect.runPromise(usdOfQuote(prices, "hood", "eth", 1_000_000_000_000_000_000n))).toBeNull()
    await postEth(300_000_000_000n)
    const fresh = await eventually(async () => {
      const p = await ethPrice(prices)
      return p._tag === "Right" && p.right
    }, { what: "ETH valid again", deadlineMs: 30_000 })
    const at = (ms: number) => Effect.runPromise(Effect.either(Effect.zipRight(TestClock.setTime(ms), prices.usd("eth"))).pipe(Effect.provide(TestContext.TestContext)))
    const stale = await at(fresh.asOfMs + 60_001)
    expect(stale._tag === "Left" && stale.left.reason).toBe("stale")
  }, 60_000)
})

describe("PRICE_SOURCE=fixed", () => {
  it("answers the configured prices whatever the oracle says", async () => {
    const fixed = await pricesWith({ PRICE_SOURCE: "fixed", LOCALNET_USD_PRICES: "sol=151.5" })
    await post(17_000_000_000n, 1_000_000n)
    const sol = await Effect.runPromise(fixed.usd("sol"))
    expect([sol.usdRaw, sol.scale, sol.source]).toEqual([1515n, 1, "localnet-fixed"])
    expect(await Effect.runPromise(usdOfQuote(fixed, "solana", "sol", 2_000_000_000n))).toBe(303_000_000n)
    const eth = await Effect.runPromise(fixed.usd("eth"))
    expect([eth.usdRaw, eth.scale, eth.source]).toEqual([3000n, 0, "localnet-fixed"])
  }, 60_000)
})
