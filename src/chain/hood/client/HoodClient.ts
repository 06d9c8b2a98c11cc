/**
 * viem helpers over the Hood contracts, shared by the engine, the keeper, the simulation and the
 * tests: create a curve, buy, sell, approve, read a curve at one block, migrate or cancel (keeper),
 * claim recovery. Each write waits for its receipt and returns the decoded event it produced; a
 * mined revert throws `HoodTxReverted`, a refused estimate throws viem's error, whose custom error
 * name `revertName(e)` extracts (`CurveComplete`, `SlippageExceeded`, `NotInRecovery`, ...).
 *
 * `gas` skips viem's estimate (one RPC less; the transaction is then mined even if it reverts,
 * which `HoodTxReverted` reports). Amounts are bigint raw units throughout.
 */
import { Schema } from "effect"
import {
  type Account,
  type Address,
  BaseError,
  type Chain,
  type ContractFunctionName,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  encodeAbiParameters,
  encodeDeployData,
  getAddress,
  getContractAddress,
  type Hash,
  type Hex,
  http,
  keccak256,
  parseEventLogs,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
  toHex,
  zeroAddress
} from "viem"
import { nodeFetchForJsonRpc } from "../../internal/JsonRpcHttp.js"
import type { CurveParams, CurveState } from "../../../domain/CurveMath.js"
import { bondingCurveAbi, curveFactoryAbi, curveTokenAbi, feeSplitterAbi, swapRouterAbi, tradeRouterAbi, usdgAbi } from "../abi.generated.js"
import { configHash, type DexVersion, dexVersionNumber, dexVersionOf, HOOD_TOKEN_SUPPLY_RAW } from "./ConfigHash.js"

export type HoodWallet = WalletClient<Transport, Chain, Account>

export interface HoodClients {
  readonly publicClient: PublicClient
  readonly wallet: HoodWallet
}

export const hoodPublicClient = (chain: Chain, rpcUrl?: string): PublicClient =>
  createPublicClient({ chain, transport: http(rpcUrl ?? chain.rpcUrls.default.http[0], { retryCount: 0, fetchFn: nodeFetchForJsonRpc }), pollingInterval: 20, cacheTime: 0 })

export const hoodWallet = (chain: Chain, account: Account, rpcUrl?: string): HoodWallet =>
  createWalletClient({ chain, account, transport: http(rpcUrl ?? chain.rpcUrls.default.http[0], { retryCount: 0, fetchFn: nodeFetchForJsonRpc }), pollingInterval: 20, cacheTime: 0 })

/** A transaction that was mined with status 0 (sent with an explicit `gas`, so nothing estimated it first). */
export class HoodTxReverted extends Schema.TaggedError<HoodTxReverted>()("HoodTxReverted", {
  hash: Schema.String,
  what: Schema.String
}) {
  override get message(): string {
    return `${this.what} reverted on chain (${this.hash})`
  }
}

/** Every custom error the Hood contracts declare: a revert bubbling up from the token or the
 * splitter through a curve call, or from the curve through the trade router, decodes too. */
export const hoodErrorsAbi = [...bondingCurveAbi, ...curveFactoryAbi, ...curveTokenAbi, ...feeSplitterAbi, ...usdgAbi, ...tradeRouterAbi].filter(
  (item) => item.type === "error"
)

/** The custom error a contract reverted with, from a viem error (estimate, simulate or call). */
export const revertName = (e: unknown): string | undefined => {
  if (!(e instanceof BaseError)) return undefined
  const reverted = e.walk((x) => x instanceof ContractFunctionRevertedError)
  if (!(reverted instanceof ContractFunctionRevertedError)) return undefined
  if (reverted.data?.errorName !== undefined) return reverted.data.errorName
  if (reverted.raw === undefined) return undefined
  try {
    return decodeErrorResult({ abi: hoodErrorsAbi, data: reverted.raw }).errorName
  } catch {
    return undefined
  }
}

export interface SendOptions {
  readonly gas?: bigint
}

const mined = async (c: HoodClients, hash: Hash, what: string): Promise<TransactionReceipt> => {
  const receipt = await c.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 })
  if (receipt.status !== "success") throw new HoodTxReverted({ hash, what })
  return receipt
}

const one = <T>(items: ReadonlyArray<T>, what: string): T => {
  const item = items[0]
  if (item === undefined) throw new Error(`${what}: event missing from the receipt`)
  return item
}

// --- Launch -----------------------------------------------------------------------------------

export interface CreateCurveInput {
  readonly name: string
  readonly symbol: string
  readonly uri?: string
  /** zeroAddress (native ETH) or an allowed ERC-20 (USDG). */
  readonly quoteToken: Address
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
  readonly stakerAllocationBps?: number
  readonly dexVersion: DexVersion
  /** CREATE2 salt (with the creator): the same salt twice from one creator reverts. Default random. */
  readonly salt?: Hex
}

