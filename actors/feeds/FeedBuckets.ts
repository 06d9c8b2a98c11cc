/**
 * FeedBuckets: the four public feed buckets (`new`, `graduated`, `onfire`, `finalstretch`) over
 * every live market, with per-bucket sequence numbers and a change log for `since_seq` reads. The
 * exact definitions are in docs/decisions.md ("Feed buckets"); this module is their one implementation.
 *
 * Invariants:
 * - Deterministic and effect-free: membership and rows depend only on the market cores given and
 *   the chain clock (latest block time per chain), never the wall clock.
 * - Bounded: each bucket keeps at most `maxRows` members per chain; each bucket's change log holds
 *   at most `changeLogSize` entries; the ranked candidate sets hold at most one entry per market.
 * - Every membership change or row change bumps the bucket's `seq` by one and appends one log
 *   entry. A read with `since_seq` in [seq − log length, seq] gets exactly the rows changed since
 *   (current rows) and the addresses removed since; any other `since_seq` gets `reset: true` and
 *   the whole list. `finalstretch` always answers the whole list (spec endpoint rule 14).
 * - Rows are rebuilt (and compared as JSON) when their market changes and when the chain clock
 *   enters a new five-minute slot (the statistics windows move then).
 */
import type { ChainId } from "../../ingest/ChainEvent.js"
import { distinctTradersInHour, fiveMinuteSlotOf, HOUR_WINDOW_SLOTS, windowTotals } from "../market/internal/tradeWindows.js"
import type { AgentLaunchesRead } from "../AgentLaunches.js"
import { isPending, type TokenMetadataRead } from "../TokenMetadata.js"
import type { MarketCore } from "../market/MarketActor.js"
import { type FeedRow, feedRow, progressBpsOf, statsOf } from "../market/MarketRecord.js"

export const BUCKETS = ["new", "graduated", "onfire", "finalstretch"] as const
export type BucketName = (typeof BUCKETS)[number]
export const isBucketName = (u: unknown): u is BucketName => typeof u === "string" && (BUCKETS as ReadonlyArray<string>).includes(u)

const CHAINS: ReadonlyArray<ChainId> = ["solana", "hood"]

export interface FeedOptions {
  /** Members per bucket per chain (default 100). */
  readonly maxRows: number
  /** Change-log entries kept per bucket (default 4096); an older `since_seq` gets a reset. */
  readonly changeLogSize: number
  /** onfire: least trades in the last hour (default 5). */
  readonly onfireMinTrades: number
  /** onfire: least distinct traders among the last 16 trades in the last hour (default 3, at most 16). */
  readonly onfireMinTraders: number
  /** finalstretch: least progress in bps (default 5000: "50% or more of the bonding curve"). */
  readonly finalstretchMinBps: number
}

export const defaultFeedOptions: FeedOptions = {
  maxRows: 100,
  changeLogSize: 4096,
  onfireMinTrades: 5,
  onfireMinTraders: 3,
  finalstretchMinBps: 5000
}

export interface FeedRead {
  readonly bucket: BucketName
  /** The bucket's sequence number this read reflects; pass it back as `since_seq`. */
  readonly seq: number
  readonly reset: boolean
  /** Whole list (reset) or the changed rows, in bucket order (best first). */
  readonly tokens: ReadonlyArray<FeedRow>
  /** The same rows, serialized once each. */
  readonly tokensJson: ReadonlyArray<string>
  /** Addresses that left the bucket since `since_seq` (empty on a reset). */
  readonly removed: ReadonlyArray<string>
  /** The chain clock the rows' statistics are as of (the later one for a cross-chain read), ISO; null before any event. */
  readonly asOf: string | null
}

/** Sort key: k1 desc, k2 desc, k3 desc, then key asc. Ranked arrays are stored worst-first (best at the end). */
interface Ranked {
  readonly key: string
  readonly k1: bigint
  readonly k2: number
  readonly k3: string
  readonly core: MarketCore
}

/** Negative when a ranks above b. */
const compareRank = (a: Ranked, b: Ranked): number => {
  if (a.k1 !== b.k1) return a.k1 > b.k1 ? -1 : 1
  if (a.k2 !== b.k2) return b.k2 - a.k2
  if (a.k3 !== b.k3) return a.k3 > b.k3 ? -1 : 1
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0
}

/**
 * The row of a market is a function of these parts of its core (and the statistics slot). A step
 * copies an unchanged part by reference, so identity says whether the row can have changed.
 */
const sameRowInputs = (a: MarketCore, b: MarketCore): boolean =>
  a === b ||
  (a.lifecycle === b.lifecycle &&
    a.curveState === b.curveState &&
    a.pool === b.pool &&
    a.stats === b.stats &&
    a.migration === b.migration &&
    a.identity === b.identity)

