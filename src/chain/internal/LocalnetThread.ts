/**
 * An embedded localnet on its own worker thread (node:worker_threads), so its slot or block work,
 * its journal's fdatasync and its servers' request handling run off the engine's event loop. The
 * engine talks to the chain only through the sockets the localnet serves (Solana JSON-RPC,
 * Yellowstone gRPC, block engine; Hood JSON-RPC), exactly as to a configured node; the worker port
 * carries only the start-up description (`info`), the localnet's logs, a few faucet calls that no
 * RPC method offers (`call`), and the stop.
 *
 * Protocol (`localnetThread.mjs` loads `module`, which calls `runLocalnetThread` in
 * `LocalnetThreadMain.ts`):
 *   worker → { type: "ready", info } | { type: "failed", message } | { type: "log", level, message, annotations }
 *          | { type: "reply", id, ok: true, value } | { type: "reply", id, ok: false, message }
 *          | { type: "stopped", problems }
 *   parent → { type: "call", id, op, args } | { type: "stop" }
 *
 * Lifecycle (scoped): the scope's release posts `stop`; the thread closes its own scope (the slot
 * clock or miner stops, the servers close, the journal is synced and closed) and answers `stopped`,
 * then the thread is ended (terminated after `stopTimeoutMs`). A thread that fails or exits before
 * it was asked to stop is a crash: `crashed` fails with it (the engine's program races it, so the
 * engine stops on the error instead of hanging on a chain that is gone), pending calls fail, and
 * the crash is logged at once.
 */
import { Deferred, Effect, LogLevel, Runtime, Schema, type Scope } from "effect"
import { Worker } from "node:worker_threads"

export class LocalnetThreadError extends Schema.TaggedError<LocalnetThreadError>()("LocalnetThreadError", {
  localnet: Schema.String,
  stage: Schema.Literal("start", "call", "crash"),
  message: Schema.String
}) {}

export interface LocalnetThread<Info> {
  /** What the thread reported when ready (its URLs, addresses, keys). */
  readonly info: Info
  /** A call into the thread (one of the ops its module serves); fails on the thread's refusal or crash. */
  call(op: string, args: ReadonlyArray<unknown>): Effect.Effect<unknown, LocalnetThreadError>
  /** Never succeeds; fails when the thread crashes (fails or exits without being asked to stop). */
  readonly crashed: Effect.Effect<never, LocalnetThreadError>
}

/** How long a stopping localnet may take to close (flush its journal) before its thread is terminated. */
export const stopTimeoutMs = 30_000

type FromWorker =
  | { readonly type: "ready"; readonly info: unknown }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "log"; readonly level: string; readonly message: string; readonly annotations: Record<string, unknown> }
  | { readonly type: "reply"; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: "reply"; readonly id: number; readonly ok: false; readonly message: string }
  | { readonly type: "stopped"; readonly problems: ReadonlyArray<string> }

const describe = (e: unknown) => (e instanceof Error ? e.message : String(e))

const levelOf = (label: string): LogLevel.LogLevel => LogLevel.allLevels.find((l) => l.label === label) ?? LogLevel.Info

/**
 * Starts `module` (a file URL of a thread program) on a worker thread with `workerData.options`,
 * waits for it to be ready, and stops it when the scope closes.
 */
export const startLocalnetThread = <Info>(
  localnet: string,
  module: URL,
  options: unknown
): Effect.Effect<LocalnetThread<Info>, LocalnetThreadError, Scope.Scope> =>
  Effect.gen(function* () {
    const crash = yield* Deferred.make<never, LocalnetThreadError>()
    const pending = new Map<number, (r: Effect.Effect<unknown, LocalnetThreadError>) => void>()
    let nextId = 0
    let stopping = false
    let ready = false
    let dead: LocalnetThreadError | undefined
    let info: unknown
    // Logs are replayed through the engine's logger (its format and level): on the caller's runtime.
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const logs = (message: Extract<FromWorker, { type: "log" }>) =>
      runFork(Effect.logWithLevel(levelOf(message.level), message.message).pipe(Effect.annotateLogs({ ...message.annotations, localnetThread: localnet })))

    const crashed = (why: string) => {
      if (stopping) return
      const error = new LocalnetThreadError({ localnet, stage: "crash", message: why })
      dead = error
      for (const resume of pending.values()) resume(Effect.fail(error))
      pending.clear()
      runFork(Effect.logError(`the embedded ${localnet} localnet's thread crashed: ${why}`))
      Effect.runSync(Deferred.fail(crash, error))
    }

    const worker = yield* Effect.acquireRelease(
      Effect.async<Worker, LocalnetThreadError>((resume) => {
        const w = new Worker(new URL("./localnetThread.mjs", import.meta.url), { workerData: { module: module.href, options } })
        let settled = false
        const startFailed = (message: string) => {
          if (settled) return
          settled = true
          void w.terminate()
          resume(Effect.fail(new LocalnetThreadError({ localnet, stage: "start", message })))
        }
        w.on("message", (message: FromWorker) => {
          switch (message.type) {
            case "ready":
              ready = true
              settled = true
              info = message.info
              resume(Effect.succeed(w))
              return
            case "failed":
              if (!ready) startFailed(message.message)
              return
            case "log":
              logs(message)
              return
            case "reply": {
              const resumeCall = pending.get(message.id)
              pending.delete(message.id)
              resumeCall?.(
                message.ok ? Effect.succeed(message.value) : Effect.fail(new LocalnetThreadError({ localnet, stage: "call", message: message.message }))
              )
              return
            }
            case "stopped":
              return
          }
        })
        w.on("error", (e) => (ready ? crashed(`failed: ${describe(e)}`) : startFailed(`the thread failed to start: ${describe(e)}`)))
        w.on("exit", (code) => (ready ? crashed(`exited (${code})`) : startFailed(`the thread exited (${code}) before it was ready`)))
        return Effect.sync(() => {
          void w.terminate()
        })
      }),
      (w) =>
        Effect.async<ReadonlyArray<string>>((resume) => {
          stopping = true
          // A crashed thread has nothing left to stop (its crash was logged when it happened).
          if (dead !== undefined) return resume(Effect.succeed([]))
          const onMessage = (m: FromWorker) => m.type === "stopped" && done(m.problems)
          const onExit = () => done(["the thread exited before it reported stopping"])
          const done = (problems: ReadonlyArray<string>) => {
            w.off("message", onMessage)
            w.off("exit", onExit)
            resume(Effect.succeed(problems))
          }
          w.on("message", onMessage)
          w.on("exit", onExit)
          w.postMessage({ type: "stop" })
        }).pipe(
          Effect.timeout(stopTimeoutMs),
          Effect.catchAll(() => Effect.succeed([`did not stop within ${stopTimeoutMs} ms`])),
          Effect.flatMap((problems) => Effect.forEach(problems, (p) => Effect.logWarning(`embedded ${localnet} localnet: ${p}`), { discard: true })),
          Effect.zipRight(Effect.promise(() => w.terminate()))
        )
    )
    return {
      info: info as Info,
      crashed: Deferred.await(crash),
      call: (op, args) =>
        Effect.async<unknown, LocalnetThreadError>((resume) => {
          if (dead !== undefined) return resume(Effect.fail(dead))
          if (stopping) return resume(Effect.fail(new LocalnetThreadError({ localnet, stage: "call", message: "the localnet is stopping" })))
          const id = nextId++
          pending.set(id, resume)
          worker.postMessage({ type: "call", id, op, args })
          return Effect.sync(() => {
            pending.delete(id)
          })
        })
    }
  })
