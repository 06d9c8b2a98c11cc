/**
 * `GET /api/v1/markets/hood/{mint}/mark` over real HTTP (uWS) against the real Hood localnet:
 * curves created, completed and migrated into real Uniswap v3 with HoodClient, the read model
 * built by the real market step from the contracts' logs, pools read by the route through viem.
 * Covers: every field of the mark checked against an independent computation from slot0 and the
 * fee (both token orderings), the 10 s per-mint cache (RPC calls counted), single flight, the
 * 600-a-minute limit at its bound, MARKET_NOT_FOUND (unknown, trading, recovery, no pool) and
 * QUOTE_UNAVAILABLE (price source failure, chain failure), neither of the latter cached; and the mark
 * valued by the localnet's on-chain ETH/USD feed, an invalid answer being QUOTE_UNAVAILABLE.
 */
import { Effect, Exit, Scope, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, createPublicClient, getAddress, http, parseEventLogs, type PublicClient, zeroAddress } from "viem"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { actorKey, type MarketState, step } from "../../actors/market/MarketActor.js"
import { MARK_LIMIT_PER_MIN, markRoutes } from "../../api/routes/MarkRoutes.js"
import { TtlCache } from "../../api/ReadCache.js"
import { marketRoutes } from "../../api/routes/MarketRoutes.js"
import { openApiDocument } from "../../api/OpenApi.js"
import { serve } from "../../api/Server.js"
import { type ChainEvent, CurveCompleted, CurveCreated, CurveMigrated, hoodPosition, MigrationProgress, Trade } from "../../ingest/ChainEvent.js"
import { bondingCurveAbi, curveFactoryAbi, nonfungiblePositionManagerAbi, uniswapV3PoolAbi } from "../../src/chain/hood/abi.generated.js"
import { approve, buy, cancelMigration, createCurve, type HoodClients, hoodWallet, migrate, readCurve, saltOf } from "../../src/chain/hood/client/HoodClient.js"
import { GRADUATED_POOL_FEE } from "../../src/chain/hood/localnet/Deploy.js"
import { clientsFor, publicClientOf, startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { pickDeepest, type PoolRead } from "../../src/services/prices/HoodMark.js"
import { fixedPriceSource, parseFixedPrices, parseUsdDecimal, providerPriceSource } from "../../src/services/prices/PriceSource.js"
import { ethUsdFeed } from "../../ingest/hood/EthUsdFeed.js"
import { ethUsdFeedAbi } from "../../src/chain/hood/abi.generated.js"
import { ETH_USD_REPORTER_KEY } from "../../src/chain/hood/localnet/DevAccounts.js"
import { privateKeyToAccount } from "viem/accounts"
import { oraclePriceSource } from "../../src/services/prices/OraclePrice.js"
import { eventually } from "../support/eventually.js"
import { clockAt } from "../support/clock.js"

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0) // a minute boundary
let nowMs = T0

let net: StartedHoodLocalnet
let pc: PublicClient
let keeper: HoodClients
let traders: ReadonlyArray<HoodClients>
let scope: Scope.CloseableScope
let url: string // ETH priced at 3000, USDG unpriced
let downUrl: string // the chain unreachable
let rpcCalls = 0
const index = new MarketIndexStore()
const states = new Map<string, MarketState | undefined>()

interface Launched {
  readonly curve: Address
  readonly token: Address
  readonly mint: string
}
let low: Launched // token sorts before WETH (token0)
let high: Launched // token sorts after WETH (token1)
let trading: Launched
let stuck: Launched // completed, no pool
let recovered: Launched
let usdgMarket: Launched

