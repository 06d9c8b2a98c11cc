/**
 * The runtime guard of the started binary: on another Node.js line the engine and the CLI refuse
 * before building anything (no database opened, no file written, no port bound) and say how to
 * run them. The other line is simulated by overriding `process.version` in a preload, so the test
 * needs no second Node installed.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"

const asNode20 = `data:text/javascript,${encodeURIComponent("Object.defineProperty(process, 'version', { value: 'v20.20.2' })")}`

const run = async (script: string, dataDir: string) => {
  try {
    await promisify(execFile)(process.execPath, ["--import", asNode20, "--import", "tsx", script, "--quiet"], {
      cwd: projectRoot,
      env: { ...process.env, CURVESTREAM_DATA_DIR: dataDir },
      timeout: 60_000
    })
    return { code: 0, stderr: "" }
  } catch (e) {
    const failed = e as { code?: number; stderr?: string }
    return { code: failed.code ?? -1, stderr: failed.stderr ?? "" }
  }
}

describe("runtime guard", () => {
  for (const script of ["src/main.ts", "src/cli.ts"]) {
    it(`${script} refuses another Node line before touching its data directory`, async () => {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-guard-"))
      try {
        const { code, stderr } = await run(script, dataDir)
        expect(code).toBe(1)
        expect(stderr).toContain("curvestream runs on Node.js 22 and this is Node.js v20.20.2")
        expect(stderr).toContain("npm start")
        expect(await fs.readdir(dataDir)).toEqual([])
      } finally {
        await fs.rm(dataDir, { recursive: true, force: true })
      }
    }, 90_000)
  }
})
