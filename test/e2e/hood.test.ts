/**
 * Hood end to end through the started engine (embedded Solana and Hood localnets, simulation off):
 * a curve created with viem from a dev trader account appears in the Hood `new` bucket and as a
 * market record with the Hood semantics of spec 2.9; a quote equals what the chain executes; a
 * buy past the threshold is capped and refunds the rest (balance delta) and the market shows
 * `completed`; the engine's keeper seeds the Uniswap v3 pool, the market shows `migrated` with
 * `migratedAt`, the mark reads its price from that pool, and a swap in the pool reaches the market
 * record as a pool trade at the pool's new price.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, getAddress, type Hex, parseEventLogs, parseUnits, type PublicClient, zeroAddress } from "viem"
import { bondingCurveAbi, uniswapV3PoolAbi } from "../../src/chain/hood/abi.generated.js"
import { buy, createCurve, type HoodClients, hoodPublicClient, hoodWallet, readCurve, saltOf, swapExactIn, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { hoodChain } from "../../src/chain/hood/localnet/Deploy.js"
import { devAccount, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { publicReads } from "../support/typedReads.js"

interface HoodLocalnetFile {
  readonly rpcUrl: string
  readonly chainId: number
  readonly addresses: Record<"usdg" | "factory" | "feeSplitter" | "uniswapV3Factory" | "positionManager" | "swapRouter" | "weth9", Address>
}

let engine: Engine
/** The engine's last output, for a wait that timed out. */
const engineTail = () => engine.output().slice(-4000)
let hood: HoodLocalnetFile
let pc: PublicClient
let creator: HoodClients
let trader: HoodClients

const eth = findEconomics("hood", "eth")!
const open = eth.tiers.find((t) => t.tier === "open")!

const reads = publicReads(() => engine.url)

const same = (a: unknown, b: string) => typeof a === "string" && a.toLowerCase() === b.toLowerCase()

beforeAll(async () => {
  engine = await startEngine({
    args: ["--quiet"],
    env: { LOCALNET_SLOT_MS: "100", MIGRATION_SWEEP_INTERVAL_MS: "1000" },
    readyTimeoutMs: 150_000
  })
  const file = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8"))
  hood = file.hood
  const chain = hoodChain(hood.chainId, hood.rpcUrl)
  pc = hoodPublicClient(chain, hood.rpcUrl)
  // Hardhat's default-mnemonic accounts: #5 launches, #6 trades (both in the trader range #4..#19).
  creator = { publicClient: pc, wallet: hoodWallet(chain, devAccount(FIRST_TRADER_INDEX + 1).account, hood.rpcUrl) }
  trader = { publicClient: pc, wallet: hoodWallet(chain, devAccount(FIRST_TRADER_INDEX + 2).account, hood.rpcUrl) }
}, 180_000)

afterAll(async () => {
  if (engine !== undefined) {
    await engine.stop()
    engine.cleanup()
  }
})

