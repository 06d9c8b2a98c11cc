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
 * Lifecycle (scoped): the start waits at most `startTimeoutMs` for `ready` (and is interruptible);
 * past it, or on interruption, the thread is terminated and the start fails. The scope's release
 * posts `stop`; the thread closes its own scope (the slot clock or miner stops, the servers close,
 * the journal is closed; it is synced only as its `fsync` option says, per write, not at close)
 * and answers `stopped`, then the thread is terminated (after at most `stopTimeoutMs`, and the
 * termination itself is bounded by `stopTimeoutMs`). Calls still pending when `stopped` arrives or
 * the thread is terminated fail. At most `maxPendingCalls` calls wait for a reply at once; one more
 * fails at once. A thread that fails or exits before it was asked to stop is a crash, handled once
 * (a throwing thread emits `error` and then `exit`): `crashed` fails with it (the engine's program
 * races it, so the engine stops on the error instead of hanging on a chain that is gone), pending
 * and later calls fail with that same error, and the crash is logged at once with the thread's stack.
 */
import { Deferred, Duration, Effect, LogLevel, Runtime, Schema, type Scope } from "effect"
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

/** How long a stopping localnet may take to close (its servers and journal) before its thread is terminated; also the bound on the termination. */
export const stopTimeoutMs = 30_000

/** How long a localnet may take to report `ready` (engines start slowly on a loaded machine) before its thread is terminated. */
export const startTimeoutMs = 120_000

/** How many calls may wait for the thread's reply at once; one more fails at once (`stage: "call"`). */
export const maxPendingCalls = 1_024

export interface LocalnetThreadSettings {
  /** Makes the worker (a test keeps a reference to await its `exit`). */
  readonly spawn?: (entry: URL, workerData: unknown) => Worker
  /** Overrides `startTimeoutMs` (a test of the bound). */
  readonly startTimeoutMs?: number
  /** Overrides `stopTimeoutMs` (a test of the bound). */
  readonly stopTimeoutMs?: number
}

type FromWorker =
  | { readonly type: "ready"; readonly info: unknown }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "log"; readonly level: string; readonly message: string; readonly annotations: Record<string, unknown> }
  | { readonly type: "reply"; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: "reply"; readonly id: number; readonly ok: false; readonly message: string }
  | { readonly type: "stopped"; readonly problems: ReadonlyArray<string> }

/** An error from the worker (an uncaught throw on the thread): its stack, which names the message and where. */
const describe = (e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e))

const levelOf = (label: string): LogLevel.LogLevel => LogLevel.allLevels.find((l) => l.label === label) ?? LogLevel.Info

/**
 * Starts `module` (a file URL of a thread program) on a worker thread with `workerData.options`,
 * waits for it to be ready, and stops it when the scope closes.
 */
