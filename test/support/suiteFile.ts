import type { RunnerTestFile, RunnerTestSuite } from "vitest"

/** The test file a setup file's `beforeAll`/`afterAll` suite belongs to. */
export const suiteFile = (suite: RunnerTestSuite | RunnerTestFile): string =>
  "filepath" in suite && typeof suite.filepath === "string" ? suite.filepath : suite.file.filepath
