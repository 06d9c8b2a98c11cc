/**
 * The engine's Hood trade router (`src/chain/hood/contracts/TradeRouter.sol`, issue 28) called
 * straight from a dev account on the Hood localnet (Hardhat/EDR), with no engine in between:
 * - deployed beside the others, it pays the fee splitter's treasury and swaps through the
 *   localnet's SwapRouter and WETH;
 * - a curve buy takes `amountIn + fee`: the treasury gets exactly the fee, the trader the quote's
 *   tokens (forwarded; the router keeps none) and `RoutedTrade` says so; a sell pays the fee from
 *   the proceeds and the rest to the trader;
 * - refusals move nothing: ETH sent outside a trade (`UnexpectedEth`), a token the factory did not
 *   launch (`NotACurveToken`), a value that is not `amountIn + fee` (`ValueMismatch`), a fee above a
 *   sell's proceeds (`FeeExceedsProceeds`), and the curve's `SlippageExceeded` bubbling up with
 *   the fee not paid;
 * - a token whose curve is USDG-quoted is refused on the curve entry points (`NotEthQuoted`);
 * - the start-up check of a configured router (`TradeRouterCheck.ts`): the deployed router passes;
 *   an address with no code, a contract that is not a router, and a router checked against
 *   another factory or SwapRouter are refused with an error naming the variable.
 */
