/**
 * The agent quote's venue math equals what the Hood localnet executes, to the raw unit (issue 28,
 * deliverable 2): random sequences of buys and sells on a real bonding curve (BondingCurve.sol),
 * including the capped-refund crossing buy, then random exact-input swaps on the real Uniswap v3
 * pool the curve graduates into, for both token orderings (token0 and token1), quoted by
 * `quoteHoodPool` from the pool read at the block before each swap and executed through the
 * SwapRouter's `exactInputSingle` with the quote's minimum as `amountOutMinimum`.
 * fast-check seeds are printed; replay one with `FC_SEED=<seed>`.
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, getAddress, parseEventLogs, type PublicClient, zeroAddress } from "viem"
import { bondingCurveAbi } from "../../src/chain/hood/abi.generated.js"
import { approve, buy, createCurve, type HoodClients, migrate, readCurve, saltOf, sell, swapExactIn, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { GRADUATED_POOL_FEE, STREAMER_SHARE_BPS } from "../../src/chain/hood/localnet/Deploy.js"
import { clientsFor, publicClientOf, startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { quoteHoodPool, viemPoolSource } from "../../src/services/trade/HoodPoolQuote.js"
import { minOutOf, quoteVenue } from "../../src/services/trade/VenueQuote.js"

const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
console.log(`trade.hoodVenue: fast-check seed ${seed}`)

const ETH = 10n ** 18n
const SHARE = BigInt(STREAMER_SHARE_BPS)
let net: StartedHoodLocalnet
let pc: PublicClient
let keeper: HoodClients
let trader: HoodClients
let launches = 0

const launch = async (virtualQuoteRaw: bigint, thresholdRaw: bigint) => {
  const label = `venue-${launches++}`
  const c = await createCurve(trader, net.addresses.factory, { name: label, symbol: "VQ", quoteToken: zeroAddress, virtualQuoteRaw, thresholdRaw, dexVersion: "v3", salt: saltOf(label) })
  await approve(trader, c.token, c.curve, 2n ** 255n)
  return c
}

beforeAll(async () => {
  net = await startHoodLocalnet()
  pc = publicClientOf(net)
  keeper = clientsFor(net, net.roles.keeper)
  trader = clientsFor(net, net.roles.traders[0]!)
}, 120_000)

afterAll(async () => {
  await net?.close()
})

type Op = { readonly side: "buy"; readonly amount: bigint } | { readonly side: "sell"; readonly percent: number }

describe("Hood venue quotes equal execution", () => {
  it("on the curve: every fill, fee, refund and consumed quote equals quoteVenue on the state before it", async () => {
    const ops = fc.array(
      fc.oneof(
        fc.record({ side: fc.constant("buy" as const), amount: fc.bigInt({ min: 1n, max: 3n * ETH }) }),
        fc.record({ side: fc.constant("sell" as const), percent: fc.integer({ min: 1, max: 100 }) })
      ),
      { minLength: 1, maxLength: 6 }
    )
    await fc.assert(
      fc.asyncProperty(ops, async (sequence: Op[]) => {
        // Small V and G so a sequence can cross graduation (the capped refund).
        const c = await launch(2n * ETH, 4n * ETH)
        for (const op of sequence) {
          const before = await readCurve(pc, c.curve)
          if (before.phase !== "trading") break
          const held = await tokenBalance(pc, c.token, trader.wallet.account.address)
          const amount = op.side === "buy" ? op.amount : (held * BigInt(op.percent)) / 100n
          if (amount === 0n) continue
          const q = quoteVenue({ _tag: "Curve", params: before.params, state: before.state, creatorShareBps: SHARE }, op.side, amount)
          // A dust buy whose net after the fee is nothing: the quote refuses it and so does the curve (ZeroAmount).
          if (q._tag === "Refused" && q.reason === "zero_amount" && op.side === "buy") {
            await expect(buy(trader, c.curve, { amountInRaw: amount, minAmountOutRaw: 0n, quoteToken: zeroAddress })).rejects.toThrow(/ZeroAmount/)
            continue
          }
          if (q._tag !== "Filled") throw new Error(`unexpected ${JSON.stringify(q, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`)
          const minOut = minOutOf(q, 50n)
          const done = op.side === "buy" ? await buy(trader, c.curve, { amountInRaw: amount, minAmountOutRaw: minOut, quoteToken: zeroAddress }) : await sell(trader, c.curve, amount, minOut)
          expect(done.trade.amountOut).toBe(q.amountOut)
          expect(done.trade.fee).toBe(q.venueFeeRaw)
          if (op.side === "buy") {
            expect(done.trade.refund).toBe(q.refund)
            expect(done.trade.quoteConsumed).toBe(q.amountConsumed)
            expect(done.trade.crossesGraduation).toBe(q.crossesGraduation)
          }
          const accrued = parseEventLogs({ abi: [{ type: "event", name: "FeeAccrued", inputs: [{ name: "curve", type: "address", indexed: true }, { name: "asset", type: "address", indexed: true }, { name: "amount", type: "uint256", indexed: false }, { name: "streamerPart", type: "uint256", indexed: false }] }] as const, logs: done.receipt.logs })
          if (q.venueFeeRaw > 0n) expect(accrued[0]?.args.streamerPart).toBe(q.creatorFeeRaw)
        }
      }),
      { seed, numRuns: 6 }
    )
  }, 300_000)

  it("on the graduated Uniswap v3 pool (token0 and token1): every swap's output equals quoteHoodPool at the block before it", async () => {
    const weth = getAddress(net.addresses.weth9)
    // Both orderings: launch until one token sorts below WETH and one above.
    const graduated: Array<{ readonly token: Address; readonly pool: Address }> = []
    const seen = new Set<boolean>()
    while (seen.size < 2) {
      const c = await launch(2n * ETH, 4n * ETH)
      const below = c.token.toLowerCase() < weth.toLowerCase()
      if (seen.has(below)) continue
      seen.add(below)
      const crossed = await buy(trader, c.curve, { amountInRaw: 6n * ETH, quoteToken: zeroAddress })
      expect(crossed.completed).toBeDefined()
      const migrated = await migrate(keeper, c.curve)
      const pool = getAddress(parseEventLogs({ abi: bondingCurveAbi, eventName: "CurveMigrated", logs: migrated.receipt.logs })[0]!.args.pool)
      await approve(trader, c.token, net.addresses.swapRouter, 2n ** 255n)
      graduated.push({ token: c.token, pool })
    }
    await approve(trader, weth, net.addresses.swapRouter, 2n ** 255n)
    // Counts the bitmap words each quote reads: a swap that reads two or more crossed a word boundary.
    const chain = viemPoolSource(pc)
    let wordsThisQuote = 0
    const source = { ...chain, word: (pool: Address, w: number, block: bigint) => ((wordsThisQuote++), chain.word(pool, w, block)) }
    let crossedWords = 0
    const me = trader.wallet.account.address
    const swaps = fc.array(
      fc.record({ which: fc.integer({ min: 0, max: 1 }), side: fc.constantFrom("buy" as const, "sell" as const), bps: fc.integer({ min: 1, max: 40_000 }) }),
      { minLength: 1, maxLength: 5 }
    )
    let walked = 0
    await fc.assert(
      fc.asyncProperty(swaps, async (sequence) => {
        for (const s of sequence) {
          const g = graduated[s.which]!
          // Sizes from a hair to 4x what the pool holds of the input asset: large ones cross bitmap words.
          const held = s.side === "buy" ? await tokenBalance(pc, weth, g.pool) : await tokenBalance(pc, g.token, g.pool)
          const mine = s.side === "buy" ? 10n ** 24n : await tokenBalance(pc, g.token, me)
          const amount = [(held * BigInt(s.bps)) / 10_000n, mine].reduce((a, b) => (a < b ? a : b))
          if (amount === 0n) continue
          wordsThisQuote = 0
          const quoted = await quoteHoodPool(source, { pool: g.pool, token: g.token, side: s.side, amountIn: amount, creatorShareBps: SHARE })
          if (quoted._tag !== "Quoted" || quoted.quote._tag !== "Filled") throw new Error(`unquotable swap: ${quoted._tag}`)
          const q = quoted.quote
          if (q.priceImpactBps > 1000) walked++
          if (wordsThisQuote > 1) crossedWords++
          const outToken = s.side === "buy" ? g.token : weth
          const before = await tokenBalance(pc, outToken, me)
          await swapExactIn(trader, {
            router: net.addresses.swapRouter,
            tokenIn: s.side === "buy" ? weth : g.token,
            tokenOut: outToken,
            fee: GRADUATED_POOL_FEE,
            amountInRaw: amount,
            minAmountOutRaw: minOutOf(q, 0n),
            payWithEth: s.side === "buy"
          })
          expect((await tokenBalance(pc, outToken, me)) - before).toBe(q.amountOut)
          expect(q.amountConsumed).toBe(amount)
          expect(q.venueFeeAsset).toBe(s.side === "buy" ? "quote" : "token")
        }
      }),
      { seed, numRuns: 12 }
    )
    console.log(`trade.hoodVenue: ${walked} swaps moved the price more than 10 %, ${crossedWords} crossed a bitmap word`)
    // Sizes up to 4x the pool's reserves move √P past 15,360 ticks (one word at spacing 60) in some runs.
    expect(crossedWords).toBeGreaterThan(0)
  }, 300_000)
})
