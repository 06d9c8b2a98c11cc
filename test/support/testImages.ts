/**
 * Test support: real images made with `sharp` (solid colours, vertical stripes, animations) and a
 * PNG padded to an exact byte length with a valid `tEXt` chunk, for the size bound. Test use only.
 */
import sharp, { type Sharp } from "sharp"
import { crc32 } from "node:zlib"
import type { ImageFormat } from "../../src/services/images/ImageFormat.js"

export type Rgb = readonly [number, number, number]

const encode = (pipeline: Sharp, format: ImageFormat): Promise<Uint8Array> =>
  pipeline
    .toFormat(format, format === "jpeg" || format === "webp" ? { quality: 95 } : {})
    .toBuffer()
    .then((b: Buffer) => new Uint8Array(b))

/** A `width` x `height` image of one colour. */
export const solidImage = (format: ImageFormat, width: number, height: number, colour: Rgb = [40, 120, 200]): Promise<Uint8Array> =>
  encode(sharp({ create: { width, height, channels: 3, background: { r: colour[0], g: colour[1], b: colour[2] } } }), format)

/** Raw RGB pixels: column `x` has the colour `columnColour(x)`. */
export const columnPixels = (width: number, height: number, columnColour: (x: number) => Rgb): Buffer => {
  const raw = Buffer.alloc(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) raw.set(columnColour(x), (y * width + x) * 3)
  }
  return raw
}

/** Vertical stripes: `side` columns of `edge` colour at the left and right, `middle` between. */
export const stripedImage = (format: ImageFormat, width: number, height: number, side: number, edge: Rgb, middle: Rgb): Promise<Uint8Array> =>
  encode(
    sharp(columnPixels(width, height, (x) => (x < side || x >= width - side ? edge : middle)), { raw: { width, height, channels: 3 } }),
    format
  )

/** An animated GIF or WebP of `frames` frames, each `width` x `height` of its own colour. */
export const animatedImage = (format: "gif" | "webp", width: number, height: number, frames: number): Promise<Uint8Array> => {
  const raw = Buffer.concat(
    Array.from({ length: frames }, (_, i) => columnPixels(width, height, () => [(i * 80) % 256, 100, 200 - ((i * 60) % 200)] as const))
  )
  return encode(sharp(raw, { raw: { width, height: height * frames, channels: 3, pageHeight: height } }), format)
}

/** Raw RGB pixels of an encoded image (first frame), with its size. */
export const pixelsOf = async (bytes: Uint8Array): Promise<{ readonly width: number; readonly height: number; readonly data: Buffer }> => {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true })
  return { width: info.width, height: info.height, data }
}

const chunk = (type: string, data: Buffer): Buffer => {
  const typeAndData = Buffer.concat([Buffer.from(type, "ascii"), data])
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  typeAndData.copy(out, 4)
  out.writeUInt32BE(crc32(typeAndData) >>> 0, 8 + data.length)
  return out
}

/** Largest padding chunk written (decoders bound the size of one ancillary chunk). */
const paddingChunkBytesMax = 1024 * 1024

/**
 * A valid PNG of exactly `totalBytes` bytes: `png` with `tEXt` chunks of padding inserted before
 * its `IEND` chunk (the last 12 bytes), each at most 1 MiB.
 */
export const padPng = (png: Uint8Array, totalBytes: number): Uint8Array => {
  const keyword = Buffer.from("Comment\0", "ascii")
  const overhead = 12 + keyword.length
  const fill = totalBytes - png.byteLength
  if (fill !== 0 && fill < overhead) throw new Error(`padPng: cannot add exactly ${fill} bytes`)
  const count = Math.ceil(fill / paddingChunkBytesMax)
  const chunks: Buffer[] = []
  for (let i = 0; i < count; i++) {
    // spread evenly: every chunk within one byte of the others, all at least `overhead`
    const size = Math.floor(fill / count) + (i < fill % count ? 1 : 0)
    chunks.push(chunk("tEXt", Buffer.concat([keyword, Buffer.alloc(size - overhead, 0x61)])))
  }
  const source = Buffer.from(png)
  const out = Buffer.concat([source.subarray(0, source.length - 12), ...chunks, source.subarray(source.length - 12)])
  if (out.length !== totalBytes) throw new Error(`padPng: made ${out.length} bytes, wanted ${totalBytes}`)
  return new Uint8Array(out)
}
