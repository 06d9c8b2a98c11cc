/**
 * The one failure type that reaches the wire, and the spec's error envelope
 * `{success: false, error: {code, message, field?, retryable?, ...}}`.
 *
 * Domain modules fail with their own tagged errors; route modules map them to `ApiError` at the
 * edge. `extra` carries the code-specific members the spec names (`reason`, `maxThresholdRaw`,
 * `routing`, `discovery`, `txBytes`, ...); they are written beside `code` in `error`.
 */
import { Schema } from "effect"
import { type ErrorCode, ErrorCodes } from "./ErrorCodes.js"

export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  retryable: Schema.optional(Schema.Boolean),
  extra: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}) {
  get httpStatus(): number {
    return this.status ?? ErrorCodes[this.code as ErrorCode]?.status ?? 500
  }
}

export interface ApiErrorOptions {
  readonly field?: string
  readonly status?: number
  readonly retryable?: boolean
  readonly extra?: Record<string, unknown>
  readonly headers?: Record<string, string>
}

/** Builds an `ApiError` for a code of the table; the status defaults to the table's. */
export const apiError = (code: ErrorCode, message: string, options: ApiErrorOptions = {}): ApiError =>
  new ApiError({
    code,
    message,
    ...(options.field !== undefined ? { field: options.field } : {}),
    ...(options.status !== undefined ? { status: options.status } : {}),
    ...(options.retryable !== undefined ? { retryable: options.retryable } : {}),
    ...(options.extra !== undefined ? { extra: options.extra } : {}),
    ...(options.headers !== undefined ? { headers: options.headers } : {})
  })

/** Shorthand for the most common refusal: a field-level `VALIDATION_FAILED`. */
export const validationFailed = (field: string, message: string, extra?: Record<string, unknown>): ApiError =>
  apiError("VALIDATION_FAILED", message, extra === undefined ? { field } : { field, extra })

/**
 * The envelope body. `retryable` is always written: the explicit value when the error has one,
 * otherwise the table's hint when it is a plain boolean.
 */
export const errorEnvelope = (err: ApiError): { success: false; error: Record<string, unknown> } => {
  const info = ErrorCodes[err.code as ErrorCode]
  const body: Record<string, unknown> = { code: err.code, message: err.message }
  if (err.field !== undefined) body.field = err.field
  const retryable = err.retryable ?? (typeof info?.retryable === "boolean" ? info.retryable : undefined)
  if (retryable !== undefined) body.retryable = retryable
  if (err.extra !== undefined) {
    for (const [k, v] of Object.entries(err.extra)) {
      if (!(k in body)) body[k] = v
    }
  }
  return { success: false, error: body }
}
