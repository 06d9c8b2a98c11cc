import { compileTransaction, generateKeyPairSigner, getTransactionEncoder, type KeyPairSigner, signTransactionMessageWithSigners } from "@solana/kit"
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { BPS, ceilDiv, initialState, quoteBuy } from "../../../domain/CurveMath.js"
import { findEconomics } from "../../../domain/Economics.js"
import { findQuotePair, type QuoteAssetId } from "../../../domain/QuotePairs.js"
import { TREASURY_ADDRESS } from "../localnet/DevKeys.js"
import { CurveModes } from "../program/accounts/Common.js"
import { decodeSvcCurveInstruction } from "../program/Instructions.js"
import {
  assembleLaunchTransaction,
  isLaunchPlan,
  type LaunchPlan,
  type LaunchTransactionInput,
  planLaunch,
  serializedSize,
  sizeLaunch,
  SOLANA_TRANSACTION_BYTES_MAX
} from "./LaunchTransaction.js"

let payer: KeyPairSigner
let mint: KeyPairSigner

beforeAll(async () => {
  payer = await generateKeyPairSigner()
  mint = await generateKeyPairSigner()
})

const inputFor = (quoteAsset: Exclude<QuoteAssetId, "eth" | "usdg">, more: Partial<LaunchTransactionInput> = {}): LaunchTransactionInput => {
  const economics = findEconomics("solana", quoteAsset)!
  const tier = economics.tiers[0]!
  return {
    payer,
    mint,
    quoteMint: findQuotePair("solana", quoteAsset)!.address as LaunchTransactionInput["quoteMint"],
    terms: {
      virtualQuoteRaw: tier.virtualQuoteRaw,
      thresholdRaw: tier.thresholdRaw,
      supplyRaw: economics.tokenSupplyRaw,
      stakerAllocationBps: 50n,
      curveFeeBps: economics.curveFeeBps,
      creatorFeeBps: 0n,
      mode: "open"
    },
    name: "Launch",
    symbol: "LNCH",
    metadataUri: "https://curvestream.local/api/v1/metadata/solana/x.json",
    devBuyRaw: 100_000_000n,
    platformFee: { bps: 100n, treasury: TREASURY_ADDRESS },
    lifetime: { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 150n },
    ...more
  }
}

const planOf = (i: LaunchTransactionInput): LaunchPlan => {
  const p = planLaunch(i.terms, i.devBuyRaw, i.platformFee)
  if (!isLaunchPlan(p)) throw new Error(`unplannable: ${p.reason}`)
  return p
}

const sizeWithName = async (i: LaunchTransactionInput, name: string) =>
  serializedSize((await assembleLaunchTransaction({ ...i, name }, planOf(i))).message)

describe("planLaunch", () => {
  it("buys CurveMath's quote on the virgin curve, with that quote as the minimum, and charges the plan fee rounded up", () => {
    const i = inputFor("sol", { devBuyRaw: 123_456_789n, platformFee: { bps: 25n, treasury: TREASURY_ADDRESS } })
    const plan = planOf(i)
    const quote = quoteBuy(plan.curveParams, initialState(plan.curveParams), 123_456_789n)
    if (quote._tag !== "Filled") throw new Error("refused")
    expect(plan.devBuy).toEqual({ amountInRaw: 123_456_789n, expectedOutRaw: quote.amountOut, minAmountOutRaw: quote.amountOut, curveFeeRaw: quote.fee })
    expect(plan.fee).toEqual({ bps: 25n, feeRaw: ceilDiv(123_456_789n * 25n, BPS), treasury: TREASURY_ADDRESS })
    expect(plan.fee!.feeRaw).toBe(308_642n) // 308,641.97… rounded up
  })

  it("has no dev buy and no fee leg without a buy, and no fee leg at 0 bps", () => {
    expect(planOf(inputFor("usdc", { devBuyRaw: 0n }))).toMatchObject({ devBuy: null, fee: null })
    expect(planOf(inputFor("usdc", { platformFee: { bps: 0n, treasury: TREASURY_ADDRESS } })).fee).toBeNull()
  })

  it("refuses a dev buy that fills nothing (its net after the curve fee is 0)", () => {
    const i = inputFor("svc", { devBuyRaw: 1n })
    expect(planLaunch(i.terms, 1n, i.platformFee)).toEqual({ _tag: "DevBuyRefused", reason: "zero_amount" })
  })
})

