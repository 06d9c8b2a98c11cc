/**
 * The bus partition recorded on the order row (issue 29, migration 0048), on PGlite: a partition's
 * assignment reads only that partition's open orders (`OrderHooks.assignedRows`, and the page's
 * plan: the partition index, no row read and filtered out), after recording the partition of
 * every open row that has none for the bus's count (written before the column, by a create that
 * did not know the count, or for another count); a process started with another partition count
 * records every open row again for its count and reads its partitions by it.
 * docs/decisions.md, "Open orders by bus partition".
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, ExecutionStrategy, Exit, Scope } from "effect"
import { partitionForKey } from "../../ingest/bus/Bus.js"
import {
  createOrder,
  cancelOrder,
  marketKeyOf,
  openOfPartitionPage,
  repairPartitions,
  STALE_RANGES,
  stalePartitionPage
} from "../../src/services/orders/OrderStore.js"
import { orderTriggerHooks } from "../../src/services/orders/OrderTriggers.js"
import { limitSellAbove } from "../support/orderFixtures.js"
import { memoryBusAndPglite } from "../support/marketWorkload.js"

const PARTITIONS = 4
const OWNER = { accountId: "acct_orders_partition_column", keyId: "key_partition_column" }
const NOW = { price: { num: 1n, den: 1n }, position: "0" }

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Rows Removed by Filter"?: number
  readonly "Actual Rows"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}
const scansOf = (node: PlanNode, relation: string): Array<PlanNode> => [
  ...(node["Relation Name"] === relation ? [node] : []),
  ...(node.Plans ?? []).flatMap((p) => scansOf(p, relation))
]
const removedOf = (node: PlanNode): number => Number(node["Rows Removed by Filter"] ?? 0) + (node.Plans ?? []).reduce((sum, c) => sum + removedOf(c), 0)
/** Every index a plan reads (index, index-only and bitmap index scans). */
const indexesOf = (node: PlanNode): Array<string> => [...(node["Index Name"] === undefined ? [] : [node["Index Name"]]), ...(node.Plans ?? []).flatMap(indexesOf)]
const nameOf = (n: PlanNode) => `${n["Node Type"]}${n["Index Name"] === undefined ? "" : ` ${n["Index Name"]}`}`

