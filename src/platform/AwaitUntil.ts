/**
 * The production code's one poll loop: run `poll` until its answer satisfies `until` or the
 * deadline passes, on Effect's `Schedule` (the pause between polls) and `Clock` (the deadline), so
 * a test moves it with `TestClock` instead of waiting. Every wait is bounded: `timeoutMs` is
 * required and finite, and at most one poll starts after the deadline has passed.
 *
 * - The first poll runs at once; each next one `intervalMs` after the previous one ended.
 * - A poll that fails fails the wait at once (a caller that wants failures retried polls
 *   `Effect.either(...)` and says in `until` which answers end the wait).
 * - The deadline is read on the Clock after each poll that did not end the wait; past it the wait
 *   fails with `AwaitTimedOut` (what was awaited, the bound, how many polls ran). A poll in flight
 *   is never cut, unless `interruptPoll` is set: then the deadline also interrupts the poll or
 *   pause in flight (for polls that only read and may hang; a poll that writes must not be cut).
 */
import { Clock, Duration, Effect, Either, Option, Schedule, Schema } from "effect"

export class AwaitTimedOut extends Schema.TaggedError<AwaitTimedOut>()("AwaitTimedOut", {
  /** What was awaited. */
  what: Schema.String,
  timeoutMs: Schema.Number,
  /** Polls that ended before the wait gave up. */
  polls: Schema.Number
}) {
  override get message(): string {
    return `${this.what}: not within ${this.timeoutMs} ms (${this.polls} polls)`
  }
}

export interface AwaitUntilOptions {
  /** What is awaited, named in the timeout. */
  readonly what: string
  /** The bound, from the start of the wait, on the Clock. Finite, ≥ 0. */
  readonly timeoutMs: number
  /** The pause between the end of a poll and the start of the next. Finite, ≥ 0. */
  readonly intervalMs: number
  /** The deadline also interrupts the poll or pause in flight (default: a poll always ends). */
  readonly interruptPoll?: boolean
  /**
   * Ends a pause early, once (the ingest stream saw the transaction awaited: `ChainArrivals`): the
   * next poll runs then instead of at the interval. It decides nothing itself; without it, or
   * once it fired, the polls keep the interval.
   */
  readonly wake?: Effect.Effect<void> | undefined
  /**
   * With `wake`: a wake that fires while a poll is in flight cuts that poll (interrupts it) and
   * runs the next one at once, instead of waiting for the cut poll's answer first. Only for polls
   * that only read (a Solana look, whose next run takes the verdict the stream now carries); a poll
   * that writes or sends must not be cut. Default false.
   */
  readonly wakeCutsPoll?: boolean
}

const checkedMs = (name: string, ms: number): number => {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`awaitUntil: ${name} must be a finite number ≥ 0, got ${ms}`)
  return ms
}

export function awaitUntil<A, B extends A, E, R>(
  poll: Effect.Effect<A, E, R>,
  until: (a: A) => a is B,
  options: AwaitUntilOptions
): Effect.Effect<B, E | AwaitTimedOut, R>
export function awaitUntil<A, E, R>(poll: Effect.Effect<A, E, R>, until: (a: A) => boolean, options: AwaitUntilOptions): Effect.Effect<A, E | AwaitTimedOut, R>
export function awaitUntil<A, E, R>(poll: Effect.Effect<A, E, R>, until: (a: A) => boolean, options: AwaitUntilOptions): Effect.Effect<A, E | AwaitTimedOut, R> {
  const timeoutMs = checkedMs("timeoutMs", options.timeoutMs)
  const intervalMs = checkedMs("intervalMs", options.intervalMs)
  const wake = options.wake
  // Woken: the pause is the poll's own (run back to back).
  const interval = wake === undefined ? Duration.millis(intervalMs) : Duration.zero
  return Effect.suspend(() => {
    // Per run of the wait: a woken poll's state is its own.
    const paced = wake === undefined ? poll : wokenPolls(poll, wake, intervalMs, options.wakeCutsPoll === true)
    let polls = 0
    const timedOut = () => new AwaitTimedOut({ what: options.what, timeoutMs, polls })
    const wait = Effect.gen(function* () {
      const deadlineMs = (yield* Clock.currentTimeMillis) + timeoutMs
      const schedule = (Schedule.spaced(interval) as Schedule.Schedule<number, A>).pipe(
        Schedule.passthrough,
        Schedule.checkEffect((a: A) => (until(a) ? Effect.succeed(false) : Effect.map(Clock.currentTimeMillis, (nowMs) => nowMs < deadlineMs)))
      )
      const last = yield* Effect.repeat(Effect.tap(paced, () => void polls++), schedule)
      return until(last) ? last : yield* Effect.fail(timedOut())
    })
    return options.interruptPoll === true ? Effect.timeoutFail(wait, { duration: Duration.millis(timeoutMs), onTimeout: timedOut }) : wait
  })
}

/**
 * Waiting for a verdict from outside that may not come (a transaction's fate): a read that fails
 * is "not yet" (a node that did not answer this time), never the end of the wait; past the
 * deadline the answer is `None`, and the caller leaves the attempt for a later pass.
 */
export const awaitVerdict = <A, E, R>(
  read: Effect.Effect<A, E, R>,
  done: (a: A) => boolean,
  options: Omit<AwaitUntilOptions, "interruptPoll">
): Effect.Effect<Option.Option<A>, never, R> =>
  awaitUntil(Effect.either(read), (r) => Either.isRight(r) && done(r.right), options).pipe(
    Effect.map((r) => (Either.isRight(r) ? Option.some(r.right) : Option.none())),
    Effect.catchTag("AwaitTimedOut", () => Effect.succeedNone)
  )

/**
 * Polls paced by the interval, the pause before each but the first ended early by `wake` (once);
 * with `cutPoll`, a wake during a poll (until the wake fired) interrupts it and polls again at once.
 */
const wokenPolls = <A, E, R>(poll: Effect.Effect<A, E, R>, wake: Effect.Effect<void>, intervalMs: number, cutPoll: boolean): Effect.Effect<A, E, R> => {
  const interval = Duration.millis(intervalMs)
  let first = true
  let woken = false
  const wakeOnce = Effect.tap(wake, () => Effect.sync(() => void (woken = true)))
  const pause = Effect.suspend(() => (woken ? Effect.sleep(interval) : Effect.raceFirst(Effect.sleep(interval), wakeOnce)))
  const look = cutPoll ? Effect.suspend(() => (woken ? poll : Effect.raceFirst(poll, Effect.zipRight(wakeOnce, poll)))) : poll
  return Effect.suspend(() => {
    if (!first) return Effect.zipRight(pause, look)
    first = false
    return look
  })
}
