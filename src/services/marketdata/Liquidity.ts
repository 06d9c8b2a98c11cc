/**
 * A token's liquidity as the market read writes it (spec 4.5 `/v1/market/token/{address}`): the
 * quote that backs trading now, in raw quote units. Once migrated to its pool, the pool's quote
 * reserve; before that (and if a migrated market has no pool yet), the curve's real quote, what
 * buyers paid in. Never the curve's virtual reserve, which no one can withdraw.
 */
import type { MarketCore } from "../../../actors/market/MarketActor.js"

export const liquidityQuoteRaw = (core: Pick<MarketCore, "lifecycle" | "pool" | "curveState">): bigint =>
  core.lifecycle === "migrated" && core.pool !== null ? core.pool.quoteReserveRaw : core.curveState.realQuoteRaw
