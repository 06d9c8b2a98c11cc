/**
 * The bounded buffer both ClickHouse writers share: producers offer entries, one flusher fiber
 * takes them in arrival order and hands a batch to `flush` when the buffer holds `batchRows`
 * entries or its oldest entry has waited `flushIntervalMs`, whichever comes first.
 *
 * Invariants:
 * - Bounded: at most `maxBufferedRows` entries are held, counting the batch being flushed
 *   (it stays in memory until written). An offer that does not fit waits
 *   (FIFO, so a large offer is not starved by small ones) until flushes make room; nothing is
 *   dropped except through `tryOffer`, which says so. Each offer is at most `maxBufferedRows`
 *   entries (refused otherwise), so the bound is exact.
 * - One flush at a time, in arrival order; a batch holds at most `batchRows` entries.
 * - A failing flush is retried with capped exponential backoff (`retryBaseMs` doubling, at most
 *   `retryMaxDelayMs` apart). After `flushAttemptsMax` attempts (unbounded when undefined) the
 *   batch is dropped from the buffer and `offerAndAwait` callers of its entries fail with the
 *   last error, so a caller with redelivery (the bus) can redeliver.
 * - `offerAndAwait` returns only once every entry it offered was flushed: this is what lets the
 *   trade writer commit bus offsets after the insert.
 * - Closing the scope flushes what is buffered (at most `closeFlushAttemptsMax` attempts per
 *   batch, so a dead ClickHouse cannot hold shutdown forever), then stops. Offers after close
 *   fail with `Unavailable`.
 */
import { Clock, Deferred, Effect, Fiber, FiberId, type Scope } from "effect"
import { ClickHouseError } from "../../ClickHouseError.js"

export interface BatcherOptions {
  /** Entries per flush, at most (and the size that triggers one). */
  readonly batchRows: number
  /** The longest an entry waits for a flush, in ms. */
  readonly flushIntervalMs: number
  /** The bound on buffered entries; offers wait at it. At least `batchRows`. */
  readonly maxBufferedRows: number
  /** Attempts per flush before its entries are given back (failed); undefined: retry forever. */
  readonly flushAttemptsMax: number | undefined
  /** Attempts per flush once closing (bounds shutdown when ClickHouse is down). */
  readonly closeFlushAttemptsMax: number
  /** First retry delay in ms (doubling). */
  readonly retryBaseMs: number
  /** Cap on the delay between attempts in ms. */
  readonly retryMaxDelayMs: number
  /** For log lines. */
  readonly name: string
}

export interface BatcherStats {
  /** Entries held: waiting for a flush or in the running one. */
  readonly bufferedRows: number
  /** Highest `bufferedRows` seen; never above `maxBufferedRows`. */
  readonly bufferedRowsHighWater: number
  /** Offers that had to wait for room. */
  readonly offerWaits: number
  /** Entries refused by `tryOffer` at the bound. */
  readonly dropped: number
  readonly flushes: number
  readonly flushedRows: number
  /** Flushes triggered by size, by time, and by close. */
  readonly flushesBySize: number
  readonly flushesByTime: number
  readonly flushesByClose: number
  /** Failed attempts (each retried or, at the bound, given back). */
  readonly failedAttempts: number
  /** Batches given back to their producers after `flushAttemptsMax` attempts. */
  readonly failedBatches: number
  /** Rows given up at close because ClickHouse still refused them. */
  readonly abandonedAtClose: number
  /** Size of each flushed batch, most recent last (the last 64). */
  readonly recentBatchRows: ReadonlyArray<number>
}

export interface Batcher<E> {
  /** Enqueues (waiting for room) and returns once every entry was flushed, or fails with the flush's error. */
  readonly offerAndAwait: (entries: ReadonlyArray<E>) => Effect.Effect<void, ClickHouseError>
  /**
   * Enqueues (waiting for room) and returns the receipt: a Deferred completed when every entry
   * was flushed (or failed with the flush's error). It completes even if nobody awaits it.
   */
  readonly offerWithReceipt: (entries: ReadonlyArray<E>) => Effect.Effect<Deferred.Deferred<void, ClickHouseError>, ClickHouseError>
  /** Enqueues, waiting for room; returns once buffered (the flush happens later). */
  readonly offer: (entries: ReadonlyArray<E>) => Effect.Effect<void, ClickHouseError>
  /** Enqueues only if there is room now; false when full (nothing enqueued, counted as dropped). */
  readonly tryOffer: (entries: ReadonlyArray<E>) => Effect.Effect<boolean, ClickHouseError>
  readonly stats: Effect.Effect<BatcherStats>
}

