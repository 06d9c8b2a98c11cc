/**
 * Every ClickHouse DDL migration, in id order. Each is a list of single statements (the HTTP
 * interface runs one statement per request), written against the current database (chDB's
 * session `USE`s it, the server client sends it with every request) so the same text runs on
 * both executors. Statements must be idempotent (`IF NOT EXISTS`): with no locks in
 * ClickHouse, a migration interrupted half way, or run by two starting processes, is simply
 * run again. A migration with a `run` program (0006) makes that program safe to re-run from any
 * crash point, but not to run twice at once: a start on a ClickHouse server refuses it, and
 * `npm run clickhouse:migrate` runs it once with every engine stopped (ClickHouse.ts,
 * `MigrationPrograms`). A migration that has shipped is never edited; add a new one.
 */
import { schemaMigrations } from "./0001_schema_migrations.js"
import { trades } from "./0002_trades.js"
import { candles1m } from "./0003_candles_1m.js"
import { marketSnapshots } from "./0004_market_snapshots.js"
import { signals } from "./0005_signals.js"
import { tradesGranules } from "./0006_trades_granules.js"
import type { ClickHouseShape } from "../ClickHouse.js"
import type { ClickHouseError } from "../ClickHouseError.js"
import type { Effect } from "effect"

export interface ClickHouseMigration {
  readonly id: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
  /**
   * After the statements, what idempotent DDL cannot say (a table rebuilt with a copy): a
   * program that finishes from whatever state an interrupted run left, and does nothing once
   * done. `rebuild`: the rebuilt table's DDL, as data (what a hash of the migrations sees).
   */
  readonly run?: (ch: ClickHouseShape) => Effect.Effect<void, ClickHouseError>
  readonly rebuild?: string
}

export const migrations: ReadonlyArray<ClickHouseMigration> = [schemaMigrations, trades, candles1m, marketSnapshots, signals, tradesGranules]
