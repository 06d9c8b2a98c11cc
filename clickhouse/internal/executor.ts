/**
 * What `ClickHouse.ts` needs from an executor: run a statement, read JSONEachRow rows, send a
 * JSONEachRow payload. Validation, bounds and serialization live in front of it (in
 * `ClickHouse.ts`) so both executors enforce exactly the same rules and send the same bytes.
 */
import type { Effect } from "effect"
import type { ClickHouseError } from "../ClickHouseError.js"

export type Params = Readonly<Record<string, unknown>>

export interface Executor {
  readonly kind: "chdb" | "server"
  /** Rows of a JSONEachRow result, parsed. */
  readonly query: (sql: string, params: Params | undefined) => Effect.Effect<ReadonlyArray<unknown>, ClickHouseError>
  readonly command: (sql: string, params: Params | undefined) => Effect.Effect<void, ClickHouseError>
  /** `INSERT INTO <table> FORMAT JSONEachRow` with an already validated table and payload. */
  readonly insertJsonEachRow: (table: string, payload: Buffer) => Effect.Effect<void, ClickHouseError>
  readonly ping: Effect.Effect<void, ClickHouseError>
}

/** Splits a JSONEachRow body into parsed rows (throws on malformed JSON; callers wrap). */
export const parseJsonEachRow = (text: string): Array<unknown> => {
  const rows: Array<unknown> = []
  let start = 0
  while (start < text.length) {
    let end = text.indexOf("\n", start)
    if (end === -1) end = text.length
    if (end > start) rows.push(JSON.parse(text.slice(start, end)))
    start = end + 1
  }
  return rows
}
