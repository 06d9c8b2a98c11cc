/**
 * The one failure of the ClickHouse subsystem, whichever executor (chDB or a server) ran the
 * statement. Callers branch on `reason`:
 *
 * - `Unavailable`: the engine or server could not be reached, or the session is closed.
 *   Retryable.
 * - `QueryFailed`: ClickHouse refused or failed the statement (syntax, unknown table, a row
 *   that does not parse, ...). `clickhouseCode` carries ClickHouse's own error code.
 * - `InvalidRequest`: refused here before anything ran (a table or database name that is not
 *   a plain identifier, a parameter value that cannot be bound, rows that cannot be JSON).
 * - `InsertTooLarge`: an insert over the stated row or byte bound (see `ClickHouse.ts`).
 *   Nothing was written.
 * - `MigrationFailed`: a schema migration failed at start; the message names it.
 */
import { Schema } from "effect"

export const ClickHouseErrorReason = Schema.Literal(
  "Unavailable",
  "QueryFailed",
  "InvalidRequest",
  "InsertTooLarge",
  "MigrationFailed"
)
export type ClickHouseErrorReason = typeof ClickHouseErrorReason.Type

export class ClickHouseError extends Schema.TaggedError<ClickHouseError>()("ClickHouseError", {
  reason: ClickHouseErrorReason,
  message: Schema.String,
  clickhouseCode: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect)
}) {
  get retryable(): boolean {
    return this.reason === "Unavailable"
  }
}
