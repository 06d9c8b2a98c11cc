import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { planById, resolvePlans } from "../../domain/Plans.js"
import {
  checkSpendCap,
  checkTxLimit,
  effectiveCaps,
  isoWeekStart,
  onlyTightens,
  parseUsageDays,
  txWindowResetsAt,
  txWindowStart,
  usageSeries,
  usageSummary
} from "./KeyRules.js"
import { TtlLru } from "./TtlLru.js"
import { hashesEqual, hashToken, mintToken, parseToken, verifyToken } from "./Tokens.js"

const plans = resolvePlans({}, 30)

describe("caps", () => {
  it("enforce the higher of the key row and the plan, and say which plan raised them", () => {
    expect(effectiveCaps({ rateLimitPerMin: 30, dailyLaunchCap: 5 }, planById(plans, "max"))).toEqual({
      effective: { rateLimitPerMin: 600, dailyLaunchCap: 1000 },
      raisedBy: "max"
    })
    expect(effectiveCaps({ rateLimitPerMin: 600, dailyLaunchCap: 1000 }, planById(plans, "free"))).toEqual({
      effective: { rateLimitPerMin: 600, dailyLaunchCap: 1000 },
      raisedBy: null
    })
  })
  it("a legacy believer row (daily cap 20) on Free enforces 5", () => {
    expect(effectiveCaps({ rateLimitPerMin: 30, dailyLaunchCap: 20 }, planById(plans, "free")).effective.dailyLaunchCap).toBe(5)
    expect(effectiveCaps({ rateLimitPerMin: 30, dailyLaunchCap: 20 }, planById(plans, "pro")).effective.dailyLaunchCap).toBe(50)
  })
})

describe("spend limits", () => {
  const sol = (raw: string) => ({ asset: "sol" as const, maxPerTxRaw: raw })
  it("tighten only: adding or lowering caps tightens, removing or raising loosens", () => {
    expect(onlyTightens(null, [sol("1")])).toBe(true)
    expect(onlyTightens([sol("5")], [sol("5")])).toBe(true)
    expect(onlyTightens([sol("5")], [sol("4"), { asset: "eth", maxPerTxRaw: "1" }])).toBe(true)
    expect(onlyTightens([sol("5")], [sol("6")])).toBe(false)
    expect(onlyTightens([sol("5")], null)).toBe(false)
    expect(onlyTightens([sol("5")], [{ asset: "eth", maxPerTxRaw: "1" }])).toBe(false)
  })
  it("the cap check refuses over the cap with decimals at the bound (SPEND_LIMIT_EXCEEDED: api/ErrorTable.test.ts)", () => {
    expect(checkSpendCap([sol("1500000000")], "ABCDEFGH", "sol", 1_500_000_000n)).toBeUndefined()
    const e = checkSpendCap([sol("1500000000")], "ABCDEFGH", "sol", 1_500_000_001n)
    expect(e?.reason).toBe("spend_limit_exceeded")
    expect(e?.details?.spendLimit).toEqual({ limitSource: "key", keyPrefix: "ABCDEFGH", asset: "sol", capDecimal: "1.5", attemptedDecimal: "1.500000001" })
    expect(checkSpendCap([sol("1")], "ABCDEFGH", "usdc", 10n ** 30n)).toBeUndefined()
  })
})

describe("txLimit windows", () => {
  const wed = Date.UTC(2026, 9, 14, 15, 30) // Wednesday
  it("daily, ISO weekly, monthly and lifetime windows", () => {
    expect(txWindowStart("daily", wed)).toBe(Date.UTC(2026, 9, 14))
    expect(txWindowStart("weekly", wed)).toBe(Date.UTC(2026, 9, 12)) // Monday
    expect(isoWeekStart(Date.UTC(2026, 9, 18, 23))).toBe(Date.UTC(2026, 9, 12)) // Sunday belongs to the week before
    expect(txWindowStart("monthly", wed)).toBe(Date.UTC(2026, 9, 1))
    expect(txWindowResetsAt("monthly", Date.UTC(2026, 11, 31))).toBe(Date.UTC(2027, 0, 1))
    expect(txWindowResetsAt("never", wed)).toBeNull()
  })
  it("txLimit refused past the limit with resetsAt; at the limit allowed (KEY_LIMIT_REACHED: api/ErrorTable.test.ts)", () => {
    const limit = { usdMicros: 100, reset: "daily" as const }
    expect(checkTxLimit(limit, 60, 40, wed)).toBeUndefined()
    const e = checkTxLimit(limit, 60, 41, wed)
    expect(e?.reason).toBe("tx_limit_reached")
    expect(e?.details?.resetsAt).toBe(Date.UTC(2026, 9, 15))
    expect(checkTxLimit({ usdMicros: 1, reset: "never" }, 1, 1, wed)?.details?.resetsAt).toBeNull()
  })
})

