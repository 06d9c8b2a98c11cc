/**
 * The Hood trade port's pure parts: each venue's call (decoded back with viem: the minimum out
 * travels in the calldata, a pool sell unwraps to the wallet), its gas limit; the failure code of a
 * revert as a node answers it (the curve's custom error, the router's `require` string, anything
 * else); the executed amount from a receipt's logs; and the per-wallet lock (one holder per wallet,
 * others wallets in parallel, the map emptied when the last holder leaves).
 */
import { Deferred, Effect, Fiber } from "effect"
import { type Address, decodeFunctionData, encodeAbiParameters, encodeErrorResult, encodeEventTopics, type Hex, type TransactionReceipt } from "viem"
import { describe, expect, it } from "vitest"
import { bondingCurveAbi, swapRouterAbi, uniswapV3PoolAbi } from "../../chain/hood/abi.generated.js"
import { REQUEST_TAG_BYTES, requestTag } from "../../chain/hood/client/RequestTag.js"
import { executedOutOf, HOOD_TRADE_GAS, hoodFailureReasonOf, hoodTradeCall, isRevert, makeWalletLocks, revertDataOf } from "./HoodTradeChain.js"

const router = "0x1111111111111111111111111111111111111111" as Address
const weth = "0x2222222222222222222222222222222222222222" as Address
const curve = "0x3333333333333333333333333333333333333333" as Address
const mint = "0x4444444444444444444444444444444444444444" as Address
const wallet = "0x5555555555555555555555555555555555555555" as Address
const base = { wallet, mint, curve, poolFee: 3000, amountInRaw: 123n, minAmountOutRaw: 45n, deadlineS: 1_000n }

describe("hoodTradeCall", () => {
  it("a request's tag follows the call's arguments: the same trade under two ids builds two calldatas, each still the call", () => {
    for (const venue of ["svc-curve", "hood-dex"] as const) {
      for (const side of ["buy", "sell"] as const) {
        const plain = hoodTradeCall(router, weth, { ...base, venue, side })
        const one = hoodTradeCall(router, weth, { ...base, venue, side, tag: requestTag("trade", "acc_1", "retry-1") })
        const again = hoodTradeCall(router, weth, { ...base, venue, side, tag: requestTag("trade", "acc_1", "retry-1") })
        const other = hoodTradeCall(router, weth, { ...base, venue, side, tag: requestTag("trade", "acc_1", "retry-2") })
        expect(one.data).toBe(again.data)
        expect(one.data).not.toBe(other.data)
        expect(one.data.startsWith(plain.data)).toBe(true)
        expect((one.data.length - plain.data.length) / 2).toBe(REQUEST_TAG_BYTES)
        expect({ ...one, data: plain.data }).toEqual(plain)
      }
    }
    expect(requestTag("trade", "acc_1", "a")).not.toBe(requestTag("trade", "acc_2", "a"))
  })

  it("curve buy and sell carry the minimum out; a buy sends amountIn as value", () => {
    const b = hoodTradeCall(router, weth, { ...base, venue: "svc-curve", side: "buy" })
    expect(b).toMatchObject({ to: curve, value: 123n, gas: HOOD_TRADE_GAS.curveBuy })
    expect(decodeFunctionData({ abi: bondingCurveAbi, data: b.data })).toMatchObject({ functionName: "buy", args: [123n, 45n] })
    const s = hoodTradeCall(router, weth, { ...base, venue: "svc-curve", side: "sell" })
    expect(s).toMatchObject({ to: curve, value: 0n, gas: HOOD_TRADE_GAS.curveSell })
    expect(decodeFunctionData({ abi: bondingCurveAbi, data: s.data })).toMatchObject({ functionName: "sell", args: [123n, 45n] })
  })

  it("a pool buy is exactInputSingle paid in ETH to the wallet; a pool sell swaps to the router and unwraps to the wallet", () => {
    const b = hoodTradeCall(router, weth, { ...base, venue: "hood-dex", side: "buy" })
    expect(b).toMatchObject({ to: router, value: 123n, gas: HOOD_TRADE_GAS.poolBuy })
    const buy = decodeFunctionData({ abi: swapRouterAbi, data: b.data })
    expect(buy.functionName).toBe("exactInputSingle")
    expect(buy.args?.[0]).toMatchObject({ tokenIn: weth, tokenOut: mint, fee: 3000, recipient: wallet, amountIn: 123n, amountOutMinimum: 45n, deadline: 1_000n })
    const s = hoodTradeCall(router, weth, { ...base, venue: "hood-dex", side: "sell" })
    expect(s).toMatchObject({ to: router, value: 0n, gas: HOOD_TRADE_GAS.poolSell })
    const multi = decodeFunctionData({ abi: swapRouterAbi, data: s.data })
    expect(multi.functionName).toBe("multicall")
    const [swap, unwrap] = (multi.args?.[0] as ReadonlyArray<Hex>).map((d) => decodeFunctionData({ abi: swapRouterAbi, data: d }))
    expect(swap?.functionName).toBe("exactInputSingle")
    expect(swap?.args?.[0]).toMatchObject({ tokenIn: mint, tokenOut: weth, recipient: router, amountOutMinimum: 45n })
    expect(unwrap).toMatchObject({ functionName: "unwrapWETH9", args: [45n, wallet] })
  })
})

