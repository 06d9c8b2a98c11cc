/**
 * The signal stream's reconnect (`signalStream`): after a socket closes it reconnects, reads the
 * tape from the last delivered signal's time (`since`, ascending) and then the new socket's
 * snapshot, delivering each signal once, in order, across the gap. Driven by a scripted socket and
 * a scripted tape read, so every message's timing is the test's.
 */
import { describe, expect, it } from "vitest"
import type { Signal } from "../../src/domain/Signal.js"
import { signalStream } from "./index.js"

const signal = (id: string, atMs: number) => ({ id, at_ms: atMs }) as unknown as Signal

class ScriptedSocket extends EventTarget {
  constructor(readonly url: string, readonly headers: Record<string, string>) {
    super()
  }
  open() {
    this.dispatchEvent(new Event("open"))
  }
  send(message: unknown) {
    this.dispatchEvent(Object.assign(new Event("message"), { data: JSON.stringify(message) }))
  }
  close(code = 1006) {
    this.dispatchEvent(Object.assign(new Event("close"), { code, reason: "" }))
  }
}

const settle = () => new Promise((r) => setTimeout(r, 0))

describe("signalStream", () => {
  it("fills a reconnect's gap from the tape since the last signal, each signal once and in order", async () => {
    const sockets: Array<ScriptedSocket> = []
    const reads: Array<string> = []
    const delivered: Array<string> = []
    const tape = [signal("b", 2_000), signal("c", 3_000), signal("d", 4_000)]
    const stream = signalStream({
      baseUrl: "http://data.test",
      apiKey: "svc_live_x",
      query: { chain: "solana" },
      onSignal: (s) => delivered.push(s.id),
      backoffMs: () => 0,
      connect: (url, headers) => {
        const s = new ScriptedSocket(url, headers)
        sockets.push(s)
        return s as unknown as WebSocket
      },
      fetch: async (input) => {
        const url = new URL(input instanceof Request ? input.url : String(input))
        reads.push(`${url.pathname}?${url.searchParams.toString()}`)
        const since = Number(url.searchParams.get("since"))
        return new Response(JSON.stringify({ signals: tape.filter((s) => s.at_ms >= since), next_after: null }), { headers: { "content-type": "application/json" } })
      }
    })
    try {
      expect(sockets[0]!.url).toBe("ws://data.test/v1/signals/stream?chain=solana")
      expect(sockets[0]!.headers).toEqual({ authorization: "Bearer svc_live_x" })
      sockets[0]!.open()
      sockets[0]!.send({ type: "snapshot", signals: [signal("a", 1_000)] })
      sockets[0]!.send({ type: "signal", signal: signal("b", 2_000) })
      await settle()
      expect(reads).toEqual([]) // the first connection has no gap to fill
      sockets[0]!.close()
      await new Promise((r) => setTimeout(r, 5))
      expect(sockets).toHaveLength(2)
      sockets[1]!.open()
      // The new socket's snapshot (the newest signals only) misses c, which the tape read has; both carry d.
      sockets[1]!.send({ type: "snapshot", signals: [signal("d", 4_000)] })
      sockets[1]!.send({ type: "signal", signal: signal("e", 5_000) })
      await new Promise((r) => setTimeout(r, 5))
      expect(reads).toEqual(["/v1/signals?since=2000&order=asc&limit=500&chain=solana"])
      expect(delivered).toEqual(["a", "b", "c", "d", "e"])
    } finally {
      stream.close()
    }
    expect(sockets).toHaveLength(2)
  })
})
