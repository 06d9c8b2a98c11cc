import { describe, expect, it } from "vitest"
import { buildSignal, type Pattern, type Signal } from "../../domain/Signal.js"
import { matchPersonal, matchReasons, PersonalIndex, type Rule } from "./Matcher.js"
import { isRuleProblem, validateRule } from "./Rules.js"

let n = 0
const sig = (o: { pattern?: Pattern; chain?: "solana" | "hood"; asset?: string; wallets?: string[]; walletIds?: string[]; sizeMicros?: bigint | null; details?: Signal["details"] }): Signal =>
  buildSignal({
    pattern: o.pattern ?? "large_move",
    chain: o.chain ?? "solana",
    asset: o.asset ?? `Tok${++n}`,
    symbol: null,
    direction: "in",
    wallets: o.wallets ?? [],
    walletIds: o.walletIds ?? [],
    groups: [],
    sizeUsdMicros: o.sizeMicros === undefined ? 1_000_000_000n : o.sizeMicros,
    mcapUsdMicros: null,
    createdAtMs: null,
    venue: null,
    confidence: 50,
    atMs: 0,
    position: "p",
    triggerIds: [String(++n)],
    details: o.details ?? {}
  })

const rule = (pattern: Pattern, params: unknown, walletId: string | null = null): Rule => {
  const v = validateRule(pattern, params)
  if (isRuleProblem(v)) throw new Error(v.message)
  return { id: `r_${pattern}`, pattern: v.pattern, walletId, params: v.params }
}

describe("matchPersonal", () => {
  it("follows match the token or a wallet on the same chain; Hood addresses ignore case", () => {
    const f = [{ id: "f1", chain: "hood" as const, address: "0xabc" }]
    expect(matchPersonal(sig({ chain: "hood", asset: "0xABC" }), f, [], [])).toBe(true)
    expect(matchPersonal(sig({ chain: "hood", wallets: ["0xAbC"] }), f, [], [])).toBe(true)
    expect(matchPersonal(sig({ chain: "solana", asset: "0xabc" }), f, [], [])).toBe(false)
    const sol = [{ id: "f2", chain: "solana" as const, address: "AbC" }]
    expect(matchPersonal(sig({ asset: "abc" }), sol, [], [])).toBe(false) // base58 is case-sensitive
  })

  it("min_usd is inclusive; a signal without a USD size never meets it", () => {
    const r = [rule("large_move", { min_usd: "1000" })]
    expect(matchPersonal(sig({ sizeMicros: 1_000_000_000n }), [], r, [])).toBe(true)
    expect(matchPersonal(sig({ sizeMicros: 999_999_999n }), [], r, [])).toBe(false)
    expect(matchPersonal(sig({ sizeMicros: null }), [], r, [])).toBe(false)
    expect(matchPersonal(sig({ pattern: "distribution" }), [], r, [])).toBe(false)
  })

  it("confluence: wallet_count at least `wallets`, the signal's window within `window_minutes`", () => {
    const r = [rule("confluence", { wallets: 4, window_minutes: 30 })]
    expect(matchPersonal(sig({ pattern: "confluence", details: { wallet_count: 4, window_minutes: 30 } }), [], r, [])).toBe(true)
    expect(matchPersonal(sig({ pattern: "confluence", details: { wallet_count: 3, window_minutes: 30 } }), [], r, [])).toBe(false)
    const narrow = [rule("confluence", { wallets: 2, window_minutes: 30 })]
    expect(matchPersonal(sig({ pattern: "confluence", details: { wallet_count: 3, window_minutes: 45 } }), [], narrow, [])).toBe(false)
  })

  it("dormancy days and the rule's wallet_id", () => {
    const r = [rule("dormancy", { days: 10 }, "sol_dev1")]
    expect(matchPersonal(sig({ pattern: "dormancy", walletIds: ["sol_dev1"], details: { silent_days: 10 } }), [], r, [])).toBe(true)
    expect(matchPersonal(sig({ pattern: "dormancy", walletIds: ["sol_dev1"], details: { silent_days: 9 } }), [], r, [])).toBe(false)
    expect(matchPersonal(sig({ pattern: "dormancy", walletIds: ["sol_dev2"], details: { silent_days: 30 } }), [], r, [])).toBe(false)
  })

  it("own groups match on a member wallet, not on the token", () => {
    const g = [{ id: "g1", wallets: [{ chain: "solana" as const, address: "W1" }] }]
    expect(matchReasons(sig({ wallets: ["W1"] }), [], [], g)).toEqual([{ kind: "group", id: "g1" }])
    expect(matchPersonal(sig({ asset: "W1" }), [], [], g)).toBe(false)
  })

  it("the index fans out to exactly the accounts matchReasons accepts", () => {
    const index = new PersonalIndex(
      new Map([
        ["a", { follows: [{ id: "f", chain: "solana" as const, address: "T1" }], rules: [], groups: [] }],
        ["b", { follows: [], rules: [rule("large_move", { min_usd: "5000" })], groups: [] }],
        ["c", { follows: [], rules: [], groups: [{ id: "g", wallets: [{ chain: "solana" as const, address: "W9" }] }] }]
      ])
    )
    expect(index.matches(sig({ asset: "T1", wallets: ["W9"] })).map((m) => m.accountId)).toEqual(["a", "c"])
    expect(index.matches(sig({ sizeMicros: 5_000_000_000n })).map((m) => m.accountId)).toEqual(["b"])
    expect(index.matches(sig({ pattern: "deployer" }))).toEqual([])
  })
})
