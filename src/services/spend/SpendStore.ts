/**
 * The spend gate's storage and its four operations (`0023_spend_reservations`; rules in
 * `SpendGate.ts`). Every spending rail calls these, with its own idempotent reservation id:
 *
 * - `reserve` at build: under the key's row lock (`agent_keys ... FOR UPDATE`, the lock the atomic
 *   launch's build takes too), reads the key's limits and what its txLimit window holds (metered
 *   bookings, open holds of this table and the atomic bundles' `spend_holds`), asks `decide`, and
 *   writes the hold, all in one transaction: concurrent builds of one key queue on the lock and each
 *   sees the holds of those before it, so N builds against one cap admit exactly what fits.
 *   `reserveIn` is the same inside a transaction the rail already holds (its ledger's), so a
 *   refusal rolls the rail's own writes back with it. A second reserve of one id answers the first,
 *   unless the first was released (its build failed before the spend was recorded): then the id is
 *   decided anew and held again (a retry of one `clientTradeId` is checked like the first try).
 * - `book` at settlement: the hold (or, for a sell, a new row) becomes `booked` and its USD value
 *   is metered into the key's daily usage in the same transaction; booking twice meters once. A
 *   booking is never refused: a released hold whose spend landed anyway is booked all the same.
 * - `release`: an unused or failed build's hold stops weighing on the window.
 * - `sweep`: releases at most `max` holds past their `expires_at` (time from `Clock`), except a
 *   trade's whose trade may still land (`built` or `sending`), a transfer's whose transfer was
 *   sent and is unsettled (`sending`) or relay-signed with bytes able to land, and a Hood TEE
 *   self-signed launch's dev-buy hold (`launch:self:`) while its dev-buy leg's claim is signed, or
 *   still open within its lifetime (it can still be signed), or its fee leg's claim is signed with
 *   the leg pending or sent (those bytes can still land), each until a later attempt of the id
 *   shows a leg of the payer mined at that leg's nonce: its settlement decides. (A TEE transfer
 *   still `built` is released once its hold and its sign claim have both lived their 30 minutes:
 *   `holdUntilIn`.)
 * - `check`: the dry run's decision, with nothing locked or written.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { findAccountKey, lockAccountKey } from "../keys/KeyRepository.js"
import { isoDay, type TxLimitReset, txWindowStart } from "../keys/KeyRules.js"
import { decide, HOLD_MS, type SpendAttempt, type SpendDecision, type SpendKey } from "./SpendGate.js"
import { SpendError, spendError } from "./SpendError.js"
import { bookStatement, releaseStatement } from "./internal/SpendStatements.js"

/** What a rail asks the gate at build. */
export interface ReserveInput {
  /** The rail's idempotent id for this one transaction (e.g. `trade:<account>:<clientTradeId>`). */
  readonly reservationId: string
  readonly accountId: string
  /** The calling key's prefix: its limits are read (locked) from storage, never from the request. */
  readonly keyPrefix: string
  readonly chain: string
  readonly attempt: SpendAttempt
  /** How long the hold lives before the sweep may release it (default `HOLD_MS`, 30 minutes). */
  readonly holdMs?: number
}

export interface Reservation {
  readonly reservationId: string
  readonly keyId: string
  /** False for a sell (no hold; it counts when it books). */
  readonly held: boolean
  readonly usdMicros: bigint | null
  readonly expiresAtMs: number
  /** A linked dev buy over the txLimit: admitted and metered (advisory), with the refusal it would have been. */
  readonly advisory: SpendError | null
  /** This id had been reserved before: the stored reservation, decided then. */
  readonly replayed: boolean
}

/** What a rail books at settlement (a sell books with no reservation before it). */
export interface BookInput {
  readonly reservationId: string
  readonly accountId: string
  readonly keyId: string
  readonly rail: SpendAttempt["rail"]
  readonly purpose: SpendAttempt["purpose"]
  readonly chain: string
  readonly side: SpendAttempt["side"]
  readonly asset: string
  readonly amountRaw: bigint
  /** The settled spend's USD value; null keeps the hold's (none: nothing is metered in USD). */
  readonly usdMicros: bigint | null
  /** Trades this booking adds to the key's daily count (a trade: 1; a launch's dev buy: 0). */
  readonly trades: number
}

export interface Booking {
  /** False when this id was booked before (nothing metered again). */
  readonly fresh: boolean
  readonly usdMicros: bigint | null
}