/** The contracts' logs as ChainEvents (docs/hood-contracts.md), applied by the real market step. */
const ingestAll = async () => {
  const logs = parseEventLogs({ abi: [...curveFactoryAbi, ...bondingCurveAbi], logs: await pc.getLogs({ fromBlock: 0n, toBlock: "latest" }) })
  const changes: Array<readonly [string, MarketState | undefined]> = []
  for (const log of logs) {
    const base = {
      id: `hood:${log.transactionHash}:${log.logIndex}`,
      position: hoodPosition(log.blockNumber, log.logIndex),
      chain: "hood" as const,
      timestampMs: T0,
      signature: log.transactionHash
    }
    let e: ChainEvent | undefined
    switch (log.eventName) {
      case "CurveCreated": {
        const a = log.args
        e = new CurveCreated({
          ...base, mint: a.token.toLowerCase(), curve: a.curve.toLowerCase(), creator: a.creator.toLowerCase(), quoteMint: a.quoteToken.toLowerCase(),
          quoteDecimals: a.quoteDecimals, decimals: 18, virtualQuoteRaw: a.virtualQuote, thresholdRaw: a.graduationThreshold, supplyRaw: a.tokenSupply,
          tokenReserveRaw: a.tokenReserve, stakerAllocationBps: a.stakerAllocationBps, feeBps: a.feeBps, creatorFeeBps: 0, mode: "open",
          name: a.name, symbol: a.symbol, uri: a.uri, dexVersion: a.dexVersion === 3 ? "v3" : "v4", configHash: a.configHash
        })
        break
      }
      case "Trade": {
        const a = log.args
        e = new Trade({
          ...base, mint: a.token.toLowerCase(), venue: "curve", side: a.isBuy ? "buy" : "sell", trader: a.trader.toLowerCase(),
          amountInRaw: a.amountIn, amountOutRaw: a.amountOut, feeRaw: a.fee, refundRaw: a.refund, quoteConsumedRaw: a.isBuy ? a.quoteConsumed : a.amountIn,
          quoteReserveRaw: a.virtualQuoteReserve, tokenReserveRaw: a.virtualTokenReserve, realQuoteRaw: a.realQuote, crossesGraduation: a.crossesGraduation
        })
        break
      }
      case "CurveCompleted":
        e = new CurveCompleted({ ...base, mint: log.args.token.toLowerCase(), curve: log.address.toLowerCase(), realQuoteRaw: log.args.realQuote })
        break
      case "CurveMigrated":
        e = new CurveMigrated({ ...base, mint: log.args.token.toLowerCase(), pool: null, quoteRaw: log.args.quoteAmount, tokensRaw: log.args.tokenAmount, feeBps: log.args.poolFee / 100 })
        break
      case "RecoveryStarted":
        e = new MigrationProgress({ ...base, mint: log.args.token.toLowerCase(), status: "cancelled", attempts: 1, nextAttemptAtMs: null, gaveUpAtMs: T0, lastError: "PoolPriceMismatch" })
        break
      default:
        break
    }
    if (e === undefined) continue
    const key = actorKey("hood", e.mint)
    const [next] = step(states.get(key), e)
    states.set(key, next)
    changes.push([key, next])
  }
  index.publish(changes)
  index.setWarming(false)
}

const launch = async (label: string, quoteToken: Address = zeroAddress): Promise<Launched> => {
  const usdg = quoteToken !== zeroAddress
  const tier = findEconomics("hood", usdg ? "usdg" : "eth")!.tiers[0]!
  const created = await createCurve(traders[0]!, net.addresses.factory, {
    name: label, symbol: "MRK", quoteToken, virtualQuoteRaw: tier.virtualQuoteRaw, thresholdRaw: tier.thresholdRaw, dexVersion: "v3", salt: saltOf(label)
  })
  return { curve: created.curve, token: created.token, mint: created.token.toLowerCase() }
}

const complete = async (m: Launched, quoteToken: Address = zeroAddress) => {
  const tier = findEconomics("hood", quoteToken === zeroAddress ? "eth" : "usdg")!.tiers[0]!
  if (quoteToken !== zeroAddress) {
    await approve(traders[1]!, quoteToken, m.curve, tier.thresholdRaw * 2n)
  }
  const bought = await buy(traders[1]!, m.curve, { amountInRaw: tier.thresholdRaw * 2n, quoteToken })
  expect(bought.completed).toBeDefined()
}

