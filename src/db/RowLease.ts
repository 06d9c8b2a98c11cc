/**
 * Single ownership of rows that move money, across engine processes sharing one database: a lease
 * per row (`row_leases`, migration 0020) naming the process that drives it and when that claim
 * ends. Generic over what a row is (`kind` and a text `key`), so any table whose in-flight rows a
 * process drives in the background (launch attempts, staking operations, atomic bundles) can use it.
 *
 * Invariants:
 * - One owner at a time: `take` succeeds only on a row with no lease or an ended one (its owner
 *   died or stopped renewing), in one statement, so of racing processes exactly one takes it, and
 *   never a row this process itself drives now.
 * - An owner keeps its lease while its run is alive (`whileHeld` renews it every third of
 *   `leaseMs`) and gives it back when the run ends. A renewal that finds the row taken interrupts
 *   the run (`RowLeaseLost`): a process that stalled past its lease stops driving the row.
 * - Writes that must not happen twice check the lease in their own transaction (`fenceIn`): it
 *   extends the lease if this process still owns it, and otherwise dies with `RowLeaseLost`,
 *   rolling the transaction back. A takeover's statement waits for that transaction's row lock.
 *   A write made in one statement instead runs the renewal as its first CTE (`renewal`) and gates
 *   every write on it; `fenced` then dies the same way when it did not hold.
 * - Expiry is the database's clock (`clock_timestamp()`), so processes on different hosts never
 *   compare their own clocks.
 * - `clearAll` is for a database only one process can open (embedded PGlite): every lease in it
 *   was left by a process that is gone.
 * - `runAlone` makes a long-running job single-active across processes (one row names the job):
 *   the others stand by and the first to find the lease ended takes the job over.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Cause, Duration, Effect, Exit, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"

/** Lease length by default: 30 s, renewed every 10 s while its run is alive. */
export const ROW_LEASE_MS = 30_000

/** The row is driven by another process now (this one's lease ended and was taken over). */
export class RowLeaseLost extends Schema.TaggedError<RowLeaseLost>()("RowLeaseLost", {
  kind: Schema.String,
  key: Schema.String,
  message: Schema.String
}) {}

export interface RowLeases {
  /** This process's id, written as `owner` (host, pid and a random part: unique per instance). */
  readonly owner: string
  readonly leaseMs: number
  /** Takes the row's lease if it has none or an ended one; whether this process now owns it. */
  readonly take: (kind: string, key: string) => Effect.Effect<boolean, SqlError>
  /**
   * Sets this process as the row's owner whatever the lease says, in the caller's transaction:
   * for the statement that makes the row in flight (the caller's own row lock says no other run
   * may drive it).
   */
  readonly claimIn: (kind: string, key: string) => Effect.Effect<void, SqlError, SqlClient.SqlClient>
  /** `claimIn`'s write as a statement of its own or a CTE of the caller's (the row's first write rides with it: one round trip). */
  readonly claim: (kind: string, key: string) => Statement.Fragment
  /** In the caller's transaction: extends this process's lease, or dies with `RowLeaseLost`. */
  readonly fenceIn: (kind: string, key: string) => Effect.Effect<void, SqlError, SqlClient.SqlClient>
  /**
   * `fenceIn` folded into one statement of the caller's (no transaction needed around it): the
   * lease's renewal as the body of a CTE (`UPDATE row_leases … RETURNING key`, one row when this
   * process still owns the lease), for a statement that gates every write of its own on that CTE
   * (`WHERE EXISTS (SELECT 1 FROM <it>)`), so a statement that found the lease lost wrote nothing.
   * `fenced` says which: the statement's answer whether the renewal returned its row; not, it dies
   * with `RowLeaseLost` as `fenceIn` does.
   */
  readonly renewal: (kind: string, key: string) => Statement.Fragment
  readonly fenced: <A>(kind: string, key: string, held: boolean, value: A) => Effect.Effect<A>
  /** Extends this process's lease; false when another process owns the row now. */
  readonly renew: (kind: string, key: string) => Effect.Effect<boolean, SqlError>
  /** Gives the lease back (only if this process still owns it). */
  readonly release: (kind: string, key: string) => Effect.Effect<void, SqlError>
  /** Which of `keys` have a lease that has not ended (any owner). */
  readonly live: (kind: string, keys: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, SqlError>
  /**
   * Runs `self` as the row's owner (the lease already taken): renews the lease while it runs,
   * interrupts it with `RowLeaseLost` if the row is taken over, and gives the lease back when it ends.
   */
  readonly whileHeld: <A, E, R>(kind: string, key: string, self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | RowLeaseLost, R>
}

export interface RowLeaseOptions {
  /** How long a lease lasts without renewal (default `ROW_LEASE_MS`). */
  readonly leaseMs?: number
  /** The owner id (default: host, pid and a random part). */
  readonly owner?: string
}

/** Deletes every lease: only where no other process can hold one (a database one process opens). */
export const clearAll: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`DELETE FROM row_leases`))

const lost = (kind: string, key: string) =>
  new RowLeaseLost({ kind, key, message: `the ${kind} row ${key} is driven by another process now (this one's lease ended)` })

/** A new process-instance id: host, pid and a random part (unique per instance, readable in a row). */
export const processOwner = (): string => `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`

