/**
 * The transfer rail's rows (`transfers`, migrations 0027, 0041 and 0043) as the attempt runner's store: insert
 * (conditional on no row), a transition conditional on the state it leaves, the in-flight list
 * (bounded), and the `transfer.executed` event written in the same transaction as the state that
 * confirms the transfer (spec document 2, section 6 payload).
 *
 * A TEE build (`built`, the unsigned transaction with its sign claim) keeps its spend hold until
 * its hold is 30 minutes old AND its sign claim's own 30-minute lifetime has passed (4.1
 * "Transaction-limit rules"): the insert of the `built` row moves the hold's expiry to the later
 * of the two in the same transaction, and the spend gate's sweep releases it then, unless the
 * relay signed its claim and those bytes can still land (`SpendStore.sweep`: the transfer's
 * settlement books or releases it).
 */
import { type BookInput, bookIn, holdUntilIn, releaseIn } from "../spend/SpendStore.js"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type Clock, Effect } from "effect"
import type { AccountEventsShape } from "../accounts/AccountEvents.js"
import type { DestinationKind } from "./TransferRules.js"

/** In-flight rows one recovery pass takes at most. */
export const IN_FLIGHT_MAX = 500

export interface TransferRow {
  readonly accountId: string
  readonly clientTransferId: string
  readonly keyId: string
  readonly keyPrefix: string
  readonly requestHash: string
  readonly chain: "solana" | "hood"
  readonly asset: string
  readonly mint: string | null
  readonly amountRaw: bigint
  readonly from: string
  readonly to: string
  readonly destinationClass: "own" | "approved"
  readonly destinationKind: DestinationKind
  readonly toWalletId: string | null
  readonly state: "built" | "sending" | "confirmed" | "failed"
  /** '' while `built` (not signed yet). */
  readonly signature: string
  readonly lastValidBlockHeight: bigint | null
  readonly error: string | null
  readonly createdAtMs: number
  /** `main`: the embedded wallet, signed server-side; `tee`: the bound TEE wallet, signed through the sign relay. */
  readonly payer: "main" | "tee"
  /** The paying TEE wallet's row (null for `main`). */
  readonly walletId: string | null
  /** A TEE build's sign claim and when its lifetime ends. */
  readonly claimId: string | null
  readonly claimExpiresAtMs: number | null
  /** A TEE build's unsigned transaction (Solana base64 wire bytes, Hood 0x-hex) and the sha-256 hex of what its signature covers. */
  readonly transaction: string | null
  readonly messageHash: string | null
  /** A TEE row's signed bytes, kept from `sending` on (Hood: broadcast again after a crash; same nonce and hash). */
  readonly signedTransaction: string | null
}

interface DbRow {
  account_id: string
  client_transfer_id: string
  key_id: string
  key_prefix: string
  request_hash: string
  chain: "solana" | "hood"
  asset: string
  mint: string | null
  amount_raw: string
  from_address: string
  to_address: string
  destination_class: "own" | "approved"
  destination_kind: DestinationKind
  to_wallet_id: string | null
  state: TransferRow["state"]
  signature: string
  last_valid_block_height: string | null
  error: string | null
  created_at: Date
  payer: "main" | "tee"
  wallet_id: string | null
  claim_id: string | null
  claim_expires_at: Date | null
  transaction: string | null
  message_hash: string | null
  signed_transaction: string | null
}

const rowOf = (r: DbRow): TransferRow => ({
  accountId: r.account_id,
  clientTransferId: r.client_transfer_id,
  keyId: r.key_id,
  keyPrefix: r.key_prefix,
  requestHash: r.request_hash,
  chain: r.chain,
  asset: r.asset,
  mint: r.mint,
  amountRaw: BigInt(r.amount_raw),
  from: r.from_address,
  to: r.to_address,
  destinationClass: r.destination_class,
  destinationKind: r.destination_kind,
  toWalletId: r.to_wallet_id,
  state: r.state,
  signature: r.signature,
  lastValidBlockHeight: r.last_valid_block_height === null ? null : BigInt(r.last_valid_block_height),
  error: r.error,
  createdAtMs: new Date(r.created_at).getTime(),
  payer: r.payer,
  walletId: r.wallet_id,
  claimId: r.claim_id,
  claimExpiresAtMs: r.claim_expires_at === null ? null : new Date(r.claim_expires_at).getTime(),
  transaction: r.transaction,
  messageHash: r.message_hash,
  signedTransaction: r.signed_transaction
})

/** The TEE columns of a `payer: main` row (signed server-side: no claim, no stored transaction). */
export const MAIN_PAYER = { payer: "main", walletId: null, claimId: null, claimExpiresAtMs: null, transaction: null, messageHash: null, signedTransaction: null } as const

/** The spend gate's reservation id of one transfer (`spend_reservations.id`). */
export const transferReservationId = (r: { readonly accountId: string; readonly clientTransferId: string }): string =>
  `transfer:${JSON.stringify([r.accountId, r.clientTransferId])}`

/** The spend gate's booking of a confirmed transfer: its hold's USD value (no trade on the key's count). */
export const transferBooking = (r: TransferRow): BookInput => ({
  reservationId: transferReservationId(r),
  accountId: r.accountId,
  keyId: r.keyId,
  rail: r.payer,
  purpose: "transfer",
  chain: r.chain,
  side: "buy",
  asset: r.asset,
  amountRaw: r.amountRaw,
  usdMicros: null,
  trades: 0
})

