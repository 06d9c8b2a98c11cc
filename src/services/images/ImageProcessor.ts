/**
 * Image recognition and the upload's square crop, with `sharp` (libvips) doing every decode.
 *
 * Invariants:
 * - The type is the one the bytes' signature names (`ImageFormat.sniffFormat`), and the decoder
 *   must agree; anything else (SVG, TIFF, AVIF, HTML, a PNG signature on garbage) is refused
 *   before or by the decoder. A declared content type is never read.
 * - Size: at most `bytesMax` bytes (the spec's "under 10 MB": 10 MiB less one byte).
 * - Pixels: at most `pixelsMax` decoded pixels (all frames of an animation), so a small file
 *   cannot inflate into gigabytes of decoded pixels. Every image is decoded once in full
 *   (`failOn: "error"`), so a valid header on a corrupt body is refused, not hosted.
 * - Dimensions are the displayed ones: a JPEG or WebP whose EXIF orientation turns it a quarter
 *   turn has its width and height swapped.
 * - `squareForUpload` keeps a square image's bytes unchanged (metadata included); any other is
 *   cropped to its centered square (`ImageShape.centeredSquare`), upright, every frame of an
 *   animation, re-encoded in its own type.
 * - Decodes are CPU-heavy: callers bound how many run at once (`ImageService`, `decodesMax`).
 */
import { Effect } from "effect"
import sharp, { type FormatEnum } from "sharp"
import { type ImageFormat, sniffFormat } from "./ImageFormat.js"
import { imageRefused, type ImageRefused, type ImageRole } from "./ImageRefused.js"
import { centeredSquare, isSquare } from "./ImageShape.js"

/** The spec's "under 10 MB": 10 MiB less one byte is the largest accepted image. */
export const imageBytesMax = 10 * 1024 * 1024 - 1
/** Decoded pixels (all frames) accepted: 50 megapixels (about 200 MB as RGBA). */
export const imagePixelsMax = 50_000_000

export interface ImageLimits {
  readonly bytesMax: number
  readonly pixelsMax: number
}

export const defaultImageLimits: ImageLimits = { bytesMax: imageBytesMax, pixelsMax: imagePixelsMax }

export interface RecognizedImage {
  readonly format: ImageFormat
  /** Displayed width and height of one frame (EXIF orientation applied). */
  readonly width: number
  readonly height: number
  readonly frames: number
  readonly bytes: Uint8Array
}

// libvips keeps a cache of recent operations and their pixels; hosted images are decoded once.
sharp.cache(false)

/** EXIF orientations 5 to 8 are a quarter turn (with or without a flip). */
const quarterTurn = (orientation: number | undefined): boolean => orientation !== undefined && orientation >= 5 && orientation <= 8

const sharpFormat: Readonly<Record<ImageFormat, keyof FormatEnum>> = { jpeg: "jpeg", png: "png", gif: "gif", webp: "webp" }

const decodeFailure = (role: ImageRole, e: unknown, limits: ImageLimits): ImageRefused => {
  const message = e instanceof Error ? e.message : String(e)
  if (/pixel limit/i.test(message)) {
    return imageRefused(role, "too_many_pixels", `Image has more than ${limits.pixelsMax} pixels`)
  }
  return imageRefused(role, "undecodable", `Image could not be decoded: ${message.slice(0, 200)}`)
}

const decoder = (bytes: Uint8Array, limits: ImageLimits, animated: boolean) =>
  sharp(bytes, { failOn: "error", limitInputPixels: limits.pixelsMax, animated })

/**
 * Recognizes `bytes` as one of the four types and reads its dimensions, decoding it in full.
 * `role` only labels the refusal.
 */
export const recognize = (bytes: Uint8Array, role: ImageRole, limits: ImageLimits = defaultImageLimits): Effect.Effect<RecognizedImage, ImageRefused> =>
  Effect.gen(function* () {
    if (bytes.byteLength === 0) return yield* imageRefused(role, "empty", "Image is empty")
    if (bytes.byteLength > limits.bytesMax) {
      return yield* imageRefused(role, "too_large", `Image must be under 10 MB (at most ${limits.bytesMax} bytes)`, {
        limitBytes: limits.bytesMax
      })
    }
    const format = sniffFormat(bytes)
    if (format === undefined) {
      return yield* imageRefused(role, "unsupported_type", "Image must be JPEG, PNG, GIF or WebP (recognized by its bytes)")
    }
    const meta = yield* Effect.tryPromise({ try: () => decoder(bytes, limits, false).metadata(), catch: (e) => decodeFailure(role, e, limits) })
    if (meta.format !== sharpFormat[format] || meta.width === undefined || meta.height === undefined) {
      return yield* imageRefused(role, "undecodable", `Image bytes are not a valid ${format.toUpperCase()}`)
    }
    const frames = Math.max(1, meta.pages ?? 1)
    if (meta.width * meta.height * frames > limits.pixelsMax) {
      return yield* imageRefused(role, "too_many_pixels", `Image has more than ${limits.pixelsMax} pixels`)
    }
    // Decode every pixel of every frame once (into a one-pixel summary), so a corrupt body fails here.
    yield* Effect.tryPromise({
      try: () => decoder(bytes, limits, frames > 1).resize(1, 1, { fit: "fill" }).raw().toBuffer(),
      catch: (e) => decodeFailure(role, e, limits)
    })
    const turned = quarterTurn(meta.orientation)
    return { format, width: turned ? meta.height : meta.width, height: turned ? meta.width : meta.height, frames, bytes }
  })

/**
 * The upload's square: the same image (same bytes) when already square, else its centered square
 * crop, upright, in the same type.
 */
export const squareForUpload = (image: RecognizedImage, limits: ImageLimits = defaultImageLimits): Effect.Effect<RecognizedImage, ImageRefused> =>
  Effect.gen(function* () {
    if (isSquare(image)) return image
    const box = centeredSquare(image)
    const animated = image.frames > 1
    const bytes = yield* Effect.tryPromise({
      try: () => {
        const lossy = image.format === "jpeg" || image.format === "webp"
        return decoder(image.bytes, limits, animated)
          .autoOrient()
          .extract(box)
          .toFormat(sharpFormat[image.format], lossy ? { quality: 90 } : {})
          .toBuffer()
      },
      catch: (e) => decodeFailure("upload", e, limits)
    })
    if (bytes.byteLength > limits.bytesMax) {
      // A crop re-encoded larger than the bound (a heavily compressed source): still over the spec's size.
      return yield* imageRefused("upload", "too_large", `Cropped image is over the ${limits.bytesMax}-byte bound`, { limitBytes: limits.bytesMax })
    }
    return { format: image.format, width: box.width, height: box.height, frames: image.frames, bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) }
  })
