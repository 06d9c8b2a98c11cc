/**
 * The one-shot agent trade on Hood (`payer: main`: the account's embedded EVM wallet signs
 * server-side), the Hood half of `TradeSubmit`: the same checks, the same row, the same machine
 * and attempt runner; only the chain port differs (`HoodTradeChain`).
 *
 * Under the wallet's lock (`HoodTradeChain.withWallet`), in order: a row for the id already? its
 * outcome (nothing built); a sell's allowance raised first when short (an `approve` of the max to
 * the trade router, `HoodTradeChain.spenderOf`, waited for: it moves no money); the trade built on the wallet's next
 * nonce, its balance checked against value plus the gas limit at the fee cap, signed, recorded
 * `sending` (the runner saves it, the row keeps the nonce in `lastValidBlockHeight`), sent once
 * (preflight first) and its verdict awaited. So one wallet's trades in this process never share a
 * nonce, and a trade refused before broadcast leaves no nonce gap.
 *
 * The platform fee is the quote's (`platformFeeOf`: the plan's bps, 10 % less for a referred
 * account; a buy's on `amountConsumed`, a sell's on `amountOut`), collected by the trade router in
 * the trade's own transaction (see docs/decisions.md "The Hood trade router and its platform fee").
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { type Address, getAddress, type Hash } from "viem"
import { requestTag } from "../../../chain/hood/client/RequestTag.js"
import type { PayerError, WalletError } from "../../wallets/WalletError.js"
import type { WalletProviderError } from "../../wallets/WalletProvider.js"
import { approveCall, HOOD_POOL_DEADLINE_S, type HoodTradeChain } from "../HoodTradeChain.js"
import { type TradeError, tradeError } from "../TradeError.js"
import { type TradeCaller, type TradeRequest, DEFAULT_SLIPPAGE_BPS } from "../TradeInputs.js"
import type { TradeRow } from "../TradeStore.js"
import type { TradeDryRunView, TradeView } from "../TradeViews.js"
import { minOutOf, platformFeeOf, type VenueRefusal } from "../VenueQuote.js"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt, SpendRail } from "../../spend/SpendGate.js"
import { usdOfQuote } from "../../spend/SpendValue.js"
import type { TradeContext } from "./TradeContext.js"
import { insertTrade, newTradeRow, type PricedRow } from "./TradeRows.js"

/** The quote asset of the ETH-quoted Hood markets the rail trades. */
const HOOD_QUOTE_ASSET = "eth"
const HOOD_QUOTE_MINT = "0x0000000000000000000000000000000000000000"

export interface HoodSubmitDeps {
  readonly hood: HoodTradeChain
  readonly fromProvider: (e: WalletProviderError) => TradeError
  readonly refusedQuote: (reason: VenueRefusal) => TradeError
  readonly replayOf: (caller: TradeCaller, request: TradeRequest) => Effect.Effect<TradeView, TradeError | SqlError>
  readonly answerOf: (row: TradeRow, replay: boolean) => Effect.Effect<TradeView, TradeError>
  /** THE SPEND GATE's dry decision (the submit holds the spend around `execute`, as on Solana). */
  readonly spendChecked: (caller: TradeCaller, request: TradeRequest, spend: SpendAttempt) => Effect.Effect<void, SpendError>
}

const closedRefusal = (reason: "hood_graduating" | "market_recovery" | "quote_unsupported" | "too_deep"): TradeError => {
  switch (reason) {
    case "hood_graduating":
      return tradeError("market_not_tradable", "The curve is complete and its Uniswap v3 pool is not seeded yet; trading continues on the pool once migrated", {
        details: { reason: "hood_graduating", tradingContinues: { venue: "hood-dex", afterMigration: true } }
      })
    case "market_recovery":
      return tradeError("market_not_tradable", "The market is in recovery: holders claim their share of the reserve; it does not trade", { details: { reason: "market_recovery" } })
    case "quote_unsupported":
      return tradeError("market_not_tradable", "This Hood market is quoted in USDG; the trade rail trades ETH-quoted Hood markets only", { details: { reason: "quote_unsupported" } })
    case "too_deep":
      return tradeError("exceeds_pool_liquidity", "amountIn walks the pool past the ticks one quote reads; trade a smaller amount", { field: "amountIn" })
  }
}

