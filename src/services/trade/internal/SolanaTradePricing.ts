/**
 * A Solana trade priced (issue 28): who pays (the embedded wallet, or a linked or TEE wallet under
 * the wallet rules), the venue and the wallet's holdings read at one slot, the quote, the caller's
 * minimum, the platform fee and what the spend gate counts; then whether the wallet can pay.
 * Nothing recorded, nothing signed.
 */
import { Effect } from "effect"
import { QuotePairs } from "../../../domain/QuotePairs.js"
import type { SpendAttempt, SpendRail } from "../../spend/SpendGate.js"
import { usdOfQuote } from "../../spend/SpendValue.js"
import { type TradeError, tradeError } from "../TradeError.js"
import { type TradeCaller, type TradeRequest, DEFAULT_SLIPPAGE_BPS } from "../TradeInputs.js"
import { minOutOf, platformFeeOf, quoteVenue } from "../VenueQuote.js"
import { refusedQuote } from "./TradeAnswers.js"
import type { TradeContext } from "./TradeContext.js"
import type { PricedRow } from "./TradeRows.js"

/** A Solana transaction's fee (one signature) and an associated token account's rent: what a buy needs beyond its quote. */
const SIGNATURE_LAMPORTS = 5_000n
const TOKEN_ACCOUNT_RENT_LAMPORTS = 2_039_280n

export const quoteAssetOf = (quoteMint: string): string => QuotePairs.find((p) => p.chain === "solana" && p.address === quoteMint)?.id ?? quoteMint

export type SolanaTradePricing = ReturnType<typeof makeSolanaTradePricing>

