/**
 * A TCP proxy for tests that need a connection to break under a client: it listens on
 * 127.0.0.1 (an OS-assigned port), pipes each accepted socket to `target`, and `cut()` destroys
 * every pair it carries at that moment (both ends, at once, as a dropped network or a killed
 * server would), while new connections keep being accepted and piped. `accepted()` counts the
 * connections it took, so a test can see a client dial again. `close()` cuts everything and stops
 * listening. Bytes are passed through untouched (no protocol knowledge).
 */
import * as net from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Connections accepted so far. */
  readonly accepted: () => number
  /** Connections open right now. */
  readonly open: () => number
  /** Destroys every connection open now (both sides); answers how many. */
  readonly cut: (how: "close" | "reset") => number
  readonly close: () => Promise<void>
}

export const startTcpProxy = (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> =>
  new Promise((resolve, reject) => {
    const pairs = new Set<readonly [net.Socket, net.Socket]>()
    let accepted = 0
    const server = net.createServer((client) => {
      accepted++
      const upstream = net.connect(target.port, target.host)
      const pair = [client, upstream] as const
      pairs.add(pair)
      const end = () => {
        pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      // An error on either side (ECONNRESET after a cut) ends the pair; the proxy itself never throws.
      client.on("error", end).on("close", end)
      upstream.on("error", end).on("close", end)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (typeof address !== "object" || address === null) return reject(new Error("the proxy has no port"))
      const cut = (how: "close" | "reset") => {
        const n = pairs.size
        for (const [client, upstream] of [...pairs]) {
          if (how === "reset") client.resetAndDestroy()
          else client.destroy()
          upstream.destroy()
        }
        pairs.clear()
        return n
      }
      resolve({
        port: address.port,
        accepted: () => accepted,
        open: () => pairs.size,
        cut,
        close: () =>
          new Promise<void>((done) => {
            cut("close")
            server.close(() => done())
          })
      })
    })
  })
