/**
 * The wallet bounds (spec document 2, sections 2.3, 4.1 and 8). Each is checked where it applies
 * and tested at the bound: the claim lifetime and the import lifetime by the sign relay and
 * import tests, the open-import count by the import pruning, the rebind bounds by the rebind
 * tests, the history page by the route.
 */

/** A build claim stays signable this long after `recordBuilt`. */
export const CLAIM_LIFETIME_MS = 30 * 60_000
/** An import init must be submitted within this time. */
export const IMPORT_TTL_MS = 10 * 60_000
/** Open (unexpired, unused) import inits kept per account; older ones are deleted at the next init. */
export const OPEN_IMPORTS_PER_ACCOUNT_MAX = 5
/** A rebind moves 1 to this many wallets. */
export const REBIND_WALLETS_MAX = 200
/** A `selected`-scope target key holds at most this many wallet assignments after a rebind. */
export const SELECTED_SCOPE_ASSIGNMENTS_MAX = 1_000
export const REBIND_HISTORY_LIMIT_MAX = 100
export const REBIND_HISTORY_LIMIT_DEFAULT = 20
