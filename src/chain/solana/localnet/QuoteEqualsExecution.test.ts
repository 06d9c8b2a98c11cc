/**
 * The property DESIGN.md pins: a quote equals what the program executes, to the unit. For random
 * sequences of buys and sells on a fresh curve (small V and G, so some sequences graduate and hit
 * the closed sides), every executed fill equals `quoteBuy`/`quoteSell` on the state read just
 * before it, every refusal is the quote's refusal, and the same holds for pool swaps against
 * PoolMath after migration.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { quoteBuy, quoteSell } from "../../../domain/CurveMath.js"
import { getBuyInstruction, getMigrateInstruction, getPoolSwapInstruction, getSellInstruction } from "../client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../client/SplInstructions.js"
import { curveParamsOf, curveStateOf } from "../program/accounts/Curve.js"
import { refusalError, SvcCurveError } from "../program/Errors.js"
import { quotePoolBuy, quotePoolSell } from "../program/PoolMath.js"
import { WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { Ledger } from "./Ledger.js"
import { ataOf, expectOk, launchCurve, readCurve, readPool, send, tokenBalance } from "./testkit.js"
import { customErrorCode } from "./TransactionError.js"

const SOL = 1_000_000_000n
const TX_FEE = 5_000n

type Op = { readonly side: "buy"; readonly amount: bigint } | { readonly side: "sell"; readonly percent: number }

const ops = fc.array(
  fc.oneof(
    fc.record({ side: fc.constant("buy" as const), amount: fc.bigInt({ min: 0n, max: 4n * SOL }) }),
    fc.record({ side: fc.constant("sell" as const), percent: fc.integer({ min: 0, max: 110 }) })
  ),
  { minLength: 1, maxLength: 8 }
)

describe("quote equals execution", () => {
  it("every curve fill equals quoteBuy/quoteSell on the state before it, to the unit", async () => {
    const ledger = new Ledger()
    const creator = await devSigner(0)
    const trader = await devSigner(2)
    await fc.assert(
      fc.asyncProperty(ops, async (sequence: Op[]) => {
        const c = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 5n * SOL, thresholdRaw: 10n * SOL })
        const ata = ataOf(trader.address, c.mint.address)
        expectOk(ledger, await send(ledger, trader, [getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint: c.mint.address })]))
        for (const op of sequence) {
          ledger.advanceSlot() // a fresh blockhash: two identical ops are two transactions
          const before = readCurve(ledger, c.addresses.curve)
          const held = tokenBalance(ledger, ata)
          const lamports = ledger.getBalance(trader.address)
          const amount = op.side === "buy" ? op.amount : (held * BigInt(op.percent)) / 100n
          const q = op.side === "buy" ? quoteBuy(curveParamsOf(before), curveStateOf(before), amount) : quoteSell(curveParamsOf(before), curveStateOf(before), amount)
          const input = { trader, mint: c.mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: amount, minAmountOutRaw: 0n }
          const ix = op.side === "buy" ? await getBuyInstruction(input) : await getSellInstruction(input)
          const r = await send(ledger, trader, [ix])
          expect(r._tag).toBe("Landed")
          if (q._tag === "Refused") {
            expect(r._tag === "Landed" && customErrorCode(r.err)).toBe(refusalError(q.reason))
            expect(readCurve(ledger, c.addresses.curve)).toEqual(before)
            continue
          }
          if (op.side === "sell" && amount > held) {
            // More than the trader holds: the token program refuses (InsufficientFunds = Custom 1).
            expect(r._tag === "Landed" && customErrorCode(r.err)).toBe(1)
            continue
          }
          expectOk(ledger, r)
          const after = readCurve(ledger, c.addresses.curve)
          expect(curveStateOf(after)).toEqual(q.next)
          if (op.side === "buy") {
            expect(tokenBalance(ledger, ata) - held).toBe(q.amountOut)
            expect(lamports - ledger.getBalance(trader.address)).toBe(amount + TX_FEE)
          } else {
            expect(held - tokenBalance(ledger, ata)).toBe(amount)
            expect(ledger.getBalance(trader.address) - lamports).toBe(q.amountOut - TX_FEE)
          }
          expect(ledger.getBalance(c.addresses.quoteVault) - ledger.minimumBalanceForRentExemption(0)).toBe(after.realQuoteRaw)
        }
      }),
      { numRuns: 25 }
    )
  })

  it("every pool swap equals quotePoolBuy/quotePoolSell on the reserves before it", async () => {
    const ledger = new Ledger()
    const creator = await devSigner(0)
    const trader = await devSigner(3)
    const keeper = await keeperSigner()
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(0, 100, 200), ops, async (creatorFeeBps, sequence: Op[]) => {
        const c = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, {
          virtualQuoteRaw: 4n * SOL,
          thresholdRaw: 5n * SOL,
          mode: "exp-a",
          creatorFeeBps,
          stakerAllocationBps: 500
        })
        const ata = ataOf(trader.address, c.mint.address)
        const mint = c.mint.address
        expectOk(ledger, await send(ledger, trader, [getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint })]))
        expectOk(ledger, await send(ledger, trader, [await getBuyInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: 6n * SOL, minAmountOutRaw: 0n })]))
        expectOk(ledger, await send(ledger, keeper, [await getMigrateInstruction({ keeper, mint, quoteMint: WSOL_MINT_ADDRESS })]))
        const fees = { feeBps: BigInt(50 + creatorFeeBps), creatorFeeBps: BigInt(creatorFeeBps) }
        for (const op of sequence) {
          ledger.advanceSlot()
          const pool = readPool(ledger, c.addresses.pool)
          const held = tokenBalance(ledger, ata)
          const amount = op.side === "buy" ? op.amount : (held * BigInt(op.percent)) / 100n
          if (op.side === "sell" && amount > held) continue
          const q = op.side === "buy" ? quotePoolBuy(pool, fees, amount) : quotePoolSell(pool, fees, amount)
          const ix = await getPoolSwapInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, side: op.side, amountInRaw: amount, minAmountOutRaw: 0n })
          const r = await send(ledger, trader, [ix])
          if (q._tag === "Refused") {
            expect(r._tag === "Landed" && customErrorCode(r.err)).toBe(SvcCurveError.ZeroAmount)
            continue
          }
          expectOk(ledger, r)
          expect(readPool(ledger, c.addresses.pool)).toMatchObject(q.next)
          expect(tokenBalance(ledger, ata) - held).toBe(op.side === "buy" ? q.amountOut : -amount)
        }
      }),
      { numRuns: 15 }
    )
  })
})
