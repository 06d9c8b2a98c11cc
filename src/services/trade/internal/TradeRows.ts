/**
 * A new trade's row and its first save, in one place for the rail's three ways in: the embedded
 * wallet's one-shot on Solana and on Hood (recorded `sending`), and a linked or TEE payer's build
 * (recorded `built`). The figures are the priced trade's; the save is the runner's conditional
 * insert, so a concurrent request that recorded the id first wins and this one answers its outcome.
 */
import { Effect } from "effect"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import type { TradeEvent } from "../TradeMachine.js"
import { type TradeCaller, type TradeRequest, tradeBodyHash } from "../TradeInputs.js"
import type { TradeRow } from "../TradeStore.js"
import type { TradeContext } from "./TradeContext.js"

/** What pricing decided for the row. */
export interface PricedRow {
  readonly mint: string
  readonly venue: string
  readonly quoteMint: string
  readonly quoteAsset: string
  readonly payer: TradeRow["payer"]
  readonly wallet: string
  readonly expectedOutRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly feeBps: number
  readonly feeRaw: bigint
  readonly spend: SpendAttempt
}

/** Where the row starts: `sending` with its signature, or `built` awaiting one. */
export interface RowStart {
  readonly state: "sending" | "built"
  readonly signature: string
  /** Solana: the blockhash's last valid height; Hood: the transaction's nonce (what decides that it never lands). */
  readonly lastValidBlockHeight: bigint
  readonly createdAtMs: number
}

/** The row of a new trade. Pure. */
export const newTradeRow = (caller: TradeCaller, request: TradeRequest, p: PricedRow, start: RowStart): TradeRow => ({
  accountId: caller.accountId,
  clientTradeId: request.clientTradeId,
  chain: request.chain,
  mint: p.mint,
  side: request.side,
  venue: p.venue,
  quoteMint: p.quoteMint,
  quoteAsset: p.quoteAsset,
  payer: p.payer,
  wallet: p.wallet,
  keyId: caller.keyId,
  bodyHash: tradeBodyHash(request),
  state: start.state,
  amountInRaw: request.amountInRaw,
  expectedOutRaw: p.expectedOutRaw,
  minAmountOutRaw: p.minAmountOutRaw,
  amountOutRaw: null,
  feeBps: p.feeBps,
  feeRaw: p.feeRaw,
  signature: start.signature,
  lastValidBlockHeight: start.lastValidBlockHeight,
  errorCode: null,
  error: null,
  createdAtMs: start.createdAtMs,
  spendUsdMicros: caller.keyId === null ? null : p.spend.usdMicros
})

/**
 * The first save of `row` through the runner (`Signed` with its wire, or `Built`): `Saved` with the
 * state it reached, or `Moved` when another request recorded this id first (its outcome answers).
 */
export const insertTrade = (ctx: TradeContext, row: TradeRow, event: Extract<TradeEvent, { _tag: "Signed" | "Built" }>, wire?: string) =>
  ctx.trades
    .apply({ accountId: row.accountId, clientTradeId: row.clientTradeId }, undefined, { event, insert: row, ...(wire !== undefined ? { wire } : {}) })
    .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