export const makeRowLeases = (sql: SqlClient.SqlClient, options: RowLeaseOptions = {}): RowLeases => {
  const leaseMs = options.leaseMs ?? ROW_LEASE_MS
  const owner = options.owner ?? processOwner()
  const ends = (s: SqlClient.SqlClient) => s`clock_timestamp() + ${leaseMs} * interval '1 millisecond'`
  const renewalBy = (s: SqlClient.SqlClient, kind: string, key: string) =>
    s`UPDATE row_leases SET expires_at = ${ends(s)} WHERE kind = ${kind} AND key = ${key} AND owner = ${owner} RETURNING key`
  const renewedBy = (s: SqlClient.SqlClient, kind: string, key: string) =>
    Effect.map(s<{ key: string }>`${renewalBy(s, kind, key)}`, (rows) => rows.length === 1)

  const take: RowLeases["take"] = (kind, key) =>
    Effect.map(
      sql<{ owner: string }>`
        INSERT INTO row_leases (kind, key, owner, expires_at) VALUES (${kind}, ${key}, ${owner}, ${ends(sql)})
        ON CONFLICT (kind, key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
        WHERE row_leases.expires_at <= clock_timestamp()
        RETURNING owner`,
      (rows) => rows[0]?.owner === owner
    )

  const claimBy = (s: SqlClient.SqlClient, kind: string, key: string) => s`
        INSERT INTO row_leases (kind, key, owner, expires_at) VALUES (${kind}, ${key}, ${owner}, ${ends(s)})
        ON CONFLICT (kind, key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at`
  const claimIn: RowLeases["claimIn"] = (kind, key) => Effect.flatMap(SqlClient.SqlClient, (s) => Effect.asVoid(s`${claimBy(s, kind, key)}`))
  const claim: RowLeases["claim"] = (kind, key) => claimBy(sql, kind, key)

  const fenceIn: RowLeases["fenceIn"] = (kind, key) =>
    Effect.flatMap(SqlClient.SqlClient, (s) => Effect.flatMap(renewedBy(s, kind, key), (held) => (held ? Effect.void : Effect.die(lost(kind, key)))))

  const renewal: RowLeases["renewal"] = (kind, key) => renewalBy(sql, kind, key)
  const fenced: RowLeases["fenced"] = (kind, key, held, value) => (held ? Effect.succeed(value) : Effect.die(lost(kind, key)))

  const renew: RowLeases["renew"] = (kind, key) => renewedBy(sql, kind, key)

  const release: RowLeases["release"] = (kind, key) => Effect.asVoid(sql`DELETE FROM row_leases WHERE kind = ${kind} AND key = ${key} AND owner = ${owner}`)

  const live: RowLeases["live"] = (kind, keys) =>
    keys.length === 0
      ? Effect.succeed(new Set<string>())
      : Effect.map(
          sql<{ key: string }>`SELECT key FROM row_leases WHERE kind = ${kind} AND key IN ${sql.in(keys as Array<string>)} AND expires_at > clock_timestamp()`,
          (rows) => new Set(rows.map((r) => r.key))
        )

  const whileHeld: RowLeases["whileHeld"] = <A, E, R>(kind: string, key: string, self: Effect.Effect<A, E, R>) => {
    // Renews every third of the lease. A renewal that cannot reach the database is tried again at
    // the next tick (the lease still has two thirds left); one that finds the row taken ends the run.
    const keeper: Effect.Effect<never, RowLeaseLost> = Effect.sleep(Duration.millis(leaseMs / 3)).pipe(
      Effect.zipRight(renew(kind, key).pipe(Effect.orElseSucceed(() => true))),
      Effect.flatMap((held) => (held ? keeper : Effect.fail(lost(kind, key))))
    )
    return Effect.raceFirst(self, Effect.suspend(() => keeper)).pipe(
      // A fenced write that found the row taken died with `RowLeaseLost`: a failure of the run.
      Effect.catchSomeDefect((d) => (d instanceof RowLeaseLost ? Option.some(Effect.fail(d)) : Option.none())),
      Effect.onExit((exit) =>
        Exit.isFailure(exit) && Cause.failureOption(exit.cause).pipe(Option.exists((e) => e instanceof RowLeaseLost))
          ? Effect.void
          : release(kind, key).pipe(Effect.catchAll((e) => Effect.logWarning(`a ${kind} lease was not given back; it ends within ${leaseMs} ms`, e)))
      )
    )
  }

  return { owner, leaseMs, take, claimIn, claim, fenceIn, renewal, fenced, renew, release, live, whileHeld }
}

export interface RunAloneOptions {
  /** How often a standby process looks whether the lease ended (default a third of the lease). */
  readonly standbyMs?: number
}

/**
 * Runs the long-running `self` in at most one process at a time, the one holding the (`kind`,
 * `key`) lease; every other process running it stands by, trying to take the lease every
 * `standbyMs`, and takes over once the holder's lease ended (it died, or stalled past its lease:
 * its run is then interrupted). If `self` ends or fails, the lease is given back and this process
 * competes again. Never ends; its failures are logged.
 */
export const runAlone = <E, R>(leases: RowLeases, kind: string, key: string, self: Effect.Effect<void, E, R>, options: RunAloneOptions = {}): Effect.Effect<never, never, R> => {
  const standby = Effect.sleep(Duration.millis(options.standbyMs ?? leases.leaseMs / 3))
  const round: Effect.Effect<void, never, R> = leases.take(kind, key).pipe(
    Effect.catchAll((e) => Effect.as(Effect.logWarning(`${key}: the lease could not be read; standing by`, e), false)),
    Effect.flatMap((took) =>
      took
        ? Effect.logInfo(`${key}: this process is the active one`).pipe(
            Effect.zipRight(leases.whileHeld(kind, key, self)),
            Effect.catchAllCause((cause) => Effect.logWarning(`${key}: no longer the active one; standing by`, cause)),
            Effect.zipRight(standby)
          )
        : standby
    )
  )
  return Effect.forever(round)
}
