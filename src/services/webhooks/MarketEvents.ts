/**
 * The market transitions' webhook events (keys document section 6: `curve.graduated`,
 * `migration.completed`, `migration.delayed`), from the market actors' `Announced` outputs to the
 * outbox, each once per market transition and endpoint.
 *
 * Invariants:
 * - Never lost: the actors' runtime hands the notices of every drain to `offer` synchronously,
 *   after marking the states they came with dirty; a checkpoint flush takes every pending notice
 *   when it takes its states (`take`) and saves only after they are in the outbox. So no
 *   checkpoint (and no committed offset, which waits for the checkpoints) covers a transition whose
 *   event is not recorded: after a crash the bus replays the transition and it is announced again.
 * - Never twice: the event id is a digest of the transition (`noticeKey`: event, chain, mint, and
 *   the attempts for a delay), and the outbox records an event id once per endpoint
 *   (`enqueueKeyed`). A replay, a restart, a retried flush or a partition's previous owner writing
 *   the same transition records nothing more.
 * - Recipients: the account that launched the market through this service (`launched_tokens`);
 *   a market launched elsewhere notifies nobody (docs/decisions.md).
 * - Bounded: a notice comes only with a changed state, and every flush takes all of them, so at
 *   most the notices of the states one flush interval changed wait here (a market announces at
 *   most a graduation, a migration and a delay per drain).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { MarketNotice, MarketOutput } from "../../../actors/market/MarketActor.js"
import { enqueueKeyed } from "./Outbox.js"

/** What names a transition: one graduation and one migration per market, one delay per exhausted budget. */
export const noticeKey = (n: MarketNotice): string =>
  n.event === "migration.delayed" ? `${n.event}:${n.chain}:${n.mint}:${n.attempts}` : `${n.event}:${n.chain}:${n.mint}`

/** The event's `data` (keys document section 6 payload core). */
export const noticeData = (n: MarketNotice): Record<string, unknown> => {
  switch (n.event) {
    case "curve.graduated":
      return { chain: n.chain, mint: n.mint, curve: n.curve }
    case "migration.completed":
      return { chain: n.chain, mint: n.mint, pool: n.pool, migratedAt: new Date(n.migratedAtMs).toISOString() }
    case "migration.delayed":
      return { chain: n.chain, mint: n.mint, curve: n.curve, attempts: n.attempts, ...(n.lastError !== null ? { lastError: n.lastError } : {}) }
  }
}

/** Writes notices to the outbox in one transaction; idempotent. */
export const enqueueNotices = (notices: ReadonlyArray<MarketNotice>): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.reduce(notices, 0, (n, notice) =>
        Effect.map(enqueueKeyed(noticeKey(notice), notice.event, noticeData(notice), { launchedBy: { chain: notice.chain, mint: notice.mint } }), (k) => n + k)
      )
    )
  )

/** The notices between the shards and the checkpoint flush (see the module note). */
export class MarketEventOutbox {
  private pending: Array<MarketNotice> = []
  private recorded = 0

  constructor(private readonly sql: SqlClient.SqlClient) {}

  /** The runtime's `outputs` hook: keeps the `Announced` notices. Synchronous. */
  readonly offer = (_key: string, outputs: ReadonlyArray<MarketOutput>): void => {
    for (const o of outputs) if (o._tag === "Announced") this.pending.push(o.notice)
  }

  /**
   * The runtime's `beforeCheckpoint` hook: takes every pending notice now (synchronously) and
   * returns the write of exactly those (the flush retries it with its save).
   */
  readonly take = (): Effect.Effect<void, SqlError> => {
    if (this.pending.length === 0) return Effect.void
    const taken = this.pending
    this.pending = []
    return enqueueNotices(taken).pipe(
      Effect.tap((n) => Effect.sync(() => (this.recorded += n))),
      Effect.asVoid,
      Effect.provideService(SqlClient.SqlClient, this.sql)
    )
  }

  stats(): { readonly pending: number; readonly recorded: number } {
    return { pending: this.pending.length, recorded: this.recorded }
  }
}

/** The actors' `announcements` option (`MarketActorsOptions`): the market events through this outbox. */
export const marketEventHooks = (sql: SqlClient.SqlClient) => {
  const outbox = new MarketEventOutbox(sql)
  return { outputs: outbox.offer, beforeCheckpoint: outbox.take }
}