export const randomSalt = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)))

export const createCurveParams = (i: CreateCurveInput) =>
  ({
    name: i.name,
    symbol: i.symbol,
    uri: i.uri ?? "",
    quoteToken: i.quoteToken,
    virtualQuote: i.virtualQuoteRaw,
    graduationThreshold: i.thresholdRaw,
    stakerAllocationBps: i.stakerAllocationBps ?? 50,
    dexVersion: dexVersionNumber(i.dexVersion),
    salt: i.salt ?? randomSalt()
  }) as const

export const createCurve = async (c: HoodClients, factory: Address, i: CreateCurveInput, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: factory,
    abi: curveFactoryAbi,
    functionName: "createCurve",
    args: [createCurveParams(i)],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "createCurve")
  const event = one(parseEventLogs({ abi: curveFactoryAbi, logs: receipt.logs, eventName: "CurveCreated" }), "createCurve")
  return { curve: getAddress(event.args.curve), token: getAddress(event.args.token), hash, receipt, event: event.args }
}

// --- Trading ----------------------------------------------------------------------------------

export const approve = async (c: HoodClients, token: Address, spender: Address, amountRaw: bigint, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: token,
    abi: usdgAbi, // any ERC-20: approve(address,uint256) is the same selector on every token here
    functionName: "approve",
    args: [spender, amountRaw],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  return mined(c, hash, "approve")
}

export interface BuyInput {
  readonly amountInRaw: bigint
  readonly minAmountOutRaw?: bigint
  /** zeroAddress for ETH (sent as value); an ERC-20 must be approved to the curve first. */
  readonly quoteToken: Address
}

export const buy = async (c: HoodClients, curve: Address, i: BuyInput, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: curve,
    abi: bondingCurveAbi,
    functionName: "buy",
    args: [i.amountInRaw, i.minAmountOutRaw ?? 0n],
    value: i.quoteToken === zeroAddress ? i.amountInRaw : 0n,
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "buy")
  const trade = one(parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "Trade" }), "buy").args
  const completed = parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "CurveCompleted" })[0]?.args
  return { hash, receipt, trade, completed }
}

/** Sell `tokensInRaw` (approve the curve on the token first, e.g. with `approve`). */
export const sell = async (c: HoodClients, curve: Address, tokensInRaw: bigint, minAmountOutRaw = 0n, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: curve,
    abi: bondingCurveAbi,
    functionName: "sell",
    args: [tokensInRaw, minAmountOutRaw],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "sell")
  const trade = one(parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "Trade" }), "sell").args
  return { hash, receipt, trade }
}

export interface PoolSwapInput {
  readonly router: Address
  readonly tokenIn: Address
  readonly tokenOut: Address
  /** The pool's fee tier (hundredths of a bip: 3000 = 0.30 %). */
  readonly fee: number
  readonly amountInRaw: bigint
  readonly minAmountOutRaw?: bigint
  /** Send the amount as ETH (the router wraps it when `tokenIn` is WETH); otherwise approve the router first. */
  readonly payWithEth: boolean
}

/** An exact-input swap on a graduated Uniswap v3 pool through the SwapRouter, to the caller. */
/**
 * Gas of a router swap when the caller names none. viem's estimate was seen too low for a swap into
 * a freshly seeded pool in the e2e tests (the swap reverted on chain while a simulation of the same
 * call passed): likely the estimate ran in a block that writes no oracle observation while the swap
 * landed in one that does (the localnet stamps several blocks a second). A fixed bound removes the race.
 */
export const SWAP_GAS_LIMIT = 3_000_000n

export const swapExactIn = async (c: HoodClients, i: PoolSwapInput, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: i.router,
    abi: swapRouterAbi,
    functionName: "exactInputSingle",
    args: [
      {
        tokenIn: i.tokenIn,
        tokenOut: i.tokenOut,
        fee: i.fee,
        recipient: c.wallet.account.address,
        deadline: 2n ** 40n,
        amountIn: i.amountInRaw,
        amountOutMinimum: i.minAmountOutRaw ?? 1n,
        sqrtPriceLimitX96: 0n
      }
    ],
    value: i.payWithEth ? i.amountInRaw : 0n,
    gas: o.gas ?? SWAP_GAS_LIMIT
  })
  return mined(c, hash, "exactInputSingle")
}

// --- Reads ------------------------------------------------------------------------------------

export type HoodCurvePhase = "trading" | "completed" | "migrated" | "recovery"
const PHASES: ReadonlyArray<HoodCurvePhase> = ["trading", "completed", "migrated", "recovery"]