interface ReservationRowDb {
  readonly id: string
  readonly key_id: string
  readonly side: string
  readonly usd_micros: string | null
  readonly state: "held" | "booked" | "released"
  readonly expires_at: Date | string
}

const ms = (d: Date | string): number => (d instanceof Date ? d.getTime() : Date.parse(d))

const storage = (what: string) => (e: SqlError) =>
  Effect.zipRight(Effect.logError(`spend gate: storage failed ${what}`, e), Effect.fail(spendError("storage", `Storage failed ${what}; nothing was reserved or booked`, { retryable: true })))

/**
 * USD micros the key's txLimit window holds at `nowMs`: metered bookings of the window's days, open
 * holds created in the window (a reset clears their effect; `never` keeps them) of this table and
 * the atomic bundles' `spend_holds`. A hold taken with no price weighs nothing here (only an
 * advisory rail or a key without a txLimit takes one); an unvalued atomic hold makes it unknown (null),
 * as the atomic gate reads it.
 */
export const windowUsedUsdMicros = (keyId: string, reset: TxLimitReset, nowMs: number): Effect.Effect<bigint | null, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const fromMs = txWindowStart(reset, nowMs)
    return sql<{ booked: string | null; held: string | null; atomic: string | null; unvalued: string }>`
      SELECT
        (SELECT sum(usd_micros)::text FROM agent_key_usage_daily WHERE key_id = ${keyId} AND day >= ${isoDay(Math.max(fromMs, 0))}::date) AS booked,
        (SELECT sum(usd_micros)::text FROM spend_reservations WHERE key_id = ${keyId} AND state = 'held' AND created_at >= ${new Date(fromMs)}) AS held,
        (SELECT sum(usd_micros)::text FROM spend_holds WHERE key_id = ${keyId} AND state = 'held' AND created_at >= ${new Date(fromMs)}) AS atomic,
        (SELECT count(*)::text FROM spend_holds WHERE key_id = ${keyId} AND state = 'held' AND created_at >= ${new Date(fromMs)} AND usd_micros IS NULL) AS unvalued`.pipe(
      Effect.map((rows) => {
        const r = rows[0]
        if (r === undefined || Number(r.unvalued) > 0) return null
        return BigInt(r.booked ?? "0") + BigInt(r.held ?? "0") + BigInt(r.atomic ?? "0")
      })
    )
  })

const keyOf = (k: { readonly prefix: string; readonly spendLimits: SpendKey["spendLimits"]; readonly txLimit: SpendKey["txLimit"] }): SpendKey => ({
  keyPrefix: k.prefix,
  spendLimits: k.spendLimits,
  txLimit: k.txLimit
})

const decideFor = (key: SpendKey & { readonly id: string }, attempt: SpendAttempt, nowMs: number) =>
  Effect.gen(function* () {
    const used =
      key.txLimit === null || attempt.side === "sell"
        ? 0n
        : yield* windowUsedUsdMicros(key.id, key.txLimit.reset, nowMs).pipe(
            Effect.catchAll((e) => Effect.as(Effect.logWarning("spend gate: window usage unreadable", e), null))
          )
    return decide(key, attempt, used, nowMs)
  })

const refused = (d: SpendDecision): d is Extract<SpendDecision, { _tag: "Refused" }> => d._tag === "Refused"

