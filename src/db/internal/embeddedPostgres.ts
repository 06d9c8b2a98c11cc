/**
 * The embedded PostgreSQL behind `Database.layer` when no `DATABASE_URL` is set: a PGlite
 * instance (PostgreSQL compiled to WASM) served over the PostgreSQL wire protocol by
 * `@electric-sql/pglite-socket`, so the engine talks to it through exactly the same
 * `@effect/sql-pg` client, SQL and migrations as to a real server. Both run on a worker thread
 * (`pgliteWorker.mjs`): PGlite executes synchronously, and on the main thread every checkpoint
 * flush stalled the event loop (HTTP, the bus's fsync completions) for milliseconds.
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
 * - The worker corks each connection's writes for the rest of the turn (`corkEachTurn.mjs`):
 *   pglite-socket writes every backend message on its own, so a reply went out as three to five
 *   `write` calls, each a wake-up and a read on this side; now one `writev` a reply.
 * - One process per data directory: PGlite keeps no lock of its own (a second instance on
 *   the same directory opens happily and corrupts it), so `<dataDir>/pg.lock` holds the
 *   owner's pid. A lock left by a dead process is taken over.
 * - Listens on 127.0.0.1 with an OS-assigned port (port 0, so no probe-then-bind race) and
 *   trust authentication: reachable from this machine only.
 * - Scoped: releasing the scope stops the socket server (closing its sockets), then closes
 *   PGlite (which flushes to disk), then ends the thread (terminated after `stopTimeoutMs`),
 *   then releases the lock. The caller closes its client
 *   before this scope's finalizers run.
 * - A new database (in memory, or a `<dataDir>/pg` without `PG_VERSION`) starts from the
 *   PGlite data directory tarball `CURVESTREAM_PGLITE_TEMPLATE` names, when it is set and the
 *   file reads (the test suite's migrated template, built by `test/support/pgliteTemplate.ts`:
 *   initdb in WASM costs seconds per database). Unset, the production default, nothing changes.
 *   Migrations run after either way; a template holding a migration this build does not ship
 *   fails them (see `Database.runMigrations`), so a template is only ever built from this code.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Worker } from "node:worker_threads"

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

/** The env var naming a PGlite data directory tarball a new database starts from (see the module note). */
export const pgliteTemplateEnv = "CURVESTREAM_PGLITE_TEMPLATE"

/** How long a stopping PGlite may take to close (flush) before its thread is terminated. */
export const stopTimeoutMs = 30_000

interface RunningWorker {
  readonly worker: Worker
  readonly conn: string
}

type WorkerMessage =
  | { readonly type: "ready"; readonly conn: string }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "stopped"; readonly problems: ReadonlyArray<string> }

const startWorker = (pgDataDir: string | undefined, templateFile: string | undefined): Effect.Effect<RunningWorker, SqlError> =>
  Effect.async<RunningWorker, SqlError>((resume) => {
    const worker = new Worker(new URL("./pgliteWorker.mjs", import.meta.url), {
      workerData: { pgDataDir, templateFile, host, maxConnections: socketConnectionsMax }
    })
    // Listeners are removed one by one: Worker keeps internal listeners (its port's ref counting)
    // that `removeAllListeners()` would take away too.
    const detach = () => {
      worker.off("message", onMessage)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const fail = (message: string, cause?: unknown) => {
      detach()
      void worker.terminate()
      resume(Effect.fail(new SqlError({ cause, message: `Embedded PostgreSQL: ${message}` })))
    }
    const onMessage = (message: WorkerMessage) => {
      if (message.type === "ready") {
        detach()
        // A crash after start surfaces as connection errors on the client; log it too.
        worker.on("error", (error) => Effect.runFork(Effect.logError("Embedded PostgreSQL: the PGlite thread failed", error)))
        resume(Effect.succeed({ worker, conn: message.conn }))
      } else if (message.type === "failed") fail(`cannot open PGlite at ${pgDataDir ?? "memory://"}: ${message.message}`)
    }
    const onError = (error: unknown) => fail(`the PGlite thread failed to start at ${pgDataDir ?? "memory://"}`, error)
    const onExit = (code: number) => fail(`the PGlite thread exited (${code}) before it was ready`)
    worker.on("message", onMessage)
    worker.on("error", onError)
    worker.on("exit", onExit)
    return Effect.sync(() => {
      detach()
      void worker.terminate()
    })
  })

/** Stops the socket server and closes PGlite (flushing it) on its thread, then ends the thread. */
const stopWorker = ({ worker }: RunningWorker): Effect.Effect<void> =>
  Effect.async<ReadonlyArray<string>>((resume) => {
    const onMessage = (message: WorkerMessage) => {
      if (message.type === "stopped") done(message.problems)
    }
    const onExit = () => done(["the PGlite thread exited before it reported closing"])
    const done = (problems: ReadonlyArray<string>) => {
      worker.off("message", onMessage)
      worker.off("exit", onExit)
      resume(Effect.succeed(problems))
    }
    worker.on("message", onMessage)
    worker.on("exit", onExit)
    worker.postMessage({ type: "stop" })
  }).pipe(
    Effect.timeout(stopTimeoutMs),
    Effect.catchAll(() => Effect.succeed([`PGlite did not close within ${stopTimeoutMs} ms`])),
    Effect.flatMap((problems) => Effect.forEach(problems, (p) => Effect.logWarning(`Embedded PostgreSQL: ${p}`), { discard: true })),
    Effect.zipRight(Effect.promise(() => worker.terminate()))
  )

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

    // Read here, at each start, not on the thread: a test that must see an empty database unsets it.
    const templateFile = process.env[pgliteTemplateEnv] || undefined
    const worker = yield* Effect.acquireRelease(startWorker(pgDataDir, templateFile), stopWorker)
    const conn = worker.conn
    // `getServerConn()` is `host:port` once listening (the OS picked the port).
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