/**
 * Who pays on Hood: the embedded EVM wallet (`main`), or the account's spend-capable EVM wallet
 * named by `linkedWalletId` under the wallet rules (`resolvePayer`: exists, active, signable, on
 * `evm`, a TEE wallet bound to this key): an imported wallet pays on the `linked` rail, a TEE
 * wallet on the `tee` rail. As on Solana (`SolanaTradePricing.payerOf`), the wallet's kind decides
 * the rail, whatever the body's `payer` said.
 */
const hoodPayerOf = (ctx: TradeContext, caller: TradeCaller, request: TradeRequest) =>
  Effect.gen(function* () {
    if (request.payer === "main") {
      if (caller.embeddedWallet === "denied") {
        return yield* tradeError("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot trade with payer main")
      }
      const embedded = (yield* ctx.provider.embeddedWallets(caller.accountId)).find((w) => w.chain === "evm")
      if (embedded === undefined) return yield* tradeError("agent_wallet_missing", "This account has no embedded EVM wallet", { field: "payer" })
      return { rail: "main" as SpendRail, wallet: getAddress(embedded.address), walletId: null as string | null, who: "The embedded wallet" }
    }
    if (ctx.wallets === undefined || caller.principal === undefined) {
      return yield* tradeError("chain_unsupported", "This server's trade rail has no wallet service: linked and TEE payers are not served", { field: "payer" })
    }
    const view = yield* ctx.wallets.resolvePayer(caller.principal, request.linkedWalletId ?? "", "evm", "spend")
    const tee = view.walletKind === "tee"
    return { rail: (tee ? "tee" : "linked") as SpendRail, wallet: getAddress(view.address), walletId: view.id as string | null, who: tee ? "The TEE wallet" : "The paying wallet" }
  })

/** Every check and the priced trade; nothing recorded, nothing signed. */
const pricedTrade = (ctx: TradeContext, deps: HoodSubmitDeps, caller: TradeCaller, request: TradeRequest) =>
  Effect.gen(function* () {
    const { rail, wallet, walletId, who } = yield* hoodPayerOf(ctx, caller, request)
    const mint = getAddress(request.mint.toLowerCase())
    const market = yield* deps.hood.quote(mint, request.side, request.amountInRaw)
    if (market === undefined) {
      return yield* tradeError(
        "external_token",
        `${request.mint} was not launched on this service: the trade rail trades this service's curves and their graduated pools only`,
        { field: "mint", details: { routing: { reason: "external_token" }, discovery: { indexed: false } } }
      )
    }
    if (market._tag === "Closed") return yield* closedRefusal(market.reason)
    const q = market.quote
    if (q._tag === "Refused") return yield* q.reason === "curve_complete" ? closedRefusal("hood_graduating") : deps.refusedQuote(q.reason)
    const minOut = request.minAmountOutRaw ?? minOutOf(q, BigInt(request.slippageBps ?? DEFAULT_SLIPPAGE_BPS))
    if (minOut > q.amountOut) {
      return yield* tradeError("slippage_exceeded", `The market pays ${q.amountOut} now, below minAmountOut ${minOut}: nothing was sent`, {
        field: "minAmountOut",
        details: { amountOut: q.amountOut.toString(), minAmountOut: minOut.toString() }
      })
    }
    const fee = platformFeeOf(q, request.side, caller)
    const held = yield* deps.hood.holdings(wallet, mint)
    if (request.side === "sell" && held.tokenRaw < request.amountInRaw) {
      return yield* tradeError("insufficient_balance", `${who} holds ${held.tokenRaw} of this token, less than amountIn`, {
        details: { balanceRaw: held.tokenRaw.toString(), requiredRaw: request.amountInRaw.toString() }
      })
    }
    if (request.side === "buy" && held.weiRaw < request.amountInRaw + fee.feeRaw) {
      return yield* tradeError("insufficient_balance", `${who} has ${held.weiRaw} wei, less than amountIn and the platform fee`, {
        details: { balanceRaw: held.weiRaw.toString(), requiredRaw: (request.amountInRaw + fee.feeRaw).toString() }
      })
    }
    // What the spend gate counts, as on Solana: a buy its whole amountIn (a crossing buy's refund
    // is not known before it lands) plus the platform fee, a sell the ETH the venue pays.
    const spend: SpendAttempt =
      request.side === "buy"
        ? {
            rail,
            purpose: "trade",
            side: "buy",
            asset: HOOD_QUOTE_ASSET,
            amountRaw: request.amountInRaw + fee.feeRaw,
            usdMicros: yield* usdOfQuote(ctx.prices, "hood", HOOD_QUOTE_ASSET, request.amountInRaw + fee.feeRaw)
          }
        : {
            rail,
            purpose: "trade",
            side: "sell",
            asset: mint,
            amountRaw: request.amountInRaw,
            usdMicros: yield* usdOfQuote(ctx.prices, "hood", HOOD_QUOTE_ASSET, q.amountOut)
          }
    // A linked or TEE wallet's sell: the server signs nothing for it outside a build's claim (and one
    // transaction cannot carry both the approval and the sell), so the allowance must be there first.
    // A linked wallet approves itself (refused, naming the spender); a TEE wallet's build answers the
    // approval the server builds for it (`HoodTeeApprovals.ts`). The spender is `spenderOf`'s, only.
    let approval: { readonly spender: Address; readonly allowanceRaw: bigint } | undefined
    if (rail !== "main" && request.side === "sell") {
      const spender = deps.hood.spenderOf(market.venue, market.curve)
      const allowed = yield* deps.hood.allowance(wallet, mint, spender)
      if (allowed < request.amountInRaw) {
        if (rail === "tee") approval = { spender, allowanceRaw: allowed }
        else {
          return yield* tradeError("insufficient_balance", `${who} allows ${spender} ${allowed} of this token, less than amountIn: approve ${spender} on the token first, then build again`, {
            details: { reason: "allowance", spender, allowanceRaw: allowed.toString(), requiredRaw: request.amountInRaw.toString() }
          })
        }
      }
    }
    return { rail, wallet, walletId, who, mint, market, fill: q, minOut, fee, spend, approval }
  })

