/**
 * The `limit_orders` rows (migration 0025): create (idempotent on account and clientOrderId),
 * cancel, reads, what the actors' books load and follow, and the trigger writes.
 *
 * Invariants:
 * - Creates and cancels take one advisory lock and bump `rev` from a sequence inside it, so rows
 *   become visible in `rev` order and `changedSince` never skips one.
 * - A status leaves `open` only by a conditional update (`WHERE status = 'open'`): of any number
 *   of processes or replays trying to trigger, expire or cancel an order, exactly one moves it.
 * - `order.triggered` is written to the outbox in the transaction that flips the status, keyed by
 *   the order id, so it is recorded once per order and endpoint.
 * - `bus_partition`/`bus_partitions` (migration 0048) are a cache of the bus's mapping of the
 *   market key, never the truth: a read by partition (`loadOpenOfPartition`) is preceded by
 *   `repairPartitions` for the bus's count, which rewrites every open row computed for no count or
 *   another one. Written at create when the caller knows the count (the API's `BUS_PARTITIONS`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { BookOrder, OrderSide, Price, TriggerKind } from "../../../actors/orders/OrderBook.js"
import { formatPrice, formatPriceE18, parsePriceE18 } from "../../../actors/orders/OrderBook.js"
import { partitionForKey } from "../../../ingest/bus/Bus.js"
import { keyedEventId } from "../webhooks/Outbox.js"

export type OrderStatus = "open" | "triggered" | "executed" | "cancelled" | "expired" | "failed"
export const ORDER_STATUSES: ReadonlyArray<OrderStatus> = ["open", "triggered", "executed", "cancelled", "expired", "failed"]

export interface OrderRow {
  readonly id: string
  readonly accountId: string
  readonly clientOrderId: string
  readonly keyId: string
  readonly requestHash: string
  readonly chain: "solana" | "hood"
  readonly mint: string
  readonly side: OrderSide
  readonly trigger: TriggerKind
  readonly amountRaw: bigint
  /** `limit`: the target; `stop`: the stop price; exact decimal. Null for a trailing stop. */
  readonly level: string | null
  readonly trailBps: number | null
  /** A trailing stop's highest price seen, `num/den`. */
  readonly watermark: Price | null
  readonly slippageBps: number
  readonly payer: string
  readonly expiresAtMs: number | null
  readonly afterPosition: string
  readonly status: OrderStatus
  readonly createdAtMs: number
  readonly updatedAtMs: number
  readonly triggeredAtMs: number | null
  readonly triggerPrice: string | null
  readonly triggerPosition: string | null
  readonly triggerWatermark: string | null
  readonly triggerStopPrice: string | null
  readonly failureReason: string | null
  /** The trade the order executes as (`order:<id>`), set when it triggers. */
  readonly clientTradeId: string | null
  /** The executed trade's signature and amount out (executed orders). */
  readonly tradeSignature: string | null
  readonly amountOutRaw: bigint | null
  /** When it ended `executed` or `failed`. */
  readonly settledAtMs: number | null
  readonly failureMessage: string | null
  readonly rev: bigint
}

export type NewOrder = Omit<
  OrderRow,
  | "status"
  | "createdAtMs"
  | "updatedAtMs"
  | "triggeredAtMs"
  | "triggerPrice"
  | "triggerPosition"
  | "triggerWatermark"
  | "triggerStopPrice"
  | "failureReason"
  | "clientTradeId"
  | "tradeSignature"
  | "amountOutRaw"
  | "settledAtMs"
  | "failureMessage"
  | "rev"
>

interface Raw {
  readonly id: string
  readonly account_id: string
  readonly client_order_id: string
  readonly key_id: string
  readonly request_hash: string
  readonly chain: string
  readonly mint: string
  readonly side: string
  readonly trigger: string
  readonly amount_raw: string
  readonly level: string | null
  readonly trail_bps: number | null
  readonly watermark: string | null
  readonly slippage_bps: number
  readonly payer: string
  readonly expires_at: Date | string | null
  readonly after_position: string
  readonly status: string
  readonly created_at: Date | string
  readonly updated_at: Date | string
  readonly triggered_at: Date | string | null
  readonly trigger_price: string | null
  readonly trigger_position: string | null
  readonly trigger_watermark: string | null
  readonly trigger_stop_price: string | null
  readonly failure_reason: string | null
  readonly client_trade_id: string | null
  readonly trade_signature: string | null
  readonly amount_out_raw: string | null
  readonly settled_at: Date | string | null
  readonly failure_message: string | null
  readonly rev: string | number | bigint
}

