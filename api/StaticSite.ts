/**
 * The web page (`web/`, built by vite into `web/dist`) served from memory on the main listener.
 *
 * At start the built files are read once into a map keyed by their exact URL path; a request is a
 * map lookup, so no request path ever reaches the file system (no directory traversal: `..`,
 * encoded or not, is simply a key that is not there). Each file carries its content type (from a
 * fixed table of the extensions a vite build writes), a strong ETag over its bytes, and a gzip copy
 * made at load when it is smaller. Hashed assets (`/assets/*`) are immutable for a year; the HTML
 * shell is revalidated on every load (`no-cache` + ETag), so a rebuild is picked up at once.
 *
 * Bounds: at most `maxFiles` files, each at most `maxFileBytes`, `maxTotalBytes` in all; a build
 * over them is refused at load (the engine then runs without the page and says why).
 *
 * The page's client-side routes (`/`, `/markets`, `/token/{chain}/{mint}`, `/signals`, `/lab`)
 * all answer the shell; everything else stays with the router (its 404 `ROUTE_NOT_FOUND`).
 */
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { gzipSync } from "node:zlib"
import { Effect } from "effect"
import type { HttpRequest, HttpResponse, TemplatedApp } from "uws-pack"
import { type Header, ifNoneMatchHits, type Reply, statusLine } from "./Http.js"

export interface StaticFile {
  readonly body: Buffer
  readonly gzip: Buffer | undefined
  readonly etag: string
  readonly contentType: string
  readonly cacheControl: string
}

export interface StaticSite {
  /** URL path (`/assets/index-abc.js`) → file. */
  readonly files: ReadonlyMap<string, StaticFile>
  /** The HTML shell every page route answers. */
  readonly shell: StaticFile
  /** Bytes of the JavaScript as built and gzipped (the page's budget is on the gzipped figure). */
  readonly jsBytes: number
  readonly jsGzipBytes: number
}

export interface StaticSiteBounds {
  readonly maxFiles: number
  readonly maxFileBytes: number
  readonly maxTotalBytes: number
}

export const defaultStaticSiteBounds: StaticSiteBounds = { maxFiles: 256, maxFileBytes: 4 * 1024 * 1024, maxTotalBytes: 16 * 1024 * 1024 }

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8"
}

/** Compressible types get a gzip copy when it is smaller. */
const COMPRESSIBLE = new Set([".html", ".js", ".mjs", ".css", ".json", ".svg", ".txt"])

export const contentTypeOf = (file: string): string => CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream"

const IMMUTABLE = "public, max-age=31536000, immutable"
const REVALIDATE = "no-cache"

const makeFile = (rel: string, body: Buffer): StaticFile => {
  const ext = path.extname(rel).toLowerCase()
  const zipped = COMPRESSIBLE.has(ext) ? gzipSync(body, { level: 9 }) : undefined
  return {
    body,
    gzip: zipped !== undefined && zipped.byteLength < body.byteLength ? zipped : undefined,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
    contentType: contentTypeOf(rel),
    cacheControl: rel.startsWith("assets/") ? IMMUTABLE : REVALIDATE
  }
}

/**
 * Reads a built site. `undefined` with the reason when there is none (no `index.html`); throws
 * when the build passes a bound (a defect of the build, not of a request). `transformShell` may
 * rewrite the HTML shell before its ETag is taken (the engine writes the data service's port in).
 */
export const loadStaticSite = (
  dir: string,
  transformShell: (html: string) => string = (html) => html,
  bounds: StaticSiteBounds = defaultStaticSiteBounds
): StaticSite | { readonly missing: string } => {
  const indexFile = path.join(dir, "index.html")
  if (!existsSync(indexFile)) return { missing: `${indexFile} does not exist` }
  const files = new Map<string, StaticFile>()
  let total = 0
  let jsBytes = 0
  let jsGzipBytes = 0
  const walk = (sub: string): void => {
    for (const entry of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      // Dotfiles (the build's `.source-hash`) are the build's own bookkeeping, not the page's.
      if (entry.name.startsWith(".")) continue
      const rel = sub === "" ? entry.name : `${sub}/${entry.name}`
      if (entry.isDirectory()) {
        walk(rel)
        continue
      }
      if (!entry.isFile()) continue
      const size = statSync(path.join(dir, rel)).size
      if (size > bounds.maxFileBytes) throw new Error(`web build: ${rel} is ${size} bytes, over ${bounds.maxFileBytes}`)
      total += size
      if (total > bounds.maxTotalBytes) throw new Error(`web build: over ${bounds.maxTotalBytes} bytes in all`)
      if (files.size + 1 > bounds.maxFiles) throw new Error(`web build: over ${bounds.maxFiles} files`)
      let body = readFileSync(path.join(dir, rel))
      if (rel === "index.html") body = Buffer.from(transformShell(body.toString("utf8")), "utf8")
      const file = makeFile(rel, body)
      if (rel.endsWith(".js")) {
        jsBytes += file.body.byteLength
        jsGzipBytes += (file.gzip ?? file.body).byteLength
      }
      files.set(`/${rel}`, file)
    }
  }
  walk("")
  return { files, shell: files.get("/index.html")!, jsBytes, jsGzipBytes }
}

