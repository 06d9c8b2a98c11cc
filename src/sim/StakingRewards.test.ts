import { describe, expect, it } from "vitest"
import { devSigner } from "../chain/solana/client/DevSigners.js"
import { claimRewardInstructions } from "../chain/solana/client/StakeInstructions.js"
import { distributeRound } from "../chain/solana/localnet/Faucet.js"
import { Ledger } from "../chain/solana/localnet/Ledger.js"
import { ataOf, expectOk, send, tokenBalance } from "../chain/solana/localnet/testkit.js"
import { STAKED_SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../chain/solana/program/ProgramIds.js"
import { unclaimedRewardsOf } from "../chain/solana/program/staking/Rewards.js"

const options = { everyMs: 1, baseRaw: 1_000_000n, stakedRawPerUnit: 10_000n, maxUnclaimedPerOwner: 3 }

describe("simulated staking rewards", () => {
  it("rewards each wallet base plus its stake's share, up to the unclaimed bound, and again after a claim", async () => {
    const ledger = new Ledger()
    const owner = await devSigner(2)
    const staker = await devSigner(3)
    expectOk(ledger, ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, staker.address, 500_000_000_000n))
    const scan = (f: Parameters<Parameters<typeof unclaimedRewardsOf>[0]>[0]) => ledger.getProgramAccounts(...f)
    expect(distributeRound(ledger, [owner.address, staker.address], options)).toEqual([0n, 1n])
    expect(unclaimedRewardsOf(scan, staker.address).map((r) => r.amountRaw)).toEqual([1_000_000n + 50_000_000n])
    for (let i = 0; i < 4; i++) {
      ledger.advanceSlot()
      distributeRound(ledger, [owner.address], options)
    }
    // At the bound (3 unclaimed) no more; a claim makes room for one.
    expect(unclaimedRewardsOf(scan, owner.address).map((r) => r.rewardId)).toEqual([0n, 2n, 3n])
    expectOk(ledger, await send(ledger, owner, claimRewardInstructions({ payer: owner, rewardId: 0n, owner: owner.address, mint: USDC_MINT_ADDRESS })))
    expect(tokenBalance(ledger, ataOf(owner.address, USDC_MINT_ADDRESS))).toBe(1_000_000n)
    ledger.advanceSlot()
    expect(distributeRound(ledger, [owner.address], options)).toEqual([4n])
    expect(unclaimedRewardsOf(scan, owner.address).map((r) => r.rewardId)).toEqual([2n, 3n, 4n])
  })
})
