/**
 * The contract check (`contract.ts`) for an integration test that mounts a partial route table:
 * `withContract` serves the table's own OpenAPI document beside it (at `/v1/openapi.json`, which
 * `checkingFetch` finds), and `checkAnswersInThisFile` makes the file's global `fetch` the
 * checking one, so every answer the file receives is validated against the document of the
 * routes it mounted: an undocumented status or member fails the test that received it.
 */
import { afterAll, beforeAll } from "vitest"
import type { RouteDef } from "../../api/Router.js"
import { withOpenApi } from "../../api/routes/OpenApiRoute.js"
import { documentInfo } from "../../clients/typescript/documents.js"
import { checkingFetch } from "./contract.js"

export const withContract = (routes: ReadonlyArray<RouteDef>): ReadonlyArray<RouteDef> => withOpenApi(routes, documentInfo, "/v1/openapi.json")

export const checkAnswersInThisFile = (): void => {
  const platform = globalThis.fetch
  beforeAll(() => {
    globalThis.fetch = checkingFetch as typeof fetch
  })
  afterAll(() => {
    globalThis.fetch = platform
  })
}
