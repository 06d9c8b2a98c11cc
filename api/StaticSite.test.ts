/**
 * The web page's static serving through a real listener: content types, the shell on every page
 * route (with the data port written in), strong ETags and 304s, gzip when asked, immutable
 * caching of hashed assets, no way out of the build directory, and the load-time bounds.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { json } from "./Http.js"
import { route } from "./Router.js"
import { type RunningServer, serve } from "./Server.js"
import { acceptsGzip, loadStaticSite, type StaticSite, withDataPort } from "./StaticSite.js"

const dir = mkdtempSync(path.join(os.tmpdir(), "static-site-"))
const SHELL = '<!doctype html><html><head><meta name="curvestream-data-port" content="" /></head><body><div id="app"></div></body></html>'
const SCRIPT = `console.log(${JSON.stringify("x".repeat(2000))})`
let scope: Scope.CloseableScope
let server: RunningServer

const build = (files: Record<string, string | Buffer>): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), "static-build-"))
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(d, rel)), { recursive: true })
    writeFileSync(path.join(d, rel), body)
  }
  return d
}

beforeAll(async () => {
  mkdirSync(path.join(dir, "assets"))
  writeFileSync(path.join(dir, "index.html"), SHELL)
  writeFileSync(path.join(dir, "assets", "index-abc.js"), SCRIPT)
  writeFileSync(path.join(dir, "assets", "index-abc.css"), "body{color:red}")
  writeFileSync(path.join(dir, ".source-hash"), "secret-ish")
  writeFileSync(path.join(os.tmpdir(), "outside.txt"), "outside")
  const site = loadStaticSite(dir, withDataPort(8181)) as StaticSite
  const routes = [route({ method: "GET", path: "/api/v1/ping", operationId: "ping", summary: "ping", tags: [], auth: "public", responses: {}, handler: () => json(200, { ok: true }) })]
  scope = await Effect.runPromise(Scope.make())
  server = await Effect.runPromise(serve({ name: "test", host: "127.0.0.1", port: 0, maxBodyBytes: 1024, routes, site }).pipe(Scope.extend(scope)))
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

const get = (p: string, headers: Record<string, string> = {}) => fetch(`${server.url}${p}`, { headers: { "accept-encoding": "identity", ...headers } })

describe("the web page's static files", () => {
  it("answers the shell on every page route, with the data port written in and revalidation", async () => {
    for (const p of ["/", "/markets", "/signals", "/lab", "/token/solana/So11111111111111111111111111111111111111112"]) {
      const res = await get(p)
      expect(res.status, p).toBe(200)
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(res.headers.get("cache-control")).toBe("no-cache")
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      expect(await res.text()).toContain('<meta name="curvestream-data-port" content="8181" />')
    }
  })

  it("serves assets with their content type, a strong ETag, 304 on a match and immutable caching", async () => {
    const js = await get("/assets/index-abc.js")
    expect(js.status).toBe(200)
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(await js.text()).toBe(SCRIPT)
    const etag = js.headers.get("etag")!
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
    const again = await get("/assets/index-abc.js", { "if-none-match": etag })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    expect((await get("/assets/index-abc.js", { "if-none-match": '"other"' })).status).toBe(200)
    const css = await get("/assets/index-abc.css")
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
  })

  it("gzips when the client accepts it, and only then", async () => {
    const res = await fetch(`${server.url}/assets/index-abc.js`, { headers: { "accept-encoding": "gzip" } })
    expect(res.headers.get("content-encoding")).toBe("gzip")
    expect(res.headers.get("vary")).toBe("Accept-Encoding")
    expect(await res.text()).toBe(SCRIPT) // fetch decodes it
    const raw = await get("/assets/index-abc.js", { "accept-encoding": "gzip;q=0" })
    expect(raw.headers.get("content-encoding")).toBeNull()
    expect(acceptsGzip("br, gzip")).toBe(true)
    expect(acceptsGzip("gzip;q=0")).toBe(false)
    expect(acceptsGzip("")).toBe(false)
  })

  it("answers only the build's own files: unknown assets, dotfiles and traversal are 404, the API still routes", async () => {
    for (const p of ["/assets/missing.js", "/assets/../index.html", "/assets/%2e%2e/%2e%2e/outside.txt", "/assets/..%2f..%2foutside.txt", "/assets/.source-hash", "/.source-hash", "/index.html/x", "/tokens"]) {
      const res = await get(p)
      expect(res.status, p).toBe(404)
      expect(((await res.json()) as { error: { code: string } }).error.code, p).toBe("ROUTE_NOT_FOUND")
    }
    expect(await (await get("/api/v1/ping")).json()).toEqual({ ok: true })
    expect((await get("/api/v1/nothing")).status).toBe(404)
  })
})

describe("loading a build", () => {
  it("says what is missing when there is no index.html", () => {
    const empty = build({ "assets/a.js": "1" })
    expect(loadStaticSite(empty)).toEqual({ missing: `${path.join(empty, "index.html")} does not exist` })
  })

  it("refuses a build over its bounds", () => {
    const d = build({ "index.html": SHELL, "assets/a.js": "x".repeat(300), "assets/b.js": "y" })
    expect(() => loadStaticSite(d, undefined, { maxFiles: 10, maxFileBytes: 200, maxTotalBytes: 1000 })).toThrow(/a.js is 300 bytes, over 200/)
    expect(() => loadStaticSite(d, undefined, { maxFiles: 2, maxFileBytes: 1000, maxTotalBytes: 1000 })).toThrow(/over 2 files/)
    expect(() => loadStaticSite(d, undefined, { maxFiles: 10, maxFileBytes: 1000, maxTotalBytes: 350 })).toThrow(/over 350 bytes in all/)
    const site = loadStaticSite(d, undefined, { maxFiles: 3, maxFileBytes: 300, maxTotalBytes: 1000 }) as StaticSite
    expect([...site.files.keys()].sort()).toEqual(["/assets/a.js", "/assets/b.js", "/index.html"])
    expect(site.jsBytes).toBe(301)
  })
})
