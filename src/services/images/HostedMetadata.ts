/**
 * The launches' metadata documents in PostgreSQL (`hosted_metadata`, migration 0038) and the
 * follower that keeps a read process's `TokenMetadataDirectory` in step with them (issue 31).
 *
 * Invariants:
 * - Content-addressed: a document's id is the SHA-256 of its bytes; storing is insert-if-absent,
 *   nothing updates or deletes a row (the same launch retried stores nothing new).
 * - The follower loads every stored document at start (newest `maxEntries`), then reads the rows
 *   past the last `seq` it saw every `intervalMs`, at most `batch` a read, so a document another
 *   process hosted reaches this one's reads within about one interval. A row whose bytes are not a
 *   document is skipped (logged), never fatal.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Option, Schedule, type Scope } from "effect"
import type { TokenMetadataDirectory } from "../../../actors/TokenMetadata.js"
import { metadataIdOf, viewOfDocument } from "./TokenMetadataDocument.js"

/** Stores a document unless its bytes are stored already; its id. */
export const storeMetadata = (bytes: Uint8Array, nowMs: number): Effect.Effect<string, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const id = metadataIdOf(bytes)
    return sql`INSERT INTO hosted_metadata (id, body, created_at) VALUES (${id}, ${bytes}, ${new Date(nowMs)}) ON CONFLICT (id) DO NOTHING`.pipe(Effect.as(id))
  })

export const readMetadata = (id: string): Effect.Effect<Option.Option<Uint8Array>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly body: Uint8Array }>`SELECT body FROM hosted_metadata WHERE id = ${id}`.pipe(Effect.map((rows) => Option.fromNullable(rows[0]?.body)))
  )

interface Row {
  readonly id: string
  readonly seq: string | number | bigint
  readonly body: Uint8Array
}

const addRows = (directory: TokenMetadataDirectory, rows: ReadonlyArray<Row>): Effect.Effect<void> =>
  Effect.forEach(
    rows,
    (r) => {
      const view = viewOfDocument(r.body)
      if (view === undefined) return Effect.logWarning(`hosted metadata ${r.id} is not a metadata document; skipped`)
      directory.add(r.id, view)
      return Effect.void
    },
    { discard: true }
  )

export interface MetadataFollowOptions {
  /** How often new documents are read (default 1,000 ms). */
  readonly intervalMs?: number
  /** Rows per read (default 1,000). */
  readonly batch?: number
}

/** Loads the stored documents into `directory` and follows new ones in the current scope. */
export const followMetadata = (
  directory: TokenMetadataDirectory,
  options: MetadataFollowOptions = {}
): Effect.Effect<void, SqlError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const batch = options.batch ?? 1_000
    // The newest `maxEntries` at start, added oldest first (the directory forgets its oldest).
    const initial = yield* sql<Row>`
      SELECT id, seq, body FROM (SELECT id, seq, body FROM hosted_metadata ORDER BY seq DESC LIMIT ${directory.maxEntries}) newest ORDER BY seq`
    yield* addRows(directory, initial)
    let since = initial.length === 0 ? 0n : BigInt(initial[initial.length - 1]!.seq)
    const readNew = Effect.gen(function* () {
      for (;;) {
        const rows = yield* sql<Row>`SELECT id, seq, body FROM hosted_metadata WHERE seq > ${since.toString()} ORDER BY seq LIMIT ${batch}`
        yield* addRows(directory, rows)
        if (rows.length > 0) since = BigInt(rows[rows.length - 1]!.seq)
        if (rows.length < batch) return
      }
    })
    yield* Effect.forkScoped(
      Effect.repeat(
        readNew.pipe(Effect.catchAll((e) => Effect.logWarning("hosted metadata not refreshed", e))),
        Schedule.spaced(Duration.millis(options.intervalMs ?? 1_000))
      )
    )
  })
