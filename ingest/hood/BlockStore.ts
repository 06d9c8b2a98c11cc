/**
 * The Hood ingester's durable state in PostgreSQL: the cursor (the last block whose events the
 * bus acknowledged) in `ingest_cursors`, and the recent block window (number, hash, parent hash
 * and the ids of the events each block carried) in `hood_ingest_blocks`, so a restarted ingester
 * still detects a reorg of blocks it published before the restart and can retract their events.
 *
 * `hood_ingest_blocks` comes from migration 0006; its rows are bounded by the window size per
 * source. Window and cursor move together in one transaction, after the bus acknowledged.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { readCursor, writeCursor } from "../solana/CursorStore.js"

/** An event a block carried, as the window remembers it (enough to retract it or to recognize it again). */
export interface WindowEvent {
  readonly mint: string
  readonly id: string
  readonly position: string
  /** keccak256 of the event's bus encoding: an identical event in a new branch need not be retracted. */
  readonly digest: string
}

export interface WindowBlock {
  readonly number: bigint
  readonly hash: string
  readonly parentHash: string
  readonly events: ReadonlyArray<WindowEvent>
}

export const loadState = (source: string): Effect.Effect<{ cursor: bigint | null; window: Array<WindowBlock> }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cursor = yield* readCursor(source)
    const rows = yield* sql<{ block: string; hash: string; parent_hash: string; events: string }>`
      SELECT block::text AS block, hash, parent_hash, events FROM hood_ingest_blocks WHERE source = ${source} ORDER BY block`
    const window = rows
      .map((r) => ({
        number: BigInt(r.block),
        hash: r.hash,
        parentHash: r.parent_hash,
        events: (JSON.parse(r.events) as Array<[string, string, string, string]>).map(([mint, id, position, digest]) => ({ mint, id, position, digest }))
      }))
      // Rows above the cursor cannot exist (one transaction), but never trust a window past it.
      .filter((b) => cursor !== null && b.number <= cursor)
    return { cursor, window }
  })

/**
 * Records a step: drops window rows above `keepUpTo` (a reorg's ancestor), adds `added`, prunes
 * rows below `pruneBelow`, and sets the cursor, in one transaction.
 */
export const commitStep = (
  source: string,
  step: { readonly keepUpTo: bigint | null; readonly added: ReadonlyArray<WindowBlock>; readonly pruneBelow: bigint; readonly cursor: bigint }
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.gen(function* () {
        if (step.keepUpTo !== null) yield* sql`DELETE FROM hood_ingest_blocks WHERE source = ${source} AND block > ${step.keepUpTo.toString()}::bigint`
        for (const b of step.added) {
          const events = JSON.stringify(b.events.map((e) => [e.mint, e.id, e.position, e.digest]))
          yield* sql`
            INSERT INTO hood_ingest_blocks (source, block, hash, parent_hash, events)
            VALUES (${source}, ${b.number.toString()}::bigint, ${b.hash}, ${b.parentHash}, ${events})
            ON CONFLICT (source, block) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash, events = EXCLUDED.events`
        }
        yield* sql`DELETE FROM hood_ingest_blocks WHERE source = ${source} AND block < ${step.pruneBelow.toString()}::bigint`
        yield* writeCursor(source, step.cursor)
      })
    )
  })
