/**
 * Deploys the Hood stack on a fresh node, all from dev account #0 in a fixed order, so every
 * address is a pure function of (account #0, nonce) and is the same on every start:
 *
 *   nonce 0 USDG (must land at USDG_ADDRESS, asserted) · 1 WETH9 · 2 UniswapV3Factory ·
 *   3 NonfungiblePositionManager(factory, WETH9, descriptor 0x0) · 4 SwapRouter(factory, WETH9) ·
 *   5 FeeSplitter(treasury #2, 3000 bps, position manager) ·
 *   6 CurveFactory(splitter, position manager, staker vault #3, keeper #1, fee 3000, spacing 60) ·
 *   7 EthUsdFeed(3000 USD, 8 decimals, the reporter key of DevAccounts publishes; funded with 100 ETH) ·
 *   8 TradeRouter(factory, SwapRouter): the engine's trades with the platform fee to the treasury ·
 *   then splitter.setFactory, factory.setQuoteAllowed(USDG), and USDG to every dev account.
 *
 * Uniswap v3 is the real thing: the bytecode of the npm artifacts, whose pool init code hash is
 * the one the periphery's PoolAddress library hard-codes (a test checks the computed pool address).
 * The NFT position descriptor is not deployed (tokenURI is cosmetic and needs a linked library).
 */
import { Schema } from "effect"
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  getContractAddress,
  type Abi,
  type Address,
  type Chain,
  type Hex,
  http,
  type PublicClient,
  zeroAddress
} from "viem"
import { USDG_ADDRESS } from "../../../domain/QuotePairs.js"
import { curveFactoryAbi, feeSplitterAbi, usdgAbi } from "../abi.generated.js"
import { type HoodArtifacts, loadUniswapArtifact } from "../compile.js"
import { privateKeyToAccount } from "viem/accounts"
import { type DevAccount, DEV_ACCOUNT_USDG_RAW, ETH_USD_REPORTER_KEY, KEEPER_INDEX, STAKER_VAULT_INDEX, TREASURY_INDEX } from "./DevAccounts.js"

/** Uniswap v3 fee tier of graduated pools: 0.30 %, tick spacing 60 (enabled by the v3 factory at deploy). */
export const GRADUATED_POOL_FEE = 3000
export const GRADUATED_POOL_TICK_SPACING = 60
/** The streamer's (creator's) share of every curve fee and LP fee: 30 %, the treasury the rest (as on Solana). */
export const STREAMER_SHARE_BPS = 3000

export interface HoodAddresses {
  readonly usdg: Address
  readonly weth9: Address
  readonly uniswapV3Factory: Address
  readonly positionManager: Address
  readonly swapRouter: Address
  readonly feeSplitter: Address
  readonly factory: Address
  /** ETH/USD (AggregatorV3-style); absent on a chain stored before the feed was deployed. */
  readonly ethUsdFeed?: Address
  /** The engine's trade router (`TradeRouter.sol`: the trade and its platform fee in one call); absent on a chain stored before it was deployed. */
  readonly tradeRouter?: Address
}

/** ETH/USD at deploy: 3000.00000000 (the fixed source's default, so both sources start equal). */
export const GENESIS_ETH_USD_ANSWER = 300_000_000_000n
export const ETH_USD_FEED_DECIMALS = 8
/** The reporter's gas for a long run of posts. */
export const ETH_USD_REPORTER_WEI = 100n * 10n ** 18n

export const hoodChain = (chainId: number, rpcUrl: string, wsUrl?: string): Chain =>
  defineChain({
    id: chainId,
    name: "Hood localnet",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl], ...(wsUrl === undefined ? {} : { webSocket: [wsUrl] }) } }
  })

/** The addresses a fresh deploy produces (nonces 0..8 of account #0), without a node. */
export const expectedAddresses = (deployer: Address): HoodAddresses => {
  const at = (nonce: number) => getContractAddress({ from: deployer, nonce: BigInt(nonce) })
  return {
    usdg: at(0),
    weth9: at(1),
    uniswapV3Factory: at(2),
    positionManager: at(3),
    swapRouter: at(4),
    feeSplitter: at(5),
    factory: at(6),
    ethUsdFeed: at(7),
    tradeRouter: at(8)
  }
}

export class HoodDeployError extends Schema.TaggedError<HoodDeployError>()("HoodDeployError", { message: Schema.String }) {}