export type HoodPricedTrade = Effect.Effect.Success<ReturnType<typeof pricedTrade>>

/** The row's figures of a priced Hood trade (`TradeRows.newTradeRow`), its platform fee the quote's. Pure. */
export const hoodPricedRow = (p: HoodPricedTrade): PricedRow => ({
  mint: p.mint,
  venue: p.fill.venue,
  quoteMint: HOOD_QUOTE_MINT,
  quoteAsset: HOOD_QUOTE_ASSET,
  payer: p.rail,
  wallet: p.wallet,
  expectedOutRaw: p.fill.amountOut,
  minAmountOutRaw: p.minOut,
  feeBps: p.fee.planFeeBps,
  feeRaw: p.fee.feeRaw,
  spend: p.spend
})

/**
 * The trade's unsigned transaction for `p` (a pool trade's deadline 600 s from now), tagged with
 * the request (`RequestTag.ts`): two requests never build the same bytes.
 */
export const hoodTradeBuild = (hood: HoodTradeChain, accountId: string, request: TradeRequest, p: HoodPricedTrade) =>
  Effect.gen(function* () {
    const nowS = BigInt(Math.floor((yield* Clock.currentTimeMillis) / 1000))
    return yield* hood.build({
      wallet: p.wallet,
      venue: p.market.venue,
      side: request.side,
      mint: p.mint,
      curve: p.market.curve,
      poolFee: p.market.poolFee,
      amountInRaw: request.amountInRaw,
      minAmountOutRaw: p.minOut,
      platformFeeRaw: p.fee.feeRaw,
      deadlineS: nowS + HOOD_POOL_DEADLINE_S,
      tag: requestTag("trade", accountId, request.clientTradeId)
    })
  })

/** The wallet covers the built transaction: its value plus the gas limit at the fee cap. */
export const hoodGasFunded = (hood: HoodTradeChain, p: HoodPricedTrade, built: { readonly value: bigint; readonly gas: bigint; readonly maxFeePerGas: bigint }) =>
  Effect.gen(function* () {
    const held = yield* hood.holdings(p.wallet, p.mint)
    const needWei = built.value + built.gas * built.maxFeePerGas
    if (held.weiRaw < needWei) {
      return yield* tradeError("insufficient_balance", `${p.who} has ${held.weiRaw} wei; the trade needs ${needWei} (value and gas at the fee cap)`, {
        details: { balanceRaw: held.weiRaw.toString(), requiredRaw: needWei.toString() }
      })
    }
  })

