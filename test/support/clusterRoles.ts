/**
 * The engine's headless cluster roles (`--role ingest`, `--role actors`) as child processes for
 * the cluster end-to-end test: started like the engine (`node --import tsx src/main.ts`, so a
 * signal, SIGKILL included, reaches the process itself) and ready once the role logs that it runs.
 * The API role has listeners, so the test starts it with `startEngine` (ready at `/readyz`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { projectRoot } from "./engine.js"
import { eventually } from "./eventually.js"

export interface RoleProcess {
  readonly child: ChildProcess
  readonly output: () => string
  readonly stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export const startRole = async (role: "ingest" | "actors", env: Record<string, string>, readyTimeoutMs = 60_000): Promise<RoleProcess> => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `curvestream-${role}-`))
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", "--role", role], {
    cwd: projectRoot,
    env: { ...process.env, CURVESTREAM_DATA_DIR: dataDir, LOG_FORMAT: "logfmt", PRICE_SOURCE: "fixed", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()))
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })))
  const proc: RoleProcess = {
    child,
    output: () => out,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      const result = await exited
      clearTimeout(timer)
      rmSync(dataDir, { recursive: true, force: true })
      return result
    }
  }
  try {
    await eventually(() => out.includes(`curvestream ${role} role running`) || child.exitCode !== null, {
      what: `the ${role} role to run`,
      deadlineMs: readyTimeoutMs,
      intervalMs: 100,
      detail: () => out.slice(-4000)
    })
  } catch (e) {
    await proc.stop("SIGKILL")
    throw e
  }
  if (child.exitCode !== null) throw new Error(`the ${role} role exited with ${child.exitCode} before running:\n${out.slice(-4000)}`)
  return proc
}
