/**
 * A vitest setup file (`vitest.config.ts`): in the end-to-end, conformance and property suites,
 * the global `fetch` checks every answer from a listener that serves an OpenAPI document against
 * it (`contract.ts`), so an undocumented member or a wrong type fails the test that received it.
 * Unit and integration tests keep the platform's `fetch` (their listeners mount partial tables).
 */
import { beforeAll } from "vitest"
import { checkingFetch } from "./contract.js"
import { suiteFile } from "./suiteFile.js"

/** Suites whose answers are checked. */
export const CHECKED_SUITES = /[\\/]test[\\/](?:e2e|conformance|property)[\\/]/

beforeAll((suite) => {
  if (CHECKED_SUITES.test(suiteFile(suite))) globalThis.fetch = checkingFetch as typeof fetch
})