/** A node's answer to a reverted call as viem nests it (Hardhat puts the revert data in `cause.data.data`). */
const nodeError = (data: Hex) => Object.assign(new Error("Execution reverted"), { cause: Object.assign(new Error("RPC Request failed."), { data: { message: "VM Exception", data } }) })

describe("the failure code of a revert", () => {
  it("the curve's SlippageExceeded and the router's 'Too little received' are slippage_exceeded; other reverts reverted", () => {
    const slippage = encodeErrorResult({ abi: bondingCurveAbi, errorName: "SlippageExceeded", args: [1n, 2n] })
    expect(revertDataOf(nodeError(slippage))).toBe(slippage)
    expect(hoodFailureReasonOf(nodeError(slippage))).toBe("slippage_exceeded")
    const tooLittle = encodeErrorResult({ abi: [{ type: "error", name: "Error", inputs: [{ name: "m", type: "string" }] }], errorName: "Error", args: ["Too little received"] })
    expect(hoodFailureReasonOf(nodeError(tooLittle))).toBe("slippage_exceeded")
    const other = encodeErrorResult({ abi: bondingCurveAbi, errorName: "CurveComplete" })
    expect(hoodFailureReasonOf(nodeError(other))).toBe("reverted")
    expect(isRevert(nodeError(other))).toBe(true)
  })

  it("a node that could not be asked is not a revert", () => {
    expect(isRevert(new Error("fetch failed: ECONNREFUSED"))).toBe(false)
    expect(revertDataOf(new Error("timeout"))).toBeUndefined()
  })
})

describe("executedOutOf", () => {
  const log = (address: Address, abi: typeof bondingCurveAbi | typeof uniswapV3PoolAbi, eventName: string, args: Record<string, unknown>, data: Hex) => ({
    address,
    topics: encodeEventTopics({ abi, eventName, args } as never),
    data,
    blockNumber: 1n,
    transactionHash: `0x${"ab".repeat(32)}`,
    logIndex: 0,
    blockHash: `0x${"cd".repeat(32)}`,
    transactionIndex: 0,
    removed: false
  })

  it("reads the curve's Trade by the wallet for the token, and the pool's negative delta", () => {
    const tradeData = encodeAbiParameters(
      [{ type: "bool" }, ...Array.from({ length: 8 }, () => ({ type: "uint256" })), { type: "bool" }],
      [true, 10n, 777n, 1n, 0n, 10n, 5n, 5n, 5n, false]
    )
    const receipt = { logs: [log(curve, bondingCurveAbi, "Trade", { token: mint, trader: wallet }, tradeData)] } as unknown as TransactionReceipt
    expect(executedOutOf(receipt, "svc-curve", mint, wallet)).toBe(777n)
    expect(executedOutOf(receipt, "svc-curve", mint, router)).toBeUndefined()
    const swapData = encodeAbiParameters([{ type: "int256" }, { type: "int256" }, { type: "uint160" }, { type: "uint128" }, { type: "int24" }], [-999n, 123n, 1n, 1n, 0])
    const swap = { logs: [log(curve, uniswapV3PoolAbi, "Swap", { sender: router, recipient: wallet }, swapData)] } as unknown as TransactionReceipt
    expect(executedOutOf(swap, "hood-dex", mint, wallet)).toBe(999n)
  })
})

describe("makeWalletLocks", () => {
  it("one holder per wallet at a time, other wallets in parallel; the map empties when the last holder leaves", async () => {
    const locks = makeWalletLocks()
    await Effect.runPromise(
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        const entered: Array<string> = []
        const hold = (who: string, w: string) => locks.withWallet(w, Effect.zipRight(Effect.sync(() => entered.push(who)), Deferred.await(release)))
        const a = yield* Effect.fork(hold("a", "0xAA"))
        yield* Effect.yieldNow()
        const b = yield* Effect.fork(hold("b", "0xaa"))
        const c = yield* Effect.fork(hold("c", "0xbb"))
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
        // b waits behind a (one wallet, either case); c holds its own wallet's lock.
        expect(entered.sort()).toEqual(["a", "c"])
        expect(locks.size()).toBe(2)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(a)
        yield* Fiber.join(b)
        yield* Fiber.join(c)
        expect(entered.sort()).toEqual(["a", "b", "c"])
        expect(locks.size()).toBe(0)
      })
    )
  })
})