/** The client-side routes that answer the shell (uWS patterns). */
export const PAGE_ROUTES: ReadonlyArray<string> = ["/", "/markets", "/signals", "/lab", "/token/:chain/:mint"]

const COMMON_HEADERS: ReadonlyArray<Header> = [
  ["X-Content-Type-Options", "nosniff"],
  ["Referrer-Policy", "no-referrer"]
]

/** Whether an `Accept-Encoding` value admits gzip (absent, or `gzip;q=0`, does not). */
export const acceptsGzip = (acceptEncoding: string): boolean => {
  for (const part of acceptEncoding.split(",")) {
    const [coding, ...params] = part.trim().toLowerCase().split(";")
    if (coding !== "gzip" && coding !== "*") continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="))
    return q === undefined || Number(q.slice(2)) > 0
  }
  return false
}

/** The answer for one file: 304 when the validator matches, else the bytes (gzipped when asked). */
export const fileReply = (file: StaticFile, ifNoneMatch: string, acceptEncoding: string): Reply => {
  const headers: Array<Header> = [...COMMON_HEADERS, ["ETag", file.etag], ["Cache-Control", file.cacheControl], ["Vary", "Accept-Encoding"]]
  if (ifNoneMatchHits(ifNoneMatch, file.etag)) return { status: 304, headers }
  if (file.gzip !== undefined && acceptsGzip(acceptEncoding)) {
    headers.push(["Content-Encoding", "gzip"])
    return { status: 200, headers, body: file.gzip, contentType: file.contentType }
  }
  return { status: 200, headers, body: file.body, contentType: file.contentType }
}

/** The file a GET path names, or undefined (the router's 404 answers). Only exact keys match. */
export const lookup = (site: StaticSite, urlPath: string): StaticFile | undefined => site.files.get(urlPath)

const write = (res: HttpResponse, reply: Reply): void => {
  res.cork(() => {
    res.writeStatus(statusLine(reply.status))
    if (reply.contentType !== undefined) res.writeHeader("Content-Type", reply.contentType)
    for (const [k, v] of reply.headers ?? []) res.writeHeader(k, v)
    if (reply.body === undefined) res.endWithoutBody()
    else res.end(reply.body)
  })
}

/**
 * Mounts the page on `app`: the shell on each page route, the built files under `/assets/`.
 * `notFound` answers an asset path the build does not have (the router's 404). Synchronous
 * handlers: nothing to abort.
 */
export const mountStaticSite = (app: TemplatedApp, site: StaticSite, notFound: (urlPath: string) => Reply): void => {
  const headersOf = (req: HttpRequest) => ({ inm: req.getHeader("if-none-match"), ae: req.getHeader("accept-encoding") })
  for (const pattern of PAGE_ROUTES) {
    app.get(pattern, (res, req) => {
      const { inm, ae } = headersOf(req)
      write(res, fileReply(site.shell, inm, ae))
    })
  }
  app.get("/assets/*", (res, req) => {
    const urlPath = req.getUrl()
    const { inm, ae } = headersOf(req)
    const file = lookup(site, urlPath)
    write(res, file === undefined ? notFound(urlPath) : fileReply(file, inm, ae))
  })
}

/** Writes the market-data service's port into the shell (`<meta name="curvestream-data-port">`). */
export const withDataPort =
  (dataPort: number) =>
  (html: string): string =>
    html.replace('<meta name="curvestream-data-port" content="" />', `<meta name="curvestream-data-port" content="${dataPort}" />`)

/**
 * The built page for the main listener, logged: its sizes, or why there is none (not built: the
 * engine runs without it; a build over the bounds: the same, with the reason). Never fails start.
 */
export const loadWebPage = (dir: string, dataPort: number): Effect.Effect<StaticSite | undefined> =>
  Effect.try(() => loadStaticSite(dir, withDataPort(dataPort))).pipe(
    Effect.flatMap((site) =>
      "missing" in site
        ? Effect.as(Effect.logWarning(`the web page is not built (${site.missing}); \`npm start\` builds it, or run \`npm run build:web\``), undefined)
        : Effect.as(
            Effect.logInfo(`web page loaded: ${site.files.size} files, JavaScript ${site.jsBytes} bytes (${site.jsGzipBytes} gzipped)`),
            site
          )
    ),
    Effect.catchAll((e) => Effect.as(Effect.logWarning("the web page is not served", e.error), undefined))
  )
