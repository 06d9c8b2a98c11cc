/**
 * The Hood chain process: a Hardhat 2 network (the EDR engine, `@nomicfoundation/edr`, through
 * Hardhat's own provider factory) served over a real socket by Hardhat's JSON-RPC server (HTTP and
 * WebSocket on the same port; port 0 = a free one). Runs in this process: nothing to orphan when
 * the parent dies, and `close()` stops interval mining and closes both servers.
 *
 * Hardhat 2's internals are CommonJS without an exports map, so they are loaded with
 * `createRequire`; the shapes used are the ones Hardhat's own `node` task passes (hardhat 2.29).
 * Failed transactions are mined with status 0 (as on a real chain) instead of rejected; calls and
 * gas estimates of a reverting transaction still fail with the revert data, so clients that
 * estimate first (viem's default) see the revert before sending.
 */
import { createRequire } from "node:module"
import type { DevAccount } from "./DevAccounts.js"
import { type EdrProvider, type HoodBlockRecord, type HoodJournal, type HoodMiner, makeHoodMiner } from "./HoodMiner.js"
import { withRpcFaults } from "./RpcFaults.js"

/** Hardhat's default chain id; the Hood localnet keeps it so wallets and viem's `hardhat` chain agree. */
export const HOOD_LOCALNET_CHAIN_ID = 31337

export interface HoodNodeOptions {
  readonly host?: string
  readonly port?: number
  readonly chainId?: number
  readonly accounts: ReadonlyArray<DevAccount>
  readonly balanceWei: bigint
  /** Mine a block per transaction (default true). */
  readonly automine?: boolean
  /** Also mine an empty block every this many ms (0 = never; default 0). */
  readonly blockIntervalMs?: number
  /** Genesis timestamp; default now. Tests pin it for reproducible block hashes. */
  readonly initialDate?: Date
  /** Serve `localnet_setRpcFaults` (tests; `RpcFaults.ts`). Default false. */
  readonly faultSwitch?: boolean
  /**
   * Managed mining (`HoodMiner.ts`): block timestamps follow `clockMs`, every block is journaled
   * before it is mined, and `replay` is applied before the server listens. `blockIntervalMs` is
   * then the miner's (started by `startInterval`), and `evm_*`/`hardhat_*` are refused.
   */
  readonly managed?: {
    readonly clockMs: () => number
    readonly journal?: HoodJournal
    readonly replay?: ReadonlyArray<HoodBlockRecord>
  }
}

export interface Eip1193Like {
  request(args: { method: string; params?: ReadonlyArray<unknown> }): Promise<unknown>
}

export interface HoodNode {
  readonly rpcUrl: string
  readonly wsUrl: string
  readonly chainId: number
  /** The in-process provider (no socket): for the engine's own fast paths and tests. */
  readonly provider: Eip1193Like
  /** Managed mode only: the miner (interval blocks, replay outcome). */
  readonly miner: HoodMiner | undefined
  /** Managed mode only: transactions of the replayed journal that EDR refused again, as it did the first time. */
  readonly replayRefused: number
  close(): Promise<void>
}

interface JsonRpcServerLike {
  listen(): Promise<{ address: string; port: number }>
  close(): Promise<void>
  // Hardhat's own fields, used only to drop open client connections at close.
  readonly _httpServer?: { closeAllConnections?: () => void }
  readonly _wsServer?: { clients?: Set<{ terminate(): void }> }
}

const require = createRequire(import.meta.url)

export const startHoodNode = async (o: HoodNodeOptions): Promise<HoodNode> => {
  const { defaultHardhatNetworkParams } = require("hardhat/internal/core/config/default-config") as {
    defaultHardhatNetworkParams: { hardfork: string; blockGasLimit: number; chains: unknown }
  }
  const { createHardhatNetworkProvider } = require("hardhat/internal/hardhat-network/provider/provider") as {
    createHardhatNetworkProvider(config: object, logger: object): Promise<EdrProvider>
  }
  const { JsonRpcServer } = require("hardhat/internal/hardhat-network/jsonrpc/server") as {
    JsonRpcServer: new (config: { hostname: string; port: number; provider: Eip1193Like }) => JsonRpcServerLike
  }
  const chainId = o.chainId ?? HOOD_LOCALNET_CHAIN_ID
  const managed = o.managed
  const edr = await createHardhatNetworkProvider(
    {
      chainId,
      networkId: chainId,
      hardfork: defaultHardhatNetworkParams.hardfork,
      blockGasLimit: defaultHardhatNetworkParams.blockGasLimit,
      initialBaseFeePerGas: 1_000_000_000,
      minGasPrice: 0n,
      throwOnTransactionFailures: false,
      throwOnCallFailures: true,
      automine: o.automine ?? true,
      intervalMining: managed === undefined ? (o.blockIntervalMs ?? 0) : 0,
      mempoolOrder: "fifo",
      chains: defaultHardhatNetworkParams.chains,
      genesisAccounts: o.accounts.map((a) => ({ privateKey: a.privateKey, balance: o.balanceWei.toString() })),
      allowUnlimitedContractSize: false,
      allowBlocksWithSameTimestamp: managed !== undefined,
      enableTransientStorage: false,
      enableRip7212: false,
      ...(o.initialDate === undefined ? {} : { initialDate: o.initialDate })
    },
    { enabled: false }
  )
  const miner = managed === undefined ? undefined : makeHoodMiner(edr, managed)
  const replayRefused = miner === undefined ? 0 : (await miner.replay(managed?.replay ?? [])).refused
  const served: EdrProvider = miner ?? edr
  const provider: EdrProvider = o.faultSwitch === true ? withRpcFaults(served) : served
  const host = o.host ?? "127.0.0.1"
  const server = new JsonRpcServer({ hostname: host, port: o.port ?? 0, provider })
  const address = await server.listen()
  const authority = `${address.address.includes(":") ? `[${address.address}]` : address.address}:${address.port}`
  let closed = false
  return {
    rpcUrl: `http://${authority}`,
    wsUrl: `ws://${authority}`,
    chainId,
    provider,
    miner,
    replayRefused,
    close: async () => {
      if (closed) return
      closed = true
      // Stop block production before the sockets go, so nothing is mined into a closing server.
      await miner?.stop()
      await edr.request({ method: "evm_setIntervalMining", params: [0] }).catch(() => undefined)
      // Open keep-alive and WebSocket clients would hold close() open; this is our own node.
      for (const ws of server._wsServer?.clients ?? []) ws.terminate()
      server._httpServer?.closeAllConnections?.()
      await server.close()
    }
  }
}
