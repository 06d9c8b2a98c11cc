/**
 * The embedded Hood localnet's thread program (`LocalnetThread.ts`): the Hardhat (EDR) node, its
 * miner and journal (`LocalnetService.make`, managed mining stamped by this thread's wall clock)
 * on this worker thread. It reports what the engine's `HoodEndpoints` needs, all plain data: the
 * node's URLs and chain id, the deployed addresses, the keeper's and the dev traders' keys, and the
 * BondingCurve creation code. It serves no calls: the engine funds and trades over JSON-RPC.
 */
import { Effect } from "effect"
import { runLocalnetThread } from "../../internal/LocalnetThreadMain.js"
import { make } from "./LocalnetService.js"
import type { HoodLocalnetThreadInfo, HoodLocalnetThreadOptions } from "./threadTypes.js"

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
