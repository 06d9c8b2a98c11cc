/**
 * The localnets as their own processes (`src/chain/solana/localnet/main.ts`,
 * `src/chain/hood/localnet/main.ts`), for crash tests where the engine dies and the chain must
 * not: each prints one JSON line of its addresses on stdout, then runs until killed.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import { projectRoot } from "./engine.js"

export interface StandaloneSolana {
  readonly rpcUrl: string
  readonly grpcUrl: string
  readonly blockEngineUrl: string
  readonly keeperSecretKey: string
}

export interface StandaloneHood {
  readonly rpcUrl: string
  readonly chainId: number
  readonly addresses: { readonly factory: string; readonly feeSplitter: string; readonly uniswapV3Factory: string; readonly weth9: string; readonly swapRouter?: string; readonly tradeRouter?: string }
  readonly keeperPrivateKey: string
}

export interface Standalone<A> {
  readonly info: A
  readonly child: ChildProcess
  stop(): void
}

const start = async <A>(entry: string, env: Record<string, string>): Promise<Standalone<A>> => {
  const child = spawn(process.execPath, ["--import", "tsx", entry], { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] })
  const info = await new Promise<A>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.once("line", (line) => resolve(JSON.parse(line) as A))
    child.once("exit", (code) => reject(new Error(`${entry} exited with ${code}`)))
  })
  return { info, child, stop: () => void child.kill("SIGTERM") }
}

export const startStandaloneSolana = (env: Record<string, string> = {}): Promise<Standalone<StandaloneSolana>> =>
  start("src/chain/solana/localnet/main.ts", env)

export const startStandaloneHood = (env: Record<string, string> = {}): Promise<Standalone<StandaloneHood>> =>
  start("src/chain/hood/localnet/main.ts", env)

/** The engine's environment to follow a standalone Solana localnet. */
export const solanaEnv = (s: StandaloneSolana): Record<string, string> => ({
  SOLANA_RPC_URL: s.rpcUrl,
  YELLOWSTONE_URL: s.grpcUrl,
  BLOCK_ENGINE_URL: s.blockEngineUrl,
  KEEPER_SECRET_KEY: s.keeperSecretKey
})

/**
 * A launching engine on a standalone Solana localnet, as the crash tests restart it: launches on,
 * the localnet's treasury, and one public URL, so the hosted image's URL stays the engine's own
 * although each start listens on a new port.
 */
export const solanaLaunchEnv = (s: StandaloneSolana): Record<string, string> => ({
  HEADLESS_LAUNCH_ENABLED: "true",
  ...solanaEnv(s),
  SOLANA_TREASURY_ADDRESS: TREASURY_ADDRESS,
  CURVESTREAM_PUBLIC_URL: "http://curvestream.test"
})

/** The engine's environment to follow a standalone Hood node. */
export const hoodEnv = (h: StandaloneHood): Record<string, string> => ({
  HOOD_RPC_URL: h.rpcUrl,
  HOOD_CHAIN_ID: String(h.chainId),
  HOOD_FACTORY_ADDRESS: h.addresses.factory,
  HOOD_FEE_SPLITTER_ADDRESS: h.addresses.feeSplitter,
  HOOD_UNISWAP_V3_FACTORY_ADDRESS: h.addresses.uniswapV3Factory,
  HOOD_WETH9_ADDRESS: h.addresses.weth9,
  ...(h.addresses.swapRouter !== undefined ? { HOOD_SWAP_ROUTER_ADDRESS: h.addresses.swapRouter } : {}),
  ...(h.addresses.tradeRouter !== undefined ? { HOOD_TRADE_ROUTER_ADDRESS: h.addresses.tradeRouter } : {}),
  HOOD_KEEPER_PRIVATE_KEY: h.keeperPrivateKey
})
