/**
 * Why an image was refused: one error for the upload and for the `imageUrl` / `bannerUrl`
 * fetches, with the `role` it was refused in (the spec's codes differ by role, see the table in
 * `api/`) and a `reason` union. Only `rate_limited` is retryable (after `retryAfterMs`).
 */
import { Schema } from "effect"

export const ImageRoles = ["upload", "image", "banner"] as const
export type ImageRole = (typeof ImageRoles)[number]

export const ImageRefusalReasons = [
  // recognition, any role
  "empty",
  "too_large",
  "unsupported_type",
  "undecodable",
  "too_many_pixels",
  // shape, image and banner roles
  "wrong_shape",
  // fetch, image and banner roles
  "invalid_url",
  "not_public",
  "unreachable",
  "redirect",
  // upload role
  "invalid_body",
  "rate_limited",
  "storage_full"
] as const
export type ImageRefusalReason = (typeof ImageRefusalReasons)[number]

export class ImageRefused extends Schema.TaggedError<ImageRefused>()("ImageRefused", {
  role: Schema.Literal(...ImageRoles),
  reason: Schema.Literal(...ImageRefusalReasons),
  message: Schema.String,
  /** `too_large`: the bound in bytes (the largest accepted size). */
  limitBytes: Schema.optional(Schema.Number),
  /** `too_large` while fetching: how many body bytes were read before the reader stopped. */
  bytesRead: Schema.optional(Schema.Number),
  /** `rate_limited`: when the oldest upload of the window leaves it. */
  retryAfterMs: Schema.optional(Schema.Number),
  /** `rate_limited`: the window's limit. */
  limit: Schema.optional(Schema.Number),
  /** `not_public` / `invalid_url` / `unreachable` from the public-target check: its reason. */
  targetReason: Schema.optional(Schema.String),
  /** `unreachable` on an HTTP answer, `redirect`: the status the server gave. */
  statusCode: Schema.optional(Schema.Number),
  /** `wrong_shape`: the decoded dimensions. */
  width: Schema.optional(Schema.Number),
  height: Schema.optional(Schema.Number)
}) {
  get retryable(): boolean {
    return this.reason === "rate_limited"
  }
  /** The request field the refusal is about. */
  get field(): "image" | "imageUrl" | "bannerUrl" {
    return this.role === "upload" ? "image" : this.role === "image" ? "imageUrl" : "bannerUrl"
  }
}

type Details = Omit<ConstructorParameters<typeof ImageRefused>[0], "role" | "reason" | "message">

export const imageRefused = (role: ImageRole, reason: ImageRefusalReason, message: string, details: Details = {}): ImageRefused =>
  new ImageRefused({
    role,
    reason,
    message,
    ...Object.fromEntries(Object.entries(details).filter(([, v]) => v !== undefined))
  })
