/**
 * The Hood trade port's pure parts: each venue's call through the trade router (decoded back with
 * viem: the minimum out and the platform fee travel in the calldata, a buy's value carries the fee
 * on top), its gas limit; the failure code of a
 * revert as a node answers it (the curve's custom error, the router's `require` string, anything
 * else); the executed amount from a receipt's logs; and the per-wallet lock (one holder per wallet,
 * others wallets in parallel, the map emptied when the last holder leaves).
 */
import { Deferred, Effect, Fiber } from "effect"
import { type Address, decodeFunctionData, encodeAbiParameters, encodeErrorResult, encodeEventTopics, type Hex, type TransactionReceipt } from "viem"
import { describe, expect, it } from "vitest"
import { bondingCurveAbi, tradeRouterAbi, uniswapV3PoolAbi } from "../../chain/hood/abi.generated.js"
import { REQUEST_TAG_BYTES, requestTag } from "../../chain/hood/client/RequestTag.js"
import { executedOutOf, HOOD_TRADE_GAS, hoodFailureReasonOf, hoodTradeCall, isRevert, makeWalletLocks, revertDataOf } from "./HoodTradeChain.js"

const router = "0x1111111111111111111111111111111111111111" as Address
const curve = "0x3333333333333333333333333333333333333333" as Address
const mint = "0x4444444444444444444444444444444444444444" as Address
const wallet = "0x5555555555555555555555555555555555555555" as Address
const base = { wallet, mint, curve, poolFee: 3000, amountInRaw: 123n, minAmountOutRaw: 45n, platformFeeRaw: 7n, deadlineS: 1_000n }

describe("hoodTradeCall", () => {
  it("a request's tag follows the call's arguments: the same trade under two ids builds two calldatas, each still the call", () => {
    for (const venue of ["svc-curve", "hood-dex"] as const) {
      for (const side of ["buy", "sell"] as const) {
        const plain = hoodTradeCall(router, { ...base, venue, side })
        const one = hoodTradeCall(router, { ...base, venue, side, tag: requestTag("trade", "acc_1", "retry-1") })
        const again = hoodTradeCall(router, { ...base, venue, side, tag: requestTag("trade", "acc_1", "retry-1") })
        const other = hoodTradeCall(router, { ...base, venue, side, tag: requestTag("trade", "acc_1", "retry-2") })
        expect(one.data).toBe(again.data)
        expect(one.data).not.toBe(other.data)
        expect(one.data.startsWith(plain.data)).toBe(true)
        expect((one.data.length - plain.data.length) / 2).toBe(REQUEST_TAG_BYTES)
        expect({ ...one, data: plain.data }).toEqual(plain)
      }
    }
    expect(requestTag("trade", "acc_1", "a")).not.toBe(requestTag("trade", "acc_2", "a"))
  })

  it("curve buy and sell go to the trade router with the token, the minimum out and the platform fee; a buy's value is amountIn plus the fee", () => {
    const b = hoodTradeCall(router, { ...base, venue: "svc-curve", side: "buy" })
    expect(b).toMatchObject({ to: router, value: 130n, gas: HOOD_TRADE_GAS.curveBuy })
    expect(decodeFunctionData({ abi: tradeRouterAbi, data: b.data })).toMatchObject({ functionName: "buyOnCurve", args: [mint, 123n, 45n, 7n] })
    const s = hoodTradeCall(router, { ...base, venue: "svc-curve", side: "sell" })
    expect(s).toMatchObject({ to: router, value: 0n, gas: HOOD_TRADE_GAS.curveSell })
    expect(decodeFunctionData({ abi: tradeRouterAbi, data: s.data })).toMatchObject({ functionName: "sellOnCurve", args: [mint, 123n, 45n, 7n] })
  })

  it("pool buy and sell go to the trade router with the pool's fee tier, the minimum out, the platform fee and the deadline", () => {
    const b = hoodTradeCall(router, { ...base, venue: "hood-dex", side: "buy" })
    expect(b).toMatchObject({ to: router, value: 130n, gas: HOOD_TRADE_GAS.poolBuy })
    expect(decodeFunctionData({ abi: tradeRouterAbi, data: b.data })).toMatchObject({ functionName: "buyOnPool", args: [mint, 3000, 123n, 45n, 7n, 1_000n] })
    const s = hoodTradeCall(router, { ...base, venue: "hood-dex", side: "sell" })
    expect(s).toMatchObject({ to: router, value: 0n, gas: HOOD_TRADE_GAS.poolSell })
    expect(decodeFunctionData({ abi: tradeRouterAbi, data: s.data })).toMatchObject({ functionName: "sellOnPool", args: [mint, 3000, 123n, 45n, 7n, 1_000n] })
  })
})

/** A node's answer to a reverted call as viem nests it (Hardhat puts the revert data in `cause.data.data`). */
const nodeError = (data: Hex) => Object.assign(new Error("Execution reverted"), { cause: Object.assign(new Error("RPC Request failed."), { data: { message: "VM Exception", data } }) })

