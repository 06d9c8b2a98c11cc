/**
 * Test support: market cores as the market actor builds them, for the pure read modules' tests.
 * Events come from `test/support/marketSim.ts` (priced by the program's own curve math) and are
 * folded through the real `MarketActor.step`.
 */
import { type MarketCore, type MarketState, step } from "../../actors/market/MarketActor.js"
import { ChainClock, SimMarket, type SimMarketOptions } from "./marketSim.js"
import type { ChainEvent, ChainId } from "../../ingest/ChainEvent.js"

/** The core after `events` (which must create the market first). */
export const foldCore = (events: ReadonlyArray<ChainEvent>): MarketCore => {
  let s: MarketState | undefined = undefined
  for (const e of events) s = step(s, e)[0]
  if (s?.core === undefined) throw new Error("the events created no market")
  return s.core
}

/** A fresh market on `chain` (created at `nowMs`) and the core just after its creation. */
export const newMarket = (chain: ChainId, options: SimMarketOptions, nowMs = Date.UTC(2026, 0, 1)) => {
  const market = new SimMarket(new ChainClock(chain, nowMs), options)
  return { market, core: foldCore([market.created()]) }
}
