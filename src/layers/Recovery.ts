/**
 * The recovery passes a service's layer owns (the `all` and `api` roles): once when the layer is
 * built, before the listener answers, for what a previous run left in flight; then every
 * `IN_FLIGHT_SWEEP_MS` for rows whose owning process died since (a row a live process drives
 * holds a lease and is skipped; `src/db/RowLease.ts`). A failed start pass stops the engine; a
 * failed sweep is logged and runs again.
 */
import { Duration, Effect, Schedule, type Scope } from "effect"

/** How often each API process takes over the in-flight rows whose owner died (their lease ended). */
export const IN_FLIGHT_SWEEP_MS = 10_000

export interface RecoveryPass<R> {
  /** What the pass settles, for the log ("launches", "agent trades"). */
  readonly what: string
  /** The pass: how many rows it took over. */
  readonly pass: Effect.Effect<number, unknown, R>
  /** The start pass's log line for `n` rows. */
  readonly started: (n: number) => string
  /** A sweep's log line for `n` rows. */
  readonly swept: (n: number) => string
}

const logCount = (n: number, line: (n: number) => string) => (n > 0 ? Effect.logInfo(line(n)) : Effect.void)

/** Runs the start pass now and forks the periodic sweep into the layer's scope. */
export const recoveryPass = <R>(recovery: RecoveryPass<R>): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.gen(function* () {
    yield* Effect.flatMap(recovery.pass, (n) => logCount(n, recovery.started)).pipe(Effect.orDie)
    const sweep = Effect.flatMap(recovery.pass, (n) => logCount(n, recovery.swept)).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning(`the in-flight sweep of ${recovery.what} failed; it runs again`, cause))
    )
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(sweep, Duration.millis(IN_FLIGHT_SWEEP_MS)), Schedule.forever))
  })

/**
 * Forks a periodic pass into the layer's scope with no start pass (one whose work reads the chain,
 * which must not hold the listener back): every `IN_FLIGHT_SWEEP_MS`, a failure logged and run again.
 */
export const periodicPass = <R>(recovery: Pick<RecoveryPass<R>, "what" | "pass" | "swept">): Effect.Effect<void, never, R | Scope.Scope> =>
  Effect.asVoid(
    Effect.forkScoped(
      Effect.repeat(
        Effect.delay(
          Effect.flatMap(recovery.pass, (n) => logCount(n, recovery.swept)).pipe(
            Effect.catchAllCause((cause) => Effect.logWarning(`the periodic pass over ${recovery.what} failed; it runs again`, cause))
          ),
          Duration.millis(IN_FLIGHT_SWEEP_MS)
        ),
        Schedule.forever
      )
    )
  )
