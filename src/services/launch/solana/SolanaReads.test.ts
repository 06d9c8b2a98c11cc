/**
 * The landed launch as the ingest stream carried it (`launchedFromStream`): the curve's creation,
 * and with a dev buy the payer's buy of the mint; anything less leaves the verdict to the chain's
 * reads.
 */
import { describe, expect, it } from "vitest"
import type { LaunchPlan } from "../../../chain/solana/launch/LaunchTransaction.js"
import { CurveCreated, type ChainEvent, Trade } from "../../../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../../../test/support/marketSim.js"
import type { StreamedTransaction } from "../../chains/ChainArrivals.js"
import { launchedFromStream } from "./SolanaReads.js"

const SOL = 1_000_000_000n
const mint = "So1StreamedLaunch"
const curve = `curve-${mint}`
const payer = "dev-wallet"

const m = new SimMarket(new ChainClock("solana"), { mint, creator: payer })
const created = m.created()
const devBuy = new Trade({ ...(m.buy(payer, SOL)[0] as Trade), signature: created.signature })
const streamed = (...events: Array<ChainEvent>): StreamedTransaction => ({ slot: 77n, events })

const withDevBuy: LaunchPlan = {
  curveParams: { virtualQuoteRaw: 1n, thresholdRaw: 1n, tokenReserveRaw: 1n, feeBps: 100n, crossingModel: "full-fill-surplus" },
  devBuy: { amountInRaw: SOL, expectedOutRaw: devBuy.amountOutRaw, minAmountOutRaw: devBuy.amountOutRaw - 1n, curveFeeRaw: 0n },
  fee: null
}
const withoutDevBuy: LaunchPlan = { ...withDevBuy, devBuy: null }

describe("launchedFromStream", () => {
  it("a launch without a dev buy: landed once the stream carried its curve's creation, at the stream's slot", () => {
    expect(launchedFromStream(streamed(created), created.signature, mint, curve, payer, withoutDevBuy)).toEqual({
      mint,
      curve,
      signature: created.signature,
      slot: 77n,
      devBuy: null,
      fee: null
    })
  })

  it("a launch with a dev buy: the fill is the payer's buy of the mint the stream carried", () => {
    expect(launchedFromStream(streamed(created, devBuy), created.signature, mint, curve, payer, withDevBuy)?.devBuy).toEqual({
      amountInRaw: SOL,
      filledRaw: devBuy.amountOutRaw,
      minAmountOutRaw: devBuy.amountOutRaw - 1n
    })
  })

  it("leaves the verdict to the chain's reads when the stream did not carry the launch whole", () => {
    // The dev buy not (yet) carried, another trader's buy, another curve's creation, no creation at all.
    expect(launchedFromStream(streamed(created), created.signature, mint, curve, payer, withDevBuy)).toBeUndefined()
    expect(launchedFromStream(streamed(created, new Trade({ ...devBuy, trader: "someone" })), created.signature, mint, curve, payer, withDevBuy)).toBeUndefined()
    expect(launchedFromStream(streamed(new CurveCreated({ ...created, curve: "curve-other" })), created.signature, mint, curve, payer, withoutDevBuy)).toBeUndefined()
    expect(launchedFromStream(streamed(devBuy), created.signature, mint, curve, payer, withDevBuy)).toBeUndefined()
  })
})
