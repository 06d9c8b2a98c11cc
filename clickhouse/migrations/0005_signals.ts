/**
 * `signals`: one row per detected signal (actors/signals, docs/signals.md), written by
 * `writer/SignalWriter.ts`; the tape (`/v1/signals`), the stream's snapshot and the strategy
 * lab read it.
 *
 * Invariants:
 * - Idempotent on the signal id. Ids are deterministic (a replay re-emits the same id with the
 *   same `ts`), the sorting key is `(ts, id)`, so ReplacingMergeTree collapses copies on merge;
 *   reads that must not see a copy twice use `FINAL`.
 * - Money is exact: `size_usd` and `mcap_usd` are `Decimal(38, 6)` (micro-USD, as the signal's
 *   decimal strings), never floats.
 * - `pattern`, `direction` and `quality` are the spec's value sets as enums, so a value outside
 *   them fails the insert instead of being stored.
 * - `wallet_groups` is parallel to `wallets`: the tracked groups of each wallet (empty for an
 *   untracked one), filled by the writer from the tracking data, for the strategy lab's per-wallet
 *   `groups` / `groups_all` / `min_group_wallets` filters.
 * - Monthly partitions by `ts`: tape reads are time ranges (newest first), replays prune months.
 *   A bloom filter on `asset` serves the `asset` filter and per-token reads.
 */
import type { ClickHouseMigration } from "./index.js"

export const signals: ClickHouseMigration = {
  id: 5,
  name: "signals",
  statements: [
    `CREATE TABLE IF NOT EXISTS signals (
      id String,
      pattern Enum8('confluence' = 1, 'deployer' = 2, 'large_move' = 3, 'dormancy' = 4, 'intra_book' = 5, 'new_ticker' = 6, 'distribution' = 7, 'kol_mention' = 8),
      chain LowCardinality(String),
      asset String,
      symbol Nullable(String),
      direction Enum8('in' = 1, 'out' = 2),
      wallets Array(String),
      wallet_ids Array(String),
      groups Array(String),
      wallet_groups Array(Array(String)),
      size_usd Nullable(Decimal(38, 6)),
      mcap_usd Nullable(Decimal(38, 6)),
      age_minutes Nullable(UInt32),
      venue LowCardinality(Nullable(String)),
      confidence UInt8,
      quality Enum8('high' = 1, 'medium' = 2, 'low' = 3),
      ts DateTime64(3, 'UTC'),
      position String,
      details String,
      INDEX asset_bloom asset TYPE bloom_filter GRANULARITY 4
    ) ENGINE = ReplacingMergeTree
    PARTITION BY toYYYYMM(ts)
    ORDER BY (ts, id)`
  ]
}
