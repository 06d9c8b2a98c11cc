import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { splitHoodReward } from "./HoodRewardSplit.js"

describe("splitHoodReward", () => {
  it("shares the allocation pro rata over the recipients' staked receipt, the remainder undistributed", () => {
    const split = splitHoodReward(1_000n, [
      { accountId: "a", stakedRaw: 1n, evmWallet: "0xa" },
      { accountId: "b", stakedRaw: 2n, evmWallet: "0xb" }
    ])
    expect(split.shares).toEqual([
      { accountId: "a", evmWallet: "0xa", stakedRaw: 1n, amountRaw: 333n },
      { accountId: "b", evmWallet: "0xb", stakedRaw: 2n, amountRaw: 666n }
    ])
    expect([split.eligibleStakedRaw, split.distributedRaw, split.undistributedRaw]).toEqual([3n, 999n, 1n])
  })

  it("an account without an EVM wallet forfeits: its weight leaves the denominator and the others share everything", () => {
    const split = splitHoodReward(900n, [
      { accountId: "a", stakedRaw: 100n, evmWallet: "0xa" },
      { accountId: "none", stakedRaw: 800n, evmWallet: undefined },
      { accountId: "b", stakedRaw: 200n, evmWallet: "0xb" }
    ])
    expect(split.shares.map((s) => [s.accountId, s.amountRaw])).toEqual([
      ["a", 300n],
      ["b", 600n]
    ])
    expect(split.forfeited).toEqual([{ accountId: "none", stakedRaw: 800n }])
    expect([split.eligibleStakedRaw, split.undistributedRaw]).toEqual([300n, 0n])
  })

  it("nobody eligible (or nothing staked): nothing is shared, the whole allocation stays undistributed", () => {
    expect(splitHoodReward(500n, [{ accountId: "none", stakedRaw: 5n, evmWallet: undefined }])).toMatchObject({ shares: [], distributedRaw: 0n, undistributedRaw: 500n })
    expect(splitHoodReward(500n, [{ accountId: "a", stakedRaw: 0n, evmWallet: "0xa" }])).toMatchObject({ shares: [], forfeited: [], undistributedRaw: 500n })
    expect(splitHoodReward(0n, [{ accountId: "a", stakedRaw: 7n, evmWallet: "0xa" }])).toMatchObject({ shares: [], undistributedRaw: 0n })
  })

  it("property: Σ shares + undistributed = allocation, each share is its floor, the remainder is below one unit per recipient", () => {
    const weight = fc.record({ stakedRaw: fc.bigInt({ min: 0n, max: 10n ** 24n }), hasEvm: fc.boolean() })
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 27n }), fc.array(weight, { maxLength: 30 }), (allocation, ws) => {
        const weights = ws.map((w, i) => ({ accountId: `a${i}`, stakedRaw: w.stakedRaw, evmWallet: w.hasEvm ? `0x${i}` : undefined }))
        const split = splitHoodReward(allocation, weights)
        const recipients = weights.filter((w) => w.stakedRaw > 0n && w.evmWallet !== undefined)
        const total = recipients.reduce((s, w) => s + w.stakedRaw, 0n)
        expect(split.distributedRaw + split.undistributedRaw).toBe(allocation)
        expect(split.eligibleStakedRaw).toBe(total)
        for (const s of split.shares) expect(s.amountRaw).toBe((allocation * s.stakedRaw) / total)
        if (total > 0n) expect(split.undistributedRaw < BigInt(Math.max(1, recipients.length))).toBe(true)
        expect(split.forfeited.length).toBe(weights.filter((w) => w.stakedRaw > 0n && w.evmWallet === undefined).length)
      })
    )
  })
})