const findReservation = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<ReservationRowDb>`
    SELECT id, key_id, side, usd_micros::text AS usd_micros, state, expires_at FROM spend_reservations WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0])
  )

/** `reserve` inside the caller's transaction (the key stays locked until it ends). */
export const reserveIn = (input: ReserveInput): Effect.Effect<Reservation, SpendError | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const key = yield* lockAccountKey(input.accountId, input.keyPrefix)
    if (key === undefined) return yield* spendError("key_not_found", "The calling key is not on this account; nothing was reserved", { retryable: false })
    const seen = yield* findReservation(input.reservationId)
    // A released id (its build failed before anything was recorded) is decided anew; any other answers the first.
    if (seen !== undefined && seen.state !== "released") {
      return {
        reservationId: seen.id,
        keyId: seen.key_id,
        held: seen.side === "buy",
        usdMicros: seen.usd_micros === null ? null : BigInt(seen.usd_micros),
        expiresAtMs: ms(seen.expires_at),
        advisory: null,
        replayed: true
      } satisfies Reservation
    }
    const nowMs = yield* Clock.currentTimeMillis
    const decision = yield* decideFor({ ...keyOf(key), id: key.id }, input.attempt, nowMs)
    if (refused(decision)) return yield* Effect.fail(decision.error)
    const expiresAtMs = nowMs + (input.holdMs ?? HOLD_MS)
    if (decision.hold) {
      const a = input.attempt
      yield* sql`
        INSERT INTO spend_reservations (id, account_id, key_id, rail, purpose, chain, asset, side, amount_raw, usd_micros, state, created_at, expires_at)
        VALUES (${input.reservationId}, ${input.accountId}, ${key.id}, ${a.rail}, ${a.purpose}, ${input.chain}, ${a.asset}, ${a.side},
          ${a.amountRaw.toString()}::numeric, ${a.usdMicros === null ? null : a.usdMicros.toString()}, 'held', ${new Date(nowMs)}, ${new Date(expiresAtMs)})
        ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, rail = excluded.rail, purpose = excluded.purpose, chain = excluded.chain,
          asset = excluded.asset, side = excluded.side, amount_raw = excluded.amount_raw, usd_micros = excluded.usd_micros, state = 'held',
          created_at = excluded.created_at, expires_at = excluded.expires_at, settled_at = NULL
        WHERE spend_reservations.state = 'released'`
    }
    return {
      reservationId: input.reservationId,
      keyId: key.id,
      held: decision.hold,
      usdMicros: input.attempt.usdMicros,
      expiresAtMs,
      advisory: decision.advisory,
      replayed: false
    } satisfies Reservation
  })

/** `reserve` in its own transaction; storage failures are the gate's `storage` refusal (retryable). */
export const reserve = (input: ReserveInput): Effect.Effect<Reservation, SpendError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(reserveIn(input))).pipe(
    Effect.catchTag("SqlError", storage("reserving the spend")),
    Effect.withSpan("SpendGate.reserve")
  )

/** The dry run's decision: the same rules against the key and window as they are now; nothing locked or written. */
export const check = (input: Omit<ReserveInput, "reservationId" | "holdMs">): Effect.Effect<SpendDecision, SpendError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const key = yield* findAccountKey(input.accountId, input.keyPrefix)
    if (key === undefined) return yield* spendError("key_not_found", "The calling key is not on this account", { retryable: false })
    return yield* decideFor({ ...keyOf(key), id: key.id }, input.attempt, yield* Clock.currentTimeMillis)
  }).pipe(Effect.catchTag("SqlError", storage("checking the spend")), Effect.withSpan("SpendGate.check"))

/** The key's row as the request's authentication read it: what `checkKey` decides on. */
export interface CheckedKey {
  readonly id: string
  readonly prefix: string
  readonly spendLimits: SpendKey["spendLimits"]
  readonly txLimit: SpendKey["txLimit"]
}

/**
 * The dry run's decision on the key row the request authenticated with (`KeyStore`: this
 * process's own changes to a key are seen on its next request, another process's within the
 * store's TTL, as for the key's scopes and revocation), so a dry run runs no key query: the
 * window's usage is the one read, and only for a key with a txLimit deciding a buy. Nothing
 * locked or written; `reserve` still reads and locks the key itself.
 */
export const checkKey = (key: CheckedKey, attempt: SpendAttempt): Effect.Effect<SpendDecision, never, SqlClient.SqlClient> =>
  checkReadsWindow(key, attempt)
    ? Effect.flatMap(Clock.currentTimeMillis, (nowMs) => decideFor({ ...keyOf(key), id: key.id }, attempt, nowMs)).pipe(Effect.withSpan("SpendGate.check"))
    : Effect.map(Clock.currentTimeMillis, (nowMs) => checkKeyNow(key, attempt, nowMs))

/** Whether `checkKey` reads the key's txLimit window (a buy on a key with a txLimit): its only SQL. */
export const checkReadsWindow = (key: CheckedKey, attempt: SpendAttempt): boolean => key.txLimit !== null && attempt.side !== "sell"

/**
 * `checkKey`'s decision where it reads nothing (`checkReadsWindow` false: a sell, or a key without
 * a txLimit): the same `decide` on the key row with no window usage. Pure: no span, no fiber.
 */
export const checkKeyNow = (key: CheckedKey, attempt: SpendAttempt, nowMs: number): SpendDecision => decide(keyOf(key), attempt, 0n, nowMs)

/** `book` inside the caller's transaction (its settlement's), in one statement (`bookStatement`). */
export const bookIn = (input: BookInput): Effect.Effect<Booking, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const nowMs = yield* Clock.currentTimeMillis
    const rows = yield* sql<{ usd_micros: string | null }>`WITH ${bookStatement(sql, input, nowMs)} SELECT usd_micros FROM book_settled UNION ALL SELECT usd_micros FROM book_inserted`
    const booked = rows[0]
    if (booked === undefined) return { fresh: false, usdMicros: null } satisfies Booking
    return { fresh: true, usdMicros: booked.usd_micros === null ? null : BigInt(booked.usd_micros) } satisfies Booking
  })

/** `book` in its own transaction. */
export const book = (input: BookInput): Effect.Effect<Booking, SpendError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(bookIn(input))).pipe(
    Effect.catchTag("SqlError", storage("booking the spend")),
    Effect.withSpan("SpendGate.book")
  )

/** The hold stops weighing on the window (a failed, expired or unused build); true when it was open. */
export const releaseIn = (reservationId: string): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`${releaseStatement(sql, reservationId, yield* Clock.currentTimeMillis)}`
    return rows.length > 0
  })

/**
 * An open hold is kept at least until `untilMs` (its expiry becomes the later of the two): a TEE
 * transfer's hold lives until its sign claim's lifetime ends too (4.1). True when it was open.
 */
export const holdUntilIn = (reservationId: string, untilMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ id: string }>`
      UPDATE spend_reservations SET expires_at = greatest(expires_at, ${new Date(untilMs)}) WHERE id = ${reservationId} AND state = 'held' RETURNING id`
    return rows.length > 0
  })

/** What `keepHeldIn` did: extended in its window, moved into the current one (decided anew), or nothing (the hold is not open). */
export type KeptHold = "kept" | "redecided" | "not_held"

/**
 * An open hold kept at least until `untilMs`, under the key's lock (`input.keyPrefix`, the key the
 * hold meters), for a rail that hands out new signable bytes against a hold it took earlier (a Hood
 * TEE leg reissued). A hold taken before the key's txLimit window last reset (daily, weekly or
 * monthly; `never` has one window) weighs nothing in the window it would now be spent in, so it is
 * decided anew there as a new reserve would be (`input.attempt`, valued now; the hold itself not
 * counted, being in the old window): admitted, it moves into the current window (`created_at` now,
 * the new value) and is extended; refused, the gate's error and the hold left as it was. A hold in
 * its window, or of a key without a txLimit, is only extended. The row is locked (`FOR UPDATE`), so
 * a sweep cannot release it between the read and the update, nor after (`sweep` re-checks the
 * expiry on the row it waited for). `not_held`: released, booked, none, or another key's.
 */
export const keepHeldIn = (input: ReserveInput, untilMs: number): Effect.Effect<KeptHold, SpendError | SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const key = yield* lockAccountKey(input.accountId, input.keyPrefix)
    if (key === undefined) return yield* spendError("key_not_found", "The key that holds this spend is not on the account; nothing was reserved", { retryable: false })
    const rows = yield* sql<{ created_at: Date | string }>`
      SELECT created_at FROM spend_reservations WHERE id = ${input.reservationId} AND key_id = ${key.id} AND state = 'held' FOR UPDATE`
    const row = rows[0]
    if (row === undefined) return "not_held" as const
    const nowMs = yield* Clock.currentTimeMillis
    const until = new Date(untilMs)
    if (key.txLimit === null || ms(row.created_at) >= txWindowStart(key.txLimit.reset, nowMs)) {
      yield* sql`UPDATE spend_reservations SET expires_at = greatest(expires_at, ${until}) WHERE id = ${input.reservationId}`
      return "kept" as const
    }
    const decision = yield* decideFor({ ...keyOf(key), id: key.id }, input.attempt, nowMs)
    if (refused(decision)) return yield* Effect.fail(decision.error)
    const usd = input.attempt.usdMicros
    yield* sql`
      UPDATE spend_reservations SET created_at = ${new Date(nowMs)}, usd_micros = ${usd === null ? null : usd.toString()},
        expires_at = greatest(expires_at, ${until}) WHERE id = ${input.reservationId}`
    return "redecided" as const
  })

export const release = (reservationId: string): Effect.Effect<boolean, SpendError, SqlClient.SqlClient> =>
  releaseIn(reservationId).pipe(Effect.catchTag("SqlError", storage("releasing the hold")), Effect.withSpan("SpendGate.release"))

/**
 * A rail's hold around one attempt (every spending rail's build): `reserve` under the key's lock,
 * then `run`. When `run` ends without success and the attempt's row does not exist (`recorded`
 * answers false: it ended before it was written, and no racing attempt of the same id wrote one),
 * the hold is released at once; a recorded row's save books or releases it. Only a hold this
 * attempt reserved is released: a `replayed` reserve answered a hold another request of the same
 * id took, which may still be about to record its row (releasing it would leave that row with no
 * hold, and the hard cap open to another build). A release that fails is left to the sweep,
 * logged as `what`'s.
 */
export const holdAround = <A, E, R>(
  hold: { readonly input: ReserveInput; readonly recorded: Effect.Effect<boolean, unknown>; readonly what: string },
  run: Effect.Effect<A, E, R>
): Effect.Effect<A, E | SpendError, R | SqlClient.SqlClient> =>
  Effect.flatMap(reserve(hold.input), (reserved) =>
    Effect.onExit(run, (exit) =>
      exit._tag === "Success" || reserved.replayed
        ? Effect.void
        : Effect.flatMap(hold.recorded, (recorded): Effect.Effect<unknown, SpendError, SqlClient.SqlClient> => (recorded ? Effect.void : release(hold.input.reservationId))).pipe(
            Effect.catchAll((e) => Effect.logWarning(`${hold.what}: the spend hold of an unrecorded attempt was not released; the sweep releases it`, e))
          )
    )
  )

/** Holds released by one sweep at most (the rest at the next). */
export const SWEEP_MAX = 1_000

/**
 * Releases at most `max` open holds past their expiry, oldest expiry first; returns how many. A
 * trade's hold (`trade:<JSON [account, clientTradeId]>`, `TradeStore.tradeReservationId`) whose
 * trade is still `built` or `sending` is never released here, whatever its age: that trade's
 * transaction may still land (or may have landed unseen), and its own settlement books or releases
 * the hold once the chain decided (docs/decisions.md "A built trade its caller sent itself"; a Hood
 * TEE build never signed lapses once its claim's lifetime passed: "Hood TEE trade holds"). A
 * trade hold with no trade row (the attempt died between the hold and the record) expires as any.
 * A transfer's hold is kept the same way while the transfer is `sending`, or `built` with its sign
 * claim consumed (`signed`: the relay signed the bytes, which the caller holds) and those bytes
 * still able to land (the claim's `tx_expires_at` unset, as on Hood where an EVM transaction has no
 * expiry, or not passed, as a Solana blockhash's): the spec releases only the hold of an unsigned
 * transfer whose claims are unconsumed (4.1); the transfer's reconcile settles the rest
 * (`never_lands`: failed, the hold released) (docs/decisions.md "A relay-signed TEE transfer keeps its hold").
 * A Hood TEE self-signed launch's dev-buy hold (`launch:self:[account, clientLaunchId, attempt]`)
 * is kept the same way while its operation's dev-buy leg's sign claim is `signed` with bytes able
 * to land, or still `open` within its lifetime (it can still be signed), or its fee leg (`pending`
 * or `sent`) has a `signed` claim (a dead attempt keeps its hold while only the fee can land:
 * `deadSettlementOf`), until a later attempt of the same id shows a leg of the same payer mined at
 * that leg's nonce (those bytes can then never land): the launch's record or its dead attempt's
 * decision settles it (docs/decisions.md "The Hood TEE self-signed dev buy through the spend gate").
 * The expiry is checked on the updated row too, not only in the subquery: a sweep that waited on a
 * row another transaction was extending (`holdUntilIn`, `keepHeldIn`) re-checks only the outer
 * condition against the row it waited for (PostgreSQL's read committed), so the extension holds.
 */
export const sweep = (max: number = SWEEP_MAX): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const now = new Date(yield* Clock.currentTimeMillis)
    const rows = yield* sql<{ id: string }>`
      UPDATE spend_reservations SET state = 'released', settled_at = ${now}
      WHERE state = 'held' AND expires_at <= ${now} AND id IN (
        SELECT r.id FROM spend_reservations r
        WHERE r.state = 'held' AND r.expires_at <= ${now}
          AND NOT EXISTS (
            SELECT 1 FROM agent_trades t
            WHERE t.state IN ('built', 'sending')
              AND t.account_id = (CASE WHEN r.id LIKE 'trade:[%' THEN substr(r.id, 7)::jsonb ->> 0 END)
              AND t.client_trade_id = (CASE WHEN r.id LIKE 'trade:[%' THEN substr(r.id, 7)::jsonb ->> 1 END))
          AND NOT EXISTS (
            SELECT 1 FROM transfers x
            WHERE (x.state = 'sending'
                OR (x.state = 'built' AND EXISTS (
                  SELECT 1 FROM sign_claims c
                  WHERE c.id = x.claim_id AND c.state = 'signed' AND (c.tx_expires_at IS NULL OR c.tx_expires_at > ${now}))))
              AND x.account_id = (CASE WHEN r.id LIKE 'transfer:[%' THEN substr(r.id, 10)::jsonb ->> 0 END)
              AND x.client_transfer_id = (CASE WHEN r.id LIKE 'transfer:[%' THEN substr(r.id, 10)::jsonb ->> 1 END))
          AND NOT EXISTS (
            SELECT 1 FROM self_launch_builds b, jsonb_array_elements(b.operation -> 'legs') AS leg, sign_claims c
            WHERE b.account_id = (CASE WHEN r.id LIKE 'launch:self:[%' THEN substr(r.id, 13)::jsonb ->> 0 END)
              AND b.client_launch_id = (CASE WHEN r.id LIKE 'launch:self:[%' THEN substr(r.id, 13)::jsonb ->> 1 END)
              AND b.attempt = (CASE WHEN r.id LIKE 'launch:self:[%' THEN (substr(r.id, 13)::jsonb ->> 2)::int END)
              AND c.id = leg ->> 'claimId'
              AND ((leg ->> 'kind' = 'devBuy'
                  AND ((c.state = 'signed' AND (c.tx_expires_at IS NULL OR c.tx_expires_at > ${now})) OR (c.state = 'open' AND c.expires_at > ${now})))
                OR (leg ->> 'kind' = 'feeTransfer' AND leg ->> 'status' IN ('pending', 'sent')
                  AND c.state = 'signed' AND (c.tx_expires_at IS NULL OR c.tx_expires_at > ${now})))
              AND NOT EXISTS (
                SELECT 1 FROM self_launch_builds n, jsonb_array_elements(n.operation -> 'legs') AS used
                WHERE n.account_id = b.account_id AND n.client_launch_id = b.client_launch_id AND n.attempt > b.attempt
                  AND n.payer_address = b.payer_address AND used ->> 'status' = 'mined' AND used ->> 'nonce' = leg ->> 'nonce'))
        ORDER BY r.expires_at LIMIT ${Math.max(1, Math.min(max, SWEEP_MAX))})
      RETURNING id`
    return rows.length
  }).pipe(Effect.withSpan("SpendGate.sweep"))

/** A reservation's amount and USD value as held (a rail books a part of it); undefined when unknown. */
export const reservationValue = (id: string): Effect.Effect<{ readonly amountRaw: bigint; readonly usdMicros: bigint | null } | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ amount: string; usd: string | null }>`
    SELECT amount_raw::text AS amount, usd_micros::text AS usd FROM spend_reservations WHERE id = ${id}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : { amountRaw: BigInt(rows[0].amount), usdMicros: rows[0].usd === null ? null : BigInt(rows[0].usd) }))
  )

/** A reservation's state (reads for tests and the rails' recovery). */
export const reservationState = (id: string): Effect.Effect<ReservationRowDb["state"] | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.map(findReservation(id), (r) => r?.state)

export { SpendError }

/** Between two sweeps of expired holds (one bounded pass each; `sweep`). */
export const SWEEP_INTERVAL_MS = 10_000

/** Sweeps expired holds every `intervalMs`, forever (a failed pass is logged and the next runs). */
export const runHoldSweeper = (intervalMs: number = SWEEP_INTERVAL_MS): Effect.Effect<never, never, SqlClient.SqlClient> =>
  Effect.forever(
    Effect.delay(
      sweep().pipe(
        Effect.tap((n) => (n > 0 ? Effect.logInfo(`released ${n} expired spend holds`) : Effect.void)),
        Effect.catchAllCause((cause) => Effect.logWarning("the spend-hold sweep failed; it runs again", cause))
      ),
      `${intervalMs} millis`
    )
  )
