/**
 * The headless Solana launch transaction (launch spec 2.1, 2.6, 7): `create_curve` on the given
 * terms with its metadata, the payer's token account, the dev buy and the platform fee leg, in one
 * v0 transaction paid and signed by the payer, plus the mint's own signature. `planLaunch` is the
 * pure arithmetic; `assembleLaunchTransaction` builds the kit message; `sizeLaunch` serializes it
 * and measures it against Solana's 1,232-byte limit.
 *
 * Invariants:
 * - The dev buy's `minAmountOutRaw` is CurveMath's quote on the virgin curve, exactly: the curve is
 *   created by the same transaction, so nothing can trade before the buy, and a program that
 *   filled differently would fail the transaction (`SlippageExceeded`) rather than fill silently.
 * - The platform fee is `ceil(devBuy · feeBps / 10000)` in the quote asset, on top of the dev buy
 *   (the spend cap of spec rule 6 counts `buyAmount` plus the fee), paid to the treasury: a System
 *   transfer on the SOL pair, an SPL transfer to the treasury's associated token account (created
 *   idempotently in the same transaction) on USDC and svc. No dev buy, no fee leg.
 * - On the SOL pair the buy pays lamports straight from the payer (svc-curve's native pair takes
 *   the wallet itself as the quote account, docs/solana-program.md), so the "wrap" is that
 *   transfer inside the buy; USDC and svc draw from the payer's existing token account.
 * - `txBytes` is the real message's wire size, never a formula of ours: kit compiles the message
 *   and its own encoders size it (the compiled message's `getSizeFromValue`, and a compact-u16
 *   count and 64 bytes per signature slot, empty slots included, as its transaction encoder
 *   writes them), without encoding it (the encoding turns every address from base58 into bytes,
 *   about 95% of a serialization's cost: decisions.md "The launch is sized without encoding it").
 *   `LaunchTransaction.test.ts` pins it equal to the encoded transaction's length (property).
 *   `maxNameBytes` comes from that one sizing (issue 34: the dry run assembled and serialized the
 *   launch twice, with the request's name and with a 32-byte one): the name is a u8 length and its UTF-8 bytes inside
 *   `create_curve`'s data, which the compiled message carries once, behind a compact-u16 length,
 *   so a name of another length changes the wire by its bytes and by that prefix's size, nothing
 *   else. `LaunchTransaction.test.ts` pins it equal to a serialization per name length (1..32, URIs
 *   of 0..200 bytes, which cross the prefix's 128-byte step), capped at the name rule's 32 bytes.
 */