const ms = (d: Date | string): number => (d instanceof Date ? d.getTime() : new Date(d).getTime())
const msOrNull = (d: Date | string | null): number | null => (d === null ? null : ms(d))

export const encodePrice = (p: Price): string => `${p.num}/${p.den}`
export const decodePrice = (text: string): Price => {
  const [num, den] = text.split("/")
  return { num: BigInt(num!), den: BigInt(den!) }
}

const toRow = (r: Raw): OrderRow => ({
  id: r.id,
  accountId: r.account_id,
  clientOrderId: r.client_order_id,
  keyId: r.key_id,
  requestHash: r.request_hash,
  chain: r.chain as OrderRow["chain"],
  mint: r.mint,
  side: r.side as OrderSide,
  trigger: r.trigger as TriggerKind,
  amountRaw: BigInt(r.amount_raw),
  level: r.level,
  trailBps: r.trail_bps,
  watermark: r.watermark === null ? null : decodePrice(r.watermark),
  slippageBps: r.slippage_bps,
  payer: r.payer,
  expiresAtMs: msOrNull(r.expires_at),
  afterPosition: r.after_position,
  status: r.status as OrderStatus,
  createdAtMs: ms(r.created_at),
  updatedAtMs: ms(r.updated_at),
  triggeredAtMs: msOrNull(r.triggered_at),
  triggerPrice: r.trigger_price,
  triggerPosition: r.trigger_position,
  triggerWatermark: r.trigger_watermark,
  triggerStopPrice: r.trigger_stop_price,
  failureReason: r.failure_reason,
  clientTradeId: r.client_trade_id,
  tradeSignature: r.trade_signature,
  amountOutRaw: r.amount_out_raw === null ? null : BigInt(r.amount_out_raw),
  settledAtMs: msOrNull(r.settled_at),
  failureMessage: r.failure_message,
  rev: BigInt(r.rev)
})

/** What the book keeps of an open order row. */
export const bookOrderOf = (r: OrderRow): BookOrder => ({
  id: r.id,
  side: r.side,
  trigger: r.trigger,
  levelE18: r.level === null ? 0n : parsePriceE18(r.level)!,
  trailBps: r.trailBps,
  watermark: r.watermark,
  expiresAtMs: r.expiresAtMs,
  afterPosition: r.afterPosition
})

/** The book's market key of a row (the market actor's key). */
export const marketKeyOf = (r: Pick<OrderRow, "chain" | "mint">): string => `${r.chain}:${r.mint}`

const lock = (sql: SqlClient.SqlClient) => sql`SELECT pg_advisory_xact_lock(hashtextextended('limit_orders', 0))`

export type CreateResult =
  | { readonly _tag: "Created"; readonly row: OrderRow }
  | { readonly _tag: "Existing"; readonly row: OrderRow }
  | { readonly _tag: "Full"; readonly open: number }

/**
 * Inserts the order unless the account already has its clientOrderId (then answers that row) or
 * already has `maxOpen` open orders. `busPartitions`: the bus's partition count, to record the
 * market's partition on the row (without it the actors' `repairPartitions` fills it).
 */
export const createOrder = (
  o: NewOrder,
  nowMs: number,
  maxOpen = Number.MAX_SAFE_INTEGER,
  busPartitions?: number
): Effect.Effect<CreateResult, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* lock(sql)
        const existing = yield* sql<Raw>`SELECT * FROM limit_orders WHERE account_id = ${o.accountId} AND client_order_id = ${o.clientOrderId}`
        if (existing.length > 0) return { _tag: "Existing", row: toRow(existing[0]!) } as const
        const open = yield* sql<{ n: string | number }>`SELECT count(*) AS n FROM limit_orders WHERE account_id = ${o.accountId} AND status = 'open'`
        if (Number(open[0]!.n) >= maxOpen) return { _tag: "Full", open: Number(open[0]!.n) } as const
        const now = new Date(nowMs)
        const partition = busPartitions === undefined ? null : partitionForKey(marketKeyOf(o), busPartitions)
        const rows = yield* sql<Raw>`
          INSERT INTO limit_orders (id, account_id, client_order_id, key_id, request_hash, chain, mint, side, trigger, amount_raw,
            level, trail_bps, watermark, slippage_bps, payer, expires_at, after_position, status, created_at, updated_at, rev,
            bus_partition, bus_partitions)
          VALUES (${o.id}, ${o.accountId}, ${o.clientOrderId}, ${o.keyId}, ${o.requestHash}, ${o.chain}, ${o.mint}, ${o.side},
            ${o.trigger}, ${o.amountRaw.toString()}, ${o.level}, ${o.trailBps}, ${o.watermark === null ? null : encodePrice(o.watermark)},
            ${o.slippageBps}, ${o.payer}, ${o.expiresAtMs === null ? null : new Date(o.expiresAtMs)}, ${o.afterPosition}, 'open',
            ${now}, ${now}, nextval('limit_orders_rev'), ${partition}, ${busPartitions ?? null})
          RETURNING *`
        return { _tag: "Created", row: toRow(rows[0]!) } as const
      })
    )
  )

