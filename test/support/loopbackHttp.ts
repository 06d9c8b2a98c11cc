/**
 * A test's `node:http` server on loopback: listening on a free port (its URL answered) and closed
 * with every connection it still holds.
 */
import type * as http from "node:http"
import type { AddressInfo } from "node:net"

/** Listens on 127.0.0.1 at a free port; the server's base URL (`http://127.0.0.1:<port>/`). */
export const listenLoopback = async (server: http.Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

/** Ends every connection the server holds (idle keep-alive ones included), then closes it. */
export const closeLoopback = async (server: http.Server): Promise<void> => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
}
