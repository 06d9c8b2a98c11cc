// The entry of an embedded localnet's worker thread (see LocalnetThread.ts). Plain JS, so that it
// loads whatever the process was started with (`node --import tsx` or `--import=tsx`, NODE_OPTIONS,
// vitest, a bench): it does not guess from the flags, it loads the chain's TypeScript thread program
// named by `workerData.module` with tsx's namespaced loader (`tsImport`), which compiles that
// program and what it imports whether or not a global tsx loader is registered on this thread.
import { workerData } from "node:worker_threads"
import { tsImport } from "tsx/esm/api"

await tsImport(workerData.module, import.meta.url)
