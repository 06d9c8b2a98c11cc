/**
 * Which transactions the ingest stream has delivered (issue 28 item 6, "confirmation from the
 * stream"): every `chain.events` record names its transaction (`signature`: a Solana signature, a
 * Hood transaction hash), so a rail waiting for its transaction's verdict wakes the moment the
 * ingester saw it instead of at its next status poll.
 *
 * On Solana, when this process's own ingester delivers at `confirmed` or `finalized` (`decides`:
 * the `all` role; an API replica cannot know the commitment another process ingested at), the
 * stream also carries the verdict of a landed transaction: the ingester delivers only transactions
 * that succeeded (Yellowstone's `failed: false`, and the decoders drop a failed one), at that
 * commitment, with svc-curve's events decoded from their logs, the same events a `getTransaction`
 * read would give. `landed` answers them (the slot and the events, in chain order), and the rails
 * take a landed launch's fill or a landed trade's executed amount from there without reading the
 * node. What the stream cannot say stays the chain's reads': a revert (never delivered), an expired
 * blockhash, a transaction whose events the stream did not carry whole, and every Hood transaction
 * (a Hood block can be reorged after the ingester saw it; its receipt decides).
 *
 * Bounded: the signatures seen last (`recentMax`, for a transaction ingested before its waiter
 * asked); per transaction, the facts a verdict needs of at most `ARRIVALS_EVENTS_MAX` creations and
 * trades (a memory bound: a transaction with more keeps none, and the chain's reads decide it), so
 * at most `recentMax` × 8 small records of strings the decoded events already hold; and the
 * waiters (`waitersMax`; past it a waiter is never woken and its poll decides). Each process follows the topic in a group of its own (`ephemeral`: no
 * offsets stored, on the embedded bus no file), so it starts at the end of the log and every
 * replica sees every partition.
 */
import { Context, Duration, Effect, Either, Layer, Schedule } from "effect"
import { Bus, type BusBatch, Topics } from "../../../ingest/bus/Bus.js"
import { type ChainEvent, solanaSlotOf } from "../../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../../ingest/ChainEventCodec.js"
import { processOwner } from "../../db/RowLease.js"

export const ARRIVALS_RECENT_MAX = 4096
export const ARRIVALS_WAITERS_MAX = 10_000
/** Creations and trades kept per delivered Solana transaction (a memory bound); a transaction with more keeps none (the chain's reads decide it). */
export const ARRIVALS_EVENTS_MAX = 8

/** What a verdict needs of one event of a delivered transaction (its strings are the decoded event's own). */
export type StreamedEvent =
  | { readonly _tag: "CurveCreated"; readonly mint: string; readonly curve: string }
  | { readonly _tag: "Trade"; readonly mint: string; readonly trader: string; readonly side: "buy" | "sell"; readonly amountOutRaw: bigint }

/** A Solana transaction as the stream delivered it at a deciding commitment: its slot and its creations and trades, in chain order. */
export interface StreamedTransaction {
  readonly slot: bigint
  readonly events: ReadonlyArray<StreamedEvent>
}

/** The facts kept of an event: a curve's creation or a trade; undefined for any other kind. Pure. */
const streamedEventOf = (e: ChainEvent): StreamedEvent | undefined =>
  e._tag === "Trade"
    ? { _tag: "Trade", mint: e.mint, trader: e.trader, side: e.side, amountOutRaw: e.amountOutRaw }
    : e._tag === "CurveCreated"
      ? { _tag: "CurveCreated", mint: e.mint, curve: e.curve }
      : undefined

/**
 * The executed amount of a landed trade the stream carried: the first trade of `mint` by `trader`
 * on `side` (curve or pool) in the transaction; undefined when it carried none. Pure.
 */
export const streamedTradeOut = (streamed: StreamedTransaction, mint: string, trader: string, side: "buy" | "sell"): bigint | undefined => {
  for (const e of streamed.events) if (e._tag === "Trade" && e.mint === mint && e.trader === trader && e.side === side) return e.amountOutRaw
  return undefined
}

export interface ChainArrivalsStats {
  readonly seen: number
  readonly woken: number
  readonly waiting: number
  /** Waits not registered because `waitersMax` were waiting (their polls decide; a woken poll asks again at each pause). */
  readonly overBound: number
  /** Whether the layer follows `chain.events` (false while a failed subscribe waits for its retry). */
  readonly following: boolean
}

/** A Hood transaction hash in one case (hex is case-insensitive; a Solana signature, base58, is not). */
const keyOf = (signature: string): string => (signature.startsWith("0x") ? signature.toLowerCase() : signature)

