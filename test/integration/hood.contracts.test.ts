/**
 * The Hood contracts on the real localnet (one Hardhat node for the file; each test reverts to a
 * snapshot taken after the shared setup).
 *
 * Curve phases and the test that covers each transition:
 *
 *   Trading ──buy reaching G (capped, refund)──▶ Completed ──migrate (keeper)──▶ Migrated
 *      │ buy/sell: "agrees with CurveMath.ts"       │  "graduates into a real Uniswap v3 pool"
 *      │                                             └─cancelMigration (keeper)─▶ Recovery
 *      │                                                "recovery: cancel after a failed migration"
 *   refusals in every phase: "refuses ..." tests
 */
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Address, encodeAbiParameters, getAddress, getContractAddress, type Hex, keccak256, maxUint256, parseEventLogs, zeroAddress } from "viem"
import { findEconomics } from "../../src/domain/Economics.js"
import {
  type CurveParams,
  type CurveState,
  DEFAULT_CURVE_FEE_BPS,
  initialState,
  isqrt,
  quoteBuy,
  quoteSell,
  tokenReserveRaw,
  type TradeRefusal
} from "../../src/domain/CurveMath.js"
import * as generated from "../../src/chain/hood/abi.generated.js"
import {
  bondingCurveAbi,
  curveFactoryAbi,
  curveTokenAbi,
  feeSplitterAbi,
  nonfungiblePositionManagerAbi,
  uniswapV3FactoryAbi,
  uniswapV3PoolAbi,
  usdgAbi
} from "../../src/chain/hood/abi.generated.js"
import {
  abiExportName,
  compileHoodContracts,
  CONTRACTS_DIR,
  HoodContractNames,
  importResolver,
  loadUniswapArtifact,
  sourcesHash
} from "../../src/chain/hood/compile.js"
import { configHash, HOOD_TOKEN_SUPPLY_RAW } from "../../src/chain/hood/client/ConfigHash.js"
import {
  approve,
  buy,
  cancelMigration,
  claimCreatorFee,
  claimRecovery,
  createCurve,
  type HoodClients,
  HoodTxReverted,
  migrate,
  predictCurveAddress,
  readCurve,
  readRecovery,
  recoveryPayoutRaw,
  revertName,
  saltOf,
  sell,
  swapExactIn,
  tokenBalance
} from "../../src/chain/hood/client/HoodClient.js"
import { GRADUATED_POOL_FEE, STREAMER_SHARE_BPS } from "../../src/chain/hood/localnet/Deploy.js"
import {
  clientsFor,
  hoodTestClient,
  type HoodTestClient,
  publicClientOf,
  revertTo,
  snapshot,
  startHoodLocalnet,
  type StartedHoodLocalnet
} from "../../src/chain/hood/localnet/testkit.js"

const ethTier = findEconomics("hood", "eth")!.tiers[0]!
const usdgTier = findEconomics("hood", "usdg")!.tiers[0]!
const POOL_INIT_CODE_HASH: Hex = "0xe34f199b19b2b4f47f68442619d555527d244f78a3297ea89325f843f87b8b54"
const GAS = 600_000n

interface Market {
  readonly label: "eth" | "usdg"
  readonly curve: Address
  readonly token: Address
  readonly quoteToken: Address
  readonly params: CurveParams
}

let net: StartedHoodLocalnet
let tc: HoodTestClient
let creator: HoodClients
let keeper: HoodClients
let traders: ReadonlyArray<HoodClients>
let eth: Market
let usdg: Market
let base: Hex

const paramsOf = (v: bigint, g: bigint): CurveParams => ({
  virtualQuoteRaw: v,
  thresholdRaw: g,
  tokenReserveRaw: tokenReserveRaw(HOOD_TOKEN_SUPPLY_RAW, 50n),
  feeBps: DEFAULT_CURVE_FEE_BPS,
  crossingModel: "capped-refund"
})

const refusalError: Record<TradeRefusal, string> = {
  curve_complete: "CurveComplete",
  zero_amount: "ZeroAmount",
  exceeds_curve_supply: "ExceedsCurveSupply"
}

/** Fresh chain state for a test: back to the post-setup snapshot, and a new snapshot for the next. */
const fresh = async () => {
  await revertTo(tc, base)
  base = await snapshot(tc)
}

const quoteBalance = (m: Market, who: Address): Promise<bigint> =>
  m.quoteToken === zeroAddress
    ? net.provider.request({ method: "eth_getBalance", params: [who, "latest"] }).then((h) => BigInt(h as string))
    : publicClientOf(net).readContract({ address: m.quoteToken, abi: usdgAbi, functionName: "balanceOf", args: [who] })

const simulateError = async (c: HoodClients, m: Market, side: "buy" | "sell", amount: bigint, minOut = 0n): Promise<string | undefined> => {
  try {
    await c.publicClient.simulateContract({
      account: c.wallet.account,
      address: m.curve,
      abi: bondingCurveAbi,
      functionName: side,
      args: [amount, minOut],
      ...(side === "buy" && m.quoteToken === zeroAddress ? { value: amount } : {})
    } as never)
    return undefined
  } catch (e) {
    return revertName(e) ?? `unexpected: ${String(e)}`
  }
}

