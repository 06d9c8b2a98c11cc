/**
 * The built-trade watch list at its bound (`TradeStore.built`, `BUILT_WATCH_MAX`), on PGlite: a
 * pass lists at most the bound, the least recently looked at first, and marks what it listed, so
 * rows past the bound are listed by the next pass instead of never (rows the chain cannot decide
 * yet would otherwise fill every pass). Rows that left `built` are never listed.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { BUILT_WATCH_MAX, makeTradeStore, type TradeRow } from "../../src/services/trade/TradeStore.js"
import { clockAt } from "../support/clock.js"
import { tradeRow } from "../support/tradeRows.js"

const T0 = Date.UTC(2026, 10, 29, 12, 0, 0)
const ACCOUNT = `acct-built-watch-${process.pid}`

const builtRow = (id: string, createdAtMs: number, o: Partial<TradeRow> = {}): TradeRow =>
  tradeRow(ACCOUNT, id, { payer: "linked", state: "built", signature: "", createdAtMs, ...o })

describe("the built-trade watch list at its bound", () => {
  let scope: Scope.CloseableScope
  let sql: SqlClient.SqlClient
  let clockMs = T0
  const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>): Promise<A> => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))

  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const ctx = await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))
    sql = await Effect.runPromise(Effect.provide(SqlClient.SqlClient, ctx))
  }, 120_000)

  afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("lists at most the bound, least recently looked at first; the rows past it come first in the next pass; a row that left built is not listed", async () => {
    const store = makeTradeStore(sql, clockAt(() => clockMs))
    const total = BUILT_WATCH_MAX + 7
    const ids = Array.from({ length: total }, (_, i) => `built-${String(i).padStart(4, "0")}`)
    for (const [i, id] of ids.entries()) {
      clockMs = T0 + i
      await run(store.save(undefined, builtRow(id, clockMs), []))
    }
    // One more that already left `built` (its submit sent it).
    clockMs = T0 - 1
    await run(store.save(undefined, builtRow("sent-one", clockMs, { state: "sending", signature: "sig-sent" }), []))

    clockMs = T0 + 10_000
    const first = (await run(store.built)).map((k) => k.clientTradeId)
    expect(first).toHaveLength(BUILT_WATCH_MAX)
    expect(first).not.toContain("sent-one")
    // The oldest rows (never looked at, created first) fill the first pass.
    expect(new Set(first)).toEqual(new Set(ids.slice(0, BUILT_WATCH_MAX)))
    // Marked looked at on the store's Clock (what orders the next pass).
    const marks = await run(
      Effect.flatMap(SqlClient.SqlClient, (q) => q<{ updated_at: Date | string }>`SELECT updated_at FROM agent_trades WHERE account_id = ${ACCOUNT} AND client_trade_id IN ${q.in(first)}`)
    )
    expect(marks.map((m) => new Date(m.updated_at).getTime())).toEqual(first.map(() => T0 + 10_000))

    clockMs = T0 + 20_000
    const second = (await run(store.built)).map((k) => k.clientTradeId)
    expect(second).toHaveLength(BUILT_WATCH_MAX)
    // The rows the first pass left out are in this one; together the two passes saw every built row.
    expect(second).toEqual(expect.arrayContaining(ids.slice(BUILT_WATCH_MAX)))
    expect(new Set([...first, ...second])).toEqual(new Set(ids))
    expect(second).not.toContain("sent-one")
  })
})
