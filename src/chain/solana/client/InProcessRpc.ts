/**
 * The engine's Solana RPC client (`solanaRpc(url)`): kit's `createSolanaRpc` everywhere, except
 * that a JSON-RPC endpoint served by this very process (the embedded localnet's RPC server,
 * `localnet/server/internal/httpJsonRpc.ts`, registers its URL while it listens) is called in
 * process: the same request text in and the same response text out as over HTTP, without the
 * loopback socket, the HTTP server and client and `fetch`'s streams (issue 28 item 7: an embedded
 * engine paid both ends of every chain read on its own event loop).
 *
 * Invariants:
 * - The bytes are the HTTP path's: the payload serialized with kit's `stringifyJsonWithBigInts`,
 *   the endpoint's own parse, dispatch and serialization, the answer parsed with kit's
 *   `parseJsonWithBigInts` (what kit's HTTP transport does for every Solana method), so a caller
 *   sees the same values, errors and bigints on both paths.
 * - Decided per request: an endpoint that stops listening unregisters, and the next request goes
 *   over HTTP (and fails as a closed server does); a body over the endpoint's bound goes over
 *   HTTP too, where the server refuses it as before.
 * - Another process's endpoint (a remote node, a localnet of another process) is HTTP as ever.
 */
import { createDefaultRpcTransport, createSolanaRpcFromTransport, type RpcTransport } from "@solana/kit"
// kit's own JSON with exact integers (a dependency of @solana/kit at its version, which kit's HTTP transport uses).
import { parseJsonWithBigInts, stringifyJsonWithBigInts } from "@solana/rpc-spec-types"

/** A JSON-RPC endpoint in this process: request body text in, response text out (undefined: nothing to answer, a notification). */
export interface InProcessEndpoint {
  readonly maxBodyBytes: number
  readonly handle: (body: string) => string | undefined
}

const endpoints = new Map<string, InProcessEndpoint>()

/** Serves `url` in process until the returned function is called (the server stopped). */
export const serveInProcess = (url: string, endpoint: InProcessEndpoint): (() => void) => {
  endpoints.set(url, endpoint)
  return () => {
    if (endpoints.get(url) === endpoint) endpoints.delete(url)
  }
}

/** Whether `url` is served in this process now. */
export const servedInProcess = (url: string): boolean => endpoints.has(url)

/** The transport: in process when this process serves `url`, else kit's default HTTP transport. */
export const solanaRpcTransport = (url: string): RpcTransport => {
  const http = createDefaultRpcTransport({ url })
  return (async (request: Parameters<RpcTransport>[0]) => {
    const local = endpoints.get(url)
    if (local === undefined) return http(request)
    const body = stringifyJsonWithBigInts(request.payload)
    if (Buffer.byteLength(body) > local.maxBodyBytes) return http(request)
    request.signal?.throwIfAborted()
    const answer = local.handle(body)
    // A notification has no answer over HTTP either (204): kit never sends one.
    if (answer === undefined) throw new Error(`${url}: no answer to a JSON-RPC notification`)
    return parseJsonWithBigInts(answer)
  }) as RpcTransport
}

/** kit's Solana RPC over `solanaRpcTransport(url)`: what `createSolanaRpc(url)` is, minus the loopback for an endpoint of this process. */
export const solanaRpc = (url: string) => createSolanaRpcFromTransport(solanaRpcTransport(url))