describe("assembleLaunchTransaction", () => {
  it("lays out create_curve, the payer's token account, the buy and the fee leg, per pair", async () => {
    const sol = await assembleLaunchTransaction(inputFor("sol"), planOf(inputFor("sol")))
    expect(sol.roles).toEqual(["create_curve", "create_payer_token_account", "dev_buy", "platform_fee", "compute_budget"])
    expect(sol.payerQuoteAccount).toBe(payer.address)
    const usdc = await assembleLaunchTransaction(inputFor("usdc"), planOf(inputFor("usdc")))
    expect(usdc.roles).toEqual(["create_curve", "create_payer_token_account", "dev_buy", "create_treasury_account", "platform_fee", "compute_budget"])
    const bare = await assembleLaunchTransaction(inputFor("sol", { devBuyRaw: 0n }), planOf(inputFor("sol", { devBuyRaw: 0n })))
    expect(bare.roles).toEqual(["create_curve", "compute_budget"])
    const priced = await assembleLaunchTransaction(inputFor("sol", { computeUnitPriceMicroLamports: 5n }), planOf(inputFor("sol")))
    expect(priced.roles.filter((r) => r === "compute_budget")).toHaveLength(2)
  })

  it("writes the matrix terms and the quote as the buy's minimum into the instruction bytes", async () => {
    const i = inputFor("usdc", { terms: { ...inputFor("usdc").terms, mode: "exclusive", stakerAllocationBps: 700n } })
    const plan = planOf(i)
    const a = await assembleLaunchTransaction(i, plan)
    const create = decodeSvcCurveInstruction(new Uint8Array(a.message.instructions[a.roles.indexOf("create_curve")]!.data!))
    expect(create).toMatchObject({
      kind: "create_curve",
      virtualQuoteRaw: i.terms.virtualQuoteRaw,
      thresholdRaw: i.terms.thresholdRaw,
      supplyRaw: i.terms.supplyRaw,
      stakerAllocationBps: 700,
      mode: "exclusive",
      name: "Launch",
      symbol: "LNCH",
      uri: i.metadataUri
    })
    const buy = decodeSvcCurveInstruction(new Uint8Array(a.message.instructions[a.roles.indexOf("dev_buy")]!.data!))
    expect(buy).toEqual({ kind: "buy", amountInRaw: i.devBuyRaw, minAmountOutRaw: plan.devBuy!.expectedOutRaw })
  })

  it("serializedSize is the length of the signed wire transaction", async () => {
    const i = inputFor("svc")
    const a = await assembleLaunchTransaction(i, planOf(i))
    const wire = getTransactionEncoder().encode(await signTransactionMessageWithSigners(a.message))
    expect(serializedSize(a.message)).toBe(wire.byteLength)
  })
})

describe("serializedSize", () => {
  it("is the encoded transaction's length, for any request (property: pair, mode, dev buy, fees, priority fee, names, symbols and uris of 1- to 4-byte characters)", async () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    console.log(`serializedSize property: FC_SEED=${seed}`)
    // At most `max` UTF-8 bytes (the rules' limits: name 32, symbol 10, uri 200).
    const text = (max: number) =>
      fc
        .array(fc.constantFrom("N", "é", "€", "😀"), { maxLength: max })
        .map((cs) => cs.join(""))
        .filter((t) => Buffer.byteLength(t, "utf8") <= max)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("sol" as const, "usdc" as const, "svc" as const),
        fc.constantFrom(...CurveModes),
        fc.constantFrom(0n, 1_000_000n, 123_456_789n),
        fc.constantFrom(0n, 25n, 100n),
        fc.constantFrom(undefined, 0n, 1_000n),
        text(32),
        text(10),
        text(200),
        async (quoteAsset, mode, devBuyRaw, creatorFeeBps, computeUnitPriceMicroLamports, name, symbol, metadataUri) => {
          const base = inputFor(quoteAsset)
          const i = inputFor(quoteAsset, { terms: { ...base.terms, mode, creatorFeeBps }, devBuyRaw, computeUnitPriceMicroLamports, name, symbol, metadataUri })
          const { message } = await assembleLaunchTransaction(i, planOf(i))
          expect(serializedSize(message)).toBe(getTransactionEncoder().encode(compileTransaction(message)).byteLength)
        }
      ),
      { seed, numRuns: 150 }
    )
  })
})

