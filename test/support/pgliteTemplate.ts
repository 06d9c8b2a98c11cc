/**
 * The suite's migrated PGlite template: a data directory tarball (`dumpDataDir("none")`) of an
 * in-memory PGlite on which `Database.layer` applied every migration, exactly as an engine start
 * does (its own `runMigrations`, over pglite-socket and the same client). Each new embedded
 * database of a test then loads it (`CURVESTREAM_PGLITE_TEMPLATE`, see
 * `src/db/internal/embeddedPostgres.ts`) in about 1.3 s instead of ~4.6 s of initdb in WASM plus
 * ~1.1 s of migrations.
 *
 * Cached as `node_modules/.cache/curvestream-pglite/<sha256>.tar`, the hash over every file of
 * `src/db/migrations/`, `src/db/Database.ts` and the versions of PGlite and `@effect/sql` (its
 * Migrator owns the table layout): a template is only ever the current code's migrations. Written
 * to a temporary name and renamed, so a concurrent run never reads half a file.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Database from "../../src/db/Database.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const cacheDir = path.join(root, "node_modules", ".cache", "curvestream-pglite")
/** Templates of other hashes older than this are removed when a new one is written. */
const staleAfterMs = 24 * 3600_000

const packageVersion = (name: string): string =>
  (JSON.parse(fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version

const templateKey = (): string => {
  const hash = createHash("sha256")
  hash.update(`pglite ${packageVersion("@electric-sql/pglite")}\n@effect/sql ${packageVersion("@effect/sql")}\n`)
  const migrationsDir = path.join(root, "src", "db", "migrations")
  const files = [...fs.readdirSync(migrationsDir).sort().map((f) => path.join(migrationsDir, f)), path.join(root, "src", "db", "Database.ts")]
  for (const file of files) hash.update(`${path.relative(root, file)}\n`).update(fs.readFileSync(file)).update("\n")
  return hash.digest("hex").slice(0, 32)
}

/** Migrates a fresh in-memory PGlite through `Database.layer` over a socket and returns its dump. */
const buildTemplate = async (): Promise<Uint8Array> => {
  const db = await PGlite.create({})
  try {
    const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 2 })
    await server.start()
    try {
      const url = `postgres://postgres@${server.getServerConn()}/postgres`
      // Built (every migration applied), then closed: the client's pool ends before the dump.
      await Effect.runPromise(Effect.scoped(Layer.build(Database.layer({ url, dataDir: undefined, maxConnections: 1 }))))
    } finally {
      await server.stop()
    }
    return new Uint8Array(await (await db.dumpDataDir("none")).arrayBuffer())
  } finally {
    await db.close()
  }
}

/** The template's path, built (and cached) when no cached one matches the code. */
export const pgliteTemplate = async (): Promise<string> => {
  const file = path.join(cacheDir, `${templateKey()}.tar`)
  if (fs.existsSync(file)) return file
  const bytes = await buildTemplate()
  fs.mkdirSync(cacheDir, { recursive: true })
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, bytes)
  fs.renameSync(temporary, file)
  for (const other of fs.readdirSync(cacheDir)) {
    const otherPath = path.join(cacheDir, other)
    if (otherPath !== file && Date.now() - fs.statSync(otherPath).mtimeMs > staleAfterMs) fs.rmSync(otherPath, { force: true })
  }
  return file
}
