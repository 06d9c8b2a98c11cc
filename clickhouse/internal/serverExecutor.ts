/**
 * The cluster executor: a ClickHouse server over HTTP through `@clickhouse/client`.
 *
 * Invariants:
 * - Every request runs against `database` (the client sends it with each request); when
 *   missing it is created first, through a short-lived client on the server's default
 *   database, since a request naming a missing database fails.
 * - Same wire rules as chDB: `{name:Type}` parameters travel as `query_params` (bound by the
 *   server, never spliced into SQL), rows are JSONEachRow both ways, 64-bit and wider integers
 *   come back as JSON strings.
 * - Inserts send the exact JSONEachRow bytes `ClickHouse.ts` built and bounded (`exec` with
 *   an `INSERT ... FORMAT JSONEachRow`), so both executors write the same payload.
 * - Interrupting a call aborts its HTTP request. The client (its keep-alive sockets) closes
 *   with the scope.
 * - Failures map to `ClickHouseError`: what the server answered with an exception (auth, an
 *   unknown database or table, syntax, ...) is `QueryFailed` with ClickHouse's code; anything on
 *   the transport (refused, reset, `requestTimeoutMs` passed) is `Unavailable`.
 * - Reads (`query`, and the start-up database lookup) are retried on `Unavailable` at most
 *   `retries` times (default 2), backing off from `retryInitialMs` (default 100 ms) doubling;
 *   `command` and inserts are not (they may have taken effect: their callers decide), nor is
 *   `ping` (readiness reports what it sees now).
 *
 * Tested against `test/support/clickhouseHttp.ts`, an endpoint answering ClickHouse's HTTP
 * interface (`test/integration/clickhouse.server.test.ts`): no usable ClickHouse server can be
 * installed here (docs/decisions.md, "ClickHouse server executor tests").
 */
import { type ClickHouseClient, ClickHouseError as ServerError, createClient } from "@clickhouse/client"
import { Duration, Effect, Redacted, Schedule, type Scope } from "effect"
import { Readable } from "node:stream"
import { ClickHouseError } from "../ClickHouseError.js"
import type { Executor } from "./executor.js"

export interface ServerExecutorOptions {
  readonly url: string
  readonly database: string
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted<string> | undefined
  /** Per-request timeout (default 30 s, the client's). */
  readonly requestTimeoutMs?: number | undefined
  /** Retries of a read that failed `Unavailable` (default 2). */
  readonly retries?: number | undefined
  /** First pause between read retries, doubling (default 100 ms). */
  readonly retryInitialMs?: number | undefined
}

export const fromServerError = (cause: unknown, doing: string): ClickHouseError => {
  if (cause instanceof ServerError) {
    const code = Number(cause.code)
    return new ClickHouseError({
      reason: "QueryFailed",
      message: `ClickHouse ${doing}: ${cause.message}`,
      ...(Number.isInteger(code) ? { clickhouseCode: code } : {}),
      cause
    })
  }
  // Anything else is the transport: refused, reset, timed out, DNS.
  return new ClickHouseError({
    reason: "Unavailable",
    message: `ClickHouse ${doing}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })
}

export const makeServerExecutor = (
  options: ServerExecutorOptions
): Effect.Effect<Executor, ClickHouseError, Scope.Scope> =>
  Effect.gen(function* () {
    const base = {
      url: options.url,
      application: "curvestream",
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: Redacted.value(options.password) } : {}),
      ...(options.requestTimeoutMs !== undefined ? { request_timeout: options.requestTimeoutMs } : {})
    }
    const open = (database: string | undefined) =>
      Effect.acquireRelease(
        Effect.sync(() =>
          createClient({
            ...base,
            ...(database !== undefined ? { database } : {}),
            clickhouse_settings: { output_format_json_quote_64bit_integers: 1 }
          })
        ),
        (client) => Effect.promise(() => client.close())
      )

    const call = <A>(doing: string, f: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, ClickHouseError> =>
      Effect.tryPromise({ try: f, catch: (cause) => fromServerError(cause, doing) })
    const readRetries = Schedule.intersect(Schedule.exponential(Duration.millis(options.retryInitialMs ?? 100)), Schedule.recurs(options.retries ?? 2))
    const read = <A>(doing: string, f: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, ClickHouseError> =>
      Effect.retry(call(doing, f), { schedule: readRetries, while: (error) => error.reason === "Unavailable" })

    // The target database must exist before a client may name it. Look first, so a user
    // allowed to use the database but not to create databases still starts.
    yield* Effect.scoped(
      Effect.flatMap(open(undefined), (bootstrap) =>
        Effect.flatMap(
          read("look up database", async (signal) => {
            const result = await bootstrap.query({
              query: "SELECT name FROM system.databases WHERE name = {name:String}",
              query_params: { name: options.database },
              format: "JSONEachRow",
              abort_signal: signal
            })
            return (await result.json<unknown>()).length > 0
          }),
          (exists) =>
            exists
              ? Effect.void
              : call("create database", (signal) =>
                  bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${options.database}`, abort_signal: signal })
                )
        )
      )
    )

    const client: ClickHouseClient = yield* open(options.database)

    const executor: Executor = {
      kind: "server",
      query: (sql, params) =>
        read("query", async (signal) => {
          const result = await client.query({
            query: sql,
            format: "JSONEachRow",
            abort_signal: signal,
            ...(params !== undefined ? { query_params: { ...params } } : {})
          })
          return result.json<unknown>()
        }),
      command: (sql, params) =>
        Effect.asVoid(
          call("command", (signal) =>
            client.command({
              query: sql,
              abort_signal: signal,
              ...(params !== undefined ? { query_params: { ...params } } : {})
            })
          )
        ),
      insertJsonEachRow: (table, payload) =>
        call(`insert into ${table}`, async (signal) => {
          const result = await client.exec({
            query: `INSERT INTO ${table} FORMAT JSONEachRow`,
            values: Readable.from([payload], { objectMode: false }),
            abort_signal: signal
          })
          // The response body is empty; consume it so the keep-alive socket is reused.
          for await (const _ of result.stream) void _
        }),
      ping: Effect.flatMap(
        call("ping", (signal) => client.ping({ select: true, abort_signal: signal })),
        (result) =>
          result.success
            ? Effect.void
            : Effect.fail(fromServerError(result.error, "ping"))
      )
    }
    return executor
  })
