/**
 * What the trade rail answers (issue 28), as typed views: the routes write them inside the
 * envelope (`{success: true, ...view}`). Money is raw units as decimal strings; times ISO strings.
 */
import { CLAIM_LIFETIME_MS } from "../wallets/WalletLimits.js"
import type { TradeRow, TradeRowState } from "./TradeStore.js"

export type TradeView = {
  readonly clientTradeId: string
  readonly chain: "solana" | "hood"
  readonly mint: string
  readonly side: "buy" | "sell"
  readonly venue: string
  readonly payer: "main" | "linked" | "tee"
  readonly wallet: string
  readonly quoteMint: string
  readonly quoteAsset: string
  readonly amountIn: string
  /** The quote's fill the build priced (what executes when the market has not moved). */
  readonly expectedOut: string
  /** What the chain enforced. */
  readonly minAmountOut: string
  /** What the chain executed (null until executed). */
  readonly amountOut: string | null
  readonly fee: { readonly bps: number; readonly feeRaw: string; readonly asset: "quote" }
  readonly signature: string
  readonly status: TradeRowState
  readonly errorCode: string | null
  readonly error: string | null
  readonly createdAt: string
  /** True when this answer is the stored outcome of an earlier request with the same id. */
  readonly replay: boolean
}

/** Every check of a trade, priced, nothing recorded and nothing signed. */
export type TradeDryRunView = {
  readonly dryRun: true
  readonly clientTradeId: string
  readonly chain: "solana" | "hood"
  readonly mint: string
  readonly side: "buy" | "sell"
  readonly venue: string
  readonly payer: "main" | "linked" | "tee"
  readonly wallet: string
  readonly quoteMint: string
  readonly quoteAsset: string
  readonly amountIn: string
  readonly expectedOut: string
  readonly minAmountOut: string
  readonly fee: { readonly bps: number; readonly feeRaw: string; readonly asset: "quote" }
  /** A Hood TEE sell whose allowance to `spender` is short: the build answers the approval the service builds first. */
  readonly approval?: { readonly spender: string; readonly allowanceRaw: string }
}

export type TradeListView = {
  readonly trades: ReadonlyArray<TradeView>
  /** Pass as `cursor` for the next page; null on the last page. */
  readonly nextCursor: string | null
}

/** Accepted for the background (`async: true`): poll `jobUrl`. */
export type TradeAcceptedView = {
  readonly accepted: true
  readonly clientTradeId: string
  readonly status: TradeRowState
  readonly jobUrl: string
}

export const tradeView = (r: TradeRow, replay: boolean): TradeView => ({
  clientTradeId: r.clientTradeId,
  chain: r.chain,
  mint: r.mint,
  side: r.side,
  venue: r.venue,
  payer: r.payer,
  wallet: r.wallet,
  quoteMint: r.quoteMint,
  quoteAsset: r.quoteAsset,
  amountIn: r.amountInRaw.toString(),
  expectedOut: r.expectedOutRaw.toString(),
  minAmountOut: r.minAmountOutRaw.toString(),
  amountOut: r.amountOutRaw === null ? null : r.amountOutRaw.toString(),
  fee: { bps: r.feeBps, feeRaw: r.feeRaw.toString(), asset: "quote" },
  signature: r.signature,
  status: r.state,
  errorCode: r.errorCode,
  error: r.error,
  createdAt: new Date(r.createdAtMs).toISOString(),
  replay
})

/**
 * A linked or TEE payer's build (status `built`): the unsigned transaction and its single-use sign
 * claim. Sign it (the wallet's sign relay with `claimId`, or the wallet's own key) and send it to
 * `/submit` as `signedTransaction`, or broadcast it yourself and report its signature to `/confirm`.
 */
export type TradeBuiltView = TradeView & {
  readonly walletId: string
  /** The unsigned transaction, base64 wire bytes (the payer's signature slot empty). */
  readonly transaction: string
  readonly signClaim: { readonly claimId: string; readonly expiresAt: string }
  /** Past this block height the transaction can never land (its blockhash expired). */
  readonly lastValidBlockHeight: string
}

export const builtView = (r: TradeRow, replay: boolean): TradeBuiltView => ({
  ...tradeView(r, replay),
  walletId: r.walletId ?? "",
  transaction: r.transaction ?? "",
  signClaim: { claimId: r.claimId ?? "", expiresAt: new Date(r.createdAtMs + CLAIM_LIFETIME_MS).toISOString() },
  lastValidBlockHeight: r.lastValidBlockHeight.toString()
})

/**
 * A Hood TEE sell whose allowance to the spender is short: the approval the service built first
 * (`status: approval_built`), or once submitted and mined (`approval_confirmed`). Sign
 * `approval.transaction` at the wallet's sign relay with `approval.signClaim.claimId`, send the
 * signed bytes to `/submit` with the same `clientTradeId` (or broadcast them yourself), then build
 * again with the same body: the sell is built once the approval is mined.
 */
export type TradeApprovalView = {
  readonly clientTradeId: string
  readonly chain: "hood"
  readonly mint: string
  readonly side: "sell"
  readonly payer: "tee"
  readonly wallet: string
  readonly walletId: string
  readonly status: "approval_built" | "approval_confirmed"
  readonly approval: {
    /** Who the token lets pull the sold tokens (the curve, or the router after graduation). */
    readonly spender: string
    /** The allowance the transaction sets (raw units): the max, so the wallet approves each spender once. */
    readonly amount: string
    /** The unsigned `approve` transaction, base64 (serialized unsigned EIP-1559). */
    readonly transaction: string
    readonly signClaim: { readonly claimId: string; readonly expiresAt: string }
    /** The transaction's nonce; the sell is built after it is mined, on the next one. */
    readonly nonce: string
    /** The signed transaction's hash once submitted, else "". */
    readonly signature: string
  }
  readonly replay: boolean
}

export const approvalView = (
  r: { readonly clientTradeId: string; readonly mint: string; readonly wallet: string; readonly walletId: string; readonly spender: string; readonly transaction: string; readonly claimId: string; readonly nonce: bigint; readonly signature: string | null; readonly createdAtMs: number },
  amount: bigint,
  status: TradeApprovalView["status"],
  replay: boolean
): TradeApprovalView => ({
  clientTradeId: r.clientTradeId,
  chain: "hood",
  mint: r.mint,
  side: "sell",
  payer: "tee",
  wallet: r.wallet,
  walletId: r.walletId,
  status,
  approval: {
    spender: r.spender,
    amount: amount.toString(),
    transaction: r.transaction,
    signClaim: { claimId: r.claimId, expiresAt: new Date(r.createdAtMs + CLAIM_LIFETIME_MS).toISOString() },
    nonce: r.nonce.toString(),
    signature: r.signature ?? ""
  },
  replay
})

/** Whether a build's or submit's answer is a Hood TEE sell's approval (not the trade). Pure. */
export const isApproval = <A extends object>(v: A | TradeApprovalView): v is TradeApprovalView => "approval" in v && typeof (v as { status?: unknown }).status === "string" && (v as { status: string }).status.startsWith("approval_")
