/**
 * A buy leg failing on chain inside a landed bundle (docs/decisions.md, "Atomic bundles"): the
 * launch lands, a leg whose buyer cannot pay is TRADE_REVERTED, a leg whose minimum the program
 * cannot meet is SLIPPAGE_EXCEEDED, and a healthy leg after them fills exactly its ladder amount
 * on the curve the failed legs left untouched.
 */
import { generateKeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { initialState, quoteBuy, tokenReserveRaw } from "../../../domain/CurveMath.js"
import { getCreateCurveInstruction } from "../client/CurveInstructions.js"
import { devSigner } from "../client/DevSigners.js"
import { getTransferSolInstruction } from "../client/SplInstructions.js"
import { signTransactionMessage } from "../client/Transactions.js"
import { Ledger } from "../localnet/Ledger.js"
import { signInstructions } from "../localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { assembleBuyLeg, buyLegFailure, deliveredTokensRaw } from "./BuyLegTransaction.js"

const SOL = 1_000_000_000n
const SUPPLY = 1_000_000_000_000_000n

describe("buy legs failing inside a landed bundle", () => {
  it("maps each leg's own failure to its trade code and lands the rest", async () => {
    const ledger = new Ledger()
    const creator = await devSigner(0)
    const rich = await devSigner(1)
    const poor = await generateKeyPairSigner()
    ledger.requestAirdrop(poor.address, SOL / 100n)
    ledger.advanceSlot()
    const mint = await generateKeyPairSigner()
    const lifetime = ledger.latestBlockhash()
    const launch = await signInstructions(ledger, creator, [
      await getCreateCurveInstruction({
        creator, mint, quoteMint: WSOL_MINT_ADDRESS, virtualQuoteRaw: 5n * SOL, thresholdRaw: 10n * SOL, supplyRaw: SUPPLY,
        stakerAllocationBps: 50, mode: "open", creatorFeeBps: 0, name: "Fail", symbol: "F", uri: "https://example.com/f.json"
      }),
      getTransferSolInstruction({ from: creator, to: ledger.tipAccounts[0]!, lamports: 100_000n })
    ])
    const params = { virtualQuoteRaw: 5n * SOL, thresholdRaw: 10n * SOL, tokenReserveRaw: tokenReserveRaw(SUPPLY, 50n), feeBps: 100n, crossingModel: "full-fill-surplus" as const }
    const q = quoteBuy(params, initialState(params), SOL)
    if (q._tag !== "Filled") throw new Error("unpriced")
    const leg = (buyer: typeof rich, minAmountOutRaw: bigint) =>
      assembleBuyLeg({ buyer, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: SOL, minAmountOutRaw, platformFee: null, lifetime }).then(signTransactionMessage)
    const cannotPay = await leg(poor, 0n)
    const slippage = await leg(rich, q.amountOut + 1n)
    const healthy = await leg(rich, q.amountOut)
    const r = ledger.submitBundle([launch.wireBytes, cannotPay.wireBytes, slippage.wireBytes, healthy.wireBytes], undefined, { revertible: [1, 2, 3] })
    if (r._tag !== "Landed") throw new Error(r.detail)
    const txs = r.signatures.map((s) => ledger.getTransaction(s)!)
    expect(txs[0]!.err).toBeNull()
    expect(buyLegFailure(txs[1]!.err)).toBe("reverted")
    expect(buyLegFailure(txs[2]!.err)).toBe("slippage_exceeded")
    expect(txs[3]!.err).toBeNull()
    expect(deliveredTokensRaw(txs[3]!.preTokenBalances, txs[3]!.postTokenBalances, rich.address, mint.address)).toBe(q.amountOut)
    expect(buyLegFailure({ InstructionError: [1, { Custom: 6000n }] })).toBe("slippage_exceeded")
    expect(buyLegFailure("InsufficientFundsForFee")).toBe("reverted")
  })
})
