/**
 * The rows of agent trades (`0021_agent_trades`). Every state change is one conditional UPDATE on
 * the state it leaves (`WHERE state = …`), so of racing writers exactly one moves a row and the
 * machine's "broadcast once" holds across processes. Insert is `ON CONFLICT DO NOTHING`: the first
 * writer of an id owns it. The settlement (`RecordExecuted`: the platform fee into the account's
 * fee totals, the `trade.executed` event through the webhook outbox, the spend gate's booking) is
 * written by the same statement that moves the row to `executed` (one statement of CTEs, each write
 * gated on the move, and the move on the driver's lease when a driver saves), so it exists exactly when
 * the trade is executed; a move to `failed` releases the trade's hold the same way (a built trade
 * that fails unsent, `Lapsed`, included).
 * Reads are bounded: a page is at most `TRADES_PAGE_MAX` rows, in-flight lists 1,000, built lists
 * `BUILT_WATCH_MAX`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Clock, Effect } from "effect"
import { addFeeStatement } from "../accounts/AccountRepository.js"
import type { BookInput } from "../spend/SpendStore.js"
import { bookStatement, releaseStatement } from "../spend/internal/SpendStatements.js"
import { enqueueStatement } from "../webhooks/Outbox.js"
import type { TradeOutput, TradeState } from "./TradeMachine.js"
import { gatedOn } from "../../db/StatementGate.js"

export const TRADES_PAGE_MAX = 100
/** Built trades one watch pass looks at, at most. */
export const BUILT_WATCH_MAX = 100

export type TradeChain = "solana" | "hood"
export type TradeRowState = TradeState["_tag"]

export interface TradeRow {
  readonly accountId: string
  readonly clientTradeId: string
  readonly chain: TradeChain
  readonly mint: string
  readonly side: "buy" | "sell"
  readonly venue: string
  readonly quoteMint: string
  /** The quote asset's name (`SOL`, `USDC`, `svc`, `ETH`): the fee totals' and the event's `quoteAsset`. */
  readonly quoteAsset: string
  readonly payer: "main" | "linked" | "tee"
  readonly wallet: string
  readonly keyId: string | null
  readonly bodyHash: string
  readonly state: TradeRowState
  readonly amountInRaw: bigint
  readonly expectedOutRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly amountOutRaw: bigint | null
  readonly feeBps: number
  readonly feeRaw: bigint
  readonly signature: string
  readonly lastValidBlockHeight: bigint
  /**
   * Set when `failed`: the `TradeFailureReason` it failed with; a row an older version failed holds
   * the spec code instead (read as it stands; `api/TradeCodes.ts` answers both as the code).
   */
  readonly errorCode: string | null
  readonly error: string | null
  readonly createdAtMs: number
  /**
   * What the spend gate counts for this trade, in USD micro-dollars at pricing: a buy's amount
   * plus platform fee (its hold's value), a sell's expected quote out; null without a price or key.
   */
  readonly spendUsdMicros: bigint | null
  /** The paying wallet's row (`payer` linked or tee); null for the embedded wallet. */
  readonly walletId?: string | null
  /** The built transaction's single-use sign claim (linked, tee). */
  readonly claimId?: string | null
  /** The unsigned built transaction, base64 wire bytes (linked, tee). */
  readonly transaction?: string | null
  /** sha-256 hex of the built message: what a submitted or confirmed transaction must match (linked, tee). */
  readonly messageHash?: string | null
  /** The slot of the blockhash the build used: its transaction lands only later (linked, tee; null before migration 0040). */
  readonly builtSlot?: bigint | null
  /** Hood, linked or TEE payer: the signed transaction (0x-hex) its submit sent, kept from `sending` on (a recovery pass broadcasts it again; migration 0044). */
  readonly signedTransaction?: string | null
}

interface Db {
  account_id: string
  client_trade_id: string
  chain: TradeChain
  mint: string
  side: "buy" | "sell"
  venue: string
  quote_mint: string
  quote_asset: string
  payer: TradeRow["payer"]
  wallet: string
  key_id: string | null
  body_hash: string
  state: TradeRowState
  amount_in_raw: string
  expected_out_raw: string
  min_amount_out_raw: string
  amount_out_raw: string | null
  fee_bps: number
  fee_raw: string
  signature: string
  last_valid_block_height: string
  error_code: string | null
  error: string | null
  created_at: Date | string
  spend_usd_micros: string | null
  wallet_id: string | null
  claim_id: string | null
  transaction: string | null
  message_hash: string | null
  built_slot: string | null
  signed_transaction?: string | null
}

