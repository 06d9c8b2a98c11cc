/**
 * A thread program for `LocalnetThread.test.ts`: no chain, only the protocol. Its scope writes
 * `open` to `options.marker` when it starts and `closed` when the engine stops it; `failStart`
 * fails the start; the ops echo, refuse, and crash the thread (a throw out of a timer, like a
 * slot close that throws).
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { runLocalnetThread } from "../../src/chain/internal/LocalnetThreadMain.js"

runLocalnetThread((options: { readonly marker: string; readonly failStart: boolean }) =>
  Effect.gen(function* () {
    yield* Effect.acquireRelease(
      Effect.sync(() => writeFileSync(options.marker, "open")),
      () => Effect.sync(() => writeFileSync(options.marker, "closed"))
    )
    if (options.failStart) return yield* Effect.fail("the chain would not start")
    yield* Effect.logInfo("fixture started").pipe(Effect.annotateLogs({ at: 7n }))
    return {
      info: { url: "http://127.0.0.1:1", n: 42n },
      ops: {
        echo: (x: unknown) => Effect.succeed(x),
        refuse: () => Effect.fail("refused on purpose"),
        crash: () =>
          Effect.sync(() => {
            setTimeout(() => {
              throw new Error("slot close threw")
            }, 0)
          })
      }
    }
  })
)
