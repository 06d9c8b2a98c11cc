/**
 * `imageUrl` / `bannerUrl` fetches against a local HTTPS server (a certificate made in the test
 * for `img.test.example`, which only this test's resolver knows, answering 127.0.0.1; loopback
 * admitted by the test-only flag, as the webhook tests do): success and re-hosting, the type
 * judged by the bytes not the header, redirects refused, a slow server cut at the deadline, an
 * oversized body refused before reading (declared) or with the reader stopped at the bound
 * (streamed), exactly the bound accepted, wrong types and shapes. Then every private-address
 * form, refused without a connection: with the flag off, loopback in each literal spelling and
 * names resolving to it reach the server zero times; every other non-public form is refused
 * before any socket is opened whatever the flag.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either, Exit, Layer, Option, Scope } from "effect"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import type { Resolver } from "../../src/net/PublicTarget.js"
import { selfSignedCertificate } from "../support/selfSignedCertificate.js"
import { imageBytesMax } from "../../src/services/images/ImageProcessor.js"
import type { ImageRefused } from "../../src/services/images/ImageRefused.js"
import * as ImageService from "../../src/services/images/ImageService.js"
import { padPng, solidImage } from "../support/testImages.js"

const HOST = "img.test.example"
const tls = await selfSignedCertificate(HOST)

const dnsAnswers: Record<string, ReadonlyArray<string>> = {
  [HOST]: ["127.0.0.1"],
  "loopback.test.example": ["127.0.0.1"],
  "v6loop.test.example": ["::1"],
  "private.test.example": ["10.1.2.3"],
  "rfc1918b.test.example": ["172.16.0.9"],
  "rfc1918c.test.example": ["192.168.1.20"],
  "mapped.test.example": ["::ffff:192.168.0.1"],
  "mappedloop.test.example": ["::ffff:127.0.0.1"],
  "linklocal.test.example": ["169.254.169.254"],
  "ula.test.example": ["fd12::1"],
  "cgnat.test.example": ["100.64.0.1"],
  "mixed.test.example": ["93.184.216.34", "10.0.0.1"]
}
const resolver: Resolver = async (host) => {
  const answers = dnsAnswers[host.toLowerCase()]
  if (answers === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
  return answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
}

const FETCH_TIMEOUT_MS = 1_000
const CHUNK = 64 * 1024

interface Server {
  readonly port: number
  connections: number
  /** Bytes of `/huge-chunked` accepted by the socket, and whether the client hung up first. */
  hugeSent: number
  hugeCut: Promise<boolean>
  readonly close: () => Promise<void>
}

const images: Record<"square" | "wide" | "threeByTwo" | "atBound" | "overBound", Uint8Array> = {
  square: new Uint8Array(),
  wide: new Uint8Array(),
  threeByTwo: new Uint8Array(),
  atBound: new Uint8Array(),
  overBound: new Uint8Array()
}

const startServer = (): Promise<Server> =>
  new Promise((resolve) => {
    let hugeDone: (cut: boolean) => void = () => {}
    const state = { connections: 0, hugeSent: 0, hugeCut: new Promise<boolean>((r) => (hugeDone = r)) }
    const sockets = new Set<import("node:stream").Duplex>()
    const send = (res: import("node:http").ServerResponse, type: string, body: Uint8Array) =>
      res.writeHead(200, { "content-type": type, "content-length": String(body.byteLength) }).end(body)
    const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
      switch (req.url) {
        case "/square.png":
          return send(res, "image/png", images.square)
        case "/square-as-text":
          return send(res, "text/plain", images.square) // the header is not read: the bytes are a PNG
        case "/wide.png":
          return send(res, "image/png", images.wide)
        case "/three-by-two.png":
          return send(res, "image/png", images.threeByTwo)
        case "/page":
          return send(res, "text/html", new TextEncoder().encode("<!doctype html><title>not an image</title>"))
        case "/svg-as-png":
          return send(res, "image/png", new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'))
        case "/redirect":
          return res.writeHead(302, { location: `https://${HOST}/square.png` }).end()
        case "/moved":
          return res.writeHead(301, { location: "/square.png" }).end()
        case "/missing":
          return res.writeHead(404).end("no")
        case "/slow":
          // the headers and a first piece, then nothing
          res.writeHead(200, { "content-type": "image/png", "content-length": String(images.square.byteLength) })
          res.write(images.square.subarray(0, 16))
          return
        case "/silent":
          return
        case "/at-bound":
          return send(res, "image/png", images.atBound)
        case "/over-bound-declared":
          return send(res, "image/png", images.overBound)
        case "/huge-chunked": {
          // 40 MB with no Content-Length, written as fast as the socket takes it
          const total = 40 * 1024 * 1024
          const piece = Buffer.alloc(CHUNK, 0x5a)
          res.writeHead(200, { "content-type": "image/png" })
          res.on("close", () => hugeDone(!res.writableFinished))
          const pump = () => {
            while (state.hugeSent < total && !res.destroyed) {
              state.hugeSent += piece.length
              if (!res.write(piece)) return void res.once("drain", pump)
            }
            if (!res.destroyed) res.end()
          }
          return pump()
        }
        default:
          return res.writeHead(404).end()
      }
    })
    server.on("connection", (s) => {
      state.connections++
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      const s: Server = Object.assign(state, {
        port,
        close: () =>
          new Promise<void>((ok) => {
            for (const sock of sockets) sock.destroy()
            server.close(() => ok())
          })
      })
      resolve(s)
    })
  })

