/**
 * The Hood localnet's fault switch (tests only, `faultSwitch: true`), the counterpart of the
 * Solana block engine's `localnet_setBundleFaults`: `localnet_setRpcFaults [{estimateGas}]` makes
 * the node refuse every `eth_estimateGas` (a JSON-RPC server error, as a node or provider whose
 * estimator is down answers) until it is set back; it answers the faults now in force. Nothing
 * else changes: reads, calls and raw transactions pass through, so a client that would send on a
 * guess is visible. Off (the default), the method does not exist.
 */
import type { EdrProvider } from "./HoodMiner.js"

export interface HoodRpcFaults {
  readonly estimateGas: boolean
}

/** A JSON-RPC server error Hardhat's server passes through with its code and message. */
class RpcFault extends Error {
  readonly code = -32000
  readonly _isProviderError = true
}

export const withRpcFaults = (inner: EdrProvider): EdrProvider => {
  let faults: HoodRpcFaults = { estimateGas: false }
  return {
    request: async (args) => {
      if (args.method === "localnet_setRpcFaults") {
        const p = (args.params?.[0] ?? {}) as Partial<HoodRpcFaults>
        faults = { estimateGas: p.estimateGas === true }
        return faults
      }
      if (args.method === "eth_estimateGas" && faults.estimateGas) throw new RpcFault("localnet fault: eth_estimateGas is unavailable")
      return inner.request(args)
    },
    addListener: (event, listener) => inner.addListener(event, listener),
    removeListener: (event, listener) => inner.removeListener(event, listener)
  }
}
