/**
 * The members every service failure carries beside its `reason`, so one table in `api/`
 * (`api/ErrorTable.ts`) can turn any of them into the spec's error without knowing the service:
 * the human message, the input field a refusal is about (when the spec's refusal names one), the
 * retryable flag when it depends on the situation, and `details`, the code-specific facts the spec
 * writes beside the code (`currentScopes`, `spendLimit`, `quota`, ...).
 *
 * A service declares its error as
 * `Schema.TaggedError<X>()("X", { reason: Schema.Literal(...), ...failureFields })`; nothing here
 * knows HTTP.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"

export const failureFields = {
  message: Schema.String,
  field: Schema.optional(Schema.String),
  retryable: Schema.optional(Schema.Boolean),
  details: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}

/** What the table reads from a failure. */
export interface FailureMembers {
  readonly _tag: string
  readonly reason: string
  readonly message: string
  readonly field?: string | undefined
  readonly retryable?: boolean | undefined
  readonly details?: { readonly [k: string]: unknown } | undefined
  /** How long until trying again can succeed (a quota's reset), when the failure knows it. */
  readonly retryAfterMs?: number | undefined
}

export interface FailureOptions {
  readonly field?: string
  readonly retryable?: boolean
  readonly details?: Record<string, unknown>
}

/** A constructor shorthand for a service's error class: `(reason, message, options?)`. */
export const failureOf =
  <E, Reason extends string>(
    Ctor: new (args: {
      readonly reason: Reason
      readonly message: string
      readonly field?: string | undefined
      readonly retryable?: boolean | undefined
      readonly details?: { readonly [k: string]: unknown } | undefined
    }) => E
  ) =>
  (reason: Reason, message: string, options: FailureOptions = {}): E =>
    new Ctor({ reason, message, ...options })

/**
 * Decides a storage failure once, where it happens: logs the `SqlError` and fails with the
 * service's own error instead (its storage reason), so no route sees a raw `SqlError`.
 */
export const storageFailure =
  <F>(what: string, asFailure: (e: SqlError) => F) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError> | F, R> =>
    Effect.catchIf(
      self,
      (x): x is Extract<E, SqlError> => (x as { readonly _tag?: unknown })._tag === "SqlError",
      (x) => Effect.zipRight(Effect.logError(`${what}: storage failure`, x), Effect.fail(asFailure(x)))
    ) as Effect.Effect<A, Exclude<E, SqlError> | F, R>
