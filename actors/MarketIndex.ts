/**
 * MarketIndex: the in-memory read model the API reads synchronously (no Effect on the read path).
 * It holds every live market's latest immutable snapshot, its spec 2.9 record serialized once per
 * version, the feed buckets and the token-search keys (`SearchKeys`). The actor shards publish
 * into it after each drained batch.
 *
 * Invariants:
 * - Single writer discipline: only `publish` (called by the runtime, synchronously, on the JS
 *   thread) mutates it; readers see whole snapshots, never a half-applied batch.
 * - A record's JSON is built at most once per (state snapshot, statistics slot): the first `get`
 *   after a change (or after the chain clock enters a new five-minute slot) serializes it, every
 *   later `get` returns the cached string. Markets nobody reads hold no JSON.
 * - `warming` is true until the runtime has applied everything that was on the bus when it started
 *   (the API answers the feed with 503 FEED_UNAVAILABLE meanwhile, spec rule 14).
 * - Bounded: one entry per live market, at most `maxMarkets` (enforced by the runtime, which
 *   refuses to create markets beyond it); feed sizes bounded by FeedBuckets' options.
 */
import { Context } from "effect"
import type { ChainId } from "../ingest/ChainEvent.js"
import type { AgentLaunchesRead } from "./AgentLaunches.js"
import { type BucketName, type FeedOptions, FeedBuckets, type FeedRead } from "./feeds/FeedBuckets.js"
import { fiveMinuteSlotOf } from "./market/internal/tradeWindows.js"
import { actorKey, type MarketCore, type MarketState } from "./market/MarketActor.js"
import { marketRecord } from "./market/MarketRecord.js"
import { type SearchKey, SearchKeys } from "./SearchKeys.js"
import { isPending, type TokenMetadataRead, type TokenMetadataView, viewOf } from "./TokenMetadata.js"

export interface CachedRecord {
  /** Bumped on every new snapshot of this market (an ETag source). */
  readonly version: number
  /**
   * The spec 2.9 `market` object serialized: splice it into `{"success":true,"market":<json>}`.
   * A string (uWS writes strings directly); no Buffer copy is kept, to halve the cache's memory.
   */
  readonly json: string
}

interface Entry {
  core: MarketCore
  version: number
  cached: CachedRecord | undefined
  cachedSlot: number
  /** The cached record was built while the market's metadata document was not known here. */
  cachedMetaPending: boolean
}

export interface FeedIndexRead extends FeedRead {
  /** True while the engine is still catching up at start (answer 503 FEED_UNAVAILABLE). */
  readonly warming: boolean
}

export interface MarketIndexShape {
  /** The record of a market, serialized once per version; undefined when unknown on that chain. */
  readonly get: (chain: ChainId, mint: string) => CachedRecord | undefined
  /** The latest snapshot (for quotes and verify: curve params and reserves). */
  readonly market: (chain: ChainId, mint: string) => MarketCore | undefined
  /** The chains that know this mint (spec rule 13's `chain_mismatch` routing). */
  readonly find: (mint: string) => ReadonlyArray<ChainId>
  readonly feed: (bucket: BucketName, chain: ChainId | undefined, sinceSeq: number | undefined) => FeedIndexRead
  readonly warming: () => boolean
  /** Every live market's latest snapshot (the migration keeper scans it for completed curves). */
  readonly markets: () => IterableIterator<MarketCore>
  readonly size: () => number
  /** Latest block time applied per chain (ms; 0 before any event). */
  readonly clockMs: (chain: ChainId) => number
  /** Every live market's lower-cased ticker and name on `chain`, for token search (kept by `publish`). */
  readonly searchKeys: (chain: ChainId) => ReadonlyArray<SearchKey>
  /** What the market's metadata URI says (its hosted document's fields; see `TokenMetadata.ts`). */
  readonly metadataOf: (core: MarketCore) => TokenMetadataView
  /** The lookup `marketRecord` / `feedRow` take. */
  readonly metadata: () => TokenMetadataRead
}

const noDocuments: TokenMetadataRead = { get: () => undefined }

export class MarketIndex extends Context.Tag("curvestream/MarketIndex")<MarketIndex, MarketIndexShape>() {}

