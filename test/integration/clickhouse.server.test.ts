/**
 * The ClickHouse server executor (`@clickhouse/client`) over real HTTP against an endpoint that
 * answers ClickHouse's HTTP interface (`test/support/clickhouseHttp.ts`; no usable ClickHouse
 * server installs here, see docs/decisions.md): credentials, the database every request names
 * (created at start when missing and allowed), parameters bound by the server, the error
 * mapping, request timeouts and the bounded retries of reads.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { makeServerExecutor, type ServerExecutorOptions } from "../../clickhouse/internal/serverExecutor.js"
import { type ClickHouseHttp, startClickHouseHttp } from "../support/clickhouseHttp.js"

const endpoint = (users?: Parameters<typeof startClickHouseHttp>[0]) =>
  Effect.acquireRelease(
    Effect.promise(() => startClickHouseHttp(users)),
    (server) => Effect.promise(() => server.stop())
  )

const executor = (server: ClickHouseHttp, options: Partial<ServerExecutorOptions> = {}) =>
  makeServerExecutor({ url: server.url, database: "curvestream", retryInitialMs: 10, ...options })

describe("ClickHouse server executor over HTTP", () => {
  it.scopedLive("authenticates with the configured user and password, and a wrong password is QueryFailed 516 naming the user", () =>
    Effect.gen(function* () {
      const server = yield* endpoint({ writer: { password: "s3cret", canCreateDatabase: true } })
      const ch = yield* executor(server, { username: "writer", password: Redacted.make("s3cret") })
      expect(yield* ch.query("SELECT currentDatabase() AS db", undefined)).toEqual([{ db: "curvestream" }])
      expect(server.requests.every((r) => r.user === "writer")).toBe(true)

      const refused = yield* Effect.flip(executor(server, { username: "writer", password: Redacted.make("wrong") }))
      expect(refused).toMatchObject({ reason: "QueryFailed", clickhouseCode: 516 })
      expect(refused.retryable).toBe(false)
      expect(refused.message).toContain("writer: Authentication failed")
      const nobody = yield* Effect.flip(executor(server))
      expect(nobody).toMatchObject({ reason: "QueryFailed", clickhouseCode: 516 })
    })
  )

  it.scopedLive("creates a missing database at start, then names it on every request; a user who may not create one starts only when it exists", () =>
    Effect.gen(function* () {
      const server = yield* endpoint({ admin: { password: "a", canCreateDatabase: true }, reader: { password: "r" } })
      const denied = yield* Effect.flip(executor(server, { username: "reader", password: Redacted.make("r") }))
      expect(denied).toMatchObject({ reason: "QueryFailed", clickhouseCode: 497 })
      expect(server.databases.has("curvestream")).toBe(false)

      yield* executor(server, { username: "admin", password: Redacted.make("a") })
      expect(server.databases.has("curvestream")).toBe(true)
      const before = server.requests.length
      const ch = yield* executor(server, { username: "reader", password: Redacted.make("r") })
      // The lookup goes to the server's default database (the target may not exist yet); nothing is created.
      expect(server.requests.slice(before).map((r) => [r.database, r.query.split("\n")[0]!.trim()])).toEqual([
        ["default", "SELECT name FROM system.databases WHERE name = {name:String}"]
      ])
      yield* ch.command("CREATE TABLE t (a UInt8) ENGINE = Memory", undefined)
      yield* ch.query("SELECT currentDatabase() AS db", undefined)
      expect(server.requests.slice(before + 1).every((r) => r.database === "curvestream")).toBe(true)
    })
  )

  it.scopedLive("binds parameters on the server (never in the SQL text), reads 64-bit integers as strings, inserts JSONEachRow bytes", () =>
    Effect.gen(function* () {
      const server = yield* endpoint()
      const ch = yield* executor(server)
      const max = (1n << 64n) - 1n
      expect(yield* ch.query("SELECT {n:UInt64} AS n", { n: max })).toEqual([{ n: max.toString() }])
      const sent = server.requests[server.requests.length - 1]!
      expect(sent.params).toEqual({ n: max.toString() })
      expect(sent.query).not.toContain(max.toString())

      yield* ch.command("CREATE TABLE trades (mint String, amount_raw UInt256) ENGINE = MergeTree ORDER BY mint", undefined)
      yield* ch.insertJsonEachRow("trades", Buffer.from('{"mint":"m1","amount_raw":"1"}\n{"mint":"m2","amount_raw":"2"}\n'))
      expect(yield* ch.query("SELECT * FROM trades", undefined)).toEqual([
        { mint: "m1", amount_raw: "1" },
        { mint: "m2", amount_raw: "2" }
      ])
    })
  )

  it.scopedLive("maps the server's exceptions to QueryFailed with ClickHouse's code, and a gone server to retryable Unavailable", () =>
    Effect.gen(function* () {
      const server = yield* endpoint()
      const ch = yield* executor(server)
      const syntax = yield* Effect.flip(ch.query("SELEC nonsense", undefined))
      expect(syntax).toMatchObject({ reason: "QueryFailed", clickhouseCode: 62 })
      expect(syntax.message).toContain("Syntax error")
      expect(yield* Effect.flip(ch.query("SELECT * FROM missing", undefined))).toMatchObject({ reason: "QueryFailed", clickhouseCode: 60 })
      expect(yield* Effect.flip(ch.insertJsonEachRow("missing", Buffer.from("{}\n")))).toMatchObject({ reason: "QueryFailed", clickhouseCode: 60 })
      expect(yield* Effect.flip(ch.query("SELECT {n:UInt64} AS n", {}))).toMatchObject({ reason: "QueryFailed", clickhouseCode: 456 })
      yield* ch.ping

      yield* Effect.promise(() => server.stop())
      const gone = yield* Effect.flip(ch.query("SELECT currentDatabase() AS db", undefined))
      expect(gone.reason).toBe("Unavailable")
      expect(gone.retryable).toBe(true)
      expect((yield* Effect.flip(ch.ping)).reason).toBe("Unavailable")
    })
  )

  it.scopedLive("a request past requestTimeoutMs fails Unavailable; a read is tried retries + 1 times, no more", () =>
    Effect.gen(function* () {
      const server = yield* endpoint()
      const ch = yield* executor(server, { requestTimeoutMs: 300, retries: 2 })
      const before = server.requests.length
      const startedMs = Date.now()
      const timedOut = yield* Effect.flip(ch.query("SELECT sleep(3)", undefined))
      const elapsedMs = Date.now() - startedMs
      expect(timedOut.reason).toBe("Unavailable")
      expect(timedOut.message.toLowerCase()).toContain("timeout")
      expect(server.requests.length - before).toBe(3)
      expect(elapsedMs).toBeGreaterThanOrEqual(900)
      expect(elapsedMs).toBeLessThan(3000)
    })
  )

  it.scopedLive("reads retry a lost connection up to the bound; commands and inserts are not retried", () =>
    Effect.gen(function* () {
      const server = yield* endpoint()
      const ch = yield* executor(server, { retries: 2 })
      server.dropNext(2)
      expect(yield* ch.query("SELECT currentDatabase() AS db", undefined)).toEqual([{ db: "curvestream" }])
      expect(server.dropped()).toBe(2)

      server.dropNext(3)
      expect((yield* Effect.flip(ch.query("SELECT currentDatabase() AS db", undefined))).reason).toBe("Unavailable")
      expect(server.dropped()).toBe(5)

      yield* ch.command("CREATE TABLE once (a UInt8) ENGINE = Memory", undefined)
      server.dropNext(1)
      expect((yield* Effect.flip(ch.insertJsonEachRow("once", Buffer.from('{"a":1}\n')))).reason).toBe("Unavailable")
      expect(server.dropped()).toBe(6)
      server.dropNext(1)
      expect((yield* Effect.flip(ch.command("CREATE TABLE twice (a UInt8) ENGINE = Memory", undefined))).reason).toBe("Unavailable")
      expect(server.dropped()).toBe(7)
      expect(server.tables.get("curvestream.once")).toEqual([])
      expect(server.tables.has("curvestream.twice")).toBe(false)
    })
  )
})
