/**
 * `Database.NamedStatements` when the connection breaks under a statement (issue 29, the review's
 * High finding): the pool stops listening for a connection's `error` while it is lent out, so a
 * socket ending mid-statement was the process's uncaught exception unless the lender listens.
 * The run's real PostgreSQL server sits behind a TCP proxy (`test/support/tcpProxy.ts`); `Database`
 * connects through the proxy, a named statement is left running on the server (`pg_sleep`), and
 * the proxy cuts every connection it carries, by an orderly close or by a TCP reset. The
 * statement's Effect fails with a `SqlError`, the process sees no uncaught exception, and the next named statement (the same name) runs on a new
 * connection, parsed there again.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Either, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { eventually } from "../support/eventually.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.js"

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const serverUrl = postgresUrl()

/** Long enough that only the cut can end it; the test terminates the server's backend after. */
const SLEEP_S = 60
const SLEEP_NAME = "test_named_sleep"
const SLEEP_TEXT = "SELECT pg_sleep($1::float8) AS slept"

describe.skipIf(serverUrl === undefined)(`Database.NamedStatements through a connection cut mid-statement${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`, () => {
  let proxy: TcpProxy
  let scope: Scope.CloseableScope
  let named: Database.NamedStatements["Type"]
  /** The test's own connection to the server (not through the proxy): it watches and cleans up. */
  let direct: SqlClient.SqlClient

  beforeAll(async () => {
    const url = await freshPostgresDatabase(serverUrl!)
    const target = new URL(url)
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) })
    const proxied = new URL(url)
    proxied.port = String(proxy.port)
    scope = await run(Scope.make())
    // One connection: nothing idle at the cut, which the next statement could be handed before its close is seen.
    const context = await run(Layer.buildWithScope(Database.layer({ url: proxied.toString(), dataDir: undefined, maxConnections: 1 }), scope))
    named = Context.get(context, Database.NamedStatements)
    direct = Context.get(await run(Layer.buildWithScope(Database.layer({ url, dataDir: undefined, maxConnections: 1 }), scope)), SqlClient.SqlClient)
  }, 60_000)

  afterAll(async () => {
    await run(Scope.close(scope, Exit.void))
    await proxy.close()
  })

  // "reset": the driver's connection fails (ECONNRESET) and then closes, so it reports the broken
  // connection twice, the second time before the statement's callback runs.
  it.each(["close", "reset"] as const)("cut by a %s: the statement fails with a SqlError, nothing is thrown uncaught, and the next named statement runs on a new connection", async (how) => {
    const uncaught: Array<unknown> = []
    const onUncaught = (error: unknown) => uncaught.push(error)
    process.on("uncaughtException", onUncaught)
    const sleepers = direct<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query = ${SLEEP_TEXT}`
    try {
      const sleeping = run(Effect.either(named.execute(SLEEP_NAME, SLEEP_TEXT, [SLEEP_S])))
      const cutPid = await eventually(async () => {
        const rows = await run(sleepers)
        return rows.length === 1 && rows[0]!.pid
      }, { what: "the named statement to be running on the server", deadlineMs: 20_000 })
      const acceptedBefore = proxy.accepted()
      expect(proxy.cut(how)).toBe(1)

      const result = await sleeping
      if (Either.isRight(result)) throw new Error(`the cut statement answered ${JSON.stringify(result.right)}`)
      expect(result.left).toBeInstanceOf(SqlError)
      expect(result.left.message).toBe("Failed to execute statement")

      // The same name again: a new connection (through the proxy again) parses and runs it.
      const again = await run(named.execute(SLEEP_NAME, SLEEP_TEXT, [0]))
      expect(again).toEqual([{ slept: "" }])
      const [next] = await run(named.execute("test_named_pid", "SELECT pg_backend_pid() AS pid", []))
      expect(next?.pid).toEqual(expect.any(Number))
      expect(next?.pid).not.toBe(cutPid)
      expect(proxy.accepted()).toBeGreaterThan(acceptedBefore)
      expect(uncaught).toEqual([])
    } finally {
      process.off("uncaughtException", onUncaught)
      // The cut backend sleeps on unaware of its client: end it.
      // With a wait (PostgreSQL 13+): the next case must not find this backend still dying among its sleepers.
      await run(direct`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND query = ${SLEEP_TEXT} AND pid <> pg_backend_pid()`)
    }
  }, 60_000)
})
