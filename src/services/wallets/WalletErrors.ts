/**
 * How the wallet service refuses. (Step one of issue 15 keeps the refusal as it was; the typed
 * errors replace it.)
 */
import { Schema } from "effect"
import type { ErrorCode } from "../../domain/ErrorCodes.js"

/** A refusal with the spec's code; the route maps it to the wire unchanged. */
export class WalletRefusal extends Schema.TaggedError<WalletRefusal>()("WalletRefusal", {
  code: Schema.String,
  message: Schema.String,
  field: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Number),
  extra: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}) {}

export const refuse = (
  code: ErrorCode,
  message: string,
  more: { field?: string; status?: number; extra?: Record<string, unknown> } = {}
): WalletRefusal => new WalletRefusal({ code, message, ...more })

export const notFound = (message: string) => refuse("VALIDATION_FAILED", message, { status: 404, field: "id" })
