/**
 * `trades`: one row per chain trade, written by `writer/TradeWriter.ts` from `chain.events`.
 *
 * Invariants:
 * - Idempotent on the event id. A trade's sorting key is `(chain, mint, ts, position, id)`, and
 *   every copy of one event carries the same key (the bus contract: a redelivered event is the
 *   same bytes), so ReplacingMergeTree collapses copies on merge. Reads that must not see a copy
 *   twice use `FINAL` (a merge at read time over the granules the key filter selects).
 * - Reorgs (`Retracted`) are rows too: the writer inserts a copy of the retracted trade with
 *   `retracted = 1` and a higher `version`; `ReplacingMergeTree(version, retracted)` keeps the
 *   newest version of a key and `FINAL` drops it when that version is a retraction. A trade
 *   re-included later (same id) gets a still higher version and is visible again.
 * - Money columns are `UInt256`: every raw amount (18-decimal wei on Hood, lamports on Solana)
 *   is exact up to 2^256 - 1, the EVM word, so nothing a chain can emit overflows or rounds.
 *   JSON carries them as decimal strings.
 * - `price` is the only float: quote raw units per token raw unit, the fee-free execution
 *   price of the print (what the venue exchanged, before its fee), for charts and analytics.
 *   A 2^-52 relative rounding cannot matter on a chart, and no amount is ever derived from it;
 *   curve math and every stored amount are integers (the raw columns are the truth), because
 *   there one rounded unit is a wrong balance.
 * - `version` is the writer's hybrid logical clock (see `writer/TradeWriter.ts`).
 * - Monthly partitions: a replay over a time window prunes whole partitions; every copy of a
 *   trade has the same `ts`, so duplicates always meet in one partition and collapse.
 * - The whole primary key stays in memory
 *   (`primary_key_ratio_of_unique_prefix_values_to_skip_suffix_columns = 1`): by default
 *   ClickHouse stops loading `ts` when most granules start a new `(chain, mint)`, which is the
 *   case with thousands of small mints, and then a time range inside a hot mint reads the whole
 *   mint (measured: 48 granules instead of 1 for one minute of a 1M-trade mint).
 * - No index for wallet reads: a `bloom_filter` on `trader` was measured on 10M trades and did
 *   not help (wallet reads 22-70 ms either way; the trader column scans about as fast as the
 *   per-granule filters read), so it is left out rather than paid for on every insert. A
 *   `trader`-ordered projection or table is the next step if wallet reads need to be faster.
 */
import type { ClickHouseMigration } from "./index.js"

export const trades: ClickHouseMigration = {
  id: 2,
  name: "trades",
  statements: [
    `CREATE TABLE IF NOT EXISTS trades (
      id String,
      chain LowCardinality(String),
      mint String,
      venue Enum8('curve' = 1, 'pool' = 2),
      side Enum8('buy' = 1, 'sell' = 2),
      trader String,
      amount_in_raw UInt256,
      amount_out_raw UInt256,
      fee_raw UInt256,
      refund_raw UInt256,
      quote_consumed_raw UInt256,
      quote_reserve_raw UInt256,
      token_reserve_raw UInt256,
      real_quote_raw UInt256,
      -- Derived at insert by ClickHouse itself, so the writer, the candle view and ad-hoc
      -- loads (the bench's INSERT ... SELECT) can never disagree on them.
      -- Gross quote notional: what a buyer paid (refund excluded) or a seller's proceeds before the fee.
      quote_volume_raw UInt256 MATERIALIZED if(side = 'buy', quote_consumed_raw, amount_out_raw + fee_raw),
      token_volume_raw UInt256 MATERIALIZED if(side = 'buy', amount_out_raw, amount_in_raw),
      -- Fee-free execution price (quote the venue exchanged / tokens); the post-trade reserve
      -- ratio only for a degenerate zero-token print.
      price Float64 MATERIALIZED multiIf(
        token_volume_raw > 0,
        toFloat64(if(side = 'buy', quote_consumed_raw - least(fee_raw, quote_consumed_raw), amount_out_raw + fee_raw)) / toFloat64(token_volume_raw),
        token_reserve_raw > 0,
        toFloat64(quote_reserve_raw) / toFloat64(token_reserve_raw),
        0),
      crosses_graduation Bool,
      position String,
      ts DateTime64(3, 'UTC'),
      signature String,
      version UInt64,
      retracted UInt8
    ) ENGINE = ReplacingMergeTree(version, retracted)
    PARTITION BY toYYYYMM(ts)
    PRIMARY KEY (chain, mint, ts)
    ORDER BY (chain, mint, ts, position, id)
    SETTINGS primary_key_ratio_of_unique_prefix_values_to_skip_suffix_columns = 1`
  ]
}
