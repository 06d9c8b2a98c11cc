/**
 * Where the engine's Hood side talks to: the embedded localnet (HOOD_RPC_URL unset — a Hardhat/EDR
 * node on its own worker thread, `localnet/thread.ts`, with the contracts and Uniswap v3 deployed,
 * reached over its JSON-RPC socket like any node, the keeper being the localnet's keeper account) or a real node (HOOD_RPC_URL with the deployed contracts' addresses, and
 * HOOD_KEEPER_PRIVATE_KEY for the migration keeper).
 */
import { loadHoodArtifacts } from "./compile.js"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { type Account, type Address, type Chain, getAddress } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { type LocalnetThreadError, startLocalnetThread } from "../internal/LocalnetThread.js"
import { hoodChain } from "./localnet/Deploy.js"
import type { HoodLocalnetThreadInfo, HoodLocalnetThreadOptions } from "./localnet/threadTypes.js"

/**
 * What the endpoints need from the configuration (`AppConfigShape["hood"]` extends it; the
 * composition root passes that). Declared here so the chain layer never reaches up to `config/`.
 */
export interface HoodEndpointsConfig {
  /** Unset: the embedded Hood localnet (Hardhat/EDR) runs in-process with the contracts deployed. */
  readonly rpcUrl: string | undefined
  readonly chainId: number
  /** Cluster mode: the deployed contracts (required with HOOD_RPC_URL). */
  readonly factory: string | undefined
  readonly feeSplitter: string | undefined
  readonly uniswapV3Factory: string | undefined
  readonly weth9: string | undefined
  /** Cluster mode, optional: the SwapRouter the trade rail swaps through (unset: Hood trades refused). */
  readonly swapRouter?: string | undefined
  /** Cluster mode, optional: the engine's TradeRouter (`TradeRouter.sol`), through which every Hood trade goes with its platform fee (unset: Hood trades refused). */
  readonly tradeRouter?: string | undefined
  /** Cluster mode, optional: the ETH/USD AggregatorV3 feed `PRICE_SOURCE=oracle` reads (unset: ETH from the fixed prices). */
  readonly ethUsdFeed?: string | undefined
  /** The factory's keeper key (hex); the localnet's keeper account when embedded. */
  readonly keeperPrivateKey: Redacted.Redacted<string> | undefined
  /** Embedded: mine an empty block this often (0: only a block per transaction). */
  readonly localnetBlockMs: number
}

export interface HoodEndpointAddresses {
  readonly factory: Address
  readonly feeSplitter: Address
  readonly uniswapV3Factory: Address
  readonly weth9: Address
  /** Embedded: the rest of the localnet's deployment (USDG, position manager, router); cluster mode: the router when HOOD_SWAP_ROUTER_ADDRESS is set. */
  readonly usdg?: Address
  readonly positionManager?: Address
  readonly swapRouter?: Address
  /** The engine's TradeRouter (embedded: the localnet's; cluster mode: HOOD_TRADE_ROUTER_ADDRESS). */
  readonly tradeRouter?: Address
  /** The ETH/USD AggregatorV3 feed (embedded: the localnet's `EthUsdFeed`). */
  readonly ethUsdFeed?: Address
}

export interface HoodEndpointsShape {
  readonly embedded: boolean
  readonly rpcUrl: string
  readonly chain: Chain
  readonly addresses: HoodEndpointAddresses
  /** The factory's keeper; undefined: no Hood keeper runs. */
  readonly keeper: Account | undefined
  /** Embedded only: the localnet's dev trader keys (the simulation's traders and creators). */
  readonly traderKeys: ReadonlyArray<`0x${string}`>
  /** The BondingCurve creation code the factory deploys (predicts a launch's curve address); undefined when it could not be compiled. */
  readonly bondingCurveBytecode: `0x${string}` | undefined
  /** Fails when the embedded localnet's thread crashes; never against a configured node. */
  readonly localnetCrashed: Effect.Effect<never, LocalnetThreadError>
}

