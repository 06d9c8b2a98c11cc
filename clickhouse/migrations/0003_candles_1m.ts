/**
 * One-minute OHLCV: `candles_1m` (AggregatingMergeTree) fed by the materialized view
 * `candles_1m_mv` on every insert into `trades`, plus `candles_1m_dirty`, the minutes the view
 * may have wrong. Coarser intervals are rolled up from the minutes at query time
 * (`queries/Candles.ts`).
 *
 * Invariants:
 * - A view sees inserts, not merges: a copy of a trade inserted twice is counted twice, and a
 *   retraction cannot be subtracted from a min/max/argMin. So the view is exact only for
 *   minutes the writer never touched twice. The writer guarantees it marks a minute in
 *   `candles_1m_dirty` *before* inserting anything that could make the view wrong there (a
 *   retraction of a stored trade, a retried or redelivered insert whose rows are already
 *   stored), and candle reads recompute marked minutes from `trades FINAL`. A mark is never
 *   removed, so a read is exact whatever the view holds for that minute.
 * - Open and close are `argMin`/`argMax` of the price by `position`, the chain's total order
 *   (fixed-width, so string order is chain order). Within a minute of one mint it is the
 *   `(ts, position)` order whenever block time does not run backwards, and the truth when it
 *   does; a `(ts, position)` tuple key measured about 4x slower to aggregate (bench notes).
 * - Volumes are exact `UInt256` sums (quote: gross notional; tokens).
 * - Retraction rows (`retracted = 1`) never enter the view.
 */
import type { ClickHouseMigration } from "./index.js"

export const candles1m: ClickHouseMigration = {
  id: 3,
  name: "candles_1m",
  statements: [
    `CREATE TABLE IF NOT EXISTS candles_1m (
      chain LowCardinality(String),
      mint String,
      bucket DateTime('UTC'),
      open AggregateFunction(argMin, Float64, String),
      close AggregateFunction(argMax, Float64, String),
      high SimpleAggregateFunction(max, Float64),
      low SimpleAggregateFunction(min, Float64),
      volume_quote_raw SimpleAggregateFunction(sum, UInt256),
      volume_token_raw SimpleAggregateFunction(sum, UInt256),
      trades SimpleAggregateFunction(sum, UInt64),
      buys SimpleAggregateFunction(sum, UInt64),
      sells SimpleAggregateFunction(sum, UInt64)
    ) ENGINE = AggregatingMergeTree
    PARTITION BY toYYYYMM(bucket)
    ORDER BY (chain, mint, bucket)
    SETTINGS primary_key_ratio_of_unique_prefix_values_to_skip_suffix_columns = 1`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS candles_1m_mv TO candles_1m AS
    SELECT
      chain,
      mint,
      toStartOfMinute(ts) AS bucket,
      argMinState(price, position) AS open,
      argMaxState(price, position) AS close,
      max(price) AS high,
      min(price) AS low,
      sum(quote_volume_raw) AS volume_quote_raw,
      sum(token_volume_raw) AS volume_token_raw,
      toUInt64(count()) AS trades,
      toUInt64(countIf(side = 'buy')) AS buys,
      toUInt64(countIf(side = 'sell')) AS sells
    FROM trades
    WHERE retracted = 0
    GROUP BY chain, mint, bucket`,
    `CREATE TABLE IF NOT EXISTS candles_1m_dirty (
      chain LowCardinality(String),
      mint String,
      bucket DateTime('UTC'),
      marked_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = ReplacingMergeTree(marked_at)
    ORDER BY (chain, mint, bucket)`
  ]
}
