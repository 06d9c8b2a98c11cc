/**
 * The thread side of `LocalnetThread.ts`: runs a localnet's scoped `make` on this worker thread,
 * forwards its logs to the engine, answers the engine's calls, and closes the scope on `stop`.
 * A failed start answers `failed`; a failure after the start (a throw out of a slot close or a
 * block, an unhandled rejection) ends the thread, which the engine sees as a crash.
 */
import { Cause, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import { parentPort, workerData } from "node:worker_threads"

export interface LocalnetThreadProgram<Info> {
  readonly info: Info
  /** The calls the engine may make (the faucet operations no RPC method offers). */
  readonly ops: Readonly<Record<string, (...args: ReadonlyArray<any>) => Effect.Effect<unknown, unknown>>>
}

const port = parentPort!

const forwardLogs = Logger.make(({ annotations, logLevel, message }) => {
  const text = (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : String(m))).join(" ")
  const fields: Record<string, unknown> = {}
  for (const [k, v] of annotations) fields[k] = typeof v === "bigint" ? v.toString() : v
  port.postMessage({ type: "log", level: logLevel.label, message: text, annotations: fields })
})

const describe = (cause: Cause.Cause<unknown>) => Cause.pretty(cause).split("\n")[0] ?? "failed"

/** Runs `make(workerData.options)` until the engine posts `stop`. */
export const runLocalnetThread = <Options, Info, E>(make: (options: Options) => Effect.Effect<LocalnetThreadProgram<Info>, E, Scope.Scope>): void => {
  // Everything from debug up is forwarded; the engine's logger applies its own level.
  const logger = Layer.merge(Logger.replace(Logger.defaultLogger, forwardLogs), Logger.minimumLogLevel(LogLevel.Debug))
  const run = <A, E2>(effect: Effect.Effect<A, E2>) => Effect.runPromiseExit(Effect.provide(effect, logger))
  void (async () => {
    const scope = Effect.runSync(Scope.make())
    const started = await run(Scope.extend(make(workerData.options as Options), scope))
    if (Exit.isFailure(started)) {
      await run(Scope.close(scope, started))
      port.postMessage({ type: "failed", message: describe(started.cause) })
      return
    }
    const { info, ops } = started.value
    port.on("message", (message: { type: string; id?: number; op?: string; args?: ReadonlyArray<unknown> }) => {
      if (message.type === "stop") {
        void run(Scope.close(scope, Exit.void)).then((closed) =>
          port.postMessage({ type: "stopped", problems: Exit.isFailure(closed) ? [describe(closed.cause)] : [] })
        )
      } else if (message.type === "call") {
        const op = ops[message.op ?? ""]
        if (op === undefined) {
          port.postMessage({ type: "reply", id: message.id, ok: false, message: `no operation ${message.op}` })
          return
        }
        void run(op(...(message.args ?? []))).then((exit) =>
          port.postMessage(
            Exit.isSuccess(exit) ? { type: "reply", id: message.id, ok: true, value: exit.value } : { type: "reply", id: message.id, ok: false, message: describe(exit.cause) }
          )
        )
      }
    })
    port.postMessage({ type: "ready", info })
  })()
}