let server: Server
let scope: Scope.CloseableScope
let open: ImageService.ImageServiceShape
let production: ImageService.ImageServiceShape

const run = <A>(e: Effect.Effect<A, ImageRefused | SqlError>) => Effect.runPromise(Effect.either(e))
const refusalOf = async (e: Effect.Effect<unknown, ImageRefused | SqlError>): Promise<ImageRefused> => {
  const r = await run(e)
  if (Either.isRight(r)) throw new Error("expected a refusal")
  if (r.left._tag !== "ImageRefused") throw r.left
  return r.left
}

beforeAll(async () => {
  images.square = await solidImage("png", 48, 48)
  images.wide = await solidImage("png", 300, 100)
  images.threeByTwo = await solidImage("png", 150, 100)
  images.atBound = padPng(images.square, imageBytesMax)
  images.overBound = padPng(images.square, imageBytesMax + 1)
  server = await startServer()
  scope = await Effect.runPromise(Scope.make())
  const ctx = await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))
  const common = { publicBaseUrl: "https://cs.test.example", resolve: resolver, resolveTimeoutMs: 500, fetchTimeoutMs: FETCH_TIMEOUT_MS, tlsCa: tls.cert }
  open = await Effect.runPromise(Effect.provide(ImageService.make({ ...common, allowLoopbackForTests: true }), ctx))
  production = await Effect.runPromise(Effect.provide(ImageService.make(common), ctx))
}, 120_000)

