/**
 * Fetches the bytes of an `imageUrl` / `bannerUrl` (launch spec 2.1): https only, public
 * addresses only (the public-target check of `src/net/`, the connection pinned to the address it
 * approved), no redirects, one deadline for the whole exchange, and at most `bytesMax` body bytes
 * read (the reader stops at the bound). The bytes are judged afterwards by `ImageProcessor`.
 *
 * Refusal reasons: `invalid_url` (not a URL, not https, credentials, a malformed host),
 * `not_public` (a local name or an address that is not globally reachable; nothing is
 * connected to), `unreachable` (did not resolve, did not connect, no complete answer in time, or
 * a status other than 2xx or 3xx), `redirect` (any 3xx), `too_large`.
 */
import { Effect } from "effect"
import { pinnedGet } from "../../net/PinnedRequest.js"
import { checkTarget, type Resolver, type TargetRefusalReason } from "../../net/PublicTarget.js"
import { imageRefused, type ImageRefused, type ImageRole } from "./ImageRefused.js"

export interface FetchPolicy {
  /** Tests only: admit loopback targets (and `http:` to them). */
  readonly allowLoopback: boolean
  readonly resolve: Resolver
  readonly resolveTimeoutMs: number
  /** Deadline of the request, body included (after resolution). */
  readonly fetchTimeoutMs: number
  readonly bytesMax: number
  /** Extra trusted certificates (tests with a self-signed server). */
  readonly tlsCa?: string | undefined
}

const userAgent = "curvestream-image-fetch/1"

const invalidUrlReasons: ReadonlySet<TargetRefusalReason> = new Set(["invalid_url", "not_https", "credentials_in_url", "invalid_name"])

export const fetchImageBytes = (url: string, role: Exclude<ImageRole, "upload">, policy: FetchPolicy): Effect.Effect<Uint8Array, ImageRefused> =>
  Effect.gen(function* () {
    const field = role === "image" ? "imageUrl" : "bannerUrl"
    const target = yield* checkTarget(url, { allowLoopback: policy.allowLoopback, resolve: policy.resolve, resolveTimeoutMs: policy.resolveTimeoutMs }).pipe(
      Effect.mapError((e) => {
        const reason = e.refusal
        if (invalidUrlReasons.has(reason)) return imageRefused(role, "invalid_url", `${field}: ${e.message}`, { targetReason: reason })
        if (reason === "unresolvable") return imageRefused(role, "unreachable", `${field}: ${e.message}`, { targetReason: reason })
        return imageRefused(role, "not_public", `${field}: ${e.message}`, { targetReason: reason })
      })
    )
    const result = yield* Effect.promise((signal) =>
      pinnedGet(target, {
        headers: { accept: "image/jpeg, image/png, image/gif, image/webp", "user-agent": userAgent },
        timeoutMs: policy.fetchTimeoutMs,
        maxBodyBytes: policy.bytesMax,
        ca: policy.tlsCa,
        signal
      })
    )
    switch (result._tag) {
      case "Body":
        return result.body
      case "Status":
        if (result.statusCode >= 300 && result.statusCode < 400) {
          return yield* imageRefused(role, "redirect", `${field} redirected (HTTP ${result.statusCode}); redirects are not followed`, {
            statusCode: result.statusCode
          })
        }
        return yield* imageRefused(role, "unreachable", `${field} answered HTTP ${result.statusCode}`, { statusCode: result.statusCode })
      case "TooLarge":
        return yield* imageRefused(role, "too_large", `${field} is over 10 MB (the bound is ${policy.bytesMax} bytes)`, {
          limitBytes: policy.bytesMax,
          bytesRead: result.bytesRead
        })
      case "Failed":
        return yield* imageRefused(
          role,
          "unreachable",
          result.timedOut ? `${field} did not answer in full within ${policy.fetchTimeoutMs} ms` : `${field} could not be fetched: ${result.error}`
        )
    }
  })