const get = async (base: string, path: string) => {
  const res = await fetch(base + path)
  return { status: res.status, headers: res.headers, body: (await res.json()) as any }
}

beforeAll(async () => {
  net = await startHoodLocalnet()
  pc = publicClientOf(net)
  keeper = clientsFor(net, net.roles.keeper)
  traders = net.roles.traders.map((t) => clientsFor(net, t))
  const weth = net.addresses.weth9.toLowerCase()

  // Both orderings of the pool: find salts whose token sorts before and after WETH.
  const found: Launched[] = []
  for (let i = 0; i < 64 && (found.find((m) => m.mint < weth) === undefined || found.find((m) => m.mint > weth) === undefined); i++) {
    found.push(await launch(`mark-${i}`))
  }
  low = found.find((m) => m.mint < weth)!
  high = found.find((m) => m.mint > weth)!
  for (const m of [low, high]) {
    await complete(m)
    await migrate(keeper, m.curve)
  }
  trading = await launch("mark-trading")
  stuck = await launch("mark-stuck")
  await complete(stuck)
  recovered = await launch("mark-recovered")
  await complete(recovered)
  await cancelMigration(keeper, recovered.curve)
  usdgMarket = await launch("mark-usdg", net.addresses.usdg)
  await complete(usdgMarket, net.addresses.usdg)
  await migrate(keeper, usdgMarket.curve)
  await ingestAll()

  // The route's own client counts every JSON-RPC request it makes.
  const counted = createPublicClient({
    chain: net.chain,
    transport: http(net.rpcUrl, { retryCount: 0, onFetchRequest: () => void rpcCalls++ }),
    cacheTime: 0
  })
  const dead = createPublicClient({ chain: net.chain, transport: http("http://127.0.0.1:9", { retryCount: 0 }), cacheTime: 0 })
  scope = await Effect.runPromise(Scope.make())
  const clock = () => nowMs
  const common = { index, nowMs: clock, addresses: net.addresses }
  const server = await Effect.runPromise(
    serve({
      name: "mark",
      host: "127.0.0.1",
      port: 0,
      maxBodyBytes: 1024,
      routes: [
        ...marketRoutes({ index, nowMs: clock, curveProgram: "SVCcurve11111111111111111111111111111111111" }),
        ...markRoutes({ ...common, publicClient: counted as PublicClient, prices: fixedPriceSource({ eth: "3000" }) })
      ]
    }).pipe(Effect.withClock(clockAt(clock)), Scope.extend(scope))
  )
  url = server.url
  const down = await Effect.runPromise(
    serve({
      name: "mark-down",
      host: "127.0.0.1",
      port: 0,
      maxBodyBytes: 1024,
      routes: markRoutes({ ...common, publicClient: dead as PublicClient, prices: fixedPriceSource({ eth: "3000" }) })
    }).pipe(Effect.withClock(clockAt(clock)), Scope.extend(scope))
  )
  downUrl = down.url
}, 180_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (net !== undefined) await net.close()
})

/** The mark from first principles: mid = (P/2^96)^2 (token0) or its inverse, × 10^(18−qd) × USD, to 18 decimals. */
const independent = (sqrtP: bigint, tokenIs0: boolean, quoteDecimals: number, usd: bigint, feePips: bigint) => {
  const e18 = 10n ** 18n
  const [n, d] = tokenIs0 ? [sqrtP * sqrtP, 2n ** 192n] : [2n ** 192n, sqrtP * sqrtP]
  const scaledNum = n * 10n ** 18n * usd * e18
  const scaledDen = d * 10n ** BigInt(quoteDecimals)
  const price = scaledNum / scaledDen
  const sell = (scaledNum * (1_000_000n - feePips)) / (scaledDen * 1_000_000n)
  const buyNum = scaledNum * 1_000_000n
  const buyDen = scaledDen * (1_000_000n - feePips)
  const buy = buyNum % buyDen === 0n ? buyNum / buyDen : buyNum / buyDen + 1n
  return { price, sell, buy }
}

const dec = (s: string): bigint => {
  const p = parseUsdDecimal(s)!
  return p.raw * 10n ** BigInt(18 - p.scale)
}

