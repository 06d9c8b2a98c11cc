// The entry of an embedded localnet's worker thread (see LocalnetThread.ts). Plain JS so that it
// loads the same under `node --import tsx` (the engine, whose workers inherit `--import tsx` from
// execArgv) and under vitest (no loader in the worker: tsx's ESM hooks are registered here), then
// imports the chain's TypeScript thread program named by `workerData.module`.
import { workerData } from "node:worker_threads"

if (!process.execArgv.some((arg) => arg === "tsx" || arg.includes("tsx/"))) {
  const { register } = await import("tsx/esm/api")
  register()
}
await import(workerData.module)