import {
  type Address,
  compileTransactionMessage,
  getCompiledTransactionMessageEncoder,
  getShortU16Encoder,
  type Instruction,
  type TransactionSigner
} from "@solana/kit"
import { BPS, ceilDiv, type CurveParams, initialState, quoteBuy, tokenReserveRaw } from "../../../domain/CurveMath.js"
import { findCurveAddresses, getBuyInstruction, getCreateCurveInstruction, quoteAccountOf } from "../client/CurveInstructions.js"
import {
  findAssociatedTokenAddress,
  getCreateAssociatedTokenInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../client/SplInstructions.js"
import { type BlockhashLifetime, buildTransactionMessage, type TransactionMessageToSign } from "../client/Transactions.js"
import type { CurveMode } from "../program/accounts/Common.js"
import { NAME_BYTES_MAX } from "../program/accounts/Metadata.js"
import { utf8Bytes } from "../program/internal/bytes.js"
import { COMPUTE_BUDGET_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"

/** Solana's packet limit for one serialized transaction (spec section 8). */
export const SOLANA_TRANSACTION_BYTES_MAX = 1232

/**
 * Compute units the launch asks for: create_curve + two ATA creates + buy + two transfers come to
 * about 53,000 by the localnet's count (docs/solana-program.md); the rest is headroom.
 */
export const LAUNCH_COMPUTE_UNIT_LIMIT = 120_000

export interface LaunchTerms {
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
  readonly supplyRaw: bigint
  readonly stakerAllocationBps: bigint
  readonly curveFeeBps: bigint
  /** The extra creator fee the pool charges after graduation (0, or 100/200 on exp-* modes). */
  readonly creatorFeeBps: bigint
  readonly mode: CurveMode
}

export interface PlatformFeeTerms {
  readonly bps: bigint
  readonly treasury: Address
}

export interface LaunchTransactionInput {
  readonly payer: TransactionSigner
  readonly mint: TransactionSigner
  readonly quoteMint: Address
  readonly terms: LaunchTerms
  readonly name: string
  readonly symbol: string
  readonly metadataUri: string
  readonly devBuyRaw: bigint
  readonly platformFee: PlatformFeeTerms
  readonly lifetime: BlockhashLifetime
  readonly computeUnitPriceMicroLamports?: bigint | undefined
  /** An atomic bundle's tip, paid by the launch's fee payer inside the launch transaction (spec 4 rule 9). */
  readonly bundleTip?: { readonly account: Address; readonly lamports: bigint } | undefined
}

export interface DevBuyPlan {
  readonly amountInRaw: bigint
  /** CurveMath's fill on the virgin curve; also the instruction's `minAmountOut`. */
  readonly expectedOutRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly curveFeeRaw: bigint
}

export interface FeePlan {
  readonly bps: bigint
  readonly feeRaw: bigint
  readonly treasury: Address
}

export interface LaunchPlan {
  readonly curveParams: CurveParams
  /** Null when `devBuyRaw` is 0. */
  readonly devBuy: DevBuyPlan | null
  /** Null when there is no dev buy or the fee rounds to 0 (fee bps 0). */
  readonly fee: FeePlan | null
}

/** Why a launch cannot be planned: the dev buy is not a fill on this curve (CurveMath's refusal). */
export type LaunchPlanRefusal = { readonly _tag: "DevBuyRefused"; readonly reason: string }

/** The curve, the dev buy and the fee of a launch, in raw units. Pure. */
/** The platform fee on a dev buy: `bps` of it, rounded up (the launch transaction's fee leg). */
export const platformFeeRaw = (devBuyRaw: bigint, bps: bigint): bigint => ceilDiv(devBuyRaw * bps, BPS)

/** The curve a launch creates with these terms (Solana fills a crossing buy in full). */
export const launchCurveParams = (terms: LaunchTerms): CurveParams => ({
  virtualQuoteRaw: terms.virtualQuoteRaw,
  thresholdRaw: terms.thresholdRaw,
  tokenReserveRaw: tokenReserveRaw(terms.supplyRaw, terms.stakerAllocationBps),
  feeBps: terms.curveFeeBps,
  crossingModel: "full-fill-surplus"
})

export const planLaunch = (
  terms: LaunchTerms,
  devBuyRaw: bigint,
  platformFee: PlatformFeeTerms
): LaunchPlan | LaunchPlanRefusal => {
  const curveParams = launchCurveParams(terms)
  if (devBuyRaw === 0n) return { curveParams, devBuy: null, fee: null }
  const quote = quoteBuy(curveParams, initialState(curveParams), devBuyRaw)
  if (quote._tag === "Refused") return { _tag: "DevBuyRefused", reason: quote.reason }
  const feeRaw = platformFeeRaw(devBuyRaw, platformFee.bps)
  return {
    curveParams,
    devBuy: { amountInRaw: devBuyRaw, expectedOutRaw: quote.amountOut, minAmountOutRaw: quote.amountOut, curveFeeRaw: quote.fee },
    fee: feeRaw === 0n ? null : { bps: platformFee.bps, feeRaw, treasury: platformFee.treasury }
  }
}

export const isLaunchPlan = (p: LaunchPlan | LaunchPlanRefusal): p is LaunchPlan => !("_tag" in p)

/** What each instruction of the message is, by index (the simulation's errors name an index). */
export type LaunchInstructionRole =
  | "compute_budget"
  | "create_curve"
  | "create_payer_token_account"
  | "dev_buy"
  | "create_treasury_account"
  | "platform_fee"
  | "bundle_tip"

export interface AssembledLaunch {
  readonly message: TransactionMessageToSign
  readonly plan: LaunchPlan
  /** Roles of the message's instructions, in the message's order. */
  readonly roles: ReadonlyArray<LaunchInstructionRole>
  /** The payer's account the dev buy and fee draw from: the wallet on SOL, its ATA on SPL pairs. */
  readonly payerQuoteAccount: Address
  readonly curve: Address
  readonly payerTokenAccount: Address
}

const launchInstructions = async (i: LaunchTransactionInput, plan: LaunchPlan) => {
  const payer = i.payer.address
  const mint = i.mint.address
  const instructions: Instruction[] = []
  const roles: LaunchInstructionRole[] = []
  const push = (role: LaunchInstructionRole, ix: Instruction) => {
    instructions.push(ix)
    roles.push(role)
  }
  const [addresses, payerQuoteAccount, payerTokenAccount] = await Promise.all([
    findCurveAddresses(mint),
    quoteAccountOf(payer, i.quoteMint),
    findAssociatedTokenAddress(payer, mint)
  ])
  push(
    "create_curve",
    await getCreateCurveInstruction({
      creator: i.payer,
      mint: i.mint,
      quoteMint: i.quoteMint,
      virtualQuoteRaw: i.terms.virtualQuoteRaw,
      thresholdRaw: i.terms.thresholdRaw,
      supplyRaw: i.terms.supplyRaw,
      stakerAllocationBps: Number(i.terms.stakerAllocationBps),
      mode: i.terms.mode,
      creatorFeeBps: Number(i.terms.creatorFeeBps),
      name: i.name,
      symbol: i.symbol,
      uri: i.metadataUri
    })
  )
  if (plan.devBuy !== null) {
    push("create_payer_token_account", getCreateAssociatedTokenInstruction({ payer: i.payer, ata: payerTokenAccount, owner: payer, mint }))
    push(
      "dev_buy",
      await getBuyInstruction({
        trader: i.payer,
        mint,
        quoteMint: i.quoteMint,
        amountInRaw: plan.devBuy.amountInRaw,
        minAmountOutRaw: plan.devBuy.minAmountOutRaw,
        traderTokenAccount: payerTokenAccount,
        traderQuoteAccount: payerQuoteAccount
      })
    )
  }
  if (plan.fee !== null) {
    if (i.quoteMint === WSOL_MINT_ADDRESS) {
      push("platform_fee", getTransferSolInstruction({ from: i.payer, to: plan.fee.treasury, lamports: plan.fee.feeRaw }))
    } else {
      const treasuryAccount = await findAssociatedTokenAddress(plan.fee.treasury, i.quoteMint)
      push(
        "create_treasury_account",
        getCreateAssociatedTokenInstruction({ payer: i.payer, ata: treasuryAccount, owner: plan.fee.treasury, mint: i.quoteMint, idempotent: true })
      )
      push(
        "platform_fee",
        getTokenTransferInstruction({ source: payerQuoteAccount, destination: treasuryAccount, authority: i.payer, amount: plan.fee.feeRaw })
      )
    }
  }
  if (i.bundleTip !== undefined) push("bundle_tip", getTransferSolInstruction({ from: i.payer, to: i.bundleTip.account, lamports: i.bundleTip.lamports }))
  return { instructions, roles, payerQuoteAccount, payerTokenAccount, curve: addresses.curve }
}

/** The launch message for a plan (`planLaunch` of the same input). Deterministic for its input. */
export const assembleLaunchTransaction = async (i: LaunchTransactionInput, plan: LaunchPlan): Promise<AssembledLaunch> => {
  const built = await launchInstructions(i, plan)
  const message = buildTransactionMessage({
    feePayer: i.payer,
    lifetime: i.lifetime,
    instructions: built.instructions,
    computeUnitLimit: LAUNCH_COMPUTE_UNIT_LIMIT,
    ...(i.computeUnitPriceMicroLamports === undefined || i.computeUnitPriceMicroLamports === 0n
      ? {}
      : { computeUnitPriceMicroLamports: i.computeUnitPriceMicroLamports })
  })
  // kit places the compute-budget instructions itself (it appends them): read the roles off the message.
  let next = 0
  const roles = message.instructions.map((ix): LaunchInstructionRole =>
    ix.programAddress === COMPUTE_BUDGET_PROGRAM_ID ? "compute_budget" : (built.roles[next++] as LaunchInstructionRole)
  )
  return { message, plan, roles, payerQuoteAccount: built.payerQuoteAccount, curve: built.curve, payerTokenAccount: built.payerTokenAccount }
}

const shortU16 = getShortU16Encoder()
const messageEncoder = getCompiledTransactionMessageEncoder()
const SIGNATURE_BYTES = 64

/**
 * Bytes of the serialized transaction, every signature slot counted (64 bytes each): what
 * `getTransactionEncoder().encode(compileTransaction(message))` would give, from the compiled
 * message's size without its bytes.
 */
export const serializedSize = (message: TransactionMessageToSign): number => {
  const compiled = compileTransactionMessage(message)
  const signatures = compiled.header.numSignerAccounts
  return shortU16.getSizeFromValue(signatures) + SIGNATURE_BYTES * signatures + messageEncoder.getSizeFromValue(compiled)
}

export interface LaunchSize {
  readonly txBytes: number
  readonly limit: number
  /** The longest name (UTF-8 bytes, at most 32) with which this exact request still fits; 0 when none does. */
  readonly maxNameBytes: number
  readonly fits: boolean
  /** `txBytes − limit` when over, else 0. */
  readonly overBy: number
}

/** Bytes an instruction's data of `length` takes in the compiled message: its compact-u16 length and the data. */
const instructionDataBytes = (length: number): number => shortU16.getSizeFromValue(length) + length

/**
 * Serializes the request once and sizes the same request with other name lengths from it (see the
 * module's invariants), to find `maxNameBytes`: the longest name of 1..32 bytes that fits `limit`
 * (the size grows with the name's byte length). `limit` is 1,232 in production; tests pass others
 * to reach the boundary.
 */
export const sizeLaunch = async (
  i: LaunchTransactionInput,
  plan: LaunchPlan,
  limit: number = SOLANA_TRANSACTION_BYTES_MAX
): Promise<LaunchSize> => {
  const assembled = await assembleLaunchTransaction(i, plan)
  const txBytes = serializedSize(assembled.message)
  const dataLength = assembled.message.instructions[assembled.roles.indexOf("create_curve")]!.data!.length
  const nameBytes = utf8Bytes(i.name).length
  const withName = (bytes: number) => txBytes - instructionDataBytes(dataLength) + instructionDataBytes(dataLength - nameBytes + bytes)
  let maxNameBytes = NAME_BYTES_MAX
  while (maxNameBytes > 0 && withName(maxNameBytes) > limit) maxNameBytes--
  const fits = txBytes <= limit
  return { txBytes, limit, maxNameBytes, fits, overBy: fits ? 0 : txBytes - limit }
}
