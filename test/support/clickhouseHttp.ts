/**
 * A small HTTP endpoint that answers ClickHouse's HTTP interface for the statements the server
 * executor's tests send, so `clickhouse/internal/serverExecutor.ts` is tested over real sockets
 * where no usable ClickHouse server can be installed (docs/decisions.md, "ClickHouse server
 * executor tests"). What it speaks, as ClickHouse does:
 *
 * - Auth: `Authorization: Basic` or `X-ClickHouse-User`/`X-ClickHouse-Key` (no credentials: user
 *   `default`, empty password); a wrong pair is 403 with code 516 AUTHENTICATION_FAILED.
 * - `database` URL parameter (default `default`); an unknown one is 404, code 81 UNKNOWN_DATABASE.
 * - Query text in the `query` URL parameter followed by the body (the body is the data of an
 *   `INSERT ... FORMAT`); `{name:Type}` parameters from `param_<name>`; a missing one is 400,
 *   code 456 UNKNOWN_QUERY_PARAMETER. A trailing `FORMAT JSONEachRow` selects the output.
 * - Errors as ClickHouse writes them: `Code: N. DB::Exception: <message>. (NAME) (version ...)`,
 *   with the `X-ClickHouse-Exception-Code` header and its HTTP status.
 *
 * Statements: `SELECT 1`; `SELECT 'ping'` (the client's ping); `SELECT name FROM system.databases WHERE name = {name:String}`;
 * `CREATE DATABASE IF NOT EXISTS <db>` (users with `canCreateDatabase`); `SELECT currentDatabase()
 * AS db`; `SELECT {n:UInt64} AS n` (64-bit integers quoted, as the executor asks);
 * `SELECT sleep(<seconds>)` (answers after that long); `CREATE TABLE <t> ...`;
 * `INSERT INTO <t> FORMAT JSONEachRow`; `SELECT * FROM <t>`. Anything else is 400, code 62
 * SYNTAX_ERROR. `dropNext(n)` makes the next n requests lose their connection without an answer.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface ClickHouseHttpUser {
  readonly password: string
  readonly canCreateDatabase?: boolean
}

export interface ClickHouseHttpRequest {
  readonly user: string
  readonly database: string
  readonly query: string
  readonly params: Readonly<Record<string, string>>
}

export interface ClickHouseHttp {
  readonly url: string
  /** Every request that passed auth, in order. */
  readonly requests: ReadonlyArray<ClickHouseHttpRequest>
  readonly databases: ReadonlySet<string>
  /** Rows inserted per `db.table`. */
  readonly tables: ReadonlyMap<string, Array<unknown>>
  /** The next `count` requests are answered by closing the connection. */
  readonly dropNext: (count: number) => void
  /** Requests answered so far by closing the connection. */
  readonly dropped: () => number
  readonly stop: () => Promise<void>
}

const VERSION = "26.1.1.1"

const errorNames: Record<number, readonly [name: string, status: number]> = {
  60: ["UNKNOWN_TABLE", 404],
  62: ["SYNTAX_ERROR", 400],
  81: ["UNKNOWN_DATABASE", 404],
  456: ["UNKNOWN_QUERY_PARAMETER", 400],
  497: ["ACCESS_DENIED", 403],
  516: ["AUTHENTICATION_FAILED", 403]
}

class Refusal {
  constructor(
    readonly code: number,
    readonly message: string
  ) {}
}

const credentials = (req: http.IncomingMessage): readonly [string, string] => {
  const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "")
  if (basic !== null) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    return colon === -1 ? [decoded, ""] : [decoded.slice(0, colon), decoded.slice(colon + 1)]
  }
  const user = req.headers["x-clickhouse-user"]
  const key = req.headers["x-clickhouse-key"]
  return [typeof user === "string" ? user : "default", typeof key === "string" ? key : ""]
}