/** The signatures seen and the waiters, fed by `seen`. Synchronous; one per process. */
export class Arrivals {
  private readonly ring: Array<string | undefined>
  /** The last `recentMax` signatures, each with what the stream carried of it (null: nothing that decides). */
  private readonly recent = new Map<string, { readonly slot: bigint; readonly events: Array<StreamedEvent> } | null>()
  private next = 0
  private readonly waiters = new Map<string, Set<() => void>>()
  private waiting = 0
  private seenCount = 0
  private wokenCount = 0
  private overBound = 0
  private isFollowing = false

  /**
   * `decides`: the stream's Solana transactions are at `confirmed` or above, delivered by this
   * process's own ingester (its `SOLANA_COMMITMENT`), so `landed` answers them; false (a `processed`
   * stream, or an API replica following another process's ingester): `landed` never does.
   */
  constructor(
    private readonly recentMax = ARRIVALS_RECENT_MAX,
    private readonly waitersMax = ARRIVALS_WAITERS_MAX,
    private readonly decides = true
  ) {
    if (!Number.isSafeInteger(recentMax) || recentMax < 1) throw new RangeError(`Arrivals: recentMax must be a whole number ≥ 1, got ${recentMax}`)
    if (!Number.isSafeInteger(waitersMax) || waitersMax < 0) throw new RangeError(`Arrivals: waitersMax must be a whole number ≥ 0, got ${waitersMax}`)
    this.ring = new Array<string | undefined>(recentMax)
  }

  /** The stream delivered a transaction with this signature (and this event of it, when given): noted, then its waiters woken. */
  seen(transaction: string, event?: ChainEvent): void {
    const fresh = this.note(transaction, event)
    if (fresh !== undefined) this.wake(fresh)
  }

  /** Notes a delivery; the transaction's key when it is new among the recent, else undefined. */
  private note(transaction: string, event: ChainEvent | undefined): string | undefined {
    const signature = keyOf(transaction)
    const fact = event === undefined ? undefined : streamedEventOf(event)
    if (this.recent.has(signature)) {
      // Another event of the same transaction.
      const held = this.recent.get(signature)
      if (held === null || held === undefined || fact === undefined) return undefined
      if (held.events.length >= ARRIVALS_EVENTS_MAX) this.recent.set(signature, null)
      else held.events.push(fact)
      return undefined
    }
    this.seenCount++
    const evicted = this.ring[this.next]
    if (evicted !== undefined) this.recent.delete(evicted)
    this.ring[this.next] = signature
    const slot = this.decides && event !== undefined && event.chain === "solana" ? solanaSlotOf(event.position) : undefined
    this.recent.set(signature, slot === undefined ? null : { slot, events: fact === undefined ? [] : [fact] })
    this.next = (this.next + 1) % this.recentMax
    return signature
  }

  private wake(signature: string): void {
    const wakes = this.waiters.get(signature)
    if (wakes === undefined) return
    this.waiters.delete(signature)
    this.waiting -= wakes.size
    for (const wake of wakes) {
      this.wokenCount++
      wake()
    }
  }

  /**
   * The Solana transaction `signature` as the stream delivered it, among the last `recentMax`,
   * when the stream decides: landed at the ingester's commitment, with the events it carried.
   * Undefined when not delivered, a Hood transaction, a stream that does not decide, or over
   * `ARRIVALS_EVENTS_MAX` creations and trades.
   */
  landed(signature: string): StreamedTransaction | undefined {
    return this.recent.get(keyOf(signature)) ?? undefined
  }

  /**
   * Whether the stream delivered `transaction` among the last `recentMax` (so it is on chain at the
   * ingester's commitment, `confirmed` by default). A hint to read more at once, never a verdict.
   */
  delivered(transaction: string): boolean {
    return this.recent.has(keyOf(transaction))
  }

  /** Succeeds once the stream delivered `signature` (at once if it did among the last `recentMax`); interrupting it unregisters it. */
  arrived(transaction: string): Effect.Effect<void> {
    const signature = keyOf(transaction)
    return Effect.async<void>((resume) => {
      if (this.recent.has(signature)) {
        resume(Effect.void)
        return
      }
      if (this.waiting >= this.waitersMax) {
        this.overBound++
        return // never woken: the poll decides
      }
      const wake = () => resume(Effect.void)
      const set = this.waiters.get(signature) ?? new Set<() => void>()
      set.add(wake)
      this.waiters.set(signature, set)
      this.waiting++
      return Effect.sync(() => {
        const current = this.waiters.get(signature)
        if (current === undefined || !current.delete(wake)) return
        this.waiting--
        if (current.size === 0) this.waiters.delete(signature)
      })
    })
  }

