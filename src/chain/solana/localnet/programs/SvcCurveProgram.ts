/**
 * svc-curve, the localnet implementation of our curve program (layouts and account lists in
 * `program/`, documented in docs/solana-program.md). Every curve trade is priced ONLY by
 * CurveMath's `quoteBuy`/`quoteSell` on the state stored in the curve account (Solana crossing:
 * full fill, surplus stays), and every pool swap by PoolMath, so a quote on the same state equals
 * the execution to the unit. Funds move only through CPIs to the System and Token programs, or by
 * direct lamport moves out of vaults this program owns, so the runtime's account rules hold.
 *
 * Authenticity: an account owned by svc-curve with a valid layout can only have been written by
 * this program, which only creates them at their PDAs; so a curve, pool or fee vault is trusted
 * after an owner + discriminator check, and the vaults it names are compared by address.
 * Lifecycle: trading → completed (the buy whose net reaches G; both sides then refuse with
 * CurveComplete) → migrated (keeper only; a second migrate fails with AlreadyMigrated).
 * Amounts sent to a vault from outside (donations) are never counted: migrate moves the recorded
 * reserves, so donations stay behind.
 */
import type { Address } from "@solana/kit"
import { quoteBuy, quoteSell, tokenReserveRaw } from "../../../../domain/CurveMath.js"
import { ByteWriter } from "../../program/internal/bytes.js"
import { isExpMode } from "../../program/accounts/Common.js"
import { decodeConfig } from "../../program/accounts/Config.js"
import { type CurveAccount, CURVE_ACCOUNT_SIZE, curveParamsOf, curveStateOf, decodeCurve, encodeCurve } from "../../program/accounts/Curve.js"
import { decodeFeeVault, encodeFeeVault, FEE_VAULT_ACCOUNT_SIZE, type FeeVaultAccount } from "../../program/accounts/FeeVault.js"
import { encodeMetadata, METADATA_ACCOUNT_SIZE } from "../../program/accounts/Metadata.js"
import { decodePool, encodePool, POOL_ACCOUNT_SIZE, type PoolAccount } from "../../program/accounts/Pool.js"
import { decodeSplMint, SPL_MINT_SIZE } from "../../program/accounts/SplMint.js"
import { refusalError, SvcCurveError } from "../../program/Errors.js"
import { type CurveEvent, encodeCurveEvent } from "../../program/Events.js"
import {
  ClaimCreatorFeeAccounts,
  type CreateCurveArgs,
  CreateCurveAccounts,
  decodeSvcCurveInstruction,
  MigrateAccounts,
  type PoolSide,
  PoolSwapAccounts,
  SOLANA_TOKEN_DECIMALS,
  type TradeArgs,
  TradeAccounts
} from "../../program/Instructions.js"
import { findProgramAddressSync, type Seed, Seeds } from "../../program/Pda.js"
import { quotePoolBuy, quotePoolSell } from "../../program/PoolMath.js"
import { SVC_CURVE_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../program/ProgramIds.js"
import { U64_MAX } from "../../program/internal/bytes.js"
import { type AccountHandle, fail, failCustom, type InvokeContext, type Program } from "../internal/runtime.js"
import { AuthorityType, TokenInstruction } from "./TokenProgram.js"
import { createAccount, createTokenAccount, meta, moveLamports, named, type Signer, systemTransfer, tokenTransfer, u64Data } from "./support.js"

const BPS = 10_000n
const MIN_STAKER_ALLOCATION_BPS = 50
const MAX_STAKER_ALLOCATION_BPS = 1_000
const EXP_CREATOR_FEES_BPS: ReadonlyArray<number> = [0, 100, 200]

const err = (ctx: InvokeContext, code: number, message: string): never => {
  ctx.log(`Error: ${message}`)
  return failCustom(code)
}

const expectAddress = (ctx: InvokeContext, h: AccountHandle, expected: Address, what: string): void => {
  if (h.address !== expected) err(ctx, SvcCurveError.InvalidAccount, `${what}: expected ${expected}, got ${h.address}`)
}

const expectPda = (ctx: InvokeContext, h: AccountHandle, seeds: Seed[], what: string): number => {
  const found = findProgramAddressSync(seeds, SVC_CURVE_PROGRAM_ID)
  expectAddress(ctx, h, found.address, what)
  return found.bump
}

const expectPrograms = (system: AccountHandle, token: AccountHandle): void => {
  if (system.address !== SYSTEM_PROGRAM_ID || token.address !== TOKEN_PROGRAM_ID) fail("IncorrectProgramId")
}

const add64 = (ctx: InvokeContext, a: bigint, b: bigint): bigint => {
  const s = a + b
  if (s > U64_MAX) err(ctx, SvcCurveError.MathOverflow, "u64 overflow")
  return s
}

const owned = (ctx: InvokeContext, h: AccountHandle, what: string): Uint8Array => {
  if (h.account.owner !== SVC_CURVE_PROGRAM_ID) err(ctx, SvcCurveError.InvalidAccount, `${what} is not a svc-curve account`)
  return h.account.data
}

const loadCurve = (ctx: InvokeContext, h: AccountHandle, mint: AccountHandle): CurveAccount => {
  const c = decodeCurve(owned(ctx, h, "curve"))
  if (c === undefined) return err(ctx, SvcCurveError.InvalidAccount, "curve account expected")
  if (c.mint !== mint.address) err(ctx, SvcCurveError.InvalidAccount, "curve belongs to another mint")
  return c
}

const loadFeeVault = (ctx: InvokeContext, h: AccountHandle, quoteHolder: AccountHandle): FeeVaultAccount => {
  const f = decodeFeeVault(owned(ctx, h, "fee vault"))
  if (f === undefined) return err(ctx, SvcCurveError.InvalidAccount, "fee vault account expected")
  expectAddress(ctx, quoteHolder, f.quoteHolder, "feeVaultQuote")
  return f
}

const seedsWithBump = (seeds: Seed[], bump: number): Seed[] => [...seeds, Uint8Array.of(bump)]

/** A quote vault: lamports on a zero-data svc-curve account (WSOL pair) or an SPL token account. */
const createQuoteHolder = (
  ctx: InvokeContext,
  native: boolean,
  payer: AccountHandle,
  target: AccountHandle,
  quoteMint: AccountHandle,
  authority: Address,
  signer: Signer
): void =>
  native
    ? createAccount(ctx, payer, target, 0, SVC_CURVE_PROGRAM_ID, signer)
    : createTokenAccount(ctx, payer, target, quoteMint, authority, signer)

/** Quote from a trader (a system account for WSOL, a token account otherwise) into a vault. */
const payQuote = (ctx: InvokeContext, native: boolean, trader: AccountHandle, source: AccountHandle, vault: AccountHandle, amount: bigint) =>
  native ? systemTransfer(ctx, trader, vault, amount) : tokenTransfer(ctx, source, vault, trader, amount)

/** Quote out of a vault this program controls (`authority` signs with `signer` seeds for SPL). */
const releaseQuote = (
  ctx: InvokeContext,
  native: boolean,
  vault: AccountHandle,
  dest: AccountHandle,
  authority: AccountHandle,
  amount: bigint,
  signer: Signer
) => {
  if (amount === 0n) return
  if (native) moveLamports(vault, dest, amount)
  else tokenTransfer(ctx, vault, dest, authority, amount, signer)
}

const emit = (ctx: InvokeContext, e: CurveEvent) => ctx.emitData(encodeCurveEvent(e))

const creatorShare = (fee: bigint, shareBps: number) => (fee * BigInt(shareBps)) / BPS

// --- Instructions ----------------------------------------------------------------------------

const createCurve = (ctx: InvokeContext, args: CreateCurveArgs): void => {
  ctx.log("Instruction: CreateCurve")
  ctx.consumeUnits(10_000)
  const a = named(ctx, CreateCurveAccounts)
  expectPrograms(a.systemProgram, a.tokenProgram)
  if (args.virtualQuoteRaw <= 0n || args.thresholdRaw <= 0n || args.supplyRaw <= 0n) {
    err(ctx, SvcCurveError.InvalidCurveParams, "V, G and supply must be positive")
  }
  if (args.stakerAllocationBps < MIN_STAKER_ALLOCATION_BPS || args.stakerAllocationBps > MAX_STAKER_ALLOCATION_BPS) {
    err(ctx, SvcCurveError.InvalidCurveParams, `stakerAllocationBps must be ${MIN_STAKER_ALLOCATION_BPS}..${MAX_STAKER_ALLOCATION_BPS}`)
  }
  const exp = isExpMode(args.mode)
  if (exp ? !EXP_CREATOR_FEES_BPS.includes(args.creatorFeeBps) : args.creatorFeeBps !== 0) {
    err(ctx, SvcCurveError.InvalidCurveParams, "creatorFeeBps must be 0, 100 or 200 on exp-* modes and 0 otherwise")
  }
  const x = tokenReserveRaw(args.supplyRaw, BigInt(args.stakerAllocationBps))
  if (x <= 0n) err(ctx, SvcCurveError.InvalidCurveParams, "token reserve must be positive")
  if (args.name.length === 0 || args.symbol.length === 0) err(ctx, SvcCurveError.InvalidMetadata, "name and symbol are required")

  expectPda(ctx, a.config, Seeds.config(), "config")
  const config = decodeConfig(owned(ctx, a.config, "config"))
  if (config === undefined) return err(ctx, SvcCurveError.InvalidAccount, "config account expected")
  if (a.quoteMint.account.owner !== TOKEN_PROGRAM_ID) fail("IncorrectProgramId")
  const quoteMint = decodeSplMint(a.quoteMint.account.data)
  if (quoteMint === undefined) return err(ctx, SvcCurveError.QuoteMintMismatch, "quote mint is not an initialized mint")
  const native = a.quoteMint.address === WSOL_MINT_ADDRESS

  const mint = a.mint.address
  const curveBump = expectPda(ctx, a.curve, Seeds.curve(mint), "curve")
  const curveAddress = a.curve.address
  const metadataBump = expectPda(ctx, a.metadata, Seeds.metadata(mint), "metadata")
  const tokenVaultBump = expectPda(ctx, a.tokenVault, Seeds.tokenVault(curveAddress), "tokenVault")
  const stakerVaultBump = expectPda(ctx, a.stakerVault, Seeds.stakerVault(curveAddress), "stakerVault")
  const quoteVaultBump = expectPda(ctx, a.quoteVault, Seeds.quoteVault(curveAddress), "quoteVault")
  const feeVaultBump = expectPda(ctx, a.feeVault, Seeds.feeVault(curveAddress), "feeVault")
  const feeVaultQuoteBump = expectPda(ctx, a.feeVaultQuote, Seeds.feeVaultQuote(a.feeVault.address), "feeVaultQuote")
  const curveSigner = [seedsWithBump(Seeds.curve(mint), curveBump)]

  // The mint: created by the creator, authority the curve PDA until the supply is minted.
  createAccount(ctx, a.creator, a.mint, SPL_MINT_SIZE, TOKEN_PROGRAM_ID, [])
  ctx.invoke({
    programId: TOKEN_PROGRAM_ID,
    accounts: [meta(a.mint, false, true)],
    data: new ByteWriter(35).u8(TokenInstruction.InitializeMint2).u8(SOLANA_TOKEN_DECIMALS).address(curveAddress).u8(0).done()
  })
  createAccount(ctx, a.creator, a.curve, CURVE_ACCOUNT_SIZE, SVC_CURVE_PROGRAM_ID, curveSigner)
  createTokenAccount(ctx, a.creator, a.tokenVault, a.mint, curveAddress, [seedsWithBump(Seeds.tokenVault(curveAddress), tokenVaultBump)])
  createTokenAccount(ctx, a.creator, a.stakerVault, a.mint, curveAddress, [seedsWithBump(Seeds.stakerVault(curveAddress), stakerVaultBump)])
  createQuoteHolder(ctx, native, a.creator, a.quoteVault, a.quoteMint, curveAddress, [
    seedsWithBump(Seeds.quoteVault(curveAddress), quoteVaultBump)
  ])
  createAccount(ctx, a.creator, a.feeVault, FEE_VAULT_ACCOUNT_SIZE, SVC_CURVE_PROGRAM_ID, [
    seedsWithBump(Seeds.feeVault(curveAddress), feeVaultBump)
  ])
  createQuoteHolder(ctx, native, a.creator, a.feeVaultQuote, a.quoteMint, a.feeVault.address, [
    seedsWithBump(Seeds.feeVaultQuote(a.feeVault.address), feeVaultQuoteBump)
  ])
  createAccount(ctx, a.creator, a.metadata, METADATA_ACCOUNT_SIZE, SVC_CURVE_PROGRAM_ID, [
    seedsWithBump(Seeds.metadata(mint), metadataBump)
  ])

  // The whole supply, once: X to the curve, the staker allocation to its vault; then fixed supply.
  const mintTo = (dest: AccountHandle, amount: bigint) => {
    if (amount === 0n) return
    ctx.invoke(
      {
        programId: TOKEN_PROGRAM_ID,
        accounts: [meta(a.mint, false, true), meta(dest, false, true), meta(a.curve, true, false)],
        data: u64Data(TokenInstruction.MintTo, 1, amount)
      },
      curveSigner
    )
  }
  mintTo(a.tokenVault, x)
  mintTo(a.stakerVault, args.supplyRaw - x)
  ctx.invoke(
    {
      programId: TOKEN_PROGRAM_ID,
      accounts: [meta(a.mint, false, true), meta(a.curve, true, false)],
      data: Uint8Array.of(TokenInstruction.SetAuthority, AuthorityType.MintTokens, 0)
    },
    curveSigner
  )

  a.curve.account.data = encodeCurve({
    bump: curveBump,
    lifecycle: "trading",
    mode: args.mode,
    quoteKind: native ? "native" : "spl",
    stakerAllocationBps: args.stakerAllocationBps,
    feeBps: config.curveFeeBps,
    creatorFeeBps: args.creatorFeeBps,
    creatorShareBps: config.creatorShareBps,
    tokenDecimals: SOLANA_TOKEN_DECIMALS,
    quoteDecimals: quoteMint.decimals,
    mint,
    creator: a.creator.address,
    quoteMint: a.quoteMint.address,
    tokenVault: a.tokenVault.address,
    stakerVault: a.stakerVault.address,
    quoteVault: a.quoteVault.address,
    feeVault: a.feeVault.address,
    pool: null,
    virtualQuoteRaw: args.virtualQuoteRaw,
    thresholdRaw: args.thresholdRaw,
    supplyRaw: args.supplyRaw,
    tokenReserveRaw: x,
    virtualQuoteReserveRaw: args.virtualQuoteRaw,
    virtualTokenReserveRaw: x,
    realQuoteRaw: 0n,
    buyCount: 0n,
    sellCount: 0n,
    volumeQuoteRaw: 0n,
    createdSlot: ctx.slot,
    completedSlot: null,
    migratedSlot: null
  })
  a.feeVault.account.data = encodeFeeVault({
    bump: feeVaultBump,
    quoteKind: native ? "native" : "spl",
    creatorShareBps: config.creatorShareBps,
    curve: curveAddress,
    mint,
    creator: a.creator.address,
    quoteMint: a.quoteMint.address,
    quoteHolder: a.feeVaultQuote.address,
    protocolAccruedRaw: 0n,
    creatorOwedRaw: 0n,
    creatorClaimedRaw: 0n,
    curveFeesRaw: 0n,
    poolCreatorFeesRaw: 0n
  })
  a.metadata.account.data = encodeMetadata({
    bump: metadataBump,
    mint,
    creator: a.creator.address,
    name: args.name,
    symbol: args.symbol,
    uri: args.uri
  })
  emit(ctx, {
    kind: "CurveCreated",
    mint,
    curve: curveAddress,
    creator: a.creator.address,
    quoteMint: a.quoteMint.address,
    virtualQuoteRaw: args.virtualQuoteRaw,
    thresholdRaw: args.thresholdRaw,
    supplyRaw: args.supplyRaw,
    tokenReserveRaw: x,
    stakerAllocationBps: args.stakerAllocationBps,
    feeBps: config.curveFeeBps,
    creatorFeeBps: args.creatorFeeBps,
    mode: args.mode,
    tokenDecimals: SOLANA_TOKEN_DECIMALS,
    quoteDecimals: quoteMint.decimals,
    name: args.name,
    symbol: args.symbol,
    uri: args.uri
  })
}

const trade = (ctx: InvokeContext, side: PoolSide, args: TradeArgs): void => {
  ctx.log(side === "buy" ? "Instruction: Buy" : "Instruction: Sell")
  ctx.consumeUnits(8_000)
  const a = named(ctx, TradeAccounts)
  expectPrograms(a.systemProgram, a.tokenProgram)
  const curve = loadCurve(ctx, a.curve, a.mint)
  expectAddress(ctx, a.tokenVault, curve.tokenVault, "tokenVault")
  expectAddress(ctx, a.quoteVault, curve.quoteVault, "quoteVault")
  expectAddress(ctx, a.feeVault, curve.feeVault, "feeVault")
  const fv = loadFeeVault(ctx, a.feeVault, a.feeVaultQuote)
  const native = curve.quoteKind === "native"
  if (native) expectAddress(ctx, a.traderQuoteAccount, a.trader.address, "traderQuoteAccount (WSOL pair: the trader)")
  const params = curveParamsOf(curve)
  const state = curveStateOf(curve)
  const curveSigner = [seedsWithBump(Seeds.curve(curve.mint), curve.bump)]

  let amountOut: bigint
  let fee: bigint
  let volume: bigint
  let crossesGraduation = false
  let next = state
  if (side === "buy") {
    const q = quoteBuy(params, state, args.amountInRaw)
    if (q._tag === "Refused") return err(ctx, refusalError(q.reason), `buy refused: ${q.reason}`)
    if (q.amountOut < args.minAmountOutRaw) {
      return err(ctx, SvcCurveError.SlippageExceeded, `slippage: ${q.amountOut} out < minimum ${args.minAmountOutRaw}`)
    }
    const net = q.quoteConsumed - q.fee
    payQuote(ctx, native, a.trader, a.traderQuoteAccount, a.quoteVault, net)
    payQuote(ctx, native, a.trader, a.traderQuoteAccount, a.feeVaultQuote, q.fee)
    tokenTransfer(ctx, a.tokenVault, a.traderTokenAccount, a.curve, q.amountOut, curveSigner)
    ;({ amountOut, fee, next, crossesGraduation } = q)
    volume = q.quoteConsumed
  } else {
    const q = quoteSell(params, state, args.amountInRaw)
    if (q._tag === "Refused") return err(ctx, refusalError(q.reason), `sell refused: ${q.reason}`)
    if (q.amountOut < args.minAmountOutRaw) {
      return err(ctx, SvcCurveError.SlippageExceeded, `slippage: ${q.amountOut} out < minimum ${args.minAmountOutRaw}`)
    }
    tokenTransfer(ctx, a.traderTokenAccount, a.tokenVault, a.trader, args.amountInRaw)
    releaseQuote(ctx, native, a.quoteVault, a.traderQuoteAccount, a.curve, q.amountOut, curveSigner)
    releaseQuote(ctx, native, a.quoteVault, a.feeVaultQuote, a.curve, q.fee, curveSigner)
    ;({ amountOut, fee, next } = q)
    volume = q.grossOut
  }

  const creatorFee = creatorShare(fee, fv.creatorShareBps)
  a.feeVault.account.data = encodeFeeVault({
    ...fv,
    protocolAccruedRaw: add64(ctx, fv.protocolAccruedRaw, fee - creatorFee),
    creatorOwedRaw: add64(ctx, fv.creatorOwedRaw, creatorFee),
    curveFeesRaw: add64(ctx, fv.curveFeesRaw, fee)
  })
  a.curve.account.data = encodeCurve({
    ...curve,
    lifecycle: next.complete ? "completed" : "trading",
    virtualQuoteReserveRaw: next.virtualQuoteRaw,
    virtualTokenReserveRaw: next.virtualTokenRaw,
    realQuoteRaw: next.realQuoteRaw,
    buyCount: side === "buy" ? curve.buyCount + 1n : curve.buyCount,
    sellCount: side === "sell" ? curve.sellCount + 1n : curve.sellCount,
    volumeQuoteRaw: add64(ctx, curve.volumeQuoteRaw, volume),
    completedSlot: crossesGraduation ? ctx.slot : curve.completedSlot
  })
  emit(ctx, {
    kind: "Trade",
    mint: curve.mint,
    curve: a.curve.address,
    trader: a.trader.address,
    side,
    amountInRaw: args.amountInRaw,
    amountOutRaw: amountOut,
    feeRaw: fee,
    creatorFeeRaw: creatorFee,
    virtualQuoteAfterRaw: next.virtualQuoteRaw,
    virtualTokenAfterRaw: next.virtualTokenRaw,
    realQuoteAfterRaw: next.realQuoteRaw,
    crossesGraduation
  })
  if (crossesGraduation) {
    emit(ctx, {
      kind: "CurveCompleted",
      mint: curve.mint,
      curve: a.curve.address,
      realQuoteRaw: next.realQuoteRaw,
      virtualQuoteRaw: next.virtualQuoteRaw,
      virtualTokenRaw: next.virtualTokenRaw
    })
  }
}

const migrate = (ctx: InvokeContext): void => {
  ctx.log("Instruction: Migrate")
  ctx.consumeUnits(10_000)
  const a = named(ctx, MigrateAccounts)
  expectPrograms(a.systemProgram, a.tokenProgram)
  expectPda(ctx, a.config, Seeds.config(), "config")
  const config = decodeConfig(owned(ctx, a.config, "config"))
  if (config === undefined) return err(ctx, SvcCurveError.InvalidAccount, "config account expected")
  if (a.keeper.address !== config.keeper) err(ctx, SvcCurveError.NotKeeper, "only the configured keeper migrates")
  const curve = loadCurve(ctx, a.curve, a.mint)
  if (curve.lifecycle === "trading") err(ctx, SvcCurveError.CurveNotComplete, "curve has not reached its threshold")
  if (curve.lifecycle === "migrated") err(ctx, SvcCurveError.AlreadyMigrated, "curve already migrated")
  expectAddress(ctx, a.tokenVault, curve.tokenVault, "tokenVault")
  expectAddress(ctx, a.quoteVault, curve.quoteVault, "quoteVault")
  if (a.quoteMint.address !== curve.quoteMint) err(ctx, SvcCurveError.QuoteMintMismatch, "quote mint differs from the curve's")
  const mint = curve.mint
  const poolBump = expectPda(ctx, a.pool, Seeds.pool(mint), "pool")
  const poolAddress = a.pool.address
  const poolTokenVaultBump = expectPda(ctx, a.poolTokenVault, Seeds.poolTokenVault(poolAddress), "poolTokenVault")
  const poolQuoteVaultBump = expectPda(ctx, a.poolQuoteVault, Seeds.poolQuoteVault(poolAddress), "poolQuoteVault")
  const native = curve.quoteKind === "native"
  const curveSigner = [seedsWithBump(Seeds.curve(mint), curve.bump)]

  createAccount(ctx, a.keeper, a.pool, POOL_ACCOUNT_SIZE, SVC_CURVE_PROGRAM_ID, [seedsWithBump(Seeds.pool(mint), poolBump)])
  createTokenAccount(ctx, a.keeper, a.poolTokenVault, a.mint, poolAddress, [
    seedsWithBump(Seeds.poolTokenVault(poolAddress), poolTokenVaultBump)
  ])
  createQuoteHolder(ctx, native, a.keeper, a.poolQuoteVault, a.quoteMint, poolAddress, [
    seedsWithBump(Seeds.poolQuoteVault(poolAddress), poolQuoteVaultBump)
  ])
  const quoteMoved = curve.realQuoteRaw
  const tokensMoved = curve.virtualTokenReserveRaw
  tokenTransfer(ctx, a.tokenVault, a.poolTokenVault, a.curve, tokensMoved, curveSigner)
  releaseQuote(ctx, native, a.quoteVault, a.poolQuoteVault, a.curve, quoteMoved, curveSigner)

  const pool: PoolAccount = {
    bump: poolBump,
    quoteKind: curve.quoteKind,
    feeBps: config.poolBaseFeeBps + curve.creatorFeeBps,
    baseFeeBps: config.poolBaseFeeBps,
    creatorFeeBps: curve.creatorFeeBps,
    mint,
    quoteMint: curve.quoteMint,
    curve: a.curve.address,
    creator: curve.creator,
    tokenVault: a.poolTokenVault.address,
    quoteVault: a.poolQuoteVault.address,
    feeVault: curve.feeVault,
    quoteReserveRaw: quoteMoved,
    tokenReserveRaw: tokensMoved,
    swapCount: 0n,
    volumeQuoteRaw: 0n,
    createdSlot: ctx.slot
  }
  a.pool.account.data = encodePool(pool)
  a.curve.account.data = encodeCurve({ ...curve, lifecycle: "migrated", pool: poolAddress, migratedSlot: ctx.slot })
  emit(ctx, {
    kind: "CurveMigrated",
    mint,
    curve: a.curve.address,
    pool: poolAddress,
    keeper: a.keeper.address,
    quoteMovedRaw: quoteMoved,
    tokensMovedRaw: tokensMoved,
    poolFeeBps: pool.feeBps
  })
}

const poolSwap = (ctx: InvokeContext, side: PoolSide, args: TradeArgs): void => {
  ctx.log("Instruction: PoolSwap")
  ctx.consumeUnits(6_000)
  const a = named(ctx, PoolSwapAccounts)
  expectPrograms(a.systemProgram, a.tokenProgram)
  if (a.pool.account.owner !== SVC_CURVE_PROGRAM_ID) err(ctx, SvcCurveError.NotMigrated, "no pool: the market has not migrated")
  const pool = decodePool(a.pool.account.data)
  if (pool === undefined) return err(ctx, SvcCurveError.InvalidAccount, "pool account expected")
  if (pool.mint !== a.mint.address) err(ctx, SvcCurveError.InvalidAccount, "pool belongs to another mint")
  expectAddress(ctx, a.poolTokenVault, pool.tokenVault, "poolTokenVault")
  expectAddress(ctx, a.poolQuoteVault, pool.quoteVault, "poolQuoteVault")
  expectAddress(ctx, a.feeVault, pool.feeVault, "feeVault")
  const fv = loadFeeVault(ctx, a.feeVault, a.feeVaultQuote)
  const native = pool.quoteKind === "native"
  if (native) expectAddress(ctx, a.traderQuoteAccount, a.trader.address, "traderQuoteAccount (WSOL pair: the trader)")
  const reserves = { quoteReserveRaw: pool.quoteReserveRaw, tokenReserveRaw: pool.tokenReserveRaw }
  const fees = { feeBps: BigInt(pool.feeBps), creatorFeeBps: BigInt(pool.creatorFeeBps) }
  const q = side === "buy" ? quotePoolBuy(reserves, fees, args.amountInRaw) : quotePoolSell(reserves, fees, args.amountInRaw)
  if (q._tag === "Refused") return err(ctx, SvcCurveError.ZeroAmount, `swap refused: ${q.reason}`)
  if (q.amountOut < args.minAmountOutRaw) {
    return err(ctx, SvcCurveError.SlippageExceeded, `slippage: ${q.amountOut} out < minimum ${args.minAmountOutRaw}`)
  }
  const poolSigner = [seedsWithBump(Seeds.pool(pool.mint), pool.bump)]
  if (side === "buy") {
    payQuote(ctx, native, a.trader, a.traderQuoteAccount, a.poolQuoteVault, q.quoteVaultDelta)
    payQuote(ctx, native, a.trader, a.traderQuoteAccount, a.feeVaultQuote, q.creatorFee)
    tokenTransfer(ctx, a.poolTokenVault, a.traderTokenAccount, a.pool, q.amountOut, poolSigner)
  } else {
    tokenTransfer(ctx, a.traderTokenAccount, a.poolTokenVault, a.trader, args.amountInRaw)
    releaseQuote(ctx, native, a.poolQuoteVault, a.traderQuoteAccount, a.pool, q.amountOut, poolSigner)
    releaseQuote(ctx, native, a.poolQuoteVault, a.feeVaultQuote, a.pool, q.creatorFee, poolSigner)
  }
  a.feeVault.account.data = encodeFeeVault({
    ...fv,
    creatorOwedRaw: add64(ctx, fv.creatorOwedRaw, q.creatorFee),
    poolCreatorFeesRaw: add64(ctx, fv.poolCreatorFeesRaw, q.creatorFee)
  })
  a.pool.account.data = encodePool({
    ...pool,
    quoteReserveRaw: q.next.quoteReserveRaw,
    tokenReserveRaw: q.next.tokenReserveRaw,
    swapCount: pool.swapCount + 1n,
    volumeQuoteRaw: add64(ctx, pool.volumeQuoteRaw, side === "buy" ? args.amountInRaw : q.amountOut + q.fee)
  })
  emit(ctx, {
    kind: "PoolSwap",
    mint: pool.mint,
    pool: a.pool.address,
    trader: a.trader.address,
    side,
    amountInRaw: args.amountInRaw,
    amountOutRaw: q.amountOut,
    feeRaw: q.fee,
    creatorFeeRaw: q.creatorFee,
    quoteReserveAfterRaw: q.next.quoteReserveRaw,
    tokenReserveAfterRaw: q.next.tokenReserveRaw
  })
}

const claimCreatorFee = (ctx: InvokeContext): void => {
  ctx.log("Instruction: ClaimCreatorFee")
  ctx.consumeUnits(3_000)
  const a = named(ctx, ClaimCreatorFeeAccounts)
  if (a.tokenProgram.address !== TOKEN_PROGRAM_ID) fail("IncorrectProgramId")
  const fv = loadFeeVault(ctx, a.feeVault, a.feeVaultQuote)
  if (a.creator.address !== fv.creator) err(ctx, SvcCurveError.NotCreator, "only the curve's creator claims its fees")
  const native = fv.quoteKind === "native"
  if (native) expectAddress(ctx, a.creatorQuoteAccount, a.creator.address, "creatorQuoteAccount (WSOL pair: the creator)")
  const owed = fv.creatorOwedRaw
  if (owed === 0n) err(ctx, SvcCurveError.NothingToClaim, "nothing owed")
  releaseQuote(ctx, native, a.feeVaultQuote, a.creatorQuoteAccount, a.feeVault, owed, [
    seedsWithBump(Seeds.feeVault(fv.curve), fv.bump)
  ])
  const claimedTotal = add64(ctx, fv.creatorClaimedRaw, owed)
  a.feeVault.account.data = encodeFeeVault({ ...fv, creatorOwedRaw: 0n, creatorClaimedRaw: claimedTotal })
  emit(ctx, {
    kind: "CreatorFeeClaimed",
    mint: fv.mint,
    curve: fv.curve,
    creator: fv.creator,
    amountRaw: owed,
    claimedTotalRaw: claimedTotal
  })
}

export const SvcCurveProgram: Program = {
  programId: SVC_CURVE_PROGRAM_ID,
  name: "svc-curve",
  baseComputeUnits: 5_000,
  process(ctx) {
    const ix = decodeSvcCurveInstruction(ctx.data)
    if (ix === undefined) return err(ctx, SvcCurveError.InvalidInstruction, "malformed svc-curve instruction")
    switch (ix.kind) {
      case "create_curve":
        return createCurve(ctx, ix)
      case "buy":
        return trade(ctx, "buy", ix)
      case "sell":
        return trade(ctx, "sell", ix)
      case "migrate":
        return migrate(ctx)
      case "pool_swap":
        return poolSwap(ctx, ix.side, ix)
      case "claim_creator_fee":
        return claimCreatorFee(ctx)
    }
  }
}
