/**
 * The upload request's body to the image bytes (launch spec 4: "multipart form field `image`, or
 * raw bytes with an image content type"), for the upload route: a `multipart/form-data` body must
 * carry exactly one file part named `image`; any other body must be declared `image/*`. The
 * declared types only select how the body is read: what the bytes are is judged afterwards
 * (`ImageProcessor.recognize`). Refusals are `invalid_body` (`UPLOAD_INVALID`).
 *
 * The route reads at most `uploadBodyBytesMax` bytes: the largest image plus room for the
 * multipart framing.
 */
import * as Multipart from "@effect/platform/Multipart"
import { Chunk, Effect, Option, Stream } from "effect"
import { imageBytesMax } from "./ImageProcessor.js"
import { imageRefused, type ImageRefused } from "./ImageRefused.js"

/** Framing a multipart body adds around the image (boundaries, part headers, other small fields). */
export const multipartOverheadBytesMax = 16 * 1024
export const uploadBodyBytesMax = imageBytesMax + multipartOverheadBytesMax
/** Parts read from a multipart body before it is refused. */
export const uploadPartsMax = 8

const invalid = (message: string) => imageRefused("upload", "invalid_body", message)

const usage = "Send multipart/form-data with a file field `image`, or the image bytes with an image/* Content-Type"

const fromMultipart = (contentType: string, body: Uint8Array): Effect.Effect<Uint8Array, ImageRefused> => {
  const parts = Stream.make(body).pipe(Stream.pipeThroughChannel(Multipart.makeChannel<never>({ "content-type": contentType })))
  // A file part's content is read while the parts stream runs (it shares the parser's input).
  const images = parts.pipe(
    Stream.mapEffect((part): Effect.Effect<Option.Option<Uint8Array>, ImageRefused | Multipart.MultipartError> => {
      if (part.key !== "image") return Effect.succeed(Option.none())
      if (!Multipart.isFile(part)) return Effect.fail(invalid("The multipart field `image` must be a file part"))
      return Effect.map(part.contentEffect, Option.some)
    }),
    Stream.filterMap((o) => o),
    Stream.runCollect
  )
  return Multipart.withLimits(images, { maxParts: Option.some(uploadPartsMax) }).pipe(
    Effect.catchTag("MultipartError", (e) => Effect.fail(invalid(`Malformed multipart body (${e.reason})`))),
    Effect.flatMap((found) => {
      if (Chunk.size(found) === 1) return Effect.succeed(Chunk.unsafeGet(found, 0))
      return Effect.fail(invalid(Chunk.isEmpty(found) ? "The multipart body has no file field `image`" : "Send one `image` file, not several"))
    })
  )
}

export const uploadBytes = (contentType: string | undefined, body: Uint8Array): Effect.Effect<Uint8Array, ImageRefused> => {
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (mediaType === "multipart/form-data") return fromMultipart(contentType!, body)
  if (mediaType.startsWith("image/")) return Effect.succeed(body)
  return Effect.fail(invalid(usage))
}
