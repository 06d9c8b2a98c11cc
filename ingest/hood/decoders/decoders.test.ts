/**
 * The Hood log decoders on logs built from the contracts' own ABI (viem's encoders): each event
 * becomes its ChainEvent with `hood:<tx>:<logIndex>` ids and `hoodPosition` positions; anything
 * not ours (other selector, broken data, wrong emitter, unknown dexVersion) is "not mine", never
 * a throw. Also pins the bus codecs on the variants and fields the Hood ingester adds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Option } from "effect"
import * as fc from "fast-check"
import { type AbiEvent, type Address, encodeAbiParameters, encodeEventTopics, getAddress, type Hex, zeroAddress } from "viem"
import { bondingCurveAbi, curveFactoryAbi, feeSplitterAbi, uniswapV3PoolAbi } from "../../../src/chain/hood/abi.generated.js"
import { type ChainEvent, CurveMigrated, decodeChainEventStrict, encodeChainEventStrict, hoodPosition, RecoverySnapshot } from "../../ChainEvent.js"
import { decodeFast, encodeFast } from "../../ChainEventCodec.js"
import { eventItem } from "./decodeLog.js"
import { decodeHoodLog, type HoodContracts, type HoodLog, hoodTopics } from "./index.js"
import * as PoolSwap from "./PoolSwap.js"

const FACTORY = getAddress("0x0165878A594ca255338adfa4d48449f69242Eb8F")
const SPLITTER = getAddress("0x5FC8d32690cc91D4c39d9d3abcBD16989F875707")
const CURVE = getAddress("0x1111111111111111111111111111111111111111")
const TOKEN = getAddress("0x2222222222222222222222222222222222222222")
const TRADER = getAddress("0x3333333333333333333333333333333333333333")
const POOL = getAddress("0x4444444444444444444444444444444444444444")
const contracts: HoodContracts = { factory: FACTORY, feeSplitter: SPLITTER }
const TX: Hex = `0x${"ab".repeat(32)}`
const ctx = { txHash: TX, blockNumber: 123n, logIndex: 7, timestampMs: 1_700_000_000_000 }

const logOf = (abi: ReadonlyArray<{ readonly type: string; readonly name?: string }>, name: string, address: Address, args: Record<string, unknown>): HoodLog => {
  const item = eventItem(abi, name)
  const topics = encodeEventTopics({ abi: [item], eventName: name, args } as never) as Array<Hex>
  const nonIndexed = item.inputs.filter((i) => !i.indexed)
  const data = encodeAbiParameters(nonIndexed, nonIndexed.map((i) => args[i.name!]) as never)
  return { address, topics, data }
}

const decode = (log: HoodLog) => Option.getOrThrow(decodeHoodLog(log, ctx, contracts))

const created = (overrides: Record<string, unknown> = {}) =>
  logOf(curveFactoryAbi, "CurveCreated", FACTORY, {
    curve: CURVE,
    token: TOKEN,
    creator: TRADER,
    quoteToken: zeroAddress,
    virtualQuote: 10n ** 18n,
    graduationThreshold: 4n * 10n ** 18n,
    stakerAllocation: 5n * 10n ** 24n,
    dexVersion: 3,
    configHash: `0x${"cd".repeat(32)}`,
    tokenSupply: 10n ** 27n,
    tokenReserve: 995n * 10n ** 24n,
    stakerAllocationBps: 50,
    feeBps: 100,
    quoteDecimals: 18,
    name: "Hood Token",
    symbol: "HOOD",
    uri: "https://example.com/x.png",
    ...overrides
  })

const trade = (isBuy: boolean, refund: bigint) =>
  logOf(bondingCurveAbi, "Trade", CURVE, {
    token: TOKEN,
    trader: TRADER,
    isBuy,
    amountIn: 1000n,
    amountOut: 900n,
    fee: 10n,
    refund,
    quoteConsumed: isBuy ? 1000n - refund : 0n,
    virtualQuoteReserve: 5000n,
    virtualTokenReserve: 6000n,
    realQuote: 700n,
    crossesGraduation: refund > 0n
  })

describe("Hood decoders", () => {
  it("CurveCreated from the factory: identity, params, v3/v4, id and position", () => {
    const { event, curve } = decode(created())
    expect(curve).toBeNull()
    expect(event).toMatchObject({
      _tag: "CurveCreated",
      id: `hood:${TX}:7`,
      position: hoodPosition(123n, 7),
      chain: "hood",
      mint: TOKEN,
      signature: TX,
      timestampMs: ctx.timestampMs,
      curve: CURVE,
      creator: TRADER,
      quoteMint: zeroAddress,
      quoteDecimals: 18,
      decimals: 18,
      virtualQuoteRaw: 10n ** 18n,
      thresholdRaw: 4n * 10n ** 18n,
      supplyRaw: 10n ** 27n,
      tokenReserveRaw: 995n * 10n ** 24n,
      stakerAllocationBps: 50,
      feeBps: 100,
      creatorFeeBps: 0,
      mode: "open",
      dexVersion: "v3",
      name: "Hood Token",
      symbol: "HOOD"
    })
    expect(decode(created({ dexVersion: 4 })).event).toMatchObject({ dexVersion: "v4" })
  })

  it("Trade: a capped crossing buy carries refund and quoteConsumed; a sell follows the ChainEvent convention", () => {
    const buy = decode(trade(true, 300n))
    expect(buy.curve).toBe(CURVE)
    expect(buy.event).toMatchObject({
      _tag: "Trade",
      venue: "curve",
      side: "buy",
      trader: TRADER,
      amountInRaw: 1000n,
      amountOutRaw: 900n,
      feeRaw: 10n,
      refundRaw: 300n,
      quoteConsumedRaw: 700n,
      quoteReserveRaw: 5000n,
      tokenReserveRaw: 6000n,
      realQuoteRaw: 700n,
      crossesGraduation: true
    })
    expect(decode(trade(false, 0n)).event).toMatchObject({ side: "sell", refundRaw: 0n, quoteConsumedRaw: 1000n, crossesGraduation: false })
  })

  it("CurveCompleted, CurveMigrated (pool null, the real pool kept apart, fee in bps), CreatorFeeClaimed", () => {
    const completed = decode(logOf(bondingCurveAbi, "CurveCompleted", CURVE, { token: TOKEN, realQuote: 4n, virtualQuoteReserve: 5n, virtualTokenReserve: 6n }))
    expect(completed.event).toMatchObject({ _tag: "CurveCompleted", curve: CURVE, realQuoteRaw: 4n, mint: TOKEN })
    const migrated = decode(
      logOf(bondingCurveAbi, "CurveMigrated", CURVE, {
        token: TOKEN,
        pool: POOL,
        positionId: 1n,
        liquidity: 2n,
        quoteAmount: 3n,
        tokenAmount: 4n,
        tokensBurned: 5n,
        poolFee: 3000,
        dexVersion: 3
      })
    )
    expect(migrated.event).toMatchObject({ _tag: "CurveMigrated", pool: null, dexPool: POOL, quoteRaw: 3n, tokensRaw: 4n, feeBps: 30 })
    const fee = decode(logOf(feeSplitterAbi, "CreatorFeeClaimed", SPLITTER, { curve: CURVE, token: TOKEN, recipient: TRADER, asset: zeroAddress, amount: 42n }))
    expect(fee.curve).toBeNull()
    expect(fee.event).toMatchObject({ _tag: "CreatorFeeClaimed", recipient: TRADER, amountRaw: 42n, mint: TOKEN })
  })

  it("RecoveryStarted and RecoveryClaimed become provisional RecoverySnapshots at the log's block", () => {
    const started = decode(logOf(bondingCurveAbi, "RecoveryStarted", CURVE, { token: TOKEN, reserveSnapshotRaw: 9n, eligibleSupplyRaw: 10n, tokensBurned: 11n }))
    expect(started.event).toMatchObject({ _tag: "RecoverySnapshot", cause: "started", curve: CURVE, reserveSnapshotRaw: 9n, eligibleSupplyRaw: 10n, surrenderedRaw: 0n, snapshotBlock: 123n })
    const claimed = decode(logOf(bondingCurveAbi, "RecoveryClaimed", CURVE, { token: TOKEN, holder: TRADER, amount: 1n, payout: 2n, surrenderedRaw: 3n }))
    expect(claimed.event).toMatchObject({ _tag: "RecoverySnapshot", cause: "claimed", surrenderedRaw: 3n, snapshotBlock: 123n })
  })

  it("not mine: a factory or splitter event from another contract, an unknown dexVersion, foreign selectors, broken data", () => {
    const none = (log: HoodLog) => expect(Option.isNone(decodeHoodLog(log, ctx, contracts))).toBe(true)
    none({ ...created(), address: CURVE })
    none(created({ dexVersion: 5 }))
    none({ ...logOf(feeSplitterAbi, "CreatorFeeClaimed", SPLITTER, { curve: CURVE, token: TOKEN, recipient: TRADER, asset: zeroAddress, amount: 1n }), address: FACTORY })
    none({ address: CURVE, topics: [], data: "0x" })
    none({ ...trade(true, 0n), data: "0x1234" })
    none({ ...trade(true, 0n), topics: [trade(true, 0n).topics[0]!] })
    const transfer = eventItem([{ type: "event", name: "Transfer", inputs: [{ name: "from", type: "address", indexed: true }, { name: "to", type: "address", indexed: true }, { name: "value", type: "uint256", indexed: false }] } as unknown as AbiEvent & { type: string; name: string }], "Transfer")
    none({ address: TOKEN, topics: encodeEventTopics({ abi: [transfer], eventName: "Transfer", args: { from: TRADER, to: TOKEN } } as never) as Array<Hex>, data: encodeAbiParameters([{ type: "uint256" }], [1n]) })
    expect(hoodTopics).toHaveLength(7)
  })

  it("property: arbitrary topics and data never throw", () => {
    const hex = (n: number) => fc.uint8Array({ minLength: 0, maxLength: n }).map((b) => `0x${Buffer.from(b).toString("hex")}` as Hex)
    fc.assert(
      fc.property(fc.constantFrom(...hoodTopics, `0x${"00".repeat(32)}` as Hex), fc.array(hex(32), { maxLength: 3 }), hex(600), fc.constantFrom(FACTORY, SPLITTER, CURVE), (t0, rest, data, address) => {
        decodeHoodLog({ address, topics: [t0, ...rest], data }, ctx, contracts)
      }),
      { numRuns: 300 }
    )
  })
})

describe("bus codec of the Hood additions", () => {
  const base = { id: "hood:0xab:1", position: hoodPosition(5n, 1), chain: "hood" as const, mint: TOKEN, timestampMs: 1, signature: "0xab" }
  const samples: Array<ChainEvent> = [
    new CurveMigrated({ ...base, pool: null, dexPool: POOL, quoteRaw: 1n, tokensRaw: 2n, feeBps: 30 }),
    new CurveMigrated({ ...base, pool: null, quoteRaw: 1n, tokensRaw: 2n, feeBps: 30 }),
    new RecoverySnapshot({ ...base, cause: "started", curve: CURVE, quoteToken: zeroAddress, reserveSnapshotRaw: 3n, eligibleSupplyRaw: 4n, surrenderedRaw: 0n, snapshotBlock: 5n })
  ]

  it("fast and Schema codecs agree on RecoverySnapshot and on CurveMigrated with and without dexPool", () => {
    for (const e of samples) {
      const fast = decodeFast(encodeFast(e))
      expect(fast).toEqual(decodeChainEventStrict(encodeChainEventStrict(e)))
      expect(Either.getOrThrow(fast)).toEqual(e)
      expect(Object.getPrototypeOf(Either.getOrThrow(fast))).toBe(Object.getPrototypeOf(e))
    }
    expect("dexPool" in Either.getOrThrow(decodeFast(encodeFast(samples[1]!)))).toBe(false)
  })

  it("refuses a malformed dexPool or snapshot the way the Schema decoder does", () => {
    const bytes = (o: unknown) => new TextEncoder().encode(JSON.stringify(o))
    for (const bad of [
      { ...JSON.parse(new TextDecoder().decode(encodeFast(samples[0]!))), dexPool: null },
      { ...JSON.parse(new TextDecoder().decode(encodeFast(samples[0]!))), dexPool: 7 },
      { ...JSON.parse(new TextDecoder().decode(encodeFast(samples[2]!))), cause: "other" },
      { ...JSON.parse(new TextDecoder().decode(encodeFast(samples[2]!))), snapshotBlock: 5 }
    ]) {
      const fast = decodeFast(bytes(bad))
      expect(Either.isLeft(fast)).toBe(true)
      expect(fast).toEqual(decodeChainEventStrict(bytes(bad)))
    }
  })
})

describe("graduated pool swaps", () => {
  const Q96 = 2n ** 96n
  const swap = (amount0: bigint, amount1: bigint, sqrtPriceX96 = 2n * Q96, liquidity = 10n ** 20n) =>
    logOf(uniswapV3PoolAbi, "Swap", POOL, { sender: FACTORY, recipient: TRADER, amount0, amount1, sqrtPriceX96, liquidity, tick: 13_863 })
  const mint = TOKEN.toLowerCase()

  it("a buy: the pool pays the token out; fee on the quote in, rounded up; reserves at the new price", () => {
    // Token is token1 here: amount1 < 0 (token out), amount0 > 0 (quote in).
    const t = Option.getOrThrow(PoolSwap.decode(swap(1_000_001n, -3_900_000n), ctx, { mint, tokenIsToken0: false, feePips: 3000 }))
    expect(t).toMatchObject({
      _tag: "Trade",
      id: `hood:${TX}:7`,
      position: hoodPosition(123n, 7),
      chain: "hood",
      mint,
      venue: "pool",
      side: "buy",
      trader: TRADER,
      amountInRaw: 1_000_001n,
      amountOutRaw: 3_900_000n,
      feeRaw: 3_001n, // ceil(1,000,001 × 3000 / 10^6) = ceil(3000.003)
      refundRaw: 0n,
      quoteConsumedRaw: 1_000_001n,
      // √P = 2 (token1 per token0 = 4): token0 (quote) = L/2, token1 (token) = 2L.
      quoteReserveRaw: 5n * 10n ** 19n,
      tokenReserveRaw: 2n * 10n ** 20n,
      realQuoteRaw: 0n,
      crossesGraduation: false
    })
  })

  it("a sell with the token as token0: fee in the token; quote out", () => {
    const t = Option.getOrThrow(PoolSwap.decode(swap(500n, -1_990n), ctx, { mint, tokenIsToken0: true, feePips: 10_000 }))
    expect(t).toMatchObject({ side: "sell", amountInRaw: 500n, amountOutRaw: 1_990n, feeRaw: 5n, quoteConsumedRaw: 500n, tokenReserveRaw: 5n * 10n ** 19n, quoteReserveRaw: 2n * 10n ** 20n })
  })

  it("not a trade: both deltas one way, a zero side, no liquidity in range gives zero reserves, another event", () => {
    expect(Option.isNone(PoolSwap.decode(swap(5n, 5n), ctx, { mint, tokenIsToken0: true, feePips: 3000 }))).toBe(true)
    expect(Option.isNone(PoolSwap.decode(swap(0n, -5n), ctx, { mint, tokenIsToken0: true, feePips: 3000 }))).toBe(true)
    expect(Option.isNone(PoolSwap.decode(trade(true, 0n), ctx, { mint, tokenIsToken0: true, feePips: 3000 }))).toBe(true)
    const dry = Option.getOrThrow(PoolSwap.decode(swap(5n, -4n, Q96, 0n), ctx, { mint, tokenIsToken0: true, feePips: 3000 }))
    expect([dry.quoteReserveRaw, dry.tokenReserveRaw]).toEqual([0n, 0n])
    expect(PoolSwap.virtualReserves(4n * 10n ** 18n, Q96)).toEqual([4n * 10n ** 18n, 4n * 10n ** 18n])
  })
})