afterAll(async () => {
  await server?.close()
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const url = (path: string) => `https://${HOST}:${server.port}${path}`

describe("image fetch (test-only loopback allowance)", () => {
  it("fetches, recognizes and re-hosts an image; the stored bytes are the fetched bytes", async () => {
    const r = await run(open.resolve({ url: url("/square.png"), role: "image" }))
    if (Either.isLeft(r)) throw r.left
    expect(r.right._tag).toBe("Fetched")
    const resolved = r.right
    if (resolved._tag !== "Fetched") throw new Error("not fetched")
    expect(resolved.image).toMatchObject({ format: "png", width: 48, height: 48 })
    expect(Buffer.from(resolved.image.bytes).equals(Buffer.from(images.square))).toBe(true)
    // The URL the re-host will give, known before anything is stored (what a dry run sizes with).
    const predicted = open.hostedUrlOf(resolved)
    const hosted = await Effect.runPromise(open.rehost(resolved))
    expect(hosted.url).toMatch(/^https:\/\/cs\.test\.example\/api\/v1\/uploads\/images\/[0-9a-f]{64}\.png$/)
    expect(predicted).toBe(hosted.url)
    expect(open.hostedUrlOf({ _tag: "Hosted", image: hosted })).toBe(hosted.url)
    const served = Option.getOrThrow(await Effect.runPromise(open.serve(`${hosted.id}.png`)))
    expect(Buffer.from(served.body).equals(Buffer.from(images.square))).toBe(true)
  })

  it("judges the type by the bytes, never by the Content-Type header", async () => {
    const asText = await run(open.resolve({ url: url("/square-as-text"), role: "image" }))
    expect(Either.isRight(asText) && asText.right._tag).toBe("Fetched")
    expect(await refusalOf(open.resolve({ url: url("/page"), role: "image" }))).toMatchObject({ reason: "unsupported_type", role: "image" })
    expect(await refusalOf(open.resolve({ url: url("/svg-as-png"), role: "banner" }))).toMatchObject({ reason: "unsupported_type", role: "banner" })
  })

  it("refuses a redirect without following it", async () => {
    const before = server.connections
    expect(await refusalOf(open.resolve({ url: url("/redirect"), role: "image" }))).toMatchObject({ reason: "redirect", statusCode: 302 })
    expect(await refusalOf(open.resolve({ url: url("/moved"), role: "banner" }))).toMatchObject({ reason: "redirect", statusCode: 301, role: "banner" })
    expect(server.connections - before).toBe(2) // one each: the Location was never requested
  })

  it("cuts a slow server at the deadline", async () => {
    for (const path of ["/slow", "/silent"]) {
      const started = Date.now()
      const refused = await refusalOf(open.resolve({ url: url(path), role: "image" }))
      const elapsedMs = Date.now() - started
      expect(refused).toMatchObject({ reason: "unreachable" })
      expect(refused.message).toContain(`within ${FETCH_TIMEOUT_MS} ms`)
      expect(elapsedMs).toBeGreaterThanOrEqual(FETCH_TIMEOUT_MS - 50)
      expect(elapsedMs).toBeLessThan(FETCH_TIMEOUT_MS + 2_000)
    }
  })

  it("refuses a 404 as unreachable", async () => {
    expect(await refusalOf(open.resolve({ url: url("/missing"), role: "banner" }))).toMatchObject({ reason: "unreachable", statusCode: 404 })
  })

  it("accepts a body of exactly the bound", async () => {
    const r = await run(open.resolve({ url: url("/at-bound"), role: "image" }))
    if (Either.isLeft(r)) throw r.left
    if (r.right._tag !== "Fetched") throw new Error("not fetched")
    expect(r.right.image.bytes.byteLength).toBe(imageBytesMax)
  }, 30_000)

  it("refuses a declared body one byte over the bound before reading any of it", async () => {
    expect(await refusalOf(open.resolve({ url: url("/over-bound-declared"), role: "image" }))).toMatchObject({
      reason: "too_large",
      bytesRead: 0,
      limitBytes: imageBytesMax
    })
  })

  it("stops reading a streamed body at the bound", async () => {
    const refused = await refusalOf(open.resolve({ url: url("/huge-chunked"), role: "image" }))
    expect(refused).toMatchObject({ reason: "too_large", limitBytes: imageBytesMax })
    expect(refused.bytesRead!).toBeGreaterThan(imageBytesMax)
    expect(refused.bytesRead!).toBeLessThanOrEqual(imageBytesMax + CHUNK)
    // the connection was cut: the server could not finish its 40 MB
    expect(await server.hugeCut).toBe(true)
    expect(server.hugeSent).toBeLessThan(40 * 1024 * 1024)
  }, 30_000)

  it("applies the shape rules: image at most 1.5:1, banner wider than 1.5:1", async () => {
    expect(await refusalOf(open.resolve({ url: url("/wide.png"), role: "image" }))).toMatchObject({ reason: "wrong_shape", width: 300, height: 100 })
    expect(await refusalOf(open.resolve({ url: url("/square.png"), role: "banner" }))).toMatchObject({ reason: "wrong_shape", role: "banner" })
    expect(await refusalOf(open.resolve({ url: url("/three-by-two.png"), role: "banner" }))).toMatchObject({ reason: "wrong_shape" })
    const threeByTwo = await run(open.resolve({ url: url("/three-by-two.png"), role: "image" }))
    expect(Either.isRight(threeByTwo)).toBe(true)
    const banner = await run(open.resolve({ url: url("/wide.png"), role: "banner" }))
    expect(Either.isRight(banner) && banner.right._tag === "Fetched" && banner.right.image.width).toBe(300)
  })

  it("refuses http, credentials and unresolvable names", async () => {
    expect(await refusalOf(production.resolve({ url: `http://${HOST}:${server.port}/square.png`, role: "image" }))).toMatchObject({
      reason: "invalid_url",
      targetReason: "not_https"
    })
    expect(await refusalOf(open.resolve({ url: `https://u:p@${HOST}:${server.port}/square.png`, role: "image" }))).toMatchObject({
      reason: "invalid_url",
      targetReason: "credentials_in_url"
    })
    expect(await refusalOf(open.resolve({ url: "ftp://files.example.com/a.png", role: "image" }))).toMatchObject({ reason: "invalid_url" })
    expect(await refusalOf(open.resolve({ url: "https://nowhere.test.example/a.png", role: "banner" }))).toMatchObject({
      reason: "unreachable",
      targetReason: "unresolvable",
      role: "banner"
    })
  })
})

describe("image fetch refuses every private address form without a connection", () => {
  const loopbackForms = (port: number): ReadonlyArray<readonly [string, string]> => [
    [`https://127.0.0.1:${port}/square.png`, "loopback"],
    [`https://127.1:${port}/square.png`, "loopback"],
    [`https://2130706433:${port}/square.png`, "loopback"],
    [`https://0x7f000001:${port}/square.png`, "loopback"],
    [`https://0x7f.1:${port}/square.png`, "loopback"],
    [`https://0177.0.0.1:${port}/square.png`, "loopback"],
    [`https://017700000001:${port}/square.png`, "loopback"],
    [`https://[::1]:${port}/square.png`, "loopback"],
    [`https://[::ffff:127.0.0.1]:${port}/square.png`, "ipv4_mapped"],
    [`https://[::ffff:7f00:1]:${port}/square.png`, "ipv4_mapped"],
    [`https://[::127.0.0.1]:${port}/square.png`, "ipv4_compatible"],
    [`https://localhost:${port}/square.png`, "localhost"],
    [`https://loopback.test.example:${port}/square.png`, "loopback"],
    [`https://v6loop.test.example:${port}/square.png`, "loopback"],
    [`https://mappedloop.test.example:${port}/square.png`, "ipv4_mapped"],
    [`https://${HOST}:${port}/square.png`, "loopback"]
  ]
  const otherForms: ReadonlyArray<readonly [string, string]> = [
    ["https://10.0.0.1/a.png", "private"],
    ["https://10.255.255.255/a.png", "private"],
    ["https://172.16.0.1/a.png", "private"],
    ["https://172.31.255.254/a.png", "private"],
    ["https://192.168.1.1/a.png", "private"],
    ["https://0xc0a80101/a.png", "private"],
    ["https://3232235777/a.png", "private"],
    ["https://012.0.0.1/a.png", "private"],
    ["https://169.254.169.254/latest/meta-data", "link_local"],
    ["https://100.64.0.1/a.png", "cgnat"],
    ["https://0.0.0.0/a.png", "unspecified"],
    ["https://[fe80::1]/a.png", "link_local"],
    ["https://[fc00::1]/a.png", "unique_local"],
    ["https://[fd12:3456::1]/a.png", "unique_local"],
    ["https://[::ffff:10.0.0.1]/a.png", "ipv4_mapped"],
    ["https://[::ffff:c0a8:101]/a.png", "ipv4_mapped"],
    ["https://[64:ff9b::10.0.0.1]/a.png", "nat64"],
    ["https://[2002:c0a8:101::1]/a.png", "6to4_embedded"],
    ["https://[ff02::1]/a.png", "multicast"],
    ["https://printer.local/a.png", "local_name"],
    ["https://db.internal/a.png", "local_name"],
    ["https://intranet/a.png", "single_label"],
    ["https://private.test.example/a.png", "private"],
    ["https://rfc1918b.test.example/a.png", "private"],
    ["https://rfc1918c.test.example/a.png", "private"],
    ["https://mapped.test.example/a.png", "ipv4_mapped"],
    ["https://linklocal.test.example/a.png", "link_local"],
    ["https://ula.test.example/a.png", "unique_local"],
    ["https://cgnat.test.example/a.png", "cgnat"],
    ["https://mixed.test.example/a.png", "private"]
  ]

  it("with the loopback allowance off, every loopback spelling is refused and the local server sees no connection", async () => {
    const forms = loopbackForms(server.port)
    expect(forms.length).toBeGreaterThanOrEqual(16)
    const before = server.connections
    for (const [u, targetReason] of forms) {
      for (const role of ["image", "banner"] as const) {
        const refused = await refusalOf(production.resolve({ url: u, role }))
        expect({ u, reason: refused.reason, targetReason: refused.targetReason }).toEqual({ u, reason: "not_public", targetReason })
      }
    }
    expect(server.connections).toBe(before)
  })

  it.each([
    ["off", () => production],
    ["on", () => open]
  ] as const)("every other non-public form is refused with the allowance %s", async (_flag, service) => {
    const before = server.connections
    for (const [u, targetReason] of otherForms) {
      const refused = await refusalOf(service().resolve({ url: u, role: "image" }))
      expect({ u, reason: refused.reason, targetReason: refused.targetReason }).toEqual({ u, reason: "not_public", targetReason })
    }
    expect(server.connections).toBe(before)
  })

  it("the allowance admits loopback only: mapped and compatible loopback stay refused", async () => {
    for (const [u, reason] of [
      [`https://[::ffff:127.0.0.1]:${server.port}/square.png`, "ipv4_mapped"],
      [`https://mappedloop.test.example:${server.port}/square.png`, "ipv4_mapped"]
    ] as const) {
      expect(await refusalOf(open.resolve({ url: u, role: "image" }))).toMatchObject({ reason: "not_public", targetReason: reason })
    }
  })
})
