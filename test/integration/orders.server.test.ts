/**
 * The trigger writer's statement on a real PostgreSQL server (issue 29), where connections run
 * concurrently (PGlite admits one client, so these interleavings cannot happen there):
 * - a claim of a partition waits for a trigger statement under way on it (the statement reads
 *   the claim `FOR SHARE`): the old owner's write, started under its claim, counts; the new owner's
 *   claim commits after it and its load of the open orders no longer sees the order. Held
 *   deterministically by a row lock the test takes on the order (the statement waits on it with
 *   the claim row held), observed through `pg_stat_activity`.
 * - the statement's plan over `limit_orders` with many rows: no sequential scan of the table; and
 *   the books' load pages through the open orders by their own index (migration 0047), reading no
 *   closed order; a partition's page reads its partition's open orders by the partition index
 *   (migration 0048), and the partition repair with nothing to record reads no row.
 * - two processes handed the same partition at once, both repairing it (`repairPartitions`):
 *   each open order's partition recorded once, each load of the partition whole and without
 *   duplicates (its own describe, below).
 * docs/decisions.md, "A trigger in flight when its partition moves".
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Deferred, Effect, Exit, Fiber, Layer, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pgCheckpointStore } from "../../actors/runtime/Checkpointer.js"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import {
  createOrder,
  loadOpen,
  loadOpenOfPartition,
  marketKeyOf,
  markTriggeredAll,
  type NewOrder,
  openOfPartitionPage,
  repairPartitions,
  STALE_RANGES,
  stalePartitionPage,
  TRIGGER_STATEMENT,
  triggerValues,
  type TriggerWrite
} from "../../src/services/orders/OrderStore.js"
import { partitionForKey } from "../../ingest/bus/Bus.js"
import { eventually } from "../support/eventually.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const OWNER = "market"

const newOrder = (id: string): NewOrder => ({
  id,
  accountId: "acct_orders_server",
  clientOrderId: id,
  keyId: "key_orders_server",
  requestHash: "h",
  chain: "solana",
  mint: "So1OrdersServer",
  side: "sell",
  trigger: "limit",
  amountRaw: 1_000_000n,
  level: "1.5",
  trailBps: null,
  watermark: null,
  slippageBps: 100,
  payer: "main",
  expiresAtMs: null,
  afterPosition: "000000000000000000100:000000:0000"
})

const write = (id: string): TriggerWrite => ({
  id,
  price: { num: 3n, den: 2n },
  position: "000000000000000000200:000000:0000",
  atMs: 1_800_000_000_000,
  watermark: null,
  stopPrice: null
})

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}
/** Every scan of `relation` in a plan: its node type and index. */
const scansOf = (node: PlanNode, relation: string): Array<string> => [
  ...(node["Relation Name"] === relation ? [`${node["Node Type"]}${node["Index Name"] === undefined ? "" : ` ${node["Index Name"]}`}`] : []),
  ...(node.Plans ?? []).flatMap((p) => scansOf(p, relation))
]

const serverUrl = postgresUrl()

/** A fresh database on the server (migrated through the first pool) and three pools on it: three processes' connections, closed with `scope`. */
const threePools = async () => {
  const url = await freshPostgresDatabase(serverUrl!)
  const options = { url, dataDir: undefined }
  const scope = await run(Scope.make())
  const migrated = Layer.effectDiscard(Database.runMigrations(migrations)).pipe(Layer.provideMerge(Database.layer(options)))
  const sqlA = Context.get(await run(Layer.buildWithScope(migrated, scope)), SqlClient.SqlClient)
  const sqlB = Context.get(await run(Layer.buildWithScope(Database.layer(options), scope)), SqlClient.SqlClient)
  const sqlT = Context.get(await run(Layer.buildWithScope(Database.layer(options), scope)), SqlClient.SqlClient)
  return { scope, sqlA, sqlB, sqlT }
}

/**
 * The enclosing describe's three pools (the old owner's, the new owner's, and the test's: three
 * processes' connections) on a fresh database, made before its tests and closed after them.
 */
const suitePools = () => {
  const pools = {} as Awaited<ReturnType<typeof threePools>>
  beforeAll(async () => {
    Object.assign(pools, await threePools())
  }, 60_000)
  afterAll(async () => {
    await run(Scope.close(pools.scope, Exit.void))
  })
  return pools
}

