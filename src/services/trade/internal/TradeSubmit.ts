/**
 * A trade from request to settled (issue 28): the checks (chain, payer, the market launched here
 * and tradable now, the quote on the chain's current state, the caller's minimum, the wallet's
 * balance), then either the dry run's figures (the spend gate's decision, nothing held), or the
 * spend gate's hold, the embedded wallet's signed transaction recorded `sending` and sent once
 * through the attempt runner and its verdict. A repeated id answers the stored outcome (a changed
 * body is refused), never resends and never reserves again.
 *
 * The spend gate (`src/services/spend`): a buy with a key is held under the key's lock before it
 * is signed (`reserve`, id `tradeReservationId`); the store books it with the executed trade and
 * releases it with the failed one; an attempt that ends before its trade was recorded (a refusal
 * after the hold, the signer failing) releases it here. A sell is never refused; it books.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Fiber, Option } from "effect"
import { QuotePairs } from "../../../domain/QuotePairs.js"
import { requestMemo } from "../../../chain/solana/client/RequestMemo.js"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt, SpendRail } from "../../spend/SpendGate.js"
import { check as checkSpend, holdAround } from "../../spend/SpendStore.js"
import { usdOfQuote } from "../../spend/SpendValue.js"
import type { PayerError, SignClaimError, WalletError } from "../../wallets/WalletError.js"
import type { WalletProviderError } from "../../wallets/WalletProvider.js"
import { type TradeError, tradeError } from "../TradeError.js"
import { type TradeCaller, type TradeRequest, DEFAULT_SLIPPAGE_BPS, tradeBodyHash } from "../TradeInputs.js"
import { type TradeRow, tradeReservationId } from "../TradeStore.js"
import { type TradeAcceptedView, type TradeDryRunView, type TradeView, tradeView } from "../TradeViews.js"
import { minOutOf, platformFeeOf, quoteVenue, type VenueRefusal } from "../VenueQuote.js"
import { makeHoodTradeSubmit } from "./HoodTradeSubmit.js"
import type { TradeContext } from "./TradeContext.js"

/** Every failure of the write side: the rail's own, the spend gate's, the wallet rules' (linked and TEE payers) and storage's. */
export type TradeFailure = TradeError | SpendError | PayerError | SignClaimError | WalletError | SqlError

export const tradeJobUrl = (clientTradeId: string): string => `/api/v1/trade/agent/trades/${encodeURIComponent(clientTradeId)}`

/** A Solana transaction's fee (one signature) and an associated token account's rent: what a buy needs beyond its quote. */
const SIGNATURE_LAMPORTS = 5_000n
const TOKEN_ACCOUNT_RENT_LAMPORTS = 2_039_280n

export const quoteAssetOf = (quoteMint: string): string => QuotePairs.find((p) => p.chain === "solana" && p.address === quoteMint)?.id ?? quoteMint

const fromProvider = (e: WalletProviderError): TradeError => {
  switch (e.reason) {
    case "not_embedded":
      return tradeError("agent_wallet_missing", e.message)
    case "not_delegated":
      return tradeError("agent_wallet_not_delegated", e.message)
    case "delegation_revoked":
      return tradeError("delegation_revoked", e.message)
    case "policy_denied":
      return tradeError("spend_policy_denied", e.message, { details: e.rule === undefined ? {} : { reason: e.rule } })
    default:
      return tradeError("chain_unavailable", `the signer is unavailable: ${e.reason}: ${e.message}`, { retryable: true })
  }
}

const refusedQuote = (reason: VenueRefusal): TradeError => {
  switch (reason) {
    case "zero_amount":
      return tradeError("zero_amount", "amountIn buys nothing after the venue fee", { field: "amountIn" })
    case "exceeds_curve_supply":
      return tradeError("exceeds_curve_supply", "amountIn exceeds the tokens the curve has sold", { field: "amountIn" })
    case "exceeds_pool_liquidity":
      return tradeError("exceeds_pool_liquidity", "amountIn is more than the pool can fill", { field: "amountIn" })
    case "curve_complete":
      return tradeError("market_not_tradable", "The curve is complete; trading continues on its pool once migrated", { details: { reason: "solana_graduating" } })
  }
}

