/**
 * What an on-chain price oracle last answered, as every feed hands it to the price source
 * (`src/services/prices/OraclePrice.ts` judges it): a fixed-point `price · 10^exponent` USD, its
 * confidence in the same units, when it was published, and whether the oracle vouches for it.
 */
export interface OracleObservation {
  readonly price: bigint
  readonly conf: bigint
  readonly exponent: number
  readonly publishTimeMs: number
  /** The oracle's own verdict: Pyth's `Full` verification level, a round answered in full. */
  readonly trading: boolean
}

/** A followed oracle: its name (in errors and `UsdPrice.source`) and its latest observation, undefined before the first read. */
export interface OracleFeed {
  readonly name: string
  readonly latest: () => OracleObservation | undefined
}
