import { type Address, generateKeyPairSigner, getAddressDecoder, getProgramDerivedAddress, isOffCurveAddress } from "@solana/kit"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { CONFIG_ACCOUNT_SIZE, type ConfigAccount, decodeConfig, encodeConfig } from "./accounts/Config.js"
import { CURVE_ACCOUNT_SIZE, type CurveAccount, decodeCurve, encodeCurve } from "./accounts/Curve.js"
import { decodeFeeVault, encodeFeeVault, FEE_VAULT_ACCOUNT_SIZE, type FeeVaultAccount } from "./accounts/FeeVault.js"
import { decodeMetadata, encodeMetadata, METADATA_ACCOUNT_SIZE, type MetadataAccount } from "./accounts/Metadata.js"
import { decodePool, encodePool, POOL_ACCOUNT_SIZE, type PoolAccount } from "./accounts/Pool.js"
import { decodeSplMint, encodeSplMint, SPL_MINT_SIZE } from "./accounts/SplMint.js"
import { decodeSplTokenAccount, encodeSplTokenAccount, SPL_TOKEN_ACCOUNT_SIZE } from "./accounts/SplTokenAccount.js"
import { curveEventsFromLogs, type CurveEvent, decodeCurveEvent, encodeCurveEvent, eventLogLine } from "./Events.js"
import { decodeSvcCurveInstruction, encodeBuy, encodeClaimCreatorFee, encodeCreateCurve, encodeMigrate, encodePoolSwap, encodeSell } from "./Instructions.js"
import { addressToBytes } from "./internal/bytes.js"
import { bytesAreCurvePoint, createProgramAddressSync, findProgramAddressSync } from "./Pda.js"
import { quotePoolBuy, quotePoolSell } from "./PoolMath.js"
import { SVC_CURVE_PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "./ProgramIds.js"

const addresses = async (n: number): Promise<Address[]> => Promise.all(Array.from({ length: n }, async () => (await generateKeyPairSigner()).address))

describe("account layouts", async () => {
  const [a, b, c, d, e, f, g, h] = await addresses(8) as [Address, Address, Address, Address, Address, Address, Address, Address]
  const curve: CurveAccount = {
    bump: 254, lifecycle: "completed", mode: "exp-custom", quoteKind: "spl", stakerAllocationBps: 500, feeBps: 100,
    creatorFeeBps: 200, creatorShareBps: 3_000, tokenDecimals: 6, quoteDecimals: 6, mint: a, creator: b, quoteMint: c,
    tokenVault: d, stakerVault: e, quoteVault: f, feeVault: g, pool: h, virtualQuoteRaw: 1n, thresholdRaw: 2n,
    supplyRaw: 3n, tokenReserveRaw: 4n, virtualQuoteReserveRaw: 5n, virtualTokenReserveRaw: 6n, realQuoteRaw: 7n,
    buyCount: 8n, sellCount: 9n, volumeQuoteRaw: (1n << 64n) - 1n, createdSlot: 11n, completedSlot: 12n, migratedSlot: null
  }
  const pool: PoolAccount = {
    bump: 1, quoteKind: "native", feeBps: 250, baseFeeBps: 50, creatorFeeBps: 200, mint: a, quoteMint: WSOL_MINT_ADDRESS,
    curve: b, creator: c, tokenVault: d, quoteVault: e, feeVault: f, quoteReserveRaw: 10n, tokenReserveRaw: 20n,
    swapCount: 3n, volumeQuoteRaw: 40n, createdSlot: 50n
  }
  const feeVault: FeeVaultAccount = {
    bump: 9, quoteKind: "native", creatorShareBps: 3_000, curve: a, mint: b, creator: c, quoteMint: d, quoteHolder: e,
    protocolAccruedRaw: 1n, creatorOwedRaw: 2n, creatorClaimedRaw: 3n, curveFeesRaw: 4n, poolCreatorFeesRaw: 5n
  }
  const metadata: MetadataAccount = { bump: 7, mint: a, creator: b, name: "Ünïcødé name, 32 bytes max!!", symbol: "SYM", uri: "https://x/" + "u".repeat(190) }
  const config: ConfigAccount = { bump: 3, keeper: a, treasury: b, curveFeeBps: 100, creatorShareBps: 3_000, poolBaseFeeBps: 50 }

  const cases = [
    ["Curve", CURVE_ACCOUNT_SIZE, 376, () => encodeCurve(curve), decodeCurve, curve],
    ["Pool", POOL_ACCOUNT_SIZE, 274, () => encodePool(pool), decodePool, pool],
    ["FeeVault", FEE_VAULT_ACCOUNT_SIZE, 206, () => encodeFeeVault(feeVault), decodeFeeVault, feeVault],
    ["Metadata", METADATA_ACCOUNT_SIZE, 312, () => encodeMetadata(metadata), decodeMetadata, metadata],
    ["Config", CONFIG_ACCOUNT_SIZE, 73, () => encodeConfig(config), decodeConfig, config]
  ] as const

  for (const [name, size, documented, encode, decode, value] of cases) {
    it(`${name}: fixed ${documented} bytes, round-trips, and refuses what is not its own`, () => {
      const bytes = encode()
      expect(size).toBe(documented)
      expect(bytes.length).toBe(size)
      expect((decode as (d: Uint8Array) => unknown)(bytes)).toEqual(value)
      expect((decode as (d: Uint8Array) => unknown)(bytes.subarray(1))).toBeUndefined()
      expect((decode as (d: Uint8Array) => unknown)(new Uint8Array(size))).toBeUndefined()
      const wrongTag = bytes.slice()
      wrongTag[0] = 99
      expect((decode as (d: Uint8Array) => unknown)(wrongTag)).toBeUndefined()
      const wrongVersion = bytes.slice()
      wrongVersion[1] = 2
      expect((decode as (d: Uint8Array) => unknown)(wrongVersion)).toBeUndefined()
    })
  }

  it("SPL Mint and Account use the real sizes and round-trip", () => {
    const mint = { mintAuthority: a, supply: 5n, decimals: 6, freezeAuthority: null }
    expect(encodeSplMint(mint).length).toBe(SPL_MINT_SIZE)
    expect(decodeSplMint(encodeSplMint(mint))).toEqual(mint)
    const account = {
      mint: a, owner: b, amount: 9n, delegate: null, state: "initialized" as const, isNative: 2_039_280n, delegatedAmount: 0n, closeAuthority: c
    }
    expect(encodeSplTokenAccount(account).length).toBe(SPL_TOKEN_ACCOUNT_SIZE)
    expect(decodeSplTokenAccount(encodeSplTokenAccount(account))).toEqual(account)
    expect(decodeSplTokenAccount(new Uint8Array(165))).toBeUndefined()
  })

  it("decoders never throw on arbitrary bytes", () => {
    const decoders = [decodeCurve, decodePool, decodeFeeVault, decodeMetadata, decodeConfig, decodeSplMint, decodeSplTokenAccount, decodeCurveEvent, decodeSvcCurveInstruction]
    const sized = fc.oneof(
      fc.uint8Array({ maxLength: 400 }),
      ...[376, 274, 206, 312, 73, 82, 165].map((n) => fc.uint8Array({ minLength: n, maxLength: n })),
      ...[1, 2, 3, 4, 5].map((tag) => fc.uint8Array({ minLength: 1, maxLength: 400 }).map((x) => Uint8Array.of(tag, ...x)))
    )
    fc.assert(
      fc.property(sized, (bytes) => {
        for (const decode of decoders) expect(() => decode(bytes)).not.toThrow()
      }),
      { numRuns: 300 }
    )
  })
})

describe("instructions and events", async () => {
  const [a, b, c] = await addresses(3) as [Address, Address, Address]

  it("instruction data round-trips and malformed data decodes to undefined", () => {
    const create = {
      virtualQuoteRaw: 30n, thresholdRaw: 85n, supplyRaw: 10n ** 15n, stakerAllocationBps: 50, mode: "exp-a" as const,
      creatorFeeBps: 100, name: "Name", symbol: "SYM", uri: "https://u"
    }
    expect(decodeSvcCurveInstruction(encodeCreateCurve(create))).toEqual({ kind: "create_curve", ...create })
    expect(encodeCreateCurve(create).length).toBe(1 + 24 + 2 + 1 + 2 + 5 + 4 + 10)
    expect(decodeSvcCurveInstruction(encodeBuy({ amountInRaw: 1n, minAmountOutRaw: 2n }))).toEqual({ kind: "buy", amountInRaw: 1n, minAmountOutRaw: 2n })
    expect(decodeSvcCurveInstruction(encodeSell({ amountInRaw: 3n, minAmountOutRaw: 4n }))).toEqual({ kind: "sell", amountInRaw: 3n, minAmountOutRaw: 4n })
    expect(decodeSvcCurveInstruction(encodeMigrate())).toEqual({ kind: "migrate" })
    expect(decodeSvcCurveInstruction(encodePoolSwap({ side: "sell", amountInRaw: 5n, minAmountOutRaw: 6n }))).toEqual({
      kind: "pool_swap", side: "sell", amountInRaw: 5n, minAmountOutRaw: 6n
    })
    expect(decodeSvcCurveInstruction(encodeClaimCreatorFee())).toEqual({ kind: "claim_creator_fee" })
    expect(decodeSvcCurveInstruction(Uint8Array.of(1, 2, 3))).toBeUndefined()
    expect(decodeSvcCurveInstruction(Uint8Array.of(3, 0))).toBeUndefined()
    expect(decodeSvcCurveInstruction(Uint8Array.of(42))).toBeUndefined()
    expect(() => encodeCreateCurve({ ...create, name: "x".repeat(33) })).toThrow(RangeError)
    expect(() => encodeCreateCurve({ ...create, symbol: "x".repeat(11) })).toThrow(RangeError)
  })

  it("events round-trip, and only svc-curve's own `Program data:` lines are read from logs", () => {
    const events: CurveEvent[] = [
      { kind: "Trade", mint: a, curve: b, trader: c, side: "buy", amountInRaw: 1n, amountOutRaw: 2n, feeRaw: 3n, creatorFeeRaw: 1n,
        virtualQuoteAfterRaw: 4n, virtualTokenAfterRaw: 5n, realQuoteAfterRaw: 6n, crossesGraduation: true },
      { kind: "CurveCompleted", mint: a, curve: b, realQuoteRaw: 1n, virtualQuoteRaw: 2n, virtualTokenRaw: 3n },
      { kind: "CurveMigrated", mint: a, curve: b, pool: c, keeper: a, quoteMovedRaw: 1n, tokensMovedRaw: 2n, poolFeeBps: 150 },
      { kind: "PoolSwap", mint: a, pool: b, trader: c, side: "sell", amountInRaw: 1n, amountOutRaw: 2n, feeRaw: 3n, creatorFeeRaw: 0n,
        quoteReserveAfterRaw: 4n, tokenReserveAfterRaw: 5n },
      { kind: "CreatorFeeClaimed", mint: a, curve: b, creator: c, amountRaw: 7n, claimedTotalRaw: 9n }
    ]
    for (const e of events) expect(decodeCurveEvent(encodeCurveEvent(e))).toEqual(e)
    expect(encodeCurveEvent(events[0]!)[0]).toBe(2)
    const logs = [
      `Program ${SVC_CURVE_PROGRAM_ID} invoke [1]`,
      `Program ${TOKEN_PROGRAM_ID} invoke [2]`,
      eventLogLine(events[4]!), // emitted while the token program runs: not ours
      `Program ${TOKEN_PROGRAM_ID} success`,
      eventLogLine(events[0]!),
      `Program ${SVC_CURVE_PROGRAM_ID} success`,
      `Program ${SYSTEM_PROGRAM_ID} invoke [1]`,
      eventLogLine(events[1]!),
      `Program ${SYSTEM_PROGRAM_ID} success`,
      `Program ${SVC_CURVE_PROGRAM_ID} invoke [1]`,
      "Program data: not-base64-of-an-event",
      eventLogLine(events[2]!),
      `Program ${SVC_CURVE_PROGRAM_ID} success`
    ]
    expect(curveEventsFromLogs(logs)).toEqual([
      { instructionIndex: 0, eventIndex: 0, event: events[0] },
      { instructionIndex: 2, eventIndex: 1, event: events[2] }
    ])
  })
})

describe("program-derived addresses", () => {
  it("the synchronous derivation equals kit's getProgramDerivedAddress", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 32 }), { maxLength: 4 }), async (seeds) => {
        const [kitAddress, kitBump] = await getProgramDerivedAddress({ programAddress: SVC_CURVE_PROGRAM_ID, seeds })
        const found = findProgramAddressSync(seeds, SVC_CURVE_PROGRAM_ID)
        expect(found).toEqual({ address: kitAddress, bump: kitBump })
        expect(createProgramAddressSync([...seeds, Uint8Array.of(kitBump)], SVC_CURVE_PROGRAM_ID)).toBe(kitAddress)
      }),
      { numRuns: 40 }
    )
    expect(() => findProgramAddressSync([new Uint8Array(33)], SVC_CURVE_PROGRAM_ID)).toThrow(RangeError)
  })

  it("createProgramAddressSync answers again from its memo as kit does, an on-curve bump (undefined) too", async () => {
    for (let n = 0; n < 64; n++) {
      const seeds = [Uint8Array.of(n, 7, 7)]
      const { bump, address } = findProgramAddressSync(seeds, SVC_CURVE_PROGRAM_ID)
      if (bump === 255) continue
      // Bump 255 is on the curve (find went below it): refused, and refused again from the memo.
      expect(createProgramAddressSync([...seeds, Uint8Array.of(255)], SVC_CURVE_PROGRAM_ID)).toBeUndefined()
      expect(createProgramAddressSync([...seeds, Uint8Array.of(255)], SVC_CURVE_PROGRAM_ID)).toBeUndefined()
      await expect(getProgramDerivedAddress({ programAddress: SVC_CURVE_PROGRAM_ID, seeds })).resolves.toEqual([address, bump])
      for (let i = 0; i < 2; i++) expect(createProgramAddressSync([...seeds, Uint8Array.of(bump)], SVC_CURVE_PROGRAM_ID)).toBe(address)
      return
    }
    throw new Error("no seeds below bump 255 in 64 tries (each is about an even chance)")
  })

  it("bytesAreCurvePoint is kit's on-curve rule on any 32 bytes, each edge of y included", async () => {
    const decoder = getAddressDecoder()
    const kitOnCurve = (b: Uint8Array): boolean => !isOffCurveAddress(decoder.decode(b))
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    console.log(`bytesAreCurvePoint property: FC_SEED=${seed}`)
    // Random bytes, and random bytes whose top byte is 0x00/0x7f (sign bit either way): the
    // branch that reads y whole.
    const topByte = fc.constantFrom(0x00, 0x7f, 0x80, 0xff)
    const bytes = fc.oneof(
      fc.uint8Array({ minLength: 32, maxLength: 32 }),
      fc.tuple(fc.uint8Array({ minLength: 31, maxLength: 31 }), topByte).map(([low, top]) => Uint8Array.of(...low, top))
    )
    fc.assert(
      fc.property(bytes, (b) => {
        expect(bytesAreCurvePoint(b)).toBe(kitOnCurve(b))
      }),
      { seed, numRuns: 1_500 }
    )
    const P = 2n ** 255n - 19n
    const le = (y: bigint, sign: boolean): Uint8Array => {
      const b = new Uint8Array(32)
      for (let i = 0; i < 32; i++) b[i] = Number((y >> BigInt(8 * i)) & 0xffn)
      if (sign) b[31]! |= 0x80
      return b
    }
    // Every y from 0 to 20, and from p − 20 to 2^255 − 1 (p and above: y read unreduced), both signs.
    const edges: bigint[] = []
    for (let d = 0n; d <= 20n; d++) edges.push(d)
    for (let y = P - 20n; y < 2n ** 255n; y++) edges.push(y)
    for (const y of edges)
      for (const sign of [false, true]) expect(bytesAreCurvePoint(le(y, sign)), `y=${y} sign=${sign}`).toBe(kitOnCurve(le(y, sign)))
    // y ≡ ±1 (x = 0): on the curve without the sign bit; kit refuses the sign bit, noble's ZIP 215 reading would not.
    for (const y of [1n, P - 1n, P + 1n]) {
      expect(bytesAreCurvePoint(le(y, false))).toBe(true)
      expect(bytesAreCurvePoint(le(y, true))).toBe(false)
    }
    // A public key is a point; a wrong length is none.
    expect(bytesAreCurvePoint(addressToBytes((await generateKeyPairSigner()).address))).toBe(true)
    expect(bytesAreCurvePoint(new Uint8Array(31))).toBe(false)
  })
})

