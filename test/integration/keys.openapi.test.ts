/** Every key and account route is documented by the OpenAPI generator (schemas convert, no duplicates). */
import { expect, it } from "vitest"
import { openApiDocument } from "../../api/OpenApi.js"
import { startHarness } from "../support/accountsHarness.js"

it("documents every key and account route with its credential", async () => {
  const h = await startHarness()
  try {
    const api = await h.auth()
    const doc = openApiDocument(api.routes, { title: "t", description: "d" }) as { paths: Record<string, Record<string, { security: unknown[] }>> }
    for (const r of api.routes) {
      const op = doc.paths[r.path]?.[r.method.toLowerCase()]
      expect(op, `${r.method} ${r.path}`).toBeDefined()
      expect(op!.security).toEqual(r.auth === "public" ? [] : [{ [r.auth]: [] }])
    }
  } finally {
    await h.close()
  }
}, 60_000)
