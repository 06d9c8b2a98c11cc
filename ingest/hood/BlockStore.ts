/**
 * The Hood ingester's durable state in PostgreSQL: the cursor (the last block whose events the
 * bus acknowledged) in `ingest_cursors`, and the recent block window (number, hash, parent hash
 * and the ids of the events each block carried) in `hood_ingest_blocks`, so a restarted ingester
 * still detects a reorg of blocks it published before the restart and can retract their events.
 *
 * `hood_ingest_blocks` comes from migration 0006; its rows are bounded by the window size per
 * source. Window and cursor move together in one transaction, after the bus acknowledged.
 * Also the graduated pools whose `Swap` logs the ingester reads (`hood_pools`, migration 0010),
 * learned from `CurveMigrated` and written in the same transaction.
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

/** A graduated pool: the token it trades, its layout, and where its swaps start to count. */
export interface PoolEntry {
  /** Checksummed. */
  readonly pool: string
  /** The token (lower-case, as Hood mints are). */
  readonly mint: string
  readonly tokenIsToken0: boolean
  readonly feePips: number
  /** The `CurveMigrated` event's position: earlier swaps (someone else's pool use) do not count. */
  readonly fromPosition: string
  readonly block: bigint
}

export const loadState = (
  source: string
): Effect.Effect<{ cursor: bigint | null; window: Array<WindowBlock>; pools: Array<PoolEntry> }, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const cursor = yield* readCursor(source)
    const rows = yield* sql<{ block: string; hash: string; parent_hash: string; events: string }>`
      SELECT b.block::text AS block, b.hash, b.parent_hash, b.events FROM hood_ingest_blocks b WHERE b.source = ${source} ORDER BY b.block`
    const window = rows
      .map((r) => ({
        number: BigInt(r.block),
        hash: r.hash,
        parentHash: r.parent_hash,
        events: (JSON.parse(r.events) as Array<[string, string, string, string]>).map(([mint, id, position, digest]) => ({ mint, id, position, digest }))
      }))
      // Rows above the cursor cannot exist (one transaction), but never trust a window past it.
      .filter((b) => cursor !== null && b.number <= cursor)
      // In block order (numerically: the window must end at its tip).
      .sort((a, b) => (a.number < b.number ? -1 : a.number > b.number ? 1 : 0))
    const poolRows = yield* sql<{ pool: string; mint: string; token_is_token0: boolean; fee_pips: number; from_position: string; block: string }>`
      SELECT p.pool, p.mint, p.token_is_token0, p.fee_pips, p.from_position, p.block::text AS block FROM hood_pools p WHERE p.source = ${source} ORDER BY p.block, p.pool`
    const pools = poolRows
      .map((r) => ({ pool: r.pool, mint: r.mint, tokenIsToken0: r.token_is_token0, feePips: r.fee_pips, fromPosition: r.from_position, block: BigInt(r.block) }))
      .filter((p) => cursor !== null && p.block <= cursor)
    return { cursor, window, pools }
  })

/**
 * Records a step: drops window and pool rows above `keepUpTo` (a reorg's ancestor), adds `added`
 * and `pools`, prunes window rows below `pruneBelow`, and sets the cursor, in one transaction.
 */
export const commitStep = (
  source: string,
  step: {
    readonly keepUpTo: bigint | null
    readonly added: ReadonlyArray<WindowBlock>
    readonly pruneBelow: bigint
    readonly cursor: bigint
    readonly pools?: ReadonlyArray<PoolEntry>
  }
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.gen(function* () {
        if (step.keepUpTo !== null) {
          yield* sql`DELETE FROM hood_ingest_blocks WHERE source = ${source} AND block > ${step.keepUpTo.toString()}::bigint`
          yield* sql`DELETE FROM hood_pools WHERE source = ${source} AND block > ${step.keepUpTo.toString()}::bigint`
        }
        for (const p of step.pools ?? []) {
          yield* sql`
            INSERT INTO hood_pools (source, pool, mint, token_is_token0, fee_pips, from_position, block)
            VALUES (${source}, ${p.pool}, ${p.mint}, ${p.tokenIsToken0}, ${p.feePips}, ${p.fromPosition}, ${p.block.toString()}::bigint)
            ON CONFLICT (source, pool) DO UPDATE SET mint = EXCLUDED.mint, token_is_token0 = EXCLUDED.token_is_token0,
              fee_pips = EXCLUDED.fee_pips, from_position = EXCLUDED.from_position, block = EXCLUDED.block`
        }
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