/** Buy as `c` and check the execution against CurveMath to the wei; returns the new model state. */
const buyAndCheck = async (c: HoodClients, m: Market, state: CurveState, amountIn: bigint): Promise<CurveState> => {
  const q = quoteBuy(m.params, state, amountIn)
  if (q._tag === "Refused") {
    expect(await simulateError(c, m, "buy", amountIn)).toBe(refusalError[q.reason])
    return state
  }
  const who = c.wallet.account.address
  const before = await quoteBalance(m, who)
  const tokensBefore = await tokenBalance(c.publicClient, m.token, who)
  const r = await buy(c, m.curve, { amountInRaw: amountIn, quoteToken: m.quoteToken }, { gas: GAS })
  expect(r.trade).toEqual({
    token: m.token,
    trader: who,
    isBuy: true,
    amountIn,
    amountOut: q.amountOut,
    fee: q.fee,
    refund: q.refund,
    quoteConsumed: q.quoteConsumed,
    virtualQuoteReserve: q.next.virtualQuoteRaw,
    virtualTokenReserve: q.next.virtualTokenRaw,
    realQuote: q.next.realQuoteRaw,
    crossesGraduation: q.crossesGraduation
  })
  expect(r.completed !== undefined).toBe(q.crossesGraduation)
  const gasCost = m.quoteToken === zeroAddress ? r.receipt.gasUsed * r.receipt.effectiveGasPrice : 0n
  expect(before - (await quoteBalance(m, who))).toBe(q.quoteConsumed + gasCost)
  expect((await tokenBalance(c.publicClient, m.token, who)) - tokensBefore).toBe(q.amountOut)
  return q.next
}

const sellAndCheck = async (c: HoodClients, m: Market, state: CurveState, tokensIn: bigint): Promise<CurveState> => {
  const q = quoteSell(m.params, state, tokensIn)
  if (q._tag === "Refused") {
    expect(await simulateError(c, m, "sell", tokensIn)).toBe(refusalError[q.reason])
    return state
  }
  const who = c.wallet.account.address
  const before = await quoteBalance(m, who)
  const r = await sell(c, m.curve, tokensIn, 0n, { gas: GAS })
  expect(r.trade).toEqual({
    token: m.token,
    trader: who,
    isBuy: false,
    amountIn: tokensIn,
    amountOut: q.amountOut,
    fee: q.fee,
    refund: 0n,
    quoteConsumed: 0n,
    virtualQuoteReserve: q.next.virtualQuoteRaw,
    virtualTokenReserve: q.next.virtualTokenRaw,
    realQuote: q.next.realQuoteRaw,
    crossesGraduation: false
  })
  const gasCost = m.quoteToken === zeroAddress ? r.receipt.gasUsed * r.receipt.effectiveGasPrice : 0n
  expect((await quoteBalance(m, who)) - before).toBe(q.amountOut - gasCost)
  return q.next
}

/** Buy until the curve completes (the last buy crosses with a refund). */
const graduate = async (m: Market, buyers: ReadonlyArray<HoodClients>): Promise<CurveState> => {
  let state = initialState(m.params)
  const g = m.params.thresholdRaw
  const amounts = [g / 3n, g / 4n, g] // the last one crosses: 1/3 + 1/4 of G net is below G
  for (const [i, amount] of amounts.entries()) {
    const q = quoteBuy(m.params, state, amount)
    if (i === amounts.length - 1) expect(q._tag === "Filled" && q.crossesGraduation && q.refund > 0n).toBe(true)
    state = await buyAndCheck(buyers[i % buyers.length]!, m, state, amount) // checks the refund came back
  }
  expect(state.complete).toBe(true)
  return state
}

beforeAll(async () => {
  net = await startHoodLocalnet()
  tc = hoodTestClient(net)
  creator = clientsFor(net, net.roles.traders[0]!)
  keeper = clientsFor(net, net.roles.keeper)
  traders = net.roles.traders.slice(1, 5).map((a) => clientsFor(net, a))
  const launch = async (label: "eth" | "usdg", quoteToken: Address, v: bigint, g: bigint): Promise<Market> => {
    const r = await createCurve(creator, net.addresses.factory, {
      name: `Curve ${label}`,
      symbol: label.toUpperCase(),
      uri: `https://example.com/${label}.json`,
      quoteToken,
      virtualQuoteRaw: v,
      thresholdRaw: g,
      dexVersion: "v3",
      salt: saltOf(`hood.contracts/${label}`)
    })
    return { label, curve: r.curve, token: r.token, quoteToken, params: paramsOf(v, g) }
  }
  eth = await launch("eth", zeroAddress, ethTier.virtualQuoteRaw, ethTier.thresholdRaw)
  usdg = await launch("usdg", net.addresses.usdg, usdgTier.virtualQuoteRaw, usdgTier.thresholdRaw)
  for (const t of traders) {
    await approve(t, net.addresses.usdg, usdg.curve, maxUint256)
    for (const m of [eth, usdg]) await approve(t, m.token, m.curve, maxUint256)
  }
  base = await snapshot(tc)
})

afterAll(async () => {
  await net?.close()
})

