/**
 * The bus partition of an open limit order's market (owned by `src/services/orders/OrderStore.ts`):
 * `bus_partition` is `partitionForKey('chain:mint', bus_partitions)` (`ingest/bus/Bus.ts`, Kafka's
 * murmur2 partitioner, the bus's own mapping of the market key), and `bus_partitions` the
 * partition count it was computed for. A partition's assignment (`OrderTriggers.assigned`) reads
 * only the open orders of that partition by `limit_orders_open_partition_idx` instead of paging
 * every open order.
 *
 * `limit_orders_open_unpartitioned_idx` holds the open rows with no count (the repair's lookup;
 * empty once they are recorded, since the API writes the count at create).
 *
 * Both columns are null for the rows this migration finds: they are filled by the actors process
 * (`OrderStore.repairPartitions`, run before every assignment's read), not here, so the mapping
 * is written once in TypeScript and the count comes from the running bus's configuration
 * (`BUS_PARTITIONS`), which SQL does not know. A row written for another count (the count changed,
 * or an API process ran with an older configuration) is recomputed by the same repair.
 * docs/decisions.md, "Open orders by bus partition". Portable SQL (PGlite and PostgreSQL 15).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE limit_orders ADD COLUMN bus_partition integer`
  yield* sql`ALTER TABLE limit_orders ADD COLUMN bus_partitions integer`
  yield* sql`
    ALTER TABLE limit_orders ADD CONSTRAINT limit_orders_bus_partition_check CHECK (
      (bus_partition IS NULL AND bus_partitions IS NULL)
      OR (bus_partition IS NOT NULL AND bus_partitions IS NOT NULL AND bus_partitions > 0 AND bus_partition >= 0 AND bus_partition < bus_partitions)
    )`
  yield* sql`CREATE INDEX limit_orders_open_partition_idx ON limit_orders (bus_partitions, bus_partition, id) WHERE status = 'open'`
  // The repair's lookup of the open rows with no count: closed rows keep a null count, so the
  // column's statistics make "no count" look common and the planner reads every open row through
  // another index; an index of exactly those rows is empty once they are recorded, and is read.
  yield* sql`CREATE INDEX limit_orders_open_unpartitioned_idx ON limit_orders (id) WHERE status = 'open' AND bus_partitions IS NULL`
})