export interface HoodCurveSnapshot {
  readonly blockNumber: bigint
  readonly curve: Address
  readonly token: Address
  readonly creator: Address
  readonly quoteToken: Address
  readonly feeSplitter: Address
  readonly dexVersion: DexVersion
  readonly configHash: Hex
  readonly feeBps: number
  readonly stakerAllocationBps: number
  readonly tokenSupplyRaw: bigint
  readonly stakerAllocationRaw: bigint
  readonly phase: HoodCurvePhase
  /** CurveMath's view of the curve, crossing model capped-refund. */
  readonly params: CurveParams
  readonly state: CurveState
  readonly reserveSnapshotRaw: bigint
  readonly eligibleSupplyRaw: bigint
  readonly surrenderedRaw: bigint
  /** The Uniswap v3 pool once migrated, else null. */
  readonly pool: Address | null
  readonly lpTokenId: bigint
}

/** Every field read at ONE block (`blockNumber`, default the latest). */
export const readCurve = async (pc: PublicClient, curve: Address, blockNumber?: bigint): Promise<HoodCurveSnapshot> => {
  const at = blockNumber ?? (await pc.getBlockNumber())
  const read = (functionName: ContractFunctionName<typeof bondingCurveAbi, "view">) =>
    pc.readContract({ address: curve, abi: bondingCurveAbi, functionName, blockNumber: at } as never) as Promise<unknown>
  const [token, creator, quoteToken, feeSplitter, dexVersion, hash, feeBps, stakerBps, supply, stakerAlloc, v, g, x, st] =
    await Promise.all([
      read("token"),
      read("creator"),
      read("quoteToken"),
      read("feeSplitter"),
      read("dexVersion"),
      read("configHash"),
      read("feeBps"),
      read("stakerAllocationBps"),
      read("tokenSupply"),
      read("stakerAllocation"),
      read("virtualQuote"),
      read("graduationThreshold"),
      read("tokenReserve"),
      read("curveState")
    ])
  const [phase, vQuote, vTok, real, reserve, eligible, surrendered, pool, lpTokenId] = st as readonly [
    number,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    bigint,
    Address,
    bigint
  ]
  const phaseName = PHASES[phase]
  if (phaseName === undefined) throw new Error(`curve ${curve}: unknown phase ${phase}`)
  return {
    blockNumber: at,
    curve: getAddress(curve),
    token: token as Address,
    creator: creator as Address,
    quoteToken: quoteToken as Address,
    feeSplitter: feeSplitter as Address,
    dexVersion: dexVersionOf(dexVersion as number),
    configHash: hash as Hex,
    feeBps: feeBps as number,
    stakerAllocationBps: stakerBps as number,
    tokenSupplyRaw: supply as bigint,
    stakerAllocationRaw: stakerAlloc as bigint,
    phase: phaseName,
    params: {
      virtualQuoteRaw: v as bigint,
      thresholdRaw: g as bigint,
      tokenReserveRaw: x as bigint,
      feeBps: BigInt(feeBps as number),
      crossingModel: "capped-refund"
    },
    state: { virtualQuoteRaw: vQuote, virtualTokenRaw: vTok, realQuoteRaw: real, complete: phaseName !== "trading" },
    reserveSnapshotRaw: reserve,
    eligibleSupplyRaw: eligible,
    surrenderedRaw: surrendered,
    pool: pool === zeroAddress ? null : pool,
    lpTokenId
  }
}

/** The recovery block of spec 2.9 (raw integer strings are the caller's rendering), read at one block. */
export interface RecoveryBlock {
  readonly blockNumber: bigint
  readonly curve: Address
  readonly quoteToken: Address
  readonly reserveSnapshotRaw: bigint
  readonly eligibleSupplyRaw: bigint
  readonly surrenderedRaw: bigint
  readonly method: "claimRecovery(uint256)"
  readonly requiresApprovalTo: Address
}

export const readRecovery = async (pc: PublicClient, curve: Address, blockNumber?: bigint): Promise<RecoveryBlock | null> => {
  const s = await readCurve(pc, curve, blockNumber)
  if (s.phase !== "recovery") return null
  return {
    blockNumber: s.blockNumber,
    curve: s.curve,
    quoteToken: s.quoteToken,
    reserveSnapshotRaw: s.reserveSnapshotRaw,
    eligibleSupplyRaw: s.eligibleSupplyRaw,
    surrenderedRaw: s.surrenderedRaw,
    method: "claimRecovery(uint256)",
    requiresApprovalTo: s.curve
  }
}