describe("PoolMath", () => {
  it("never lowers k, rounds toward the pool, and refuses zero", () => {
    const reserves = fc.record({ quoteReserveRaw: fc.bigInt({ min: 1n, max: 10n ** 15n }), tokenReserveRaw: fc.bigInt({ min: 1n, max: 10n ** 18n }) })
    const fees = fc.constantFrom(0n, 100n, 200n).map((creatorFeeBps) => ({ feeBps: 50n + creatorFeeBps, creatorFeeBps }))
    fc.assert(
      fc.property(reserves, fees, fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.boolean(), (r, f, amount, buy) => {
        const q = buy ? quotePoolBuy(r, f, amount) : quotePoolSell(r, f, amount)
        if (q._tag === "Refused") return
        expect(q.next.quoteReserveRaw * q.next.tokenReserveRaw).toBeGreaterThanOrEqual(r.quoteReserveRaw * r.tokenReserveRaw)
        expect(q.creatorFee).toBeLessThanOrEqual(q.fee)
        expect(q.next.tokenReserveRaw).toBeGreaterThan(0n)
      }),
      { numRuns: 500 }
    )
    expect(quotePoolBuy({ quoteReserveRaw: 1n, tokenReserveRaw: 1n }, { feeBps: 50n, creatorFeeBps: 0n }, 0n)._tag).toBe("Refused")
    expect(quotePoolBuy({ quoteReserveRaw: 1n, tokenReserveRaw: 1n }, { feeBps: 50n, creatorFeeBps: 0n }, 1n)._tag).toBe("Refused")
  })
})
