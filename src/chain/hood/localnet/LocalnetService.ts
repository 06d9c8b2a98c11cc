/**
 * `HoodLocalnet`: the Hood test chain as an Effect service. Its scoped layer compiles the
 * contracts (or reads the artifact cache), starts a Hardhat 2 (EDR) node in this process on a real
 * socket (JSON-RPC over HTTP and WebSocket, port 0 = a free one), deploys USDG first from account
 * #0 (so it lands at USDG_ADDRESS), WETH9, real Uniswap v3 (factory, position manager, router), the
 * fee splitter and the curve factory, funds the dev accounts with USDG (ETH is genesis balance),
 * then turns on interval mining if asked. Closing the scope stops mining and closes the server.
 *
 * Blocks: automine (one block per transaction) always; `blockIntervalMs` > 0 also mines an empty
 * block on that interval so block numbers and timestamps advance while nothing trades. Tests drive
 * blocks, snapshots and reorgs through `testkit.ts`.
 *
 * Managed mode (`clockMs` or `dataDir` set; the engine's embedded localnet): `HoodMiner.ts` makes
 * the blocks, stamped by the clock, and the interval's empty blocks; with `dataDir` every block is
 * journaled there first (`HoodStore.ts`) and a restart replays the journal instead of deploying
 * again, so the chain continues.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import type { Chain } from "viem"
import { type CompileOptions, type HoodArtifacts, loadHoodArtifacts } from "../compile.js"
import { deployHoodStack, type HoodAddresses, hoodChain } from "./Deploy.js"
import {
  DEPLOYER_INDEX,
  type DevAccount,
  DEV_ACCOUNT_BALANCE_WEI,
  devAccounts,
  FIRST_TRADER_INDEX,
  KEEPER_INDEX,
  STAKER_VAULT_INDEX,
  TREASURY_INDEX
} from "./DevAccounts.js"
import { type Eip1193Like, HOOD_LOCALNET_CHAIN_ID, type HoodNode, startHoodNode } from "./HoodNode.js"
import { openStoredHoodNode, type StoredHoodNode } from "./HoodStore.js"

export interface HoodLocalnetOptions {
  /** Interface the JSON-RPC server binds (default 127.0.0.1). */
  readonly host?: string
  /** Port (default 0 = a free port). */
  readonly port?: number
  readonly chainId?: number
  /** Mine an empty block every this many ms after the deploy (default 0 = automine only). */
  readonly blockIntervalMs?: number
  /** Genesis timestamp (default now). */
  readonly initialDate?: Date
  readonly compile?: CompileOptions
  /** Managed mining: block timestamps follow this clock (ms). */
  readonly clockMs?: () => number
  /** Keep the chain in this directory and continue it at start (implies managed mining). */
  readonly dataDir?: string
  /** With `dataDir`: fdatasync each journal record before its block is mined (default true). */
  readonly fsync?: boolean
  /** Serve the fault switch `localnet_setRpcFaults` (tests only; default false). */
  readonly faultSwitch?: boolean
}

export interface HoodRoles {
  readonly deployer: DevAccount
  readonly keeper: DevAccount
  readonly treasury: DevAccount
  readonly stakerVault: DevAccount
  readonly traders: ReadonlyArray<DevAccount>
}

export interface HoodLocalnetShape {
  readonly rpcUrl: string
  readonly wsUrl: string
  readonly chainId: number
  /** A viem chain pointing at this node. */
  readonly chain: Chain
  readonly addresses: HoodAddresses
  readonly accounts: ReadonlyArray<DevAccount>
  readonly roles: HoodRoles
  readonly artifacts: HoodArtifacts
  /** The in-process EIP-1193 provider (no socket), e.g. for `viem`'s `custom` transport. */
  readonly provider: Eip1193Like
  /** The node itself (in managed mode its `miner`: tests mine empty blocks with it). */
  readonly node: HoodNode
}

export class HoodLocalnetError extends Schema.TaggedError<HoodLocalnetError>()("HoodLocalnetError", {
  stage: Schema.Literal("compile", "journal", "node", "deploy"),
  message: Schema.String
}) {}

export class HoodLocalnet extends Context.Tag("curvestream/HoodLocalnet")<HoodLocalnet, HoodLocalnetShape>() {
  /** The scoped layer: the node and its deployments live as long as the layer's scope. */
  static readonly layer = (options: HoodLocalnetOptions = {}): Layer.Layer<HoodLocalnet, HoodLocalnetError> =>
    Layer.scoped(HoodLocalnet, make(options))
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e))

const rolesOf = (accounts: ReadonlyArray<DevAccount>): HoodRoles => ({
  deployer: accounts[DEPLOYER_INDEX]!,
  keeper: accounts[KEEPER_INDEX]!,
  treasury: accounts[TREASURY_INDEX]!,
  stakerVault: accounts[STAKER_VAULT_INDEX]!,
  traders: accounts.slice(FIRST_TRADER_INDEX)
})

