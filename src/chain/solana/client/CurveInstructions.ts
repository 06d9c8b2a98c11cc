/**
 * Instruction builders for every svc-curve instruction. Addresses are derived from the mint alone
 * (`program/Pda.ts`'s synchronous derivation, pinned equal to kit's `getProgramDerivedAddress` in
 * `Layouts.test.ts`; kit's goes through an async WebCrypto digest per bump tried: about three times
 * the wall time and a third more CPU, for the eleven addresses of a new mint), so a caller names only the mint, the quote
 * mint and the people: the account order is `program/Instructions.ts`'s lists. On the WSOL pair
 * the trader's (creator's) quote account is the wallet itself; on SPL pairs it defaults to the
 * wallet's ATA of the quote mint; the token account defaults to the ATA of the launched mint.
 */
import type { Address, Instruction } from "@solana/kit"
import {
  type CreateCurveArgs,
  encodeBuy,
  encodeClaimCreatorFee,
  encodeCreateCurve,
  encodeMigrate,
  encodePoolSwap,
  encodeSell,
  type PoolSide
} from "../program/Instructions.js"
import { findProgramAddressSync, type Seed, Seeds } from "../program/Pda.js"
import { SVC_CURVE_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { addressOf, readonly, type SignerInput, signerMeta, writable } from "./Accounts.js"
import { findAssociatedTokenAddress } from "./SplInstructions.js"
import { BoundedMemo } from "../../../platform/BoundedMemo.js"

const pda = (seeds: Seed[]): Address => findProgramAddressSync(seeds, SVC_CURVE_PROGRAM_ID).address

export interface CurveAddressSet {
  readonly mint: Address
  readonly config: Address
  readonly curve: Address
  readonly metadata: Address
  readonly tokenVault: Address
  readonly stakerVault: Address
  readonly quoteVault: Address
  readonly feeVault: Address
  readonly feeVaultQuote: Address
  readonly pool: Address
  readonly poolTokenVault: Address
  readonly poolQuoteVault: Address
}

const ADDRESS_CACHE_MAX = 10_000
const curveAddressCache = new BoundedMemo<Address, CurveAddressSet>(ADDRESS_CACHE_MAX)

/** Every svc-curve address of a mint, derived synchronously (memoized in a bounded map: they never change). Throws on a mint that is not an address. */
export const curveAddressesOf = (mint: Address): CurveAddressSet => curveAddressCache.get(mint, mint, deriveCurveAddresses)

/** `curveAddressesOf` as a promise (a failure rejects it). */
export const findCurveAddresses = (mint: Address): Promise<CurveAddressSet> => new Promise<CurveAddressSet>((resolve) => resolve(curveAddressesOf(mint)))

interface PoolAddressSet {
  readonly pool: Address
  readonly poolTokenVault: Address
  readonly poolQuoteVault: Address
}

const derivePoolAddresses = (mint: Address): PoolAddressSet => {
  const pool = pda(Seeds.pool(mint))
  return { pool, poolTokenVault: pda(Seeds.poolTokenVault(pool)), poolQuoteVault: pda(Seeds.poolQuoteVault(pool)) }
}

/**
 * The curve's addresses at once; the pool's three (only migration and pool swaps name them) on first
 * read, so a launch or a curve trade derives 8 of the 11 (issue 34: each is a SHA-256 per bump tried
 * and an on-curve check).
 */
const deriveCurveAddresses = (mint: Address): CurveAddressSet => {
  const curve = pda(Seeds.curve(mint))
  const feeVault = pda(Seeds.feeVault(curve))
  let pool: PoolAddressSet | undefined
  const poolOf = () => (pool ??= derivePoolAddresses(mint))
  return {
    mint,
    config: pda(Seeds.config()),
    curve,
    metadata: pda(Seeds.metadata(mint)),
    tokenVault: pda(Seeds.tokenVault(curve)),
    stakerVault: pda(Seeds.stakerVault(curve)),
    quoteVault: pda(Seeds.quoteVault(curve)),
    feeVault,
    feeVaultQuote: pda(Seeds.feeVaultQuote(feeVault)),
    get pool() {
      return poolOf().pool
    },
    get poolTokenVault() {
      return poolOf().poolTokenVault
    },
    get poolQuoteVault() {
      return poolOf().poolQuoteVault
    }
  }
}

/** The wallet itself on the WSOL pair, else its ATA of the quote mint. */
export const quoteAccountOf = async (wallet: Address, quoteMint: Address): Promise<Address> =>
  quoteMint === WSOL_MINT_ADDRESS ? wallet : findAssociatedTokenAddress(wallet, quoteMint)

export const getCreateCurveInstruction = async (
  i: { creator: SignerInput; mint: SignerInput; quoteMint: Address } & CreateCurveArgs
): Promise<Instruction> => {
  const a = await findCurveAddresses(addressOf(i.mint))
  return {
    programAddress: SVC_CURVE_PROGRAM_ID,
    accounts: [
      signerMeta(i.creator, true),
      signerMeta(i.mint, true),
      writable(a.curve),
      writable(a.metadata),
      writable(a.tokenVault),
      writable(a.stakerVault),
      readonly(i.quoteMint),
      writable(a.quoteVault),
      writable(a.feeVault),
      writable(a.feeVaultQuote),
      readonly(a.config),
      readonly(SYSTEM_PROGRAM_ID),
      readonly(TOKEN_PROGRAM_ID)
    ],
    data: encodeCreateCurve(i)
  }
}

export interface TradeInput {
  readonly trader: SignerInput
  readonly mint: Address
  readonly quoteMint: Address
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly traderTokenAccount?: Address
  readonly traderQuoteAccount?: Address
}

const tradeAccounts = async (i: TradeInput) => {
  const trader = addressOf(i.trader)
  const [a, token, quote] = await Promise.all([
    findCurveAddresses(i.mint),
    i.traderTokenAccount ?? findAssociatedTokenAddress(trader, i.mint),
    i.traderQuoteAccount ?? quoteAccountOf(trader, i.quoteMint)
  ])
  return { a, token, quote }
}

const curveTrade = async (i: TradeInput, data: Uint8Array): Promise<Instruction> => {
  const { a, token, quote } = await tradeAccounts(i)
  return {
    programAddress: SVC_CURVE_PROGRAM_ID,
    accounts: [
      signerMeta(i.trader, true),
      writable(a.curve),
      readonly(i.mint),
      writable(a.tokenVault),
      writable(token),
      writable(a.quoteVault),
      writable(quote),
      writable(a.feeVault),
      writable(a.feeVaultQuote),
      readonly(SYSTEM_PROGRAM_ID),
      readonly(TOKEN_PROGRAM_ID)
    ],
    data
  }
}

export const getBuyInstruction = (i: TradeInput): Promise<Instruction> => curveTrade(i, encodeBuy(i))
export const getSellInstruction = (i: TradeInput): Promise<Instruction> => curveTrade(i, encodeSell(i))

export const getMigrateInstruction = async (i: { keeper: SignerInput; mint: Address; quoteMint: Address }): Promise<Instruction> => {
  const a = await findCurveAddresses(i.mint)
  return {
    programAddress: SVC_CURVE_PROGRAM_ID,
    accounts: [
      signerMeta(i.keeper, true),
      readonly(a.config),
      writable(a.curve),
      readonly(i.mint),
      writable(a.tokenVault),
      writable(a.quoteVault),
      readonly(i.quoteMint),
      writable(a.pool),
      writable(a.poolTokenVault),
      writable(a.poolQuoteVault),
      readonly(SYSTEM_PROGRAM_ID),
      readonly(TOKEN_PROGRAM_ID)
    ],
    data: encodeMigrate()
  }
}

export const getPoolSwapInstruction = async (i: TradeInput & { side: PoolSide }): Promise<Instruction> => {
  const { a, token, quote } = await tradeAccounts(i)
  return {
    programAddress: SVC_CURVE_PROGRAM_ID,
    accounts: [
      signerMeta(i.trader, true),
      writable(a.pool),
      readonly(i.mint),
      writable(a.poolTokenVault),
      writable(a.poolQuoteVault),
      writable(token),
      writable(quote),
      writable(a.feeVault),
      writable(a.feeVaultQuote),
      readonly(SYSTEM_PROGRAM_ID),
      readonly(TOKEN_PROGRAM_ID)
    ],
    data: encodePoolSwap(i)
  }
}

export const getClaimCreatorFeeInstruction = async (i: {
  creator: SignerInput
  mint: Address
  quoteMint: Address
  creatorQuoteAccount?: Address
}): Promise<Instruction> => {
  const [a, quote] = await Promise.all([
    findCurveAddresses(i.mint),
    i.creatorQuoteAccount ?? quoteAccountOf(addressOf(i.creator), i.quoteMint)
  ])
  return {
    programAddress: SVC_CURVE_PROGRAM_ID,
    accounts: [signerMeta(i.creator, true), writable(a.feeVault), writable(a.feeVaultQuote), writable(quote), readonly(TOKEN_PROGRAM_ID)],
    data: encodeClaimCreatorFee()
  }
}
