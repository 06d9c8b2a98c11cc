/** Who calls the trade rail and what a trade asks for (decoded by the routes). */
import { createHash } from "node:crypto"
import type { CheckedKey } from "../spend/SpendStore.js"
import type { Principal } from "../wallets/Principal.js"
import type { Side } from "./VenueQuote.js"

export interface TradeCaller {
  readonly accountId: string
  readonly keyId: string | null
  /** The calling key's prefix: the spend gate reads (and locks) its limits by it; null: no key, no key limits. */
  readonly keyPrefix: string | null
  readonly embeddedWallet: "allowed" | "denied" | null
  /** The plan's agent trade fee (document 2, 2.2). */
  readonly planFeeBps: bigint
  /** A referred account pays 10 % less platform fee on trades. */
  readonly referred: boolean
  /** The caller as the wallet rules see it (linked and TEE payers: which wallets it may pay with, and sign). */
  readonly principal?: Principal
  /**
   * The calling key's row as this request's authentication read it (its id, prefix and limits):
   * the dry run's spend decision uses it instead of reading the key again. Absent: the dry run
   * reads the key by `keyPrefix`. A hold (`reserve`) always reads and locks the key itself.
   */
  readonly spendKey?: CheckedKey
}

export interface TradeRequest {
  readonly clientTradeId: string
  readonly chain: "solana" | "hood"
  readonly mint: string
  readonly side: Side
  /** Exact input: quote (buy) or tokens (sell), raw units. */
  readonly amountInRaw: bigint
  /** Applied to the quote's fill when `minAmountOutRaw` is absent (default 100). */
  readonly slippageBps?: number
  /** The caller's own chain-enforced minimum (wins over `slippageBps`). */
  readonly minAmountOutRaw?: bigint
  /** main: the embedded wallet signs server-side; linked (an imported wallet) or tee: the build answers the unsigned transaction and its sign claim. */
  readonly payer: "main" | "linked" | "tee"
  /** The paying wallet of a linked or TEE payer (the account's wallet id). */
  readonly linkedWalletId?: string
}

/** Default slippage when neither `slippageBps` nor `minAmountOut` is sent (the quote route's default). */
export const DEFAULT_SLIPPAGE_BPS = 100

/** The idempotency hash of a trade body (everything but `dryRun` and `async`; the wallet only when named, so a main body hashes as before). Pure. */
export const tradeBodyHash = (r: TradeRequest): string =>
  createHash("sha256")
    .update(
      JSON.stringify([
        r.chain,
        r.mint,
        r.side,
        r.amountInRaw.toString(),
        r.slippageBps ?? null,
        r.minAmountOutRaw?.toString() ?? null,
        r.payer,
        ...(r.linkedWalletId !== undefined ? [r.linkedWalletId] : [])
      ])
    )
    .digest("hex")