/** The refusal a failed trade answers, now and on every replay. */
export const failedAnswer = (row: TradeRow): TradeError => {
  const details = { clientTradeId: row.clientTradeId, signature: row.signature, errorCode: row.errorCode, minAmountOut: row.minAmountOutRaw.toString() }
  switch (row.errorCode) {
    case "SLIPPAGE_EXCEEDED":
      return tradeError("trade_slippage", `The market moved past minAmountOut ${row.minAmountOutRaw}; the chain refused the trade and nothing moved. Quote again and use a new clientTradeId`, { details })
    case "NEVER_LANDED":
      return tradeError("never_landed", `The trade's transaction never landed (${row.chain === "hood" ? "its nonce went to another transaction" : "its blockhash expired"}); nothing moved. Use a new clientTradeId`, { details })
    default:
      return tradeError("trade_reverted", `The trade failed on chain: ${row.error ?? "reverted"}. Use a new clientTradeId`, { details })
  }
}

export type TradeSubmits = ReturnType<typeof makeTradeSubmit>

export const makeTradeSubmit = (ctx: TradeContext) => {
  const { store, solana } = ctx
  const withSql = <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>): Effect.Effect<A, E> => Effect.provideService(self, SqlClient.SqlClient, ctx.sql)

  const pending = (row: TradeRow) =>
    tradeError("pending", `Trade ${row.clientTradeId} is in flight (signature ${row.signature}); retry the same clientTradeId to read its outcome`, {
      retryable: true,
      details: { reason: "prior_attempt_in_flight", signature: row.signature, jobUrl: tradeJobUrl(row.clientTradeId) }
    })

  /** The answer of a row: executed, failed (its refusal) or still in flight (pending). */
  const answerOf = (row: TradeRow, replay: boolean): Effect.Effect<TradeView, TradeError> =>
    row.state === "executed"
      ? Effect.succeed(tradeView(row, replay))
      : row.state === "failed"
        ? Effect.fail(failedAnswer(row))
        : row.state === "built"
          ? Effect.fail(
              tradeError("pending", `Trade ${row.clientTradeId} is built for payer ${row.payer} and waits for its signed transaction (/submit) or its signature (/confirm)`, {
                retryable: true,
                details: { reason: "not_sent", jobUrl: tradeJobUrl(row.clientTradeId) }
              })
            )
          : Effect.fail(pending(row))

  /** A row in flight awaited until its driver settles it (or the confirmation deadline passes: then as it stood). */
  const awaitSettled = (row: TradeRow): Effect.Effect<TradeRow, SqlError> =>
    row.state !== "sending"
      ? Effect.succeed(row)
      : awaitUntil(store.get(row.accountId, row.clientTradeId), (r) => r === undefined || r.state !== "sending", {
          what: "the trade's outcome",
          intervalMs: ctx.pollIntervalMs,
          timeoutMs: ctx.confirmTimeoutMs
        }).pipe(
          Effect.map((r) => r ?? row),
          Effect.catchTag("AwaitTimedOut", () => Effect.succeed(row))
        )

  /** A stored id: its outcome; a `sending` row is awaited (its driver settles it), never resent. */
  const replayOf = (caller: TradeCaller, request: TradeRequest): Effect.Effect<TradeView, TradeError | SqlError> =>
    Effect.gen(function* () {
      const row = yield* store.get(caller.accountId, request.clientTradeId)
      if (row === undefined) return yield* tradeError("trade_not_found", `No trade ${request.clientTradeId}`, { field: "clientTradeId" })
      if (row.bodyHash !== tradeBodyHash(request)) {
        return yield* tradeError("idempotency_conflict", "This clientTradeId was used with a different body", { details: { state: row.state } })
      }
      return yield* answerOf(yield* awaitSettled(row), true)
    })

  /** The Hood half (its own checks and chain port; the same store, machine and runner); undefined: Hood is refused in `priced`. */
  const hood =
    ctx.hood === undefined
      ? undefined
      : makeHoodTradeSubmit(ctx, { hood: ctx.hood, fromProvider, refusedQuote, replayOf, answerOf, spendChecked: (c, r, s) => spendChecked(c, r, s) })

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
        return yield* tradeError("chain_unsupported", "This server's trade rail does not submit on Hood: no SwapRouter is configured (HOOD_SWAP_ROUTER_ADDRESS); quotes work", { field: "chain" })
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

  type Priced = Effect.Effect.Success<ReturnType<typeof priced>>

  /** The gate's input for this caller's trade; undefined for a sell (never refused) or a caller without a key. */
  const gated = (caller: TradeCaller, request: TradeRequest, spend: SpendAttempt) =>
    caller.keyPrefix === null || spend.side === "sell"
      ? undefined
      : { accountId: caller.accountId, keyPrefix: caller.keyPrefix, chain: request.chain, attempt: spend }

  /** THE SPEND GATE, dry: the decision on the key and window as they are now; nothing held. */
  const spendChecked = (caller: TradeCaller, request: TradeRequest, spend: SpendAttempt): Effect.Effect<void, SpendError> => {
    const input = gated(caller, request, spend)
    return input === undefined ? Effect.void : withSql(checkSpend(input)).pipe(Effect.flatMap((d) => (d._tag === "Refused" ? Effect.fail(d.error) : Effect.void)))
  }

  /**
   * The dry run: the wallet's funds and the spend gate's decision checked together (a chain read
   * and a SQL read at once); refused in that order when both refuse.
   */
  const dryRun = (caller: TradeCaller, request: TradeRequest): Effect.Effect<TradeDryRunView, TradeFailure> =>
    request.chain === "hood" && hood !== undefined
      ? hood.dryRun(caller, request)
      : Effect.gen(function* () {
          const p = yield* quoted(caller, request)
          const [funds, gate] = yield* Effect.all([Effect.either(funded(request, p)), Effect.either(spendChecked(caller, request, p.spend))], { concurrency: 2 })
          if (funds._tag === "Left") return yield* Effect.fail(funds.left)
          if (gate._tag === "Left") return yield* Effect.fail(gate.left)
          return {
            dryRun: true,
            clientTradeId: request.clientTradeId,
            chain: request.chain,
            mint: request.mint,
            side: request.side,
            venue: p.fill.venue,
            payer: request.payer === "main" ? "main" : p.rail,
            wallet: p.wallet,
            quoteMint: p.quoteMint,
            quoteAsset: quoteAssetOf(p.quoteMint),
            amountIn: request.amountInRaw.toString(),
            expectedOut: p.fill.amountOut.toString(),
            minAmountOut: p.minOut.toString(),
            fee: { bps: p.fee.planFeeBps, feeRaw: p.fee.feeRaw.toString(), asset: "quote" }
          } satisfies TradeDryRunView
        })

  /**
   * THE SPEND GATE around `run` (either chain's sign and send): a buy's hold under the key's lock
   * before anything is signed, released when `run` ends before its trade was recorded.
   */
  const heldAround = <A, E>(caller: TradeCaller, request: TradeRequest, spend: SpendAttempt, run: Effect.Effect<A, E>): Effect.Effect<A, E | SpendError> => {
    const input = gated(caller, request, spend)
    if (input === undefined) return run
    return withSql(
      holdAround(
        {
          input: { ...input, reservationId: tradeReservationId({ accountId: caller.accountId, clientTradeId: request.clientTradeId }) },
          recorded: Effect.map(store.get(caller.accountId, request.clientTradeId), (row) => row !== undefined),
          what: "trade"
        },
        run
      )
    )
  }

  const execute = (caller: TradeCaller, request: TradeRequest, p: Priced) => heldAround(caller, request, p.spend, signAndSend(caller, request, p))

  /** Signs and records the trade `sending`, then sends it once and awaits its verdict (the runner). */
  const signAndSend = (caller: TradeCaller, request: TradeRequest, p: Priced) =>
    Effect.gen(function* () {
      const built = yield* solana.build({
        owner: p.wallet,
        venue: p.fill.venue === "dex" ? "dex" : "svc-curve",
        side: request.side,
        mint: request.mint,
        quoteMint: p.quoteMint,
        amountInRaw: request.amountInRaw,
        minAmountOutRaw: p.minOut,
        fee: p.fee.feeRaw > 0n ? { feeRaw: p.fee.feeRaw, treasury: ctx.treasury } : null,
        memo: requestMemo("trade", caller.accountId, request.clientTradeId)
      })
      const signed = yield* ctx.provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromProvider(e) : e)))
      const row: TradeRow = {
        accountId: caller.accountId,
        clientTradeId: request.clientTradeId,
        chain: request.chain,
        mint: request.mint,
        side: request.side,
        venue: p.fill.venue,
        quoteMint: p.quoteMint,
        quoteAsset: quoteAssetOf(p.quoteMint),
        payer: "main",
        wallet: p.wallet,
        keyId: caller.keyId,
        bodyHash: tradeBodyHash(request),
        state: "sending",
        amountInRaw: request.amountInRaw,
        expectedOutRaw: p.fill.amountOut,
        minAmountOutRaw: p.minOut,
        amountOutRaw: null,
        feeBps: p.fee.planFeeBps,
        feeRaw: p.fee.feeRaw,
        signature: signed.signature,
        lastValidBlockHeight: built.lastValidBlockHeight,
        errorCode: null,
        error: null,
        createdAtMs: ctx.nowMs(),
        spendUsdMicros: caller.keyId === null ? null : p.spend.usdMicros
      }
      const key = { accountId: caller.accountId, clientTradeId: request.clientTradeId }
      const applied = yield* ctx.trades
        .apply(key, undefined, { event: { _tag: "Signed", signature: signed.signature }, insert: row, wire: signed.signedTransaction })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      // Another request recorded this id first: its outcome is the answer; this one sends nothing.
      if (applied._tag !== "Saved") return yield* replayOf(caller, request)
      return yield* answerOf(applied.state, false)
    })

  /** Every check, priced, then the trade to run: the chain's own path. */
  const prepared = (caller: TradeCaller, request: TradeRequest): Effect.Effect<Effect.Effect<TradeView, TradeFailure>, TradeFailure> =>
    request.chain === "hood" && hood !== undefined
      ? Effect.map(hood.priced(caller, request), (p) => heldAround(caller, request, p.spend, hood.execute(caller, request, p)))
      : Effect.map(priced(caller, request), (p) => execute(caller, request, p))

  /** `POST /submit`: the one-shot trade; with `background` the 202 once the trade is recorded. */
  const submit = (caller: TradeCaller, request: TradeRequest, background: boolean): Effect.Effect<TradeView | TradeAcceptedView, TradeFailure> =>
    Effect.gen(function* () {
      if ((yield* store.get(caller.accountId, request.clientTradeId)) !== undefined) return yield* replayOf(caller, request)
      const run = yield* prepared(caller, request)
      if (!background) return yield* run
      const fiber = yield* Effect.forkDaemon(run)
      // Answer once the trade is recorded (or the attempt ended before it was: then its refusal).
      const recorded = yield* awaitUntil(
        Effect.zip(store.get(caller.accountId, request.clientTradeId), Fiber.poll(fiber)),
        ([row, done]) => row !== undefined || Option.isSome(done),
        { what: "the trade's record", intervalMs: 10, timeoutMs: ctx.confirmTimeoutMs }
      ).pipe(Effect.catchTag("AwaitTimedOut", () => Effect.succeed([undefined, Option.none()] as const)))
      const [row] = recorded
      if (row === undefined) return yield* Fiber.join(fiber)
      return { accepted: true, clientTradeId: row.clientTradeId, status: row.state, jobUrl: tradeJobUrl(row.clientTradeId) } satisfies TradeAcceptedView
    })

  return { submit, dryRun, replayOf, answerOf, awaitSettled, priced, heldAround }
}
