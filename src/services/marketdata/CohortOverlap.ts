/**
 * Cohort overlap (spec 4.5 `cohort-overlap`): how far the wallets of 2 to 5 tokens' cohorts
 * (holders, or traders) coincide. Pure over the cohort sizes and the shared wallets the
 * ClickHouse read returns.
 *
 * For each pair of tokens: the wallets in both, and their Jaccard overlap in basis points
 * (shared / union, floored; 0 when both cohorts are empty).
 */
export interface OverlapPair {
  readonly a: string
  readonly b: string
  readonly shared: number
  readonly overlapBps: number
}

/** A wallet in two or more cohorts, with the tokens whose cohort it is in. */
export interface SharedWallet {
  readonly mints: ReadonlyArray<string>
}

/** Every pair of `mints` (in order), given each cohort's size (`sizes[i]` for `mints[i]`) and the shared wallets. */
export const overlapPairs = (
  mints: ReadonlyArray<string>,
  sizes: ReadonlyArray<{ readonly wallets: number }>,
  shared: ReadonlyArray<SharedWallet>
): ReadonlyArray<OverlapPair> => {
  const pairs: Array<OverlapPair> = []
  for (let i = 0; i < mints.length; i++) {
    for (let j = i + 1; j < mints.length; j++) {
      const a = mints[i]!
      const b = mints[j]!
      let both = 0
      for (const w of shared) if (w.mints.includes(a) && w.mints.includes(b)) both++
      const union = sizes[i]!.wallets + sizes[j]!.wallets - both
      pairs.push({ a, b, shared: both, overlapBps: union === 0 ? 0 : Math.floor((both * 10_000) / union) })
    }
  }
  return pairs
}

/** How many shared wallets are in the cohort of every one of `mintCount` tokens. */
export const inAllCohorts = (shared: ReadonlyArray<SharedWallet>, mintCount: number): number => {
  let n = 0
  for (const w of shared) if (w.mints.length === mintCount) n++
  return n
}
