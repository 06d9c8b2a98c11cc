/**
 * Both OpenAPI documents pass `redocly lint` with its recommended rules with no error (issue 32;
 * warnings, such as the missing licence, are allowed).
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { dataDocument, mainDocument } from "../../clients/typescript/documents.js"
import { projectRoot } from "../support/engine.js"

const run = promisify(execFile)

describe("redocly lint (recommended)", () => {
  for (const [name, doc] of [["main", mainDocument], ["data", dataDocument]] as const) {
    it(`${name}: no error`, async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "openapi-lint-"))
      try {
        const file = path.join(dir, `${name}.json`)
        writeFileSync(file, JSON.stringify(doc()))
        const answer = await run(path.join(projectRoot, "node_modules/.bin/redocly"), ["lint", file, "--format=json"], { maxBuffer: 64 * 1024 * 1024 }).catch(
          (e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? "", stderr: e.stderr ?? "" })
        )
        const report = JSON.parse(answer.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> }
        expect(report.problems.filter((p) => p.severity === "error")).toEqual([])
        expect(report.totals.errors).toBe(0)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 60_000)
  }
})
