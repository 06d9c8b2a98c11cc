/**
 * The benches' second database (issue 34 item 3): the write-path rows again on a throwaway
 * PostgreSQL server (`test/support/postgresServer.ts`), each with its own engine on it, side by
 * side with the embedded default (PGlite) in one run.
 *
 * `BENCH_DATABASES`: `pglite` and, where this machine has the server binaries, `postgres`
 * (default: both when it has them).
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { findPostgresBinDir, startPostgresServer } from "../test/support/postgresServer.js"

export const benchDatabases = (): ReadonlyArray<string> =>
  (process.env.BENCH_DATABASES ?? (findPostgresBinDir() !== undefined ? "pglite,postgres" : "pglite")).split(",").map((d) => d.trim())

/** What an engine on the server needs: its URL, the secrets a server start requires, and the local account (`LOCAL_ACCOUNT`). */
export const serverEngineEnv = (url: string): Record<string, string> => ({
  DATABASE_URL: url,
  LOCAL_ACCOUNT: "true",
  WALLET_MASTER_KEY: Buffer.alloc(32, 0x5b).toString("base64"),
  WEBHOOK_SECRET_KEY: "5b".repeat(32),
  LAUNCH_MINT_SECRET: "5b".repeat(32)
})

/** Runs `f` with a fresh server's engine env and the server's version line; the server is stopped after. */
export const onPostgresServer = async <A>(f: (env: Record<string, string>, version: string) => Promise<A>): Promise<A> => {
  const server = await startPostgresServer()
  try {
    const version = execFileSync(path.join(findPostgresBinDir()!, "postgres"), ["--version"], { encoding: "utf8" }).trim()
    return await f(serverEngineEnv(server.url), version)
  } finally {
    await server.stop()
  }
}

/** The sentence each bench's side-by-side section opens with. */
export const serverNote = (version: string): string =>
  `a throwaway PostgreSQL server (${version}; \`test/support/postgresServer.ts\`: loopback TCP, fsync off since its data is thrown away) with its own engine (\`DATABASE_URL\`, \`LOCAL_ACCOUNT=true\`: the same local Max account and funded wallet)`
