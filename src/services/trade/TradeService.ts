/**
 * The trade rail's write side (issue 28): the one-shot agent trade (`payer: main`: the embedded
 * wallet signs server-side and sends, one call from quote to confirmed), its dry run, the trade
 * read by `clientTradeId` and the account's trade list. Trades are attempts of the one runner
 * (`src/services/attempt/AttemptRunner.ts`) over the pure `TradeMachine`: each state is saved
 * before it is acted on, one process drives a trade in flight (`RowLease`, kind `agent_trade`),
 * and recovery passes settle from the chain what a dead process left in flight, never resending.
 *
 * The service is a table of methods over `internal/TradeSubmit.ts` (checks, pricing, the send).
 *
 * Invariants:
 * - Idempotent on (account, `clientTradeId`): a changed body is refused; a replay answers the
 *   stored outcome and never signs or sends again; of racing first requests one records the trade.
 * - Exact: the transaction carries the quote's `minAmountOut` (the caller's, or the fill less
 *   `slippageBps`) as the program's minimum out; when the market has not moved the executed
 *   `amountOut` is the quote's to the raw unit; a market that moved past it is refused on chain
 *   (preflight), nothing moves, and the trade fails `SLIPPAGE_EXCEEDED`.
 * - Settled once: `executed` is saved with the fee totals and the `trade.executed` event in one
 *   transaction (`TradeStore.save`).
 * - One spend gate (`src/services/spend`): a buy is checked at pricing (the dry run: nothing held),
 *   held at submit before it is signed (`KEY_LIMIT_REACHED` / `SPEND_LIMIT_EXCEEDED` records
 *   nothing), booked in the transaction that saves it `executed` and released in the one that saves
 *   it `failed`, or when the attempt ends before the trade was recorded; a sell is never refused
 *   and counts when it books. A replay of an id neither reserves nor books again.
 * - Failures are reasons (`TradeError`, the gate's `SpendError`); statuses and codes are `api/ErrorTable.ts`'s.
 */
import { ChainArrivals } from "../chains/ChainArrivals.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer, Option } from "effect"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { PriceSource } from "../prices/PriceSource.js"
import type { SpendError } from "../spend/SpendError.js"
import type { PayerError, SignClaimError, WalletError } from "../wallets/WalletError.js"
import { WalletProvider, layerTest as walletProviderTest } from "../wallets/WalletProvider.js"
import { settleSignedClaim, WalletService } from "../wallets/WalletService.js"
import { type HoodTradeChain, type HoodTradeChainOptions, makeHoodTradeChain } from "./HoodTradeChain.js"
import { makeSolanaTradeChain, type SolanaTradeChain } from "./SolanaTradeChain.js"
import { makeTradeRunner } from "./TradeAttempt.js"
import { type TradeError, tradeError } from "./TradeError.js"
import type { TradeCaller, TradeRequest } from "./TradeInputs.js"
import { makeTradeStore, TRADES_PAGE_MAX, type TradeFilter } from "./TradeStore.js"
import { type TradeAcceptedView, type TradeApprovalView, type TradeBuiltView, type TradeDryRunView, type TradeListView, type TradeView, tradeView } from "./TradeViews.js"
import type { TradeContext } from "./internal/TradeContext.js"
import { makeEmbeddedAddresses } from "./internal/PricingReads.js"
import { makeSignedTrades, type SignedConfirm, type SignedSubmit } from "./internal/SignedTrades.js"
import { makeTradeSubmit } from "./internal/TradeSubmit.js"
import * as Database from "../../db/Database.js"

export { TRADE_LEASE_KIND, tradeLeaseKey } from "./TradeAttempt.js"
export type * from "./TradeInputs.js"
export type * from "./TradeViews.js"
export type { SignedConfirm, SignedSubmit } from "./internal/SignedTrades.js"

/** What a linked or TEE payer's calls can fail with: the rail's, the spend gate's and the wallet rules'. */
export type SignedTradeFailure = TradeError | SpendError | PayerError | SignClaimError | WalletError

export interface TradeServiceOptions {
  readonly solanaRpcUrl: string
  /** Receives the platform fee (the svc-curve config's treasury). */
  readonly treasury: string
  /** The Hood chain (its node, factory, SwapRouter and WETH9); absent: Hood trades are refused (`chain_unsupported`). */
  readonly hood?: HoodTradeChainOptions
  /** How long a Hood trade the node never saw is left before its nonce is released (default 60 s; see `HoodTradeChain.releaseUnsent`). */
  readonly hoodUnsentGraceMs?: number
  /** How long a one-shot trade waits for its verdict (default 30 s); past it the trade stays pending. */
  readonly confirmTimeoutMs?: number
  readonly pollIntervalMs?: number
}

