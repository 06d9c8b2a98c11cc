/**
 * Per-key and per-client rate limits that hold across API replicas (issue 31 "Limits that hold
 * across replicas"): each process keeps deciding from its own in-memory sliding window
 * (`api/RateLimiter.ts`, the fast path, no I/O per request) and adds what the other processes
 * admitted in the same windows, which this module exchanges through PostgreSQL
 * (`rate_window_counts`, migration 0029) every `SHARED_LIMIT_SYNC_MS`.
 *
 * Invariants:
 * - A process writes only its own rows (`owner`), its count of a (scope, subject, window) as an
 *   absolute number (an upsert that never lowers it), so a lost or repeated sync double-counts
 *   nothing; it reads the sum of every other owner's rows.
 * - Tolerance: a replica learns what the others admitted at most one sync late (plus a slow
 *   round trip), so across N replicas a subject can get at most the limit plus what the other N-1
 *   admit for it in one sync interval; with the 250 ms default and a limit of 120/min per replica
 *   rate that is ≤ 1 request per other replica. A subject a replica has not seen yet starts at
 *   the others' counts from its next sync.
 * - Bounded: at most `maxSubjects` subjects are followed (the least recently asked about is
 *   forgotten: it then reads as unknown to the others, more lenient, never refusing wrongly); a
 *   sync writes and reads in chunks of `CHUNK` and deletes the rows whose window has left every
 *   sliding estimate (`expires_at_ms`).
 * - Without a database shared by several processes (embedded PGlite) nothing is shared and no
 *   sync runs: the limiters are the in-memory ones.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Duration, Effect, Schedule, type Scope } from "effect"

/** How often each API process exchanges its counts (the tolerance above). */
export const SHARED_LIMIT_SYNC_MS = 250
const CHUNK = 2_000

/** What the other processes admitted for one subject: in the current window and the one before. */
export interface PeerCounts {
  current: number
  previous: number
}

interface Followed {
  readonly scope: string
  readonly subject: string
  readonly windowMs: number
  lastAskedMs: number
}

interface Pending {
  readonly scope: string
  readonly subject: string
  readonly windowStartMs: number
  readonly windowMs: number
  count: number
}

/** The others' sums for one subject: up to two windows (start → count). */
type Remote = Array<readonly [number, number]>

const keyOf = (scope: string, subject: string) => `${scope}/${subject}`

export class SharedWindowCounts {
  readonly #followed = new Map<string, Followed>()
  readonly #pending = new Map<string, Pending>()
  #remote = new Map<string, Remote>()
  /** Reused answer of `peers` (read at once by the caller): no allocation per request. */
  readonly #answer: PeerCounts = { current: 0, previous: 0 }

  constructor(
    readonly owner: string,
    readonly maxSubjects: number = 100_000
  ) {}

  /** Subjects followed now (bounded by `maxSubjects`). */
  get size(): number {
    return this.#followed.size
  }

  /** What the others admitted for the subject in the window starting at `windowStartMs` and the one before; follows the subject from now on. */
  peers(scope: string, subject: string, windowStartMs: number, windowMs: number, nowMs: number): PeerCounts {
    const key = keyOf(scope, subject)
    const followed = this.#followed.get(key)
    if (followed === undefined) {
      if (this.#followed.size >= this.maxSubjects) this.#followed.delete(this.#followed.keys().next().value!)
      this.#followed.set(key, { scope, subject, windowMs, lastAskedMs: nowMs })
    } else {
      followed.lastAskedMs = nowMs
    }
    const answer = this.#answer
    answer.current = 0
    answer.previous = 0
    const remote = this.#remote.get(key)
    if (remote !== undefined) {
      for (const [start, n] of remote) {
        if (start === windowStartMs) answer.current = n
        else if (start === windowStartMs - windowMs) answer.previous = n
      }
    }
    return answer
  }

  /** This process's count for the subject's window after it admitted a request (written at the next sync). */
  counted(scope: string, subject: string, windowStartMs: number, windowMs: number, count: number): void {
    // Per window: a window that ended since the last sync still writes its final count.
    const key = `${keyOf(scope, subject)}@${windowStartMs}`
    const pending = this.#pending.get(key)
    if (pending !== undefined) {
      pending.count = count
      return
    }
    // Bounded like the followed subjects (two windows each at most between syncs).
    if (this.#pending.size >= 2 * this.maxSubjects) return
    this.#pending.set(key, { scope, subject, windowStartMs, windowMs, count })
  }

  /** One exchange: writes this process's counts, reads the others' for the followed subjects, deletes rows no estimate needs. */
  readonly sync = (nowMs: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
    Effect.gen(this, function* () {
      const sql = yield* SqlClient.SqlClient
      const pending = [...this.#pending.values()]
      this.#pending.clear()
      for (let i = 0; i < pending.length; i += CHUNK) {
        const rows = pending.slice(i, i + CHUNK).map((p) => ({
          scope: p.scope,
          subject: p.subject,
          window_start_ms: p.windowStartMs,
          owner: this.owner,
          count: p.count,
          expires_at_ms: p.windowStartMs + 2 * p.windowMs
        }))
        yield* sql`
          INSERT INTO rate_window_counts ${sql.insert(rows)}
          ON CONFLICT (scope, subject, window_start_ms, owner)
          DO UPDATE SET count = GREATEST(rate_window_counts.count, EXCLUDED.count)`
      }
      // Subjects asked about within their last two windows; the rest are forgotten.
      const keys: Array<string> = []
      for (const [key, f] of this.#followed) {
        if (nowMs - f.lastAskedMs > 2 * f.windowMs) this.#followed.delete(key)
        else keys.push(key)
      }
      const remote = new Map<string, Remote>()
      for (let i = 0; i < keys.length; i += CHUNK) {
        const rows = yield* sql<{ key: string; window_start_ms: string; n: number }>`
          SELECT scope || '/' || subject AS key, window_start_ms::text AS window_start_ms, sum(count)::int AS n
          FROM rate_window_counts
          WHERE owner <> ${this.owner} AND expires_at_ms > ${nowMs} AND scope || '/' || subject IN ${sql.in(keys.slice(i, i + CHUNK))}
          GROUP BY scope, subject, window_start_ms`
        for (const r of rows) {
          const list = remote.get(r.key)
          const entry = [Number(r.window_start_ms), r.n] as const
          if (list === undefined) remote.set(r.key, [entry])
          else list.push(entry)
        }
      }
      this.#remote = remote
      yield* sql`DELETE FROM rate_window_counts WHERE expires_at_ms <= ${nowMs}`
    })
}

/** A limiter's share of the counts: its scope name (one per limit: `req:600`, `quote`) and the process's counts. */
export interface SharedScope {
  readonly counts: SharedWindowCounts
  readonly scope: string
}

/** The limiter's share under `scope`, or none when nothing is shared. */
export const shared = (counts: SharedWindowCounts | undefined, scope: string): SharedScope | undefined =>
  counts === undefined ? undefined : { counts, scope }

/**
 * The process's shared counts and their sync every `SHARED_LIMIT_SYNC_MS` for the scope's life
 * (a failed sync is logged and the next one runs: the limits stay this process's meanwhile).
 */
export const startSharedLimits = (owner: string): Effect.Effect<SharedWindowCounts, never, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const counts = new SharedWindowCounts(owner)
    const once = Effect.flatMap(Clock.currentTimeMillis, counts.sync).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("the shared rate-limit sync failed; it runs again", cause))
    )
    yield* Effect.forkScoped(Effect.repeat(once, Schedule.spaced(Duration.millis(SHARED_LIMIT_SYNC_MS))))
    return counts
  })
