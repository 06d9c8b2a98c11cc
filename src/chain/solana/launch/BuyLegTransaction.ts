/**
 * One first-buy leg of an atomic launch bundle (launch spec 2.4, 4 rule 8): the buyer's token
 * account (created idempotently: payers may repeat), the svc-curve `buy` carrying the ladder's
 * `minAmountOutRaw` in its instruction bytes, and the platform fee leg to the treasury (a System
 * transfer on SOL, an SPL transfer to the treasury's associated account on USDC and svc), in one
 * v0 transaction paid and signed by the buyer alone. The bundle shares one blockhash, so the
 * message is deterministic for its input: the same leg always serializes to the same bytes, which
 * is what `/submit` compares a client's signed leg against.
 */
import type { Address, Instruction, TransactionSigner } from "@solana/kit"
import { getBuyInstruction, quoteAccountOf } from "../client/CurveInstructions.js"
import {
  findAssociatedTokenAddress,
  getCreateAssociatedTokenInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../client/SplInstructions.js"
import { type BlockhashLifetime, buildTransactionMessage, type TransactionMessageToSign } from "../client/Transactions.js"
import { SvcCurveError } from "../program/Errors.js"
import { WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"

/** Compute units a buy leg asks for: ATA create + buy + fee transfer is about 30,000 on the localnet. */
export const BUY_LEG_COMPUTE_UNIT_LIMIT = 80_000

export interface BuyLegInput {
  readonly buyer: TransactionSigner
  readonly mint: Address
  readonly quoteMint: Address
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  /** Null (or a zero fee) sends no fee leg. */
  readonly platformFee: { readonly feeRaw: bigint; readonly treasury: Address } | null
  readonly lifetime: BlockhashLifetime
}

export const buyLegInstructions = async (i: BuyLegInput): Promise<ReadonlyArray<Instruction>> => {
  const buyer = i.buyer.address
  const [tokenAccount, quoteAccount] = await Promise.all([findAssociatedTokenAddress(buyer, i.mint), quoteAccountOf(buyer, i.quoteMint)])
  const out: Instruction[] = [
    getCreateAssociatedTokenInstruction({ payer: i.buyer, ata: tokenAccount, owner: buyer, mint: i.mint, idempotent: true }),
    await getBuyInstruction({
      trader: i.buyer,
      mint: i.mint,
      quoteMint: i.quoteMint,
      amountInRaw: i.amountInRaw,
      minAmountOutRaw: i.minAmountOutRaw,
      traderTokenAccount: tokenAccount,
      traderQuoteAccount: quoteAccount
    })
  ]
  const fee = i.platformFee
  if (fee !== null && fee.feeRaw > 0n) {
    if (i.quoteMint === WSOL_MINT_ADDRESS) {
      out.push(getTransferSolInstruction({ from: i.buyer, to: fee.treasury, lamports: fee.feeRaw }))
    } else {
      const treasuryAccount = await findAssociatedTokenAddress(fee.treasury, i.quoteMint)
      out.push(getCreateAssociatedTokenInstruction({ payer: i.buyer, ata: treasuryAccount, owner: fee.treasury, mint: i.quoteMint, idempotent: true }))
      out.push(getTokenTransferInstruction({ source: quoteAccount, destination: treasuryAccount, authority: i.buyer, amount: fee.feeRaw }))
    }
  }
  return out
}

export const assembleBuyLeg = async (i: BuyLegInput): Promise<TransactionMessageToSign> =>
  buildTransactionMessage({
    feePayer: i.buyer,
    lifetime: i.lifetime,
    instructions: await buyLegInstructions(i),
    computeUnitLimit: BUY_LEG_COMPUTE_UNIT_LIMIT
  })

export interface TokenBalanceView {
  readonly mint: string
  readonly owner?: string | undefined
  readonly amount: bigint
}

/**
 * What one landed transaction delivered to `owner` in `mint` (post less pre token balances; an
 * account the transaction created had no pre balance). This is a buy leg's `actualOutRaw` when
 * landing is proven by reading the chain (spec 3.5).
 */
export const deliveredTokensRaw = (
  pre: ReadonlyArray<TokenBalanceView>,
  post: ReadonlyArray<TokenBalanceView>,
  owner: string,
  mint: string
): bigint => {
  const sum = (rows: ReadonlyArray<TokenBalanceView>) =>
    rows.reduce((s, b) => (b.mint === mint && b.owner === owner ? s + b.amount : s), 0n)
  return sum(post) - sum(pre)
}

/** Why a buy leg's own transaction failed on chain: the program's minimum out, or any other failure. */
export type BuyLegFailure = "slippage_exceeded" | "reverted"

/**
 * Why a buy leg (or a trade) failed on chain: svc-curve's `SlippageExceeded` is
 * `slippage_exceeded`, any other failure (the buyer could not pay, the curve refused) `reverted`.
 * The API answers them as the trade row codes of spec 2.8, 7 (`api/TradeCodes.ts`). `err` is
 * Solana's JSON shape, numbers possibly bigints.
 */
export const buyLegFailure = (err: unknown): BuyLegFailure => {
  if (typeof err === "object" && err !== null && "InstructionError" in err) {
    const detail = (err as { InstructionError: ReadonlyArray<unknown> }).InstructionError[1]
    if (typeof detail === "object" && detail !== null && "Custom" in detail && Number((detail as { Custom: unknown }).Custom) === SvcCurveError.SlippageExceeded) {
      return "slippage_exceeded"
    }
  }
  return "reverted"
}
