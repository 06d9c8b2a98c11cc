// The embedded PostgreSQL's thread (see embeddedPostgres.ts): PGlite runs PostgreSQL compiled to
// WASM synchronously, so it lives on this worker thread, off the engine's event loop, and is
// served over the PostgreSQL wire protocol on a loopback socket by pglite-socket.
//
// Protocol with the parent (plain JS so it loads the same under tsx, vitest and node):
//   workerData: { pgDataDir: string | undefined, host: string, maxConnections: number }
//   → { type: "ready", conn: "host:port" } | { type: "failed", message }
//   ← { type: "stop" }  → { type: "stopped" } (socket server stopped, PGlite closed and flushed)
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { parentPort, workerData } from "node:worker_threads"

const { pgDataDir, host, maxConnections } = workerData
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

try {
  db = await PGlite.create(pgDataDir === undefined ? {} : { dataDir: pgDataDir })
  server = new PGLiteSocketServer({ db, host, port: 0, maxConnections })
  await server.start()
  parentPort.postMessage({ type: "ready", conn: server.getServerConn() })
} catch (error) {
  parentPort.postMessage({ type: "failed", message: describe(error) })
}