describe.skipIf(serverUrl === undefined)(`the trigger statement on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  const pools = suitePools()

  it("a claim waits for a trigger statement under way on its partition: the old owner's write counts, the new owner loads no such order", async () => {
    const { sqlA, sqlB, sqlT } = pools
    const partition = 0
    const id = "ord_server_in_flight"
    const epochA = await run(Effect.flatMap(pgCheckpointStore(10), (s) => s.claim(OWNER, partition)).pipe(Effect.provideService(SqlClient.SqlClient, sqlA)))
    await run(createOrder(newOrder(id), Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, sqlA)))
    const waiting = (like: string) =>
      sqlT<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ${like}`.pipe(Effect.map((r) => r[0]!.n > 0))

    await run(
      Effect.gen(function* () {
        // The test holds the order's row: the old owner's statement takes the claim row FOR SHARE and waits on it.
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          sqlT.withTransaction(
            Effect.gen(function* () {
              yield* sqlT`SELECT id FROM limit_orders WHERE id = ${id} FOR UPDATE`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release)
            })
          )
        )
        yield* Deferred.await(locked)
        const oldWrite = yield* Effect.fork(
          markTriggeredAll([{ ...write(id), fence: { owner: OWNER, partition, epoch: epochA } }], Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, sqlA))
        )
        yield* Effect.promise(() => eventually(() => run(waiting("%UPDATE limit_orders o SET status = 'triggered'%")), { what: "the trigger statement to wait on the order's row", deadlineMs: 10_000 }))
        // The new owner claims the partition: it waits for the statement holding the claim row.
        const claim = yield* Effect.fork(Effect.flatMap(pgCheckpointStore(10), (s) => s.claim(OWNER, partition)).pipe(Effect.provideService(SqlClient.SqlClient, sqlB)))
        yield* Effect.promise(() => eventually(() => run(waiting("%INSERT INTO partition_owners%")), { what: "the claim to wait on the trigger statement", deadlineMs: 10_000 }))
        expect(Option.isNone(yield* Fiber.poll(claim))).toBe(true)
        expect(Option.isNone(yield* Fiber.poll(oldWrite))).toBe(true)

        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        const moved = yield* Fiber.join(oldWrite)
        expect(moved.map((r) => [r.id, r.status])).toEqual([[id, "triggered"]])
        const epochB = yield* Fiber.join(claim)
        expect(epochB).toBe(epochA + 1)

        // The new owner loads the partition's books after its claim: the order is not among them,
        // and its own trigger of the same trade (a replay) moves nothing.
        const loaded: Array<string> = []
        yield* loadOpen(100, (rows) => loaded.push(...rows.map((r) => r.id))).pipe(Effect.provideService(SqlClient.SqlClient, sqlB))
        expect(loaded).not.toContain(id)
        const again = yield* markTriggeredAll([{ ...write(id), fence: { owner: OWNER, partition, epoch: epochB } }], Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, sqlB))
        expect(again).toEqual([])
        // And the old owner's next write of the partition, under the old epoch, is fenced out.
        yield* createOrder(newOrder(`${id}_next`), Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, sqlA))
        const stale = yield* markTriggeredAll([{ ...write(`${id}_next`), fence: { owner: OWNER, partition, epoch: epochA } }], Date.now()).pipe(Effect.provideService(SqlClient.SqlClient, sqlA))
        expect(stale).toEqual([])
      })
    )
  }, 60_000)

  it("with 200,000 orders (4,000 open) the statement of 500 triggers reads limit_orders by index, never a sequential scan (the check sees one when index scans are off); a page of the books' load reads open orders only", async () => {
    const { sqlA } = pools
    const ROWS = 200_000
    await run(
      Effect.gen(function* () {
        yield* sqlA`
          INSERT INTO limit_orders (id, account_id, client_order_id, key_id, request_hash, chain, mint, side, trigger, amount_raw, level,
            slippage_bps, payer, after_position, status, created_at, updated_at, rev)
          SELECT 'ord_plan_' || lpad(g::text, 7, '0'), 'acct_plan_' || (g % 1000), 'c' || g, 'key_plan', 'h', 'solana', 'So1Plan' || (g % 5000), 'sell', 'limit', '1000', '1.5',
            100, 'main', '0', CASE WHEN g % 50 = 0 THEN 'open' WHEN g % 3 = 0 THEN 'cancelled' ELSE 'triggered' END, now(), now(), g
          FROM generate_series(1, ${ROWS}) AS g`
        yield* sqlA`ANALYZE limit_orders`
        yield* sqlA`ANALYZE partition_owners`
        const open = yield* sqlA<{ id: string }>`SELECT id FROM limit_orders WHERE status = 'open' AND id LIKE 'ord_plan_%' ORDER BY id LIMIT 500`
        expect(open.length).toBe(500)
        const writes = open.map((r, i) => ({ ...write(r.id), fence: { owner: OWNER, partition: i % 4, epoch: 1 } }))
        const text = TRIGGER_STATEMENT
        const params = triggerValues(writes, Date.now())
        const explain = (sql: SqlClient.SqlClient) =>
          Effect.map(sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${text}`, params), (rows) => {
            const plan = rows[0]!["QUERY PLAN"]
            return (typeof plan === "string" ? JSON.parse(plan) : plan) as ReadonlyArray<{ readonly Plan: PlanNode }>
          })
        const scans = scansOf((yield* explain(sqlA))[0]!.Plan, "limit_orders")
        yield* Effect.logInfo(`orders.server: the trigger statement's scans of limit_orders: ${scans.join(", ")}`)
        expect(scans.length).toBeGreaterThan(0)
        expect(scans.filter((s) => s.startsWith("Seq Scan"))).toEqual([])
        // The check itself: with index scans off, the same statement's plan is a sequential scan, and the check says so.
        const forced = yield* sqlA.withTransaction(
          Effect.gen(function* () {
            yield* sqlA`SET LOCAL enable_indexscan = off`
            yield* sqlA`SET LOCAL enable_bitmapscan = off`
            return scansOf((yield* explain(sqlA))[0]!.Plan, "limit_orders")
          })
        )
        expect(forced.some((s) => s.startsWith("Seq Scan"))).toBe(true)

        // The books' load (a page of the open orders, at start and at each assignment).
        const page = yield* sqlA.unsafe<Record<string, unknown>>(
          `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM limit_orders WHERE status = 'open' AND rev <= ${ROWS}::bigint AND id > '' ORDER BY id LIMIT 1000`
        )
        const pagePlan = page[0]!["QUERY PLAN"]
        const pageScans = scansOf(((typeof pagePlan === "string" ? JSON.parse(pagePlan) : pagePlan) as ReadonlyArray<{ readonly Plan: PlanNode }>)[0]!.Plan, "limit_orders")
        const pageRoot = ((typeof pagePlan === "string" ? JSON.parse(pagePlan) : pagePlan) as ReadonlyArray<{ readonly Plan: PlanNode & Record<string, unknown> }>)[0]!.Plan
        const removed = (n: PlanNode & Record<string, unknown>): number => Number(n["Rows Removed by Filter"] ?? 0) + (n.Plans ?? []).reduce((sum, c) => sum + removed(c as PlanNode & Record<string, unknown>), 0)
        yield* Effect.logInfo(`orders.server: loadOpen's page scans of limit_orders: ${pageScans.join(", ")}; ${pageRoot["Actual Rows"]} rows returned, ${removed(pageRoot)} read and filtered out`)
        // By the open orders' id index (migration 0047): no closed order read and filtered out.
        expect(pageScans).toEqual(["Index Scan limit_orders_open_id_idx"])
        expect(removed(pageRoot)).toBe(0)

        // A partition's assignment (migration 0048): the open rows' partitions recorded (none had
        // one), then a page of one partition reads by the partition index and no other partition's
        // row, and the repair with nothing left to record reads no row.
        const openNow = (yield* sqlA<{ n: number }>`SELECT count(*)::int AS n FROM limit_orders WHERE status = 'open'`)[0]!.n
        expect(openNow).toBeGreaterThanOrEqual(ROWS / 50)
        expect(yield* repairPartitions(4, 1000).pipe(Effect.provideService(SqlClient.SqlClient, sqlA))).toBe(openNow)
        yield* sqlA`ANALYZE limit_orders`
        const planOf = (statement: { compile: () => readonly [string, ReadonlyArray<unknown>] }) =>
          Effect.map(sqlA.unsafe<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement.compile()[0]}`, statement.compile()[1]), (rows) => {
            const plan = rows[0]!["QUERY PLAN"]
            return ((typeof plan === "string" ? JSON.parse(plan) : plan) as ReadonlyArray<{ readonly Plan: PlanNode & Record<string, unknown> }>)[0]!.Plan
          })
        const indexesOf = (n: PlanNode): Array<string> => [...(n["Index Name"] === undefined ? [] : [n["Index Name"]]), ...(n.Plans ?? []).flatMap(indexesOf)]
        const partitionPage = yield* planOf(openOfPartitionPage(sqlA, 4, 1, BigInt(ROWS), "", 1000))
        yield* Effect.logInfo(`orders.server: a partition's page scans ${scansOf(partitionPage, "limit_orders").join(", ")}; ${partitionPage["Actual Rows"]} rows, ${removed(partitionPage)} read and filtered out`)
        expect(scansOf(partitionPage, "limit_orders")).toEqual(["Index Scan limit_orders_open_partition_idx"])
        expect(Number(partitionPage["Actual Rows"])).toBeGreaterThan(0)
        expect(removed(partitionPage)).toBe(0)
        for (const range of STALE_RANGES) {
          const stale = yield* planOf(stalePartitionPage(sqlA, range, 4, 1000))
          yield* Effect.logInfo(`orders.server: the repair's page (${range}) reads ${indexesOf(stale).join(", ")}; ${removed(stale)} read and filtered out`)
          expect(scansOf(stale, "limit_orders").filter((x) => x.startsWith("Seq Scan"))).toEqual([])
          expect(indexesOf(stale)).toEqual([range === "none" ? "limit_orders_open_unpartitioned_idx" : "limit_orders_open_partition_idx"])
          expect(removed(stale)).toBe(0)
        }
      })
    )
  }, 120_000)
})