export const startLocalnetThread = <Info>(
  localnet: string,
  module: URL,
  options: unknown,
  settings: LocalnetThreadSettings = {}
): Effect.Effect<LocalnetThread<Info>, LocalnetThreadError, Scope.Scope> =>
  Effect.gen(function* () {
    const spawn = settings.spawn ?? ((entry, workerData) => new Worker(entry, { workerData }))
    const startBound = settings.startTimeoutMs ?? startTimeoutMs
    const stopBound = settings.stopTimeoutMs ?? stopTimeoutMs
    const crash = yield* Deferred.make<never, LocalnetThreadError>()
    const pending = new Map<number, (r: Effect.Effect<unknown, LocalnetThreadError>) => void>()
    let nextId = 0
    let stopping = false
    let ready = false
    let dead: LocalnetThreadError | undefined
    let info: unknown
    // Logs are replayed through the engine's logger (its format and level): on the caller's runtime,
    // synchronously (a log is a synchronous effect), so they are written in the order they arrive.
    // A logger that throws loses that one log: its exit is dropped here, in the port's handler, where
    // a throw would be the engine's uncaught exception.
    const runLog = Runtime.runSyncExit(yield* Effect.runtime<never>())
    const logs = (message: Extract<FromWorker, { type: "log" }>) =>
      runLog(Effect.logWithLevel(levelOf(message.level), message.message).pipe(Effect.annotateLogs({ ...message.annotations, localnetThread: localnet })))
    const failPending = (error: LocalnetThreadError) => {
      for (const resume of pending.values()) resume(Effect.fail(error))
      pending.clear()
    }
    const stopped = () => new LocalnetThreadError({ localnet, stage: "call", message: "the localnet stopped before it replied" })

    // A crash is handled once: a thread that throws emits `error` and then `exit`, and `dead` stays
    // the error `crashed` failed with (the first), so every later call fails with that same error.
    const crashed = (why: string) => {
      if (stopping || dead !== undefined) return
      const error = new LocalnetThreadError({ localnet, stage: "crash", message: why })
      dead = error
      failPending(error)
      runLog(Effect.logError(`the embedded ${localnet} localnet's thread crashed: ${why}`))
      Effect.runSync(Deferred.fail(crash, error))
    }

    const starting = (w: Worker) =>
      Effect.async<Worker, LocalnetThreadError>((resume) => {
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
              if (settled) return
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
              failPending(stopped())
              return
          }
        })
        w.on("error", (e) => (ready ? crashed(`failed: ${describe(e)}`) : startFailed(`the thread failed to start: ${describe(e)}`)))
        w.on("exit", (code) => (ready ? crashed(`exited (${code})`) : startFailed(`the thread exited (${code}) before it was ready`)))
      })

    // The stop and the termination run as finalizers, uninterruptibly, where `Effect.timeout` would
    // wait for the very effect it times out: each bound is a timer inside its own callback instead.
    const terminate = (w: Worker) =>
      Effect.async<boolean>((resume) => {
        // A thread ended on purpose (a failed start, the stop) is not a crash when its `exit` arrives.
        stopping = true
        let settled = false
        const finish = (inTime: boolean) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          resume(Effect.succeed(inTime))
        }
        const timer = setTimeout(() => finish(false), stopBound)
        w.terminate().then(
          () => finish(true),
          () => finish(true)
        )
      }).pipe(
        Effect.flatMap((inTime) => (inTime ? Effect.void : Effect.logWarning(`embedded ${localnet} localnet: its thread did not terminate within ${stopBound} ms`))),
        Effect.ensuring(
          Effect.sync(() => {
            // Nothing more is heard from an ended thread: calls still waiting fail, its listeners go.
            failPending(stopped())
            w.removeAllListeners("message")
            w.removeAllListeners("exit")
          })
        )
      )

    const stop = (w: Worker) =>
      Effect.async<ReadonlyArray<string>>((resume) => {
        stopping = true
        // A crashed thread has nothing left to stop (its crash was logged when it happened).
        if (dead !== undefined) return resume(Effect.succeed([]))
        let settled = false
        const done = (problems: ReadonlyArray<string>) => {
          if (settled) return
          settled = true
          clearTimeout(timer)
          w.off("message", onMessage)
          w.off("exit", onExit)
          w.off("error", onError)
          resume(Effect.succeed(problems))
        }
        const onMessage = (m: FromWorker) => m.type === "stopped" && done(m.problems)
        const onExit = () => done(["the thread exited before it reported stopping"])
        // A thread that throws while stopping: its stack is the report (its `exit` follows).
        const onError = (e: unknown) => done([`the thread failed while stopping: ${describe(e)}`])
        const timer = setTimeout(() => done([`did not stop within ${stopBound} ms`]), stopBound)
        w.on("message", onMessage)
        w.on("exit", onExit)
        w.on("error", onError)
        w.postMessage({ type: "stop" })
      }).pipe(
        Effect.flatMap((problems) => Effect.forEach(problems, (p) => Effect.logWarning(`embedded ${localnet} localnet: ${p}`), { discard: true })),
        Effect.ensuring(terminate(w))
      )

    // Not an `acquireRelease` (its acquire cannot be interrupted): the thread is spawned and its stop
    // registered uninterruptibly, but the wait for `ready` is interruptible and bounded; past the
    // bound, on interruption or on a failed start, the thread is terminated.
    const worker = yield* Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const w = spawn(new URL("./localnetThread.mjs", import.meta.url), { module: module.href, options })
        // Until the start's own listeners are attached (an interrupt pending here skips them), an
        // `error` would have no listener and throw on the engine's thread; the start's `exit`
        // listener, or the termination, decides what the thread's end means.
        w.on("error", () => {})
        yield* restore(
          starting(w).pipe(
            Effect.timeoutFail({
              duration: Duration.millis(startBound),
              onTimeout: () => new LocalnetThreadError({ localnet, stage: "start", message: `the thread was not ready within ${startBound} ms` })
            })
          )
        ).pipe(Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : terminate(w))))
        yield* Effect.addFinalizer(() => stop(w))
        return w
      })
    )
    return {
      info: info as Info,
      crashed: Deferred.await(crash),
      call: (op, args) =>
        Effect.async<unknown, LocalnetThreadError>((resume) => {
          if (dead !== undefined) return resume(Effect.fail(dead))
          if (stopping) return resume(Effect.fail(new LocalnetThreadError({ localnet, stage: "call", message: "the localnet is stopping" })))
          if (pending.size >= maxPendingCalls) {
            return resume(Effect.fail(new LocalnetThreadError({ localnet, stage: "call", message: `${maxPendingCalls} calls already wait for the thread's reply` })))
          }
          const id = nextId++
          pending.set(id, resume)
          try {
            worker.postMessage({ type: "call", id, op, args })
          } catch (e) {
            // Arguments the port cannot clone: the call fails typed and holds no place among the pending.
            pending.delete(id)
            return resume(Effect.fail(new LocalnetThreadError({ localnet, stage: "call", message: `the call could not be sent: ${describe(e)}` })))
          }
          return Effect.sync(() => {
            pending.delete(id)
          })
        })
    }
  })
