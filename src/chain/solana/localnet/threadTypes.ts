/**
 * What the embedded Solana localnet's thread (`thread.ts`) reports and takes: types only, so the
 * engine's `SolanaEndpoints` imports them without loading the thread program (which runs on import).
 */
import type { SolanaLocalnetOptions } from "./LocalnetService.js"

/** What the thread reports when ready. */
export interface SolanaLocalnetThreadInfo {
  readonly rpcUrl: string
  readonly grpcUrl: string
  readonly blockEngineUrl: string
}

/** The options that cross the worker port (plain data). */
export type SolanaLocalnetThreadOptions = Pick<SolanaLocalnetOptions, "manualSlots" | "host" | "dataDir" | "fsync"> & { readonly ledger?: { readonly slotMs?: number } }