/**
 * The partition repair (`repairPartitions`, migration 0048) when two processes are handed the same
 * partition at once (a rebalance overlap: both claim it, both repair, both load it), on a real
 * server where their statements run concurrently. The interleaving is held deterministically: the
 * test's own transaction cancels one stale order and keeps its row locked, so the first process's
 * repair statement waits on it with every other stale row it updates locked, and the second's
 * waits on those (both observed in `pg_stat_activity`); then the cancel commits.
 * Each open order's partition is recorded once (the two repairs' counts add up to the stale open
 * rows: the second's statement, re-checking its rows after the first committed, finds them recorded
 * and writes none), the cancelled one not at all, and each process's load of the partition, and a
 * load of every partition, reads each open order of it exactly once. The statement's fence
 * (`status = 'open' AND bus_partitions` other than the count) is what makes it so: without the count
 * condition the second repair writes every row again (its count doubles), without the status
 * condition the cancelled row is recorded and counted.
 */
describe.skipIf(serverUrl === undefined)(`the partition repair on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  const PARTITIONS = 4
  const pools = suitePools()

  it("two processes claiming and repairing the same partition at once record each open order's partition once and each load it whole, each order once; a cancel committed under the repair is not recorded", async () => {
    const { sqlA, sqlB, sqlT } = pools
    const provide = (sql: SqlClient.SqlClient) => Effect.provideService(SqlClient.SqlClient, sql)
    const mintOf = (i: number) => `So1RepairRace${i % 20}`
    const partOf = (i: number) => partitionForKey(marketKeyOf({ chain: "solana", mint: mintOf(i) }), PARTITIONS)
    // 40 open orders over 20 markets: 30 created without the count (written before the column, or by
    // a create that did not know it), 10 recorded for another count (2 partitions).
    const ids = Array.from({ length: 40 }, (_, i) => `ord_repair_${String(i).padStart(2, "0")}`)
    for (const [i, id] of ids.entries())
      await run(createOrder({ ...newOrder(id), mint: mintOf(i) }, Date.now(), Number.MAX_SAFE_INTEGER, i < 30 ? undefined : 2).pipe(provide(sqlT)))
    const partition = [0, 1, 2, 3].reduce((best, p) => (ids.filter((_, i) => partOf(i) === p).length > ids.filter((_, i) => partOf(i) === best).length ? p : best), 0)
    const held = ids[5]!
    const openIds = ids.filter((id) => id !== held)
    const expectedOf = (p: number) => openIds.filter((id) => partOf(ids.indexOf(id)) === p).sort()
    expect(expectedOf(partition).length).toBeGreaterThanOrEqual(3)
    const waiting = sqlT<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%UPDATE limit_orders o SET bus_partition = v.part%'`.pipe(
      Effect.map((r) => r[0]!.n)
    )

    // What an assignment does (`OrderTriggers.assigned`): claim, repair for the bus's count, load the partition (small pages).
    const assign = (sql: SqlClient.SqlClient) =>
      Effect.gen(function* () {
        const epoch = yield* Effect.flatMap(pgCheckpointStore(10), (s) => s.claim(OWNER, partition))
        const written = yield* repairPartitions(PARTITIONS, 1000)
        const loaded: Array<string> = []
        yield* loadOpenOfPartition(PARTITIONS, partition, 7, (rows) => loaded.push(...rows.map((r) => r.id)))
        return { epoch, written, loaded }
      }).pipe(provide(sql))

    const [a, b] = await run(
      Effect.gen(function* () {
        // The test's cancel of one stale order, its row held until released.
        const locked = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          sqlT.withTransaction(
            Effect.gen(function* () {
              yield* sqlT`UPDATE limit_orders SET status = 'cancelled', updated_at = now(), rev = nextval('limit_orders_rev') WHERE id = ${held} AND status = 'open'`
              yield* Deferred.succeed(locked, undefined)
              yield* Deferred.await(release)
            })
          )
        )
        yield* Deferred.await(locked)
        const first = yield* Effect.fork(assign(sqlA))
        // Released however the checks below end, so a failed wait fails the test instead of leaving
        // the holder's transaction open and both repairs blocked until the test's timeout.
        const second = yield* Effect.gen(function* () {
          yield* Effect.promise(() => eventually(async () => (await run(waiting)) === 1, { what: "the first repair to wait on the cancelled row", deadlineMs: 20_000 }))
          const second = yield* Effect.fork(assign(sqlB))
          yield* Effect.promise(() => eventually(async () => (await run(waiting)) === 2, { what: "the second repair to wait on the first's rows", deadlineMs: 20_000 }))
          expect(Option.isNone(yield* Fiber.poll(first))).toBe(true)
          expect(Option.isNone(yield* Fiber.poll(second))).toBe(true)
          return second
        }).pipe(Effect.ensuring(Deferred.succeed(release, undefined)))
        yield* Fiber.join(holder)
        return [yield* Fiber.join(first), yield* Fiber.join(second)] as const
      })
    )

    // Both claimed (the later claim a newer epoch); the stale open rows were recorded once between them.
    expect(Math.abs(a.epoch - b.epoch)).toBe(1)
    expect(a.written + b.written).toBe(openIds.length)
    const rows = await run(sqlT<{ id: string; status: string; bus_partition: number | null; bus_partitions: number | null }>`
      SELECT id, status, bus_partition, bus_partitions FROM limit_orders WHERE id LIKE 'ord_repair_%' ORDER BY id`)
    expect(rows.find((r) => r.id === held)).toEqual({ id: held, status: "cancelled", bus_partition: null, bus_partitions: null })
    expect(rows.filter((r) => r.id !== held).map((r) => [r.id, r.status, r.bus_partition, r.bus_partitions])).toEqual(
      openIds.map((id) => [id, "open", partOf(ids.indexOf(id)), PARTITIONS])
    )
    // Each process loaded the whole partition, each order once, and not the cancelled one.
    expect(a.loaded).toEqual(expectedOf(partition))
    expect(b.loaded).toEqual(expectedOf(partition))
    // And every partition's load, together: each open order exactly once.
    const all: Array<string> = []
    for (let p = 0; p < PARTITIONS; p++) {
      const loaded: Array<string> = []
      await run(loadOpenOfPartition(PARTITIONS, p, 7, (page) => loaded.push(...page.map((r) => r.id))).pipe(provide(sqlT)))
      expect(loaded).toEqual(expectedOf(p))
      all.push(...loaded)
    }
    expect(all.sort()).toEqual(openIds)
    // A repair now finds nothing to record.
    expect(await run(repairPartitions(PARTITIONS, 1000).pipe(provide(sqlT)))).toBe(0)
  }, 90_000)
})