export const startClickHouseHttp = async (
  users: Readonly<Record<string, ClickHouseHttpUser>> = { default: { password: "", canCreateDatabase: true } }
): Promise<ClickHouseHttp> => {
  const requests: Array<ClickHouseHttpRequest> = []
  const databases = new Set(["default", "system"])
  const tables = new Map<string, Array<unknown>>()
  let drops = 0
  let dropped = 0

  const run = async (user: ClickHouseHttpUser, database: string, query: string, params: Record<string, string>, body: string): Promise<string> => {
    const bind = (name: string): string => {
      const value = params[name]
      if (value === undefined) throw new Refusal(456, `Substitution \`${name}\` is not set`)
      return value
    }
    const statement = query.trim().replace(/\s+FORMAT\s+JSONEachRow\s*$/i, "").trim()
    const rows = (xs: ReadonlyArray<unknown>) => xs.map((x) => `${JSON.stringify(x)}\n`).join("")
    let m: RegExpExecArray | null
    if (/^SELECT 1$/i.test(statement)) return "1\n"
    if (statement === "SELECT 'ping'") return "ping\n"
    if ((m = /^SELECT name FROM system\.databases WHERE name = \{(\w+):String\}$/i.exec(statement)) !== null) {
      const name = bind(m[1]!)
      return rows(databases.has(name) ? [{ name }] : [])
    }
    if ((m = /^CREATE DATABASE IF NOT EXISTS ([A-Za-z_]\w*)$/i.exec(statement)) !== null) {
      if (user.canCreateDatabase !== true) throw new Refusal(497, `Not enough privileges. To execute this query, it's necessary to have the grant CREATE DATABASE ON ${m[1]}.*`)
      databases.add(m[1]!)
      return ""
    }
    if (/^SELECT currentDatabase\(\) AS db$/i.test(statement)) return rows([{ db: database }])
    if ((m = /^SELECT \{(\w+):UInt64\} AS n$/i.exec(statement)) !== null) return rows([{ n: bind(m[1]!) }])
    if ((m = /^SELECT sleep\(([\d.]+)\)$/i.exec(statement)) !== null) {
      await new Promise((resolve) => setTimeout(resolve, Number(m![1]) * 1000))
      return rows([{ [`sleep(${m[1]})`]: 0 }])
    }
    const qualified = (table: string) => (table.includes(".") ? table : `${database}.${table}`)
    if ((m = /^CREATE TABLE (?:IF NOT EXISTS )?([\w.]+)\s*\(/i.exec(statement)) !== null) {
      if (!tables.has(qualified(m[1]!))) tables.set(qualified(m[1]!), [])
      return ""
    }
    if ((m = /^INSERT INTO ([\w.]+)$/i.exec(statement)) !== null) {
      const table = tables.get(qualified(m[1]!))
      if (table === undefined) throw new Refusal(60, `Table ${qualified(m[1]!)} does not exist`)
      for (const line of body.split("\n")) if (line.trim() !== "") table.push(JSON.parse(line))
      return ""
    }
    if ((m = /^SELECT \* FROM ([\w.]+)$/i.exec(statement)) !== null) {
      const table = tables.get(qualified(m[1]!))
      if (table === undefined) throw new Refusal(60, `Table ${qualified(m[1]!)} does not exist`)
      return rows(table)
    }
    throw new Refusal(62, `Syntax error: failed at position 1 (${JSON.stringify(statement.slice(0, 40))})`)
  }

  const server = http.createServer((req, res) => {
    if (drops > 0) {
      drops--
      dropped++
      req.socket.destroy()
      return
    }
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://localhost")
      const send = (status: number, text: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { "Content-Type": "text/plain; charset=UTF-8", "X-ClickHouse-Server-Display-Name": "test", ...headers })
        res.end(text)
      }
      const refuse = (refusal: Refusal) => {
        const [name, status] = errorNames[refusal.code] ?? ["UNKNOWN_EXCEPTION", 500]
        send(status, `Code: ${refusal.code}. DB::Exception: ${refusal.message}. (${name}) (version ${VERSION} (official build))\n`, {
          "X-ClickHouse-Exception-Code": String(refusal.code)
        })
      }
      if (url.pathname === "/ping") return send(200, "Ok.\n")
      const [userName, password] = credentials(req)
      const user = users[userName]
      if (user === undefined || user.password !== password) {
        return refuse(new Refusal(516, `${userName}: Authentication failed: password is incorrect, or there is no user with such name`))
      }
      const database = url.searchParams.get("database") ?? "default"
      if (!databases.has(database)) return refuse(new Refusal(81, `Database ${database} does not exist`))
      const params: Record<string, string> = {}
      for (const [key, value] of url.searchParams) if (key.startsWith("param_")) params[key.slice("param_".length)] = value
      const body = Buffer.concat(chunks).toString("utf8")
      const inUrl = url.searchParams.get("query")
      // As ClickHouse: the URL's query, then the body; an INSERT's body is its data.
      const query = inUrl === null ? body : /^\s*INSERT/i.test(inUrl) ? inUrl : `${inUrl}\n${body}`
      requests.push({ user: userName, database, query, params })
      run(user, database, query, params, inUrl !== null && /^\s*INSERT/i.test(inUrl) ? body : "").then(
        (text) => send(200, text),
        (error: unknown) => (error instanceof Refusal ? refuse(error) : refuse(new Refusal(1001, String(error))))
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    databases,
    tables,
    dropNext: (count) => {
      drops += count
    },
    dropped: () => dropped,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
