// The embedded PostgreSQL's thread (see embeddedPostgres.ts): PGlite runs PostgreSQL compiled to
// WASM synchronously, so it lives on this worker thread, off the engine's event loop, and is
// served over the PostgreSQL wire protocol on a loopback socket by pglite-socket.
//
// Protocol with the parent (plain JS so it loads the same under tsx, vitest and node):
//   workerData: { pgDataDir: string | undefined, templateFile: string | undefined, host: string, maxConnections: number }
//   → { type: "ready", conn: "host:port" } | { type: "failed", message }
//   ← { type: "stop" }  → { type: "stopped" } (socket server stopped, PGlite closed and flushed)
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import * as fs from "node:fs"
import * as path from "node:path"
import { parentPort, workerData } from "node:worker_threads"
import { corkEachTurn } from "./corkEachTurn.mjs"

const { pgDataDir, templateFile, host, maxConnections } = workerData

class CorkedSocketServer extends PGLiteSocketServer {
  async handleConnection(socket) {
    return super.handleConnection(corkEachTurn(socket))
  }
}
let db
let server

const describe = (error) => (error instanceof Error ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ""}` : String(error))

const stop = async () => {
  const problems = []
  if (server !== undefined) await server.stop().catch((e) => problems.push(`socket server stop: ${describe(e)}`))
  if (db !== undefined) await db.close().catch((e) => problems.push(`PGlite close: ${describe(e)}`))
  parentPort.postMessage({ type: "stopped", problems })
}

parentPort.on("message", (message) => {
  if (message?.type === "stop") void stop()
})

// The template tarball (embeddedPostgres.ts) for a database not created yet; undefined when there
// is none, it does not read, or the directory already holds a database (opened as it is).
const template = () => {
  if (templateFile === undefined) return undefined
  if (pgDataDir !== undefined && fs.existsSync(path.join(pgDataDir, "PG_VERSION"))) return undefined
  try {
    return new Blob([fs.readFileSync(templateFile)])
  } catch {
    return undefined
  }
}

try {
  const loadDataDir = template()
  db = await PGlite.create({ ...(pgDataDir === undefined ? {} : { dataDir: pgDataDir }), ...(loadDataDir === undefined ? {} : { loadDataDir }) })
  server = new CorkedSocketServer({ db, host, port: 0, maxConnections })
  await server.start()
  parentPort.postMessage({ type: "ready", conn: server.getServerConn() })
} catch (error) {
  parentPort.postMessage({ type: "failed", message: describe(error) })
}
