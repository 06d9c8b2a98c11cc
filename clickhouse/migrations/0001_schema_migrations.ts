/**
 * The bookkeeping table the migration runner records applied migrations in.
 *
 * ReplacingMergeTree keyed by `migration_id`: ClickHouse has no locks, so two processes
 * starting at once may both apply (idempotent, `IF NOT EXISTS`) DDL and both record it; the
 * duplicate record collapses on merge and the runner reads ids with DISTINCT meanwhile.
 */
import type { ClickHouseMigration } from "./index.js"

export const schemaMigrations: ClickHouseMigration = {
  id: 1,
  name: "schema_migrations",
  statements: [
    `CREATE TABLE IF NOT EXISTS schema_migrations (
      migration_id UInt32,
      name String,
      applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
    ) ENGINE = ReplacingMergeTree ORDER BY migration_id`
  ]
}