describe("Hood mark", () => {
  it("serves every field of the mark from the deepest pool, fee-adjusted, for both token orderings", async () => {
    nowMs = T0 + 1_000
    for (const m of [low, high]) {
      const r = await get(url, `/api/v1/markets/hood/${m.token}/mark`)
      expect(r.status).toBe(200)
      expect(r.headers.get("cache-control")).toBe("public, max-age=10")
      const mark = r.body.mark
      expect(r.body.success).toBe(true)
      const onChain = await readCurve(pc, m.curve)
      const pool = onChain.pool!
      const [sqrtP, tick] = await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "slot0" })
      const liquidity = await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "liquidity" })
      const fee = await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "fee" })
      expect(fee).toBe(GRADUATED_POOL_FEE)
      const tokenIs0 = m === low
      const want = independent(sqrtP, tokenIs0, 18, 3000n, BigInt(fee))
      expect(mark).toMatchObject({
        chain: "hood",
        mint: m.mint,
        feeBps: 30,
        lpFeeBps: 30,
        hookFeeBps: 0,
        pool: getAddress(pool),
        poolFeeTier: 3000,
        venue: "dex-evm-v3",
        liquidity: liquidity.toString(),
        sqrtPriceX96: sqrtP.toString(),
        tick,
        quoteAsset: "eth",
        quoteToken: net.addresses.weth9,
        quoteUsd: "3000",
        asOf: new Date(T0 + 1_000).toISOString()
      })
      expect(typeof mark.blockNumber).toBe("string")
      expect(dec(mark.priceUsd)).toBe(want.price)
      expect(dec(mark.sellUsd)).toBe(want.sell)
      expect(dec(mark.buyUsd)).toBe(want.buy)
      expect(dec(mark.sellUsd)).toBeLessThan(dec(mark.priceUsd))
      expect(dec(mark.buyUsd)).toBeGreaterThan(dec(mark.priceUsd))
      // And against the curve it graduated from: the pool opened at the curve's final price vQuote/vTok.
      const curvePrice = Number(onChain.state.virtualQuoteRaw) / Number(onChain.state.virtualTokenRaw)
      expect(Math.abs(Number(mark.priceQuote) / curvePrice - 1)).toBeLessThan(1e-9)
      expect(Math.abs(Number(mark.priceUsd) / (curvePrice * 3000) - 1)).toBeLessThan(1e-9)
      expect(Number(mark.sellUsd) / Number(mark.priceUsd)).toBeCloseTo(0.997, 9)
    }
  }, 30_000)

  it("caches 10 s per mint: a second read within 10 s does not touch the chain; concurrent reads share one", async () => {
    nowMs = T0 + 2_000
    const path = `/api/v1/markets/hood/${high.token}/mark`
    rpcCalls = 0
    // `high` was read at T0+1s: still cached at T0+2s and at T0+10.999s.
    expect((await get(url, path)).status).toBe(200)
    nowMs = T0 + 10_999
    const cached = await get(url, path)
    expect(cached.status).toBe(200)
    expect(cached.body.mark.asOf).toBe(new Date(T0 + 1_000).toISOString())
    expect(rpcCalls).toBe(0)
    // At 10 s the entry is stale: one new read (block number, four getPool, slot0 and liquidity of the one pool).
    nowMs = T0 + 11_000
    const fresh = await get(url, path)
    expect(fresh.body.mark.asOf).toBe(new Date(T0 + 11_000).toISOString())
    const oneRead = rpcCalls
    expect(oneRead).toBe(7)
    // Eight concurrent requests for a mint not in the cache: one chain read.
    nowMs = T0 + 30_000
    rpcCalls = 0
    const many = await Promise.all(Array.from({ length: 8 }, () => get(url, `/api/v1/markets/hood/${low.token.toLowerCase()}/mark`)))
    expect(many.every((r) => r.status === 200)).toBe(true)
    expect(new Set(many.map((r) => JSON.stringify(r.body))).size).toBe(1)
    expect(rpcCalls).toBe(oneRead)
  })

  it("the cache holds at most its bound of mints, dropping the oldest", () => {
    const cache = new TtlCache<string>(10_000, 2)
    cache.set("a", 0, "A")
    cache.set("b", 0, "B")
    cache.set("c", 0, "C")
    expect(cache.size).toBe(2)
    expect(cache.get("a", 1)).toBeUndefined()
    expect(cache.get("b", 1)).toBe("B")
    expect(cache.get("c", 9_999)).toBe("C")
    expect(cache.get("c", 10_000)).toBeUndefined()
    expect(() => new TtlCache(1, 0)).toThrow()
  })

  it("MARKET_NOT_FOUND: unknown token, a curve still trading, a market in recovery, a completed curve with no pool", async () => {
    nowMs = T0 + 40_000
    const unknown = await get(url, `/api/v1/markets/hood/0x${"12".repeat(20)}/mark`)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toMatchObject({ code: "MARKET_NOT_FOUND", reason: "token_unknown", retryable: false })
    for (const [m, reason] of [
      [trading, "curve_trading"],
      [recovered, "market_recovery"],
      [stuck, "no_pool"]
    ] as const) {
      const r = await get(url, `/api/v1/markets/hood/${m.token}/mark`)
      expect(r.status).toBe(404)
      expect(r.body.error).toMatchObject({ code: "MARKET_NOT_FOUND", reason })
    }
    // A token without a usable pool is cached like a price (10 s): no chain read the second time.
    rpcCalls = 0
    expect((await get(url, `/api/v1/markets/hood/${stuck.token}/mark`)).status).toBe(404)
    expect(rpcCalls).toBe(0)
    const bad = await get(url, `/api/v1/markets/hood/not-an-address/mark`)
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "mint" })
    // The market route and the mark route live side by side.
    expect((await get(url, `/api/v1/markets/hood/${low.mint}`)).body.market.lifecycle).toBe("migrated")
  })

  it("a pool opened at another price with no liquidity is not usable; the deepest usable pool wins", async () => {
    const p = (address: string, feePips: number, liquidity: bigint, sqrtPriceX96 = 2n ** 96n): PoolRead => ({
      address: address as Address, feePips, liquidity, sqrtPriceX96, tick: 0, tokenIsToken0: true
    })
    expect(pickDeepest([p("0x1", 3000, 0n)])).toBeNull()
    expect(pickDeepest([p("0x1", 3000, 5n, 0n)])).toBeNull()
    expect(pickDeepest([p("0x1", 3000, 5n), p("0x2", 10_000, 9n), p("0x3", 500, 9n)])?.address).toBe("0x3")
    // On chain: a griefer's empty pool at the 1 % tier beside the graduated 0.3 % pool does not change the mark.
    const weth = net.addresses.weth9
    const [token0, token1] = low.token.toLowerCase() < weth.toLowerCase() ? [low.token, weth] : [weth, low.token]
    const hash = await traders[3]!.wallet.writeContract({
      address: net.addresses.positionManager,
      abi: nonfungiblePositionManagerAbi,
      functionName: "createAndInitializePoolIfNecessary",
      args: [token0, token1, 10_000, 2n ** 96n]
    })
    await pc.waitForTransactionReceipt({ hash })
    nowMs = T0 + 50_000
    const r = await get(url, `/api/v1/markets/hood/${low.token}/mark`)
    expect(r.status).toBe(200)
    expect(r.body.mark.poolFeeTier).toBe(3000)
    expect(r.body.mark.lpFeeBps).toBe(30)
  })

  it("QUOTE_UNAVAILABLE (503, retryable) when the price source fails or the chain cannot be read; neither is cached", async () => {
    nowMs = T0 + 60_000
    const path = `/api/v1/markets/hood/${usdgMarket.token}/mark`
    rpcCalls = 0
    const r = await get(url, path)
    expect(r.status).toBe(503)
    expect(r.headers.get("retry-after")).toBe("2")
    expect(r.body.error).toMatchObject({ code: "QUOTE_UNAVAILABLE", retryable: true, reason: "price_not_configured" })
    const first = rpcCalls
    expect(first).toBeGreaterThan(0)
    expect((await get(url, path)).status).toBe(503)
    expect(rpcCalls).toBe(first * 2) // tried again: failures are not cached
    const down = await get(downUrl, `/api/v1/markets/hood/${low.token}/mark`)
    expect(down.status).toBe(503)
    expect(down.body.error).toMatchObject({ code: "QUOTE_UNAVAILABLE", retryable: true, reason: "chain_read_failed" })
  })

  it(`rate-limits at ${MARK_LIMIT_PER_MIN} requests a minute per client with RATE_LIMITED and Retry-After`, async () => {
    nowMs = T0 + 5 * 60_000 // a fresh window, nothing in the previous one
    const path = `/api/v1/markets/hood/${low.token}/mark`
    const statuses: number[] = []
    for (let i = 0; i < MARK_LIMIT_PER_MIN; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => get(url, path)))
      statuses.push(...batch.map((r) => r.status))
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(MARK_LIMIT_PER_MIN)
    const refused = await get(url, path)
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatchObject({ code: "RATE_LIMITED", retryable: true })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    nowMs = T0 + 7 * 60_000
    expect((await get(url, path)).status).toBe(200)
  }, 30_000)
})

