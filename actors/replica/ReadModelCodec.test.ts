import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type MarketCore, type MarketState, priceFloatOf } from "../market/MarketActor.js"
import { foldStates, workload } from "../../test/support/marketWorkload.js"
import { encodeDrainBefore } from "../../test/support/readModelCodecBefore.js"
import { decodeFeedRecord, decodeSnapshot, encodeDrain, encodeSnapshot, FEED_RECORD_MAX_BYTES, MAGIC, type MarketChange } from "./ReadModelCodec.js"

/** fast-check seed: fixed by `FC_SEED`, else random; printed so a failure can be replayed. */
const seed = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))
console.log(`ReadModelCodec.test.ts: fast-check seed ${seed} (replay: FC_SEED=${seed})`)

/** What a reader of the topics gets for a change: the core alone, no retract window. */
const readable = ([key, state]: MarketChange): MarketChange => [key, state?.core === undefined ? undefined : { core: state.core, window: null }]

const folded = [...foldStates(workload(8, 6))]
const changes: ReadonlyArray<MarketChange> = folded.map(([key, state], i) => [key, i === 3 ? undefined : state] as const)

/** Every optional and nullable field of a core set, on both sides of each flag. */
const withEverything = (core: MarketCore): MarketCore => {
  const c: Omit<MarketCore, "priceFloat"> = {
    ...core,
    identity: { ...core.identity, configHash: "0xconfig", dexVersion: "v3", name: "Dög ☃ 🐸", mode: "exp-custom" },
    lifecycle: "recovery",
    migration: { status: "delayed", attempts: 7, nextAttemptAtMs: 1_735_689_900_000, gaveUpAtMs: 1_735_689_950_000, lastError: "pool init reverted: é", migratedAtMs: 1_735_689_999_999 },
    pool: { address: null, dexPool: "0xdexpool", feeBps: 30, quoteReserveRaw: 10n ** 40n, tokenReserveRaw: 1n },
    migratedPosition: "h:00000000000000006402:000000:0000",
    completedPosition: "h:00000000000000006101:000000:0000",
    recovery: { curve: "0xcurve", quoteToken: "0xquote", reserveSnapshotRaw: 5n, eligibleSupplyRaw: 10n ** 27n, surrenderedRaw: 0n, snapshotBlock: 123_456n },
    creatorFeesClaimedRaw: -(10n ** 30n)
  }
  return { ...c, priceFloat: priceFloatOf(c) }
}

const stateOf = (core: MarketCore): MarketState => ({ core, window: null })

