/**
 * The binary bus encoding against the Schema codec (the contract in ingest/ChainEvent.ts): every
 * trade it carries decodes to what the Schema decoder makes of the trade's JSON; malformed bytes
 * are refused, never thrown; JSON values written before the encoding still decode.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as fc from "fast-check"
import { ChainEvent, decodeChainEventStrict, encodeChainEventStrict, Trade } from "./ChainEvent.js"
import { decodeBinary, decodeKept, encodeBinary, encodeKept, MAGIC, VERSION } from "./ChainEventBinary.js"
import { decodeChainEvent, encodeChainEvent, encodeFast } from "./ChainEventCodec.js"
import { ChainClock, SimMarket } from "../test/support/marketSim.js"

/** fast-check seed: fixed by `FC_SEED`, else random; printed so a failure can be replayed. */
const seed = process.env.FC_SEED === undefined ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.FC_SEED)
console.log(`ChainEventBinary.test.ts: fast-check seed ${seed} (rerun with FC_SEED=${seed})`)

const amount = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  fc.bigInt({ min: -(1n << 80n), max: 1n << 200n }),
  fc.constantFrom(0n, 1n, -1n, 255n, 256n, (1n << 48n) - 1n, 1n << 48n, (1n << 53n) - 1n, 1n << 53n, (1n << 53n) + 1n, 10n ** 27n, -(10n ** 18n))
)
const text = fc.oneof(
  fc.string({ maxLength: 100 }),
  fc.string({ unit: "grapheme", maxLength: 60 }),
  fc.string({ minLength: 40, maxLength: 300 }),
  fc.constantFrom("", "h:00000000000000012345:000007:0000", "☃".repeat(50), "x".repeat(42), "x".repeat(43), "é".repeat(64), "x".repeat(127), "x".repeat(128), "x".repeat(126) + "é", `${"x".repeat(40)}☃`)
)
const trade = fc
  .record({
    id: text,
    position: text,
    chain: fc.constantFrom("solana" as const, "hood" as const),
    mint: text,
    timestampMs: fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
    signature: text,
    venue: fc.constantFrom("curve" as const, "pool" as const),
    side: fc.constantFrom("buy" as const, "sell" as const),
    trader: text,
    amountInRaw: amount,
    amountOutRaw: amount,
    feeRaw: amount,
    refundRaw: amount,
    quoteConsumedRaw: amount,
    quoteReserveRaw: amount,
    tokenReserveRaw: amount,
    realQuoteRaw: amount,
    crossesGraduation: fc.boolean()
  })
  .map((fields) => new Trade(fields))

const isChainEvent = Schema.is(ChainEvent)

/** Trades whose id holds their signature (as every Hood and Solana id does), anywhere in it, or not at all. */
const tradeWithIdAroundSignature = fc
  .tuple(trade, text, text, fc.constantFrom("hood:", "solana:", "", "☃"), fc.constantFrom(":7", ":0", "", ":r1a2b3c4d", "é"))
  .map(([t, signature, id, head, tail]) => new Trade({ ...t, signature, id: signature.length % 3 === 0 ? id : `${head}${signature}${tail}` }))

