/**
 * One bench server in its own process: `node --import tsx bench/serve.ts <kind>`. `uws` and
 * `node` serve `benchRoutes()` (through `api/Server.ts`, through `bench/nodeHttpAdapter.ts`);
 * `uws-bare` and `node-bare` answer every request with `/healthz`'s body and no router at all,
 * the calibration for what each server costs on this machine before any of our code runs.
 * Listens on 127.0.0.1 with a free port, prints one line `READY {"port":n,"pid":n}` on stdout,
 * and exits on SIGTERM or when its stdin closes (the parent went away), so a crashed bench run
 * leaves no server behind.
 */
import * as uWS from "uws-pack"
import { Effect, Logger, LogLevel } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { JSON_CONTENT_TYPE } from "../api/Http.js"
import { serve } from "../api/Server.js"
import { createNodeServer } from "./nodeHttpAdapter.js"
import { BENCH_MAX_BODY_BYTES, benchRoutes } from "./routes.js"

const HOST = "127.0.0.1"

const ready = (port: number) => process.stdout.write(`READY ${JSON.stringify({ port, pid: process.pid })}\n`)

const exit = () => process.exit(0)
process.on("SIGTERM", exit)
process.stdin.on("end", exit)
process.stdin.on("error", exit)
process.stdin.resume()

const kind = process.argv[2]
const routes = benchRoutes()
/** What `GET /healthz` answers. */
const BARE_BODY = JSON.stringify({ status: "ok" })

if (kind === "uws") {
  serve({ name: "bench", host: HOST, port: 0, maxBodyBytes: BENCH_MAX_BODY_BYTES, routes }).pipe(
    Effect.tap((server) => Effect.sync(() => ready(server.port))),
    Effect.zipRight(Effect.never),
    Effect.scoped,
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.runFork
  )
} else if (kind === "node") {
  const server = createNodeServer(routes, { maxBodyBytes: BENCH_MAX_BODY_BYTES })
  server.listen(0, HOST, () => ready((server.address() as AddressInfo).port))
} else if (kind === "uws-bare") {
  const app = uWS.App().any("/*", (res) => {
    res.cork(() => res.writeStatus("200 OK").writeHeader("Content-Type", JSON_CONTENT_TYPE).end(BARE_BODY))
  })
  app.listen(HOST, 0, (socket) => {
    if (socket === false) throw new Error("uws-bare: cannot listen")
    ready(uWS.us_socket_local_port(socket as unknown as uWS.us_socket))
  })
} else if (kind === "node-bare") {
  const headers = { "Content-Type": JSON_CONTENT_TYPE, "Content-Length": Buffer.byteLength(BARE_BODY) }
  const server = http.createServer((_req, res) => {
    res.writeHead(200, headers)
    res.end(BARE_BODY)
  })
  server.listen(0, HOST, () => ready((server.address() as AddressInfo).port))
} else {
  process.stderr.write(`usage: node --import tsx bench/serve.ts uws|node|uws-bare|node-bare (got '${kind ?? ""}')\n`)
  process.exit(2)
}