describe("the failure code of a revert", () => {
  it("the curve's SlippageExceeded and the router's 'Too little received' and the trade router's FeeExceedsProceeds are slippage_exceeded; other reverts reverted", () => {
    const slippage = encodeErrorResult({ abi: bondingCurveAbi, errorName: "SlippageExceeded", args: [1n, 2n] })
    expect(revertDataOf(nodeError(slippage))).toBe(slippage)
    expect(hoodFailureReasonOf(nodeError(slippage))).toBe("slippage_exceeded")
    const tooLittle = encodeErrorResult({ abi: [{ type: "error", name: "Error", inputs: [{ name: "m", type: "string" }] }], errorName: "Error", args: ["Too little received"] })
    expect(hoodFailureReasonOf(nodeError(tooLittle))).toBe("slippage_exceeded")
    const feeAboveProceeds = encodeErrorResult({ abi: tradeRouterAbi, errorName: "FeeExceedsProceeds", args: [5n, 7n] })
    expect(hoodFailureReasonOf(nodeError(feeAboveProceeds))).toBe("slippage_exceeded")
    expect(hoodFailureReasonOf(new Error("execution reverted: FeeExceedsProceeds(5, 7)"))).toBe("slippage_exceeded")
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
  const log = (address: Address, abi: typeof bondingCurveAbi | typeof uniswapV3PoolAbi | typeof tradeRouterAbi, eventName: string, args: Record<string, unknown>, data: Hex) => ({
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
    expect(executedOutOf(receipt, router, "svc-curve", mint, wallet)).toBe(777n)
    expect(executedOutOf(receipt, router, "svc-curve", mint, router)).toBeUndefined()
    const swapData = encodeAbiParameters([{ type: "int256" }, { type: "int256" }, { type: "uint160" }, { type: "uint128" }, { type: "int24" }], [-999n, 123n, 1n, 1n, 0])
    const swap = { logs: [log(curve, uniswapV3PoolAbi, "Swap", { sender: router, recipient: wallet }, swapData)] } as unknown as TransactionReceipt
    expect(executedOutOf(swap, router, "hood-dex", mint, wallet)).toBe(999n)
  })

  it("a routed trade: the trade router's RoutedTrade for the wallet and the token decides, before the venue's own log", () => {
    const routedData = encodeAbiParameters(
      [{ type: "bool" }, { type: "bool" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }],
      [false, false, 10n, 555n, 6n, 0n]
    )
    // The curve's Trade names the router as its trader; the router's event names the wallet.
    const tradeData = encodeAbiParameters(
      [{ type: "bool" }, ...Array.from({ length: 8 }, () => ({ type: "uint256" })), { type: "bool" }],
      [false, 10n, 555n, 1n, 0n, 0n, 5n, 5n, 5n, false]
    )
    const receipt = {
      logs: [
        log(curve, bondingCurveAbi, "Trade", { token: mint, trader: router }, tradeData),
        log(router, tradeRouterAbi, "RoutedTrade", { trader: wallet, token: mint }, routedData)
      ]
    } as unknown as TransactionReceipt
    for (const venue of ["svc-curve", "hood-dex"]) expect(executedOutOf(receipt, router, venue, mint, wallet)).toBe(555n)
    expect(executedOutOf(receipt, router, "svc-curve", curve, wallet)).toBeUndefined()
  })

  it("a RoutedTrade-shaped log from another emitter is not read: only the configured trade router's counts", () => {
    const routedData = (out: bigint) =>
      encodeAbiParameters([{ type: "bool" }, { type: "bool" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }], [true, true, 10n, out, 6n, 0n])
    const foreign = "0x6666666666666666666666666666666666666666" as Address
    const forged = log(foreign, tradeRouterAbi, "RoutedTrade", { trader: wallet, token: mint }, routedData(10n ** 30n))
    // Alone, on the curve (no Trade by the wallet): nothing executed is read.
    expect(executedOutOf({ logs: [forged] } as unknown as TransactionReceipt, router, "svc-curve", mint, wallet)).toBeUndefined()
    // Before the router's own: the router's is read.
    const receipt = { logs: [forged, log(router, tradeRouterAbi, "RoutedTrade", { trader: wallet, token: mint }, routedData(42n))] } as unknown as TransactionReceipt
    for (const venue of ["svc-curve", "hood-dex"]) expect(executedOutOf(receipt, router, venue, mint, wallet)).toBe(42n)
  })

  it("the router the transaction called counts after a restart configured another: its RoutedTrade is read, not left pending", () => {
    const routedData = encodeAbiParameters([{ type: "bool" }, { type: "bool" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }, { type: "uint256" }], [true, false, 10n, 321n, 6n, 0n])
    const earlier = "0x7777777777777777777777777777777777777777" as Address
    const routedBy = log(earlier, tradeRouterAbi, "RoutedTrade", { trader: wallet, token: mint }, routedData)
    expect(executedOutOf({ to: earlier, logs: [routedBy] } as unknown as TransactionReceipt, router, "svc-curve", mint, wallet)).toBe(321n)
    // Not called by this transaction: not read.
    expect(executedOutOf({ to: router, logs: [routedBy] } as unknown as TransactionReceipt, router, "svc-curve", mint, wallet)).toBeUndefined()
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