interface Ticket {
  remaining: number
  readonly deferred: Deferred.Deferred<void, ClickHouseError>
}

interface Item<E> {
  readonly entry: E
  readonly ticket: Ticket | undefined
  readonly enqueuedAtMs: number
}

interface Waiter<E> {
  readonly items: (nowMs: number) => ReadonlyArray<Item<E>>
  readonly size: number
  readonly resume: (admitted: boolean) => void
}

/**
 * A writer's batcher settings from its own options (the writers name them alike); a writer without
 * `flushAttemptsMax` retries a flush forever.
 */
export const batcherSettings = (
  name: string,
  o: Omit<BatcherOptions, "name" | "flushAttemptsMax"> & { readonly flushAttemptsMax?: number | undefined }
): BatcherOptions => ({
  name,
  batchRows: o.batchRows,
  flushIntervalMs: o.flushIntervalMs,
  maxBufferedRows: o.maxBufferedRows,
  flushAttemptsMax: o.flushAttemptsMax,
  closeFlushAttemptsMax: o.closeFlushAttemptsMax,
  retryBaseMs: o.retryBaseMs,
  retryMaxDelayMs: o.retryMaxDelayMs
})

export const validateBatcherOptions = (o: BatcherOptions): string | undefined => {
  const positive = (n: number) => Number.isSafeInteger(n) && n > 0
  if (!positive(o.batchRows)) return `batchRows must be a positive integer, got ${o.batchRows}`
  if (!positive(o.flushIntervalMs)) return `flushIntervalMs must be a positive integer, got ${o.flushIntervalMs}`
  if (!positive(o.maxBufferedRows) || o.maxBufferedRows < o.batchRows) {
    return `maxBufferedRows must be an integer of at least batchRows (${o.batchRows}), got ${o.maxBufferedRows}`
  }
  if (o.flushAttemptsMax !== undefined && !positive(o.flushAttemptsMax)) {
    return `flushAttemptsMax must be a positive integer, got ${o.flushAttemptsMax}`
  }
  if (!positive(o.closeFlushAttemptsMax)) return `closeFlushAttemptsMax must be a positive integer, got ${o.closeFlushAttemptsMax}`
  if (!positive(o.retryBaseMs) || !positive(o.retryMaxDelayMs) || o.retryMaxDelayMs < o.retryBaseMs) {
    return `retryBaseMs and retryMaxDelayMs must be positive integers with retryBaseMs <= retryMaxDelayMs`
  }
  return undefined
}

const closedError = (name: string) => new ClickHouseError({ reason: "Unavailable", message: `${name} is closed` })

/**
 * Starts the flusher in the current scope. `flush` receives a non-empty batch in arrival order;
 * it is retried as a whole, so it must be idempotent (the writers make it so).
 */