import { type Address, decodeErrorResult, getAddress, parseEventLogs, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { feeSplitterAbi, tradeRouterAbi } from "../../src/chain/hood/abi.generated.js"
import { approve, createCurve, type HoodClients, readCurve, revertName, saltOf, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { revertDataOf } from "../../src/chain/hood/client/HoodSender.js"
import { clientsFor, publicClientOf, type StartedHoodLocalnet, startHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import { checkTradeRouter } from "../../src/chain/hood/TradeRouterCheck.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { quoteVenue } from "../../src/services/trade/VenueQuote.js"
import { Effect, Exit } from "effect"

const ETH = 10n ** 18n
let net: StartedHoodLocalnet
let trader: HoodClients
let router: Address
let curve: { token: Address; curve: Address }

const pc = () => publicClientOf(net)
const eth = (a: Address) => pc().getBalance({ address: a })
const me = () => getAddress(trader.wallet.account!.address)

const quote = async (side: "buy" | "sell", amount: bigint) => {
  const s = await readCurve(pc(), curve.curve)
  const q = quoteVenue({ _tag: "Curve", params: s.params, state: s.state, creatorShareBps: 3000n }, side, amount)
  if (q._tag !== "Filled") throw new Error(`no fill: ${q._tag}`)
  return q
}

/** A call's revert, from a simulation (nothing sent): the custom error's name. */
const refusedWith = async (call: () => Promise<unknown>) => {
  try {
    await call()
  } catch (e) {
    return revertName(e) ?? String(e)
  }
  return undefined
}

/** Every balance a routed trade could move. */
const balances = async () => ({
  trader: await eth(me()),
  treasury: await eth(net.roles.treasury.address),
  routerEth: await eth(router),
  traderTokens: await tokenBalance(pc(), curve.token, me()),
  routerTokens: await tokenBalance(pc(), curve.token, router)
})

beforeAll(async () => {
  net = await startHoodLocalnet()
  trader = clientsFor(net, net.roles.traders[1]!)
  router = getAddress(net.addresses.tradeRouter!)
  const label = `router-${Date.now()}`
  curve = await createCurve(trader, net.addresses.factory, { name: label, symbol: "TR", quoteToken: zeroAddress, virtualQuoteRaw: 5n * ETH, thresholdRaw: 50n * ETH, dexVersion: "v3", salt: saltOf(label) })
}, 120_000)

afterAll(async () => {
  await net?.close()
})

describe("TradeRouter", () => {
  it("is deployed with the factory, the SwapRouter, its WETH and the fee splitter's treasury", async () => {
    const read = <F extends "factory" | "swapRouter" | "weth" | "treasury">(functionName: F) => pc().readContract({ address: router, abi: tradeRouterAbi, functionName })
    expect(getAddress(await read("factory"))).toBe(getAddress(net.addresses.factory))
    expect(getAddress(await read("swapRouter"))).toBe(getAddress(net.addresses.swapRouter!))
    expect(getAddress(await read("weth"))).toBe(getAddress(net.addresses.weth9))
    const splitterTreasury = await pc().readContract({ address: net.addresses.feeSplitter, abi: feeSplitterAbi, functionName: "treasury" })
    expect(getAddress(await read("treasury"))).toBe(getAddress(splitterTreasury))
    expect(getAddress(await read("treasury"))).toBe(getAddress(net.roles.treasury.address))
  })

  it("a curve buy and sell: the treasury gets exactly the fee, the trader the quote's figures, the router keeps nothing", async () => {
    const amountIn = ETH / 3n
    const fee = 12_345n
    const qb = await quote("buy", amountIn)
    const before = await balances()
    const hash = await trader.wallet.writeContract({ address: router, abi: tradeRouterAbi, functionName: "buyOnCurve", args: [curve.token, amountIn, qb.amountOut, fee], value: amountIn + fee, chain: net.chain, account: trader.wallet.account! })
    const receipt = await pc().waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe("success")
    const routed = parseEventLogs({ abi: tradeRouterAbi, logs: receipt.logs, eventName: "RoutedTrade" })[0]!.args
    expect(routed).toMatchObject({ trader: me(), token: curve.token, isBuy: true, onPool: false, amountIn, amountOut: qb.amountOut, platformFee: fee, refund: 0n })
    const afterBuy = await balances()
    const gasBuy = receipt.gasUsed * receipt.effectiveGasPrice
    expect(afterBuy.treasury - before.treasury).toBe(fee)
    expect(before.trader - afterBuy.trader).toBe(amountIn + fee + gasBuy)
    expect(afterBuy.traderTokens - before.traderTokens).toBe(qb.amountOut)
    expect([afterBuy.routerEth, afterBuy.routerTokens]).toEqual([0n, 0n])

    const tokensIn = qb.amountOut / 2n
    const qs = await quote("sell", tokensIn)
    await approve(trader, curve.token, router, tokensIn)
    const beforeSell = await balances()
    const sellFee = 777n
    const sold = await trader.wallet.writeContract({ address: router, abi: tradeRouterAbi, functionName: "sellOnCurve", args: [curve.token, tokensIn, qs.amountOut, sellFee], chain: net.chain, account: trader.wallet.account! })
    const r = await pc().waitForTransactionReceipt({ hash: sold })
    expect(r.status).toBe("success")
    const afterSell = await balances()
    expect(afterSell.treasury - beforeSell.treasury).toBe(sellFee)
    expect(afterSell.trader - beforeSell.trader).toBe(qs.amountOut - sellFee - r.gasUsed * r.effectiveGasPrice)
    expect(beforeSell.traderTokens - afterSell.traderTokens).toBe(tokensIn)
    expect([afterSell.routerEth, afterSell.routerTokens]).toEqual([0n, 0n])
  }, 60_000)

  it("refusals move nothing, not even the fee: stray ETH, a token not launched here, a wrong value, a fee above the proceeds, the curve's slippage", async () => {
    const account = trader.wallet.account!
    const chain = net.chain
    const before = await balances()
    const simulate = (functionName: "buyOnCurve" | "sellOnCurve", args: readonly [Address, bigint, bigint, bigint], value?: bigint) =>
      refusedWith(() => pc().simulateContract({ address: router, abi: tradeRouterAbi, functionName, args, account, chain, ...(value === undefined ? {} : { value }) } as never))
    const stray = await pc().call({ account, to: router, value: 1n }).then(() => undefined, (e: unknown) => revertDataOf(e))
    expect(stray !== undefined && decodeErrorResult({ abi: tradeRouterAbi, data: stray }).errorName).toBe("UnexpectedEth")
    expect(await simulate("buyOnCurve", [net.addresses.weth9, ETH, 0n, 1n], ETH + 1n)).toBe("NotACurveToken")
    expect(await simulate("buyOnCurve", [curve.token, ETH, 0n, 5n], ETH)).toBe("ValueMismatch")
    const held = await tokenBalance(pc(), curve.token, me())
    const qs = await quote("sell", held / 10n)
    await approve(trader, curve.token, router, held)
    const afterApprove = await balances()
    expect(await simulate("sellOnCurve", [curve.token, held / 10n, 0n, qs.amountOut + 1n])).toBe("FeeExceedsProceeds")
    const qb = await quote("buy", ETH)
    expect(await simulate("buyOnCurve", [curve.token, ETH, qb.amountOut + 1n, 9n], ETH + 9n)).toBe("SlippageExceeded")
    // Mined too: a reverted buy pays its gas and nothing else (the fee came back with the revert).
    const hash = await trader.wallet.writeContract({ address: router, abi: tradeRouterAbi, functionName: "buyOnCurve", args: [curve.token, ETH, qb.amountOut + 1n, 9n], value: ETH + 9n, gas: 400_000n, chain, account })
    const r = await pc().waitForTransactionReceipt({ hash })
    expect(r.status).toBe("reverted")
    const after = await balances()
    expect(after.treasury).toBe(before.treasury)
    expect(afterApprove.trader - after.trader).toBe(r.gasUsed * r.effectiveGasPrice)
    expect(after.traderTokens).toBe(before.traderTokens)
    expect([after.routerEth, after.routerTokens]).toEqual([0n, 0n])
  }, 60_000)

  it("the start-up check passes the deployed router and refuses a no-code address, a non-router and another factory's or SwapRouter's router", async () => {
    const expected = { tradeRouter: router, factory: getAddress(net.addresses.factory), swapRouter: getAddress(net.addresses.swapRouter!) }
    const check = (e: typeof expected) => Effect.runPromiseExit(checkTradeRouter(pc(), e))
    expect(Exit.isSuccess(await check(expected))).toBe(true)
    const refusal = async (e: typeof expected) => {
      const exit = await check(e)
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`not refused: ${JSON.stringify(exit)}`)
      expect(exit.cause.error.reason).toBe("mismatch")
      expect(exit.cause.error.message).toContain("HOOD_TRADE_ROUTER_ADDRESS")
      return exit.cause.error.message
    }
    expect(await refusal({ ...expected, tradeRouter: getAddress("0x000000000000000000000000000000000000dEaD") })).toContain("no contract code")
    // WETH has code but no factory(): not a router.
    expect(await refusal({ ...expected, tradeRouter: getAddress(net.addresses.weth9) })).toContain("not a TradeRouter")
    // The router checked against another factory (the fee splitter stands in): it routes for the configured one only.
    expect(await refusal({ ...expected, factory: getAddress(net.addresses.feeSplitter) })).toContain("HOOD_FACTORY_ADDRESS")
    expect(await refusal({ ...expected, swapRouter: getAddress(net.addresses.weth9) })).toContain("HOOD_SWAP_ROUTER_ADDRESS")
  }, 60_000)

  it("a USDG-quoted curve's token is refused on the curve entry points (NotEthQuoted)", async () => {
    const tier = findEconomics("hood", "usdg")!.tiers[0]!
    const label = `router-usdg-${Date.now()}`
    const usdg = await createCurve(trader, net.addresses.factory, { name: label, symbol: "TRU", quoteToken: net.addresses.usdg, virtualQuoteRaw: tier.virtualQuoteRaw, thresholdRaw: tier.thresholdRaw, dexVersion: "v3", salt: saltOf(label) })
    const account = trader.wallet.account!
    const simulate = (functionName: "buyOnCurve" | "sellOnCurve", value?: bigint) =>
      refusedWith(() => pc().simulateContract({ address: router, abi: tradeRouterAbi, functionName, args: [usdg.token, 10n ** 6n, 0n, 1n], account, chain: net.chain, ...(value === undefined ? {} : { value }) } as never))
    expect(await simulate("buyOnCurve", 10n ** 6n + 1n)).toBe("NotEthQuoted")
    expect(await simulate("sellOnCurve")).toBe("NotEthQuoted")
  }, 60_000)
})