describe("compilation", () => {
  it("abi.generated.ts is exactly what solc and the Uniswap artifacts say", () => {
    const r = compileHoodContracts()
    const exported = generated as unknown as Record<string, unknown>
    for (const name of HoodContractNames) expect(exported[abiExportName(name)], name).toEqual(r.artifacts[name].abi)
    for (const name of ["UniswapV3Factory", "UniswapV3Pool", "NonfungiblePositionManager", "SwapRouter"] as const) {
      expect(exported[abiExportName(name)], name).toEqual(loadUniswapArtifact(name).abi)
    }
  })

  it("caches artifacts by a hash of the sources: a second compile reads the cache, a changed source changes the key", () => {
    const first = compileHoodContracts()
    const second = compileHoodContracts()
    expect(second.fromCache).toBe(true)
    expect(second.hash).toBe(first.hash)
    expect(second.artifacts).toEqual(first.artifacts)
    expect(sourcesHash({ "A.sol": { content: "contract A {}" } })).not.toBe(sourcesHash({ "A.sol": { content: "contract A { }" } }))
    // The import callback reaches the contracts folder and node_modules, nothing else.
    const resolveImport = importResolver(CONTRACTS_DIR)
    expect(resolveImport("lib/ERC20.sol")).toHaveProperty("contents")
    expect(resolveImport("@uniswap/v3-core/contracts/interfaces/IUniswapV3Pool.sol")).toHaveProperty("contents")
    for (const outside of ["../compile.ts", "/etc/passwd", "lib/../../compile.ts", "@uniswap/../../package.json"]) {
      expect(resolveImport(outside), outside).toHaveProperty("error")
    }
    // Every deployed runtime is under EIP-170's 24,576 bytes (no unlimited-size flag on the node).
    for (const name of HoodContractNames) expect((r(first, name).length - 2) / 2, name).toBeLessThanOrEqual(24_576)
  })
})

const r = (c: ReturnType<typeof compileHoodContracts>, name: (typeof HoodContractNames)[number]) => c.artifacts[name].deployedBytecode

describe("createCurve", () => {
  it("records every launch parameter, the config hash and the fee recipient, and emits them in CurveCreated", async () => {
    await fresh()
    const pc = publicClientOf(net)
    const created = await createCurve(creator, net.addresses.factory, {
      name: "Hood Dog",
      symbol: "HDOG",
      uri: "https://example.com/hdog.json",
      quoteToken: zeroAddress,
      virtualQuoteRaw: ethTier.virtualQuoteRaw,
      thresholdRaw: ethTier.thresholdRaw,
      stakerAllocationBps: 500,
      dexVersion: "v4",
      salt: saltOf("hdog")
    })
    const expectedHash = configHash({
      quoteToken: zeroAddress,
      virtualQuoteRaw: ethTier.virtualQuoteRaw,
      thresholdRaw: ethTier.thresholdRaw,
      stakerAllocationBps: 500,
      feeBps: 100,
      dexVersion: "v4"
    })
    const stakerAllocation = (HOOD_TOKEN_SUPPLY_RAW * 500n) / 10_000n
    expect(created.event).toEqual({
      curve: created.curve,
      token: created.token,
      creator: creator.wallet.account.address,
      quoteToken: zeroAddress,
      virtualQuote: ethTier.virtualQuoteRaw,
      graduationThreshold: ethTier.thresholdRaw,
      stakerAllocation,
      dexVersion: 4,
      configHash: expectedHash,
      tokenSupply: HOOD_TOKEN_SUPPLY_RAW,
      tokenReserve: HOOD_TOKEN_SUPPLY_RAW - stakerAllocation,
      stakerAllocationBps: 500,
      feeBps: 100,
      quoteDecimals: 18,
      name: "Hood Dog",
      symbol: "HDOG",
      uri: "https://example.com/hdog.json"
    })
    const s = await readCurve(pc, created.curve)
    expect(s).toMatchObject({ phase: "trading", dexVersion: "v4", configHash: expectedHash, feeBps: 100, creator: creator.wallet.account.address })
    expect(await pc.readContract({ address: created.token, abi: curveTokenAbi, functionName: "decimals" })).toBe(18)
    expect(await pc.readContract({ address: created.token, abi: curveTokenAbi, functionName: "totalSupply" })).toBe(HOOD_TOKEN_SUPPLY_RAW)
    expect(await tokenBalance(pc, created.token, created.curve)).toBe(HOOD_TOKEN_SUPPLY_RAW)
    const info = await pc.readContract({ address: net.addresses.feeSplitter, abi: feeSplitterAbi, functionName: "curves", args: [created.curve] })
    expect(info).toEqual([created.token, creator.wallet.account.address, zeroAddress, 0n])
    // CREATE2: the curve address is known before sending (the build stores the predicted curve).
    expect(
      predictCurveAddress({
        factory: net.addresses.factory,
        creator: creator.wallet.account.address,
        feeSplitter: net.addresses.feeSplitter,
        feeBps: 100,
        bondingCurveBytecode: net.artifacts.BondingCurve.bytecode,
        input: {
          name: "Hood Dog",
          symbol: "HDOG",
          uri: "https://example.com/hdog.json",
          quoteToken: zeroAddress,
          virtualQuoteRaw: ethTier.virtualQuoteRaw,
          thresholdRaw: ethTier.thresholdRaw,
          stakerAllocationBps: 500,
          dexVersion: "v4",
          salt: saltOf("hdog")
        }
      })
    ).toBe(created.curve)
    // The same build (same salt, same parameters) cannot launch twice.
    await expect(
      createCurve(creator, net.addresses.factory, {
        name: "Hood Dog",
        symbol: "HDOG",
        uri: "https://example.com/hdog.json",
        quoteToken: zeroAddress,
        virtualQuoteRaw: ethTier.virtualQuoteRaw,
        thresholdRaw: ethTier.thresholdRaw,
        stakerAllocationBps: 500,
        dexVersion: "v4",
        salt: saltOf("hdog")
      })
    ).rejects.toThrow()
  })

  it("is non-payable and refuses bad parameters with the field named", async () => {
    await fresh()
    const valid = {
      name: "Ok",
      symbol: "OK",
      uri: "",
      quoteToken: zeroAddress as Address,
      virtualQuote: ethTier.virtualQuoteRaw,
      graduationThreshold: ethTier.thresholdRaw,
      stakerAllocationBps: 50,
      dexVersion: 3,
      salt: saltOf("ok")
    }
    const attempt = async (p: typeof valid, value = 0n) => {
      try {
        await creator.publicClient.simulateContract({
          account: creator.wallet.account,
          address: net.addresses.factory,
          abi: curveFactoryAbi,
          functionName: "createCurve",
          args: [p],
          value
        } as never)
        return "ok"
      } catch (e) {
        return revertName(e) ?? "reverted"
      }
    }
    expect(await attempt(valid)).toBe("ok")
    expect(await attempt(valid, 1n)).toBe("reverted") // non-payable
    expect(await attempt({ ...valid, stakerAllocationBps: 49 })).toBe("InvalidCurveParams")
    expect(await attempt({ ...valid, stakerAllocationBps: 1001 })).toBe("InvalidCurveParams")
    expect(await attempt({ ...valid, dexVersion: 2 })).toBe("InvalidCurveParams")
    expect(await attempt({ ...valid, virtualQuote: 0n })).toBe("InvalidCurveParams")
    expect(await attempt({ ...valid, graduationThreshold: 0n })).toBe("InvalidCurveParams")
    expect(await attempt({ ...valid, name: "x".repeat(33) })).toBe("InvalidMetadata")
    expect(await attempt({ ...valid, name: "x".repeat(32) })).toBe("ok")
    expect(await attempt({ ...valid, symbol: "S".repeat(11) })).toBe("InvalidMetadata")
    expect(await attempt({ ...valid, symbol: "" })).toBe("InvalidMetadata")
    expect(await attempt({ ...valid, quoteToken: net.addresses.weth9 })).toBe("QuoteNotAllowed")
  })
})

