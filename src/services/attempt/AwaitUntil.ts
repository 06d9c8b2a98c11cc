/**
 * Waiting for something outside (a transaction's fate, a status) with a deadline, on Effect's
 * `Schedule` and `Clock`: no hand-written poll loop and no wall clock, so a test moves time with
 * `TestClock`. A read that fails is "not yet" (a chain node that did not answer this time), never
 * the end of the wait.
 *
 * Bounds: at most `deadlineMs` of waiting after the first read, one read every `intervalMs`.
 */
import { Duration, Effect, Either, Option, Schedule } from "effect"

export interface AwaitOptions {
  /** Between reads. */
  readonly intervalMs: number
  /** Past this (measured on the Effect `Clock` from the first read) the wait ends with `None`. */
  readonly deadlineMs: number
}

/**
 * Reads until `done` holds of a successful read (`Some` of it) or the deadline passes (`None`).
 */
export const awaitUntil = <A, E, R>(read: Effect.Effect<A, E, R>, done: (a: A) => boolean, options: AwaitOptions): Effect.Effect<Option.Option<A>, never, R> => {
  const finished = (r: Either.Either<A, E>): boolean => Either.isRight(r) && done(r.right)
  const schedule = Schedule.spaced(Duration.millis(options.intervalMs)).pipe(
    Schedule.upTo(Duration.millis(options.deadlineMs)),
    Schedule.whileInput((r: Either.Either<A, E>) => !finished(r)),
    Schedule.passthrough
  )
  return Effect.either(read).pipe(
    Effect.repeat(schedule),
    Effect.map((last) => (Either.isRight(last) && done(last.right) ? Option.some(last.right) : Option.none()))
  )
}
