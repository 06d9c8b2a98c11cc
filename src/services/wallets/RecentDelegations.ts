/**
 * The embedded wallet's delegation as a dry run may read it (issue 34, the keyed request's floor):
 * found active by a live read (`resolveDelegation`) within the last `ttlMs` in this process, else
 * read live. Only for what signs nothing and records nothing: every signature still resolves the
 * delegation afresh (`signWithEmbedded`), and every launch reads it live.
 *
 * Invariants:
 * - Only an active delegation is kept; a refusal (`not_embedded`, `not_delegated`,
 *   `delegation_revoked`) or a failed read is never kept, so an approval is seen at once.
 * - This process's own change (`changed`, called by `setDelegation` after its write) drops the
 *   entry, and a live read that began before the change does not keep what it found (a generation
 *   count), so a revoke made here is seen by the very next dry run.
 * - Another process's change (the CLI's `delegate --revoke`) is seen within `ttlMs`, as a key's
 *   scopes and revocation are (`KeyStore`, the same 2 s).
 * - Bounded: at most `maxEntries` accounts and chains (least recently used evicted).
 */
import { Effect } from "effect"
import { TtlLru } from "../keys/TtlLru.js"
import type { WalletChain } from "./ChainKeys.js"

/** How long a dry run may answer from a delegation found active: the key cache's TTL (`DEFAULT_KEY_CACHE_TTL_MS`). */
export const RECENT_DELEGATION_TTL_MS = 2_000
/** How many accounts' delegations (per chain) are kept. */
export const RECENT_DELEGATION_MAX = 10_000

export interface RecentDelegationsOptions {
  readonly ttlMs?: number
  readonly maxEntries?: number
}

export const makeRecentDelegations = <W, E>(
  resolve: (accountId: string, chain: WalletChain) => Effect.Effect<W, E>,
  nowMs: () => number,
  options: RecentDelegationsOptions = {}
) => {
  const kept = new TtlLru<string, W>({ maxEntries: options.maxEntries ?? RECENT_DELEGATION_MAX, ttlMs: options.ttlMs ?? RECENT_DELEGATION_TTL_MS })
  let generation = 0
  const keyOf = (accountId: string, chain: WalletChain) => `${chain}:${accountId}`

  const recent = (accountId: string, chain: WalletChain): Effect.Effect<W, E> =>
    Effect.suspend(() => {
      const key = keyOf(accountId, chain)
      const hit = kept.get(key, nowMs())
      if (hit !== undefined) return Effect.succeed(hit)
      const began = generation
      return Effect.tap(resolve(accountId, chain), (wallet) =>
        Effect.sync(() => {
          if (generation === began) kept.set(key, wallet, nowMs())
        })
      )
    })

  /** This process changed the delegation of `accountId` on `chain` (after the write). */
  const changed = (accountId: string, chain: WalletChain): void => {
    generation++
    kept.delete(keyOf(accountId, chain))
  }

  return { recent, changed, size: () => kept.size }
}
