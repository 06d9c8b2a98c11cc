/**
 * The typed client cannot drift: the committed `generated/*.ts` are exactly what `generate.ts`
 * writes from the route declarations today (`npm run client:generate` after a route changes).
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { GENERATED, generatedTypes } from "./generate.js"

describe("typed client types", () => {
  it("are what the route declarations generate (run npm run client:generate)", async () => {
    const fresh = await generatedTypes()
    for (const name of ["main", "data"] as const) expect(readFileSync(GENERATED[name], "utf8"), `generated/${name}.ts is stale`).toBe(fresh[name])
  })
})
