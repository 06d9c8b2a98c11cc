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

/** A value as log text: strings as they are, bigints in decimal, objects as JSON (bigints in decimal, cycles dropped). */
const show = (u: unknown): string => {
  if (typeof u === "string") return u
  if (typeof u === "bigint") return u.toString()
  if (typeof u !== "object" || u === null) return String(u)
  if (u instanceof Error) return u.stack ?? u.message
  const seen = new Set<unknown>()
  try {
    return JSON.stringify(u, (_key, v: unknown) => {
      if (typeof v === "bigint") return v.toString()
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return undefined
        seen.add(v)
      }
      return v
    })
  } catch {
    return String(u)
  }
}

/** An annotation value that crosses the port as is (structured clone of a primitive), else its text. */
const annotation = (v: unknown): string | number | boolean | null =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean" || v === null ? v : show(v)

const post = (message: unknown) => {
  try {
    port.postMessage(message)
  } catch (e) {
    // Nothing is lost silently: a message the port refuses is replaced by why it was refused.
    port.postMessage({ type: "log", level: "ERROR", message: `a log could not be forwarded: ${show(e)}`, annotations: {} })
  }
}

const forwardLogs = Logger.make(({ annotations, cause, logLevel, message }) => {
  const parts = (Array.isArray(message) ? message : [message]).map(show)
  if (!Cause.isEmpty(cause)) parts.push(Cause.pretty(cause, { renderErrorCause: true }))
  const fields: Record<string, unknown> = {}
  for (const [k, v] of annotations) fields[k] = annotation(v)
  post({ type: "log", level: logLevel.label, message: parts.join(" "), annotations: fields })
})

/**
 * What failed, with its real message: the squashed failure (an `UnknownException` of an
 * `Effect.try` without `catch` is unwrapped to the error it caught), else the cause's first line.
 */
const describe = (cause: Cause.Cause<unknown>): string => {
  const squashed = Cause.squash(cause)
  const error = Cause.isUnknownException(squashed) && squashed.error !== undefined ? squashed.error : squashed
  if (error instanceof Error) return error.message === "" ? (Cause.pretty(cause).split("\n")[0] ?? "failed") : error.message
  return show(error)
}

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
        void run(op(...(message.args ?? []))).then((exit) => {
          if (Exit.isFailure(exit)) return port.postMessage({ type: "reply", id: message.id, ok: false, message: describe(exit.cause) })
          try {
            port.postMessage({ type: "reply", id: message.id, ok: true, value: exit.value })
          } catch (e) {
            port.postMessage({ type: "reply", id: message.id, ok: false, message: `the reply could not cross the port: ${show(e)}` })
          }
        })
      }
    })
    port.postMessage({ type: "ready", info })
  })()
}