describe("ChainEventBinary", () => {
  it("property: a trade decodes to what the Schema decoder makes of its JSON", () => {
    fc.assert(
      fc.property(trade, (e) => {
        const bytes = encodeBinary(e)
        const strict = decodeChainEventStrict(encodeChainEventStrict(e))
        expect(Either.isRight(strict)).toBe(true)
        expect(bytes).toBeDefined()
        expect(bytes![0]).toBe(MAGIC)
        const binary = decodeChainEvent(bytes!)
        expect(binary).toEqual(strict)
        expect(Object.getPrototypeOf(Either.getOrThrow(binary))).toBe(Trade.prototype)
        expect(Object.keys(Either.getOrThrow(binary))).toEqual(Object.keys(Either.getOrThrow(strict)))
        // The codec's own choice for a trade is the binary form.
        expect(encodeChainEvent(e)).toEqual(bytes)
      }),
      { seed, numRuns: 2000 }
    )
  })

  it("property: the kept form decodes to the same trade, is never larger, and the bus decoder refuses it when it differs", () => {
    fc.assert(
      fc.property(fc.oneof(trade, tradeWithIdAroundSignature), (e) => {
        const kept = encodeKept(e)
        const bus = encodeBinary(e)
        expect(kept).toBeDefined()
        const back = decodeKept(kept!)
        const strict = Either.getOrThrow(decodeChainEventStrict(encodeChainEventStrict(e)))
        expect(back).toEqual(strict)
        expect(Object.keys(back!)).toEqual(Object.keys(strict))
        expect(Object.getPrototypeOf(back)).toBe(Trade.prototype)
        expect(kept!.length).toBeLessThanOrEqual(bus!.length + 1)
        // The kept decoder reads the bus form too; the bus decoder takes only the bus form.
        expect(decodeKept(bus!)).toEqual(strict)
        const split = e.signature.length > 0 && e.id.includes(e.signature)
        expect(decodeBinary(kept!)).toEqual(split ? undefined : strict)
      }),
      { seed, numRuns: 2000 }
    )
    const hood = new SimMarket(new ChainClock("hood"), { mint: `0x${"ab".repeat(20)}` })
    hood.created()
    const e = hood.buy(`0x${"cd".repeat(20)}`, 10n ** 17n)[0]!
    // A Hood id is `hood:<tx hash>:<log index>` and its signature the tx hash: kept, the hash is there once.
    expect(e.id).toBe(`hood:${e.signature}:0`)
    expect(encodeBinary(e)!.length - encodeKept(e)!.length).toBe(e.signature.length - 1)
  })

  it("property: mutated bytes are refused or decode to a valid ChainEvent, never throw", () => {
    fc.assert(
      fc.property(trade, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(20), (e, at, byte, cut) => {
        const bytes = encodeBinary(e)!.slice()
        const mutated = at % 3 === 0 ? bytes.subarray(0, Math.max(0, bytes.length - 1 - cut)) : bytes
        if (at % 3 !== 0) mutated[at % mutated.length] = byte
        const decoded = decodeChainEvent(mutated)
        if (Either.isRight(decoded)) {
          expect(isChainEvent(decoded.right)).toBe(true)
          // Whatever it accepted re-encodes to the same bytes: one value, one encoding.
          expect(encodeChainEvent(decoded.right)).toEqual(mutated)
        }
      }),
      { seed, numRuns: 3000 }
    )
  })

  it("refuses an unknown version, kind, flag, trailing byte or non-minimal amount", () => {
    const e = new SimMarket(new ChainClock("solana"), { mint: "So1Binary" }).buy("alice", 1_000_000_000n)[0]!
    const good = encodeBinary(e)!
    const zeroLast = encodeBinary(new Trade({ ...(e as Trade), realQuoteRaw: 0n }))!
    expect(zeroLast[zeroLast.length - 1]).toBe(0)
    expect(decodeBinary(zeroLast)).toBeDefined()
    const variants = [
      Uint8Array.of(MAGIC),
      Uint8Array.of(MAGIC, VERSION),
      Uint8Array.of(MAGIC, VERSION + 1, ...good.subarray(2)),
      Uint8Array.of(MAGIC, VERSION, 9, ...good.subarray(3)),
      Uint8Array.of(MAGIC, VERSION, 1, 0x10, ...good.subarray(4)),
      Uint8Array.of(...good, 0),
      // realQuoteRaw (the last field, here 0) written with a zero magnitude byte, and as negative zero.
      Uint8Array.of(...zeroLast.subarray(0, zeroLast.length - 1), 1, 0),
      Uint8Array.of(...zeroLast.subarray(0, zeroLast.length - 1), 0x80)
    ]
    for (const bad of variants) {
      expect(decodeBinary(bad)).toBeUndefined()
      const decoded = decodeChainEvent(bad)
      expect(Either.isLeft(decoded)).toBe(true)
    }
    const unknownVersion = decodeChainEvent(variants[2]!)
    expect(Either.isLeft(unknownVersion) && unknownVersion.left.message).toContain("unknown version")
  })

  it("leaves what it cannot carry exactly to JSON", () => {
    const base = new SimMarket(new ChainClock("hood"), { mint: "0xbinary" }).buy("bob", 10n ** 18n)[0]! as Trade
    const cases = [
      new Trade({ ...base, trader: "lone \ud800 surrogate" }),
      new Trade({ ...base, trader: "ascii first, then a lone \udc00" }),
      new Trade({ ...base, id: "x".repeat(0x8000) }),
      new Trade({ ...base, amountInRaw: 1n << 1100n })
    ]
    for (const e of cases) {
      expect(encodeBinary(e)).toBeUndefined()
      const bytes = encodeChainEvent(e)
      expect(bytes).toEqual(encodeFast(e))
      expect(decodeChainEvent(bytes)).toEqual(decodeChainEventStrict(encodeChainEventStrict(e)))
    }
    // Cold kinds stay JSON.
    const created = new SimMarket(new ChainClock("solana"), { mint: "So1Cold" }).created()
    expect(encodeBinary(created)).toBeUndefined()
    expect(encodeChainEvent(created)[0]).toBe("{".charCodeAt(0))
  })

  it("old bus data: a trade written as JSON still decodes to the same event as its binary form", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Replay" })
    m.created()
    for (const e of [...m.buy("carol", 3_000_000_000n), m.sell("carol", 1000n)]) {
      const fromJson = decodeChainEvent(encodeFast(e))
      const fromBinary = decodeChainEvent(encodeBinary(e)!)
      expect(fromJson).toEqual(fromBinary)
      expect(fromJson).toEqual(decodeChainEventStrict(encodeChainEventStrict(e)))
    }
  })

  it("an encoding handed out stays intact while later ones are written (views of a shared slab)", () => {
    const m = new SimMarket(new ChainClock("solana"), { mint: "So1Slab" })
    m.created()
    const events = Array.from({ length: 600 }, (_, i) => m.buy(`trader-${i}-${"t".repeat(i % 90)}`, 1_000_000n + BigInt(i))).flat()
    // Over 16 KiB in all, so the slab is replaced on the way; one oversized event goes between.
    const big = { ...events[0]!, id: "é".repeat(9000) } as typeof events[number]
    const encoded = events.map((e, i) => (i === 300 ? encodeBinary(big)! : encodeBinary(e)!))
    expect(encoded.reduce((n, b) => n + b.length, 0)).toBeGreaterThan(64 * 1024)
    encoded.forEach((bytes, i) => {
      expect(decodeChainEvent(bytes)).toEqual(decodeChainEventStrict(encodeChainEventStrict(i === 300 ? big : events[i]!)))
    })
  })
})