const rowOf = (r: Db): TradeRow => ({
  accountId: r.account_id,
  clientTradeId: r.client_trade_id,
  chain: r.chain,
  mint: r.mint,
  side: r.side,
  venue: r.venue,
  quoteMint: r.quote_mint,
  quoteAsset: r.quote_asset,
  payer: r.payer,
  wallet: r.wallet,
  keyId: r.key_id,
  bodyHash: r.body_hash,
  state: r.state,
  amountInRaw: BigInt(r.amount_in_raw),
  expectedOutRaw: BigInt(r.expected_out_raw),
  minAmountOutRaw: BigInt(r.min_amount_out_raw),
  amountOutRaw: r.amount_out_raw === null ? null : BigInt(r.amount_out_raw),
  feeBps: Number(r.fee_bps),
  feeRaw: BigInt(r.fee_raw),
  signature: r.signature,
  lastValidBlockHeight: BigInt(r.last_valid_block_height),
  errorCode: r.error_code,
  error: r.error,
  createdAtMs: new Date(r.created_at).getTime(),
  spendUsdMicros: r.spend_usd_micros === null ? null : BigInt(r.spend_usd_micros),
  walletId: r.wallet_id ?? null,
  claimId: r.claim_id ?? null,
  transaction: r.transaction ?? null,
  messageHash: r.message_hash ?? null,
  builtSlot: r.built_slot === null || r.built_slot === undefined ? null : BigInt(r.built_slot),
  signedTransaction: r.signed_transaction ?? null
})

/** The machine's view of a row. Pure. */
export const stateOf = (r: TradeRow): TradeState => {
  switch (r.state) {
    case "built":
      return { _tag: "built" }
    case "sending":
      return { _tag: "sending", signature: r.signature }
    case "executed":
      return { _tag: "executed", signature: r.signature, amountOutRaw: r.amountOutRaw ?? 0n }
    case "failed":
      return { _tag: "failed", signature: r.signature, reason: r.errorCode ?? "reverted", error: r.error ?? "" }
  }
}

/** The row after the machine moved it to `next`. Pure. */
export const rowAfter = (row: TradeRow, next: TradeState): TradeRow => ({
  ...row,
  state: next._tag,
  signature: next._tag === "built" ? "" : next.signature,
  ...(next._tag === "executed" ? { amountOutRaw: next.amountOutRaw } : {}),
  ...(next._tag === "failed" ? { errorCode: next.reason, error: next.error } : {})
})

/** The spec's `trade.executed` payload (document 2, section 6) of an executed row. Pure. */
export const tradeExecutedData = (r: TradeRow) => ({
  clientTradeId: r.clientTradeId,
  chain: r.chain,
  side: r.side,
  mint: r.mint,
  quoteAsset: r.quoteAsset,
  amountRaw: r.amountInRaw.toString(),
  expectedOutRaw: r.expectedOutRaw.toString(),
  signature: r.signature,
  fee: { bps: r.feeBps, feeRaw: r.feeRaw.toString() }
})

/** The spend gate's reservation id of one trade (`spend_reservations.id`). */
export const tradeReservationId = (r: { readonly accountId: string; readonly clientTradeId: string }): string =>
  `trade:${JSON.stringify([r.accountId, r.clientTradeId])}`

/**
 * The spend gate's booking of an executed trade: a buy books its hold (amount plus platform fee,
 * the hold's USD value), a sell books the quote it received (its priced value scaled to the
 * executed `amountOut`); one trade on the key's daily count. None for a trade without a key.
 * Pure.
 */
export const tradeBooking = (r: TradeRow): BookInput | undefined => {
  if (r.keyId === null) return undefined
  const buy = r.side === "buy"
  const out = r.amountOutRaw ?? r.expectedOutRaw
  const usdMicros =
    r.spendUsdMicros === null ? null : buy || r.expectedOutRaw === 0n ? r.spendUsdMicros : (r.spendUsdMicros * out) / r.expectedOutRaw
  return {
    reservationId: tradeReservationId(r),
    accountId: r.accountId,
    keyId: r.keyId,
    rail: r.payer,
    purpose: "trade",
    chain: r.chain,
    side: r.side,
    asset: buy ? r.quoteAsset : r.mint,
    amountRaw: buy ? r.amountInRaw + r.feeRaw : r.amountInRaw,
    usdMicros,
    trades: 1
  }
}

export interface TradeFilter {
  readonly chain?: TradeChain
  readonly mint?: string
  readonly side?: "buy" | "sell"
  /** Created at or after (epoch ms). */
  readonly sinceMs?: number
  /** Created before (epoch ms). */
  readonly untilMs?: number
  /** Strictly after this position in the listing (newest first). */
  readonly after?: { readonly createdAtMs: number; readonly clientTradeId: string }
  readonly limit: number
}

