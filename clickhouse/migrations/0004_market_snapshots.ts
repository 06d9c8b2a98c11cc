/**
 * `market_snapshots`: the periodic market-state history the actor layer records (through
 * `writer/MarketSnapshotWriter.ts`) for research reads: lifecycle, price, curve progress, real
 * quote raised, 24 h volume, market cap and migration status of one mint at one instant.
 *
 * Invariants:
 * - Idempotent on `(chain, mint, ts)`: a snapshot re-sent for the same instant (a retried
 *   flush) collapses on merge; reads that must not see it twice use `FINAL`.
 * - Raw amounts are exact `UInt256` quote units; `price` and `market_cap_usd` are floats for
 *   analytics only, like `trades.price`.
 * - `lifecycle` and `migration_status` are the spec's enumerations (3.6), so a value outside
 *   them fails the insert instead of being stored.
 */
import type { ClickHouseMigration } from "./index.js"

export const marketSnapshots: ClickHouseMigration = {
  id: 4,
  name: "market_snapshots",
  statements: [
    `CREATE TABLE IF NOT EXISTS market_snapshots (
      chain LowCardinality(String),
      mint String,
      ts DateTime64(3, 'UTC'),
      lifecycle Enum8('trading' = 1, 'completed' = 2, 'migrated' = 3, 'recovery' = 4),
      price Float64,
      progress_bps UInt16,
      real_quote_raw UInt256,
      volume_24h_quote_raw UInt256,
      market_cap_quote_raw UInt256,
      market_cap_usd Nullable(Float64),
      migration_status Enum8('not_started' = 1, 'in_progress' = 2, 'completed' = 3, 'delayed' = 4, 'cancelled' = 5),
      position String
    ) ENGINE = ReplacingMergeTree
    PARTITION BY toYYYYMM(ts)
    ORDER BY (chain, mint, ts)
    SETTINGS primary_key_ratio_of_unique_prefix_values_to_skip_suffix_columns = 1`
  ]
}
