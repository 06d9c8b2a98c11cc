/**
 * What a trade's pricing reads without a query (issue 28 item 7): the account's embedded Solana
 * wallet address, which never changes once created (no embedded wallet is deleted or replaced),
 * kept in a bounded LRU; a missing wallet is never cached, so one created later is seen on the
 * next build. Delegation and policy are not cached: the signer resolves them afresh on every sign.
 * The venue is not read from the market index (it lags the chain): the build reads it from the
 * chain with the wallet's holdings in one call (`SolanaTradeChain.venueAndHoldings`). Nothing here
 * decides money: the chain enforces the minimum out, and the executed amount is the program's own
 * event.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { type Clock, Effect } from "effect"
import { TtlLru } from "../../keys/TtlLru.js"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"

/** How many accounts' embedded addresses are kept (LRU beyond it). */
export const EMBEDDED_ADDRESS_CACHE_MAX = 10_000
/** Kept this long after the read (the address never changes: the bound on a stale entry is only the LRU's hygiene). */
export const EMBEDDED_ADDRESS_TTL_MS = 60 * 60_000

/** The account's embedded Solana wallet address (undefined: none), read once per account and kept; entries age on `clock` (the trade service's). */
export const makeEmbeddedAddresses = (
  provider: Pick<WalletProviderShape, "embeddedWallets">,
  clock: Clock.Clock,
  options: { readonly maxEntries?: number; readonly ttlMs?: number } = {}
) => {
  const cache = new TtlLru<string, string>({ maxEntries: options.maxEntries ?? EMBEDDED_ADDRESS_CACHE_MAX, ttlMs: options.ttlMs ?? EMBEDDED_ADDRESS_TTL_MS })
  const solanaAddress = (accountId: string): Effect.Effect<string | undefined, SqlError> =>
    Effect.gen(function* () {
      const hit = cache.get(accountId, yield* clock.currentTimeMillis)
      if (hit !== undefined) return hit
      const found = (yield* provider.embeddedWallets(accountId)).find((w) => w.chain === "solana")?.address
      if (found !== undefined) cache.set(accountId, found, yield* clock.currentTimeMillis)
      return found
    })
  return { solanaAddress, size: () => cache.size }
}

export type EmbeddedAddresses = ReturnType<typeof makeEmbeddedAddresses>