export const makeSolanaTradePricing = (ctx: TradeContext) => {
  const { solana } = ctx
  /**
   * Where `mint` trades now and what the wallet holds, read at one slot in one round trip (the
   * curve, its pool, the wallet and its token account): the quote prices the chain's own state,
   * so the executed amount is the quote's whenever the market has not moved.
   */
  const venueRead = (mint: string, wallet: string) =>
    Effect.map(solana.venueAndHoldings(mint, wallet), (r) => ({ venue: r.venue, holdings: Effect.succeed(r.holdings) }))

  /**
   * Who pays: the embedded wallet (`main`), or the account's spend-capable wallet named by
   * `linkedWalletId` under the wallet rules (`linked`: an imported wallet; `tee`: bound to this
   * key). The wallet's kind decides the spend gate's rail, whatever the body's `payer` said.
   */
  const payerOf = (caller: TradeCaller, request: TradeRequest) =>
    Effect.gen(function* () {
      if (request.payer === "main") {
        if (caller.embeddedWallet === "denied") {
          return yield* tradeError("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot trade with payer main")
        }
        const wallet = yield* ctx.embedded.solanaAddress(caller.accountId)
        if (wallet === undefined) return yield* tradeError("agent_wallet_missing", "This account has no embedded Solana wallet", { field: "payer" })
        return { rail: "main" as SpendRail, wallet, walletId: null as string | null }
      }
      if (ctx.wallets === undefined || caller.principal === undefined) {
        return yield* tradeError("chain_unsupported", "This server's trade rail has no wallet service: linked and TEE payers are not served", { field: "payer" })
      }
      const view = yield* ctx.wallets.resolvePayer(caller.principal, request.linkedWalletId ?? "", "solana", "spend")
      return { rail: (view.walletKind === "tee" ? "tee" : "linked") as SpendRail, wallet: view.address, walletId: view.id as string | null }
    })

  /**
   * Every check but the wallet's funds, and the priced trade; nothing recorded, nothing signed.
   * `holdings` is the wallet's read still to run (already read when the venue came from the chain).
   */
  const quoted = (caller: TradeCaller, request: TradeRequest) =>
    Effect.gen(function* () {
      if (request.chain !== "solana") {
        return yield* tradeError("chain_unsupported", "This server's trade rail does not submit on Hood: no SwapRouter and TradeRouter are configured (HOOD_SWAP_ROUTER_ADDRESS, HOOD_TRADE_ROUTER_ADDRESS); quotes work", { field: "chain" })
      }
      const { rail, wallet, walletId } = yield* payerOf(caller, request)
      const { venue, holdings } = yield* venueRead(request.mint, wallet)
      if (venue === undefined) {
        return yield* tradeError(
          "external_token",
          `${request.mint} was not launched on this service: the trade rail trades this service's curves and their graduated pools only`,
          { field: "mint", details: { routing: { reason: "external_token" }, discovery: { indexed: false } } }
        )
      }
      if (venue._tag === "Graduating") {
        return yield* tradeError("market_not_tradable", "The curve is complete and its pool is not seeded yet; trading continues on the pool once migrated", {
          details: { reason: "solana_graduating", tradingContinues: { venue: "svc-curve-pool", afterMigration: true } }
        })
      }
      const q = quoteVenue(venue.state, request.side, request.amountInRaw)
      if (q._tag === "Need") return yield* tradeError("chain_unavailable", "The venue needs a chain read", { retryable: true })
      if (q._tag === "Refused") return yield* refusedQuote(q.reason)
      const minOut = request.minAmountOutRaw ?? minOutOf(q, BigInt(request.slippageBps ?? DEFAULT_SLIPPAGE_BPS))
      if (minOut > q.amountOut) {
        return yield* tradeError("slippage_exceeded", `The market pays ${q.amountOut} now, below minAmountOut ${minOut}: nothing was sent`, {
          field: "minAmountOut",
          details: { amountOut: q.amountOut.toString(), minAmountOut: minOut.toString() }
        })
      }
      const fee = platformFeeOf(q, request.side, caller)
      const quoteAsset = quoteAssetOf(venue.quoteMint)
      // What the spend gate counts: a buy spends its amount plus the platform fee; a sell counts the quote it receives.
      const spend: SpendAttempt =
        request.side === "buy"
          ? {
              rail,
              purpose: "trade",
              side: "buy",
              asset: quoteAsset,
              amountRaw: request.amountInRaw + fee.feeRaw,
              usdMicros: yield* usdOfQuote(ctx.prices, request.chain, quoteAsset, request.amountInRaw + fee.feeRaw)
            }
          : {
              rail,
              purpose: "trade",
              side: "sell",
              asset: request.mint,
              amountRaw: request.amountInRaw,
              usdMicros: yield* usdOfQuote(ctx.prices, request.chain, quoteAsset, q.amountOut)
            }
      return { rail, wallet, walletId, venue: venue.state, quoteMint: venue.quoteMint, fill: q, minOut, fee, spend, holdings }
    })

  /** The wallet can pay: the tokens it sells, or the amount, platform fee, transaction fee and rent of a buy. */
  const funded = (request: TradeRequest, p: Effect.Effect.Success<ReturnType<typeof quoted>>): Effect.Effect<void, TradeError> =>
    Effect.flatMap(p.holdings, (held) => {
      const who = p.rail === "main" ? "The embedded wallet" : "The paying wallet"
      if (request.side === "sell" && held.tokenRaw < request.amountInRaw) {
        return tradeError("insufficient_balance", `${who} holds ${held.tokenRaw} of this token, less than amountIn`, {
          details: { balanceRaw: held.tokenRaw.toString(), requiredRaw: request.amountInRaw.toString() }
        })
      }
      const needLamports =
        (request.side === "buy" && p.quoteMint === QuotePairs[0]!.address ? request.amountInRaw + p.fee.feeRaw : 0n) + SIGNATURE_LAMPORTS + TOKEN_ACCOUNT_RENT_LAMPORTS
      if (held.lamports < needLamports) {
        return tradeError("insufficient_balance", `${who} has ${held.lamports} lamports; the trade needs ${needLamports} (amount, platform fee, transaction fee and rent)`, {
          details: { balanceRaw: held.lamports.toString(), requiredRaw: needLamports.toString() }
        })
      }
      return Effect.void
    })

  /** Every check and the priced trade; nothing recorded, nothing signed. */
  const priced = (caller: TradeCaller, request: TradeRequest) => Effect.tap(quoted(caller, request), (p) => funded(request, p))

  return { quoted, funded, priced }
}

export type SolanaPriced = Effect.Effect.Success<ReturnType<SolanaTradePricing["priced"]>>

/** The row's figures of a priced Solana trade (`TradeRows.newTradeRow`). Pure. */
export const pricedRow = (p: SolanaPriced, mint: string): PricedRow => ({
  mint,
  venue: p.fill.venue,
  quoteMint: p.quoteMint,
  quoteAsset: quoteAssetOf(p.quoteMint),
  payer: p.rail,
  wallet: p.wallet,
  expectedOutRaw: p.fill.amountOut,
  minAmountOutRaw: p.minOut,
  feeBps: p.fee.planFeeBps,
  feeRaw: p.fee.feeRaw,
  spend: p.spend
})