/** A member of a bucket; its row is built on first read and kept while core and slot stay. */
class Member {
  rowCore: MarketCore | undefined = undefined
  rowSlot = -1
  row: FeedRow | undefined = undefined
  /** The row was built while the market's metadata document was not known here (its image is missing). */
  metaPending = false
  json = ""
  constructor(public rank: Ranked) {}
}

interface LogEntry {
  seq: number
  key: string
}

/** One bucket on one chain: the ranked eligible set (worst first) and its top `maxRows` (members). */
class ChainBucket {
  readonly ranked: Array<Ranked> = []
  readonly byKey = new Map<string, Ranked>()
  readonly members = new Map<string, Member>()

  /** Index where `r` is (or would go): `ranked` is sorted worst-first. */
  indexOf(r: Ranked): number {
    let lo = 0
    let hi = this.ranked.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compareRank(this.ranked[mid]!, r) > 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  insert(r: Ranked): number {
    const i = this.indexOf(r)
    this.ranked.splice(i, 0, r)
    this.byKey.set(r.key, r)
    return i
  }

  remove(r: Ranked): void {
    this.ranked.splice(this.indexOf(r), 1)
    this.byKey.delete(r.key)
  }
}

class Bucket {
  readonly chains: Record<ChainId, ChainBucket> = { solana: new ChainBucket(), hood: new ChainBucket() }
  seq = 0
  /** Ring of the last `logSize` changes; entry seqs are consecutive, ending at `seq`. */
  readonly log: Array<LogEntry> = []
  logStart = 0

  constructor(
    readonly name: BucketName,
    readonly logSize: number
  ) {}

  logChange(key: string): void {
    this.seq++
    if (this.log.length < this.logSize) this.log.push({ seq: this.seq, key })
    else {
      const entry = this.log[this.logStart]!
      entry.seq = this.seq
      entry.key = key
      this.logStart = (this.logStart + 1) % this.logSize
    }
  }

  /** Keys changed after `since`, oldest first; undefined when the log does not reach back that far (or `since` is ahead). */
  changedSince(since: number): Array<string> | undefined {
    const n = this.log.length
    if (since > this.seq || since < this.seq - n) return undefined
    const out: Array<string> = []
    for (let i = this.seq - since; i > 0; i--) out.push(this.log[(this.logStart + n - i) % n]!.key)
    return out
  }
}

const iso = (ms: number): string => new Date(ms).toISOString()

const statsDiffer = (core: MarketCore, beforeMs: number, afterMs: number): boolean => {
  const a = statsOf(core, beforeMs)
  const b = statsOf(core, afterMs)
  return (
    a.hour.volumeRaw !== b.hour.volumeRaw ||
    a.hour.trades !== b.hour.trades ||
    a.day.volumeRaw !== b.day.volumeRaw ||
    a.day.trades !== b.day.trades ||
    a.day.buys !== b.day.buys
  )
}

export class FeedBuckets {
  readonly options: FeedOptions
  private readonly buckets: Record<BucketName, Bucket>
  /** The chain clock (latest block time applied) and its five-minute slot, per chain. */
  private readonly clockMs: Record<ChainId, number> = { solana: 0, hood: 0 }
  private readonly clockSlot: Record<ChainId, number> = { solana: -1, hood: -1 }

  constructor(
    options: Partial<FeedOptions> = {},
    /** Which markets were launched through an agent key (`isAgent` on rows). */
    private readonly agentLaunches?: AgentLaunchesRead,
    /** The launches' metadata documents (`image` on rows). */
    private readonly metadata?: TokenMetadataRead
  ) {
    this.options = { ...defaultFeedOptions, ...options }
    const o = this.options
    if (!(Number.isSafeInteger(o.maxRows) && o.maxRows >= 1 && Number.isSafeInteger(o.changeLogSize) && o.changeLogSize >= 1)) {
      throw new RangeError("FeedBuckets: maxRows and changeLogSize must be positive integers")
    }
    this.buckets = {
      new: new Bucket("new", o.changeLogSize),
      graduated: new Bucket("graduated", o.changeLogSize),
      onfire: new Bucket("onfire", o.changeLogSize),
      finalstretch: new Bucket("finalstretch", o.changeLogSize)
    }
  }

  seq(bucket: BucketName): number {
    return this.buckets[bucket].seq
  }

  clock(chain: ChainId): number {
    return this.clockMs[chain]
  }

