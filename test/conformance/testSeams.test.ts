/**
 * Test seams stay out of production (docs/decisions.md, "The trigger writer's pause is a test
 * seam, not an option"): the trigger writer's pause (`TriggerWriterPause`) is an optional Effect
 * service that only tests provide. Under `src/` and `api/` (test files not scanned) it is named only
 * where it is defined and read, and no module provides it (`provideService(TriggerWriterPause`,
 * `Layer.succeed(TriggerWriterPause`), so a production writer never pauses.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"
import { sourceFiles as sources } from "../support/sourceFiles.js"


/** Modules that may name the seam: its definition and the one place that reads it. */
const DEFINED_AND_READ = ["src/services/orders/internal/TriggerWriter.ts", "src/services/orders/OrderTriggers.ts"]

const provides = (text: string): boolean => /\b(?:provideService|succeed|sync|effect)\s*\(\s*TriggerWriterPause\b/.test(text)

describe("test seams stay out of production", () => {
  it("the provider check catches what it names", () => {
    expect(provides(`Effect.provideService(TriggerWriterPause, pause)`)).toBe(true)
    expect(provides(`Layer.succeed(TriggerWriterPause, () => Effect.void)`)).toBe(true)
    expect(provides(`yield* Effect.serviceOption(TriggerWriterPause)`)).toBe(false)
  })

  it("TriggerWriterPause is named only where it is defined and read, and provided by no production module", () => {
    const files = [...sources("src"), ...sources("api")]
    expect(files.length).toBeGreaterThan(100)
    const naming = files.filter((f) => readFileSync(path.join(projectRoot, f), "utf8").includes("TriggerWriterPause"))
    expect(naming.sort()).toEqual([...DEFINED_AND_READ].sort())
    expect(naming.filter((f) => provides(readFileSync(path.join(projectRoot, f), "utf8")))).toEqual([])
  })
})
