import { getAddress, type Hash } from "viem"
import { describe, expect, it } from "vitest"
import type { DevBuyReport, HoodLaunchInput } from "../HoodHeadlessLaunch.js"
import { devBuyJson, keyOf, report, wantsDevBuy } from "./HoodHeadlessRules.js"

const treasury = getAddress("0x2222222222222222222222222222222222222222")
const hash = `0x${"ab".repeat(32)}` as Hash
const base = {
  amountInRaw: 10n,
  minAmountOutRaw: 9n,
  amountOutRaw: null,
  feeOutcome: "not_sent",
  fee: { bps: 100, feeRaw: 1n, treasury },
  feeSignature: null,
  notSentBecause: null
} as const

describe("HoodHeadlessRules", () => {
  it("a landed buy's hash is its signature; pending, lapsed and reverted ones carry it as pendingSignature; unknown carries neither", () => {
    expect(report({ ...base, outcome: "landed" }, hash)).toMatchObject({ signature: hash, pendingSignature: null })
    for (const outcome of ["pending", "lapsed", "reverted"] as const) expect(report({ ...base, outcome }, hash)).toMatchObject({ signature: null, pendingSignature: hash })
    expect(report({ ...base, outcome: "unknown" }, hash)).toMatchObject({ signature: null, pendingSignature: null })
  })

  it("the stored devBuy names only the hashes it has, and the fee as decimal strings", () => {
    const landed: DevBuyReport = report({ ...base, outcome: "landed" }, hash)
    expect(devBuyJson(landed)).toEqual({ signature: hash, outcome: "landed", feeOutcome: "not_sent", fee: { bps: 100, feeRaw: "1", treasury } })
    expect(devBuyJson(report({ ...base, outcome: "pending" }, hash))).toEqual({ outcome: "pending", pendingSignature: hash, feeOutcome: "not_sent", fee: { bps: 100, feeRaw: "1", treasury } })
  })

  it("only an ETH launch with a nonzero buyAmount buys", () => {
    const input = (quoteAsset: string, buyAmountRaw: bigint) => ({ request: { quoteAsset, buyAmountRaw } }) as unknown as HoodLaunchInput
    expect(wantsDevBuy(input("eth", 1n))).toBe(true)
    expect(wantsDevBuy(input("eth", 0n))).toBe(false)
    expect(wantsDevBuy(input("usdg", 1n))).toBe(false)
  })

  it("dev-buy statuses are keyed by account and clientLaunchId, whatever the attempt", () => {
    expect(keyOf({ accountId: "a", clientLaunchId: "b" })).toBe(keyOf({ accountId: "a", clientLaunchId: "b", attempt: 2 } as never))
    expect(keyOf({ accountId: "a", clientLaunchId: "b" })).not.toBe(keyOf({ accountId: "ab", clientLaunchId: "" }))
  })
})