export class HoodConfigError extends Schema.TaggedError<HoodConfigError>()("HoodConfigError", {
  message: Schema.String
}) {}

export class HoodEndpoints extends Context.Tag("curvestream/HoodEndpoints")<HoodEndpoints, HoodEndpointsShape>() {
  /** `localnet`: where the embedded localnet keeps its chain (unset: a new chain in memory each start). */
  static readonly layer = (
    h: HoodEndpointsConfig,
    localnet?: { readonly dataDir: string; readonly fsync: boolean }
  ): Layer.Layer<HoodEndpoints, LocalnetThreadError | HoodConfigError> => {
    if (h.rpcUrl === undefined) {
      return Layer.scoped(
        HoodEndpoints,
        Effect.gen(function* () {
          const options: HoodLocalnetThreadOptions = { blockIntervalMs: h.localnetBlockMs, ...localnet }
          const thread = yield* startLocalnetThread<HoodLocalnetThreadInfo>("hood", new URL("./localnet/thread.ts", import.meta.url), options)
          const n = thread.info
          return {
            embedded: true,
            rpcUrl: n.rpcUrl,
            chain: hoodChain(n.chainId, n.rpcUrl, n.wsUrl),
            addresses: n.addresses,
            keeper: privateKeyToAccount(n.keeperPrivateKey),
            traderKeys: n.traderKeys,
            bondingCurveBytecode: n.bondingCurveBytecode,
            localnetCrashed: thread.crashed
          }
        })
      )
    }
    const rpcUrl = h.rpcUrl
    return Layer.effect(
      HoodEndpoints,
      Effect.gen(function* () {
        const missing = (
          [
            ["HOOD_FACTORY_ADDRESS", h.factory],
            ["HOOD_FEE_SPLITTER_ADDRESS", h.feeSplitter],
            ["HOOD_UNISWAP_V3_FACTORY_ADDRESS", h.uniswapV3Factory],
            ["HOOD_WETH9_ADDRESS", h.weth9]
          ] as const
        )
          .filter(([, v]) => v === undefined)
          .map(([name]) => name)
        if (missing.length > 0) return yield* new HoodConfigError({ message: `HOOD_RPC_URL is set, so ${missing.join(", ")} must be set too` })
        const keeper =
          h.keeperPrivateKey === undefined
            ? undefined
            : yield* Effect.try({
                try: () => privateKeyToAccount(Redacted.value(h.keeperPrivateKey!) as `0x${string}`),
                catch: () => new HoodConfigError({ message: "HOOD_KEEPER_PRIVATE_KEY is not a 0x-prefixed 32-byte hex key" })
              })
        // The factory deploys this build's BondingCurve: its creation code (compiled once, cached)
        // predicts a launch's curve address. Unavailable code only makes Hood launches unavailable.
        const bytecode = yield* loadHoodArtifacts().pipe(
          Effect.map((c) => c.artifacts.BondingCurve.bytecode),
          Effect.catchAll((e) => Effect.as(Effect.logWarning("Hood launches unavailable: the contracts could not be compiled", e), undefined))
        )
        return {
          embedded: false,
          rpcUrl,
          chain: hoodChain(h.chainId, rpcUrl),
          addresses: {
            factory: getAddress(h.factory!),
            feeSplitter: getAddress(h.feeSplitter!),
            uniswapV3Factory: getAddress(h.uniswapV3Factory!),
            weth9: getAddress(h.weth9!),
            ...(h.swapRouter === undefined ? {} : { swapRouter: getAddress(h.swapRouter) }),
            ...(h.tradeRouter === undefined ? {} : { tradeRouter: getAddress(h.tradeRouter) }),
            ...(h.ethUsdFeed === undefined ? {} : { ethUsdFeed: getAddress(h.ethUsdFeed) })
          },
          keeper,
          traderKeys: [],
          bondingCurveBytecode: bytecode,
          localnetCrashed: Effect.never
        }
      })
    )
  }
}
