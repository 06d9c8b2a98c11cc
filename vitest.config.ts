import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: [
      "src/**/*.test.ts",
      "ingest/**/*.test.ts",
      "actors/**/*.test.ts",
      "api/**/*.test.ts",
      "clickhouse/**/*.test.ts",
      "test/**/*.test.ts",
      "web/src/**/*.test.ts",
      "clients/**/*.test.ts"
    ],
    globalSetup: ["test/support/globalSetup.ts"],
    // The contract check: e2e, conformance and property answers are validated against the OpenAPI documents.
    // loopWatch names a test file whose event loop stalled (vitest's worker RPC times out at 60 s).
    setupFiles: ["test/support/contractSetup.ts", "test/support/loopWatch.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Integration tests start real servers; two cores, so keep the fan-out small.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
