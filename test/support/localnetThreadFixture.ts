/**
 * A thread program for `LocalnetThread.test.ts`: no chain, only the protocol. Its scope writes
 * `open` to `options.marker` when it starts and `closed` when the engine stops it (never with
 * `hangStop`); `failStart` fails the start; it logs `fixture started` with a bigint annotation and an object message part;
 * the ops echo, refuse, throw, hold (never reply), crash the thread (a throw out of a timer, like a
 * slot close that throws), and crash it while the call waits.
 */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { runLocalnetThread } from "../../src/chain/internal/LocalnetThreadMain.js"

const crashSoon = () => {
  setTimeout(() => {
    throw new Error("slot close threw")
  }, 0)
}

runLocalnetThread((options: { readonly marker: string; readonly failStart: boolean; readonly hangStop?: boolean }) =>
  Effect.gen(function* () {
    yield* Effect.acquireRelease(
      Effect.sync(() => writeFileSync(options.marker, "open")),
      // `hangStop`: a chain whose close never ends (a server that never closes, a stuck sync).
      () => (options.hangStop === true ? Effect.never : Effect.sync(() => writeFileSync(options.marker, "closed")))
    )
    if (options.failStart) return yield* Effect.fail("the chain would not start")
    yield* Effect.logInfo("fixture started", { slot: 7n }).pipe(Effect.annotateLogs({ at: 7n }))
    return {
      info: { url: "http://127.0.0.1:1", n: 42n },
      ops: {
        echo: (x: unknown) => Effect.succeed(x),
        refuse: () => Effect.fail("refused on purpose"),
        // `Effect.try` without `catch`: the reply still names the error it caught.
        throws: () =>
          Effect.try(() => {
            throw new Error("the ledger refused the transfer")
          }),
        hold: () => Effect.never,
        crash: () => Effect.sync(crashSoon),
        crashWhileWaiting: () => Effect.zipRight(Effect.sync(crashSoon), Effect.never)
      }
    }
  })
)