describe("Hood mark valued by the on-chain ETH/USD oracle (PRICE_SOURCE=oracle)", () => {
  let oracleUrl = ""
  const postEth = async (answer: bigint) => {
    const reporter = privateKeyToAccount(ETH_USD_REPORTER_KEY)
    const hash = await hoodWallet(net.chain, reporter, net.rpcUrl).writeContract({ address: net.addresses.ethUsdFeed!, abi: ethUsdFeedAbi, functionName: "updateAnswer", args: [answer], chain: net.chain, account: reporter })
    expect((await pc.waitForTransactionReceipt({ hash })).status).toBe("success")
  }

  beforeAll(async () => {
    const feed = ethUsdFeed({ client: pc, address: net.addresses.ethUsdFeed!, pollIntervalMs: 50 })
    await Effect.runPromise(Effect.forkIn(feed.run, scope))
    // The localnet's block times follow its own clock: a wide age bound here; staleness has its own test (prices.oracle).
    const prices = oraclePriceSource({ eth: feed.feed }, fixedPriceSource({}), { maxAgeMs: 600_000, maxConfidenceBps: 200 })
    const server = await Effect.runPromise(
      serve({ name: "mark-oracle", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes: markRoutes({ index, nowMs: () => nowMs, addresses: net.addresses, publicClient: pc, prices }) }).pipe(
        Scope.extend(scope)
      )
    )
    oracleUrl = server.url
  }, 60_000)

  it("the mark's quoteUsd is the feed's answer; an invalid answer is QUOTE_UNAVAILABLE (503, retryable, price_invalid), not cached", async () => {
    const path = `/api/v1/markets/hood/${low.token}/mark`
    await postEth(312_345_678_901n)
    nowMs = T0 + 20 * 60_000
    const priced = await eventually(async () => {
      nowMs += 11_000 // each probe past the 10 s cache
      const r = await get(oracleUrl, path)
      return r.status === 200 && r.body.mark.quoteUsd === "3123.45678901" && r
    }, { what: "the mark at the oracle's 3123.45678901", deadlineMs: 30_000 })
    expect(priced.body.mark.quoteUsd).toBe("3123.45678901")
    await postEth(0n)
    const refused = await eventually(async () => {
      nowMs += 11_000
      const r = await get(oracleUrl, path)
      return r.status === 503 && r
    }, { what: "QUOTE_UNAVAILABLE for a zero answer", deadlineMs: 30_000 })
    expect(refused.headers.get("retry-after")).toBe("2")
    expect(refused.body.error).toMatchObject({ code: "QUOTE_UNAVAILABLE", retryable: true, reason: "price_invalid" })
    await postEth(300_000_000_000n)
    const back = await eventually(async () => {
      const r = await get(oracleUrl, path)
      return r.status === 200 && r
    }, { what: "the mark once the answer is valid again (the failure was not cached)", deadlineMs: 30_000 })
    expect(back.body.mark.quoteUsd).toBe("3000")
  }, 90_000)
})

