/**
 * Starts the real entry point (`src/main.ts`, what `npm start` runs) as a child process on free
 * ports with a temp data dir, waits for `/readyz`, and stops it with a signal. Output is kept so a
 * failing test can show it.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { eventually } from "./eventually.js"

export const projectRoot = fileURLToPath(new URL("../../", import.meta.url))

export const freePort = async (): Promise<number> => (await freePorts(1))[0]!

/** `n` distinct free ports: every socket is held until all are found, so no two picks are the same port. */
export const freePorts = (n: number): Promise<ReadonlyArray<number>> =>
  new Promise((resolve, reject) => {
    const servers = Array.from({ length: n }, () => net.createServer())
    const ports: Array<number> = []
    for (const srv of servers) {
      srv.unref()
      srv.on("error", reject)
      srv.listen(0, "127.0.0.1", () => {
        ports.push((srv.address() as net.AddressInfo).port)
        if (ports.length === n) {
          let closed = 0
          for (const s of servers) s.close(() => ++closed === n && resolve(ports))
        }
      })
    }
  })

export interface Engine {
  readonly url: string
  /** The market-data listener (`CURVESTREAM_DATA_PORT`: a free port picked with the main one unless the caller set it). */
  readonly dataUrl: string
  readonly dataDir: string
  readonly child: ChildProcess
  output(): string
  /** Sends the signal and resolves with the exit code (or the signal that killed it). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  cleanup(): void
}

/** `readyTimeoutMs`: how long to wait for `/readyz` (default 100 s: a start takes ~15 s on a quiet machine and over a minute under a load of 13). */
/** `root`: another checkout of this project to start the engine from (a bench's "before"); default this one. */
/** `semiSpaceMb`: the young generation's semi-space (`--max-semi-space-size`); default `ENGINE_SEMI_SPACE_MB`, as `npm start` (a bench measuring another size). */
type StartOptions = { env?: Record<string, string>; dataDir?: string; readyTimeoutMs?: number; args?: ReadonlyArray<string>; root?: string; semiSpaceMb?: number }

/** The engine's `--max-semi-space-size` in `npm start` (package.json), which the harness starts it with (test/conformance/engineFlags.test.ts keeps them equal). */
export const ENGINE_SEMI_SPACE_MB = 64

/** Starts of one engine when its listener lost its port to another process (see `startEngine`). */
const LISTEN_ATTEMPTS = 3

/**
 * Starts the engine and waits for `/readyz`. `freePort` releases the port it found before the
 * engine binds it, so another process (a parallel test's localnet binding port 0) can take it in
 * between: an engine that stopped because it could not listen is started again on fresh ports, at
 * most LISTEN_ATTEMPTS times. Any other failure is the test's.
 */
export const startEngine = async (options: StartOptions = {}): Promise<Engine> => {
  // What the attempts that lost their port printed before they stopped (a start-up pass such as
  // resuming in-flight launches may have run in one of them): kept in the engine's output.
  let earlier = ""
  for (let attempt = 1; ; attempt++) {
    try {
      return await startEngineOnce(options, earlier)
    } catch (e) {
      const lostPort = e instanceof Error && e.message.includes("before ready") && e.message.includes("cannot listen on")
      if (!lostPort || attempt >= LISTEN_ATTEMPTS) throw e
      earlier += (e as Error).message.slice((e as Error).message.indexOf("\n") + 1)
    }
  }
}

const startEngineOnce = async (options: StartOptions, earlier: string): Promise<Engine> => {
  const [port, freeDataPort] = (await freePorts(2)) as [number, number]
  const dataPort = options.env?.CURVESTREAM_DATA_PORT ?? String(freeDataPort)
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), "curvestream-e2e-"))
  // `node --import tsx` (not the tsx binary, which forks a second process): a signal, SIGKILL
  // included, reaches the engine itself.
  const child = spawn(process.execPath, [`--max-semi-space-size=${options.semiSpaceMb ?? ENGINE_SEMI_SPACE_MB}`, "--import", "tsx", "src/main.ts", ...(options.args ?? [])], {
    cwd: options.root ?? projectRoot,
    env: {
      ...process.env,
      CURVESTREAM_HOST: "127.0.0.1",
      CURVESTREAM_PORT: String(port),
      CURVESTREAM_DATA_PORT: dataPort,
      CURVESTREAM_DATA_DIR: dataDir,
      LOG_FORMAT: "logfmt",
      // The suites assert USD figures at the fixed prices; the oracle has its own test (test/integration/prices.oracle.test.ts).
      PRICE_SOURCE: "fixed",
      ...options.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()))
  child.stderr!.on("data", (c: Buffer) => (out += c.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  const url = `http://127.0.0.1:${port}`
  const engine: Engine = {
    url,
    dataUrl: `http://127.0.0.1:${dataPort}`,
    dataDir,
    child,
    output: () => earlier + out,
    stop: async (signal = "SIGTERM", timeoutMs = 20_000) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
      const result = await exited
      clearTimeout(timer)
      return result
    },
    cleanup: () => rmSync(dataDir, { recursive: true, force: true })
  }

  const hasExited = () => child.exitCode !== null
  try {
    await eventually(
      async () => {
        if (hasExited()) return true
        // Another process may have taken the port between `freePort` and the bind (another test's
        // engine answers /readyz too): only this child's own "listening on <url>" makes the answer its.
        if (!out.includes(`listening on ${url}`)) return false
        try {
          return (await fetch(`${url}/readyz`)).status === 200
        } catch {
          return false // not listening yet
        }
      },
      { what: "the engine to answer /readyz", deadlineMs: options.readyTimeoutMs ?? 100_000, intervalMs: 100, detail: () => out }
    )
  } catch (e) {
    await engine.stop("SIGKILL")
    throw e
  }
  if (hasExited()) throw new Error(`engine exited with ${child.exitCode} before ready:\n${out}`)
  return engine
}

/** What the embedded mode provisions for the local account (`<dataDir>/local-credentials.json`). */
export interface LocalCredentials {
  readonly accountId: string
  readonly sessionToken: string
  readonly agentKey: string
}

/** `startEngine`, with the market-data listener's URL and the local account's credentials. */
export const startEngineWithData = async (
  options: Parameters<typeof startEngine>[0] = {}
): Promise<{ engine: Engine; dataUrl: string; credentials: LocalCredentials }> => {
  const engine = await startEngine(options)
  const credentials = JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as LocalCredentials
  return { engine, dataUrl: engine.dataUrl, credentials }
}