  /**
   * Advances the chain clock (it never goes back). Entering a new five-minute slot re-ranks onfire
   * (every candidate's hour window moved) and logs a row change for each member whose windowed
   * statistics differ between the two slots.
   */
  advanceClock(chain: ChainId, atMs: number): void {
    const beforeMs = this.clockMs[chain]
    if (atMs <= beforeMs) return
    this.clockMs[chain] = atMs
    const slot = fiveMinuteSlotOf(atMs)
    if (slot === this.clockSlot[chain]) return
    this.clockSlot[chain] = slot
    this.rerankOnfire(chain)
    for (const name of BUCKETS) {
      const bucket = this.buckets[name]
      for (const [key, member] of bucket.chains[chain].members) {
        if (statsDiffer(member.rank.core, beforeMs, atMs)) bucket.logChange(key)
      }
    }
  }

  /** A market changed (core) or disappeared (undefined). Call `advanceClock` first with its latest event time. */
  update(key: string, chain: ChainId, core: MarketCore | undefined): void {
    this.place(this.buckets.new, chain, key, core)
    this.place(this.buckets.graduated, chain, key, core)
    this.place(this.buckets.onfire, chain, key, core)
    this.place(this.buckets.finalstretch, chain, key, core)
  }

  private rankOf(bucket: BucketName, key: string, core: MarketCore): Ranked | undefined {
    if (core.lifecycle === "migrated") {
      return bucket === "graduated"
        ? { key, k1: BigInt(core.migration.migratedAtMs ?? core.lastEventAtMs), k2: 0, k3: core.migratedPosition ?? "", core }
        : undefined
    }
    if (core.lifecycle !== "trading") return undefined
    switch (bucket) {
      case "new":
        return { key, k1: BigInt(core.identity.createdAtMs), k2: 0, k3: core.identity.createdPosition, core }
      case "graduated":
        return undefined
      case "finalstretch": {
        const bps = progressBpsOf(core)
        return bps >= this.options.finalstretchMinBps
          ? { key, k1: BigInt(bps), k2: -core.identity.createdAtMs, k3: "", core } // ties: older first, then key
          : undefined
      }
      case "onfire": {
        if (core.stats.tradesTotal < this.options.onfireMinTrades) return undefined
        const slot = fiveMinuteSlotOf(this.clockMs[core.chain])
        const hour = windowTotals(core.stats.fiveMinutes, slot, HOUR_WINDOW_SLOTS)
        if (hour.trades < this.options.onfireMinTrades) return undefined
        if (distinctTradersInHour(core.stats.recentTraders, slot) < this.options.onfireMinTraders) return undefined
        // Heat: last-hour volume in bps of the curve's threshold G, comparable across quote assets.
        const heat = (hour.volumeRaw * 10_000n) / core.params.thresholdRaw
        return { key, k1: heat, k2: hour.trades, k3: core.identity.createdPosition, core }
      }
    }
  }

  /**
   * Moves one market in one bucket and keeps `members` equal to the top `maxRows` of `ranked` in
   * O(1) membership work: when a market crosses the boundary, exactly one other market crosses it
   * the other way (the one right at the boundary).
   */
  private place(bucket: Bucket, chain: ChainId, key: string, core: MarketCore | undefined): void {
    const cb = bucket.chains[chain]
    const rank = core === undefined ? undefined : this.rankOf(bucket.name, key, core)
    const old = cb.byKey.get(key)
    if (old === undefined && rank === undefined) return
    const max = this.options.maxRows
    const member = cb.members.get(key)
    if (old !== undefined && rank !== undefined && compareRank(old, rank) === 0) {
      cb.ranked[cb.indexOf(old)] = rank
      cb.byKey.set(key, rank)
      if (member !== undefined) {
        member.rank = rank
        if (!sameRowInputs(old.core, rank.core)) bucket.logChange(key)
      }
      return
    }
    if (old !== undefined) cb.remove(old)
    const index = rank === undefined ? -1 : cb.insert(rank)
    const length = cb.ranked.length
    const isTop = index >= 0 && index >= length - max
    if (member !== undefined && isTop) {
      member.rank = rank!
      bucket.logChange(key)
    } else if (member !== undefined) {
      cb.members.delete(key)
      bucket.logChange(key)
      if (length >= max) {
        const joiner = cb.ranked[length - max]!
        cb.members.set(joiner.key, new Member(joiner))
        bucket.logChange(joiner.key)
      }
    } else if (isTop) {
      cb.members.set(key, new Member(rank!))
      bucket.logChange(key)
      if (length > max) {
        const leaver = cb.ranked[length - max - 1]!
        cb.members.delete(leaver.key)
        bucket.logChange(leaver.key)
      }
    }
  }

