/**
 * Driving a localnet price publisher (`src/sim/PythPublisher.ts`, `src/sim/EthUsdPublisher.ts`)
 * look by look on the `TestClock`, for their tests.
 */
import { Effect, TestClock } from "effect"

/**
 * Waits until the publisher sleeps until its next look on the TestClock (its post, if any, done):
 * bounded by a 20 s deadline on the wall clock, giving the event loop a turn between checks (the
 * publishers' signers and sends are promises, the Hood one's over a real socket).
 */
export const asleep = Effect.gen(function* () {
  const deadline = Date.now() + 20_000
  while ((yield* TestClock.sleeps()).length === 0) {
    if (Date.now() > deadline) throw new Error("the publisher did not come back to its sleep within 20 s")
    yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 1)))
  }
})

/** After the first look, advances the Clock look by look (`intervalMs`), `looks` times, noting the time with `setNow`. */
export const runLooks = (setNow: (ms: number) => void, intervalMs: number, looks: number) =>
  Effect.gen(function* () {
    yield* asleep
    for (let i = 1; i <= looks; i++) {
      setNow(i * intervalMs)
      yield* TestClock.adjust(`${intervalMs} millis`)
      yield* asleep
    }
  })