export interface MarketIndexOptions {
  readonly feeds?: Partial<FeedOptions>
  /** Which markets were launched through an agent key (feed rows' `isAgent`). */
  readonly agentLaunches?: AgentLaunchesRead
  /** The launches' metadata documents (records' `metadata`, feed rows' `image`). */
  readonly metadata?: TokenMetadataRead
}

/** The writable side, owned by the runtime. */
export class MarketIndexStore implements MarketIndexShape {
  private readonly entries = new Map<string, Entry>()
  private readonly feeds: FeedBuckets
  private readonly search = new SearchKeys()
  private warmingFlag = true

  private readonly metadataRead: TokenMetadataRead

  constructor(options: MarketIndexOptions = {}) {
    this.feeds = new FeedBuckets(options.feeds ?? {}, options.agentLaunches, options.metadata)
    this.metadataRead = options.metadata ?? noDocuments
  }

  /** Applies snapshots (a tombstone or a missing core removes the market). Called by the shards after each batch. */
  publish(changes: ReadonlyArray<readonly [key: string, state: MarketState | undefined]>): void {
    // Move the clocks first, so rows and windows of this batch are computed as of its latest event.
    for (const [, state] of changes) {
      const core = state?.core
      if (core !== undefined) this.feeds.advanceClock(core.chain, core.lastEventAtMs)
    }
    for (const [key, state] of changes) {
      const core = state?.core
      const existing = this.entries.get(key)
      if (core === undefined) {
        if (existing !== undefined) {
          this.entries.delete(key)
          this.feeds.update(key, existing.core.chain, undefined)
          this.search.update(key, existing.core.chain, undefined)
        }
        continue
      }
      if (existing === undefined) this.entries.set(key, { core, version: 1, cached: undefined, cachedSlot: -1, cachedMetaPending: false })
      else if (existing.core !== core) {
        existing.core = core
        existing.version++
        existing.cached = undefined
      } else continue
      this.feeds.update(key, core.chain, core)
      this.search.update(key, core.chain, core)
    }
  }

  setWarming(warming: boolean): void {
    this.warmingFlag = warming
  }

  readonly get = (chain: ChainId, mint: string): CachedRecord | undefined => {
    const entry = this.entries.get(actorKey(chain, mint))
    if (entry === undefined) return undefined
    const asOfMs = this.feeds.clock(chain)
    const slot = fiveMinuteSlotOf(asOfMs)
    const uri = entry.core.identity.uri
    if (entry.cached !== undefined && entry.cachedSlot === slot && !(entry.cachedMetaPending && !isPending(uri, this.metadataRead))) return entry.cached
    const json = JSON.stringify(marketRecord(entry.core, asOfMs, this.metadataRead))
    if (entry.cached !== undefined && entry.cachedMetaPending && entry.cachedSlot === slot) entry.version++ // the document arrived: a new representation
    entry.cached = { version: entry.version, json }
    entry.cachedSlot = slot
    entry.cachedMetaPending = isPending(uri, this.metadataRead)
    return entry.cached
  }

  readonly metadataOf = (core: MarketCore): TokenMetadataView => viewOf(core.identity.uri, this.metadataRead)
  readonly metadata = (): TokenMetadataRead => this.metadataRead

  readonly market = (chain: ChainId, mint: string): MarketCore | undefined => this.entries.get(actorKey(chain, mint))?.core

  readonly find = (mint: string): ReadonlyArray<ChainId> => {
    const out: Array<ChainId> = []
    if (this.entries.has(actorKey("solana", mint))) out.push("solana")
    if (this.entries.has(actorKey("hood", mint))) out.push("hood")
    return out
  }

  readonly feed = (bucket: BucketName, chain: ChainId | undefined, sinceSeq: number | undefined): FeedIndexRead => ({
    ...this.feeds.read(bucket, chain, sinceSeq),
    warming: this.warmingFlag
  })

  readonly warming = (): boolean => this.warmingFlag
  readonly markets = function* (this: MarketIndexStore): IterableIterator<MarketCore> {
    for (const entry of this.entries.values()) yield entry.core
  }
  readonly size = (): number => this.entries.size
  readonly clockMs = (chain: ChainId): number => this.feeds.clock(chain)
  readonly searchKeys = (chain: ChainId): ReadonlyArray<SearchKey> => this.search.list(chain)

  /** Feed internals, for tests and metrics. */
  get feedBuckets(): FeedBuckets {
    return this.feeds
  }
}
