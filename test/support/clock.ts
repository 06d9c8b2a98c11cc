/**
 * A `Clock` whose time a test sets (`clockAt(() => ms)`), for services driven through a runtime a
 * test does not run itself (routes behind the router, a server's layer). Services read time from
 * the Effect `Clock` only (docs/decisions.md, "Services read time from Clock"); a test that runs
 * the Effect itself uses `TestClock` instead. `sleep` is the live clock's: only the time read is
 * the test's.
 */
import { Clock, Effect, Layer, Runtime } from "effect"

const live = Clock.make()

/** A clock that reads `read()` (a fixed number or a test's mutable time). */
export const clockAt = (read: number | (() => number)): Clock.Clock => {
  const ms = typeof read === "number" ? () => read : read
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: ms,
    currentTimeMillis: Effect.sync(ms),
    unsafeCurrentTimeNanos: () => BigInt(Math.trunc(ms())) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(Math.trunc(ms())) * 1_000_000n),
    sleep: (duration) => live.sleep(duration)
  }
}

/** `Layer.setClock(clockAt(read))`. */
export const layerClockAt = (read: number | (() => number)): Layer.Layer<never> => Layer.setClock(clockAt(read))

/** The default runtime with its clock reading `read()`, for a router or server a test starts. */
export const runtimeAt = (read: number | (() => number)): Runtime.Runtime<never> =>
  Effect.runSync(Effect.runtime<never>().pipe(Effect.withClock(clockAt(read))))