describe("the bus partition on the order row", () => {
  it.scopedLive(
    "an assignment of partition P reads only P's open orders; rows without the partition, or with another count's, are recorded first; another count records them all again",
    () =>
      Effect.gen(function* () {
        const { database } = yield* memoryBusAndPglite(PARTITIONS, "curvestream-orders-partition-column-")
        const sql = Context.get(database, SqlClient.SqlClient)
        const provide = Effect.provide(database)
        const mints = Array.from({ length: 24 }, (_, i) => `So1PartitionColumn${i}`)
        const partOf = (mint: string, n = PARTITIONS) => partitionForKey(marketKeyOf({ chain: "solana", mint }), n)
        for (let p = 0; p < PARTITIONS; p++) expect(mints.some((m) => partOf(m) === p)).toBe(true)
        // Three open orders a market: one created knowing the count (the API), one not (null), one
        // for another count (an API process with an older BUS_PARTITIONS); and one cancelled.
        for (const [i, mint] of mints.entries()) {
          yield* createOrder(limitSellAbove(`ord_pc_${i}_known`, mint, NOW, OWNER), Date.now(), Number.MAX_SAFE_INTEGER, PARTITIONS).pipe(provide)
          yield* createOrder(limitSellAbove(`ord_pc_${i}_none`, mint, NOW, OWNER), Date.now()).pipe(provide)
          yield* createOrder(limitSellAbove(`ord_pc_${i}_other`, mint, NOW, OWNER), Date.now(), Number.MAX_SAFE_INTEGER, 7).pipe(provide)
          yield* createOrder(limitSellAbove(`ord_pc_${i}_gone`, mint, NOW, OWNER), Date.now(), Number.MAX_SAFE_INTEGER, PARTITIONS).pipe(provide)
          yield* cancelOrder(OWNER.accountId, `ord_pc_${i}_gone`, Date.now()).pipe(provide)
        }
        const openIn = (p: number, n = PARTITIONS) =>
          mints.flatMap((m, i) => (partOf(m, n) === p ? [`ord_pc_${i}_known`, `ord_pc_${i}_none`, `ord_pc_${i}_other`] : [])).sort()
        const stored = sql<{ id: string; status: string; bus_partition: number | null; bus_partitions: number | null; mint: string }>`
          SELECT id, status, bus_partition, bus_partitions, mint FROM limit_orders ORDER BY id`
        const before = yield* stored
        expect(before.find((r) => r.id === "ord_pc_0_known")).toMatchObject({ bus_partition: partOf(mints[0]!), bus_partitions: PARTITIONS })
        expect(before.find((r) => r.id === "ord_pc_0_none")).toMatchObject({ bus_partition: null, bus_partitions: null })
        expect(before.find((r) => r.id === "ord_pc_0_other")).toMatchObject({ bus_partition: partOf(mints[0]!, 7), bus_partitions: 7 })

        // One actors process of a cluster (its books come with the partitions).
        const process = (n: number) =>
          Effect.gen(function* () {
            const scope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
            const hooks = yield* orderTriggerHooks({ syncIntervalMs: 3_600_000, partitioned: true })(sql, () => undefined).pipe(Scope.extend(scope))
            const partitionOf = (key: string) => partitionForKey(key, n)
            const assign = (partition: number) =>
              hooks.assigned!((key) => partitionOf(key) === partition, { owner: "market", partition, epoch: 1, partitionOf, partitions: n })
            const held = () => mints.flatMap((m) => {
              const b = hooks.books.book(`solana:${m}`)
              return b === undefined ? [] : [...b.below, ...b.above, ...b.trailing].map((o) => o.id)
            }).sort()
            return { hooks, assign, held, close: Scope.close(scope, Exit.void) }
          })

        const a = yield* process(PARTITIONS)
        const [p, q] = [partOf(mints[0]!), (partOf(mints[0]!) + 1) % PARTITIONS]
        yield* a.assign(p)
        // The null and other-count rows (open) recorded first; then P's open orders read, no other.
        expect(a.hooks.assignedRows()).toEqual({ read: openIn(p).length, repaired: 2 * mints.length })
        expect(a.held()).toEqual(openIn(p))
        const after = yield* stored
        for (const r of after) {
          if (r.status === "open") expect([r.id, r.bus_partition, r.bus_partitions]).toEqual([r.id, partOf(r.mint), PARTITIONS])
          else expect(r.bus_partitions).toBe(PARTITIONS) // the cancelled orders were created knowing the count
        }
        // The next partition: nothing left to record, only Q's rows read.
        yield* a.assign(q)
        expect(a.hooks.assignedRows()).toEqual({ read: openIn(p).length + openIn(q).length, repaired: 2 * mints.length })
        expect(a.held()).toEqual([...openIn(p), ...openIn(q)].sort())
        // A row recorded with the right count and another market's partition (a defect): the
        // partition it names reads it and does not load it, and forgets its columns, so the next
        // assignment records it right and its own partition loads it.
        const stray = mints.findIndex((m) => partOf(m) !== p && partOf(m) !== q)
        const strayId = `ord_pc_${stray}_known`
        const [wrong] = [0, 1, 2, 3].filter((x) => x !== partOf(mints[stray]!))
        yield* sql`UPDATE limit_orders SET bus_partition = ${wrong!} WHERE id = ${strayId}`
        yield* a.assign(wrong!)
        expect(a.held()).not.toContain(strayId)
        expect((yield* stored).find((r) => r.id === strayId)).toMatchObject({ bus_partition: null, bus_partitions: null })
        yield* a.assign(partOf(mints[stray]!))
        expect(a.held()).toContain(strayId)
        expect((yield* stored).find((r) => r.id === strayId)).toMatchObject({ bus_partition: partOf(mints[stray]!), bus_partitions: PARTITIONS })
        yield* a.close

        // The partition count changed (a new bus with 8 partitions): a process started with it
        // records every open row for 8 at its first assignment and reads by it.
        const wider = 8
        const r = partOf(mints[0]!, wider)
        const b = yield* process(wider)
        yield* b.assign(r)
        expect(b.hooks.assignedRows()).toEqual({ read: openIn(r, wider).length, repaired: 3 * mints.length })
        expect(b.held()).toEqual(openIn(r, wider))
        for (const row of yield* stored) if (row.status === "open") expect([row.id, row.bus_partition, row.bus_partitions]).toEqual([row.id, partOf(row.mint, wider), wider])
        yield* b.close
      }),
    120_000
  )

  it.scopedLive(
    "with 40,000 orders (8,000 open over 4 partitions, their partitions recorded by the repair) a page of a partition's load reads by the partition index and reads no other partition's row; the repair with nothing to record reads no row",
    () =>
      Effect.gen(function* () {
        const { database } = yield* memoryBusAndPglite(PARTITIONS, "curvestream-orders-partition-plan-")
        const sql = Context.get(database, SqlClient.SqlClient)
        const ROWS = 40_000
        // Ids as the API makes them (random, so their order is not the table's), the partition
        // not recorded: the repair records it for the open ones, as after the migration.
        yield* sql`
          INSERT INTO limit_orders (id, account_id, client_order_id, key_id, request_hash, chain, mint, side, trigger, amount_raw, level,
            slippage_bps, payer, after_position, status, created_at, updated_at, rev)
          SELECT 'ord_' || md5(g::text), 'acct_plan_' || (g % 1000), 'c' || g, 'key_plan', 'h', 'solana', 'So1Plan' || (g % 5000), 'sell', 'limit', '1000', '1.5',
            100, 'main', '0', CASE WHEN g % 5 = 0 THEN 'open' ELSE 'triggered' END, now(), now(), g
          FROM generate_series(1, ${ROWS}) AS g`
        const open = ROWS / 5
        expect(yield* repairPartitions(PARTITIONS, 1000).pipe(Effect.provide(database))).toBe(open)
        yield* sql`ANALYZE limit_orders`
        const explain = (statement: { compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
          Effect.map(sql.unsafe<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.compile()[0]}`, statement.compile()[1]), (rows) => {
            const plan = rows[0]!["QUERY PLAN"]
            return ((typeof plan === "string" ? JSON.parse(plan) : plan) as ReadonlyArray<{ readonly Plan: PlanNode }>)[0]!.Plan
          })
        const inPartition = (p: number) => Array.from({ length: open }, (_, i) => `So1Plan${((i + 1) * 5) % 5000}`).filter((m) => partitionForKey(`solana:${m}`, PARTITIONS) === p).length
        const page = yield* explain(openOfPartitionPage(sql, PARTITIONS, 1, BigInt(ROWS), "", 1000))
        const pageScans = scansOf(page, "limit_orders").map(nameOf)
        yield* Effect.logInfo(`orders.partitionColumn: a partition's page scans ${pageScans.join(", ")}; ${page["Actual Rows"]} rows, ${removedOf(page)} read and filtered out`)
        expect(pageScans).toEqual(["Index Scan limit_orders_open_partition_idx"])
        expect(page["Actual Rows"]).toBe(Math.min(1000, inPartition(1)))
        expect(removedOf(page)).toBe(0)
        // Paged through: exactly the partition's open rows.
        let after = ""
        let read = 0
        for (;;) {
          const rows = yield* openOfPartitionPage(sql, PARTITIONS, 1, BigInt(ROWS), after, 1000)
          if (rows.length === 0) break
          for (const row of rows) expect([row.status, partitionForKey(`solana:${row.mint}`, PARTITIONS)]).toEqual(["open", 1])
          read += rows.length
          after = rows[rows.length - 1]!.id
        }
        expect(read).toBe(inPartition(1))

        for (const range of STALE_RANGES) {
          const stale = yield* explain(stalePartitionPage(sql, range, PARTITIONS, 1000))
          const staleScans = scansOf(stale, "limit_orders")
          yield* Effect.logInfo(`orders.partitionColumn: the repair's page (${range}) scans ${staleScans.map(nameOf).join(", ")}; ${removedOf(stale)} read and filtered out`)
          expect(staleScans.map(nameOf).filter((n) => n.startsWith("Seq Scan"))).toEqual([])
          expect(indexesOf(stale)).toEqual([range === "none" ? "limit_orders_open_unpartitioned_idx" : "limit_orders_open_partition_idx"])
          expect(stale["Actual Rows"]).toBe(0)
          expect(removedOf(stale)).toBe(0)
        }
        expect(yield* repairPartitions(PARTITIONS, 1000).pipe(Effect.provide(database))).toBe(0)
      }),
    120_000
  )
})
