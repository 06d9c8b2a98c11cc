/**
 * Insert helpers for the writers.
 *
 * - `insertSplitting`: one INSERT when the rows fit the service's bounds; when ClickHouse.ts
 *   refuses a batch as too large (`InsertTooLarge`), halves it and inserts the halves in order.
 *   Only for tables whose writers are idempotent per row (both writers' are), since the halves
 *   are separate inserts.
 * - `chunkByBytes` / `chunkRows`: split what is bound for `Array(String)` query parameters so
 *   that no parameter grows past a stated size (parameters travel in the URL on a server).
 */
import { Effect } from "effect"
import type { ClickHouseShape } from "../../ClickHouse.js"
import type { ClickHouseError } from "../../ClickHouseError.js"

export const insertSplitting = (
  ch: ClickHouseShape,
  table: string,
  rows: ReadonlyArray<Record<string, unknown>>
): Effect.Effect<void, ClickHouseError> =>
  ch.insert(table, rows).pipe(
    Effect.catchIf(
      (error) => error.reason === "InsertTooLarge" && rows.length > 1,
      () => {
        const half = Math.ceil(rows.length / 2)
        return Effect.zipRight(insertSplitting(ch, table, rows.slice(0, half)), insertSplitting(ch, table, rows.slice(half)))
      }
    )
  )

/** Consecutive groups of `items` whose lengths (plus a few bytes of quoting each) stay within `bytesMax`. */
export const chunkByBytes = (items: ReadonlyArray<string>, bytesMax: number): Array<Array<string>> => {
  const chunks: Array<Array<string>> = []
  let current: Array<string> = []
  let bytes = 0
  for (const item of items) {
    const size = Buffer.byteLength(item) + 4
    if (current.length > 0 && bytes + size > bytesMax) {
      chunks.push(current)
      current = []
      bytes = 0
    }
    current.push(item)
    bytes += size
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}

/** Consecutive groups of at most `rowsMax` trade rows whose ids and mints stay within `bytesMax`. */
export const chunkRows = <R extends { readonly id: string; readonly mint: string }>(
  rows: ReadonlyArray<R>,
  rowsMax: number,
  bytesMax: number
): Array<Array<R>> => {
  const chunks: Array<Array<R>> = []
  let current: Array<R> = []
  let bytes = 0
  for (const row of rows) {
    const size = Buffer.byteLength(row.id) + Buffer.byteLength(row.mint) + 8
    if (current.length > 0 && (current.length >= rowsMax || bytes + size > bytesMax)) {
      chunks.push(current)
      current = []
      bytes = 0
    }
    current.push(row)
    bytes += size
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}
