/**
 * What tests need to know about the real servers of the run (see `globalSetup.ts`).
 *
 * `postgresUrl()` is the run's PostgreSQL server, or undefined when this machine has none; it
 * throws instead when `CURVESTREAM_REQUIRE_SERVERS=1`, so nothing skips silently in CI. Use
 * `freshPostgresDatabase(url)` for a database of the test file's own.
 */
import { inject } from "vitest"
import { createDatabase } from "./postgresServer.js"

export const requireServers: boolean = process.env.CURVESTREAM_REQUIRE_SERVERS === "1"

export const postgresUrl = (): string | undefined => {
  const url = inject("postgresUrl")
  if (url === undefined && requireServers) {
    throw new Error("CURVESTREAM_REQUIRE_SERVERS=1 but the global setup provided no PostgreSQL server")
  }
  return url
}

/** Why server tests skip, for the suite's name. */
export const noPostgresReason =
  "skipped: no PostgreSQL server binaries on this machine (CI sets CURVESTREAM_REQUIRE_SERVERS=1 and installs them)"

/** Creates `t_<random>` on the run's server and returns its URL. */
export const freshPostgresDatabase = (url: string): Promise<string> => createDatabase(url)
