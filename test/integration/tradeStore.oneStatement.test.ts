/**
 * The trade store's one-statement save (`TradeStore.saveFenced`, the attempt runner's
 * `AttemptStore.saveFenced`) over PGlite, with a real key, a held spend reservation, a webhook
 * endpoint and real row leases:
 * - a driver holding the lease moves `sending → executed` and, in the same statement, adds the fee
 *   to the account's totals, records `trade.executed` for the endpoint, books the hold and adds the
 *   key's usage: each once;
 * - a driver whose lease was taken over writes nothing at all (the row, the totals, the outbox, the
 *   reservation and the usage as they were) and the runner's `fenced` dies with `RowLeaseLost`;
 * - a save over a row another writer moved first settles nothing (a second `executed` save);
 * - a move to `failed` releases the hold, only when the row moved;
 * - `save` of a new row inserts it (in whatever state it is given: the read models' fixtures);
 * - `book` (one statement for every rail): 20 concurrent bookings of one sell book it once, a hold
 *   the sweep released still books, a booked one books nothing again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Cause, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { makeRowLeases, RowLeaseLost } from "../../src/db/RowLease.js"
import { book, reservationState } from "../../src/services/spend/SpendStore.js"
import { TRADE_LEASE_KIND, tradeLeaseKey } from "../../src/services/trade/TradeAttempt.js"
import { makeTradeStore, type TradeRow, tradeReservationId } from "../../src/services/trade/TradeStore.js"
import { clockAt } from "../support/clock.js"
import { seedSwapAccount, tradeRow } from "../support/tradeRows.js"

const ACCOUNT = `acct-one-statement-${process.pid}`
const KEY = `kid-one-statement-${process.pid}`
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0)

let scope: Scope.CloseableScope
let sql: SqlClient.SqlClient
const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))

const sending = (id: string, o: Partial<TradeRow> = {}): TradeRow => tradeRow(ACCOUNT, id, { keyId: KEY, createdAtMs: NOW, spendUsdMicros: 150_000n, ...o })
const executed = (r: TradeRow): TradeRow => ({ ...r, state: "executed", amountOutRaw: 42n })
const failed = (r: TradeRow): TradeRow => ({ ...r, state: "failed", errorCode: "reverted", error: "the transaction failed on chain" })
const RECORD = [{ _tag: "RecordExecuted", signature: "sig", amountOutRaw: 42n }] as const

/** A held reservation of the trade, as the submit's hold leaves it. */
const hold = (r: TradeRow) =>
  run(sql`
    INSERT INTO spend_reservations (id, account_id, key_id, rail, purpose, chain, asset, side, amount_raw, usd_micros, state, created_at, expires_at)
    VALUES (${tradeReservationId(r)}, ${ACCOUNT}, ${KEY}, 'main', 'trade', 'solana', 'SOL', 'buy', ${(r.amountInRaw + r.feeRaw).toString()}::numeric, 150000, 'held', now(), now() + interval '1 hour')`)

