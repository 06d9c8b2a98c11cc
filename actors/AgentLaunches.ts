/**
 * Which markets were launched through an agent key (spec 2.9 `isAgent` on feed rows, `viaAgentKey`
 * on verify, the agent record's `launchesViaApi`). The chain does not say it, so the launch paths
 * tell this registry, before the launch transaction leaves (they know the mint by then): the
 * market's first feed row is therefore already attributed. At start the engine loads the
 * attributions it recorded in PostgreSQL before the API listens.
 *
 * Invariants:
 * - An attribution names a (chain, mint) and the launching account; it is never removed. One
 *   whose launch never landed names a mint with no market and changes no read.
 * - Bounded: at most `maxEntries` (default 1,000,000); beyond it the oldest is forgotten (its
 *   market then reads as not agent-launched), which `add` reports.
 * - Single JS thread: reads are synchronous map lookups, no Effect.
 */
import { Context } from "effect"
import type { ChainId } from "../ingest/ChainEvent.js"
import { actorKey } from "./market/MarketActor.js"

export const AGENT_LAUNCHES_MAX = 1_000_000

export interface AgentLaunchesRead {
  /** Whether the market was launched through an agent key. */
  readonly has: (chain: ChainId, mint: string) => boolean
  /** The account's attributed mints (`exists` filters those that are markets). */
  readonly countOf: (accountId: string, exists: (chain: ChainId, mint: string) => boolean) => number
}

export class AgentLaunches implements AgentLaunchesRead {
  /** actorKey → account, in insertion order (the eviction order). */
  private readonly byKey = new Map<string, { readonly chain: ChainId; readonly mint: string; readonly accountId: string }>()
  private readonly byAccount = new Map<string, Set<string>>()

  constructor(readonly maxEntries: number = AGENT_LAUNCHES_MAX) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) throw new RangeError("AgentLaunches: maxEntries must be a positive integer")
  }

  /** Records an attribution; returns the attribution it forgot to stay within the bound, if any. */
  add(chain: ChainId, mint: string, accountId: string): { readonly chain: ChainId; readonly mint: string } | undefined {
    const key = actorKey(chain, mint)
    if (this.byKey.has(key)) return undefined
    let evicted: { readonly chain: ChainId; readonly mint: string } | undefined
    if (this.byKey.size >= this.maxEntries) {
      const [oldKey, old] = this.byKey.entries().next().value!
      this.byKey.delete(oldKey)
      const owned = this.byAccount.get(old.accountId)
      owned?.delete(oldKey)
      if (owned !== undefined && owned.size === 0) this.byAccount.delete(old.accountId)
      evicted = { chain: old.chain, mint: old.mint }
    }
    this.byKey.set(key, { chain, mint, accountId })
    let owned = this.byAccount.get(accountId)
    if (owned === undefined) this.byAccount.set(accountId, (owned = new Set()))
    owned.add(key)
    return evicted
  }

  readonly has = (chain: ChainId, mint: string): boolean => this.byKey.has(actorKey(chain, mint))

  readonly countOf = (accountId: string, exists: (chain: ChainId, mint: string) => boolean): number => {
    let n = 0
    for (const key of this.byAccount.get(accountId) ?? []) {
      const a = this.byKey.get(key)
      if (a !== undefined && exists(a.chain, a.mint)) n++
    }
    return n
  }

  get size(): number {
    return this.byKey.size
  }
}

/** The engine's one registry (provided with the MarketIndex, which reads it for feed rows). */
export class AgentLaunchRegistry extends Context.Tag("curvestream/AgentLaunchRegistry")<AgentLaunchRegistry, AgentLaunches>() {}