export const makeBatcher = <E>(
  options: BatcherOptions,
  flush: (entries: ReadonlyArray<E>) => Effect.Effect<void, ClickHouseError>
): Effect.Effect<Batcher<E>, ClickHouseError, Scope.Scope> =>
  Effect.gen(function* () {
    const bad = validateBatcherOptions(options)
    if (bad !== undefined) return yield* new ClickHouseError({ reason: "InvalidRequest", message: `${options.name}: ${bad}` })

    const queue: Array<Item<E>> = []
    let head = 0 // queue[head..] waits for a flush; compacted when a flush takes entries
    let inFlight = 0 // entries taken by the running flush: still held, so still counted
    const waiters: Array<Waiter<E>> = []
    let closing = false
    let wake: (() => void) | undefined = undefined
    const stats = {
      bufferedRowsHighWater: 0,
      offerWaits: 0,
      dropped: 0,
      flushes: 0,
      flushedRows: 0,
      flushesBySize: 0,
      flushesByTime: 0,
      flushesByClose: 0,
      failedAttempts: 0,
      failedBatches: 0,
      abandonedAtClose: 0,
      recentBatchRows: [] as Array<number>
    }

    const queued = () => queue.length - head
    /** Everything held: waiting or being flushed. The bound applies to this. */
    const buffered = () => queued() + inFlight
    // A wake with nobody waiting is kept (`wakePending`), so one that lands between the flusher
    // deciding to wait and its wait being registered is not lost; the flusher re-checks its
    // conditions after every wake, so an extra one is harmless.
    let wakePending = false
    const notify = () => {
      const w = wake
      if (w !== undefined) {
        wake = undefined
        w()
      } else {
        wakePending = true
      }
    }

    const push = (items: ReadonlyArray<Item<E>>) => {
      const wasEmpty = queued() === 0
      for (const item of items) queue.push(item)
      if (buffered() > stats.bufferedRowsHighWater) stats.bufferedRowsHighWater = buffered()
      if (wasEmpty || queued() >= options.batchRows) notify()
    }

    /** Admits waiting offers in order while they fit. */
    const admitWaiters = (nowMs: number) => {
      while (waiters.length > 0) {
        const next = waiters[0]!
        if (buffered() + next.size > options.maxBufferedRows) break
        waiters.shift()
        push(next.items(nowMs))
        next.resume(true)
      }
    }

    const enqueue = (entries: ReadonlyArray<E>, ticket: Ticket | undefined): Effect.Effect<void, ClickHouseError> =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        Effect.suspend((): Effect.Effect<void, ClickHouseError> => {
          if (closing) return Effect.fail(closedError(options.name))
          if (entries.length > options.maxBufferedRows) {
            return Effect.fail(
              new ClickHouseError({
                reason: "InvalidRequest",
                message: `${options.name}: an offer of ${entries.length} entries is over the buffer bound of ${options.maxBufferedRows}`
              })
            )
          }
          const items = (at: number) => entries.map((entry) => ({ entry, ticket, enqueuedAtMs: at }))
          if (waiters.length === 0 && buffered() + entries.length <= options.maxBufferedRows) {
            push(items(nowMs))
            return Effect.void
          }
          stats.offerWaits++
          return Effect.async<void, ClickHouseError>((resume) => {
            const waiter: Waiter<E> = {
              items: items,
              size: entries.length,
              resume: (admitted) => resume(admitted ? Effect.void : Effect.fail(closedError(options.name)))
            }
            waiters.push(waiter)
            return Effect.sync(() => {
              const i = waiters.indexOf(waiter)
              if (i >= 0) waiters.splice(i, 1)
            })
          })
        })
      )

    const offerWithReceipt = (
      entries: ReadonlyArray<E>
    ): Effect.Effect<Deferred.Deferred<void, ClickHouseError>, ClickHouseError> =>
      Effect.suspend(() => {
        const ticket: Ticket = { remaining: entries.length, deferred: Deferred.unsafeMake(FiberId.none) }
        if (entries.length === 0) {
          Deferred.unsafeDone(ticket.deferred, Effect.void)
          return Effect.succeed(ticket.deferred)
        }
        return Effect.as(enqueue(entries, ticket), ticket.deferred)
      })

    const offerAndAwait = (entries: ReadonlyArray<E>): Effect.Effect<void, ClickHouseError> =>
      Effect.flatMap(offerWithReceipt(entries), Deferred.await)

    const offer = (entries: ReadonlyArray<E>): Effect.Effect<void, ClickHouseError> =>
      entries.length === 0 ? Effect.void : enqueue(entries, undefined)

    const tryOffer = (entries: ReadonlyArray<E>): Effect.Effect<boolean, ClickHouseError> =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        Effect.suspend(() => {
          if (closing) return Effect.fail(closedError(options.name))
          if (entries.length === 0) return Effect.succeed(true)
          if (waiters.length > 0 || buffered() + entries.length > options.maxBufferedRows) {
            stats.dropped += entries.length
            return Effect.succeed(false)
          }
          push(entries.map((entry) => ({ entry, ticket: undefined, enqueuedAtMs: nowMs })))
          return Effect.succeed(true)
        })
      )

    const waitForWake: Effect.Effect<void> = Effect.async<void>((resume) => {
      if (wakePending) {
        wakePending = false
        resume(Effect.void)
        return
      }
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })

    const delayMs = (attempt: number) =>
      Math.min(options.retryMaxDelayMs, options.retryBaseMs * 2 ** Math.min(attempt - 1, 30))

    /** Flushes one batch with the retry policy; settles its tickets either way. */
    const flushBatch = (items: ReadonlyArray<Item<E>>): Effect.Effect<boolean> =>
      Effect.gen(function* () {
        const entries = items.map((item) => item.entry)
        let attempt = 0
        let lastError: ClickHouseError | undefined = undefined
        const attemptsMax = () =>
          closing ? Math.min(options.flushAttemptsMax ?? Infinity, options.closeFlushAttemptsMax) : (options.flushAttemptsMax ?? Infinity)
        while (attempt < attemptsMax()) {
          attempt++
          const exit = yield* Effect.exit(flush(entries))
          if (exit._tag === "Success") {
            lastError = undefined
            break
          }
          const error: ClickHouseError =
            exit.cause._tag === "Fail"
              ? exit.cause.error
              : new ClickHouseError({ reason: "Unavailable", message: `${options.name}: flush died`, cause: exit.cause })
          lastError = error
          stats.failedAttempts++
          const last = attempt >= attemptsMax()
          yield* Effect.logWarning(`${options.name}: flush of ${entries.length} rows failed (attempt ${attempt})${last ? "; giving the batch back" : "; retrying"}`, error.message)
          if (!last) yield* Effect.sleep(delayMs(attempt))
        }
        if (lastError === undefined) {
          stats.flushes++
          stats.flushedRows += entries.length
          stats.recentBatchRows.push(entries.length)
          if (stats.recentBatchRows.length > 64) stats.recentBatchRows.shift()
        } else {
          stats.failedBatches++
        }
        const settled = new Set<Ticket>()
        for (const item of items) {
          const ticket = item.ticket
          if (ticket === undefined) continue
          if (lastError !== undefined) {
            if (!settled.has(ticket)) {
              settled.add(ticket)
              Deferred.unsafeDone(ticket.deferred, Effect.fail(lastError))
            }
          } else if (--ticket.remaining === 0) {
            Deferred.unsafeDone(ticket.deferred, Effect.void)
          }
        }
        return lastError === undefined
      })

    const take = (): ReadonlyArray<Item<E>> => {
      const n = Math.min(options.batchRows, queued())
      const items = queue.slice(head, head + n)
      head += n
      if (head > 1024 && head * 2 > queue.length) {
        queue.splice(0, head)
        head = 0
      }
      return items
    }

    const flusher = Effect.gen(function* () {
      while (true) {
        if (queued() === 0) {
          if (closing) return
          yield* waitForWake
          continue
        }
        let trigger: "size" | "time" | "close" = "size"
        if (queued() < options.batchRows) {
          if (closing) trigger = "close"
          else {
            const nowMs = yield* Clock.currentTimeMillis
            const dueMs = queue[head]!.enqueuedAtMs + options.flushIntervalMs
            if (nowMs < dueMs) {
              yield* Effect.raceFirst(waitForWake, Effect.sleep(dueMs - nowMs))
              continue // re-evaluate: woken by size, by close, or the deadline passed
            }
            trigger = "time"
          }
        }
        const items = take()
        inFlight = items.length
        if (trigger === "size") stats.flushesBySize++
        else if (trigger === "time") stats.flushesByTime++
        else stats.flushesByClose++
        const ok = yield* flushBatch(items)
        inFlight = 0
        if (!ok && closing) stats.abandonedAtClose += items.length
        admitWaiters(yield* Clock.currentTimeMillis)
      }
    })

    const fiber = yield* Effect.forkDaemon(flusher)

    // Close: refuse new offers, fail the waiting ones, let the flusher drain the buffer, then stop.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        closing = true
        for (const waiter of waiters.splice(0)) waiter.resume(false)
        notify()
        yield* Fiber.await(fiber)
        if (stats.abandonedAtClose > 0) {
          yield* Effect.logError(`${options.name}: ${stats.abandonedAtClose} rows were not written at close (ClickHouse refused them)`)
        }
      })
    )

    return {
      offerAndAwait,
      offerWithReceipt,
      offer,
      tryOffer,
      stats: Effect.sync(() => ({ ...stats, bufferedRows: buffered(), recentBatchRows: [...stats.recentBatchRows] }))
    }
  })