describe("Hood end to end", () => {
  it("writes the Hood localnet's endpoints and deployment to localnet.json beside Solana's", async () => {
    const file = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8"))
    expect(typeof file.solana.rpcUrl).toBe("string")
    expect(hood.rpcUrl).toMatch(/^http:\/\//)
    expect(hood.chainId).toBe(31337)
    for (const name of ["usdg", "factory", "feeSplitter", "uniswapV3Factory", "positionManager", "swapRouter", "weth9"] as const) {
      expect(hood.addresses[name], name).toMatch(/^0x[0-9a-fA-F]{40}$/)
      expect((await pc.getCode({ address: hood.addresses[name] }))?.length ?? 0, `${name} has code`).toBeGreaterThan(2)
    }
    expect(await pc.getChainId()).toBe(hood.chainId)
  })

  it("launches, quotes exactly, refunds a crossing buy, migrates into Uniswap v3 and marks from the pool", async () => {
    const created = await createCurve(creator, hood.addresses.factory, {
      name: "Hood End To End",
      symbol: "HE2E",
      uri: "https://example.invalid/hood-e2e.json",
      quoteToken: zeroAddress,
      virtualQuoteRaw: open.virtualQuoteRaw,
      thresholdRaw: open.thresholdRaw,
      stakerAllocationBps: 50,
      dexVersion: "v3",
      salt: saltOf(`hood-e2e:${Date.now()}`)
    })
    const token = created.token.toLowerCase()
    const curve = created.curve

    // Visible in the Hood `new` bucket, and as a market record with the Hood fields of spec 2.9.
    await eventually(async () => {
      const feed = await reads.feed("new", "hood")
      return feed.body.tokens?.some((t: { address: string }) => t.address === token) ? true : undefined
    }, { what: "the new bucket to list the curve", deadlineMs: 30_000, intervalMs: 50, detail: engineTail })
    const fresh = await reads.market("hood", token)
    expect(fresh.status).toBe(200)
    expect(fresh.body.market).toMatchObject({
      chain: "hood",
      mint: token,
      lifecycle: "trading",
      buysOpen: true,
      sellsOpen: true,
      poolAddress: null,
      feeBps: 100,
      graduationVenue: "dex-evm-v3",
      crossingModel: "capped-refund",
      candleLaunched: true,
      venue: "svc-curve",
      decimals: 18,
      quoteDecimals: 18,
      metadata: { name: "Hood End To End", symbol: "HE2E" },
      migration: { status: "not_started" }
    })
    expect(same(fresh.body.market.curveAddress, curve)).toBe(true)
    expect(same(fresh.body.market.quoteMint, zeroAddress)).toBe(true)
    expect(same(fresh.body.market.creator, creator.wallet.account.address)).toBe(true)
    // The checksummed spelling reads the same market.
    expect((await reads.market("hood", getAddress(token))).body.market.mint).toBe(token)

    // The quote equals what the chain executes, to the wei.
    const amountIn = 123_456_789_012_345_678n
    const quote = await reads.curveQuote("hood", token, amountIn, 50)
    expect(quote.status).toBe(200)
    expect(quote.body).toMatchObject({ success: true, chain: "hood", mint: token, side: "buy", amountIn: amountIn.toString(), crossingModel: "capped-refund" })
    expect(quote.body.quote.crossesGraduation).toBe(false)
    expect(quote.body.quote.refund).toBeUndefined()
    const first = await buy(trader, curve, { amountInRaw: amountIn, minAmountOutRaw: BigInt(quote.body.quote.minAmountOut), quoteToken: zeroAddress })
    expect(first.trade.amountOut.toString()).toBe(quote.body.quote.amountOut)
    expect(first.trade.fee.toString()).toBe(quote.body.quote.fee)
    expect(BigInt(quote.body.quote.minAmountOut)).toBe((first.trade.amountOut * 9_950n) / 10_000n)
    expect(await tokenBalance(pc, created.token, trader.wallet.account.address)).toBe(first.trade.amountOut)
    await eventually(async () => {
      const m = await reads.market("hood", token)
      return m.body.market?.tradesTotal === 1 ? m : undefined
    }, { what: "the market to show the trade", deadlineMs: 30_000, intervalMs: 50, detail: engineTail })

    // Past the threshold: the quote caps the fill and names the refund; the chain returns exactly it.
    const crossIn = 10n * 10n ** 18n
    const crossing = await reads.curveQuote("hood", token, crossIn)
    expect(crossing.status).toBe(200)
    expect(crossing.body.quote.crossesGraduation).toBe(true)
    const quotedRefund = BigInt(crossing.body.quote.refund)
    const quotedConsumed = BigInt(crossing.body.quote.quoteConsumed)
    expect(quotedRefund).toBeGreaterThan(0n)
    expect(quotedConsumed + quotedRefund).toBe(crossIn)
    const before = await pc.getBalance({ address: trader.wallet.account.address })
    const crossed = await buy(trader, curve, { amountInRaw: crossIn, quoteToken: zeroAddress })
    const gasCost = crossed.receipt.gasUsed * crossed.receipt.effectiveGasPrice
    const after = await pc.getBalance({ address: trader.wallet.account.address, blockNumber: crossed.receipt.blockNumber })
    expect(crossed.trade.refund).toBe(quotedRefund)
    expect(crossed.trade.quoteConsumed).toBe(quotedConsumed)
    expect(crossed.trade.amountOut.toString()).toBe(crossing.body.quote.amountOut)
    expect(crossed.completed).toBeDefined()
    // The trader paid only what the curve consumed (plus gas): the refund came back in the same transaction.
    expect(before - after - gasCost).toBe(quotedConsumed)
    const onChain = await readCurve(pc, curve, crossed.receipt.blockNumber)
    expect(onChain.state.realQuoteRaw).toBe(open.thresholdRaw)

    // Completed until the keeper seeds the pool (the sweep runs every second, so poll tightly).
    const completed = await eventually(async () => {
        const m = (await reads.market("hood", token)).body.market
        if (m?.lifecycle === "migrated") throw new Error("the market went to migrated before completed was observed")
        return m?.lifecycle === "completed" ? m : undefined
      }, { what: "the market to show completed", deadlineMs: 30_000, intervalMs: 10, detail: engineTail })
    expect(completed).toMatchObject({ buysOpen: false, sellsOpen: false, poolAddress: null, venue: null, progressBps: 10_000 })
    expect(completed.trade).toMatchObject({ routable: false })

    // The keeper migrates within its sweep: migrated, with migratedAt; still no poolAddress on Hood.
    const migrated = await eventually(async () => {
        const m = (await reads.market("hood", token)).body.market
        return m?.lifecycle === "migrated" ? m : undefined
      }, { what: "the curve to migrate", deadlineMs: 90_000, intervalMs: 100, detail: engineTail })
    expect(migrated).toMatchObject({
      buysOpen: true,
      sellsOpen: true,
      poolAddress: null,
      venue: "hood-dex",
      graduationVenue: "dex-evm-v3",
      crossingModel: "capped-refund",
      feeBps: 30,
      migration: { status: "completed" }
    })
    expect(Date.parse(migrated.migration.migratedAt)).toBeGreaterThan(0)

    // The pool the curve seeded (from the chain), then the mark read from it.
    const migration = parseEventLogs({
      abi: bondingCurveAbi,
      eventName: "CurveMigrated",
      logs: await pc.getLogs({ address: curve, fromBlock: crossed.receipt.blockNumber })
    })[0]!
    const pool = getAddress(migration.args.pool)
    expect(migration.args.dexVersion).toBe(3)
    expect((await readCurve(pc, curve)).phase).toBe("migrated")

    const mark = await eventually(async () => {
      const r = await reads.hoodMark(token)
      return r.status === 200 ? r.body : undefined
    }, { what: "the mark to answer", deadlineMs: 30_000, intervalMs: 50, detail: engineTail })
    expect(mark.success).toBe(true)
    expect(mark.mark).toMatchObject({
      chain: "hood",
      mint: token,
      venue: "dex-evm-v3",
      poolFeeTier: 3000,
      lpFeeBps: 30,
      hookFeeBps: 0,
      feeBps: 30,
      quoteAsset: "eth"
    })
    expect(getAddress(mark.mark.pool)).toBe(pool)
    expect(getAddress(mark.mark.quoteToken)).toBe(getAddress(hood.addresses.weth9))
    const [sqrtPriceX96] = (await pc.readContract({
      address: pool,
      abi: uniswapV3PoolAbi,
      functionName: "slot0",
      blockNumber: BigInt(mark.mark.blockNumber)
    })) as readonly [bigint, ...unknown[]]
    expect(mark.mark.sqrtPriceX96).toBe(sqrtPriceX96.toString())
    // The pool opened at the curve's final price: priceQuote ≈ vQuote/vTok (both 18 decimals).
    const finalPrice = Number(onChain.state.virtualQuoteRaw) / Number(onChain.state.virtualTokenRaw)
    expect(Math.abs(Number(mark.mark.priceQuote) / finalPrice - 1)).toBeLessThan(1e-6)
    const priceUsd = Number(mark.mark.priceUsd)
    expect(priceUsd).toBeGreaterThan(0)
    expect(Math.abs(priceUsd / (Number(mark.mark.priceQuote) * Number(mark.mark.quoteUsd)) - 1)).toBeLessThan(1e-6)
    expect(Number(mark.mark.sellUsd)).toBeLessThan(priceUsd)
    expect(Number(mark.mark.buyUsd)).toBeGreaterThan(priceUsd)
    expect(Number.isNaN(Date.parse(mark.mark.asOf))).toBe(false)

    // Trading continues in the pool: a swap through the router reaches the market as a pool trade,
    // and the record's price follows the pool's.
    const beforeSwap = (await reads.market("hood", token)).body.market
    const swapIn = 10n ** 17n
    const swapReceipt = await swapExactIn(trader, {
      router: hood.addresses.swapRouter,
      tokenIn: hood.addresses.weth9,
      tokenOut: getAddress(token),
      fee: 3000,
      amountInRaw: swapIn,
      payWithEth: true
    })
    expect(swapReceipt.status).toBe("success")
    const afterSwap = await eventually(async () => {
      const m = (await reads.market("hood", token)).body.market
      return m?.tradesTotal === beforeSwap.tradesTotal + 1 ? m : undefined
    }, { what: "the pool trade to reach the market", deadlineMs: 30_000, intervalMs: 50, detail: engineTail })
    expect(afterSwap.lifecycle).toBe("migrated")
    expect(parseUnits(afterSwap.volumeTotal, 18) - parseUnits(beforeSwap.volumeTotal, 18)).toBe(swapIn)
    const [sqrtAfter] = (await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "slot0", blockNumber: swapReceipt.blockNumber })) as readonly [
      bigint,
      ...unknown[]
    ]
    const token0 = (await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "token0" })) as Address
    const ratio = (Number(sqrtAfter) / 2 ** 96) ** 2 // token1 per token0
    const poolPrice = same(token0, token) ? ratio : 1 / ratio // quote per token (both 18 decimals)
    expect(Number(afterSwap.price)).toBeGreaterThan(Number(beforeSwap.price))
    expect(Math.abs(Number(afterSwap.price) / poolPrice - 1)).toBeLessThan(1e-6)

    // After migration the curve quote refuses and names where trading continues.
    const refused = await reads.curveQuote("hood", token, 1000n)
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: "MARKET_NOT_TRADABLE", tradingContinues: { venue: "dex-evm-v3", pool: null } })

    const graduated = await reads.feed("graduated", "hood")
    expect(graduated.body.tokens.map((t: { address: string }) => t.address)).toContain(token)
    const verify = await reads.verify("hood", token)
    expect(verify.body).toMatchObject({ success: true, candleLaunched: true, chain: "hood", graduated: true, pool: null })
    expect(same(verify.body.provenance.curve, curve)).toBe(true)
    expect(same(verify.body.provenance.configHash, created.event.configHash as Hex)).toBe(true)
    expect(same(verify.body.provenance.factory, hood.addresses.factory)).toBe(true)
  }, 240_000)

  it("answers a Hood mark for an unknown token with MARKET_NOT_FOUND and a malformed one with VALIDATION_FAILED", async () => {
    const unknown = await reads.hoodMark(`0x${"ab".repeat(20)}`)
    expect(unknown.status).toBe(404)
    expect(unknown.body.error.code).toBe("MARKET_NOT_FOUND")
    const bad = await reads.hoodMark("not-an-address")
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "mint" })
  })
})