export const make = (options: HoodLocalnetOptions = {}): Effect.Effect<HoodLocalnetShape, HoodLocalnetError, Scope.Scope> =>
  Effect.gen(function* () {
    const compiled = yield* loadHoodArtifacts(options.compile).pipe(
      Effect.mapError((e) => new HoodLocalnetError({ stage: "compile", message: e.message }))
    )
    const accounts = devAccounts()
    const chainId = options.chainId ?? HOOD_LOCALNET_CHAIN_ID
    const clockMs = options.clockMs ?? (options.dataDir === undefined ? undefined : Date.now)
    const stored: StoredHoodNode | undefined =
      options.dataDir === undefined
        ? undefined
        : yield* Effect.acquireRelease(
            Effect.try({
              try: () => openStoredHoodNode(options.dataDir!, { chainId, nowMs: clockMs!, fsync: options.fsync ?? true }),
              catch: (e) => new HoodLocalnetError({ stage: "journal", message: `${options.dataDir}: ${message(e)}` })
            }),
            (s) => Effect.sync(() => s.close())
          )
    const started = performance.now()
    const node = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          startHoodNode({
            accounts,
            balanceWei: DEV_ACCOUNT_BALANCE_WEI,
            ...(options.host === undefined ? {} : { host: options.host }),
            ...(options.port === undefined ? {} : { port: options.port }),
            chainId,
            ...(options.faultSwitch === true ? { faultSwitch: true } : {}),
            // Managed: genesis is stamped by the same clock as every later block.
            ...(stored !== undefined
              ? { initialDate: new Date(stored.genesisMs) }
              : options.initialDate !== undefined
                ? { initialDate: options.initialDate }
                : clockMs !== undefined
                  ? { initialDate: new Date(clockMs()) }
                  : {}),
            ...(clockMs === undefined
              ? {}
              : { managed: { clockMs, ...(stored === undefined ? {} : { journal: stored.journal, replay: stored.replay }) } })
          }),
        catch: (e) => new HoodLocalnetError({ stage: "node", message: `could not start: ${message(e)}` })
      }),
      (n: HoodNode) => Effect.promise(() => n.close())
    )
    const addresses =
      stored?.deployed ??
      (yield* Effect.tryPromise({
        try: () => deployHoodStack({ rpcUrl: node.rpcUrl, chainId: node.chainId, artifacts: compiled.artifacts, accounts }),
        catch: (e) => new HoodLocalnetError({ stage: "deploy", message: message(e) })
      }))
    if (stored !== undefined) {
      if (stored.deployed === undefined) stored.markDeployed(addresses)
      const genesis = (yield* Effect.promise(() => node.provider.request({ method: "eth_getBlockByNumber", params: ["0x0", false] }))) as { hash: string }
      const latest = (yield* Effect.promise(() => node.provider.request({ method: "eth_blockNumber" }))) as string
      yield* Effect.logInfo(
        stored.deployed === undefined
          ? "hood localnet: new chain"
          : `hood localnet: continued the chain in ${options.dataDir} (${stored.replay.length} records replayed in ${Math.round(performance.now() - started)} ms)`
      ).pipe(
        Effect.annotateLogs({
          dir: options.dataDir,
          block0: genesis.hash,
          block: BigInt(latest).toString(),
          ...(stored.discarded ? { discardedIncompleteJournal: true } : {}),
          ...(stored.tornBytes > 0 ? { tornBytesDropped: stored.tornBytes } : {}),
          ...(node.replayRefused > 0 ? { replayRefusedAgain: node.replayRefused } : {})
        })
      )
    }
    if (node.miner !== undefined) {
      node.miner.startInterval(options.blockIntervalMs ?? 0)
    } else if ((options.blockIntervalMs ?? 0) > 0) {
      yield* Effect.tryPromise({
        try: () => node.provider.request({ method: "evm_setIntervalMining", params: [options.blockIntervalMs] }),
        catch: (e) => new HoodLocalnetError({ stage: "node", message: `interval mining: ${message(e)}` })
      })
    }
    yield* Effect.logDebug("hood localnet started").pipe(
      Effect.annotateLogs({ rpc: node.rpcUrl, chainId: node.chainId, factory: addresses.factory, artifactsFromCache: compiled.fromCache })
    )
    return {
      rpcUrl: node.rpcUrl,
      wsUrl: node.wsUrl,
      chainId: node.chainId,
      chain: hoodChain(node.chainId, node.rpcUrl, node.wsUrl),
      addresses,
      accounts,
      roles: rolesOf(accounts),
      artifacts: compiled.artifacts,
      provider: node.provider,
      node
    }
  })

export const layer = HoodLocalnet.layer