describe("sizeLaunch", () => {
  it("the largest request the rules allow fits in 1,232 bytes on every pair (32-byte name, 10-byte symbol, 200-byte uri, dev buy, fee, priority fee)", async () => {
    for (const quoteAsset of ["sol", "usdc", "svc"] as const) {
      const i = inputFor(quoteAsset, {
        name: "é".repeat(16),
        symbol: "ü".repeat(5),
        metadataUri: `https://${"m".repeat(192)}`,
        computeUnitPriceMicroLamports: 1_000n
      })
      const size = await sizeLaunch(i, planOf(i))
      expect(size).toMatchObject({ limit: SOLANA_TRANSACTION_BYTES_MAX, fits: true, overBy: 0, maxNameBytes: 32 })
      expect(size.txBytes).toBeLessThanOrEqual(SOLANA_TRANSACTION_BYTES_MAX)
      expect(size.txBytes).toBeGreaterThan(1_100)
    }
  })

  it("depends on the name's UTF-8 bytes, not its characters", async () => {
    const i = inputFor("usdc")
    expect(await sizeWithName(i, "é".repeat(10))).toBe(await sizeWithName(i, "N".repeat(20)))
    expect(await sizeWithName(i, "N".repeat(21))).toBe((await sizeWithName(i, "N".repeat(20))) + 1)
  })

  it("at the boundary: a name of maxNameBytes fits, one byte more is over by exactly its serialized excess", async () => {
    const i = inputFor("usdc")
    // A limit at which names of 20 bytes fit and 21 do not, read off the real serialization.
    const limit = await sizeWithName(i, "N".repeat(20))
    const at = await sizeLaunch({ ...i, name: "n".repeat(20) }, planOf(i), limit)
    expect(at).toEqual({ txBytes: limit, limit, maxNameBytes: 20, fits: true, overBy: 0 })
    const over = await sizeLaunch({ ...i, name: "n".repeat(21) }, planOf(i), limit)
    const overBytes = await sizeWithName(i, "n".repeat(21))
    expect(over).toEqual({ txBytes: overBytes, limit, maxNameBytes: 20, fits: false, overBy: overBytes - limit })
    expect(over.overBy).toBe(1)
  })

  it("across create_curve's compact-u16 data length step (127 → 128 bytes), maxNameBytes is still the serialization's", async () => {
    // create_curve's data is 33 bytes + name + symbol + uri: with "LNCH" and a 74-byte uri, a 16-byte name makes 127 bytes, 17 make 128.
    const i = inputFor("sol", { metadataUri: "u".repeat(74) })
    const at16 = await sizeWithName(i, "N".repeat(16))
    const at17 = await sizeWithName(i, "N".repeat(17))
    expect(at17).toBe(at16 + 2)
    for (const limit of [at16, at16 + 1, at17]) {
      const size = await sizeLaunch({ ...i, name: "N" }, planOf(i), limit)
      expect(size.maxNameBytes).toBe(limit >= at17 ? 17 : 16)
    }
  })

  it("maxNameBytes is the longest name that serializes within the limit, for any limit and request, names of 1- to 4-byte characters (property)", async () => {
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    console.log(`sizeLaunch property: FC_SEED=${seed}`)
    // A name of at most 32 UTF-8 bytes mixing 1-, 2-, 3- and 4-byte characters: its size is its bytes'.
    const name = fc
      .array(fc.constantFrom("N", "é", "€", "😀"), { minLength: 1, maxLength: 32 })
      .map((cs) => cs.join(""))
      .filter((n) => Buffer.byteLength(n, "utf8") <= 32)
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("sol" as const, "usdc" as const, "svc" as const),
        fc.bigInt({ min: 0n, max: 500_000_000n }),
        name,
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: -40, max: 40 }),
        async (quoteAsset, devBuyRaw, requestName, uriBytes, offset) => {
          const nameBytes = Buffer.byteLength(requestName, "utf8")
          const i = inputFor(quoteAsset, { devBuyRaw: devBuyRaw === 0n ? 0n : devBuyRaw + 1_000n, metadataUri: "u".repeat(uriBytes) })
          const plan = planOf(i)
          const limit = (await sizeWithName(i, "N".repeat(16))) + offset
          const size = await sizeLaunch({ ...i, name: requestName }, plan, limit)
          const sizes = await Promise.all(Array.from({ length: 32 }, (_, k) => sizeWithName(i, "N".repeat(k + 1))))
          const fitting = sizes.flatMap((s, k) => (s <= limit ? [k + 1] : []))
          expect(size.maxNameBytes).toBe(fitting.length === 0 ? 0 : Math.max(...fitting))
          expect(size.txBytes).toBe(sizes[nameBytes - 1])
          expect(size.fits).toBe(size.txBytes <= limit)
          expect(size.overBy).toBe(Math.max(0, size.txBytes - limit))
        }
      ),
      { seed, numRuns: 40 }
    )
  })
})