export const makeHoodTradeSubmit = (ctx: TradeContext, deps: HoodSubmitDeps) => {
  const { store } = ctx
  const { hood } = deps

  const priced = (caller: TradeCaller, request: TradeRequest) => pricedTrade(ctx, deps, caller, request)

  const dryRun = (caller: TradeCaller, request: TradeRequest): Effect.Effect<TradeDryRunView, TradeError | SpendError | PayerError | WalletError | SqlError> =>
    Effect.tap(priced(caller, request), (p) => deps.spendChecked(caller, request, p.spend)).pipe(Effect.map((p) => ({
      dryRun: true,
      clientTradeId: request.clientTradeId,
      chain: request.chain,
      mint: p.mint,
      side: request.side,
      venue: p.fill.venue,
      payer: p.rail,
      wallet: p.wallet,
      quoteMint: HOOD_QUOTE_MINT,
      quoteAsset: HOOD_QUOTE_ASSET,
      amountIn: request.amountInRaw.toString(),
      expectedOut: p.fill.amountOut.toString(),
      minAmountOut: p.minOut.toString(),
      fee: { bps: p.fee.planFeeBps, feeRaw: p.fee.feeRaw.toString(), asset: "quote" },
      ...(p.approval !== undefined ? { approval: { spender: p.approval.spender, allowanceRaw: p.approval.allowanceRaw.toString() } } : {})
    }) satisfies TradeDryRunView))

  /** Signs `unsigned` with the account's embedded EVM wallet. */
  const sign = (accountId: string, bytes: Uint8Array) =>
    ctx.provider.signWithEmbedded(accountId, "evm", bytes).pipe(Effect.mapError((e) => (e._tag === "WalletProviderError" ? deps.fromProvider(e) : e)))

  /** A sell's allowance to its spender (`HoodTradeChain.spenderOf`: the trade router), raised to the max when short (waited for; it moves no money). */
  const ensureAllowance = (accountId: string, wallet: Address, mint: Address, spender: Address, amountRaw: bigint) =>
    Effect.gen(function* () {
      if ((yield* hood.allowance(wallet, mint, spender)) >= amountRaw) return
      const u = yield* hood.unsigned(wallet, approveCall(mint, spender))
      const signed = yield* sign(accountId, u.bytes)
      const refused = yield* hood.send(signed.signedTransaction as `0x${string}`)
      if (refused !== undefined) return yield* tradeError("trade_reverted", `The token approval for the sell was refused: ${refused.outcome === "reverted" ? refused.error : refused.outcome}; nothing moved`)
      const receipt = yield* hood.receipt(signed.signature as Hash, ctx.confirmTimeoutMs)
      if (receipt.status !== "success") return yield* tradeError("trade_reverted", `The token approval for the sell reverted (${signed.signature}); nothing traded`)
    })

  /** Under the wallet's lock: approve when needed, build, sign, record `sending`, send once and await (the runner). */
  const execute = (caller: TradeCaller, request: TradeRequest, p: Effect.Effect.Success<ReturnType<typeof pricedTrade>>) =>
    hood.withWallet(
      p.wallet,
      Effect.gen(function* () {
        // A request that waited for the lock behind the one that recorded this id: its outcome, nothing built.
        if ((yield* store.get(caller.accountId, request.clientTradeId)) !== undefined) return yield* deps.replayOf(caller, request)
        const { market } = p
        if (request.side === "sell") yield* ensureAllowance(caller.accountId, p.wallet, p.mint, hood.spenderOf(market.venue, market.curve), request.amountInRaw)
        const built = yield* hoodTradeBuild(hood, caller.accountId, request, p)
        yield* hoodGasFunded(hood, p, built)
        const signed = yield* sign(caller.accountId, built.bytes)
        const row = newTradeRow(
          caller,
          request,
          hoodPricedRow(p),
          // Hood: the transaction's nonce (what decides that it never lands).
          { state: "sending", signature: signed.signature, lastValidBlockHeight: BigInt(built.nonce), createdAtMs: yield* ctx.clock.currentTimeMillis }
        )
        const applied = yield* insertTrade(ctx, row, { _tag: "Signed", signature: signed.signature }, signed.signedTransaction)
        if (applied._tag !== "Saved") return yield* deps.replayOf(caller, request)
        return yield* deps.answerOf(applied.state, false)
      })
    )

  return { priced, dryRun, execute }
}
