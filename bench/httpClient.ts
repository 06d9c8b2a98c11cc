/**
 * The benches' HTTP client: keep-alive `node:http`, one socket per request in flight (the engine's
 * own listener is measured, not a client's connection setup).
 */
import * as http from "node:http"

export interface Answer {
  readonly status: number
  readonly text: string
}

export type Call = (method: string, route: string, body?: unknown, headers?: Record<string, string>) => Promise<Answer>

export const httpClient = (base: string, maxSockets: number): { readonly call: Call; readonly close: () => void } => {
  const u = new URL(base)
  const agent = new http.Agent({ keepAlive: true, maxSockets })
  const call: Call = (method, route, body, headers = {}) =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body)
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          method,
          path: route,
          agent,
          headers: { ...headers, ...(payload !== undefined ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}) }
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
          res.on("error", reject)
        }
      )
      req.on("error", reject)
      req.end(payload)
    })
  return { call, close: () => agent.destroy() }
}

export const expectStatus = (what: string, a: Answer, status: number): any => {
  if (a.status !== status) throw new Error(`${what}: expected ${status}, got ${a.status}: ${a.text.slice(0, 400)}`)
  return a.text === "" ? undefined : JSON.parse(a.text)
}
