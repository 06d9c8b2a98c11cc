/**
 * What the embedded Hood localnet's thread (`thread.ts`) reports and takes: types only, so the
 * engine's `HoodEndpoints` imports them without loading the thread program (which runs on import).
 */
import type { HoodAddresses } from "./Deploy.js"
import type { HoodLocalnetOptions } from "./LocalnetService.js"

/** What the thread reports when ready (plain data). */
export interface HoodLocalnetThreadInfo {
  readonly rpcUrl: string
  readonly wsUrl: string
  readonly chainId: number
  readonly addresses: HoodAddresses
  readonly keeperPrivateKey: `0x${string}`
  readonly traderKeys: ReadonlyArray<`0x${string}`>
  readonly bondingCurveBytecode: `0x${string}`
}

/** The options that cross the worker port (plain data; block timestamps follow this thread's `Date.now`). */
export type HoodLocalnetThreadOptions = Pick<HoodLocalnetOptions, "host" | "port" | "chainId" | "blockIntervalMs" | "dataDir" | "fsync">
