/**
 * The embedded PostgreSQL behind `Database.layer` when no `DATABASE_URL` is set: a PGlite
 * instance (PostgreSQL compiled to WASM, in this process) served over the PostgreSQL wire
 * protocol by `@electric-sql/pglite-socket`, so the engine talks to it through exactly the
 * same `@effect/sql-pg` client, SQL and migrations as to a real server.
 *
 * Invariants:
 * - PGlite is one session. The socket server serializes protocol messages through one
 *   query queue and, while a transaction is open, only runs messages from the connection
 *   that opened it; but it splits each client write into single messages, so two clients
 *   issuing extended-protocol queries at once could interleave on the shared unnamed
 *   statement. The engine therefore uses ONE client connection (`Database.layer` sets the
 *   pool to 1). The server admits `socketConnectionsMax` (2) sockets only so that a
 *   replacement connection is not refused while a dropped one's close is still being
 *   processed; nothing else should connect while the engine runs.
 * - One process per data directory: PGlite keeps no lock of its own (a second instance on
 *   the same directory opens happily and corrupts it), so `<dataDir>/pg.lock` holds the
 *   owner's pid. A lock left by a dead process is taken over.
 * - Listens on 127.0.0.1 with an OS-assigned port (port 0, so no probe-then-bind race) and
 *   trust authentication: reachable from this machine only.
 * - Scoped: releasing the scope stops the socket server (closing its sockets), then closes
 *   PGlite (which flushes to disk), then releases the lock. The caller closes its client
 *   before this scope's finalizers run.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** Sockets the embedded server admits (see the module note: the engine uses one). */
export const socketConnectionsMax = 2

export interface EmbeddedPostgresAddress {
  readonly host: string
  readonly port: number
  readonly username: string
  readonly database: string
  /** `<dataDir>/pg`, or undefined for an in-memory database. */
  readonly pgDataDir: string | undefined
}

const host = "127.0.0.1"

/**
 * Starts PGlite (persisted under `<dataDir>/pg`, or in memory when `dataDir` is undefined)
 * and its socket server; the scope stops both.
 */
export const startEmbeddedPostgres = (
  dataDir: string | undefined
): Effect.Effect<EmbeddedPostgresAddress, SqlError, Scope.Scope> =>
  Effect.gen(function* () {
    const pgDataDir = dataDir === undefined ? undefined : path.join(dataDir, "pg")
    if (dataDir !== undefined) yield* acquireDirectoryLock(dataDir)

    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create(pgDataDir === undefined ? {} : { dataDir: pgDataDir }),
        catch: (cause) =>
          new SqlError({ cause, message: `Embedded PostgreSQL: cannot open PGlite at ${pgDataDir ?? "memory://"}` })
      }),
      (db) =>
        Effect.tryPromise(() => db.close()).pipe(
          Effect.catchAll((error) => Effect.logWarning("Embedded PostgreSQL: PGlite close failed", error))
        )
    )

    const server = new PGLiteSocketServer({ db, host, port: 0, maxConnections: socketConnectionsMax })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => server.start(),
        catch: (cause) => new SqlError({ cause, message: "Embedded PostgreSQL: cannot start the socket server" })
      }),
      () =>
        Effect.tryPromise(() => server.stop()).pipe(
          Effect.catchAll((error) => Effect.logWarning("Embedded PostgreSQL: socket server stop failed", error))
        )
    )

    // `getServerConn()` is `host:port` once listening (the OS picked the port).
    const conn = server.getServerConn()
    const port = Number(conn.slice(conn.lastIndexOf(":") + 1))
    if (!Number.isInteger(port) || port <= 0) {
      return yield* new SqlError({ message: `Embedded PostgreSQL: unexpected listen address ${conn}` })
    }
    return { host, port, username: "postgres", database: "postgres", pgDataDir }
  })

/**
 * Takes `<dataDir>/pg.lock` (O_EXCL create holding our pid) for the scope. An existing lock
 * whose pid is alive (this process included) refuses; a dead owner's lock is replaced.
 */
const acquireDirectoryLock = (dataDir: string): Effect.Effect<void, SqlError, Scope.Scope> => {
  const lockPath = path.join(dataDir, "pg.lock")
  const take = Effect.try({
    try: () => {
      fs.mkdirSync(dataDir, { recursive: true })
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          fs.writeFileSync(lockPath, `${process.pid}\n`, { flag: "wx" })
          return
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
          const owner = Number.parseInt(readOrEmpty(lockPath), 10)
          if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
            throw new Error(
              `data directory ${dataDir} is in use by process ${owner}` +
                (owner === process.pid ? " (this process: the database is already open)" : "") +
                `; remove ${lockPath} only if that process is not a curvestream engine`
            )
          }
          fs.rmSync(lockPath, { force: true })
        }
      }
      throw new Error(`could not take ${lockPath}`)
    },
    catch: (cause) =>
      new SqlError({
        cause,
        message: `Embedded PostgreSQL: ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })
  const release = Effect.sync(() => {
    // Only remove a lock that is still ours.
    if (readOrEmpty(lockPath).trim() === String(process.pid)) fs.rmSync(lockPath, { force: true })
  })
  return Effect.acquireRelease(take, () => release)
}

const readOrEmpty = (file: string): string => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return ""
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
