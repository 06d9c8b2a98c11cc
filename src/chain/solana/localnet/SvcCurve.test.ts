/**
 * svc-curve lifecycle (spec 3.6, Solana column):
 *
 *   (none) ──create_curve──▶ trading ──buy whose net reaches G──▶ completed ──migrate (keeper)──▶ migrated
 *                              │ buy/sell priced by CurveMath        │ buy/sell → CurveComplete      │ pool_swap (PoolMath)
 *                              │ migrate → CurveNotComplete          │ migrate by anyone else →      │ migrate → AlreadyMigrated
 *                              │ pool_swap → NotMigrated             │   NotKeeper                   │ claim_creator_fee any time
 *
 * Transitions and the tests that cover them:
 * - (none) → trading: "create_curve writes the accounts and metadata as documented"
 * - trading → trading: "buy moves balances exactly…", "sell moves balances exactly…", slippage refusals
 * - trading → completed: "the buy that reaches G completes the curve and closes both sides"
 * - completed → migrated: "migrate moves the real quote and remaining tokens into the pool"
 * - migrated → migrated: "pool swaps price by PoolMath…", "a second migrate is refused"
 * - refusals: "migrate refuses a non-keeper and a curve still trading", "pool_swap before migration"
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { BPS, progressBps, quoteBuy, quoteSell } from "../../../domain/CurveMath.js"
import {
  findCurveAddresses,
  getBuyInstruction,
  getClaimCreatorFeeInstruction,
  getCreateCurveInstruction,
  getMigrateInstruction,
  getPoolSwapInstruction,
  getSellInstruction
} from "../client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../client/SplInstructions.js"
import { curveParamsOf, curveStateOf } from "../program/accounts/Curve.js"
import { decodeMetadata } from "../program/accounts/Metadata.js"
import { decodeSplMint } from "../program/accounts/SplMint.js"
import { decodeSplTokenAccount } from "../program/accounts/SplTokenAccount.js"
import { SvcCurveError } from "../program/Errors.js"
import { curveEventsFromLogs, type CurveEvent } from "../program/Events.js"
import type { CreateCurveArgs, PoolSide } from "../program/Instructions.js"
import { curveAddressesSync, findConfigAddressSync } from "../program/Pda.js"
import { quotePoolBuy, quotePoolSell } from "../program/PoolMath.js"
import { SVC_CURVE_PROGRAM_ID, TOKEN_PROGRAM_ID, USDC_MINT_ADDRESS, WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { Ledger, minimumBalanceForRentExemption, type SubmitResult } from "./Ledger.js"
import { ataOf, expectOk, launchCurve, type LaunchedCurve, readCurve, readFeeVault, readPool, send, tokenBalance } from "./testkit.js"
import { customErrorCode } from "./TransactionError.js"

const SOL = 1_000_000_000n
const USDC = 1_000_000n
const RENT0 = minimumBalanceForRentExemption(0)
const TX_FEE = 5_000n

interface World {
  readonly ledger: Ledger
  readonly creator: KeyPairSigner
  readonly trader: KeyPairSigner
  readonly keeper: KeyPairSigner
}

const world = async (): Promise<World> => ({
  ledger: new Ledger(),
  creator: await devSigner(0),
  trader: await devSigner(1),
  keeper: await keeperSigner()
})

const codeOf = (r: SubmitResult): number | undefined => (r._tag === "Landed" ? customErrorCode(r.err) : undefined)

const eventsOf = (ledger: Ledger, r: SubmitResult): CurveEvent[] =>
  r._tag === "Landed" ? curveEventsFromLogs(ledger.getTransaction(r.signature)!.logMessages).map((e) => e.event) : []

const createAta = async (w: World, owner: Address, mint: Address) =>
  expectOk(w.ledger, await send(w.ledger, w.creator, [getCreateAssociatedTokenInstruction({ payer: w.creator, ata: ataOf(owner, mint), owner, mint })]))

const trade = async (w: World, side: PoolSide, c: LaunchedCurve, quoteMint: Address, amountInRaw: bigint, minAmountOutRaw = 0n, who = w.trader) => {
  const input = { trader: who, mint: c.mint.address, quoteMint, amountInRaw, minAmountOutRaw }
  return send(w.ledger, who, [side === "buy" ? await getBuyInstruction(input) : await getSellInstruction(input)])
}

const poolSwap = async (w: World, side: PoolSide, c: LaunchedCurve, quoteMint: Address, amountInRaw: bigint, minAmountOutRaw = 0n) =>
  send(w.ledger, w.trader, [await getPoolSwapInstruction({ trader: w.trader, mint: c.mint.address, quoteMint, side, amountInRaw, minAmountOutRaw })])

const migrate = async (w: World, c: LaunchedCurve, quoteMint: Address, keeper: KeyPairSigner = w.keeper) =>
  send(w.ledger, keeper, [await getMigrateInstruction({ keeper, mint: c.mint.address, quoteMint })])

const SOL_OPEN = { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL }
const SMALL = { virtualQuoteRaw: 1n * SOL, thresholdRaw: 2n * SOL }

describe("svc-curve: create_curve", () => {
  it("create_curve writes the accounts and metadata as documented", async () => {
    const w = await world()
    const before = w.ledger.getBalance(w.creator.address)
    const c = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, { ...SOL_OPEN, name: "Curve Coin", symbol: "CURV", uri: "https://x.test/c.json" })
    const a = c.addresses
    const sync = curveAddressesSync(c.mint.address)
    expect([a.curve, a.metadata, a.tokenVault, a.stakerVault, a.quoteVault, a.feeVault, a.feeVaultQuote, a.pool]).toEqual(
      [sync.curve, sync.metadata, sync.tokenVault, sync.stakerVault, sync.quoteVault, sync.feeVault, sync.feeVaultQuote, sync.pool].map((p) => p.address)
    )
    const x = 995_000_000_000_000n
    expect(decodeSplMint(w.ledger.getAccount(c.mint.address)!.data)).toEqual({
      mintAuthority: null,
      supply: 1_000_000_000_000_000n,
      decimals: 6,
      freezeAuthority: null
    })
    const curve = readCurve(w.ledger, a.curve)
    expect(curve).toMatchObject({
      bump: sync.curve.bump,
      lifecycle: "trading",
      mode: "open",
      quoteKind: "native",
      stakerAllocationBps: 50,
      feeBps: 100,
      creatorFeeBps: 0,
      creatorShareBps: 3_000,
      tokenDecimals: 6,
      quoteDecimals: 9,
      mint: c.mint.address,
      creator: w.creator.address,
      quoteMint: WSOL_MINT_ADDRESS,
      tokenVault: a.tokenVault,
      stakerVault: a.stakerVault,
      quoteVault: a.quoteVault,
      feeVault: a.feeVault,
      pool: null,
      virtualQuoteRaw: 30n * SOL,
      thresholdRaw: 85n * SOL,
      tokenReserveRaw: x,
      virtualQuoteReserveRaw: 30n * SOL,
      virtualTokenReserveRaw: x,
      realQuoteRaw: 0n,
      createdSlot: 1n,
      completedSlot: null,
      migratedSlot: null
    })
    expect(decodeSplTokenAccount(w.ledger.getAccount(a.tokenVault)!.data)).toMatchObject({ mint: c.mint.address, owner: a.curve, amount: x })
    expect(decodeSplTokenAccount(w.ledger.getAccount(a.stakerVault)!.data)).toMatchObject({ owner: a.curve, amount: 5_000_000_000_000n })
    for (const vault of [a.quoteVault, a.feeVaultQuote]) {
      expect(w.ledger.getAccount(vault)).toMatchObject({ owner: SVC_CURVE_PROGRAM_ID, lamports: RENT0 })
      expect(w.ledger.getAccount(vault)!.data.length).toBe(0)
    }
    expect(readFeeVault(w.ledger, a.feeVault)).toMatchObject({
      curve: a.curve,
      mint: c.mint.address,
      creator: w.creator.address,
      quoteHolder: a.feeVaultQuote,
      creatorShareBps: 3_000,
      creatorOwedRaw: 0n
    })
    const metadata = w.ledger.getAccount(a.metadata)!
    expect(metadata.owner).toBe(SVC_CURVE_PROGRAM_ID)
    expect(decodeMetadata(metadata.data)).toEqual({
      bump: sync.metadata.bump,
      mint: c.mint.address,
      creator: w.creator.address,
      name: "Curve Coin",
      symbol: "CURV",
      uri: "https://x.test/c.json"
    })
    const rents = [82, 376, 165, 165, 0, 206, 0, 312].reduce((s, n) => s + minimumBalanceForRentExemption(n), 0n)
    expect(w.ledger.getBalance(w.creator.address)).toBe(before - rents - 2n * TX_FEE)
    const events = curveEventsFromLogs(w.ledger.getTransaction(c.signature)!.logMessages)
    expect(events).toEqual([
      {
        instructionIndex: 0,
        eventIndex: 0,
        event: {
          kind: "CurveCreated",
          mint: c.mint.address,
          curve: a.curve,
          creator: w.creator.address,
          quoteMint: WSOL_MINT_ADDRESS,
          virtualQuoteRaw: 30n * SOL,
          thresholdRaw: 85n * SOL,
          supplyRaw: 1_000_000_000_000_000n,
          tokenReserveRaw: x,
          stakerAllocationBps: 50,
          feeBps: 100,
          creatorFeeBps: 0,
          mode: "open",
          tokenDecimals: 6,
          quoteDecimals: 9,
          name: "Curve Coin",
          symbol: "CURV",
          uri: "https://x.test/c.json"
        }
      }
    ])
  })

  it("a launch with a dev buy at maximum name/symbol/uri fits one transaction and logs both events", async () => {
    const w = await world()
    const mint = await generateKeyPairSigner()
    const create = await getCreateCurveInstruction({
      creator: w.creator,
      mint,
      quoteMint: WSOL_MINT_ADDRESS,
      ...SOL_OPEN,
      supplyRaw: 10n ** 15n,
      stakerAllocationBps: 50,
      mode: "open",
      creatorFeeBps: 0,
      name: "n".repeat(32),
      symbol: "s".repeat(10),
      uri: "https://example.com/" + "u".repeat(180)
    })
    const ata = ataOf(w.creator.address, mint.address)
    const r = await send(
      w.ledger,
      w.creator,
      [
        create,
        getCreateAssociatedTokenInstruction({ payer: w.creator, ata, owner: w.creator.address, mint: mint.address }),
        await getBuyInstruction({ trader: w.creator, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: SOL / 2n, minAmountOutRaw: 0n })
      ],
      { computeUnitLimit: 400_000, computeUnitPriceMicroLamports: 10_000n }
    )
    expectOk(w.ledger, r)
    expect(r.wireBytes.length).toBeLessThanOrEqual(1232)
    const tx = w.ledger.getTransaction((r as { signature: string }).signature)!
    expect(tx.logMessages).not.toContain("Log truncated")
    expect(tx.computeUnitsConsumed).toBeLessThan(400_000n)
    expect(eventsOf(w.ledger, r).map((e) => e.kind)).toEqual(["CurveCreated", "Trade"])
    expect(tokenBalance(w.ledger, ata)).toBeGreaterThan(0n)
  })

  it("refuses parameters outside the rules, creating nothing", async () => {
    const w = await world()
    const attempt = async (over: Partial<CreateCurveArgs>) => {
      const mint = await generateKeyPairSigner()
      const ix = await getCreateCurveInstruction({
        creator: w.creator,
        mint,
        quoteMint: WSOL_MINT_ADDRESS,
        ...SOL_OPEN,
        supplyRaw: 10n ** 15n,
        stakerAllocationBps: 50,
        mode: "open",
        creatorFeeBps: 0,
        name: "N",
        symbol: "S",
        uri: "",
        ...over
      })
      const r = await send(w.ledger, w.creator, [ix])
      if (codeOf(r) !== undefined) expect(w.ledger.getAccount(mint.address)).toBeUndefined()
      return codeOf(r)
    }
    expect(await attempt({ stakerAllocationBps: 49 })).toBe(SvcCurveError.InvalidCurveParams)
    expect(await attempt({ stakerAllocationBps: 1_001 })).toBe(SvcCurveError.InvalidCurveParams)
    expect(await attempt({ creatorFeeBps: 100 })).toBe(SvcCurveError.InvalidCurveParams)
    expect(await attempt({ mode: "exp-a", creatorFeeBps: 150 })).toBe(SvcCurveError.InvalidCurveParams)
    expect(await attempt({ virtualQuoteRaw: 0n })).toBe(SvcCurveError.InvalidCurveParams)
    expect(await attempt({ name: "" })).toBe(SvcCurveError.InvalidMetadata)
    expect(await attempt({ mode: "exp-b", creatorFeeBps: 200, stakerAllocationBps: 500 })).toBeUndefined()
  })
})

describe("svc-curve: trading on the curve (WSOL pair)", () => {
  it("buy moves balances exactly by quoteBuy", async () => {
    const w = await world()
    const c = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, SOL_OPEN)
    await createAta(w, w.trader.address, c.mint.address)
    const a = c.addresses
    const before = readCurve(w.ledger, a.curve)
    const q = quoteBuy(curveParamsOf(before), curveStateOf(before), 2n * SOL)
    if (q._tag !== "Filled") throw new Error("quote refused")
    const lamportsBefore = w.ledger.getBalance(w.trader.address)
    const r = expectOk(w.ledger, await trade(w, "buy", c, WSOL_MINT_ADDRESS, 2n * SOL, q.amountOut))
    expect(w.ledger.getBalance(w.trader.address)).toBe(lamportsBefore - 2n * SOL - TX_FEE)
    expect(tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))).toBe(q.amountOut)
    expect(tokenBalance(w.ledger, a.tokenVault)).toBe(before.tokenReserveRaw - q.amountOut)
    expect(w.ledger.getBalance(a.quoteVault)).toBe(RENT0 + 2n * SOL - q.fee)
    expect(w.ledger.getBalance(a.feeVaultQuote)).toBe(RENT0 + q.fee)
    const after = readCurve(w.ledger, a.curve)
    expect(curveStateOf(after)).toEqual(q.next)
    expect(after).toMatchObject({ buyCount: 1n, sellCount: 0n, volumeQuoteRaw: 2n * SOL })
    const creatorFee = (q.fee * 3_000n) / BPS
    expect(readFeeVault(w.ledger, a.feeVault)).toMatchObject({
      creatorOwedRaw: creatorFee,
      protocolAccruedRaw: q.fee - creatorFee,
      curveFeesRaw: q.fee
    })
    expect(eventsOf(w.ledger, r)).toEqual([
      {
        kind: "Trade",
        mint: c.mint.address,
        curve: a.curve,
        trader: w.trader.address,
        side: "buy",
        amountInRaw: 2n * SOL,
        amountOutRaw: q.amountOut,
        feeRaw: q.fee,
        creatorFeeRaw: creatorFee,
        virtualQuoteAfterRaw: q.next.virtualQuoteRaw,
        virtualTokenAfterRaw: q.next.virtualTokenRaw,
        realQuoteAfterRaw: q.next.realQuoteRaw,
        crossesGraduation: false
      }
    ])
  })

  it("sell moves balances exactly by quoteSell", async () => {
    const w = await world()
    const c = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, SOL_OPEN)
    await createAta(w, w.trader.address, c.mint.address)
    expectOk(w.ledger, await trade(w, "buy", c, WSOL_MINT_ADDRESS, 3n * SOL))
    const a = c.addresses
    const held = tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))
    const before = readCurve(w.ledger, a.curve)
    const q = quoteSell(curveParamsOf(before), curveStateOf(before), held / 2n)
    if (q._tag !== "Filled") throw new Error("quote refused")
    const lamportsBefore = w.ledger.getBalance(w.trader.address)
    const vaultBefore = w.ledger.getBalance(a.quoteVault)
    const feeBefore = w.ledger.getBalance(a.feeVaultQuote)
    const r = expectOk(w.ledger, await trade(w, "sell", c, WSOL_MINT_ADDRESS, held / 2n, q.amountOut))
    expect(w.ledger.getBalance(w.trader.address)).toBe(lamportsBefore + q.amountOut - TX_FEE)
    expect(w.ledger.getBalance(a.quoteVault)).toBe(vaultBefore - q.grossOut)
    expect(w.ledger.getBalance(a.feeVaultQuote)).toBe(feeBefore + q.fee)
    expect(tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))).toBe(held - held / 2n)
    expect(curveStateOf(readCurve(w.ledger, a.curve))).toEqual(q.next)
    expect(w.ledger.getBalance(a.quoteVault)).toBe(RENT0 + q.next.realQuoteRaw)
    expect(eventsOf(w.ledger, r)[0]).toMatchObject({ kind: "Trade", side: "sell", amountInRaw: held / 2n, amountOutRaw: q.amountOut, feeRaw: q.fee })
  })

  it("refuses a fill below minAmountOut (SlippageExceeded) and zero amounts, moving nothing but the fee", async () => {
    const w = await world()
    const c = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, SOL_OPEN)
    await createAta(w, w.trader.address, c.mint.address)
    const curve = readCurve(w.ledger, c.addresses.curve)
    const q = quoteBuy(curveParamsOf(curve), curveStateOf(curve), SOL)
    if (q._tag !== "Filled") throw new Error("quote refused")
    const lamportsBefore = w.ledger.getBalance(w.trader.address)
    expect(codeOf(await trade(w, "buy", c, WSOL_MINT_ADDRESS, SOL, q.amountOut + 1n))).toBe(SvcCurveError.SlippageExceeded)
    expect(w.ledger.getBalance(w.trader.address)).toBe(lamportsBefore - TX_FEE)
    expect(readCurve(w.ledger, c.addresses.curve)).toEqual(curve)
    expect(codeOf(await trade(w, "buy", c, WSOL_MINT_ADDRESS, 0n))).toBe(SvcCurveError.ZeroAmount)
    expectOk(w.ledger, await trade(w, "buy", c, WSOL_MINT_ADDRESS, SOL, q.amountOut))
    const after = readCurve(w.ledger, c.addresses.curve)
    const s = quoteSell(curveParamsOf(after), curveStateOf(after), q.amountOut)
    if (s._tag !== "Filled") throw new Error("quote refused")
    expect(codeOf(await trade(w, "sell", c, WSOL_MINT_ADDRESS, q.amountOut, s.amountOut + 1n))).toBe(SvcCurveError.SlippageExceeded)
    expect(tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))).toBe(q.amountOut)
  })

  it("the buy that reaches G completes the curve and closes both sides", async () => {
    const w = await world()
    const c = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, SMALL)
    await createAta(w, w.trader.address, c.mint.address)
    expectOk(w.ledger, await trade(w, "buy", c, WSOL_MINT_ADDRESS, 1_500_000_000n))
    expect(readCurve(w.ledger, c.addresses.curve).lifecycle).toBe("trading")
    const before = readCurve(w.ledger, c.addresses.curve)
    const q = quoteBuy(curveParamsOf(before), curveStateOf(before), SOL)
    if (q._tag !== "Filled") throw new Error("quote refused")
    expect(q.crossesGraduation).toBe(true)
    const r = expectOk(w.ledger, await trade(w, "buy", c, WSOL_MINT_ADDRESS, SOL))
    const after = readCurve(w.ledger, c.addresses.curve)
    expect(after).toMatchObject({ lifecycle: "completed", completedSlot: w.ledger.slot, realQuoteRaw: q.next.realQuoteRaw })
    expect(after.realQuoteRaw).toBeGreaterThan(SMALL.thresholdRaw) // full fill: the surplus stays
    expect(progressBps(curveParamsOf(after), curveStateOf(after))).toBe(10_000n)
    expect(w.ledger.getBalance(c.addresses.quoteVault)).toBe(RENT0 + after.realQuoteRaw)
    expect(eventsOf(w.ledger, r).map((e) => e.kind)).toEqual(["Trade", "CurveCompleted"])
    expect(eventsOf(w.ledger, r)[0]).toMatchObject({ crossesGraduation: true })
    w.ledger.advanceSlot()
    expect(codeOf(await trade(w, "buy", c, WSOL_MINT_ADDRESS, SOL))).toBe(SvcCurveError.CurveComplete)
    expect(codeOf(await trade(w, "sell", c, WSOL_MINT_ADDRESS, 1_000n))).toBe(SvcCurveError.CurveComplete)
  })
})

describe("svc-curve: migration and the graduated pool", () => {
  const completedCurve = async (w: World, args: Partial<CreateCurveArgs> = {}) => {
    const c = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, { ...SMALL, ...args })
    await createAta(w, w.trader.address, c.mint.address)
    expectOk(w.ledger, await trade(w, "buy", c, WSOL_MINT_ADDRESS, 3n * SOL))
    expect(readCurve(w.ledger, c.addresses.curve).lifecycle).toBe("completed")
    return c
  }

  it("migrate refuses a non-keeper and a curve still trading", async () => {
    const w = await world()
    const trading = await launchCurve(w.ledger, w.creator, WSOL_MINT_ADDRESS, SMALL)
    expect(codeOf(await migrate(w, trading, WSOL_MINT_ADDRESS))).toBe(SvcCurveError.CurveNotComplete)
    const done = await completedCurve(w)
    expect(codeOf(await migrate(w, done, WSOL_MINT_ADDRESS, w.trader))).toBe(SvcCurveError.NotKeeper)
    expect(readCurve(w.ledger, done.addresses.curve).lifecycle).toBe("completed")
  })

  it("migrate moves the real quote and remaining tokens into the pool; a second migrate is refused", async () => {
    const w = await world()
    const c = await completedCurve(w)
    const a = c.addresses
    const curve = readCurve(w.ledger, a.curve)
    const r = expectOk(w.ledger, await migrate(w, c, WSOL_MINT_ADDRESS))
    const pool = readPool(w.ledger, a.pool)
    expect(pool).toMatchObject({
      quoteReserveRaw: curve.realQuoteRaw,
      tokenReserveRaw: curve.virtualTokenReserveRaw,
      feeBps: 50,
      baseFeeBps: 50,
      creatorFeeBps: 0,
      mint: c.mint.address,
      curve: a.curve,
      creator: w.creator.address,
      tokenVault: a.poolTokenVault,
      quoteVault: a.poolQuoteVault,
      feeVault: a.feeVault,
      createdSlot: w.ledger.slot
    })
    expect(tokenBalance(w.ledger, a.poolTokenVault)).toBe(curve.virtualTokenReserveRaw)
    expect(w.ledger.getBalance(a.poolQuoteVault)).toBe(RENT0 + curve.realQuoteRaw)
    expect(tokenBalance(w.ledger, a.tokenVault)).toBe(0n)
    expect(w.ledger.getBalance(a.quoteVault)).toBe(RENT0)
    expect(decodeSplTokenAccount(w.ledger.getAccount(a.poolTokenVault)!.data)?.owner).toBe(a.pool)
    expect(readCurve(w.ledger, a.curve)).toMatchObject({ lifecycle: "migrated", pool: a.pool, migratedSlot: w.ledger.slot })
    expect(eventsOf(w.ledger, r)).toEqual([
      {
        kind: "CurveMigrated",
        mint: c.mint.address,
        curve: a.curve,
        pool: a.pool,
        keeper: w.keeper.address,
        quoteMovedRaw: curve.realQuoteRaw,
        tokensMovedRaw: curve.virtualTokenReserveRaw,
        poolFeeBps: 50
      }
    ])
    w.ledger.advanceSlot()
    expect(codeOf(await migrate(w, c, WSOL_MINT_ADDRESS))).toBe(SvcCurveError.AlreadyMigrated)
  })

  it("sets the pool fee tier: 50 bps, or 150/250 for exp-* curves with a 100/200 bps creator fee", async () => {
    const w = await world()
    const tiers: Array<[Partial<CreateCurveArgs>, number]> = [
      [{ mode: "open" }, 50],
      [{ mode: "exp-a", creatorFeeBps: 0, stakerAllocationBps: 500 }, 50],
      [{ mode: "exp-a", creatorFeeBps: 100, stakerAllocationBps: 500 }, 150],
      [{ mode: "exp-c", creatorFeeBps: 200, stakerAllocationBps: 500 }, 250]
    ]
    for (const [args, feeBps] of tiers) {
      const c = await completedCurve(w, args)
      expectOk(w.ledger, await migrate(w, c, WSOL_MINT_ADDRESS))
      expect(readPool(w.ledger, c.addresses.pool).feeBps).toBe(feeBps)
    }
  })

  it("pool swaps price by PoolMath and owe the creator fee part; pool_swap before migration is refused", async () => {
    const w = await world()
    const c = await completedCurve(w, { mode: "exp-b", creatorFeeBps: 200, stakerAllocationBps: 500 })
    expect(codeOf(await poolSwap(w, "buy", c, WSOL_MINT_ADDRESS, SOL))).toBe(SvcCurveError.NotMigrated)
    expectOk(w.ledger, await migrate(w, c, WSOL_MINT_ADDRESS))
    const a = c.addresses
    const fees = { feeBps: 250n, creatorFeeBps: 200n }
    const owedBefore = readFeeVault(w.ledger, a.feeVault).creatorOwedRaw
    const p0 = readPool(w.ledger, a.pool)
    const q = quotePoolBuy(p0, fees, SOL)
    if (q._tag !== "Filled") throw new Error("quote refused")
    const tokensBefore = tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))
    const lamportsBefore = w.ledger.getBalance(w.trader.address)
    const r = expectOk(w.ledger, await poolSwap(w, "buy", c, WSOL_MINT_ADDRESS, SOL, q.amountOut))
    expect(tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))).toBe(tokensBefore + q.amountOut)
    expect(w.ledger.getBalance(w.trader.address)).toBe(lamportsBefore - SOL - TX_FEE)
    expect(readPool(w.ledger, a.pool)).toMatchObject({ ...q.next, swapCount: 1n })
    expect(w.ledger.getBalance(a.poolQuoteVault)).toBe(RENT0 + q.next.quoteReserveRaw)
    expect(q.creatorFee).toBe((q.fee * 200n) / 250n)
    expect(readFeeVault(w.ledger, a.feeVault).creatorOwedRaw).toBe(owedBefore + q.creatorFee)
    expect(eventsOf(w.ledger, r)[0]).toMatchObject({ kind: "PoolSwap", side: "buy", amountOutRaw: q.amountOut, feeRaw: q.fee, creatorFeeRaw: q.creatorFee })

    const p1 = readPool(w.ledger, a.pool)
    const s = quotePoolSell(p1, fees, q.amountOut)
    if (s._tag !== "Filled") throw new Error("quote refused")
    expect(codeOf(await poolSwap(w, "sell", c, WSOL_MINT_ADDRESS, q.amountOut, s.amountOut + 1n))).toBe(SvcCurveError.SlippageExceeded)
    const lamports2 = w.ledger.getBalance(w.trader.address)
    expectOk(w.ledger, await poolSwap(w, "sell", c, WSOL_MINT_ADDRESS, q.amountOut, s.amountOut))
    expect(w.ledger.getBalance(w.trader.address)).toBe(lamports2 + s.amountOut - TX_FEE)
    expect(readPool(w.ledger, a.pool)).toMatchObject(s.next)
    expect(w.ledger.getBalance(a.poolQuoteVault)).toBe(RENT0 + s.next.quoteReserveRaw)
    expect(s.next.quoteReserveRaw * s.next.tokenReserveRaw).toBeGreaterThanOrEqual(p0.quoteReserveRaw * p0.tokenReserveRaw)
  })

  it("claim_creator_fee pays the creator what is owed and zeroes it; others are refused", async () => {
    const w = await world()
    const c = await completedCurve(w)
    const a = c.addresses
    const claim = async (who: KeyPairSigner) =>
      send(w.ledger, who, [await getClaimCreatorFeeInstruction({ creator: who, mint: c.mint.address, quoteMint: WSOL_MINT_ADDRESS })])
    expect(codeOf(await claim(w.trader))).toBe(SvcCurveError.NotCreator)
    const fv = readFeeVault(w.ledger, a.feeVault)
    expect(fv.creatorOwedRaw).toBeGreaterThan(0n)
    const before = w.ledger.getBalance(w.creator.address)
    const vaultBefore = w.ledger.getBalance(a.feeVaultQuote)
    const r = expectOk(w.ledger, await claim(w.creator))
    expect(w.ledger.getBalance(w.creator.address)).toBe(before + fv.creatorOwedRaw - TX_FEE)
    expect(w.ledger.getBalance(a.feeVaultQuote)).toBe(vaultBefore - fv.creatorOwedRaw)
    expect(w.ledger.getBalance(a.feeVaultQuote)).toBe(RENT0 + fv.protocolAccruedRaw)
    expect(readFeeVault(w.ledger, a.feeVault)).toMatchObject({ creatorOwedRaw: 0n, creatorClaimedRaw: fv.creatorOwedRaw })
    expect(eventsOf(w.ledger, r)).toEqual([
      { kind: "CreatorFeeClaimed", mint: c.mint.address, curve: a.curve, creator: w.creator.address, amountRaw: fv.creatorOwedRaw, claimedTotalRaw: fv.creatorOwedRaw }
    ])
    w.ledger.advanceSlot()
    expect(codeOf(await claim(w.creator))).toBe(SvcCurveError.NothingToClaim)
  })
})

describe("svc-curve: an SPL quote pair (USDC) end to end", () => {
  it("launches, trades, completes, migrates, swaps and pays the creator in USDC", async () => {
    const w = await world()
    expectOk(w.ledger, w.ledger.mintTestTokens(USDC_MINT_ADDRESS, w.trader.address, 50_000n * USDC))
    expectOk(w.ledger, w.ledger.mintTestTokens(USDC_MINT_ADDRESS, w.creator.address, 1n))
    const c = await launchCurve(w.ledger, w.creator, USDC_MINT_ADDRESS, { virtualQuoteRaw: 4_500n * USDC, thresholdRaw: 12_750n * USDC })
    const a = c.addresses
    expect(readCurve(w.ledger, a.curve)).toMatchObject({ quoteKind: "spl", quoteDecimals: 6 })
    for (const vault of [a.quoteVault, a.feeVaultQuote]) expect(w.ledger.getAccount(vault)?.owner).toBe(TOKEN_PROGRAM_ID)
    expect(decodeSplTokenAccount(w.ledger.getAccount(a.feeVaultQuote)!.data)?.owner).toBe(a.feeVault)
    await createAta(w, w.trader.address, c.mint.address)
    const traderUsdc = ataOf(w.trader.address, USDC_MINT_ADDRESS)

    const before = readCurve(w.ledger, a.curve)
    const q = quoteBuy(curveParamsOf(before), curveStateOf(before), 1_000n * USDC)
    if (q._tag !== "Filled") throw new Error("quote refused")
    expectOk(w.ledger, await trade(w, "buy", c, USDC_MINT_ADDRESS, 1_000n * USDC, q.amountOut))
    expect(tokenBalance(w.ledger, traderUsdc)).toBe(49_000n * USDC)
    expect(tokenBalance(w.ledger, a.quoteVault)).toBe(q.next.realQuoteRaw)
    expect(tokenBalance(w.ledger, a.feeVaultQuote)).toBe(q.fee)

    const held = tokenBalance(w.ledger, ataOf(w.trader.address, c.mint.address))
    const mid = readCurve(w.ledger, a.curve)
    const s = quoteSell(curveParamsOf(mid), curveStateOf(mid), held / 4n)
    if (s._tag !== "Filled") throw new Error("quote refused")
    expectOk(w.ledger, await trade(w, "sell", c, USDC_MINT_ADDRESS, held / 4n, s.amountOut))
    expect(tokenBalance(w.ledger, traderUsdc)).toBe(49_000n * USDC + s.amountOut)

    expectOk(w.ledger, await trade(w, "buy", c, USDC_MINT_ADDRESS, 15_000n * USDC))
    const done = readCurve(w.ledger, a.curve)
    expect(done.lifecycle).toBe("completed")
    expectOk(w.ledger, await migrate(w, c, USDC_MINT_ADDRESS))
    expect(tokenBalance(w.ledger, a.poolQuoteVault)).toBe(done.realQuoteRaw)
    expect(readPool(w.ledger, a.pool)).toMatchObject({ quoteKind: "spl", quoteReserveRaw: done.realQuoteRaw, feeBps: 50 })

    const p = readPool(w.ledger, a.pool)
    const ps = quotePoolSell(p, { feeBps: 50n, creatorFeeBps: 0n }, 1_000_000n)
    if (ps._tag !== "Filled") throw new Error("quote refused")
    const usdcBefore = tokenBalance(w.ledger, traderUsdc)
    expectOk(w.ledger, await poolSwap(w, "sell", c, USDC_MINT_ADDRESS, 1_000_000n, ps.amountOut))
    expect(tokenBalance(w.ledger, traderUsdc)).toBe(usdcBefore + ps.amountOut)

    const owed = readFeeVault(w.ledger, a.feeVault).creatorOwedRaw
    const creatorUsdc = ataOf(w.creator.address, USDC_MINT_ADDRESS)
    expectOk(
      w.ledger,
      await send(w.ledger, w.creator, [await getClaimCreatorFeeInstruction({ creator: w.creator, mint: c.mint.address, quoteMint: USDC_MINT_ADDRESS })])
    )
    expect(tokenBalance(w.ledger, creatorUsdc)).toBe(1n + owed)
    const fv = readFeeVault(w.ledger, a.feeVault)
    expect(tokenBalance(w.ledger, a.feeVaultQuote)).toBe(fv.protocolAccruedRaw)
  })

  it("finds the same addresses through kit as the program derives (the pool's, derived on first read, too)", async () => {
    const mint = (await generateKeyPairSigner()).address
    const viaKit = await findCurveAddresses(mint)
    const sync = curveAddressesSync(mint)
    expect(viaKit.poolQuoteVault).toBe(sync.poolQuoteVault.address)
    expect(viaKit.feeVaultQuote).toBe(sync.feeVaultQuote.address)
    const derived = ["curve", "metadata", "tokenVault", "stakerVault", "quoteVault", "feeVault", "feeVaultQuote", "pool", "poolTokenVault", "poolQuoteVault"] as const
    expect({ ...viaKit }).toEqual({ mint, config: findConfigAddressSync().address, ...Object.fromEntries(derived.map((k) => [k, sync[k].address])) })
  })
})