/** The spec's `transfer.executed` payload. */
export const executedEvent = (r: TransferRow) => ({
  chain: r.chain,
  asset: r.asset,
  amountRaw: r.amountRaw.toString(),
  from: r.from,
  to: r.to,
  destinationClass: r.destinationClass,
  signature: r.signature,
  ...(r.toWalletId !== null ? { walletId: r.toWalletId } : {}),
  destinationKind: r.destinationKind
})

/** Row times from `clock` (the Effect `Clock` the transfer service is built under). */
export const makeTransferStore = (sql: SqlClient.SqlClient, events: AccountEventsShape, clock: Clock.Clock) => {
  const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms))
  const get = (accountId: string, clientTransferId: string): Effect.Effect<TransferRow | undefined, SqlError> =>
    Effect.map(
      sql<DbRow>`SELECT * FROM transfers WHERE account_id = ${accountId} AND client_transfer_id = ${clientTransferId}`,
      (rows) => (rows[0] === undefined ? undefined : rowOf(rows[0]))
    )

  /**
   * The client id of the account's transfer whose unsigned transaction is `messageHash` and can
   * still land, if any: `sending`, or `built` with its sign claim signed or still signable (open,
   * within its lifetime). A Hood build carries nothing of its request, so two requests with the
   * same content on the wallet's same next nonce build the same bytes (`HoodTeeTransfers`).
   */
  const openWithMessage = (accountId: string, messageHash: string): Effect.Effect<string | undefined, SqlError> =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql<{ client_transfer_id: string }>`
          SELECT t.client_transfer_id FROM transfers t
          WHERE t.account_id = ${accountId} AND t.message_hash = ${messageHash}
            AND (t.state = 'sending' OR (t.state = 'built' AND EXISTS (
              SELECT 1 FROM sign_claims c WHERE c.id = t.claim_id
                AND (c.state IN ('signed', 'confirmed') OR (c.state = 'open' AND c.expires_at > ${at}))
            )))
          LIMIT 1`,
        (rows) => rows[0]?.client_transfer_id
      )
    )

  const insert = (r: TransferRow): Effect.Effect<boolean, SqlError> =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql`
          INSERT INTO transfers (account_id, client_transfer_id, key_id, key_prefix, request_hash, chain, asset, mint, amount_raw, from_address,
            to_address, destination_class, destination_kind, to_wallet_id, state, signature, last_valid_block_height, error, created_at, updated_at,
            payer, wallet_id, claim_id, claim_expires_at, transaction, message_hash)
          VALUES (${r.accountId}, ${r.clientTransferId}, ${r.keyId}, ${r.keyPrefix}, ${r.requestHash}, ${r.chain}, ${r.asset}, ${r.mint},
            ${r.amountRaw.toString()}, ${r.from}, ${r.to}, ${r.destinationClass}, ${r.destinationKind}, ${r.toWalletId}, ${r.state}, ${r.signature},
            ${r.lastValidBlockHeight === null ? null : r.lastValidBlockHeight.toString()}, ${r.error}, ${at}, ${at},
            ${r.payer}, ${r.walletId}, ${r.claimId}, ${r.claimExpiresAtMs === null ? null : new Date(r.claimExpiresAtMs)}, ${r.transaction}, ${r.messageHash})
          ON CONFLICT (account_id, client_transfer_id) DO NOTHING
          RETURNING 1 AS ok`,
        (rows) => rows.length === 1
      )
    )

  const transition = (prev: TransferRow, next: TransferRow): Effect.Effect<boolean, SqlError> =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql`
          UPDATE transfers SET state = ${next.state}, signature = ${next.signature}, error = ${next.error}, signed_transaction = ${next.signedTransaction}, updated_at = ${at}
          WHERE account_id = ${prev.accountId} AND client_transfer_id = ${prev.clientTransferId} AND state = ${prev.state}
          RETURNING 1 AS ok`,
        (rows) => rows.length === 1
      )
    )

  /**
   * Saves `next` over `prev` (inserts when no `prev`); in the caller's transaction, on entering
   * `confirmed` writes `transfer.executed` and books the spend gate's hold, on entering `failed`
   * releases it; a TEE build's insert keeps its hold at least until its sign claim's lifetime ends.
   */
  const save = (prev: TransferRow | undefined, next: TransferRow): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
    Effect.gen(function* () {
      const saved = prev === undefined ? yield* insert(next) : yield* transition(prev, next)
      if (saved && prev === undefined && next.state === "built" && next.claimExpiresAtMs !== null) yield* holdUntilIn(transferReservationId(next), next.claimExpiresAtMs)
      if (saved && next.state === "confirmed" && prev?.state !== "confirmed") {
        yield* events.enqueue(next.accountId, "transfer.executed", executedEvent(next))
        yield* bookIn(transferBooking(next))
      }
      if (saved && next.state === "failed" && prev?.state !== "failed") yield* releaseIn(transferReservationId(next))
      return saved
    })

  const inFlight: Effect.Effect<ReadonlyArray<TransferRow>, SqlError> = Effect.map(
    sql<DbRow>`SELECT * FROM transfers WHERE state = 'sending' ORDER BY updated_at LIMIT ${IN_FLIGHT_MAX}`,
    (rows) => rows.map(rowOf)
  )

  return { get, save, inFlight, openWithMessage }
}

export type TransferStore = ReturnType<typeof makeTransferStore>
