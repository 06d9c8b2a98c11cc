/**
 * The ladder equals sequential execution, to the unit: against `quoteBuy` applied leg after leg
 * (many random ladders), and against the localnet's svc-curve program executing the launch and
 * the legs as one block-engine bundle (fewer runs: each signs up to five transactions), including
 * ladders that cross graduation. Random sizes, curve fees, plans' platform fees and referral.
 */
import type { KeyPairSigner } from "@solana/kit"
import { generateKeyPairSigner } from "@solana/kit"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type CurveParams, initialState, quoteBuy, tokenReserveRaw } from "../../../domain/CurveMath.js"
import { findCurveAddresses, getCreateCurveInstruction } from "../../../chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../../chain/solana/client/DevSigners.js"
import { getTransferSolInstruction } from "../../../chain/solana/client/SplInstructions.js"
import { signTransactionMessage } from "../../../chain/solana/client/Transactions.js"
import { assembleBuyLeg, deliveredTokensRaw } from "../../../chain/solana/launch/BuyLegTransaction.js"
import { curveStateOf } from "../../../chain/solana/program/accounts/Curve.js"
import { WSOL_MINT_ADDRESS } from "../../../chain/solana/program/ProgramIds.js"
import { Ledger } from "../../../chain/solana/localnet/Ledger.js"
import { readCurve, signInstructions } from "../../../chain/solana/localnet/testkit.js"
import { FIRST_BUYS_MAX, ladderPlatformFeeRaw, priceLadder } from "./PricingLadder.js"

const SOL = 1_000_000_000n
const SUPPLY = 1_000_000_000_000_000n
const PLAN_FEE_BPS = [100n, 50n, 25n] as const // Free, Pro, Max (document 2, 2.2)

const params = (v: bigint, g: bigint, feeBps: bigint, stakerBps = 50n): CurveParams => ({
  virtualQuoteRaw: v,
  thresholdRaw: g,
  tokenReserveRaw: tokenReserveRaw(SUPPLY, stakerBps),
  feeBps,
  crossingModel: "full-fill-surplus"
})

const ladders = fc.record({
  v: fc.bigInt({ min: 1n * SOL, max: 30n * SOL }),
  g: fc.bigInt({ min: 1n * SOL, max: 20n * SOL }),
  curveFeeBps: fc.constantFrom(0n, 100n, 250n),
  platformFeeBps: fc.constantFrom(...PLAN_FEE_BPS),
  referred: fc.boolean(),
  amounts: fc.array(fc.bigInt({ min: 1n, max: 8n * SOL }), { minLength: 1, maxLength: FIRST_BUYS_MAX })
})

