/**
 * The test harness starts the engine as `npm start` does: `test/support/engine.ts`'s
 * `ENGINE_SEMI_SPACE_MB` is a copy of the start script's `--max-semi-space-size` (decisions.md "The
 * engine's young generation stays at 64 MiB semi-spaces"). This fails when one changes alone.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { ENGINE_SEMI_SPACE_MB, projectRoot } from "../support/engine.js"

describe("the engine's start flags", () => {
  it("npm start's --max-semi-space-size is the harness's ENGINE_SEMI_SPACE_MB, given once", () => {
    const pkg = JSON.parse(readFileSync(projectRoot + "package.json", "utf8")) as { scripts: Record<string, string> }
    const start = pkg.scripts["start"] ?? ""
    const flags = [...start.matchAll(/--max-semi-space-size=(\d+)(?=\s|$)/g)].map((m) => Number(m[1]))
    expect(flags).toEqual([ENGINE_SEMI_SPACE_MB])
  })
})
