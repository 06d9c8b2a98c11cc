/**
 * The permanent public URL of a hosted image: `<public base>/api/v1/uploads/images/<id>.<ext>`,
 * where `id` is the SHA-256 of the stored bytes (64 lower-case hex digits) and `ext` the type's
 * one extension. The URL names exactly one representation: the same id with another extension
 * is not an image of this engine. Pure.
 */
import { extensionOf, formatOfExtension, type ImageFormat } from "./ImageFormat.js"

export const hostedImagesPrefix = "/api/v1/uploads/images/"

export interface HostedImageRef {
  readonly id: string
  readonly format: ImageFormat
}

const fileFormat = /^([0-9a-f]{64})\.([a-z]+)$/

/** The last path segment of a hosted URL (`<id>.<ext>`), or undefined. */
export const parseHostedFile = (file: string): HostedImageRef | undefined => {
  const m = fileFormat.exec(file)
  if (m === null) return undefined
  const format = formatOfExtension(m[2]!)
  return format === undefined ? undefined : { id: m[1]!, format }
}

export const hostedPath = (ref: HostedImageRef): string => `${hostedImagesPrefix}${ref.id}.${extensionOf[ref.format]}`

/** `base` is the engine's public URL (scheme, host, port; a path prefix is kept). */
export const hostedUrl = (base: string, ref: HostedImageRef): string => `${base.replace(/\/+$/, "")}${hostedPath(ref)}`

/**
 * The hosted image a URL names when it is one of this engine's (same origin and path prefix as
 * `base`, no query or fragment), else undefined: such a URL is read from storage, never fetched.
 */
export const parseHostedUrl = (base: string, text: string): HostedImageRef | undefined => {
  let url: URL
  let root: URL
  try {
    url = new URL(text)
    root = new URL(base)
  } catch {
    return undefined
  }
  if (url.origin !== root.origin || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") return undefined
  const prefix = `${root.pathname.replace(/\/+$/, "")}${hostedImagesPrefix}`
  if (!url.pathname.startsWith(prefix)) return undefined
  return parseHostedFile(url.pathname.slice(prefix.length))
}