/** What `claimRecovery(amount)` pays: floor(amount·reserveSnapshotRaw/eligibleSupplyRaw). */
export const recoveryPayoutRaw = (amountRaw: bigint, reserveSnapshotRaw: bigint, eligibleSupplyRaw: bigint): bigint =>
  eligibleSupplyRaw === 0n ? 0n : (amountRaw * reserveSnapshotRaw) / eligibleSupplyRaw

export const tokenBalance = (pc: PublicClient, token: Address, owner: Address, blockNumber?: bigint): Promise<bigint> =>
  pc.readContract({ address: token, abi: curveTokenAbi, functionName: "balanceOf", args: [owner], ...(blockNumber === undefined ? {} : { blockNumber }) })

// --- Keeper -----------------------------------------------------------------------------------

export const migrate = async (c: HoodClients, curve: Address, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: curve,
    abi: bondingCurveAbi,
    functionName: "migrate",
    args: [],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "migrate")
  const event = one(parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "CurveMigrated" }), "migrate").args
  return { hash, receipt, event }
}

export const cancelMigration = async (c: HoodClients, curve: Address, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: curve,
    abi: bondingCurveAbi,
    functionName: "cancelMigration",
    args: [],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "cancelMigration")
  const event = one(parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "RecoveryStarted" }), "cancelMigration").args
  return { hash, receipt, event }
}

// --- Holders ----------------------------------------------------------------------------------

/** Approve `amountRaw` of the token to the curve, then claim; returns the RecoveryClaimed event. */
export const claimRecovery = async (c: HoodClients, curve: Address, token: Address, amountRaw: bigint, o: SendOptions = {}) => {
  await approve(c, token, curve, amountRaw, o)
  const hash = await c.wallet.writeContract({
    address: curve,
    abi: bondingCurveAbi,
    functionName: "claimRecovery",
    args: [amountRaw],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "claimRecovery")
  const event = one(parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "RecoveryClaimed" }), "claimRecovery").args
  return { hash, receipt, event }
}

/** The streamer's creator-fee claim of one asset (zeroAddress = ETH) from the fee splitter. */
export const claimCreatorFee = async (c: HoodClients, feeSplitter: Address, curve: Address, asset: Address, o: SendOptions = {}) => {
  const hash = await c.wallet.writeContract({
    address: feeSplitter,
    abi: feeSplitterAbi,
    functionName: "claim",
    args: [curve, asset],
    ...(o.gas === undefined ? {} : { gas: o.gas })
  })
  const receipt = await mined(c, hash, "claim")
  const event = one(parseEventLogs({ abi: feeSplitterAbi, logs: receipt.logs, eventName: "CreatorFeeClaimed" }), "claim").args
  return { hash, receipt, event }
}

/**
 * The curve address `createCurve` will produce, before sending it (spec 3.2: the Hood build stores
 * the predicted curve): CREATE2 from the factory with salt keccak256(abi.encode(creator, salt)) over
 * the BondingCurve creation code and its constructor argument. `feeBps` and `feeSplitter` are the
 * factory's at the time (read them first); `bondingCurveBytecode` is the compiled artifact's.
 */
export const predictCurveAddress = (p: {
  readonly factory: Address
  readonly creator: Address
  readonly feeSplitter: Address
  readonly feeBps: number
  readonly bondingCurveBytecode: Hex
  readonly input: CreateCurveInput & { readonly salt: Hex }
}): Address => {
  const args = createCurveParams(p.input)
  const hash = configHash({
    quoteToken: args.quoteToken,
    virtualQuoteRaw: args.virtualQuote,
    thresholdRaw: args.graduationThreshold,
    stakerAllocationBps: args.stakerAllocationBps,
    feeBps: p.feeBps,
    dexVersion: p.input.dexVersion
  })
  const initCode = encodeDeployData({
    abi: bondingCurveAbi,
    bytecode: p.bondingCurveBytecode,
    args: [
      {
        creator: p.creator,
        quoteToken: args.quoteToken,
        virtualQuote: args.virtualQuote,
        graduationThreshold: args.graduationThreshold,
        tokenSupply: HOOD_TOKEN_SUPPLY_RAW,
        stakerAllocationBps: args.stakerAllocationBps,
        feeBps: p.feeBps,
        dexVersion: args.dexVersion,
        configHash: hash,
        feeSplitter: p.feeSplitter,
        name: args.name,
        symbol: args.symbol,
        uri: args.uri
      }
    ]
  })
  const salt = keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [p.creator, p.input.salt]))
  return getContractAddress({ opcode: "CREATE2", from: p.factory, salt, bytecode: initCode })
}

/** Deterministic salts for tests and the simulation: keccak256 of a label. */
export const saltOf = (label: string): Hex => keccak256(toHex(label))
