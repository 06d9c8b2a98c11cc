// Builds the web page (web/ → web/dist) when its sources changed since the last build, and prints
// the built sizes. `npm start` runs it first (the `prestart` script), so `npm ci && npm start` serve
// the page with nothing else to run; the web test runs it too. "Changed" is a SHA-256 over every
// source file's path and bytes (web/index.html, web/vite.config.ts, web/src/**, package-lock.json),
// kept in web/dist/.source-hash: a checkout or an edit rebuilds, a restart does not (about 0.1 s).
// The JavaScript budget (250 KB gzipped) is checked here: a build over it fails.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = fileURLToPath(new URL("../", import.meta.url))
const web = path.join(root, "web")
const dist = path.join(web, "dist")
const hashFile = path.join(dist, ".source-hash")
export const JS_GZIP_BUDGET_BYTES = 250 * 1000

const sources = () => {
  const out = [path.join(web, "index.html"), path.join(web, "vite.config.ts"), path.join(root, "package-lock.json")]
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && !e.name.endsWith(".test.ts")) out.push(p)
    }
  }
  walk(path.join(web, "src"))
  return out.sort()
}

const sourceHash = () => {
  const h = createHash("sha256")
  for (const f of sources()) h.update(path.relative(root, f)).update("\0").update(readFileSync(f)).update("\0")
  return h.digest("hex")
}

const sizes = () => {
  const rows = []
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (!e.name.startsWith(".")) {
        const bytes = readFileSync(p)
        rows.push({ file: path.relative(dist, p), bytes: bytes.byteLength, gzip: gzipSync(bytes, { level: 9 }).byteLength })
      }
    }
  }
  walk(dist)
  return rows
}

const kb = (n) => `${(n / 1000).toFixed(1)} KB`

const main = async () => {
  const force = process.argv.includes("--force")
  const hash = sourceHash()
  const built = existsSync(path.join(dist, "index.html")) && existsSync(hashFile) && readFileSync(hashFile, "utf8") === hash
  if (built && !force) {
    console.log("web: web/dist is up to date")
    return
  }
  const { build } = await import("vite")
  await build({ configFile: path.join(web, "vite.config.ts"), logLevel: "warn" })
  mkdirSync(dist, { recursive: true })
  const rows = sizes()
  for (const r of rows) console.log(`web: ${r.file.padEnd(40)} ${kb(r.bytes).padStart(10)}  gzip ${kb(r.gzip).padStart(9)}`)
  const js = rows.filter((r) => r.file.endsWith(".js")).reduce((n, r) => n + r.gzip, 0)
  console.log(`web: JavaScript ${kb(js)} gzipped (budget ${kb(JS_GZIP_BUDGET_BYTES)})`)
  if (js > JS_GZIP_BUDGET_BYTES) {
    console.error(`web: the JavaScript is over its budget`)
    process.exit(1)
  }
  writeFileSync(hashFile, hash)
}

await main()
