/**
 * The embedded Hood localnet's thread program (`LocalnetThread.ts`): the Hardhat (EDR) node, its
 * miner and journal (`LocalnetService.make`, managed mining stamped by this thread's wall clock)
 * on this worker thread. It reports what the engine's `HoodEndpoints` needs, all plain data: the
 * node's URLs and chain id, the deployed addresses, the keeper's and the dev traders' keys, and the
 * BondingCurve creation code. It serves no calls: the engine funds and trades over JSON-RPC.
 */
import { Effect } from "effect"
import type { HoodAddresses } from "./Deploy.js"
import { runLocalnetThread } from "../../internal/LocalnetThreadMain.js"
import { type HoodLocalnetOptions, make } from "./LocalnetService.js"

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

runLocalnetThread((options: HoodLocalnetThreadOptions) =>
  Effect.map(make({ ...options, clockMs: Date.now }), (n) => ({
    info: {
      rpcUrl: n.rpcUrl,
      wsUrl: n.wsUrl,
      chainId: n.chainId,
      addresses: n.addresses,
      keeperPrivateKey: n.roles.keeper.privateKey,
      traderKeys: n.roles.traders.map((t) => t.privateKey),
      bondingCurveBytecode: n.artifacts.BondingCurve.bytecode
    } satisfies HoodLocalnetThreadInfo,
    ops: {}
  }))
)