describe("ReadModelCodec: the binary read model", () => {
  it("carries each change's core through the feed record and its snapshot, tombstones empty, the retract window left out", () => {
    const { feeds, snapshots } = encodeDrain(changes)
    expect(feeds).toHaveLength(1)
    expect(feeds[0]![0]).toBe(MAGIC)
    expect(decodeFeedRecord(feeds[0]!)).toStrictEqual(changes.map(readable))
    expect(snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toStrictEqual(changes.map(readable))
    expect(snapshots[3]!.value.byteLength).toBe(0)
    // Some of the workload's Hood states keep a retract window; none reaches a reader.
    expect(changes.some(([, s]) => s?.window != null && s.window.events.length > 0)).toBe(true)
    expect(FEED_RECORD_MAX_BYTES).toBe(256 * 1024)
  })

  it("encodes each core once: every snapshot value is a view of its feed record's bytes", () => {
    const { feeds, snapshots } = encodeDrain(changes)
    for (const [i, s] of snapshots.entries()) {
      if (i === 3) continue
      expect(s.value.buffer).toBe(feeds[0]!.buffer)
      expect(Buffer.from(feeds[0]!).indexOf(Buffer.from(s.value))).toBeGreaterThan(0)
    }
  })

  it("carries every optional and nullable field, and each flag's absence", () => {
    const solana = folded.find(([k]) => k.startsWith("solana"))![1].core!
    const hood = folded.find(([k]) => k.startsWith("hood"))![1].core!
    const bareFields = { ...solana, pool: { address: "PoolAddr1111", feeBps: 25, quoteReserveRaw: 1n, tokenReserveRaw: 2n }, identity: { ...solana.identity, configHash: null, dexVersion: null } }
    const bare: MarketCore = { ...bareFields, priceFloat: priceFloatOf(bareFields) }
    for (const core of [withEverything(solana), withEverything(hood), bare, { ...hood, pool: null, migratedPosition: null }]) {
      const decoded = decodeSnapshot(encodeSnapshot(stateOf(core)))
      expect(decoded).toStrictEqual(stateOf(core))
      expect(encodeSnapshot(stateOf(core))[0]).toBe(MAGIC)
    }
  })

  it("writes a core it cannot carry as the checkpoint codec's JSON, and a key that is not well-formed UTF-16 as JSON, both decoded exactly", () => {
    const core = folded[0]![1].core!
    const long: MarketCore = { ...core, identity: { ...core.identity, name: "x".repeat(0x8000) } }
    const fractional: MarketCore = { ...core, params: { ...core.params, feeBps: 1.5 } }
    const list: ReadonlyArray<MarketChange> = [
      ["solana:long", stateOf(long)],
      ["solana:\ud800lone", stateOf(core)],
      ["solana:fractional", stateOf(fractional)]
    ]
    const { feeds, snapshots } = encodeDrain(list)
    expect(decodeFeedRecord(feeds[0]!)).toStrictEqual(list)
    expect(snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toStrictEqual(list)
    expect(String.fromCharCode(snapshots[0]!.value[0]!)).toBe("{")
    expect(String.fromCharCode(snapshots[2]!.value[0]!)).toBe("{")
    expect(snapshots[1]!.value[0]).toBe(MAGIC)
  })

  it("still decodes the JSON records written before it (the topics keep them until retention or compaction)", () => {
    const { feeds, snapshots } = encodeDrainBefore(changes)
    expect(decodeFeedRecord(feeds[0]!)).toStrictEqual(changes.map(readable))
    expect(snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toStrictEqual(changes.map(readable))
  })

  it("is about a sixth of the JSON's bytes on the workload's states", () => {
    const many = [...foldStates(workload(100, 20))]
    const now = encodeDrain(many).feeds.reduce((n, f) => n + f.byteLength, 0)
    const before = encodeDrainBefore(many).feeds.reduce((n, f) => n + f.byteLength, 0)
    expect(now * 4).toBeLessThan(before)
  })

  it("refuses a record cut short anywhere, one with bytes after it, unknown flags, and another writer's bytes", () => {
    const core = withEverything(folded[0]![1].core!)
    const snapshot = encodeSnapshot(stateOf(core))
    for (let cut = 1; cut < snapshot.length; cut++) expect(() => decodeSnapshot(snapshot.subarray(0, cut))).toThrow()
    expect(() => decodeSnapshot(Uint8Array.from([...snapshot, 0]))).toThrow()
    const flagged = Uint8Array.from(snapshot)
    flagged[4] = flagged[4]! | 0x80
    expect(() => decodeSnapshot(flagged)).toThrow()
    const feed = encodeDrain([["solana:a", stateOf(core)]]).feeds[0]!
    for (let cut = 4; cut < feed.length; cut++) expect(() => decodeFeedRecord(feed.subarray(0, cut))).toThrow()
    expect(() => decodeFeedRecord(Uint8Array.from([MAGIC, 1, 9]))).toThrow()
    expect(() => decodeFeedRecord(new TextEncoder().encode('{"not":"a feed"}'))).toThrow()
  })
})

describe("ReadModelCodec.encodeDrain: the feed record's bound", () => {
  const sizes = changes.map((change) => encodeDrain([change]).feeds[0]!.byteLength - 3)

  it("splits a drain past the bound into records in order, each within the bound, and sends a change larger than the bound alone", () => {
    const max = 3 + Math.max(...sizes) + Math.min(...sizes)
    const { feeds, snapshots } = encodeDrain(changes, max)
    expect(feeds.length).toBeGreaterThan(2)
    for (const f of feeds) expect(f.byteLength).toBeLessThanOrEqual(max)
    expect(feeds.flatMap((f) => decodeFeedRecord(f))).toStrictEqual(changes.map(readable))
    expect(snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toStrictEqual(changes.map(readable))
    // A bound below every change: one record per change, in order.
    const tiny = encodeDrain(changes, 10)
    expect(tiny.feeds).toHaveLength(changes.length)
    expect(tiny.feeds.flatMap((f) => decodeFeedRecord(f))).toStrictEqual(changes.map(readable))
    expect(tiny.snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toStrictEqual(changes.map(readable))
  })

  it("measures the bound in UTF-8 bytes, not characters", () => {
    // Two tombstones whose keys are 2 bytes a character: as characters both fit the bound, as bytes one does.
    const wide = "é".repeat(1000)
    const list: ReadonlyArray<MarketChange> = [[`solana:${wide}`, undefined], [`solana:${wide}x`, undefined]]
    const one = encodeDrain([list[0]!]).feeds[0]!.byteLength
    const { feeds } = encodeDrain(list, one + 1500)
    expect(feeds).toHaveLength(2)
    for (const f of feeds) expect(f.byteLength).toBeLessThanOrEqual(one + 1500)
    expect(feeds.flatMap((f) => decodeFeedRecord(f))).toStrictEqual(list)
  })

  it("cuts at the bound exactly: two changes whose record is the bound stay together, one byte less splits them", () => {
    const two = changes.slice(0, 2)
    const together = encodeDrain(two).feeds[0]!.byteLength
    expect(encodeDrain(two, together).feeds).toHaveLength(1)
    expect(encodeDrain(two, together - 1).feeds).toHaveLength(2)
  })
})

describe("ReadModelCodec: property", () => {
  const base = folded.map(([, s]) => s.core).filter((c): c is MarketCore => c !== undefined)
  const text = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: "grapheme", maxLength: 30 }), fc.constantFrom("", "x".repeat(127), "x".repeat(128), "é".repeat(64)))
  const big = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.bigInt({ min: -(1n << 100n), max: 1n << 300n }), fc.constantFrom(0n, 1n, (1n << 64n) - 1n, 1n << 64n, 10n ** 27n))
  const uint = fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, 127, 128, 16_383, 16_384))
  // Finite and never negative zero, as every time the bus's events carry (their JSON has neither).
  const time = fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)))
  const slot = fc.record({ slot: uint, volumeRaw: big, trades: uint, buys: uint }, { noNullPrototype: true })
  const core = fc
    .record({
      base: fc.constantFrom(...base),
      chain: fc.constantFrom("solana" as const, "hood" as const),
      mint: text,
      name: text,
      configHash: fc.option(text, { nil: null }),
      dexVersion: fc.constantFrom(null, "v3" as const, "v4" as const),
      createdAtMs: time,
      lastEventAtMs: time,
      supplyRaw: big,
      feeBps: uint,
      realQuoteRaw: big,
      complete: fc.boolean(),
      lifecycle: fc.constantFrom("trading" as const, "completed" as const, "migrated" as const, "recovery" as const),
      lastError: fc.option(text, { nil: null }),
      nextAttemptAtMs: fc.option(time, { nil: null }),
      pool: fc.option(fc.record({ address: fc.option(text, { nil: null }), dexPool: fc.option(text, { nil: undefined }), feeBps: uint, quoteReserveRaw: big, tokenReserveRaw: big }, { noNullPrototype: true }), { nil: null }),
      completedPosition: fc.option(text, { nil: undefined }),
      fiveMinutes: fc.array(slot, { maxLength: 12 }),
      recentTraders: fc.array(uint, { maxLength: 64 }),
      lastTradeAtMs: fc.option(time, { nil: null }),
      recovery: fc.option(fc.record({ curve: text, quoteToken: text, reserveSnapshotRaw: big, eligibleSupplyRaw: big, surrenderedRaw: big, snapshotBlock: big }, { noNullPrototype: true }), { nil: undefined })
    })
    .map((d): MarketCore => {
      const { completedPosition: _c, recovery: _r, ...rest } = d.base
      const c: Omit<MarketCore, "priceFloat"> = {
        ...rest,
        chain: d.chain,
        mint: d.mint,
        lastEventAtMs: d.lastEventAtMs,
        identity: { ...d.base.identity, name: d.name, configHash: d.configHash, dexVersion: d.dexVersion, createdAtMs: d.createdAtMs },
        params: { ...d.base.params, supplyRaw: d.supplyRaw, feeBps: d.feeBps },
        curveState: { ...d.base.curveState, realQuoteRaw: d.realQuoteRaw, complete: d.complete },
        lifecycle: d.lifecycle,
        migration: { ...d.base.migration, lastError: d.lastError, nextAttemptAtMs: d.nextAttemptAtMs },
        pool: d.pool === null ? null : d.pool.dexPool === undefined ? { address: d.pool.address, feeBps: d.pool.feeBps, quoteReserveRaw: d.pool.quoteReserveRaw, tokenReserveRaw: d.pool.tokenReserveRaw } : { ...d.pool, dexPool: d.pool.dexPool },
        stats: { ...d.base.stats, fiveMinutes: d.fiveMinutes, recentTraders: d.recentTraders, lastTradeAtMs: d.lastTradeAtMs },
        ...(d.completedPosition === undefined ? {} : { completedPosition: d.completedPosition }),
        ...(d.recovery === undefined ? {} : { recovery: d.recovery })
      }
      return { ...c, priceFloat: priceFloatOf(c) }
    })
  const change = fc.tuple(fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 20 }), fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => `k${String.fromCharCode(c)}`)), fc.option(core, { nil: undefined }))

  it(`decodes every drain of random cores and keys exactly, through the feed and the snapshots, at any bound (seed ${seed})`, () => {
    fc.assert(
      fc.property(fc.array(change, { maxLength: 10 }), fc.integer({ min: 10, max: 6_000 }), (picked, bound) => {
        const list: ReadonlyArray<MarketChange> = picked.map(([key, c]) => [key, c === undefined ? undefined : stateOf(c)] as const)
        for (const max of [bound, undefined]) {
          const { feeds, snapshots } = max === undefined ? encodeDrain(list) : encodeDrain(list, max)
          expect(feeds.flatMap((f) => decodeFeedRecord(f))).toStrictEqual(list)
          expect(snapshots.map((s) => [s.key, decodeSnapshot(s.value)])).toStrictEqual(list)
          if (max !== undefined && list.length > 0) {
            // Only a record of one change may pass the bound.
            for (const f of feeds) if (f.byteLength > max) expect(decodeFeedRecord(f)).toHaveLength(1)
          }
        }
      }),
      { seed, numRuns: 200 }
    )
  })
})
