/** One JSON-RPC 2.0 call over HTTP POST (id 1), cut off after `timeoutMs`; the caller reads the answer. */
export const postJsonRpc = (url: string, method: string, params: ReadonlyArray<unknown>, timeoutMs: number): Promise<Response> =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(timeoutMs)
  })
