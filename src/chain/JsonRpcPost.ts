import { postJson } from "./internal/JsonRpcHttp.js"

/** A JSON-RPC answer: the HTTP status, and its body parsed as JSON on demand (`JSON.parse`'s `SyntaxError` when it is not). */
export interface JsonRpcAnswer {
  readonly status: number
  readonly json: () => unknown
}

/**
 * One JSON-RPC 2.0 call over HTTP POST (id 1), settled within `timeoutMs` (`JsonRpcTimeout`); the
 * caller reads the answer. On the chain clients' undici client (`postJson`), not `fetch`: a URL's
 * `user:password` is sent as Basic authorization (fetch refuses such a URL, naming it, password
 * included), and no error message carries the URL's credentials.
 */
export const postJsonRpc = async (url: string, method: string, params: ReadonlyArray<unknown>, timeoutMs: number): Promise<JsonRpcAnswer> => {
  const res = await postJson(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }), { deadlineMs: timeoutMs })
  return { status: res.status, json: () => JSON.parse(res.body) as unknown }
}