describe("PricingLadder", () => {
  it("equals quoteBuy applied leg after leg, and refuses exactly the first leg the curve cannot fill", () => {
    fc.assert(
      fc.property(ladders, (l) => {
        const p = params(l.v, l.g, l.curveFeeBps)
        const ladder = priceLadder({ curveParams: p, amountsRaw: l.amounts, platformFeeBps: l.platformFeeBps, referred: l.referred })
        let state = initialState(p)
        const fills: Array<Extract<ReturnType<typeof quoteBuy>, { _tag: "Filled" }>> = []
        for (let i = 0; i < l.amounts.length; i++) {
          const q = quoteBuy(p, state, l.amounts[i]!)
          if (q._tag === "Refused" || q.amountOut === 0n) {
            expect(ladder).toEqual({ _tag: "Unpriceable", position: i, reason: q._tag === "Refused" ? q.reason : "zero_fill" })
            return
          }
          fills.push(q)
          state = q.next
        }
        if (ladder._tag !== "Priced") throw new Error("every leg fills but the ladder refused")
        fills.forEach((q, i) => {
          const leg = ladder.legs[i]!
          expect(leg.index).toBe(i + 1)
          expect(leg.amountOutRaw).toBe(q.amountOut)
          expect(leg.minAmountOutRaw).toBe((q.amountOut * 9_900n) / 10_000n)
          expect(leg.curveFeeRaw).toBe(q.fee)
          expect(leg.platformFeeRaw).toBe(ladderPlatformFeeRaw(l.amounts[i]!, l.platformFeeBps, l.referred))
          expect(leg.after).toEqual(q.next)
          expect(leg.crossesGraduation).toBe(q.crossesGraduation)
        })
        expect(ladder.final).toEqual(state)
        expect(ladder.graduates).toBe(state.complete)
      }),
      { numRuns: 2_000 }
    )
  })

  it("minimum is the fill less 100 bps, rounded down, at the rounding bounds", () => {
    const p = params(5n * SOL, 10n * SOL, 100n)
    const ladder = priceLadder({ curveParams: p, amountsRaw: [SOL, 3n], platformFeeBps: 50n, referred: false })
    if (ladder._tag !== "Priced") throw new Error("unpriced")
    const [a, b] = ladder.legs
    expect(a!.minAmountOutRaw).toBe((a!.amountOutRaw * 99n) / 100n)
    // A tiny leg: fill so small that 1% of it rounds away entirely, and never up.
    expect(b!.minAmountOutRaw).toBe((b!.amountOutRaw * 99n) / 100n)
    expect(b!.minAmountOutRaw).toBeLessThanOrEqual(b!.amountOutRaw)
  })

  it("platform fee: plan bps rounded up; a referred account pays 10% less, rounded up", () => {
    expect(ladderPlatformFeeRaw(1_000_000n, 50n, false)).toBe(5_000n)
    expect(ladderPlatformFeeRaw(1_000_000n, 50n, true)).toBe(4_500n)
    expect(ladderPlatformFeeRaw(1_000_001n, 25n, false)).toBe(2_501n) // 2500.0025 up
    expect(ladderPlatformFeeRaw(1_000_001n, 25n, true)).toBe(2_251n) // 2250.00225 up
    expect(ladderPlatformFeeRaw(1n, 100n, true)).toBe(1n)
    expect(ladderPlatformFeeRaw(0n, 100n, true)).toBe(0n)
  })

  it("a ladder that crosses graduation prices the crossing leg and refuses any leg after it", () => {
    const p = params(5n * SOL, 10n * SOL, 100n)
    const crossing = priceLadder({ curveParams: p, amountsRaw: [4n * SOL, 8n * SOL], platformFeeBps: 25n, referred: false })
    if (crossing._tag !== "Priced") throw new Error("unpriced")
    expect(crossing.legs.map((l) => l.crossesGraduation)).toEqual([false, true])
    expect(crossing.graduates).toBe(true)
    expect(crossing.final.complete).toBe(true)
    expect(crossing.final.realQuoteRaw).toBeGreaterThan(p.thresholdRaw) // Solana keeps the surplus
    const after = priceLadder({ curveParams: p, amountsRaw: [4n * SOL, 8n * SOL, SOL], platformFeeBps: 25n, referred: false })
    expect(after).toEqual({ _tag: "Unpriceable", position: 2, reason: "curve_complete" })
  })

  it("refuses a leg with a zero net or zero fill, naming its position", () => {
    const p = params(5n * SOL, 10n * SOL, 100n)
    expect(priceLadder({ curveParams: p, amountsRaw: [SOL, 1n], platformFeeBps: 25n, referred: false })).toEqual({
      _tag: "Unpriceable",
      position: 1,
      reason: "zero_amount"
    })
    expect(priceLadder({ curveParams: p, amountsRaw: [0n], platformFeeBps: 25n, referred: false })).toMatchObject({ position: 0 })
  })

  it("equals the localnet's execution of the launch and its legs as one bundle, to the unit, including graduation", async () => {
    const ledger = new Ledger()
    const creator = await devSigner(0)
    const buyers: KeyPairSigner[] = await Promise.all([devSigner(1), devSigner(2), devSigner(3)])
    const treasury = (await generateKeyPairSigner()).address
    const tip = ledger.tipAccounts[0]!
    let graduated = 0
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          v: fc.bigInt({ min: 1n * SOL, max: 10n * SOL }),
          g: fc.bigInt({ min: 1n * SOL, max: 8n * SOL }),
          platformFeeBps: fc.constantFrom(...PLAN_FEE_BPS),
          referred: fc.boolean(),
          legs: fc.array(fc.record({ amount: fc.bigInt({ min: SOL / 1000n, max: 5n * SOL }), buyer: fc.integer({ min: 0, max: 2 }) }), {
            minLength: 1,
            maxLength: FIRST_BUYS_MAX
          })
        }),
        async (l) => {
          ledger.advanceSlot()
          const mint = await generateKeyPairSigner()
          const p = params(l.v, l.g, 100n)
          const ladder = priceLadder({ curveParams: p, amountsRaw: l.legs.map((x) => x.amount), platformFeeBps: l.platformFeeBps, referred: l.referred })
          if (ladder._tag !== "Priced") return
          const lifetime = ledger.latestBlockhash()
          const launch = await signInstructions(ledger, creator, [
            await getCreateCurveInstruction({
              creator,
              mint,
              quoteMint: WSOL_MINT_ADDRESS,
              virtualQuoteRaw: l.v,
              thresholdRaw: l.g,
              supplyRaw: SUPPLY,
              stakerAllocationBps: 50,
              mode: "open",
              creatorFeeBps: 0,
              name: "Ladder",
              symbol: "LAD",
              uri: "https://example.com/l.json"
            }),
            getTransferSolInstruction({ from: creator, to: tip, lamports: 100_000n })
          ])
          const legs = await Promise.all(
            ladder.legs.map(async (leg, i) =>
              signTransactionMessage(
                await assembleBuyLeg({
                  buyer: buyers[l.legs[i]!.buyer]!,
                  mint: mint.address,
                  quoteMint: WSOL_MINT_ADDRESS,
                  amountInRaw: leg.amountInRaw,
                  minAmountOutRaw: leg.minAmountOutRaw,
                  platformFee: { feeRaw: leg.platformFeeRaw, treasury },
                  lifetime
                })
              )
            )
          )
          const treasuryBefore = ledger.getBalance(treasury)
          const r = ledger.submitBundle([launch.wireBytes, ...legs.map((t) => t.wireBytes)])
          if (r._tag !== "Landed") throw new Error(`bundle refused: ${r.reason} ${r.detail}`)
          ladder.legs.forEach((leg, i) => {
            const tx = ledger.getTransaction(r.signatures[i + 1]!)!
            expect(tx.err).toBeNull()
            const buyer = buyers[l.legs[i]!.buyer]!.address
            expect(deliveredTokensRaw(tx.preTokenBalances, tx.postTokenBalances, buyer, mint.address)).toBe(leg.amountOutRaw)
          })
          const curve = readCurve(ledger, (await findCurveAddresses(mint.address)).curve)
          expect(curveStateOf(curve)).toEqual(ladder.final)
          expect(ledger.getBalance(treasury) - treasuryBefore).toBe(ladder.legs.reduce((s, x) => s + x.platformFeeRaw, 0n))
          if (ladder.graduates) graduated++
        }
      ),
      { numRuns: 20, examples: [[{ v: 5n * SOL, g: 2n * SOL, platformFeeBps: 50n, referred: true, legs: [{ amount: SOL, buyer: 0 }, { amount: 2n * SOL, buyer: 0 }] }]] }
    )
    expect(graduated).toBeGreaterThan(0)
  })
})
