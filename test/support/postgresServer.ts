/**
 * A throwaway real PostgreSQL server for the test run (CI installs PostgreSQL 15; a developer
 * machine may not have it, in which case `findPostgresBinDir` says so and the server tests
 * skip, see `globalSetup.ts`).
 *
 * `startPostgresServer` initdb's a cluster in a fresh temp dir (trust auth, superuser
 * `postgres`, no fsync: the data is thrown away), starts it on 127.0.0.1 with a free port and
 * its socket in the temp dir, waits until it accepts connections (`pg_ctl -w`), creates the
 * `curvestream` database and returns its URL. `stop` stops it (`-m fast`) and removes the dir;
 * an exit hook does the same if the run dies before teardown.
 *
 * initdb and postgres refuse to run as root: as root, they run as the unprivileged OS user
 * `postgres` (created with `useradd --system` when the server package did not) through
 * `runuser`, with the temp dir chowned to it.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Redacted } from "effect"

const execFileAsync = promisify(execFile)

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/curvestream` */
  readonly url: string
  readonly stop: () => Promise<void>
}

const osUser = "postgres"
const defaultBinDir = "/usr/lib/postgresql/15/bin"
const serverBinaries = ["initdb", "pg_ctl", "postgres", "createdb"]

const hasServerBinaries = (dir: string): boolean =>
  serverBinaries.every((name) => {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })

/**
 * Where initdb/pg_ctl/postgres live, or undefined when this machine has no PostgreSQL server.
 * `CURVESTREAM_POSTGRES_BINDIR` pins the directory (and only it is tried).
 */
export const findPostgresBinDir = (): string | undefined => {
  const pinned = process.env.CURVESTREAM_POSTGRES_BINDIR
  if (pinned !== undefined && pinned !== "") return hasServerBinaries(pinned) ? pinned : undefined
  const candidates = [defaultBinDir]
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim())
  } catch {
    // no pg_config on PATH
  }
  try {
    // Any other Debian-style install, newest major first.
    const majors = fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a))
    for (const major of majors) candidates.push(path.join("/usr/lib/postgresql", major, "bin"))
  } catch {
    // none
  }
  return candidates.find((dir) => dir !== "" && hasServerBinaries(dir))
}

const isRoot = (): boolean => process.getuid?.() === 0

/** Makes sure the unprivileged user exists (root only) and returns its uid/gid. */
const ensureOsUser = (): { uid: number; gid: number } => {
  const id = (flag: string) => Number(execFileSync("id", [flag, osUser], { encoding: "utf8" }).trim())
  try {
    return { uid: id("-u"), gid: id("-g") }
  } catch {
    execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", osUser])
    return { uid: id("-u"), gid: id("-g") }
  }
}

/** Runs a PostgreSQL binary, as `postgres` through runuser when we are root. */
const runPg = async (binDir: string, name: string, args: ReadonlyArray<string>): Promise<string> => {
  const binary = path.join(binDir, name)
  const [file, argv] = isRoot() ? ["runuser", ["-u", osUser, "--", binary, ...args]] : [binary, [...args]]
  try {
    const { stdout } = await execFileAsync(file, argv, {
      env: { ...process.env, LC_ALL: "C", LANG: "C" },
      cwd: os.tmpdir(),
      timeout: 60_000
    })
    return stdout
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string }
    throw new Error(`${name} ${args.join(" ")} failed: ${e.stderr || e.stdout || e.message}`)
  }
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

export const startPostgresServer = async (options: { readonly binDir?: string } = {}): Promise<PostgresServer> => {
  const binDir = options.binDir ?? findPostgresBinDir()
  if (binDir === undefined) throw new Error("no PostgreSQL server binaries found (initdb, pg_ctl, postgres)")

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-pg-"))
  const dataDir = path.join(dir, "data")
  const logFile = path.join(dir, "server.log")
  if (isRoot()) {
    const { uid, gid } = ensureOsUser()
    fs.chownSync(dir, uid, gid)
  }

  let stopped = false
  const stopSync = () => {
    if (stopped) return
    stopped = true
    const pgCtl = path.join(binDir, "pg_ctl")
    const args = ["-D", dataDir, "-m", "immediate", "-w", "stop"]
    spawnSync(isRoot() ? "runuser" : pgCtl, isRoot() ? ["-u", osUser, "--", pgCtl, ...args] : args, { stdio: "ignore" })
    fs.rmSync(dir, { recursive: true, force: true })
  }
  process.once("exit", stopSync)

  try {
    await runPg(binDir, "initdb", [
      "-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"
    ])

    // The free port may be taken between probing and binding: retry with another.
    let port = 0
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      const serverOptions = [
        `-k '${dir}'`, "-h 127.0.0.1", `-p ${port}`,
        "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"
      ].join(" ")
      try {
        await runPg(binDir, "pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-t", "60", "-o", serverOptions, "start"])
        break
      } catch (error) {
        if (attempt >= 3) {
          const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : ""
          throw new Error(`${(error as Error).message}\n${log}`)
        }
      }
    }

    await runPg(binDir, "createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "curvestream"])
    const url = `postgres://postgres@127.0.0.1:${port}/curvestream`

    const stop = async () => {
      if (stopped) return
      try {
        await runPg(binDir, "pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "stop"])
        stopped = true
        fs.rmSync(dir, { recursive: true, force: true })
      } finally {
        stopSync()
        process.removeListener("exit", stopSync)
      }
    }
    return { url, stop }
  } catch (error) {
    stopSync()
    process.removeListener("exit", stopSync)
    throw error
  }
}

/**
 * Creates a fresh database `t_<random>` on the server at `url` and returns its URL, so test
 * files sharing the run's server do not see each other's tables.
 */
export const createDatabase = (url: string): Promise<string> => {
  const name = `t_${randomBytes(6).toString("hex")}`
  const create = Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  return Effect.runPromise(
    create.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  ).then(() => {
    const next = new URL(url)
    next.pathname = `/${name}`
    return next.toString()
  })
}
