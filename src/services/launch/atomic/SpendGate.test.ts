/**
 * Spend gating of an atomic build at its bounds: each leg's cap, the per-wallet sum, the txLimit
 * once over the whole bundle, and the fail-closed rule; the holds a build reserves and when an
 * open hold stops weighing on the window.
 */
import { describe, expect, it } from "vitest"
import { DAY_MS, utcDayStart } from "../../keys/KeyRules.js"
import { gateBundle, type GateInput, type GateLeg, holdCounts, holdsOf, LIMIT_UNAVAILABLE_RETRY_AFTER_S } from "./SpendGate.js"

const NOW = Date.UTC(2026, 10, 25, 12)
const main = (position: number, amountRaw: bigint, feeRaw = 0n, wallet = "MAIN"): GateLeg => ({ position, payerKind: "main", wallet, amountRaw, feeRaw })
const linked = (position: number, amountRaw: bigint, feeRaw = 0n, wallet = "LINKED"): GateLeg => ({ position, payerKind: "linked", wallet, amountRaw, feeRaw })

// 1 SOL = $100: raw lamports → micro-dollars is raw / 10.
const input = (o: Partial<GateInput>): GateInput => ({
  keyPrefix: "abcd1234",
  asset: "sol",
  spendLimits: null,
  txLimit: null,
  legs: [],
  usedUsdMicros: 0,
  usdMicrosOf: (raw) => raw / 10n,
  nowMs: NOW,
  ...o
})

const refusal = (r: ReturnType<typeof gateBundle>) => (r._tag === "Refused" ? r.refusal : undefined)

describe("SpendGate", () => {
  it("each leg alone: amount plus fee at the cap passes, one unit above is refused naming the leg", () => {
    const spendLimits = [{ asset: "sol" as const, maxPerTxRaw: "1000" }]
    expect(gateBundle(input({ spendLimits, legs: [main(0, 990n, 10n, "A"), main(1, 995n, 5n, "B")] }))._tag).toBe("Allowed")
    const r = refusal(gateBundle(input({ spendLimits, legs: [main(0, 990n, 10n, "A"), main(1, 995n, 6n, "B")] })))
    expect(r?.field).toBe("firstBuys[1].amountRaw")
    expect(r?.error).toMatchObject({ reason: "spend_limit_exceeded", details: { spendLimit: { limitSource: "key", keyPrefix: "abcd1234", asset: "sol", capDecimal: "0.000001", attemptedDecimal: "0.000001001" } } })
  })

  it("summed per payer wallet: two legs under the cap from one wallet over it are refused at that wallet's first leg", () => {
    const spendLimits = [{ asset: "sol" as const, maxPerTxRaw: "1000" }]
    expect(gateBundle(input({ spendLimits, legs: [linked(0, 400n), main(1, 600n), linked(2, 600n, 0n, "OTHER"), main(3, 400n)] }))._tag).toBe("Allowed")
    const r = refusal(gateBundle(input({ spendLimits, legs: [linked(0, 400n, 0n, "X"), main(1, 600n), linked(2, 600n, 1n, "X")] })))
    expect(r?.field).toBe("firstBuys[0].amountRaw")
    expect(r?.error.details).toMatchObject({ spendLimit: { attemptedDecimal: "0.000001001" } })
  })

  it("a cap on another asset does not apply; no cap is uncapped", () => {
    expect(gateBundle(input({ spendLimits: [{ asset: "usdc", maxPerTxRaw: "1" }], legs: [main(0, 10n ** 18n)] }))._tag).toBe("Allowed")
  })

  it("txLimit once over the whole bundle: used + total at the limit passes, one micro-dollar above is KEY_LIMIT_REACHED", () => {
    const txLimit = { usdMicros: 1_000, reset: "daily" as const }
    // legs 3,000 + 4,000 + fees 1,000 raw = 8,000 raw = 800 micro-dollars; used 200.
    const legs = [main(0, 3_000n, 500n), linked(1, 4_000n, 500n)]
    expect(gateBundle(input({ txLimit, legs, usedUsdMicros: 200 }))).toEqual({ _tag: "Allowed", totalUsdMicros: 800n })
    const r = refusal(gateBundle(input({ txLimit, legs, usedUsdMicros: 201 })))
    expect(r?.error).toMatchObject({ reason: "tx_limit_reached", retryable: true, details: { resetsAt: utcDayStart(NOW) + DAY_MS } })
    const lifetime = refusal(gateBundle(input({ txLimit: { usdMicros: 1_000, reset: "never" }, legs, usedUsdMicros: 201 })))
    expect(lifetime?.error).toMatchObject({ retryable: false, details: { resetsAt: null } })
  })

  it("fails closed with a main payer when usage or price is unavailable; linked payers only pass", () => {
    const txLimit = { usdMicros: 1_000_000, reset: "weekly" as const }
    for (const o of [{ usedUsdMicros: null }, { usdMicrosOf: () => null }] satisfies Partial<GateInput>[]) {
      const r = refusal(gateBundle(input({ txLimit, legs: [linked(0, 1n), main(1, 1n)], ...o })))
      expect(r?.error).toMatchObject({ reason: "tx_limit_reached", retryable: true, details: { reason: "limit_unavailable", retryAfter: LIMIT_UNAVAILABLE_RETRY_AFTER_S } })
      expect(gateBundle(input({ txLimit, legs: [linked(0, 1n)], ...o }))._tag).toBe("Allowed")
    }
    // Without a txLimit nothing needs a price.
    expect(gateBundle(input({ legs: [main(0, 1n)], usedUsdMicros: null, usdMicrosOf: () => null }))._tag).toBe("Allowed")
  })

  it("holds: one per main-payer leg, amount plus fee, at the leg's index", () => {
    expect(holdsOf([linked(0, 5n, 1n), main(1, 100n, 3n), main(2, 7n)], (raw) => raw * 2n)).toEqual([
      { legIndex: 2, wallet: "MAIN", amountRaw: 103n, usdMicros: 206n },
      { legIndex: 3, wallet: "MAIN", amountRaw: 7n, usdMicros: 14n }
    ])
  })

  it("an open hold weighs on its own window only; a never window keeps it", () => {
    const dayStart = utcDayStart(NOW)
    expect(holdCounts("daily", dayStart, NOW)).toBe(true)
    expect(holdCounts("daily", dayStart - 1, NOW)).toBe(false)
    expect(holdCounts("monthly", dayStart - 1, NOW)).toBe(true)
    expect(holdCounts("never", 0, NOW)).toBe(true)
  })
})