export const deployHoodStack = async (params: {
  readonly rpcUrl: string
  readonly chainId: number
  readonly artifacts: HoodArtifacts
  readonly accounts: ReadonlyArray<DevAccount>
}): Promise<HoodAddresses> => {
  const chain = hoodChain(params.chainId, params.rpcUrl)
  const deployer = params.accounts[0]
  const role = (i: number) => {
    const a = params.accounts[i]
    if (a === undefined) throw new HoodDeployError({ message: `dev account #${i} is missing` })
    return a.address
  }
  if (deployer === undefined) throw new HoodDeployError({ message: "no dev accounts" })
  const transport = http(params.rpcUrl, { batch: false, retryCount: 0 })
  const publicClient: PublicClient = createPublicClient({ chain, transport, pollingInterval: 20, cacheTime: 0 })
  const wallet = createWalletClient({ chain, transport, account: deployer.account })
  if ((await publicClient.getTransactionCount({ address: deployer.address })) !== 0) {
    throw new HoodDeployError({ message: "account #0 has already sent transactions: the stack deploys only on a fresh node" })
  }

  const confirm = async (hash: Hex, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    if (receipt.status !== "success") throw new HoodDeployError({ message: `${what} reverted (${hash})` })
    return receipt
  }
  const deploy = async (what: string, abi: Abi, bytecode: Hex, args: ReadonlyArray<unknown>): Promise<Address> => {
    const hash = await wallet.deployContract({ abi, bytecode, args: args as unknown[] })
    const receipt = await confirm(hash, `deploy ${what}`)
    if (receipt.contractAddress === null || receipt.contractAddress === undefined) throw new HoodDeployError({ message: `${what}: no address` })
    return getAddress(receipt.contractAddress)
  }

  const a = params.artifacts
  const usdg = await deploy("USDG", a.USDG.abi, a.USDG.bytecode, [])
  if (usdg !== getAddress(USDG_ADDRESS)) {
    throw new HoodDeployError({ message: `USDG landed at ${usdg}, not ${USDG_ADDRESS}: account #0 must deploy it first (nonce 0)` })
  }
  const weth9 = await deploy("WETH9", a.WETH9.abi, a.WETH9.bytecode, [])
  const v3Factory = loadUniswapArtifact("UniswapV3Factory")
  const uniswapV3Factory = await deploy("UniswapV3Factory", v3Factory.abi, v3Factory.bytecode, [])
  const npm = loadUniswapArtifact("NonfungiblePositionManager")
  const positionManager = await deploy("NonfungiblePositionManager", npm.abi, npm.bytecode, [uniswapV3Factory, weth9, zeroAddress])
  const router = loadUniswapArtifact("SwapRouter")
  const swapRouter = await deploy("SwapRouter", router.abi, router.bytecode, [uniswapV3Factory, weth9])
  const feeSplitter = await deploy("FeeSplitter", a.FeeSplitter.abi, a.FeeSplitter.bytecode, [
    role(TREASURY_INDEX),
    STREAMER_SHARE_BPS,
    positionManager
  ])
  const factory = await deploy("CurveFactory", a.CurveFactory.abi, a.CurveFactory.bytecode, [
    feeSplitter,
    positionManager,
    role(STAKER_VAULT_INDEX),
    role(KEEPER_INDEX),
    GRADUATED_POOL_FEE,
    GRADUATED_POOL_TICK_SPACING
  ])
  const reporter = privateKeyToAccount(ETH_USD_REPORTER_KEY).address
  const ethUsdFeed = await deploy("EthUsdFeed", a.EthUsdFeed.abi, a.EthUsdFeed.bytecode, [GENESIS_ETH_USD_ANSWER, reporter])
  const tradeRouter = await deploy("TradeRouter", a.TradeRouter.abi, a.TradeRouter.bytecode, [factory, swapRouter])
  await confirm(await wallet.sendTransaction({ to: reporter, value: ETH_USD_REPORTER_WEI }), "fund the ETH/USD reporter")
  await confirm(await wallet.writeContract({ address: feeSplitter, abi: feeSplitterAbi, functionName: "setFactory", args: [factory] }), "setFactory")
  await confirm(
    await wallet.writeContract({ address: factory, abi: curveFactoryAbi, functionName: "setQuoteAllowed", args: [usdg, true] }),
    "setQuoteAllowed(USDG)"
  )
  for (const account of params.accounts) {
    await confirm(
      await wallet.writeContract({ address: usdg, abi: usdgAbi, functionName: "mint", args: [account.address, DEV_ACCOUNT_USDG_RAW] }),
      `mint USDG to #${account.index}`
    )
  }
  return { usdg, weth9, uniswapV3Factory, positionManager, swapRouter, feeSplitter, factory, ethUsdFeed, tradeRouter }
}