/** Row times (`updated_at`, the watch's marks) from `clock`: the Effect `Clock` the trade service is built under. */
export const makeTradeStore = (sql: SqlClient.SqlClient, clock: Clock.Clock) => {
  const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms))

  const get = (accountId: string, clientTradeId: string): Effect.Effect<TradeRow | undefined, SqlError> =>
    Effect.map(
      sql<Db>`SELECT * FROM agent_trades WHERE account_id = ${accountId} AND client_trade_id = ${clientTradeId}`,
      (rows) => (rows[0] === undefined ? undefined : rowOf(rows[0]))
    )

  /** Records a new trade (`RETURNING client_trade_id`: none when the id already has a row, whose first writer owns it). */
  const insertStatement = (r: TradeRow, at: Date) => sql`
          INSERT INTO agent_trades (account_id, client_trade_id, chain, mint, side, venue, quote_mint, quote_asset, payer, wallet, key_id, body_hash,
            state, amount_in_raw, expected_out_raw, min_amount_out_raw, amount_out_raw, fee_bps, fee_raw, signature, last_valid_block_height,
            error_code, error, created_at, updated_at, spend_usd_micros, wallet_id, claim_id, transaction, message_hash, built_slot)
          VALUES (${r.accountId}, ${r.clientTradeId}, ${r.chain}, ${r.mint}, ${r.side}, ${r.venue}, ${r.quoteMint}, ${r.quoteAsset}, ${r.payer},
            ${r.wallet}, ${r.keyId}, ${r.bodyHash}, ${r.state}, ${r.amountInRaw.toString()}, ${r.expectedOutRaw.toString()},
            ${r.minAmountOutRaw.toString()}, ${r.amountOutRaw === null ? null : r.amountOutRaw.toString()}, ${r.feeBps}, ${r.feeRaw.toString()},
            ${r.signature}, ${r.lastValidBlockHeight.toString()}, ${r.errorCode}, ${r.error}, ${new Date(r.createdAtMs)}, ${at},
            ${r.spendUsdMicros === null ? null : r.spendUsdMicros.toString()}, ${r.walletId ?? null}, ${r.claimId ?? null}, ${r.transaction ?? null}, ${r.messageHash ?? null},
            ${r.builtSlot === null || r.builtSlot === undefined ? null : r.builtSlot.toString()})
          ON CONFLICT (account_id, client_trade_id) DO NOTHING
          RETURNING client_trade_id`

  /** The conditional move of the row from `prev`'s state to `next`'s (`RETURNING client_trade_id`: none when another writer moved it first); with `gate`, only when that CTE returned a row. */
  const transitionStatement = (prev: TradeRow, next: TradeRow, at: Date, gate?: string) => sql`
          UPDATE agent_trades SET state = ${next.state}, updated_at = ${at}, signature = ${next.signature},
            amount_out_raw = ${next.amountOutRaw === null ? null : next.amountOutRaw.toString()},
            error_code = ${next.errorCode}, error = ${next.error}, signed_transaction = COALESCE(${next.signedTransaction ?? null}, signed_transaction)
          WHERE account_id = ${prev.accountId} AND client_trade_id = ${prev.clientTradeId} AND state = ${prev.state}
            ${gatedOn(sql, gate)}
          RETURNING client_trade_id`

  /**
   * In the caller's transaction: the row's move and, when the machine settles it executed, the fee
   * totals, the `trade.executed` event and the spend gate's booking beside it; when it settles
   * failed, the release of its hold (a failed trade stops weighing on the key's window).
   */
  /**
   * Writes `next` where the row still holds `prev` (`undefined`: inserts it), with what settles with
   * it, in one statement (`oneStatement`); false when another writer moved the row first. In the
   * caller's transaction when it has one (the runner's claim of a new row).
   */
  const save = (prev: TradeRow | undefined, next: TradeRow, outputs: ReadonlyArray<TradeOutput>): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
    Effect.map(oneStatement(prev, next, outputs, undefined), (r) => r.moved)

  /**
   * `save` as ONE statement, no transaction needed around it (the attempt runner's `saveFenced` for
   * a stored row): the lease's renewal (`fence`; none: no lease to check) as its first CTE, the row's
   * insert or conditional move (gated on the lease), and gated on the move what settles with it
   * (an executed trade's fee totals, `trade.executed` outbox rows and spend booking; a failed
   * trade's hold released). Whether the lease held and whether the row moved.
   */
  const oneStatement = (
    prev: TradeRow | undefined,
    next: TradeRow,
    outputs: ReadonlyArray<TradeOutput>,
    fence: Statement.Fragment | undefined
  ): Effect.Effect<{ readonly held: boolean; readonly moved: boolean }, SqlError> =>
    Effect.gen(function* () {
      const at = yield* now
      const nowMs = yield* Clock.currentTimeMillis
      // A new row is claimed in the runner's transaction, never fenced (there is no lease yet).
      if (prev === undefined && fence !== undefined) return yield* Effect.dieMessage("a trade row's insert is not fenced")
      const move = prev === undefined ? insertStatement(next, at) : transitionStatement(prev, next, at, "lease")
      const parts: Array<Statement.Fragment> = [sql`lease AS (${fence ?? sql`SELECT 1`})`, sql`moved AS (${move})`]
      if (outputs.some((o) => o._tag === "RecordExecuted")) {
        if (next.feeRaw > 0n) parts.push(sql`fee AS (${addFeeStatement(sql, next.accountId, next.chain, next.quoteAsset, next.feeRaw, "moved")})`)
        const { statement } = yield* enqueueStatement(sql, next.accountId, "trade.executed", tradeExecutedData(next), nowMs, "moved")
        parts.push(sql`event AS (${statement})`)
        const booking = tradeBooking(next)
        if (booking !== undefined) parts.push(bookStatement(sql, booking, nowMs, "moved"))
      }
      if (next.state === "failed" && prev?.state !== "failed") parts.push(sql`released AS (${releaseStatement(sql, tradeReservationId(next), nowMs, "moved")})`)
      const rows = yield* sql<{ held: boolean; moved: boolean }>`
        WITH ${sql.join(", ", false)(parts)}
        SELECT EXISTS (SELECT 1 FROM lease) AS held, EXISTS (SELECT 1 FROM moved) AS moved`
      return { held: rows[0]?.held === true, moved: rows[0]?.moved === true }
    })

  /** Trades whose transaction left (or may have left) and whose fate is not recorded yet. */
  const inFlight = Effect.map(
    sql<Pick<Db, "account_id" | "client_trade_id">>`SELECT account_id, client_trade_id FROM agent_trades WHERE state = 'sending' ORDER BY created_at LIMIT 1000`,
    (rows) => rows.map((r) => ({ accountId: r.account_id, clientTradeId: r.client_trade_id }))
  )

  /**
   * Built trades (linked, tee) no request has sent yet, at most `BUILT_WATCH_MAX`: what the watch
   * pass looks for on chain (`TradeMachine.traced`). The least recently looked at first, and each
   * listed row is marked looked at (its `updated_at`), so rows the chain cannot decide yet (a
   * payer with more history since the build than one pass reads) take their turn behind the
   * others instead of filling every pass.
   */
  const built = Effect.flatMap(now, (at) =>
    Effect.map(
      sql<Pick<Db, "account_id" | "client_trade_id">>`
        UPDATE agent_trades SET updated_at = ${at}
        WHERE state = 'built' AND (account_id, client_trade_id) IN (
          SELECT account_id, client_trade_id FROM agent_trades WHERE state = 'built' ORDER BY updated_at, created_at LIMIT ${BUILT_WATCH_MAX})
        RETURNING account_id, client_trade_id`,
      (rows) => rows.map((r) => ({ accountId: r.account_id, clientTradeId: r.client_trade_id }))
    )
  )

  /** The account's trades, newest first, filtered, at most `limit` (≤ TRADES_PAGE_MAX + 1). */
  const list = (accountId: string, f: TradeFilter): Effect.Effect<ReadonlyArray<TradeRow>, SqlError> => {
    const conditions = [sql`account_id = ${accountId}`]
    if (f.chain !== undefined) conditions.push(sql`chain = ${f.chain}`)
    if (f.mint !== undefined) conditions.push(sql`mint = ${f.mint}`)
    if (f.side !== undefined) conditions.push(sql`side = ${f.side}`)
    if (f.sinceMs !== undefined) conditions.push(sql`created_at >= ${new Date(f.sinceMs)}`)
    if (f.untilMs !== undefined) conditions.push(sql`created_at < ${new Date(f.untilMs)}`)
    if (f.after !== undefined) {
      const at = new Date(f.after.createdAtMs)
      conditions.push(sql`(created_at < ${at} OR (created_at = ${at} AND client_trade_id < ${f.after.clientTradeId}))`)
    }
    // One more than a page: the caller learns whether a next page exists.
    const limit = Math.max(1, Math.min(TRADES_PAGE_MAX + 1, f.limit))
    return Effect.map(
      sql<Db>`SELECT * FROM agent_trades WHERE ${sql.and(conditions)} ORDER BY created_at DESC, client_trade_id DESC LIMIT ${limit}`,
      (rows) => rows.map(rowOf)
    )
  }

  // The attempt runner's `AttemptStore.saveFenced`: `save` over a stored row, fenced by its lease.
  return { get, save, saveFenced: oneStatement, inFlight, built, list }
}

export type TradeStore = ReturnType<typeof makeTradeStore>
