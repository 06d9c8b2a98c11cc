/**
 * The four hosted image types, recognized by their leading bytes (the file signature), never by
 * a declared content type or a file name. Each type has exactly one content type and file
 * extension, used for the hosted URL and when serving it.
 */

export const ImageFormats = ["jpeg", "png", "gif", "webp"] as const
export type ImageFormat = (typeof ImageFormats)[number]

export const contentTypeOf: Readonly<Record<ImageFormat, string>> = {
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp"
}

export const extensionOf: Readonly<Record<ImageFormat, string>> = {
  jpeg: "jpg",
  png: "png",
  gif: "gif",
  webp: "webp"
}

export const formatOfExtension = (ext: string): ImageFormat | undefined =>
  ImageFormats.find((f) => extensionOf[f] === ext)

const startsWith = (bytes: Uint8Array, offset: number, signature: ReadonlyArray<number>): boolean =>
  bytes.length >= offset + signature.length && signature.every((b, i) => bytes[offset + i] === b)

const ascii = (text: string): ReadonlyArray<number> => Array.from(text, (c) => c.charCodeAt(0))

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const JPEG = [0xff, 0xd8, 0xff]
const GIF87 = ascii("GIF87a")
const GIF89 = ascii("GIF89a")
const RIFF = ascii("RIFF")
const WEBP = ascii("WEBP")

/** The type the bytes are, by signature; undefined for anything else (SVG, TIFF, AVIF, text...). */
export const sniffFormat = (bytes: Uint8Array): ImageFormat | undefined => {
  if (startsWith(bytes, 0, PNG)) return "png"
  if (startsWith(bytes, 0, JPEG)) return "jpeg"
  if (startsWith(bytes, 0, GIF87) || startsWith(bytes, 0, GIF89)) return "gif"
  if (startsWith(bytes, 0, RIFF) && startsWith(bytes, 8, WEBP)) return "webp"
  return undefined
}
