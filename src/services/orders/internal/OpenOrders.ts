/**
 * What the actors' books load and follow: every open order or one bus partition's, paged by id
 * below the newest `rev` read first (the follow takes over from that `rev`), and the follow itself
 * (`revHandedOut` as its gate, `changedSince` in `rev` order). Read only.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type OrderRow, type Raw, toRow } from "./OrderRows.js"

/**
 * Reads `page(sql, through, after)` from the id after `after` until a page comes back empty, each
 * page to `onPage`, and answers `through`: the newest `rev` before the first page (the follow
 * takes over from it).
 */
const pagedOpen = (
  onPage: (rows: ReadonlyArray<OrderRow>) => void,
  page: (sql: SqlClient.SqlClient, through: bigint, after: string) => Effect.Effect<ReadonlyArray<Raw>, SqlError>
): Effect.Effect<bigint, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const top = yield* sql<{ rev: string | number | null }>`SELECT max(rev) AS rev FROM limit_orders`
    const through = BigInt(top[0]?.rev ?? 0)
    let after = ""
    for (;;) {
      const rows = yield* page(sql, through, after)
      if (rows.length === 0) return through
      onPage(rows.map(toRow))
      after = rows[rows.length - 1]!.id
    }
  })

/** Every open order, in pages of `pageSize` (the books' start), and the newest `rev` before them. */
export const loadOpen = (pageSize: number, onPage: (rows: ReadonlyArray<OrderRow>) => void): Effect.Effect<bigint, SqlError, SqlClient.SqlClient> =>
  pagedOpen(onPage, (sql, through, after) => sql<Raw>`
    SELECT * FROM limit_orders WHERE status = 'open' AND rev <= ${through.toString()}::bigint AND id > ${after} ORDER BY id LIMIT ${pageSize}`)

/**
 * The open orders of one bus partition, in pages of `pageSize` (a partition's assignment), and
 * the newest `rev` before them: the rows recorded for `partitions` partitions at `partition`, by
 * `limit_orders_open_partition_idx`, no other partition's row read. Run `repairPartitions` for
 * the same count first, or rows recorded for no count or another one are missed.
 */
export const loadOpenOfPartition = (
  partitions: number,
  partition: number,
  pageSize: number,
  onPage: (rows: ReadonlyArray<OrderRow>) => void
): Effect.Effect<bigint, SqlError, SqlClient.SqlClient> =>
  pagedOpen(onPage, (sql, through, after) => openOfPartitionPage(sql, partitions, partition, through, after, pageSize))

/** One page of `loadOpenOfPartition` (also what the partition test's EXPLAIN reads). */
export const openOfPartitionPage = (sql: SqlClient.SqlClient, partitions: number, partition: number, through: bigint, after: string, pageSize: number) =>
  sql<Raw>`
    SELECT * FROM limit_orders
    WHERE status = 'open' AND bus_partitions = ${partitions} AND bus_partition = ${partition}
      AND rev <= ${through.toString()}::bigint AND id > ${after}
    ORDER BY bus_partitions, bus_partition, id LIMIT ${pageSize}`

/** The newest `rev` committed (0 without orders): where a follow that loads nothing at start begins. */
export const latestRev: Effect.Effect<bigint, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ rev: string | number | null }>`SELECT max(rev) AS rev FROM limit_orders`, (rows) => BigInt(rows[0]?.rev ?? 0))
)

/**
 * The newest `rev` handed out (the sequence's last value; 0 before the first): the follow's gate.
 * Every committed create or cancel has a `rev` at or below it, so while it is not above the last
 * `rev` read nothing new can be read. A value taken by a transaction that rolled back keeps the
 * gate open (the follow reads, finds nothing) until the next create or cancel is read.
 */
export const revHandedOut: Effect.Effect<bigint, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ last_value: string | number; is_called: boolean }>`SELECT last_value, is_called FROM limit_orders_rev`, (rows) =>
    rows[0]?.is_called === true ? BigInt(rows[0].last_value) : 0n
  )
)

/** Rows created or cancelled after `rev`, in `rev` order (the books' follow). */
export const changedSince = (rev: bigint, limit: number): Effect.Effect<ReadonlyArray<OrderRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<Raw>`SELECT * FROM limit_orders WHERE rev > ${rev.toString()}::bigint ORDER BY rev LIMIT ${limit}`, (rows) => rows.map(toRow))
  )
