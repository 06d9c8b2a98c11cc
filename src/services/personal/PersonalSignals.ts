/**
 * The personal-signals writer: subscribes to the signal hub, matches each new signal against
 * every account's follows, rules and own groups (`PersonalIndex`), and records the matches in
 * `md_personal_signals` in batches. `/v1/me/signals` pages them (polled, never pushed).
 *
 * Invariants:
 * - Bounded: the hub's listener only offers to a dropping queue of `queueCapacity` signals (an
 *   idle writer takes an offered signal directly, so at most `queueCapacity` wait beside the
 *   batch in hand); a signal offered to a full queue is not recorded for anyone and is counted
 *   in `dropped`, never blocking the hub. A batch takes at most `batchMax` signals.
 * - The interests index is reloaded when `invalidate()` was called (the routes of this process
 *   call it on every change) and at least every `refreshMs` (changes made by other processes).
 * - A failed write is retried `writeAttempts` times with a short backoff, then the batch is
 *   counted in `failed` and the writer goes on; it never dies on a database error.
 * - Every quality is matched: a follow or rule is the account's own filter, not the tape's
 *   curation.
 */
import { Clock, Duration, Effect, Queue, Schedule, type Scope } from "effect"
import type { Signal } from "../../domain/Signal.js"
import type { SignalHub } from "../signals/SignalHub.js"
import { PersonalIndex } from "./Matcher.js"
import { type PersonalMatch, type PersonalStore, SIGNALS_RETAIN_DEFAULT } from "./PersonalStore.js"

export interface PersonalSignalsOptions {
  /** Signals waiting to be matched (default 10,000). */
  readonly queueCapacity: number
  /** Signals matched and written per transaction (default 500). */
  readonly batchMax: number
  /** Longest use of one interests snapshot (default 2,000 ms). */
  readonly refreshMs: number
  /** Personal signals kept per account (default 10,000). */
  readonly retainPerAccount: number
  /** Attempts per batch write (default 3). */
  readonly writeAttempts: number
}

export const personalSignalsDefaults: PersonalSignalsOptions = {
  queueCapacity: 10_000,
  batchMax: 500,
  refreshMs: 2_000,
  retainPerAccount: SIGNALS_RETAIN_DEFAULT,
  writeAttempts: 3
}

export interface PersonalSignalsStats {
  readonly received: number
  readonly dropped: number
  readonly matched: number
  readonly written: number
  readonly failedBatches: number
  readonly queued: number
  readonly reloads: number
}

export interface PersonalSignalsRunner {
  /** Marks the interests index stale (call after a follow, rule or group change). */
  readonly invalidate: () => void
  readonly stats: () => PersonalSignalsStats
  /** Succeeds once every signal received so far has been processed (tests, shutdown). */
  readonly drained: Effect.Effect<void>
}

export const runPersonalSignals = (
  hub: SignalHub,
  store: PersonalStore,
  options: Partial<PersonalSignalsOptions> = {}
): Effect.Effect<PersonalSignalsRunner, never, Scope.Scope> =>
  Effect.gen(function* () {
    const o = { ...personalSignalsDefaults, ...options }
    for (const name of ["queueCapacity", "batchMax", "refreshMs", "retainPerAccount", "writeAttempts"] as const) {
      if (!Number.isSafeInteger(o[name]) || o[name] < 1) return yield* Effect.dieMessage(`runPersonalSignals: ${name} must be a positive integer`)
    }
    const queue = yield* Effect.acquireRelease(Queue.dropping<Signal>(o.queueCapacity), Queue.shutdown)
    const stats = { received: 0, dropped: 0, matched: 0, written: 0, failedBatches: 0, reloads: 0, processed: 0 }
    let index = PersonalIndex.empty
    let loadedAtMs = Number.NEGATIVE_INFINITY
    let stale = true

    const unsubscribe = hub.subscribe((s) => {
      stats.received++
      if (!queue.unsafeOffer(s)) {
        stats.dropped++
        stats.processed++
      }
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))

    const freshIndex = Effect.gen(function* () {
      const t = yield* Clock.currentTimeMillis
      if (!stale && t - loadedAtMs < o.refreshMs) return index
      stale = false
      const next = yield* store.loadIndex().pipe(
        Effect.tapError((e) => Effect.logWarning("personal signals: cannot reload interests; using the previous snapshot", e.message)),
        Effect.orElseSucceed(() => {
          stale = true
          return index
        })
      )
      if (next !== index) {
        index = next
        loadedAtMs = t
        stats.reloads++
      }
      return index
    })

    const processBatch = (batch: ReadonlyArray<Signal>) =>
      Effect.gen(function* () {
        const idx = yield* freshIndex
        const matches: Array<PersonalMatch> = []
        for (const signal of batch) for (const m of idx.matches(signal)) matches.push({ accountId: m.accountId, signal, reasons: m.reasons })
        stats.matched += matches.length
        if (matches.length === 0) return
        yield* store.writeMatches(matches, o.retainPerAccount).pipe(
          Effect.retry(Schedule.intersect(Schedule.exponential(Duration.millis(50)), Schedule.recurs(o.writeAttempts - 1))),
          Effect.tap((n) => Effect.sync(() => (stats.written += n))),
          Effect.catchAll((e) =>
            Effect.sync(() => stats.failedBatches++).pipe(
              Effect.zipRight(Effect.logError(`personal signals: dropped a batch of ${batch.length} signals after ${o.writeAttempts} attempts`, e.message))
            )
          )
        )
      }).pipe(Effect.ensuring(Effect.sync(() => (stats.processed += batch.length))))

    yield* Effect.forkScoped(
      Effect.forever(Effect.flatMap(Queue.takeBetween(queue, 1, o.batchMax), (chunk) => processBatch([...chunk]))).pipe(
        Effect.catchAllCause((cause) => Effect.logError("personal signals writer stopped", cause))
      )
    )

    const drained: Effect.Effect<void> = Effect.suspend(() =>
      stats.processed >= stats.received ? Effect.void : Effect.zipRight(Effect.sleep(Duration.millis(10)), drained)
    )

    return {
      invalidate: () => {
        stale = true
      },
      stats: () => ({
        received: stats.received,
        dropped: stats.dropped,
        matched: stats.matched,
        written: stats.written,
        failedBatches: stats.failedBatches,
        queued: stats.received - stats.processed,
        reloads: stats.reloads
      }),
      drained
    }
  })
