/**
 * JSON-RPC 2.0 over HTTP on node:http, shared by the localnet's Solana RPC and block-engine
 * servers. This is the test chain's transport, not the engine's serving path (that is uWS).
 *
 * Invariants and bounds:
 * - a request body larger than `maxBodyBytes` is refused with HTTP 413 before it is parsed, and
 *   the connection is not read further;
 * - a batch holds 1..`maxBatch` requests (an empty or larger batch is one `-32600` error);
 * - every response is JSON with bigints written as integer literals (`json.ts`); a request
 *   without an `id` is a notification and gets no response entry;
 * - handlers are synchronous (the ledger is): a `JsonRpcError` they throw becomes that error,
 *   anything else `-32603` with the message.
 * `GET /health` answers `ok`, as a validator's RPC port does.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { parseJsonExact, stringifyJson } from "./json.js"

export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603
} as const

export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown
  ) {
    super(message)
  }
}

export const invalidParams = (message: string): JsonRpcError => new JsonRpcError(JsonRpcCode.InvalidParams, message)

export type MethodHandler = (params: ReadonlyArray<unknown>) => unknown

export interface JsonRpcHttpOptions {
  readonly name: string
  readonly host: string
  readonly port: number
  readonly maxBodyBytes: number
  readonly maxBatch: number
  readonly methods: ReadonlyMap<string, MethodHandler>
}

export interface RunningServer {
  readonly url: string
  readonly port: number
  /** Stops listening and closes every connection, idle or not. */
  readonly close: () => Promise<void>
}

type Id = string | number | null

interface ResponseObject {
  readonly jsonrpc: "2.0"
  readonly id: Id
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown }
}

const errorResponse = (id: Id, code: number, message: string, data?: unknown): ResponseObject => ({
  jsonrpc: "2.0",
  error: data === undefined ? { code, message } : { code, message, data },
  id
})

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const handleOne = (methods: ReadonlyMap<string, MethodHandler>, request: unknown): ResponseObject | undefined => {
  if (!isObject(request)) return errorResponse(null, JsonRpcCode.InvalidRequest, "Invalid request")
  const hasId = "id" in request
  const rawId = request["id"]
  const id: Id = typeof rawId === "string" || typeof rawId === "number" ? rawId : typeof rawId === "bigint" ? Number(rawId) : null
  if (request["jsonrpc"] !== "2.0" || typeof request["method"] !== "string") {
    return errorResponse(id, JsonRpcCode.InvalidRequest, "Invalid request")
  }
  const params = request["params"]
  let response: ResponseObject
  const handler = methods.get(request["method"])
  if (handler === undefined) {
    response = errorResponse(id, JsonRpcCode.MethodNotFound, "Method not found")
  } else if (params !== undefined && params !== null && !Array.isArray(params)) {
    response = errorResponse(id, JsonRpcCode.InvalidParams, "Invalid params: expected an array of positional parameters")
  } else {
    try {
      response = { jsonrpc: "2.0", result: handler((params as ReadonlyArray<unknown> | undefined | null) ?? []), id }
    } catch (e) {
      response =
        e instanceof JsonRpcError
          ? errorResponse(id, e.code, e.message, e.data)
          : errorResponse(id, JsonRpcCode.InternalError, `Internal error: ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  return hasId ? response : undefined
}

/** Dispatches one parsed body (a request or a batch); undefined when nothing is to be answered. */
export const dispatch = (
  methods: ReadonlyMap<string, MethodHandler>,
  maxBatch: number,
  body: unknown
): ResponseObject | ReadonlyArray<ResponseObject> | undefined => {
  if (!Array.isArray(body)) return handleOne(methods, body)
  if (body.length === 0) return errorResponse(null, JsonRpcCode.InvalidRequest, "Invalid request: empty batch")
  if (body.length > maxBatch) {
    return errorResponse(null, JsonRpcCode.InvalidRequest, `Invalid request: a batch holds at most ${maxBatch} requests, got ${body.length}`)
  }
  const out: ResponseObject[] = []
  for (const r of body) {
    const response = handleOne(methods, r)
    if (response !== undefined) out.push(response)
  }
  return out.length === 0 ? undefined : out
}

const send = (res: http.ServerResponse, status: number, body: string, contentType = "application/json; charset=utf-8"): void => {
  res.writeHead(status, { "content-type": contentType, "content-length": Buffer.byteLength(body) })
  res.end(body)
}

export const startJsonRpcHttpServer = (o: JsonRpcHttpOptions): Promise<RunningServer> => {
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/health") return send(res, 200, "ok", "text/plain; charset=utf-8")
    if (req.method !== "POST") {
      res.setHeader("allow", "POST")
      return send(res, 405, stringifyJson(errorResponse(null, JsonRpcCode.InvalidRequest, "Only POST is accepted")))
    }
    const declared = Number(req.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > o.maxBodyBytes) {
      res.setHeader("connection", "close")
      send(res, 413, stringifyJson(errorResponse(null, JsonRpcCode.InvalidRequest, `request body exceeds ${o.maxBodyBytes} bytes`)))
      req.destroy()
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let refused = false
    req.on("data", (chunk: Buffer) => {
      if (refused) return
      size += chunk.length
      if (size > o.maxBodyBytes) {
        refused = true
        res.setHeader("connection", "close")
        send(res, 413, stringifyJson(errorResponse(null, JsonRpcCode.InvalidRequest, `request body exceeds ${o.maxBodyBytes} bytes`)))
        req.destroy()
        return
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (refused) return
      let body: unknown
      try {
        body = parseJsonExact(Buffer.concat(chunks, size).toString("utf8"))
      } catch {
        return send(res, 200, stringifyJson(errorResponse(null, JsonRpcCode.ParseError, "Parse error")))
      }
      const out = dispatch(o.methods, o.maxBatch, body)
      if (out === undefined) {
        res.writeHead(204)
        res.end()
        return
      }
      send(res, 200, stringifyJson(out))
    })
    req.on("error", () => res.destroy())
  })
  server.headersTimeout = 10_000
  server.requestTimeout = 30_000
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(o.port, o.host, () => {
      server.off("error", reject)
      const port = (server.address() as AddressInfo).port
      resolve({
        url: `http://${o.host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            server.closeAllConnections()
          })
      })
    })
  })
}