export type CancelResult = { readonly _tag: "Cancelled"; readonly row: OrderRow } | { readonly _tag: "NotOpen"; readonly row: OrderRow } | { readonly _tag: "NotFound" }

/** Cancels an open order of the account (any status but `open` answers `NotOpen` with the row). */
export const cancelOrder = (accountId: string, id: string, nowMs: number): Effect.Effect<CancelResult, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* lock(sql)
        const rows = yield* sql<Raw>`
          UPDATE limit_orders SET status = 'cancelled', updated_at = ${new Date(nowMs)}, rev = nextval('limit_orders_rev')
          WHERE account_id = ${accountId} AND id = ${id} AND status = 'open'
          RETURNING *`
        if (rows.length > 0) return { _tag: "Cancelled", row: toRow(rows[0]!) } as const
        const found = yield* sql<Raw>`SELECT * FROM limit_orders WHERE account_id = ${accountId} AND id = ${id}`
        return found.length === 0 ? ({ _tag: "NotFound" } as const) : ({ _tag: "NotOpen", row: toRow(found[0]!) } as const)
      })
    )
  )

export const readOrder = (accountId: string, id: string): Effect.Effect<OrderRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<Raw>`SELECT * FROM limit_orders WHERE account_id = ${accountId} AND id = ${id}`, (rows) => (rows.length === 0 ? undefined : toRow(rows[0]!)))
  )

/** One page, newest first, of the orders `filter` selects; `after` is the last row of the previous page (created_at, id). */
export const listOrders = (
  accountId: string,
  filter: { readonly status: OrderStatus | null; readonly chain: string | null; readonly mint: string | null },
  after: { readonly createdAtMs: number; readonly id: string } | null,
  limit: number
): Effect.Effect<ReadonlyArray<OrderRow>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<Raw>`
        SELECT * FROM limit_orders
        WHERE account_id = ${accountId}
          AND (${filter.status}::text IS NULL OR status = ${filter.status})
          AND (${filter.chain}::text IS NULL OR chain = ${filter.chain})
          AND (${filter.mint}::text IS NULL OR mint = ${filter.mint})
          AND (${after === null} OR (created_at, id) < (${after === null ? new Date(0) : new Date(after.createdAtMs)}, ${after?.id ?? ""}))
        ORDER BY created_at DESC, id DESC
        LIMIT ${limit}`,
      (rows) => rows.map(toRow)
    )
  )

/** Open orders placed through a key (the access change's effects). */
export const openOrdersOfKey = (keyId: string): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ n: string | number }>`SELECT count(*) AS n FROM limit_orders WHERE key_id = ${keyId} AND status = 'open'`, (rows) => Number(rows[0]!.n))
  )

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

/**
 * Records the bus partition of every open order whose row has none for `partitions` partitions
 * (written before migration 0048, by a create that did not know the count, or for another count):
 * such rows `pageSize` at a time (`STALE_RANGES`: a null count, a smaller one, a larger one, each
 * by its own index range), each one's partition computed by `partitionForKey` and written in one
 * statement a page, until a page comes back short. Answers the rows written; none, reading no
 * row, while every open row has the count. Idempotent: any number of processes with the same
 * count may run it at once.
 */
/**
 * Forgets the recorded partition of open rows a partition's read found recorded for it but of
 * another market partition (only a defect could write one: `createOrder` and the repair use the
 * bus's mapping), so the next repair, at the next assignment of any partition, records and loads them.
 */