/**
 * The trigger statement's generic plan (issue 29). `markTriggeredAll` runs it as a named statement
 * (`Database.NamedStatements`), and after five executions of a named statement the server may plan
 * it once for any parameters (`plan_cache_mode = auto` keeps a generic plan its estimate finds no
 * dearer than the custom ones). A generic plan knows neither the id list nor the writes: it must
 * still read `limit_orders` by index. Prepared on ~10,000 open orders (50,000 rows) and run under
 * `EXPLAIN (ANALYZE)` with `force_custom_plan` and with `force_generic_plan` (each rolled back to a
 * savepoint, so both move the same open orders): no sequential scan of `limit_orders` in either,
 * the generic plan is generic (it still reads `id = ANY ($3)`, the custom one the ids), and the check sees a
 * sequential scan when index scans are off. docs/decisions.md, "The trigger statement's generic plan".
 */
describe.skipIf(serverUrl === undefined)(`the trigger statement's generic plan on a real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  const pools = suitePools()

  it("under force_generic_plan, as under force_custom_plan, the statement reads limit_orders by index on 10,000 open orders (the check sees a sequential scan with index scans off)", async () => {
    const { sqlA } = pools
    const ROWS = 50_000
    const TRIGGERS = 5
    await run(
      Effect.gen(function* () {
        yield* sqlA`
          INSERT INTO limit_orders (id, account_id, client_order_id, key_id, request_hash, chain, mint, side, trigger, amount_raw, level,
            slippage_bps, payer, after_position, status, created_at, updated_at, rev)
          SELECT 'ord_generic_' || lpad(g::text, 6, '0'), 'acct_generic_' || (g % 1000), 'c' || g, 'key_generic', 'h', 'solana', 'So1Generic' || (g % 2000), 'sell', 'limit', '1000', '1.5',
            100, 'main', '0', CASE WHEN g % 5 = 0 THEN 'open' WHEN g % 3 = 0 THEN 'cancelled' ELSE 'triggered' END, now(), now(), g
          FROM generate_series(1, ${ROWS}) AS g`
        const epochs: Array<number> = []
        for (let partition = 0; partition < 4; partition++) epochs.push(yield* Effect.flatMap(pgCheckpointStore(10), (s) => s.claim(OWNER, partition)))
        yield* sqlA`ANALYZE limit_orders`
        yield* sqlA`ANALYZE partition_owners`
        expect((yield* sqlA<{ n: number }>`SELECT count(*)::int AS n FROM limit_orders WHERE status = 'open'`)[0]!.n).toBe(ROWS / 5)
        // A crossing trade's triggers: a few open orders, fenced by their partitions' claims.
        const open = yield* sqlA<{ id: string }>`SELECT id FROM limit_orders WHERE status = 'open' ORDER BY id DESC LIMIT ${TRIGGERS}`
        const writes = open.map((r, i) => ({ ...write(r.id), fence: { owner: OWNER, partition: i % 4, epoch: epochs[i % 4]! } }))
        const [json, now, ids] = triggerValues(writes, Date.now()) as readonly [string, Date, ReadonlyArray<string>]
        const literal = (s: string) => `'${s.replaceAll("'", "''")}'`
        // EXECUTE takes no bind parameters: the same values as literals.
        const args = `${literal(json)}::jsonb, ${literal(now.toISOString())}::timestamptz, ARRAY[${ids.map(literal).join(", ")}]::text[]`
        type Analyzed = PlanNode & Record<string, unknown>
        const { custom, generic, genericNoIndex } = yield* sqlA.withTransaction(
          Effect.gen(function* () {
            yield* sqlA.unsafe(`PREPARE trigger_plan_probe AS ${TRIGGER_STATEMENT}`)
            // What the server picks by itself (`auto`) over seven executions: logged, not asserted (the server's choice).
            yield* sqlA.unsafe("SET LOCAL plan_cache_mode = auto")
            for (let i = 0; i < 7; i++) {
              yield* sqlA.unsafe("SAVEPOINT plan_probe")
              yield* sqlA.unsafe(`EXECUTE trigger_plan_probe(${args})`)
              yield* sqlA.unsafe("ROLLBACK TO SAVEPOINT plan_probe")
            }
            const [auto] = yield* sqlA<{ generic: number; custom: number }>`
              SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'trigger_plan_probe'`
            yield* Effect.logInfo(`orders.server: the trigger statement under plan_cache_mode = auto, 7 executions: ${auto!.custom} custom plans, ${auto!.generic} generic`)
            const explain = (mode: "force_custom_plan" | "force_generic_plan") =>
              Effect.gen(function* () {
                yield* sqlA.unsafe(`SET LOCAL plan_cache_mode = ${mode}`)
                yield* sqlA.unsafe("SAVEPOINT plan_probe")
                const rows = yield* sqlA.unsafe<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE trigger_plan_probe(${args})`)
                yield* sqlA.unsafe("ROLLBACK TO SAVEPOINT plan_probe")
                const plan = rows[0]!["QUERY PLAN"]
                return ((typeof plan === "string" ? JSON.parse(plan) : plan) as ReadonlyArray<{ readonly Plan: Analyzed } & Record<string, unknown>>)[0]!
              })
            const custom = yield* explain("force_custom_plan")
            const generic = yield* explain("force_generic_plan")
            // A generic plan is cached with its statement: prepared again, so it is planned under these settings.
            yield* sqlA.unsafe("DEALLOCATE trigger_plan_probe")
            yield* sqlA`SET LOCAL enable_indexscan = off`
            yield* sqlA`SET LOCAL enable_bitmapscan = off`
            yield* sqlA.unsafe(`PREPARE trigger_plan_probe AS ${TRIGGER_STATEMENT}`)
            const genericNoIndex = yield* explain("force_generic_plan")
            yield* sqlA.unsafe("DEALLOCATE trigger_plan_probe")
            return { custom, generic, genericNoIndex }
          })
        )
        const nodes = (n: Analyzed): Array<Analyzed> => [n, ...(n.Plans ?? []).flatMap((c) => nodes(c as Analyzed))]
        const updated = (e: { readonly Plan: Analyzed }) => nodes(e.Plan).find((n) => n["Node Type"] === "ModifyTable" && n["Relation Name"] === "limit_orders")?.["Actual Rows"]
        for (const [mode, e] of [["custom", custom], ["generic", generic], ["generic, index scans off", genericNoIndex]] as const)
          yield* Effect.logInfo(
            `orders.server: the trigger statement's ${mode} plan: ${scansOf(e.Plan, "limit_orders").join(", ")} (${nodes(e.Plan).filter((n) => n["Relation Name"] === "limit_orders" && n["Node Type"] !== "ModifyTable").map((n) => `${String(n["Index Cond"] ?? "")} ${String(n["Filter"] ?? "")} rows ${n["Actual Rows"]} x${n["Actual Loops"]}`).join("; ")}); planning ${e["Planning Time"]} ms, execution ${e["Execution Time"]} ms, ${updated(e)} orders moved`
          )
        for (const e of [custom, generic, genericNoIndex]) expect(updated(e)).toBe(TRIGGERS)
        // Generic: the plan still names the id list's parameter; the custom plan has the ids in its place.
        expect(JSON.stringify(generic.Plan)).toContain("ANY ($3)")
        expect(JSON.stringify(custom.Plan)).not.toContain("ANY ($3)")
        for (const e of [custom, generic]) {
          const scans = scansOf(e.Plan, "limit_orders").filter((s) => s !== "ModifyTable")
          expect(scans.length).toBeGreaterThan(0)
          expect(scans.filter((s) => s.startsWith("Seq Scan"))).toEqual([])
        }
        expect(scansOf(genericNoIndex.Plan, "limit_orders").some((s) => s.startsWith("Seq Scan"))).toBe(true)
        // And what each plan reads: an index scan that filters every open order (e.g. the partition
        // index whole, the id list as its filter) is no Seq Scan but reads them all. Rows read by a
        // scan of limit_orders, over its loops: at most the triggered orders, with the index; the
        // open orders' count without it (the check's own control).
        const rowsRead = (e: { readonly Plan: Analyzed }) =>
          nodes(e.Plan)
            .filter((n) => n["Relation Name"] === "limit_orders" && n["Node Type"] !== "ModifyTable")
            .map((n) => (Number(n["Actual Rows"] ?? 0) + Number(n["Rows Removed by Filter"] ?? 0) + Number(n["Rows Removed by Index Recheck"] ?? 0)) * Number(n["Actual Loops"] ?? 1))
        for (const e of [custom, generic]) for (const read of rowsRead(e)) expect(read).toBeLessThanOrEqual(TRIGGERS)
        expect(Math.max(...rowsRead(genericNoIndex))).toBeGreaterThan(TRIGGERS)
      }).pipe(Effect.provideService(SqlClient.SqlClient, sqlA))
    )
  }, 120_000)
})
