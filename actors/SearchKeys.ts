/**
 * SearchKeys: the lower-cased ticker and name of every live market, per chain, for token search
 * (`src/services/marketdata/TokenSearch.ts` ranks over them). `MarketIndexStore.publish`, the
 * index's single writer, keeps it: a market's keys are computed when it appears (or when its
 * identity changes, which the market actor never does after creation) and dropped when it goes;
 * each new snapshot only replaces the entry's `core`. A search scans a ready array, lower-cases
 * nothing per market per request and needs no lookup to reach a match's core.
 *
 * Invariants: exactly one entry per live market, on its chain's list, holding its latest snapshot
 * (the list order is not meaningful: a removal moves the last entry into the gap). Bounded by the
 * index (one entry per market).
 */
import type { ChainId } from "../ingest/ChainEvent.js"
import { actorKey, type MarketCore } from "./market/MarketActor.js"

export interface SearchKey {
  /** The market's latest snapshot. */
  readonly core: MarketCore
  /** The ticker, lower-cased. */
  readonly symbol: string
  /** The name, lower-cased. */
  readonly name: string
}

interface Entry {
  core: MarketCore
  symbol: string
  name: string
}

export class SearchKeys {
  readonly #lists: Record<ChainId, Array<Entry>> = { solana: [], hood: [] }
  /** Position of each market's entry in its chain's list, by index key. */
  readonly #positions = new Map<string, number>()

  /** Records `core` under `key` (computing its keys only when new or its identity changed); removes `key` when undefined. */
  update(key: string, chain: ChainId, core: MarketCore | undefined): void {
    const list = this.#lists[chain]
    const at = this.#positions.get(key)
    if (core === undefined) {
      if (at === undefined) return
      const last = list.pop()!
      if (at < list.length) {
        list[at] = last
        this.#positions.set(actorKey(chain, last.core.mint), at)
      }
      this.#positions.delete(key)
      return
    }
    const existing = at === undefined ? undefined : list[at]!
    if (existing !== undefined && existing.core.identity === core.identity) {
      existing.core = core
      return
    }
    const entry: Entry = { core, symbol: core.identity.symbol.toLowerCase(), name: core.identity.name.toLowerCase() }
    if (at !== undefined) list[at] = entry
    else {
      this.#positions.set(key, list.length)
      list.push(entry)
    }
  }

  /** Every live market's keys on `chain`. */
  list(chain: ChainId): ReadonlyArray<SearchKey> {
    return this.#lists[chain]
  }
}
