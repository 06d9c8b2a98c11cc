/**
 * A token's venues as the reads name them (spec 4.5 `/venues`, trade rows): a trade's venue
 * (`curve` or `pool`) is named by the signal vocabulary's `venueOf` (`svc-curve`, `dex` on Solana,
 * `hood-dex` on Hood), the venue trading now by the market record's (`venueOf` in
 * `MarketRecord`, null while completed or in recovery), and a venue is active when it
 * is the one trading now.
 */
import type { Lifecycle } from "../../../actors/market/MarketActor.js"
import { venueOf as currentVenueOf } from "../../../actors/market/MarketRecord.js"
import type { VenueTotals } from "../../../clickhouse/queries/TokenReads.js"
import type { Chain } from "../../domain/Chain.js"
import { type Venue, venueOf as venueNameOf } from "../../domain/Signal.js"

export { venueNameOf }

export interface TokenVenue {
  readonly venue: Venue
  readonly active: boolean
  readonly totals: VenueTotals
}

/** The venue trading now and each venue's totals with its name and whether it is that one. */
export const tokenVenues = (
  chain: Chain,
  lifecycle: Lifecycle,
  rows: ReadonlyArray<VenueTotals>
): { readonly current: string | null; readonly venues: ReadonlyArray<TokenVenue> } => {
  const current = currentVenueOf(chain, lifecycle)
  return {
    current,
    venues: rows.map((totals) => {
      const venue = venueNameOf(chain, totals.venue)
      return { venue, active: venue === current, totals }
    })
  }
}