describe("usage", () => {
  const now = Date.UTC(2026, 9, 14, 12) // Wednesday 14 Oct
  it("rolls daily rows into today, ISO week, month, 30 days and lifetime", () => {
    const rows = [
      { day: "2026-10-14", usdMicros: 1, tradeCount: 1, launchCount: 0 },
      { day: "2026-10-12", usdMicros: 10, tradeCount: 1, launchCount: 1 },
      { day: "2026-10-11", usdMicros: 100, tradeCount: 1, launchCount: 0 },
      { day: "2026-09-20", usdMicros: 1000, tradeCount: 1, launchCount: 1 },
      { day: "2026-09-14", usdMicros: 10000, tradeCount: 1, launchCount: 0 }
    ]
    expect(usageSummary(rows, { usdMicros: 99999, launches: 7 }, now)).toEqual({
      todayUsdMicros: 1,
      weekUsdMicros: 11,
      monthUsdMicros: 111,
      lifetimeUsdMicros: 99999,
      days30UsdMicros: 1111,
      tradeCount30: 4,
      launchCount30: 2,
      lifetimeLaunches: 7
    })
  })
  it("the series is zero-filled, ascending, and days clamp to 1..90", () => {
    expect(usageSeries([{ day: "2026-10-13", usdMicros: 5, tradeCount: 1, launchCount: 0 }], 3, now).map((d) => [d.day, d.usdMicros])).toEqual([
      ["2026-10-12", 0],
      ["2026-10-13", 5],
      ["2026-10-14", 0]
    ])
    expect([parseUsageDays(null), parseUsageDays("0"), parseUsageDays("-5"), parseUsageDays("91"), parseUsageDays("7")]).toEqual([30, 1, 1, 90, 7])
  })
})

describe("tokens", () => {
  it("mints distinct, well-formed tokens whose hash verifies and nothing else does", () => {
    const a = mintToken("live")
    const b = mintToken("live")
    expect(a.token).not.toBe(b.token)
    expect(parseToken(a.token)).toEqual({ kind: "live", prefix: a.prefix })
    expect(parseToken(mintToken("device").token)?.kind).toBe("device")
    expect(verifyToken(a.token, a.hash)).toBe(true)
    expect(verifyToken(b.token, a.hash)).toBe(false)
    expect(verifyToken(a.token, "")).toBe(false)
    expect(hashToken(a.token)).toBe(a.hash)
    for (const bad of ["svc_live_", "svc_live_0" + a.token.slice(10), a.token + "1", "svc_prod_" + a.token.slice(9), a.token.slice(0, -1)]) {
      expect(parseToken(bad), bad).toBeUndefined()
    }
  })
})

describe("token hashes", () => {
  /** The stored hash changed a little: one hex digit replaced, cut short, extended, its case mixed. */
  const nearMiss = fc.oneof(
    fc.tuple(fc.nat(63), fc.constantFrom(..."0123456789abcdefg")).map(([i, c]) => (h: string) => h.slice(0, i) + c + h.slice(i + 1)),
    fc.nat(64).map((n) => (h: string) => h.slice(0, n)),
    fc.constantFrom("0", "00", "z", " ").map((tail) => (h: string) => h + tail),
    fc.nat(63).map((i) => (h: string) => h.slice(0, i) + h.slice(i).toUpperCase())
  )
  it("hashToken is sha-256 of the UTF-8 bytes in hex, as @noble/hashes computes it; verifyToken agrees with hashesEqual over it", () => {
    expect(hashToken("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31)
    console.log(`token hashes property: FC_SEED=${seed}`)
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 80 }), fc.string({ maxLength: 70 }), nearMiss, (token, other, miss) => {
        expect(hashToken(token)).toBe(bytesToHex(sha256(utf8ToBytes(token))))
        expect(verifyToken(token, hashToken(token))).toBe(true)
        expect(verifyToken(token, other)).toBe(hashesEqual(hashToken(token), other))
        // A random string is almost never the hash: the near misses of the real one make the two agree on both answers.
        const near = miss(hashToken(token))
        expect(verifyToken(token, near), near).toBe(hashesEqual(hashToken(token), near))
        expect(verifyToken(token, hashToken(token).toUpperCase())).toBe(true)
        expect(verifyToken(token, "")).toBe(false)
      }),
      { seed, numRuns: 300 }
    )
  })
})

describe("TtlLru", () => {
  it("holds at most maxEntries, evicting the least recently used", () => {
    const c = new TtlLru<string, number>({ maxEntries: 2, ttlMs: 1000 })
    c.set("a", 1, 0)
    c.set("b", 2, 0)
    expect(c.get("a", 1)).toBe(1) // a is now most recent
    c.set("c", 3, 2)
    expect(c.size).toBe(2)
    expect(c.get("b", 3)).toBeUndefined()
    expect(c.get("a", 3)).toBe(1)
  })
  it("expires entries at their TTL", () => {
    const c = new TtlLru<string, number>({ maxEntries: 10, ttlMs: 100 })
    c.set("a", 1, 0)
    expect(c.get("a", 99)).toBe(1)
    expect(c.get("a", 100)).toBeUndefined()
    expect(c.size).toBe(0)
  })
})