describe("curve math on chain", () => {
  /** A buy amount: raw units, or thousandths of the curve's G (so crossings are common on both pairs). */
  type Amount = { readonly raw: bigint } | { readonly milliG: bigint }
  type Op = { readonly side: "buy"; readonly who: number; readonly amount: Amount } | { readonly side: "sell"; readonly who: number; readonly bps: bigint }
  const amountOf = (a: Amount, g: bigint): bigint => ("raw" in a ? a.raw : (g * a.milliG) / 1_000n)
  const buyAmount: fc.Arbitrary<Amount> = fc.oneof(
    fc.record({ raw: fc.bigInt(0n, 200n) }), // dust: zero_amount and 0-token fills
    fc.record({ milliG: fc.bigInt(1n, 1_300n) }), // up to 1.3 G: crossings
    fc.record({ raw: fc.bigInt(1n, 10n ** 12n) })
  )
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ side: fc.constant("buy" as const), who: fc.nat(3), amount: buyAmount }) },
    { weight: 2, arbitrary: fc.record({ side: fc.constant("sell" as const), who: fc.nat(3), bps: fc.bigInt(0n, 10_000n) }) }
  )

  it("agrees with CurveMath.ts to the wei over random buys and sells, crossings included", async () => {
    let crossings = 0
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(op, { minLength: 1, maxLength: 8 }), async (onEth, ops) => {
        await fresh()
        const m = onEth ? eth : usdg
        let state = initialState(m.params)
        const held = [0n, 0n, 0n, 0n]
        for (const o of ops) {
          const c = traders[o.who]!
          if (o.side === "buy") {
            const next = await buyAndCheck(c, m, state, amountOf(o.amount, m.params.thresholdRaw))
            held[o.who]! += next.virtualTokenRaw === state.virtualTokenRaw ? 0n : state.virtualTokenRaw - next.virtualTokenRaw
            if (next.complete && !state.complete) crossings += 1
            state = next
          } else {
            const amount = (held[o.who]! * o.bps) / 10_000n
            const next = await sellAndCheck(c, m, state, amount)
            if (next !== state) held[o.who]! -= amount
            state = next
          }
        }
        const s = await readCurve(publicClientOf(net), m.curve)
        expect(s.state).toEqual(state)
        expect(s.phase).toBe(state.complete ? "completed" : "trading")
        // Solvency: the recorded quote raised is held by the curve (fees went to the splitter).
        expect(await quoteBalance(m, m.curve)).toBe(state.realQuoteRaw)
      }),
      { numRuns: 100, endOnFailure: true }
    )
    expect(crossings).toBeGreaterThan(10)
  })

  it("refuses a buy or sell below minAmountOut, and an ETH buy whose value differs from amountIn", async () => {
    await fresh()
    const t = traders[0]!
    const q = quoteBuy(eth.params, initialState(eth.params), 10n ** 17n)
    if (q._tag === "Refused") throw new Error("unexpected refusal")
    expect(await simulateError(t, eth, "buy", 10n ** 17n, q.amountOut + 1n)).toBe("SlippageExceeded")
    expect(await simulateError(t, eth, "buy", 10n ** 17n, q.amountOut)).toBeUndefined()
    await expect(
      t.publicClient.simulateContract({ account: t.wallet.account, address: eth.curve, abi: bondingCurveAbi, functionName: "buy", args: [10n ** 17n, 0n], value: 1n })
    ).rejects.toSatisfy((e) => revertName(e) === "ValueMismatch")
    const state = await buyAndCheck(t, eth, initialState(eth.params), 10n ** 17n)
    const s = quoteSell(eth.params, state, q.amountOut)
    if (s._tag === "Refused") throw new Error("unexpected refusal")
    expect(await simulateError(t, eth, "sell", q.amountOut, s.amountOut + 1n)).toBe("SlippageExceeded")
    // Selling more than the curve sold is the curve's refusal, not the token's.
    expect(await simulateError(t, eth, "sell", q.amountOut + 1n)).toBe("ExceedsCurveSupply")
  })
})

