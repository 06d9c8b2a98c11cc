/**
 * The recorded bus partition of open orders (`bus_partition`/`bus_partitions`, migration 0048), a
 * cache of the bus's mapping of the market key, never the truth: `repairPartitions` rewrites every
 * open row recorded for no count or another one before a partition's read, `forgetPartitions`
 * clears a row recorded under the wrong partition so the next repair records it again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { partitionForKey } from "../../../../ingest/bus/Bus.js"
import { marketKeyOf, type OrderRow } from "./OrderRows.js"

/**
 * Forgets the recorded partition of open rows a partition's read found recorded for it but of
 * another market partition (only a defect could write one: `createOrder` and the repair use the
 * bus's mapping), so the next repair, at the next assignment of any partition, records and loads them.
 */
export const forgetPartitions = (ids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  ids.length === 0
    ? Effect.void
    : Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE limit_orders SET bus_partition = NULL, bus_partitions = NULL WHERE status = 'open' AND ${sql.in("id", ids)}`.pipe(Effect.asVoid))

/**
 * Records the bus partition of every open order whose row has none for `partitions` partitions
 * (written before migration 0048, by a create that did not know the count, or for another count):
 * such rows `pageSize` at a time (`STALE_RANGES`: a null count, a smaller one, a larger one, each
 * by its own index range), each one's partition computed by `partitionForKey` and written in one
 * statement a page, until a page comes back short. Answers the rows written; none, reading no
 * row, while every open row has the count. Idempotent: any number of processes with the same
 * count may run it at once.
 */
export const repairPartitions = (partitions: number, pageSize: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let written = 0
    for (const range of STALE_RANGES) {
      for (;;) {
        const stale = yield* stalePartitionPage(sql, range, partitions, pageSize)
        if (stale.length > 0) {
          const values = JSON.stringify(stale.map((r) => ({ id: r.id, part: partitionForKey(marketKeyOf(r as Pick<OrderRow, "chain" | "mint">), partitions) })))
          const moved = yield* sql<{ id: string }>`
            UPDATE limit_orders o SET bus_partition = v.part, bus_partitions = ${partitions}
            FROM jsonb_to_recordset(${values}::jsonb) AS v(id text, part integer)
            WHERE o.id IN ${sql.in(stale.map((r) => r.id))} AND o.id = v.id AND o.status = 'open'
              AND (o.bus_partitions IS NULL OR o.bus_partitions <> ${partitions})
            RETURNING o.id`
          written += moved.length
        }
        if (stale.length < pageSize) break
      }
    }
    return written
  })

/**
 * The open rows without the count, one statement each: no count (`limit_orders_open_unpartitioned_idx`,
 * empty once recorded), a smaller count and a larger one (ranges of the partition index's leading column).
 */
export const STALE_RANGES = ["none", "fewer", "more"] as const

/** One page of the open rows `repairPartitions` rewrites in one range (also what the partition test's EXPLAIN reads). */
export const stalePartitionPage = (sql: SqlClient.SqlClient, range: (typeof STALE_RANGES)[number], partitions: number, pageSize: number) =>
  sql<{ id: string; chain: string; mint: string }>`
    SELECT id, chain, mint FROM limit_orders
    WHERE status = 'open' AND ${
      range === "none" ? sql`bus_partitions IS NULL` : range === "fewer" ? sql`bus_partitions < ${partitions}` : sql`bus_partitions > ${partitions}`
    }
    LIMIT ${pageSize}`
