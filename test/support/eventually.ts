/**
 * The test suite's one poll loop: wait for a condition with a deadline (STYLE.md: wait on a
 * receipt, never a bare sleep). A probe answers `undefined` or `false` for "not yet" and anything
 * else for "done" (that value is returned); a probe that throws fails the wait at once. At the
 * deadline the wait fails naming what it awaited, how long and how many probes it made.
 * `eventuallyEffect` is the same loop for an Effect probe, on the Effect clock.
 *
 * `consistently` is its negative: "nothing happens for N ms". A check runs at once, every
 * `intervalMs` after, and once more when the span is over; the first check that answers `false` or
 * throws (an `expect` inside it) fails the wait, naming what should have held and when it broke.
 */
import { Clock, Duration, Effect } from "effect"

export interface EventuallyOptions {
  /** What is awaited, named in the failure. */
  readonly what: string
  /** Give up after this long. Default 20 s. */
  readonly deadlineMs?: number
  /** Pause between probes. Default 10 ms. */
  readonly intervalMs?: number
  /** More context for the failure (e.g. the tail of a child process's output). */
  readonly detail?: () => string
}

/** What a probe answers once ready: anything but `undefined` and `false`. */
export type Ready<A> = Exclude<A, undefined | false>

const DEFAULT_DEADLINE_MS = 20_000
const DEFAULT_INTERVAL_MS = 10

const isReady = <A>(value: A): value is Ready<A> => value !== undefined && value !== false

const timedOut = (options: EventuallyOptions, deadlineMs: number, probes: number): Error => {
  const detail = options.detail?.()
  return new Error(`timed out after ${deadlineMs} ms (${probes} probes) waiting for ${options.what}${detail === undefined || detail === "" ? "" : `\n${detail}`}`)
}

export const eventually = async <A>(condition: () => A | Promise<A>, options: EventuallyOptions): Promise<Ready<A>> => {
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS
  const startMs = Date.now()
  for (let probes = 1; ; probes++) {
    const value = await condition()
    if (isReady(value)) return value
    if (Date.now() - startMs > deadlineMs) throw timedOut(options, deadlineMs, probes)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

export const eventuallyEffect = <A, E, R>(condition: Effect.Effect<A, E, R>, options: EventuallyOptions): Effect.Effect<Ready<A>, E | Error, R> =>
  Effect.gen(function* () {
    const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS
    const interval = Duration.millis(options.intervalMs ?? DEFAULT_INTERVAL_MS)
    const startMs = yield* Clock.currentTimeMillis
    for (let probes = 1; ; probes++) {
      const value = yield* condition
      if (isReady(value)) return value
      if ((yield* Clock.currentTimeMillis) - startMs > deadlineMs) return yield* Effect.fail(timedOut(options, deadlineMs, probes))
      yield* Effect.sleep(interval)
    }
  })

export interface ConsistentlyOptions {
  /** What must keep holding, named in the failure. */
  readonly what: string
  /** How long it must hold. */
  readonly forMs: number
  /** Pause between checks. Default 10 ms. */
  readonly intervalMs?: number
  /** More context for the failure of a check that answers `false` (e.g. what was seen instead). */
  readonly detail?: () => string
}

const stoppedHolding = (options: ConsistentlyOptions, afterMs: number, checks: number): Error => {
  const detail = options.detail?.()
  return new Error(
    `${options.what}: stopped holding after ${afterMs} ms (check ${checks}; it had to hold ${options.forMs} ms)${detail === undefined || detail === "" ? "" : `\n${detail}`}`
  )
}

/** Checks `check` over `forMs` (its first run at once, its last at or after the end); resolves with the number of checks. */
export const consistently = async (check: () => boolean | void | Promise<boolean | void>, options: ConsistentlyOptions): Promise<number> => {
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS
  const startMs = Date.now()
  for (let checks = 1; ; checks++) {
    const elapsedBeforeMs = Date.now() - startMs
    if ((await check()) === false) throw stoppedHolding(options, Date.now() - startMs, checks)
    if (elapsedBeforeMs >= options.forMs) return checks
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(intervalMs, options.forMs - (Date.now() - startMs)))))
  }
}