describe("Hood mark documentation", () => {
  it("documents itself in the OpenAPI description: path, parameter, response schema and every error", () => {
    const routes = markRoutes({ index, nowMs: () => nowMs, addresses: net.addresses, publicClient: pc, prices: fixedPriceSource({}) })
    const doc = openApiDocument(routes, { title: "t", description: "d" }) as any
    const op = doc.paths["/api/v1/markets/hood/{mint}/mark"].get
    expect(op.operationId).toBe("getHoodMark")
    expect(op.parameters.map((p: any) => p.name)).toEqual(["mint"])
    expect(Object.keys(op.responses).sort()).toEqual(["200", "400", "404", "429", "503"])
    const schema = doc.components.schemas.HoodMarkResponse
    expect(Object.keys(schema.properties.mark.properties)).toEqual(
      expect.arrayContaining(["priceUsd", "sellUsd", "buyUsd", "feeBps", "lpFeeBps", "hookFeeBps", "pool", "asOf"])
    )
  })
})

describe("PriceSource", () => {
  it("fixed prices are exact decimals with a stated scale; an unconfigured asset is a typed failure", async () => {
    const src = fixedPriceSource({ eth: "3000.50", svc: "0.0125" })
    expect(await Effect.runPromise(Effect.zipRight(TestClock.setTime(7), src.usd("eth")).pipe(Effect.provide(TestContext.TestContext)))).toEqual({ asset: "eth", usdRaw: 30005n, scale: 1, asOfMs: 7, source: "localnet-fixed" })
    expect(await Effect.runPromise(src.usd("svc"))).toMatchObject({ usdRaw: 125n, scale: 4 })
    const failed = await Effect.runPromise(Effect.flip(src.usd("sol")))
    expect(failed).toMatchObject({ _tag: "PriceUnavailable", asset: "sol", reason: "not_configured" })
    expect(parseUsdDecimal("0")).toBeUndefined()
    expect(parseUsdDecimal("1e3")).toBeUndefined()
    expect(parseUsdDecimal("0." + "0".repeat(17) + "1")).toEqual({ raw: 1n, scale: 18 })
    expect(parseUsdDecimal("0." + "0".repeat(18) + "1")).toBeUndefined()
    expect(parseFixedPrices("eth=2500, usdg=")).toEqual({ eth: "2500", usdg: "" })
    expect(parseFixedPrices("doge=1")).toMatch(/unknown asset/)
    expect(parseFixedPrices("eth=-1")).toMatch(/positive decimal/)
  })

  it("a provider behind the same shape: failures, garbage and stale prices are typed", async () => {
    const now = 100_000
    const answers: Record<string, () => Promise<{ usd: string; observedAtMs: number }>> = {
      eth: async () => ({ usd: "3100.25", observedAtMs: now - 1_000 }),
      sol: async () => {
        throw new Error("503 from upstream")
      },
      usdc: async () => ({ usd: "NaN", observedAtMs: now }),
      usdg: async () => ({ usd: "1", observedAtMs: now - 120_000 })
    }
    const src = providerPriceSource({ name: "test-feed", fetch: (a) => answers[a]!(), maxAgeMs: 60_000 })
    const at = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.zipRight(TestClock.setTime(now), e).pipe(Effect.provide(TestContext.TestContext)))
    expect(await at(src.usd("eth"))).toMatchObject({ usdRaw: 310025n, scale: 2, source: "test-feed", asOfMs: 99_000 })
    expect(await at(Effect.flip(src.usd("sol")))).toMatchObject({ reason: "provider_failed" })
    expect(await at(Effect.flip(src.usd("usdc")))).toMatchObject({ reason: "invalid" })
    expect(await at(Effect.flip(src.usd("usdg")))).toMatchObject({ reason: "stale" })
  })
})
