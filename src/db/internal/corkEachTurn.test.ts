import * as net from "node:net"
import { describe, expect, it } from "vitest"
import { eventually } from "../../../test/support/eventually.js"
// @ts-expect-error: plain JS module shared with the PGlite worker (no declarations)
import { corkEachTurn } from "./corkEachTurn.mjs"

/** A connected pair over loopback: the server's end (wrapped) and what the client end reads. */
const pair = async () => {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as net.AddressInfo).port
  const serverSide = new Promise<net.Socket>((resolve) => server.once("connection", resolve))
  const client = net.connect(port, "127.0.0.1")
  client.setNoDelay(true)
  const reads: Buffer[] = []
  client.on("data", (b: Buffer) => reads.push(b))
  const socket = corkEachTurn(await serverSide) as net.Socket
  socket.setNoDelay(true)
  const close = async () => {
    client.destroy()
    socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return { socket, reads, close }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))
const until = (cond: () => boolean, what: string) => eventually(cond, { what, deadlineMs: 5_000, intervalMs: 2 })

describe("corkEachTurn (the PGlite worker's replies)", () => {
  it("corks a turn's writes from the first and uncorks at the end of the turn: held until then (nothing written to the kernel), then whole and in order", async () => {
    const { socket, reads, close } = await pair()
    try {
      expect(socket.writableCorked).toBe(0)
      socket.write(Buffer.from("2\0\0\0\x04"))
      expect(socket.writableCorked).toBe(1)
      // Later writes of the same turn, microtasks included (pglite-socket's messages run in promise continuations).
      await Promise.resolve()
      socket.write(Buffer.from("n\0\0\0\x04"))
      await Promise.resolve().then(() => socket.write(Buffer.from("C\0\0\0\x0dSELECT 1\0")))
      socket.write(Buffer.from("Z\0\0\0\x05I"), () => undefined)
      expect(socket.writableCorked).toBe(1)
      // Held in the stream, not written: uncorked, a NoDelay socket hands each write to the kernel at once.
      expect(socket.writableLength).toBe(5 + 5 + 14 + 6)
      await turn()
      expect(socket.writableCorked).toBe(0)
      await until(() => Buffer.concat(reads).length === 5 + 5 + 14 + 6, "the corked bytes read")
      expect(Buffer.concat(reads).toString("latin1")).toBe("2\0\0\0\x04n\0\0\0\x04C\0\0\0\x0dSELECT 1\0Z\0\0\0\x05I")
      // The next turn corks again, on its own.
      socket.write("next")
      expect(socket.writableCorked).toBe(1)
      await turn()
      expect(socket.writableCorked).toBe(0)
      await until(() => Buffer.concat(reads).toString("latin1").endsWith("next"), "the next turn's bytes read")
    } finally {
      await close()
    }
  })

  it("a socket ended and destroyed in the turn it wrote (pglite-socket's detach) still sends what it held, whole", async () => {
    const { socket, reads, close } = await pair()
    try {
      socket.write("last reply")
      expect(socket.writableCorked).toBe(1)
      socket.end()
      socket.destroy()
      await until(() => Buffer.concat(reads).toString("latin1") === "last reply", "the held bytes read after end()")
      await turn()
      expect(socket.destroyed).toBe(true)
    } finally {
      await close()
    }
  })
})