  /** Onfire's order depends on the clock: rebuild its ranking and membership for one chain. */
  private rerankOnfire(chain: ChainId): void {
    const bucket = this.buckets.onfire
    const cb = bucket.chains[chain]
    if (cb.ranked.length === 0) return
    const ranked: Array<Ranked> = []
    for (const r of cb.ranked) {
      const next = this.rankOf("onfire", r.key, r.core)
      if (next !== undefined) ranked.push(next)
    }
    ranked.sort((a, b) => compareRank(b, a))
    cb.ranked.length = 0
    cb.ranked.push(...ranked)
    cb.byKey.clear()
    for (const r of ranked) cb.byKey.set(r.key, r)
    const top = new Set<string>()
    for (let i = ranked.length - 1; i >= 0 && i >= ranked.length - this.options.maxRows; i--) top.add(ranked[i]!.key)
    for (const key of [...cb.members.keys()]) {
      if (!top.has(key)) {
        cb.members.delete(key)
        bucket.logChange(key)
      }
    }
    for (const key of top) {
      const member = cb.members.get(key)
      if (member === undefined) {
        cb.members.set(key, new Member(cb.byKey.get(key)!))
        bucket.logChange(key)
      } else member.rank = cb.byKey.get(key)!
    }
  }

  /** The member's row as of the chain clock, built at most once per (snapshot, statistics slot). */
  private rowOf(member: Member, chain: ChainId): Member {
    const slot = this.clockSlot[chain]
    if (
      member.row === undefined || member.rowCore !== member.rank.core || member.rowSlot !== slot ||
      (member.metaPending && !isPending(member.rank.core.identity.uri, this.metadata))
    ) {
      const core = member.rank.core
      member.row = feedRow(core, this.clockMs[chain], this.agentLaunches?.has(chain, core.mint) ?? false, this.metadata)
      member.metaPending = isPending(core.identity.uri, this.metadata)
      member.json = JSON.stringify(member.row)
      member.rowCore = member.rank.core
      member.rowSlot = slot
    }
    return member
  }

  /** Members in bucket order (best first), one chain or both merged. */
  private list(bucket: Bucket, chain: ChainId | undefined): Array<readonly [ChainId, Member]> {
    const out: Array<readonly [ChainId, Member]> = []
    for (const c of chain === undefined ? CHAINS : [chain]) for (const m of bucket.chains[c].members.values()) out.push([c, m])
    out.sort((a, b) => compareRank(a[1].rank, b[1].rank))
    return out
  }

  private asOf(chain: ChainId | undefined): string | null {
    const ms = chain === undefined ? Math.max(this.clockMs.solana, this.clockMs.hood) : this.clockMs[chain]
    return ms > 0 ? iso(ms) : null
  }

  private rows(members: ReadonlyArray<readonly [ChainId, Member]>): { tokens: Array<FeedRow>; tokensJson: Array<string> } {
    const tokens: Array<FeedRow> = []
    const tokensJson: Array<string> = []
    for (const [c, m] of members) {
      const built = this.rowOf(m, c)
      tokens.push(built.row!)
      tokensJson.push(built.json)
    }
    return { tokens, tokensJson }
  }

  /** A feed read: the whole list, or (with `sinceSeq` inside the log) the changes since. */
  read(name: BucketName, chain: ChainId | undefined, sinceSeq: number | undefined): FeedRead {
    const bucket = this.buckets[name]
    const changed =
      sinceSeq === undefined || name === "finalstretch" || !Number.isSafeInteger(sinceSeq) ? undefined : bucket.changedSince(sinceSeq)
    if (changed === undefined) {
      return { bucket: name, seq: bucket.seq, reset: true, ...this.rows(this.list(bucket, chain)), removed: [], asOf: this.asOf(chain) }
    }
    const current: Array<readonly [ChainId, Member]> = []
    const removed: Array<string> = []
    const seen = new Set<string>()
    for (let i = changed.length - 1; i >= 0; i--) {
      const key = changed[i]!
      if (seen.has(key)) continue
      seen.add(key)
      const sep = key.indexOf(":")
      const keyChain = key.slice(0, sep) as ChainId
      if (chain !== undefined && keyChain !== chain) continue
      const member = bucket.chains[keyChain].members.get(key)
      if (member !== undefined) current.push([keyChain, member])
      else removed.push(key.slice(sep + 1))
    }
    current.sort((a, b) => compareRank(a[1].rank, b[1].rank))
    return { bucket: name, seq: bucket.seq, reset: false, ...this.rows(current), removed, asOf: this.asOf(chain) }
  }

/** Sizes, for tests and metrics. */
  sizes(name: BucketName, chain: ChainId): { readonly members: number; readonly candidates: number; readonly log: number } {
    const bucket = this.buckets[name]
    return { members: bucket.chains[chain].members.size, candidates: bucket.chains[chain].ranked.length, log: bucket.log.length }
  }
}
