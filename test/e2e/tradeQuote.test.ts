/**
 * The agent quote through the started engine (embedded localnets, simulation off): what the chain
 * executes equals the quote's `amountOut` to the raw unit on the Solana curve (a token launched by
 * the headless API), on the Hood curve (a crossing buy's refund included) and on the Hood Uniswap
 * v3 pool the engine's keeper seeds, each trade sent with the quote's `minAmountOut`; the platform
 * fee is the Free plan's without a key and the local account's plan (Max) with its key; an invalid
 * key is UNAUTHORIZED; the market record's `trade` block points at a route that answers.
 */
import { address, createSolanaRpc, signature as asSignature } from "@solana/kit"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, getAddress, zeroAddress } from "viem"
import { swapRouterAbi, uniswapV3FactoryAbi, uniswapV3PoolAbi } from "../../src/chain/hood/abi.generated.js"
import { approve, buy as hoodBuy, createCurve, type HoodClients, hoodPublicClient, hoodWallet, saltOf, swapExactIn, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { GRADUATED_POOL_FEE, hoodChain } from "../../src/chain/hood/localnet/Deploy.js"
import { devAccount, FIRST_TRADER_INDEX } from "../../src/chain/hood/localnet/DevAccounts.js"
import { getBuyInstruction, getSellInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { buildAndSignTransaction } from "../../src/chain/solana/client/Transactions.js"
import { findAssociatedTokenAddressSync } from "../../src/chain/solana/program/Pda.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { answered, publicReads } from "../support/typedReads.js"
import { agentClient, localCredentials, settledJob, uploadImage } from "../support/launchClient.js"

let engine: Engine
let key: string
let rpc: ReturnType<typeof createSolanaRpc>
let hood: { rpcUrl: string; chainId: number; addresses: Record<"swapRouter" | "weth9" | "uniswapV3Factory", Address> }
let trader: HoodClients

const agentApi = agentClient(() => engine.url, () => key)
const tail = () => engine.output().slice(-4000)

const reads = publicReads(() => engine.url)
const quote = (chain: "solana" | "hood", mint: string, side: "buy" | "sell", amountIn: bigint, apiKey?: string) =>
  reads.agentQuote(chain, mint, side, amountIn, { slippageBps: 50, ...(apiKey !== undefined ? { apiKey } : {}) })

/** Waits until the engine has applied `n` trades of the market (so the next quote is on the chain's state). */
const tradesSeen = (chain: "solana" | "hood", mint: string, n: number) =>
  eventually(async () => {
    const m = (await reads.market(chain, mint)).body.market
    return m !== undefined && m.tradesTotal >= n ? m : undefined
  }, { what: `${chain} ${mint} to show ${n} trades`, deadlineMs: 30_000, intervalMs: 20, detail: tail })

beforeAll(async () => {
  engine = await startEngine({
    env: { HEADLESS_LAUNCH_ENABLED: "true", LOCALNET_SLOT_MS: "100", MIGRATION_SWEEP_INTERVAL_MS: "1000" },
    args: ["--quiet"],
    readyTimeoutMs: 280_000
  })
  key = localCredentials(engine.dataDir).agentKey
  const nets = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8"))
  rpc = createSolanaRpc(nets.solana.rpcUrl)
  hood = nets.hood
  const chain = hoodChain(hood.chainId, hood.rpcUrl)
  const pc = hoodPublicClient(chain, hood.rpcUrl)
  trader = { publicClient: pc, wallet: hoodWallet(chain, devAccount(FIRST_TRADER_INDEX + 3).account, hood.rpcUrl) }
}, 300_000)

afterAll(async () => {
  await engine?.stop("SIGTERM")
  engine?.cleanup()
})

const sendSolana = async (signer: Awaited<ReturnType<typeof devSigner>>, instructions: ReadonlyArray<unknown>) => {
  const { value } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
  const signed = await buildAndSignTransaction({ feePayer: signer, lifetime: value, instructions: instructions as never })
  await rpc.sendTransaction(signed.base64 as never, { encoding: "base64", preflightCommitment: "confirmed" }).send()
  await eventually(async () => {
    const s = (await rpc.getSignatureStatuses([asSignature(signed.signature)]).send()).value[0]
    if (s?.err !== null && s?.err !== undefined) throw new Error(`transaction failed: ${JSON.stringify(s.err)}`)
    return s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized" ? true : undefined
  }, { what: "the trade", deadlineMs: 20_000, intervalMs: 50 })
}

describe("the agent quote through the engine", () => {
  it("Solana curve: a buy and a sell execute exactly the quote; Free without a key, Max with the local key; a bad key is UNAUTHORIZED", async () => {
    const id = `quote-${process.pid}`
    const launched = answered(
      await agentApi().POST("/api/v1/launch/headless", { body: { clientLaunchId: id, name: "Quote Token", symbol: "QTE", imageUrl: await uploadImage(engine, key), async: true } })
    )
    expect(launched.status).toBe(202)
    const job = await settledJob(agentApi, () => engine, id)
    expect(job.status).toBe("confirmed")
    const mint = job.mint as string
    const record = (await eventually(async () => {
      const r = await reads.market("solana", mint)
      return r.status === 200 ? r.body.market : undefined
    }, { what: "the market", deadlineMs: 30_000, intervalMs: 20, detail: tail })) as { trade: { endpoint: string; routable: boolean }; tradesTotal: number }
    expect(record.trade).toEqual({ endpoint: "/api/v1/trade/agent/quote", routable: true })

    const me = await devSigner(8)
    const ata = findAssociatedTokenAddressSync(me.address, address(mint)).address
    const amountIn = 700_000_000n
    // The record's endpoint is the agent quote route (asserted above): called through the typed client.
    const free = await quote("solana", mint, "buy", amountIn)
    expect(free.status).toBe(200)
    expect(free.body.fees.platform).toMatchObject({ plan: "free", planFeeBps: 100, feeRaw: "7000000" })
    const max = await quote("solana", mint, "buy", amountIn, key)
    expect(max.status).toBe(200)
    expect(max.body.fees.platform).toMatchObject({ plan: "max", planFeeBps: 25, referralDiscountPct: 0, feeRaw: "1750000" })
    expect(max.body.amountOut).toBe(free.body.amountOut)
    const bad = await quote("solana", mint, "buy", amountIn, "svc_live_notakey")
    expect(bad.status).toBe(401)
    expect(bad.body.error.code).toBe("UNAUTHORIZED")

    await sendSolana(me, [
      getCreateAssociatedTokenInstruction({ payer: me, ata, owner: me.address, mint: address(mint) }),
      await getBuyInstruction({ trader: me, mint: address(mint), quoteMint: WSOL_MINT_ADDRESS, amountInRaw: amountIn, minAmountOutRaw: BigInt(free.body.minAmountOut) })
    ])
    const held = BigInt((await rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send()).value.amount)
    expect(held).toBe(BigInt(free.body.amountOut))

    await tradesSeen("solana", mint, record.tradesTotal + 1)
    const sellIn = held / 3n
    const sq = await quote("solana", mint, "sell", sellIn)
    expect(sq.status).toBe(200)
    const lamports = (await rpc.getBalance(me.address, { commitment: "confirmed" }).send()).value
    await sendSolana(me, [await getSellInstruction({ trader: me, mint: address(mint), quoteMint: WSOL_MINT_ADDRESS, amountInRaw: sellIn, minAmountOutRaw: BigInt(sq.body.minAmountOut) })])
    const after = (await rpc.getBalance(me.address, { commitment: "confirmed" }).send()).value
    expect(after - lamports + 5_000n).toBe(BigInt(sq.body.amountOut)) // the transaction fee is 5,000 lamports
  }, 180_000)

  it("Hood: a crossing buy on the curve and buys and sells on the graduated v3 pool execute exactly the quote", async () => {
    const eth = findEconomics("hood", "eth")!.tiers.find((t) => t.tier === "open")!
    const pc = trader.publicClient
    const me = trader.wallet.account.address
    const created = await createCurve(trader, (JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")).hood.addresses.factory) as Address, {
      name: "Quote Hood", symbol: "QHD", quoteToken: zeroAddress, virtualQuoteRaw: eth.virtualQuoteRaw, thresholdRaw: eth.thresholdRaw, dexVersion: "v3", salt: saltOf(`quote-${process.pid}`)
    })
    const mint = created.token.toLowerCase()
    await eventually(async () => ((await reads.market("hood", mint)).status === 200 ? true : undefined), { what: "the Hood market", deadlineMs: 30_000, intervalMs: 20, detail: tail })

    const crossIn = eth.thresholdRaw * 2n
    const crossing = await quote("hood", mint, "buy", crossIn)
    expect(crossing.status).toBe(200)
    expect(crossing.body).toMatchObject({ venue: "svc-curve", crossesGraduation: true, crossingModel: "capped-refund" })
    const bought = await hoodBuy(trader, created.curve, { amountInRaw: crossIn, minAmountOutRaw: BigInt(crossing.body.minAmountOut), quoteToken: zeroAddress })
    expect(bought.trade.amountOut.toString()).toBe(crossing.body.amountOut)
    expect(bought.trade.refund.toString()).toBe(crossing.body.refund)
    expect(bought.trade.quoteConsumed.toString()).toBe(crossing.body.amountConsumed)
    expect(crossing.body.fees.platform.feeRaw).toBe(((bought.trade.quoteConsumed + 99n) / 100n).toString())

    // The engine's keeper seeds the pool; the quote moves to it.
    const migrated = await eventually(async () => {
      const m = (await reads.market("hood", mint)).body.market
      return m?.lifecycle === "migrated" ? m : undefined
    }, { what: "the curve to migrate", deadlineMs: 90_000, intervalMs: 100, detail: tail })
    expect(migrated.trade).toEqual({ endpoint: "/api/v1/trade/agent/quote", routable: true })
    const weth = getAddress(hood.addresses.weth9)
    await approve(trader, created.token, hood.addresses.swapRouter, 2n ** 255n)
    for (const [side, amount] of [["buy", 10n ** 18n], ["sell", bought.trade.amountOut / 4n], ["buy", eth.thresholdRaw]] as const) {
      const q = await quote("hood", mint, side, amount, side === "sell" ? key : undefined)
      expect(q.status, JSON.stringify(q.body)).toBe(200)
      expect(q.body).toMatchObject({ venue: "hood-dex", graduationVenue: "dex-evm-v3", fees: { venue: { bps: 30, asset: side === "buy" ? "quote" : "token" } } })
      expect(q.body.fees.platform.plan).toBe(side === "sell" ? "max" : "free")
      const outToken = side === "buy" ? created.token : weth
      const before = await tokenBalance(pc, outToken, me)
      const swap = {
        router: hood.addresses.swapRouter,
        tokenIn: side === "buy" ? weth : created.token,
        tokenOut: outToken,
        fee: GRADUATED_POOL_FEE,
        amountInRaw: amount,
        minAmountOutRaw: BigInt(q.body.minAmountOut),
        payWithEth: side === "buy"
      }
      // A refused swap names the router's reason and the quote it was sent with.
      await pc.simulateContract({
        account: trader.wallet.account,
        address: swap.router,
        abi: swapRouterAbi,
        functionName: "exactInputSingle",
        args: [{ tokenIn: swap.tokenIn, tokenOut: swap.tokenOut, fee: swap.fee, recipient: me, deadline: 2n ** 40n, amountIn: amount, amountOutMinimum: swap.minAmountOutRaw, sqrtPriceLimitX96: 0n }],
        value: swap.payWithEth ? amount : 0n
      }).catch((e: unknown) => {
        throw new Error(`${side} ${amount} refused: ${String(e).slice(0, 600)}; quote ${JSON.stringify(q.body)}`)
      })
      // A fixed gas limit (an estimate taken on another pending state cannot cut the swap short); a
      // revert names the blocks and the pool's price at the quote and just before the swap.
      await swapExactIn(trader, swap, { gas: 3_000_000n }).catch(async (e: unknown) => {
        const hash = (e as { hash?: `0x${string}` }).hash
        const receipt = hash === undefined ? undefined : await pc.getTransactionReceipt({ hash })
        const pool = await pc.readContract({ address: hood.addresses.uniswapV3Factory, abi: uniswapV3FactoryAbi, functionName: "getPool", args: [weth, created.token, GRADUATED_POOL_FEE] })
        const at = (blockNumber: bigint) => pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "slot0", blockNumber }).then((x) => x[0].toString())
        const mined = receipt?.blockNumber ?? 0n
        throw new Error(`${side} ${amount} reverted in block ${mined} (gas ${receipt?.gasUsed}); quoted at block ${q.body.asOf.block} √P ${await at(BigInt(q.body.asOf.block))}, before the swap √P ${await at(mined - 1n)}; ${String(e).slice(0, 300)}`)
      })
      expect((await tokenBalance(pc, outToken, me)) - before).toBe(BigInt(q.body.amountOut))
    }
  }, 240_000)
})
