/** The strategy store's bounds and defaults (documentation in `Strategies.ts`). */
export const strategySavesPerDay = 20
export const backtestWindowMs = 14 * 86_400_000
export const backtestTimeoutMsDefault = 10 * 60_000
export const backtestsRunningMaxDefault = 2
export const staleGraceMsDefault = 60_000
export const nameMaxChars = 100
export const listLimitMax = 100
export const listLimitDefault = 50
export const tradesLimitMax = 500
export const tradesLimitDefault = 100
export const comparisonRunsMax = 10
export const offsetMax = 100_000

export const DAY_MS = 86_400_000