export interface TradeServiceDeps {
  /** Who drives a trade in flight (default: leases over this service's database). */
  readonly leases?: RowLeases
}

export interface TradeListQuery extends Omit<TradeFilter, "after" | "limit"> {
  readonly cursor?: string
  readonly limit?: number
}

export interface TradeServiceShape {
  /** The one-shot trade; `background`: answer once recorded (202) and settle in the background. */
  readonly submit: (caller: TradeCaller, request: TradeRequest, background: boolean) => Effect.Effect<TradeView | TradeAcceptedView, TradeError | SpendError>
  /** Every check of a trade and its figures (the spend gate's decision too); nothing held, recorded or signed. */
  readonly dryRun: (caller: TradeCaller, request: TradeRequest) => Effect.Effect<TradeDryRunView, SignedTradeFailure>
  /** A linked or TEE payer's build: the unsigned transaction and its single-use sign claim, the spend held, recorded `built`. */
  readonly build: (caller: TradeCaller, request: TradeRequest) => Effect.Effect<TradeBuiltView | TradeApprovalView, SignedTradeFailure>
  /** A linked or TEE payer's signed transaction: exactly the built one, sent once, answered settled. */
  readonly submitSigned: (caller: TradeCaller, input: SignedSubmit) => Effect.Effect<TradeView | TradeApprovalView, SignedTradeFailure>
  /** A linked or TEE build the caller broadcast itself: its signature verified over the built message, awaited, recorded once. */
  readonly confirm: (caller: TradeCaller, input: SignedConfirm) => Effect.Effect<TradeView, SignedTradeFailure>
  /** A trade as it stands (not awaited). */
  readonly trade: (caller: TradeCaller, clientTradeId: string) => Effect.Effect<TradeView, TradeError>
  readonly trades: (caller: TradeCaller, query: TradeListQuery) => Effect.Effect<TradeListView, TradeError>
  /** Settles (in the background) the trades in flight no live process drives; how many it took. */
  readonly resumeInFlight: Effect.Effect<number, TradeError>
  /**
   * One watch pass over built trades no request sent (`TradeStore.built`, bounded): one found landed
   * on chain (its caller broadcast it itself) settles like a confirmed one; one whose blockhash
   * expired unlanded fails `NEVER_LANDED` and releases its hold. How many it moved.
   */
  readonly watchBuilt: Effect.Effect<number, TradeError>
  readonly solana: SolanaTradeChain
  readonly hood: HoodTradeChain | undefined
}

export class TradeService extends Context.Tag("curvestream/TradeService")<TradeService, TradeServiceShape>() {}

const storage = storageFailure("trade", () => tradeError("storage", "Internal error; nothing was recorded"))

/** `base64url(JSON [createdAtMs, clientTradeId])`: the position after which the next page starts. */
export const encodeTradeCursor = (at: { readonly createdAtMs: number; readonly clientTradeId: string }): string =>
  Buffer.from(JSON.stringify([at.createdAtMs, at.clientTradeId])).toString("base64url")

export const decodeTradeCursor = (cursor: string): { readonly createdAtMs: number; readonly clientTradeId: string } | undefined => {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    return Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && typeof v[1] === "string" ? { createdAtMs: v[0] as number, clientTradeId: v[1] } : undefined
  } catch {
    return undefined
  }
}

