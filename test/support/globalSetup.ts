/**
 * Vitest global setup: one real PostgreSQL server for the whole run, when this machine has
 * the server binaries. Tests read its URL with `inject("postgresUrl")` (or `postgresUrl()`
 * from `servers.ts`) and each file creates its own database on it.
 *
 * Without the binaries: when `CURVESTREAM_REQUIRE_SERVERS=1` (CI) the setup throws and the run
 * fails; otherwise it provides `undefined` and the server tests skip, saying why. Binaries that
 * are present but fail to start are an error under `CURVESTREAM_REQUIRE_SERVERS=1` and a
 * warning plus skip otherwise.
 *
 * It also compiles Hood's contracts into their cache first (`compileHoodContracts`), so no test
 * file compiles them on its own event loop.
 *
 * And it builds (or finds cached) the migrated PGlite template and names it in
 * `CURVESTREAM_PGLITE_TEMPLATE` (`pgliteTemplate.ts`): vitest's forked workers take this process's
 * env when they start, after this setup, and the engines tests spawn inherit theirs.
 */
import type { TestProject } from "vitest/node"
import { compileHoodContracts } from "../../src/chain/hood/compile.js"
import { pgliteTemplateEnv } from "../../src/db/internal/embeddedPostgres.js"
import { pgliteTemplate } from "./pgliteTemplate.js"
import { findPostgresBinDir, startPostgresServer } from "./postgresServer.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's real PostgreSQL server (`postgres://...`), or undefined when there is none. */
    postgresUrl: string | undefined
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Hood's contracts compiled (or read from the cache) once, here, before any worker starts:
  // solc-js is synchronous, and a fresh clone's first Hood test file compiling them held its
  // worker's event loop for 26 s (loopWatch), where vitest's fixed 60 s worker RPC timeout fails a
  // green run on a slower machine. Workers then read the cache in milliseconds.
  compileHoodContracts()
  // Set already (empty: no template) it is left as it is.
  if (process.env[pgliteTemplateEnv] === undefined) process.env[pgliteTemplateEnv] = await pgliteTemplate()
  const requireServers = process.env.CURVESTREAM_REQUIRE_SERVERS === "1"
  const binDir = findPostgresBinDir()
  if (binDir === undefined) {
    if (requireServers) {
      throw new Error(
        "CURVESTREAM_REQUIRE_SERVERS=1 but no PostgreSQL server binaries were found " +
          `(looked in ${process.env.CURVESTREAM_POSTGRES_BINDIR || "/usr/lib/postgresql/*/bin and \`pg_config --bindir\`"})`
      )
    }
    project.provide("postgresUrl", undefined)
    return async () => {}
  }
  try {
    const server = await startPostgresServer({ binDir })
    project.provide("postgresUrl", server.url)
    return () => server.stop()
  } catch (error) {
    if (requireServers) throw error
    console.warn(`PostgreSQL server tests will skip: the server in ${binDir} did not start: ${String(error)}`)
    project.provide("postgresUrl", undefined)
    return async () => {}
  }
}
