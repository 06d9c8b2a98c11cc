/**
 * The agent quote's venue math equals what the Solana localnet's svc-curve executes, to the raw
 * unit (issue 28, deliverable 2): random sequences of buys and sells on the curve (small V and G,
 * so sequences cross graduation: Solana fills a crossing buy in full), then on the pool the curve
 * migrates into (exp-* creator fees 0, 1 % and 2 %). Each trade is quoted by `quoteVenue` on the
 * state read before it and sent with the quote's `minAmountOut`; the fill, the venue fee and the
 * creator's part (the fee vault's `creatorOwedRaw`) must equal the quote.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { getBuyInstruction, getMigrateInstruction, getPoolSwapInstruction, getSellInstruction } from "../../chain/solana/client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../../chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../chain/solana/client/SplInstructions.js"
import { Ledger } from "../../chain/solana/localnet/Ledger.js"
import { ataOf, expectOk, launchCurve, readCurve, readFeeVault, readPool, send, tokenBalance } from "../../chain/solana/localnet/testkit.js"
import { curveParamsOf, curveStateOf } from "../../chain/solana/program/accounts/Curve.js"
import { WSOL_MINT_ADDRESS } from "../../chain/solana/program/ProgramIds.js"
import { minOutOf, quoteVenue, type VenueState } from "./VenueQuote.js"

const SOL = 1_000_000_000n
const seed = Date.now() % 2 ** 31
console.log(`VenueQuote.solana: fast-check seed ${seed}`)

type Op = { readonly side: "buy"; readonly amount: bigint } | { readonly side: "sell"; readonly percent: number }
const ops = fc.array(
  fc.oneof(
    fc.record({ side: fc.constant("buy" as const), amount: fc.bigInt({ min: 1n, max: 4n * SOL }) }),
    fc.record({ side: fc.constant("sell" as const), percent: fc.integer({ min: 1, max: 100 }) })
  ),
  { minLength: 1, maxLength: 8 }
)

describe("Solana venue quotes equal execution", () => {
  it("curve then pool: every fill, venue fee and creator fee equals quoteVenue on the state before it", async () => {
    const ledger = new Ledger()
    const creator = await devSigner(0)
    const trader = await devSigner(4)
    const keeper = await keeperSigner()
    let pooled = 0
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 100, 200), ops, ops, async (creatorFeeBps, onCurve: Op[], onPool: Op[]) => {
        const c = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 4n * SOL, thresholdRaw: 5n * SOL, mode: "exp-a", creatorFeeBps, stakerAllocationBps: 500 })
        const mint = c.mint.address
        const ata = ataOf(trader.address, mint)
        expectOk(ledger, await send(ledger, trader, [getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint })]))
        const trade = async (venue: VenueState, op: Op, pool: boolean) => {
          ledger.advanceSlot()
          const held = tokenBalance(ledger, ata)
          const amount = op.side === "buy" ? op.amount : (held * BigInt(op.percent)) / 100n
          if (amount === 0n) return
          const q = quoteVenue(venue, op.side, amount)
          // A dust trade whose output rounds to nothing is refused by the quote (nothing to fill); the property is about fills.
          if (q._tag === "Refused" && q.reason === "zero_amount") return
          if (q._tag !== "Filled") throw new Error(`unexpected refusal ${JSON.stringify(q)}`)
          const owed = readFeeVault(ledger, c.addresses.feeVault).creatorOwedRaw
          const input = { trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: amount, minAmountOutRaw: minOutOf(q, 0n) }
          const ix = pool ? await getPoolSwapInstruction({ ...input, side: op.side }) : op.side === "buy" ? await getBuyInstruction(input) : await getSellInstruction(input)
          const r = expectOk(ledger, await send(ledger, trader, [ix]))
          expect(r._tag).toBe("Landed")
          expect(tokenBalance(ledger, ata) - held).toBe(op.side === "buy" ? q.amountOut : -amount)
          expect(readFeeVault(ledger, c.addresses.feeVault).creatorOwedRaw - owed).toBe(q.creatorFeeRaw)
          expect(q.amountConsumed).toBe(amount)
          expect(q.refund).toBe(0n)
        }
        for (const op of onCurve) {
          const curve = readCurve(ledger, c.addresses.curve)
          if (curve.lifecycle !== "trading") break
          const fv = readFeeVault(ledger, c.addresses.feeVault)
          await trade({ _tag: "Curve", params: curveParamsOf(curve), state: curveStateOf(curve), creatorShareBps: BigInt(fv.creatorShareBps) }, op, false)
        }
        if (readCurve(ledger, c.addresses.curve).lifecycle === "trading") {
          expectOk(ledger, await send(ledger, trader, [await getBuyInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: 6n * SOL, minAmountOutRaw: 0n })]))
        }
        expectOk(ledger, await send(ledger, keeper, [await getMigrateInstruction({ keeper, mint, quoteMint: WSOL_MINT_ADDRESS })]))
        for (const op of onPool) {
          const p = readPool(ledger, c.addresses.pool)
          pooled++
          await trade({ _tag: "SolanaPool", reserves: p, fees: { feeBps: BigInt(p.feeBps), creatorFeeBps: BigInt(p.creatorFeeBps) } }, op, true)
        }
      }),
      { seed, numRuns: 20 }
    )
    expect(pooled).toBeGreaterThan(0)
  }, 120_000)
})
