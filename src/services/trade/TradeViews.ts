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
