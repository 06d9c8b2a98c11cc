/**
 * The embedded executor: a chDB `Session` (the ClickHouse engine in this process) persisted at
 * `<dataDir>/chdb`.
 *
 * Invariants:
 * - Off the event loop: every statement goes through chDB's async API (`queryAsync`,
 *   `queryBindAsync`, raw `insert`), which runs on a libuv worker thread. Only opening the
 *   session is synchronous (once, at start).
 * - One statement at a time: a chDB connection serializes its statements on a native mutex,
 *   so concurrent calls would each park a libuv worker (the pool fs, dns and crypto share,
 *   4 threads by default). A one-permit semaphore queues them in JS instead. The permit is
 *   held until the native call settles (the call is uninterruptible: chDB cannot cancel a
 *   running statement, and closing the session under it would abort the engine).
 * - One data directory per process (a libchdb rule): opening a second directory while one is
 *   open fails with `Unavailable`. Release closes the session after the running statement
 *   and waits for chDB to let go of the directory, so the next open may use another one.
 * - 64-bit and wider integers are written as JSON strings (`output_format_json_quote_64bit_integers`),
 *   as on the server executor: money stays exact.
 */
import { Session, drainPending } from "chdb"
import { Effect, type Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ClickHouseError } from "../ClickHouseError.js"
import { type Executor, type Params, parseJsonEachRow } from "./executor.js"

export interface ChdbExecutorOptions {
  readonly dataDir: string
  readonly database: string
}

/** The error shape chDB's typed errors share (`ChdbError`: `code`, `clickhouseCode`). */
interface ChdbErrorLike {
  readonly code?: unknown
  readonly clickhouseCode?: unknown
  readonly message?: unknown
}

export const fromChdbError = (cause: unknown, doing: string): ClickHouseError => {
  const e = (typeof cause === "object" && cause !== null ? cause : {}) as ChdbErrorLike
  const code = typeof e.code === "string" ? e.code : undefined
  const message = typeof e.message === "string" ? e.message : String(cause)
  const reason =
    code === "CHDB_CONNECTION" || code === "CHDB_CLOSED"
      ? "Unavailable"
      : code === "CHDB_BIND"
        ? "InvalidRequest"
        : "QueryFailed"
  return new ClickHouseError({
    reason,
    message: `chDB ${doing}: ${message}`,
    ...(typeof e.clickhouseCode === "number" ? { clickhouseCode: e.clickhouseCode } : {}),
    cause
  })
}

export const makeChdbExecutor = (options: ChdbExecutorOptions): Effect.Effect<Executor, ClickHouseError, Scope.Scope> =>
  Effect.gen(function* () {
    const sessionDir = path.join(options.dataDir, "chdb")
    const semaphore = yield* Effect.makeSemaphore(1)

    const session = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          fs.mkdirSync(sessionDir, { recursive: true })
          return new Session(sessionDir, { connectionArgs: ["--output_format_json_quote_64bit_integers=1"] })
        },
        catch: (cause) => fromChdbError(cause, `open ${sessionDir}`)
      }),
      (session) =>
        semaphore.withPermits(1)(Effect.sync(() => session.close())).pipe(
          Effect.zipRight(Effect.promise(() => drainPending()))
        )
    )

    const run = <A>(doing: string, f: (session: Session) => Promise<A>): Effect.Effect<A, ClickHouseError> =>
      semaphore.withPermits(1)(
        Effect.uninterruptible(Effect.tryPromise({ try: () => f(session), catch: (cause) => fromChdbError(cause, doing) }))
      )

    const execute = (sql: string, params: Params | undefined, format: string) =>
      run("query", (s) =>
        params === undefined ? s.queryAsync(sql, { format }) : s.queryBindAsync(sql, params, { format })
      )

    const executor: Executor = {
      kind: "chdb",
      query: (sql, params) =>
        Effect.flatMap(execute(sql, params, "JSONEachRow"), (result) =>
          Effect.try({
            try: () => parseJsonEachRow(result.text()),
            catch: (cause) =>
              new ClickHouseError({ reason: "QueryFailed", message: `chDB query: malformed JSONEachRow result`, cause })
          })
        ),
      command: (sql, params) => Effect.asVoid(execute(sql, params, "CSV")),
      insertJsonEachRow: (table, payload) =>
        Effect.asVoid(run(`insert into ${table}`, (s) => s.insert({ table, values: payload, format: "JSONEachRow" }))),
      ping: Effect.asVoid(execute("SELECT 1", undefined, "CSV"))
    }

    // The database exists and is the session's current one, so unqualified names (the
    // migrations, the engine's queries) resolve to it as they do on the server executor.
    yield* executor.command(`CREATE DATABASE IF NOT EXISTS ${options.database}`, undefined)
    yield* executor.command(`USE ${options.database}`, undefined)
    return executor
  })