export const forgetPartitions = (ids: ReadonlyArray<string>): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  ids.length === 0
    ? Effect.void
    : Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE limit_orders SET bus_partition = NULL, bus_partitions = NULL WHERE status = 'open' AND ${sql.in("id", ids)}`.pipe(Effect.asVoid))

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

export interface TriggerWrite {
  readonly id: string
  readonly price: Price
  readonly position: string
  readonly atMs: number
  readonly watermark: Price | null
  readonly stopPrice: Price | null
}

/** The `order.triggered` payload (keys document section 6). */
export const triggeredData = (r: OrderRow): Record<string, unknown> => ({
  clientOrderId: r.clientOrderId,
  chain: r.chain,
  mint: r.mint,
  side: r.side,
  amountRaw: r.amountRaw.toString(),
  targetPrice: r.level,
  price: r.triggerPrice,
  expiresAt: r.expiresAtMs === null ? null : new Date(r.expiresAtMs).toISOString(),
  trigger: r.trigger,
  ...(r.trigger === "trailing_stop" ? { trailBps: r.trailBps, trailWatermark: r.triggerWatermark, stopPrice: r.triggerStopPrice } : {})
})

/**
 * The ownership fence of a trigger write: the bus partition of the order's market and the epoch
 * this process claimed it at (`partition_owners`, migration 0017). Absent: not fenced (one actors
 * process consumes every partition).
 */
export interface TriggerFence {
  readonly owner: string
  readonly partition: number
  readonly epoch: number
}

/**
 * Flips open orders to `triggered` and records `order.triggered` for each, in ONE statement (so
 * one round trip and its own implicit transaction): the fence's `partition_owners` rows are read
 * `FOR SHARE` (a claim of the partition waits for it, and a write after a claim moves nothing of
 * that partition), the conditional update moves each order still `open`, and the outbox rows
 * of the orders it moved go to the account's endpoints subscribed to `order.triggered`, keyed by
 * the order (`keyedEventId`), with the payload `triggeredData` describes (built by the statement
 * from the row it updated: `OrderStore.test`/`orders.trigger.test` hold the two equal). Answers
 * the rows this call moved, in no particular order; an order not open (triggered already,
 * cancelled, expired) or fenced out is not among them.
 */
export const markTriggeredAll = (
  writes: ReadonlyArray<TriggerWrite & { readonly fence?: TriggerFence }>,
  nowMs: number
): Effect.Effect<ReadonlyArray<OrderRow>, SqlError, SqlClient.SqlClient> =>
  writes.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(triggerStatement(sql, writes, nowMs), (rows) => rows.map(toRow)))

/** `markTriggeredAll`'s statement (also what `orders.server`'s EXPLAIN reads); `writes` is not empty. */
export const triggerStatement = (sql: SqlClient.SqlClient, writes: ReadonlyArray<TriggerWrite & { readonly fence?: TriggerFence }>, nowMs: number) => {
  const now = new Date(nowMs)
  const values = JSON.stringify(
    writes.map((t) => ({
      id: t.id,
      event_id: keyedEventId(`order.triggered:${t.id}`),
      owner: t.fence?.owner ?? null,
      part: t.fence?.partition ?? null,
      epoch: t.fence?.epoch ?? null,
      at_ms: t.atMs,
      price: formatPrice(t.price),
      position: t.position,
      watermark: t.watermark === null ? null : formatPrice(t.watermark),
      stop_price: t.stopPrice === null ? null : formatPrice(t.stopPrice),
      stored_watermark: t.watermark === null ? null : encodePrice(t.watermark),
      trade_id: orderTradeId(t.id)
    }))
  )
  return sql<Raw & { readonly event_id: string }>`
      WITH v AS (
        SELECT * FROM jsonb_to_recordset(${values}::jsonb) AS v(id text, event_id text, owner text, part integer, epoch bigint,
          at_ms bigint, price text, position text, watermark text, stop_price text, stored_watermark text, trade_id text)
      ), owned AS (
        SELECT p.owner, p.partition, p.epoch FROM partition_owners p
        WHERE (p.owner, p.partition) IN (SELECT owner, part FROM v WHERE part IS NOT NULL)
        FOR SHARE
      ), t AS (
        UPDATE limit_orders o SET status = 'triggered', updated_at = ${now},
          triggered_at = timestamptz 'epoch' + v.at_ms * interval '1 millisecond',
          trigger_price = v.price, trigger_position = v.position, trigger_watermark = v.watermark,
          trigger_stop_price = v.stop_price, watermark = v.stored_watermark, client_trade_id = v.trade_id
        FROM v LEFT JOIN owned ON owned.owner = v.owner AND owned.partition = v.part
        WHERE o.id IN ${sql.in(writes.map((t) => t.id))} AND o.id = v.id AND o.status = 'open' AND (v.part IS NULL OR owned.epoch = v.epoch)
        RETURNING o.*, v.event_id
      ), d AS (
        INSERT INTO webhook_deliveries (id, endpoint_id, account_id, event, data, created_at, status, attempts, next_attempt_at)
        SELECT t.event_id, e.id, e.account_id, 'order.triggered',
          jsonb_build_object('clientOrderId', t.client_order_id, 'chain', t.chain, 'mint', t.mint, 'side', t.side,
            'amountRaw', t.amount_raw, 'targetPrice', t.level, 'price', t.trigger_price,
            'expiresAt', to_char(t.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'trigger', t.trigger)
          || CASE WHEN t.trigger = 'trailing_stop'
               THEN jsonb_build_object('trailBps', t.trail_bps, 'trailWatermark', t.trigger_watermark, 'stopPrice', t.trigger_stop_price)
               ELSE '{}'::jsonb END,
          ${now}, 'pending', 0, ${now}
        FROM t JOIN webhook_endpoints e ON e.account_id = t.account_id AND e.status = 'active' AND e.events ? 'order.triggered'
        ON CONFLICT (endpoint_id, id) DO NOTHING
      )
      SELECT * FROM t`
}

/** The `clientTradeId` an order executes as: one per order, so the trade rail executes it once. */
export const orderTradeId = (orderId: string): string => `order:${orderId}`

/** An order by id (the execution's read; any account). */
export const orderById = (id: string): Effect.Effect<OrderRow | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql<Raw>`SELECT * FROM limit_orders WHERE id = ${id}`, (rows) => (rows.length === 0 ? undefined : toRow(rows[0]!))))

/** The ids of `triggered` orders, oldest trigger first (the execution's recovery pass), at most `limit`. */
export const triggeredIds = (limit: number): Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT id FROM limit_orders WHERE status = 'triggered' ORDER BY triggered_at, id LIMIT ${limit}`, (rows) => rows.map((r) => r.id))
  )

