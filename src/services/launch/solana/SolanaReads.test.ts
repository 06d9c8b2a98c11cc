/**
 * The landed launch as the ingest stream carried it (`launchedFromStream`, on what
 * `Arrivals.landed` holds): the creation of the launch's curve for its mint, and with a dev buy the
 * payer's buy of the mint; anything less or anything else leaves the verdict to the chain's reads.
 */
import { describe, expect, it } from "vitest"
import type { LaunchPlan } from "../../../chain/solana/launch/LaunchTransaction.js"
import { type ChainEvent, CurveCreated, solanaPosition, Trade } from "../../../../ingest/ChainEvent.js"
import { ChainClock, SimMarket } from "../../../../test/support/marketSim.js"
import { Arrivals } from "../../chains/ChainArrivals.js"
import { launchedFromStream } from "./SolanaReads.js"

const SOL = 1_000_000_000n
const mint = "So1StreamedLaunch"
const payer = "dev-wallet"

const m = new SimMarket(new ChainClock("solana"), { mint, creator: payer })
const created = m.created()
const sending = { mint, curve: created.curve, signature: created.signature, lastValidBlockHeight: 100n }
/** An event of the launch transaction (its signature, slot 77). */
const inLaunch = <E extends Trade | CurveCreated>(e: E, i: number): E =>
  (e._tag === "Trade" ? new Trade({ ...e, signature: created.signature, position: solanaPosition(77n, 0, i) }) : new CurveCreated({ ...(e as CurveCreated), signature: created.signature, position: solanaPosition(77n, 0, i) })) as E
const creation = inLaunch(created, 0)
const devBuy = inLaunch(m.buy(payer, SOL)[0] as Trade, 1)
/** What the stream holds of the launch after these events of it were delivered. */
const streamed = (...events: Array<ChainEvent>) => {
  const arrivals = new Arrivals(8, 8)
  for (const e of events) arrivals.seen(e.signature, e)
  return arrivals.landed(created.signature)
}

const withDevBuy: LaunchPlan = {
  curveParams: { virtualQuoteRaw: 1n, thresholdRaw: 1n, tokenReserveRaw: 1n, feeBps: 100n, crossingModel: "full-fill-surplus" },
  devBuy: { amountInRaw: SOL, expectedOutRaw: devBuy.amountOutRaw, minAmountOutRaw: devBuy.amountOutRaw - 1n, curveFeeRaw: 0n },
  fee: null
}
const withoutDevBuy: LaunchPlan = { ...withDevBuy, devBuy: null }

describe("launchedFromStream", () => {
  it("a launch without a dev buy: landed once the stream carried its curve's creation, at the stream's slot", () => {
    expect(launchedFromStream(streamed(creation), sending, payer, withoutDevBuy)).toEqual({
      mint,
      curve: created.curve,
      signature: created.signature,
      slot: 77n,
      devBuy: null,
      fee: null
    })
  })

  it("a launch with a dev buy: the fill is the payer's buy of the mint the stream carried", () => {
    expect(launchedFromStream(streamed(creation, devBuy), sending, payer, withDevBuy)?.devBuy).toEqual({
      amountInRaw: SOL,
      filledRaw: devBuy.amountOutRaw,
      minAmountOutRaw: devBuy.amountOutRaw - 1n
    })
  })

  it("leaves the verdict to the chain's reads when the stream did not carry the launch whole, or carried another", () => {
    const none = (events: Array<ChainEvent>, plan: LaunchPlan) => expect(launchedFromStream(streamed(...events), sending, payer, plan)).toBeUndefined()
    none([], withoutDevBuy) // not delivered
    none([creation], withDevBuy) // the dev buy not (yet) carried
    none([creation, new Trade({ ...devBuy, trader: "someone" })], withDevBuy) // another trader's buy
    none([creation, new Trade({ ...devBuy, side: "sell" })], withDevBuy) // the payer's sell
    none([creation, new Trade({ ...devBuy, mint: "So1OtherMint" })], withDevBuy) // a buy of another mint
    none([new CurveCreated({ ...creation, curve: "curve-other" })], withoutDevBuy) // another curve's creation
    none([new CurveCreated({ ...creation, mint: "So1OtherMint" })], withoutDevBuy) // another mint's creation
    none([devBuy], withDevBuy) // no creation at all
    expect(launchedFromStream(undefined, sending, payer, withoutDevBuy)).toBeUndefined()
  })
})
