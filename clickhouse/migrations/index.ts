/**
 * Every ClickHouse DDL migration, in id order. Each is a list of single statements (the HTTP
 * interface runs one statement per request), written against the current database (chDB's
 * session `USE`s it, the server client sends it with every request) so the same text runs on
 * both executors. Statements must be idempotent (`IF NOT EXISTS`): with no locks in
 * ClickHouse, a migration interrupted half way, or run by two starting processes, is simply
 * run again. A migration that has shipped is never edited; add a new one.
 */
import { schemaMigrations } from "./0001_schema_migrations.js"
import { trades } from "./0002_trades.js"
import { candles1m } from "./0003_candles_1m.js"
import { marketSnapshots } from "./0004_market_snapshots.js"
import { signals } from "./0005_signals.js"

export interface ClickHouseMigration {
  readonly id: number
  readonly name: string
  readonly statements: ReadonlyArray<string>
}

export const migrations: ReadonlyArray<ClickHouseMigration> = [schemaMigrations, trades, candles1m, marketSnapshots, signals]