  /** The layer follows the stream now. */
  followed(): void {
    this.isFollowing = true
  }

  stats(): ChainArrivalsStats {
    return { seen: this.seenCount, woken: this.wokenCount, waiting: this.waiting, overBound: this.overBound, following: this.isFollowing }
  }

  /**
   * Feeds a `chain.events` batch (a value that does not decode is skipped: the poll covers it).
   * Waiters wake once the whole batch is held, so a woken look finds every event of its
   * transaction the batch carried.
   */
  feed(batch: BusBatch): void {
    const fresh: Array<string> = []
    for (const record of batch.records) {
      const decoded = decodeChainEvent(record.value)
      // A keeper's progress event names no transaction (`signature` ""): nothing to wake or decide.
      const key = Either.isRight(decoded) && decoded.right.signature !== "" ? this.note(decoded.right.signature, decoded.right) : undefined
      if (key !== undefined) fresh.push(key)
    }
    for (const signature of fresh) this.wake(signature)
  }
}

export class ChainArrivals extends Context.Tag("curvestream/ChainArrivals")<ChainArrivals, Arrivals>() {}

/** The consumer group of this process: its own, never committed (it starts at the log's end). */
export const arrivalsGroup = (owner: string = processOwner()): string => `chain-arrivals-${owner.replace(/[^A-Za-z0-9._-]/g, "-")}`

/** The pause between attempts to follow `chain.events` after one failed: 1 s doubling, at most `ARRIVALS_RETRY_MAX_MS`. */
export const ARRIVALS_RETRY_MAX_MS = 30_000

/**
 * Follows `chain.events` for the layer's lifetime. A subscribe that fails (on Kafka, a topic not
 * created yet) does not leave the process on its polls for life: the layer starts without the
 * stream and tries again in the background, 1 s doubling to at most `retryMaxMs` between tries,
 * one warning per failure, until it follows or the layer closes.
 */
export const layer = (
  options: {
    readonly recentMax?: number
    readonly waitersMax?: number
    /**
     * The commitment of this process's own Solana ingester (`SOLANA_COMMITMENT`, the `all` role): at
     * `confirmed` or `finalized` the stream decides a landed transaction. Absent (an API replica,
     * whose stream another process ingests): it never does, and the reads decide.
     */
    readonly ownIngesterCommitment?: "processed" | "confirmed" | "finalized"
    readonly retryFirstMs?: number
    readonly retryMaxMs?: number
  } = {}
): Layer.Layer<ChainArrivals, never, Bus> =>
  Layer.scoped(
    ChainArrivals,
    Effect.gen(function* () {
      const bus = yield* Bus
      const decides = options.ownIngesterCommitment !== undefined && options.ownIngesterCommitment !== "processed"
      const arrivals = new Arrivals(options.recentMax, options.waitersMax, decides)
      const follow = bus
        .subscribe(
          { group: arrivalsGroup(), topic: Topics.chainEvents, fromBeginning: false, autoCommit: false, beforeDurable: true, ephemeral: true, maxBatch: 2000 },
          (batch) => Effect.sync(() => arrivals.feed(batch))
        )
        .pipe(
          // Without the stream the rails still settle, by their polls.
          Effect.tapError((e) => Effect.logWarning("chain arrivals: following chain.events failed; confirmations wait for the status poll until a retry follows it", e))
        )
      const first = yield* Effect.either(follow)
      if (Either.isLeft(first)) {
        const firstPause = Duration.millis(options.retryFirstMs ?? 1_000)
        const pauses = Schedule.exponential(firstPause).pipe(Schedule.union(Schedule.spaced(Duration.millis(options.retryMaxMs ?? ARRIVALS_RETRY_MAX_MS))))
        yield* Effect.forkScoped(
          Effect.sleep(firstPause).pipe(
            Effect.zipRight(Effect.retry(follow, pauses)),
            Effect.zipRight(Effect.sync(() => arrivals.followed())),
            Effect.zipRight(Effect.logInfo("chain arrivals: following chain.events now"))
          )
        )
      } else arrivals.followed()
      return arrivals
    })
  )

/** The real arrivals with their default bounds, deciding as the `all` role at `confirmed` does; the bus is the test's (the embedded bus). */
export const layerTest: Layer.Layer<ChainArrivals, never, Bus> = layer({ ownIngesterCommitment: "confirmed" })
