/**
 * A test file's engine (vitest hooks), apart from `engine.ts` so the benches can start an engine
 * without importing vitest (which refuses to load outside its runner).
 */
import { afterAll, beforeAll } from "vitest"
import { type Engine, type LocalCredentials, startEngine, startEngineWithData } from "./engine.js"

/**
 * One engine (with its data listener and credentials) for a whole test file: started before its
 * tests, killed and removed after them. Read the fields inside tests, not at import.
 */
export const engineForFile = (options: Parameters<typeof startEngine>[0] = {}): { engine: Engine; dataUrl: string; credentials: LocalCredentials } => {
  const started = {} as { engine: Engine; dataUrl: string; credentials: LocalCredentials }
  beforeAll(async () => {
    Object.assign(started, await startEngineWithData(options))
  }, 120_000)
  afterAll(async () => {
    if (started.engine !== undefined) {
      await started.engine.stop("SIGKILL")
      started.engine.cleanup()
    }
  })
  return started
}