describe("graduation", () => {
  it("caps the crossing buy at G with a refund, then refuses trades, claims and strangers' migrations", async () => {
    await fresh()
    const state = await graduate(eth, traders)
    expect(state.realQuoteRaw).toBe(eth.params.thresholdRaw)
    const t = traders[0]!
    expect(await simulateError(t, eth, "buy", 10n ** 16n)).toBe("CurveComplete")
    expect(await simulateError(t, eth, "sell", 1n)).toBe("CurveComplete")
    // Sent without an estimate, the refused buy is mined with status 0 (as on a real chain), value returned.
    const balance = await quoteBalance(eth, t.wallet.account.address)
    await expect(buy(t, eth.curve, { amountInRaw: 10n ** 16n, quoteToken: zeroAddress }, { gas: GAS })).rejects.toBeInstanceOf(HoodTxReverted)
    expect(balance - (await quoteBalance(eth, t.wallet.account.address))).toBeLessThan(10n ** 15n) // gas only
    await expect(
      t.publicClient.simulateContract({ account: t.wallet.account, address: eth.curve, abi: bondingCurveAbi, functionName: "claimRecovery", args: [1n] })
    ).rejects.toSatisfy((e) => revertName(e) === "NotInRecovery")
    for (const fn of ["migrate", "cancelMigration"] as const) {
      await expect(
        t.publicClient.simulateContract({ account: t.wallet.account, address: eth.curve, abi: bondingCurveAbi, functionName: fn })
      ).rejects.toSatisfy((e) => revertName(e) === "NotKeeper")
    }
    expect((await readCurve(publicClientOf(net), eth.curve)).phase).toBe("completed")
  })

  it("refuses migrate and cancel while the curve still trades", async () => {
    await fresh()
    for (const fn of ["migrate", "cancelMigration"] as const) {
      await expect(
        keeper.publicClient.simulateContract({ account: keeper.wallet.account, address: eth.curve, abi: bondingCurveAbi, functionName: fn })
      ).rejects.toSatisfy((e) => revertName(e) === "NotCompleted")
    }
  })

  for (const label of ["eth", "usdg"] as const) {
    it(`graduates a ${label} curve into a real Uniswap v3 pool at the curve's final price, and the pool trades`, async () => {
      await fresh()
      const m = label === "eth" ? eth : usdg
      const pc = publicClientOf(net)
      const final = await graduate(m, traders)
      const quoteAsset = m.quoteToken === zeroAddress ? net.addresses.weth9 : m.quoteToken
      const supplyBefore = await pc.readContract({ address: m.token, abi: curveTokenAbi, functionName: "totalSupply" })
      const migrated = await migrate(keeper, m.curve)
      const ev = migrated.event
      const pool = await pc.readContract({
        address: net.addresses.uniswapV3Factory,
        abi: uniswapV3FactoryAbi,
        functionName: "getPool",
        args: [m.token, quoteAsset, GRADUATED_POOL_FEE]
      })
      expect(ev.pool).toBe(pool)
      // The real v3 deployment: the periphery's hard-coded init code hash derives the same pool address.
      const [token0, token1] = m.token.toLowerCase() < quoteAsset.toLowerCase() ? [m.token, quoteAsset] : [quoteAsset, m.token]
      const salt = keccak256(encodeAbiParameters([{ type: "address" }, { type: "address" }, { type: "uint24" }], [token0, token1, GRADUATED_POOL_FEE]))
      expect(getContractAddress({ opcode: "CREATE2", from: net.addresses.uniswapV3Factory, salt, bytecodeHash: POOL_INIT_CODE_HASH })).toBe(pool)
      expect(keccak256(loadUniswapArtifact("UniswapV3Pool").bytecode)).toBe(POOL_INIT_CODE_HASH)

      const [sqrtPriceX96] = await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "slot0" })
      const [num, den] = token0 === m.token ? [final.virtualQuoteRaw, final.virtualTokenRaw] : [final.virtualTokenRaw, final.virtualQuoteRaw]
      expect(sqrtPriceX96).toBe(isqrt((num << 192n) / den))
      expect(await pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "liquidity" })).toBe(ev.liquidity)
      expect(ev.liquidity).toBeGreaterThan(0n)
      expect(ev.dexVersion).toBe(3)
      expect(ev.poolFee).toBe(GRADUATED_POOL_FEE)
      // The quote raised goes in (up to rounding dust), the tokens that price needs with it, the rest is burned.
      expect(ev.quoteAmount).toBeLessThanOrEqual(final.realQuoteRaw)
      expect(final.realQuoteRaw - ev.quoteAmount).toBeLessThan(10n)
      const stakerAllocation = HOOD_TOKEN_SUPPLY_RAW - m.params.tokenReserveRaw
      expect(ev.tokenAmount + ev.tokensBurned).toBe(final.virtualTokenRaw)
      expect(await pc.readContract({ address: m.token, abi: curveTokenAbi, functionName: "totalSupply" })).toBe(supplyBefore - ev.tokensBurned)
      expect(await tokenBalance(pc, m.token, m.curve)).toBe(0n)
      expect(await tokenBalance(pc, m.token, net.roles.stakerVault.address)).toBe(stakerAllocation)
      expect(await pc.readContract({ address: net.addresses.positionManager, abi: nonfungiblePositionManagerAbi, functionName: "ownerOf", args: [ev.positionId] })).toBe(
        net.addresses.feeSplitter
      )
      const s = await readCurve(pc, m.curve)
      expect(s).toMatchObject({ phase: "migrated", pool, lpTokenId: ev.positionId })
      expect(await simulateError(traders[0]!, m, "buy", 10n ** 6n)).toBe("CurveComplete")
      await expect(
        keeper.publicClient.simulateContract({ account: keeper.wallet.account, address: m.curve, abi: bondingCurveAbi, functionName: "migrate" })
      ).rejects.toSatisfy((e) => revertName(e) === "NotCompleted")

      // A swap on the pool through the real SwapRouter: quote in, tokens out.
      const swapper = traders[3]!
      const amountIn = m.params.thresholdRaw / 100n
      if (m.quoteToken !== zeroAddress) await approve(swapper, m.quoteToken, net.addresses.swapRouter, amountIn)
      const tokensBefore = await tokenBalance(pc, m.token, swapper.wallet.account.address)
      await swapExactIn(swapper, {
        router: net.addresses.swapRouter,
        tokenIn: quoteAsset,
        tokenOut: m.token,
        fee: GRADUATED_POOL_FEE,
        amountInRaw: amountIn,
        payWithEth: m.quoteToken === zeroAddress
      })
      const got = (await tokenBalance(pc, m.token, swapper.wallet.account.address)) - tokensBefore
      // Near the curve's final price: tokens ≈ amountIn·vTok/vQuote less the 0.3 % fee and the impact.
      const atCurvePrice = (amountIn * final.virtualTokenRaw) / final.virtualQuoteRaw
      expect(got).toBeGreaterThan((atCurvePrice * 95n) / 100n)
      expect(got).toBeLessThan(atCurvePrice)

      // The LP position's fees (0.3 % of that swap, paid in the quote) are collected into the splitter and split 30/70.
      const owedOf = () =>
        pc.readContract({ address: net.addresses.feeSplitter, abi: feeSplitterAbi, functionName: "streamerOwed", args: [m.curve, quoteAsset] })
      const owedBefore = await owedOf()
      const collect = await keeper.wallet.writeContract({ address: net.addresses.feeSplitter, abi: feeSplitterAbi, functionName: "collectLpFees", args: [m.curve] })
      const collected = parseEventLogs({
        abi: feeSplitterAbi,
        logs: (await pc.waitForTransactionReceipt({ hash: collect })).logs,
        eventName: "LpFeesCollected"
      })[0]!.args
      const quoteFee = collected.asset0 === quoteAsset ? collected.amount0 : collected.amount1
      const lpFee = (amountIn * BigInt(GRADUATED_POOL_FEE)) / 1_000_000n
      expect(lpFee - quoteFee).toBeGreaterThanOrEqual(0n)
      expect(lpFee - quoteFee).toBeLessThanOrEqual(2n)
      expect((await owedOf()) - owedBefore).toBe((quoteFee * BigInt(STREAMER_SHARE_BPS)) / 10_000n)
    })
  }

  it("graduates a dex-evm-v4 launch into the v3 deployment, the event saying v4", async () => {
    await fresh()
    const created = await createCurve(creator, net.addresses.factory, {
      name: "Four",
      symbol: "FOUR",
      quoteToken: zeroAddress,
      virtualQuoteRaw: ethTier.virtualQuoteRaw,
      thresholdRaw: ethTier.thresholdRaw,
      dexVersion: "v4",
      salt: saltOf("four")
    })
    const m: Market = { label: "eth", curve: created.curve, token: created.token, quoteToken: zeroAddress, params: eth.params }
    await buy(traders[0]!, m.curve, { amountInRaw: m.params.thresholdRaw * 2n, quoteToken: zeroAddress })
    const migrated = await migrate(keeper, m.curve)
    expect(migrated.event.dexVersion).toBe(4)
    expect(await publicClientOf(net).readContract({ address: net.addresses.uniswapV3Factory, abi: uniswapV3FactoryAbi, functionName: "getPool", args: [m.token, net.addresses.weth9, GRADUATED_POOL_FEE] })).toBe(migrated.event.pool)
  })
})