/** What the settlement writes, all of it. */
const written = () =>
  run(
    Effect.all({
      fee: Effect.map(sql<{ s: string | null }>`SELECT sum(fee_raw_sum)::text AS s FROM account_fee_totals WHERE account_id = ${ACCOUNT}`, (r) => r[0]?.s ?? null),
      events: Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'trade.executed'`, (r) => r[0]!.n),
      trades: Effect.map(sql<{ n: number }>`SELECT coalesce(sum(trade_count), 0)::int AS n FROM agent_key_usage_daily WHERE key_id = ${KEY}`, (r) => r[0]!.n)
    })
  )

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  sql = await Effect.runPromise(Effect.provide(SqlClient.SqlClient, await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))))
  await run(seedSwapAccount({ accountId: ACCOUNT, referralCode: "ONESTMT", keyId: KEY, keyPrefix: "cs_onestmt", hookId: "wh-one-statement", event: "trade.executed" }))
}, 60_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("the trade store's one-statement save", () => {
  it("the driver's executed save settles once; a taken-over driver's writes nothing; a stale second save settles nothing", async () => {
    const store = makeTradeStore(sql, clockAt(NOW))
    const a = makeRowLeases(sql, { leaseMs: 60_000 })
    const b = makeRowLeases(sql, { leaseMs: 60_000 })
    const row = sending("t-exec")
    const lease = tradeLeaseKey({ accountId: ACCOUNT, clientTradeId: row.clientTradeId })
    expect(await run(store.save(undefined, row, []))).toBe(true)
    await hold(row)
    await run(a.claimIn(TRADE_LEASE_KIND, lease))
    const before = await written()

    // A's lease ended and B took the row: A's save writes nothing and the runner's fence dies.
    await run(sql`UPDATE row_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE kind = ${TRADE_LEASE_KIND} AND key = ${lease}`)
    expect(await Effect.runPromise(b.take(TRADE_LEASE_KIND, lease))).toBe(true)
    const lost = await run(store.saveFenced(row, executed(row), RECORD, a.renewal(TRADE_LEASE_KIND, lease)))
    expect(lost).toEqual({ held: false, moved: false })
    const exit = await Effect.runPromiseExit(a.fenced(TRADE_LEASE_KIND, lease, lost.held, lost.moved))
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause) && Cause.squash(exit.cause) instanceof RowLeaseLost).toBe(true)
    expect((await run(store.get(ACCOUNT, row.clientTradeId)))?.state).toBe("sending")
    expect(await written()).toEqual(before)
    expect(await run(reservationState(tradeReservationId(row)))).toBe("held")

    // B, the owner now, settles it: the row, the fee, the event, the booking and the usage, once.
    expect(await run(store.saveFenced(row, executed(row), RECORD, b.renewal(TRADE_LEASE_KIND, lease)))).toEqual({ held: true, moved: true })
    expect((await run(store.get(ACCOUNT, row.clientTradeId)))?.state).toBe("executed")
    expect(await written()).toEqual({ fee: "2500", events: before.events + 1, trades: before.trades + 1 })
    expect(await run(reservationState(tradeReservationId(row)))).toBe("booked")

    // The same save again (a stale state, or a racing writer that lost): nothing moves, nothing settles twice.
    expect(await run(store.saveFenced(row, executed(row), RECORD, b.renewal(TRADE_LEASE_KIND, lease)))).toEqual({ held: true, moved: false })
    expect(await written()).toEqual({ fee: "2500", events: before.events + 1, trades: before.trades + 1 })
  })

  it("a move to failed releases the hold, only when the row moved; without a fence (a request's settle) the lease is not read", async () => {
    const store = makeTradeStore(sql, clockAt(NOW))
    const row = sending("t-fail")
    expect(await run(store.save(undefined, row, []))).toBe(true)
    await hold(row)
    const before = await written()
    // A writer that already moved the row (it holds `executed` now): the stale failure moves and releases nothing.
    expect(await run(store.save(row, executed(row), []))).toBe(true)
    expect(await run(store.saveFenced(row, failed(row), [], undefined))).toEqual({ held: true, moved: false })
    expect(await run(reservationState(tradeReservationId(row)))).toBe("held")
    const other = sending("t-fail-2")
    expect(await run(store.save(undefined, other, []))).toBe(true)
    await hold(other)
    expect(await run(store.saveFenced(other, failed(other), [], undefined))).toEqual({ held: true, moved: true })
    expect(await run(reservationState(tradeReservationId(other)))).toBe("released")
    expect(await written()).toEqual(before)
  })

  it("book in one statement: a sell booked by 20 at once books once; a released hold books; a booked one books nothing", async () => {
    const sell = { reservationId: "sell-once", accountId: ACCOUNT, keyId: KEY, rail: "main", purpose: "trade", chain: "solana", side: "sell", asset: "Mint1", amountRaw: 5n, usdMicros: 7n, trades: 1 } as const
    const before = await written()
    const all = await Promise.all(Array.from({ length: 20 }, () => run(book(sell))))
    expect(all.filter((b) => b.fresh)).toEqual([{ fresh: true, usdMicros: 7n }])
    expect((await written()).trades).toBe(before.trades + 1)
    const released = sending("t-released")
    await hold(released)
    await run(sql`UPDATE spend_reservations SET state = 'released' WHERE id = ${tradeReservationId(released)}`)
    const input = { ...sell, reservationId: tradeReservationId(released), side: "buy", asset: "SOL", usdMicros: null } as const
    expect(await run(book(input))).toEqual({ fresh: true, usdMicros: 150_000n })
    expect(await run(reservationState(tradeReservationId(released)))).toBe("booked")
    expect(await run(book(input))).toEqual({ fresh: false, usdMicros: null })
    expect((await written()).trades).toBe(before.trades + 2)
  })
})