export const make = (options: TradeServiceOptions, deps: TradeServiceDeps = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** Time: the Effect `Clock` the service is built under, handed to its parts. */
    const clock = yield* Effect.clock
    const store = makeTradeStore(sql, clock)
    const solana = makeSolanaTradeChain({ rpcUrl: options.solanaRpcUrl })
    const hood = options.hood === undefined ? undefined : makeHoodTradeChain(options.hood)
    const leases = deps.leases ?? makeRowLeases(sql)
    const figures = { confirmTimeoutMs: options.confirmTimeoutMs ?? 30_000, pollIntervalMs: options.pollIntervalMs ?? 250 }
    const provider = yield* WalletProvider
    const hoodRelease = { sign: (accountId: string, unsigned: Uint8Array) => provider.signWithEmbedded(accountId, "evm", unsigned), graceMs: options.hoodUnsentGraceMs ?? 60_000 }
    const wallets = Option.getOrUndefined(yield* Effect.serviceOption(WalletService))
    // The ingest stream's deliveries wake a trade's status read (absent: the poll alone).
    const arrivals = Option.getOrUndefined(yield* Effect.serviceOption(ChainArrivals))
    // A claim the relay signed follows the trade's outcome; one it never used only expires.
    const settleClaim = settleSignedClaim(wallets)
    // A Hood TEE build is traced through its claim (the relay's hash; unsigned past its lifetime: expired and lapsed).
    const claims = wallets === undefined ? undefined : { status: wallets.claimStatus, expireUnsigned: wallets.expireUnsigned }
    const ctx: TradeContext = {
      sql,
      store,
      solana,
      hood,
      provider,
      wallets,
      embedded: makeEmbeddedAddresses(provider, clock),
      trades: makeTradeRunner({ solana, hood, hoodRelease, settleClaim, claims, sql, leases, store, arrivals, ...figures }),
      treasury: options.treasury,
      prices: yield* PriceSource,
      ...figures,
      clock
    }
    const submits = makeTradeSubmit(ctx)
    const signed = makeSignedTrades(ctx, submits)

    const service: TradeServiceShape = {
      submit: Effect.fn("TradeService.submit")(function* (caller: TradeCaller, request: TradeRequest, background: boolean) {
        if (request.payer !== "main") {
          return yield* tradeError("chain_unsupported", `payer ${request.payer}: build the trade, sign it, then submit its signed transaction`, { field: "payer" })
        }
        // The one-shot signs with the embedded wallet: the wallet rules (linked and TEE payers) never answer it.
        return yield* storage(submits.submit(caller, request, background)).pipe(
          Effect.catchTags({
            PayerError: (e) => tradeError("agent_wallet_missing", e.message, { field: "payer" }),
            SignClaimError: (e) => tradeError("agent_wallet_missing", e.message, { field: "payer" }),
            WalletError: (e) => tradeError("storage", e.message)
          })
        )
      }),
      dryRun: Effect.fn("TradeService.dryRun")(function* (caller: TradeCaller, request: TradeRequest) {
        return yield* storage(submits.dryRun(caller, request))
      }),
      build: Effect.fn("TradeService.build")(function* (caller: TradeCaller, request: TradeRequest) {
        return yield* storage(signed.build(caller, request))
      }),
      submitSigned: Effect.fn("TradeService.submitSigned")(function* (caller: TradeCaller, input: SignedSubmit) {
        return yield* storage(signed.submit(caller, input))
      }),
      confirm: Effect.fn("TradeService.confirm")(function* (caller: TradeCaller, input: SignedConfirm) {
        return yield* storage(signed.confirm(caller, input))
      }),
      trade: Effect.fn("TradeService.trade")(function* (caller: TradeCaller, clientTradeId: string) {
        const row = yield* storage(store.get(caller.accountId, clientTradeId))
        if (row === undefined) return yield* tradeError("trade_not_found", `No trade ${clientTradeId.slice(0, 128)}`, { field: "clientTradeId" })
        return tradeView(row, false)
      }),
      trades: Effect.fn("TradeService.trades")(function* (caller: TradeCaller, query: TradeListQuery) {
        const after = query.cursor === undefined ? undefined : decodeTradeCursor(query.cursor)
        if (query.cursor !== undefined && after === undefined) return yield* tradeError("invalid_cursor", "cursor is not one this service issued", { field: "cursor" })
        const limit = Math.max(1, Math.min(TRADES_PAGE_MAX, query.limit ?? 50))
        const { cursor: _c, limit: _l, ...filter } = query
        const rows = yield* storage(store.list(caller.accountId, { ...filter, ...(after !== undefined ? { after } : {}), limit: limit + 1 }))
        const page = rows.slice(0, limit)
        const last = page[page.length - 1]
        return { trades: page.map((r) => tradeView(r, false)), nextCursor: rows.length > limit && last !== undefined ? encodeTradeCursor(last) : null }
      }),
      resumeInFlight: storage(ctx.trades.recover).pipe(Effect.withSpan("TradeService.resumeInFlight")),
      watchBuilt: storage(ctx.trades.watch).pipe(Effect.withSpan("TradeService.watchBuilt")),
      solana,
      hood
    }
    return service
  })

export const layer = (options: TradeServiceOptions, deps: TradeServiceDeps = {}): Layer.Layer<TradeService, never, SqlClient.SqlClient | WalletProvider | PriceSource> =>
  Layer.effect(TradeService, make(options, deps))

/** The real trade service over `Database.layerTest` and the real local provider (`WalletProvider.layerTest`); the venues and prices are the test's. */
export const layerTest = (options: TradeServiceOptions, deps: TradeServiceDeps = {}) =>
  layer(options, deps).pipe(Layer.provide(walletProviderTest), Layer.provide(Database.layerTest))
