/**
 * kol_mention: a labelled KOL naming a token fires once per KOL per token per hour; unlabelled
 * authors, replayed mentions and the cooldown edge do not; the per-token and per-detector bounds.
 * Also the Signal helpers the detectors share (USD, quality tiers, ids).
 */
import { describe, expect, it } from "vitest"
import { WSOL_MINT } from "../../src/domain/QuotePairs.js"
import { HOUR, makeInputs, T0 } from "./internal/fixtures.js"
import { KolMentionDetectors, makeKolMentionStep, type MentionInput, type SocialMention } from "./KolMention.js"
import { formatMicros, matchesQuality, qualityOf, signalId, usdMicrosOf } from "../../src/domain/Signal.js"
import { defaultSignalConfig, signalConfig } from "./SignalConfig.js"

const kols = { alice: { id: "kol_alice", handle: "alice", weight: 30 }, bob: { id: "kol_bob", handle: "bob", weight: 0 } }
const inputs = makeInputs({}, kols)
const market = { symbol: "MOON", createdAtMs: T0 - 2 * HOUR, venue: "svc-curve" as const, quoteMint: WSOL_MINT, quoteDecimals: 9, marketCapQuoteRaw: 30n * 10n ** 9n }

let n = 0
const mention = (author: string, atMs: number, asset = "mintK"): SocialMention => ({
  id: `m${++n}`,
  chain: "solana",
  asset,
  author,
  text: `look at $MOON`,
  url: null,
  atMs
})

describe("kol_mention", () => {
  it("fires for a KOL, not for an unlabelled author; once per KOL per token per hour (1 h later fires again)", () => {
    const step = makeKolMentionStep(defaultSignalConfig, inputs)
    const seq: Array<MentionInput> = [
      { mention: mention("nobody", T0), market },
      { mention: mention("alice", T0 + 1), market },
      { mention: mention("alice", T0 + HOUR), market }, // cooldown until T0 + 1 + 1 h: still inside
      { mention: mention("bob", T0 + HOUR), market: null },
      { mention: mention("alice", T0 + 1 + HOUR), market }
    ]
    let state
    const out = []
    for (const input of seq) {
      const [next, signals] = step(state, input)
      state = next
      out.push(...signals)
    }
    expect(out.map((s) => [s.details.handle, s.at_ms])).toEqual([
      ["alice", T0 + 1],
      ["bob", T0 + HOUR],
      ["alice", T0 + 1 + HOUR]
    ])
    const first = out[0]!
    expect([first.pattern, first.confidence, first.quality, first.mcap_usd, first.age_minutes, first.size_usd, first.venue]).toEqual([
      "kol_mention",
      80,
      "high",
      "3000",
      120,
      "0",
      "svc-curve"
    ])
    expect([out[1]!.confidence, out[1]!.mcap_usd, out[1]!.venue]).toEqual([40, null, null])
  })

  it("skips a mention at or before the last applied (a replay) and keeps the same state", () => {
    const step = makeKolMentionStep(defaultSignalConfig, inputs)
    const m = mention("alice", T0)
    const [s1, a] = step(undefined, { mention: m, market })
    expect(a).toHaveLength(1)
    const [s2, b] = step(s1, { mention: m, market })
    expect(s2).toBe(s1)
    expect(b).toEqual([])
  })

  it("keeps at most maxKolsPerToken cooldowns and maxTokens token states", () => {
    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, { id: `k${i}`, handle: `k${i}`, weight: 0 }]))
    const step = makeKolMentionStep(signalConfig({ kolMention: { maxKolsPerToken: 4 } }), makeInputs({}, many))
    let state
    for (let i = 0; i < 10; i++) state = step(state, { mention: mention(`k${i}`, T0 + i), market })[0]
    expect(state!.cooldowns.map(([id]) => id)).toEqual(["k6", "k7", "k8", "k9"])

    const detectors = new KolMentionDetectors(defaultSignalConfig, inputs, 3)
    for (let i = 0; i < 10; i++) detectors.apply({ mention: mention("alice", T0 + i, `tok${i}`), market })
    expect(detectors.size).toBe(3)
    expect(() => new KolMentionDetectors(defaultSignalConfig, inputs, 0)).toThrow(RangeError)
  })
})

describe("Signal helpers", () => {
  it("quality tiers at their edges, and the quality filter", () => {
    expect([qualityOf(39), qualityOf(40), qualityOf(69), qualityOf(70), qualityOf(100)]).toEqual(["low", "medium", "medium", "high", "high"])
    expect(matchesQuality("curated", "medium")).toBe(true)
    expect(matchesQuality("curated", "low")).toBe(false)
    expect(matchesQuality("all", "low")).toBe(true)
    expect(matchesQuality("high", "medium")).toBe(false)
  })

  it("USD is exact and floored at micro-USD", () => {
    // 1 lamport at $123.456789123 per SOL = $0.000000123456789123 → 0 micro-USD
    expect(usdMicrosOf(1n, 9, { num: 123456789123n, scale: 9 })).toBe(0n)
    expect(formatMicros(usdMicrosOf(1_234_567_891n, 9, { num: 150n, scale: 0 }))).toBe("185.185183")
    expect(formatMicros(usdMicrosOf(5n * 10n ** 17n, 18, { num: 300012n, scale: 2 }))).toBe("1500.06")
    expect(usdMicrosOf(1n, 9, undefined)).toBeNull()
    expect(formatMicros(null)).toBeNull()
  })

  it("ids depend only on pattern, chain, asset and trigger ids", () => {
    const a = signalId("confluence", "solana", "M", ["e1", "e2"])
    expect(signalId("confluence", "solana", "M", ["e1", "e2"])).toBe(a)
    expect(signalId("confluence", "hood", "M", ["e1", "e2"])).not.toBe(a)
    expect(signalId("confluence", "solana", "M", ["e1e2"])).not.toBe(a)
    expect(a).toMatch(/^sig_[0-9a-f]{24}$/)
  })
})