describe("recovery", () => {
  /** Someone initialises the pool at a wrong price first: migration reverts, the keeper cancels. */
  const sabotageAndCancel = async (m: Market) => {
    const quoteAsset = m.quoteToken === zeroAddress ? net.addresses.weth9 : m.quoteToken
    const [token0, token1] = m.token.toLowerCase() < quoteAsset.toLowerCase() ? [m.token, quoteAsset] : [quoteAsset, m.token]
    const griefer = traders[3]!
    const hash = await griefer.wallet.writeContract({
      address: net.addresses.positionManager,
      abi: nonfungiblePositionManagerAbi,
      functionName: "createAndInitializePoolIfNecessary",
      args: [token0, token1, GRADUATED_POOL_FEE, 2n ** 96n]
    })
    await griefer.publicClient.waitForTransactionReceipt({ hash })
    await expect(
      keeper.publicClient.simulateContract({ account: keeper.wallet.account, address: m.curve, abi: bondingCurveAbi, functionName: "migrate" })
    ).rejects.toSatisfy((e) => revertName(e) === "PoolPriceMismatch")
    return cancelMigration(keeper, m.curve)
  }

  it("cancel after a failed migration snapshots the reserve and the holders' supply; claims pay amount*reserve/eligible rounded down and burn", async () => {
    await fresh()
    const pc = publicClientOf(net)
    const final = await graduate(usdg, traders.slice(0, 3))
    const cancelled = await sabotageAndCancel(usdg)
    const eligible = usdg.params.tokenReserveRaw - final.virtualTokenRaw
    expect(cancelled.event).toMatchObject({ token: usdg.token, reserveSnapshotRaw: final.realQuoteRaw, eligibleSupplyRaw: eligible })
    // The curve's own tokens (unsold and the staker allocation) are burned: only holders' tokens remain.
    expect(await pc.readContract({ address: usdg.token, abi: curveTokenAbi, functionName: "totalSupply" })).toBe(eligible)
    const block = await readRecovery(pc, usdg.curve)
    expect(block).toMatchObject({
      curve: usdg.curve,
      quoteToken: net.addresses.usdg,
      reserveSnapshotRaw: usdg.params.thresholdRaw,
      eligibleSupplyRaw: eligible,
      surrenderedRaw: 0n,
      method: "claimRecovery(uint256)",
      requiresApprovalTo: usdg.curve
    })
    expect(await simulateError(traders[0]!, usdg, "buy", 10n ** 6n)).toBe("CurveComplete")
    for (const fn of ["migrate", "cancelMigration"] as const) {
      await expect(
        keeper.publicClient.simulateContract({ account: keeper.wallet.account, address: usdg.curve, abi: bondingCurveAbi, functionName: fn })
      ).rejects.toSatisfy((e) => revertName(e) === "NotCompleted")
    }

    // Order independence: A then B, and (from the same snapshot) B then A, pay the same.
    const [a, b] = [traders[0]!, traders[1]!]
    const holdings = await Promise.all([a, b].map((t) => tokenBalance(pc, usdg.token, t.wallet.account.address)))
    const claimAll = async (order: ReadonlyArray<number>) => {
      const paid: bigint[] = [0n, 0n]
      for (const i of order) {
        const t = [a, b][i]!
        const before = await quoteBalance(usdg, t.wallet.account.address)
        const claimed = await claimRecovery(t, usdg.curve, usdg.token, holdings[i]!)
        paid[i] = (await quoteBalance(usdg, t.wallet.account.address)) - before
        expect(claimed.event.payout).toBe(paid[i])
        expect(await tokenBalance(pc, usdg.token, t.wallet.account.address)).toBe(0n)
      }
      return paid
    }
    const beforeClaims = await snapshot(tc)
    const ab = await claimAll([0, 1])
    const surrendered = (await readRecovery(pc, usdg.curve))!.surrenderedRaw
    await revertTo(tc, beforeClaims)
    const ba = await claimAll([1, 0])
    expect(ba).toEqual(ab)
    expect(ab).toEqual(holdings.map((h) => recoveryPayoutRaw(h, usdg.params.thresholdRaw, eligible)))
    expect(ab).toEqual(holdings.map((h) => (h * final.realQuoteRaw) / eligible))
    expect(surrendered).toBe(holdings[0]! + holdings[1]!)
    expect(await pc.readContract({ address: usdg.token, abi: curveTokenAbi, functionName: "totalSupply" })).toBe(eligible - surrendered)

    // The third holder claims in two parts: each part rounds down on its own; the curve stays solvent.
    const c = traders[2]!
    const rest = await tokenBalance(pc, usdg.token, c.wallet.account.address)
    expect(holdings[0]! + holdings[1]! + rest).toBe(eligible)
    const half = rest / 2n
    const p1 = await claimRecovery(c, usdg.curve, usdg.token, half)
    const p2 = await claimRecovery(c, usdg.curve, usdg.token, rest - half)
    expect(p1.event.payout).toBe((half * final.realQuoteRaw) / eligible)
    expect(p2.event.payout).toBe(((rest - half) * final.realQuoteRaw) / eligible)
    expect(p2.event.surrenderedRaw).toBe(eligible)
    expect(await quoteBalance(usdg, usdg.curve)).toBeGreaterThanOrEqual(0n)
    // Nothing is left to claim: any further claim is refused whoever asks.
    await expect(
      c.publicClient.simulateContract({ account: c.wallet.account, address: usdg.curve, abi: bondingCurveAbi, functionName: "claimRecovery", args: [1n] })
    ).rejects.toSatisfy((e) => revertName(e) === "ExceedsEligibleSupply")
    await expect(
      c.publicClient.simulateContract({ account: c.wallet.account, address: usdg.curve, abi: bondingCurveAbi, functionName: "claimRecovery", args: [0n] })
    ).rejects.toSatisfy((e) => revertName(e) === "ZeroAmount")
  })

  it("pays ETH claims in ETH, never expires, and a claim needs the tokens approved to the curve", async () => {
    await fresh()
    const pc = publicClientOf(net)
    const final = await graduate(eth, traders.slice(0, 3))
    await sabotageAndCancel(eth)
    const a = traders[0]!
    const held = await tokenBalance(pc, eth.token, a.wallet.account.address)
    // Without approval the token refuses the pull.
    await approve(a, eth.token, eth.curve, 0n)
    await expect(
      a.publicClient.simulateContract({ account: a.wallet.account, address: eth.curve, abi: bondingCurveAbi, functionName: "claimRecovery", args: [held] })
    ).rejects.toSatisfy((e) => revertName(e) === "InsufficientAllowance")
    await tc.increaseTime({ seconds: 10 * 365 * 24 * 3600 })
    await tc.mine({ blocks: 1 })
    const eligible = eth.params.tokenReserveRaw - final.virtualTokenRaw
    const before = await quoteBalance(eth, a.wallet.account.address)
    const claimed = await claimRecovery(a, eth.curve, eth.token, held)
    const gas = claimed.receipt.gasUsed * claimed.receipt.effectiveGasPrice
    const approveGas = await pc
      .getTransactionReceipt({ hash: (await pc.getBlock({ blockNumber: claimed.receipt.blockNumber - 1n })).transactions[0]! })
      .then((r) => r.gasUsed * r.effectiveGasPrice)
    expect((await quoteBalance(eth, a.wallet.account.address)) - before + gas + approveGas).toBe((held * final.realQuoteRaw) / eligible)
  })
})

