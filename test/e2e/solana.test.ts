/**
 * Solana end to end through the started engine (embedded localnet, simulation off): a curve
 * created with a real signed transaction over the localnet's JSON-RPC appears in the `new`
 * bucket; a quote equals the fill of the buy that follows it; buying past the threshold
 * completes the curve, the keeper migrates it, and the market record, the quote route, verify
 * and the `graduated` bucket all say so.
 */
import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findCurveAddresses, getBuyInstruction, getCreateCurveInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { findAssociatedTokenAddress, getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { makeRpcSender, type RpcSender } from "../../src/chain/solana/RpcSender.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { type Engine, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { publicReads } from "../support/typedReads.js"

let engine: Engine
/** The engine's last output, for a wait that timed out. */
const engineTail = () => engine.output().slice(-3000)
let sender: RpcSender
let trader: KeyPairSigner

const sol = findEconomics("solana", "sol")!
const open = sol.tiers.find((t) => t.tier === "open")!

const reads = publicReads(() => engine.url)
type Bucket = "new" | "graduated" | "onfire" | "finalstretch"

const buy = async (mint: KeyPairSigner["address"], amountInRaw: bigint) => {
  const ata = await findAssociatedTokenAddress(trader.address, mint)
  return sender.send(trader, [
    getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint, idempotent: true }),
    await getBuyInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw, minAmountOutRaw: 0n })
  ])
}

const tokenBalance = async (mint: KeyPairSigner["address"]): Promise<bigint> => {
  const ata = await findAssociatedTokenAddress(trader.address, mint)
  const r = await sender.rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send()
  return BigInt(r.value.amount)
}

beforeAll(async () => {
  engine = await startEngine({ args: ["--quiet"], env: { LOCALNET_SLOT_MS: "100", MIGRATION_SWEEP_INTERVAL_MS: "300" } })
  const localnet = JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8"))
  sender = makeRpcSender(localnet.solana.rpcUrl, { blockhashTtlMs: 0 })
  trader = await devSigner(7)
}, 120_000)

afterAll(async () => {
  if (engine !== undefined) {
    await engine.stop()
    engine.cleanup()
  }
})

describe("Solana end to end", () => {
  it("launches, quotes exactly, graduates and migrates a curve", async () => {
    const creator = await devSigner(6)
    const mint = await generateKeyPairSigner()
    await sender.send(creator, [
      await getCreateCurveInstruction({
        creator,
        mint,
        quoteMint: WSOL_MINT_ADDRESS,
        virtualQuoteRaw: open.virtualQuoteRaw,
        thresholdRaw: open.thresholdRaw,
        supplyRaw: sol.tokenSupplyRaw,
        stakerAllocationBps: 50,
        mode: "open",
        creatorFeeBps: 0,
        name: "End To End",
        symbol: "E2E",
        uri: "https://example.invalid/e2e.json"
      })
    ])
    const address = mint.address

    // Visible in the `new` bucket within the deadline.
    await eventually(async () => {
      const feed = await reads.feed("new", "solana")
      return feed.body.tokens?.some((t: { address: string }) => t.address === address) ? true : undefined
    }, { what: "the new bucket to list the curve", deadlineMs: 20_000, intervalMs: 50, detail: engineTail })
    const fresh = await reads.market("solana", address)
    expect(fresh.status).toBe(200)
    expect(fresh.body.market).toMatchObject({
      chain: "solana", mint: address, lifecycle: "trading", buysOpen: true, sellsOpen: true, poolAddress: null,
      feeBps: 100, graduationVenue: "dex-solana-v2", crossingModel: "full-fill-surplus", candleLaunched: true, venue: "svc-curve",
      migration: { status: "not_started", reserveRaw: "0", thresholdRaw: open.thresholdRaw.toString(), progressBps: 0 }
    })
    expect(fresh.body.market.curveAddress).toBe((await findCurveAddresses(address)).curve)

    // The quote equals the executed fill, to the unit.
    const amountIn = 1_234_567_891n
    const quote = await reads.curveQuote("solana", address, amountIn, 50)
    expect(quote.status).toBe(200)
    expect(quote.body).toMatchObject({ success: true, chain: "solana", side: "buy", amountIn: amountIn.toString(), crossingModel: "full-fill-surplus" })
    expect(quote.body.quote.crossesGraduation).toBe(false)
    await buy(address, amountIn)
    const received = await eventually(async () => {
      const b = await tokenBalance(address).catch(() => 0n)
      return b > 0n ? b : undefined
    }, { what: "the buy to confirm", deadlineMs: 20_000, intervalMs: 50, detail: engineTail })
    expect(received.toString()).toBe(quote.body.quote.amountOut)
    expect(BigInt(quote.body.quote.minAmountOut)).toBe((received * 9_950n) / 10_000n)

    // The market record follows the trade.
    await eventually(async () => {
      const m = await reads.market("solana", address)
      return m.body.market.tradesTotal === 1 ? m : undefined
    }, { what: "the market to show the trade", deadlineMs: 20_000, intervalMs: 50, detail: engineTail })

    // Past the threshold: the quote says it crosses, the buy completes the curve, the keeper migrates it.
    const crossing = await reads.curveQuote("solana", address, 100n * 10n ** 9n)
    expect(crossing.body.quote.crossesGraduation).toBe(true)
    expect(crossing.body.quote.refund).toBeUndefined()
    await buy(address, 100n * 10n ** 9n)
    const migrated = await eventually(async () => {
        const m = await reads.market("solana", address)
        return m.body.market.lifecycle === "migrated" ? m.body.market : undefined
      }, { what: "the curve to migrate", deadlineMs: 30_000, intervalMs: 50, detail: engineTail })
    expect(migrated).toMatchObject({ buysOpen: true, sellsOpen: true, venue: "dex", feeBps: 50, migration: { status: "completed" } })
    expect(typeof migrated.poolAddress).toBe("string")
    expect(Date.parse(migrated.migration.migratedAt)).toBeGreaterThan(0)

    const refused = await reads.curveQuote("solana", address, 1000n)
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({
      code: "MARKET_NOT_TRADABLE",
      reason: "curve_migrated",
      tradingContinues: { venue: "dex-solana-v2", pool: migrated.poolAddress }
    })

    const verify = await reads.verify("solana", address)
    expect(verify.body).toMatchObject({ success: true, candleLaunched: true, graduated: true, pool: migrated.poolAddress, creator: creator.address })
    expect(verify.body.attribution.program).toBe("SVCcurve11111111111111111111111111111111111")

    const graduated = await reads.feed("graduated")
    expect(graduated.body.tokens.map((t: { address: string }) => t.address)).toContain(address)
  }, 90_000)

  it("answers unknown mints, bad chains and bad buckets with the spec's errors", async () => {
    const unknown = await reads.market("solana", "So11111111111111111111111111111111111111112")
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toMatchObject({ code: "MARKET_NOT_FOUND", routing: { reason: "token_unknown" }, discovery: { indexed: false } })
    expect((await reads.market("ethereum" as "solana", "abc")).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "chain" })
    expect((await reads.feed("hot" as Bucket)).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "bucket" })
    expect((await reads.feed(undefined)).body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "bucket" })
    expect((await reads.verify("solana", "So11111111111111111111111111111111111111112")).body).toEqual({ success: true, candleLaunched: false })
    const fs = await reads.feed("finalstretch")
    expect(fs.body).toMatchObject({ success: true, reset: true, feed: "live", exact: true })
    expect(typeof fs.body.stale).toBe("boolean")
  })
})