export interface ExecutedWrite {
  readonly signature: string
  readonly amountOutRaw: bigint
}

/**
 * Flips a triggered order to `executed` with its trade (conditional: only from `triggered`, so it
 * happens once); true when this call moved it. The caller fences it (`RowLease.fenceIn`) in the
 * same transaction.
 */
export const markExecuted = (id: string, trade: ExecutedWrite, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`
        UPDATE limit_orders SET status = 'executed', updated_at = ${new Date(nowMs)}, settled_at = ${new Date(nowMs)},
          trade_signature = ${trade.signature}, amount_out_raw = ${trade.amountOutRaw.toString()}
        WHERE id = ${id} AND status = 'triggered'
        RETURNING id`,
      (rows) => rows.length > 0
    )
  )

/** Flips a triggered order to `failed` with the refusal's reason (conditional, once, fenced by the caller); true when this call moved it. */
export const markFailed = (id: string, failure: { readonly reason: string; readonly message: string; readonly signature: string | null }, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`
        UPDATE limit_orders SET status = 'failed', updated_at = ${new Date(nowMs)}, settled_at = ${new Date(nowMs)},
          failure_reason = ${failure.reason}, failure_message = ${failure.message.slice(0, 500)}, trade_signature = ${failure.signature}
        WHERE id = ${id} AND status = 'triggered'
        RETURNING id`,
      (rows) => rows.length > 0
    )
  )

/** Flips an open order to `expired` (fires nothing); true when this call moved it. */
export const markExpired = (id: string, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ id: string }>`UPDATE limit_orders SET status = 'expired', updated_at = ${new Date(nowMs)} WHERE id = ${id} AND status = 'open' RETURNING id`,
      (rows) => rows.length > 0
    )
  )

/** Records a trailing stop's raised watermark while it is open. */
export const saveWatermark = (id: string, watermark: Price): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(sql`UPDATE limit_orders SET watermark = ${encodePrice(watermark)} WHERE id = ${id} AND status = 'open'`)
  )

/** The levels as the API writes them. */
export const levelText = (levelE18: bigint): string => formatPriceE18(levelE18)