describe("fees", () => {
  it("sends every curve fee to the splitter, 30% owed to the creator; only the creator can claim it", async () => {
    await fresh()
    const pc = publicClientOf(net)
    let state = initialState(usdg.params)
    let fees = 0n
    let streamer = 0n
    for (const [i, amount] of [10n ** 9n, 3n * 10n ** 9n + 7n].entries()) {
      const q = quoteBuy(usdg.params, state, amount)
      if (q._tag === "Refused") throw new Error("refused")
      state = await buyAndCheck(traders[i]!, usdg, state, amount)
      fees += q.fee
      streamer += (q.fee * BigInt(STREAMER_SHARE_BPS)) / 10_000n
    }
    const owed = await pc.readContract({ address: net.addresses.feeSplitter, abi: feeSplitterAbi, functionName: "streamerOwed", args: [usdg.curve, net.addresses.usdg] })
    expect(owed).toBe(streamer)
    expect(await pc.readContract({ address: net.addresses.feeSplitter, abi: feeSplitterAbi, functionName: "platformOwed", args: [net.addresses.usdg] })).toBe(fees - streamer)
    await expect(
      traders[0]!.publicClient.simulateContract({
        account: traders[0]!.wallet.account,
        address: net.addresses.feeSplitter,
        abi: feeSplitterAbi,
        functionName: "claim",
        args: [usdg.curve, net.addresses.usdg]
      })
    ).rejects.toSatisfy((e) => revertName(e) === "NotRecipient")
    const before = await quoteBalance(usdg, creator.wallet.account.address)
    const claimed = await claimCreatorFee(creator, net.addresses.feeSplitter, usdg.curve, net.addresses.usdg)
    expect(claimed.event).toEqual({ curve: usdg.curve, token: usdg.token, recipient: creator.wallet.account.address, asset: net.addresses.usdg, amount: streamer })
    expect((await quoteBalance(usdg, creator.wallet.account.address)) - before).toBe(streamer)
    expect(getAddress(claimed.event.recipient)).toBe(creator.wallet.account.address)
  })
})
