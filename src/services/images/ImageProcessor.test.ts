/**
 * Recognition and the upload square with the real decoder: the four types by their bytes, the
 * size bound exactly at and one byte over, the pixel bound, corrupt and foreign bytes refused,
 * a square image's bytes kept exactly (metadata included), centered crops (stripes prove the
 * centre was kept), EXIF orientation, and animations cropped frame by frame.
 */
import { Effect, Either } from "effect"
import sharp from "sharp"
import { describe, expect, it } from "vitest"
import type { ImageFormat } from "./ImageFormat.js"
import { defaultImageLimits, imageBytesMax, recognize, squareForUpload } from "./ImageProcessor.js"
import type { ImageRefused } from "./ImageRefused.js"
import { animatedImage, padPng, pixelsOf, type Rgb, solidImage, stripedImage } from "../../../test/support/testImages.js"

const run = <A>(e: Effect.Effect<A, ImageRefused>) => Effect.runPromise(e)
const refusal = async <A>(e: Effect.Effect<A, ImageRefused>): Promise<ImageRefused> => {
  const r = await Effect.runPromise(Effect.either(e))
  if (Either.isRight(r)) throw new Error("expected a refusal")
  return r.left
}

const RED: Rgb = [255, 0, 0]
const GREEN: Rgb = [0, 255, 0]

/** How many pixels are within `tolerance` of `colour` in every channel. */
const countNear = (data: Buffer, colour: Rgb, tolerance: number): number => {
  let n = 0
  for (let i = 0; i < data.length; i += 3) {
    if (Math.abs(data[i]! - colour[0]) <= tolerance && Math.abs(data[i + 1]! - colour[1]) <= tolerance && Math.abs(data[i + 2]! - colour[2]) <= tolerance) n++
  }
  return n
}
/** Every pixel within `tolerance` of `colour` (lossy formats move colours a little). */
const allNear = (data: Buffer, colour: Rgb, tolerance: number): boolean => countNear(data, colour, tolerance) === data.length / 3

describe("recognize", () => {
  it.each(["jpeg", "png", "gif", "webp"] as const)("recognizes %s by its bytes and reads its dimensions", async (format) => {
    const bytes = await solidImage(format, 64, 48)
    const image = await run(recognize(bytes, "upload"))
    expect(image).toMatchObject({ format, width: 64, height: 48, frames: 1 })
    expect(image.bytes).toBe(bytes)
  })

  it("refuses what is not one of the four types, whatever it is called", async () => {
    const tiff = new Uint8Array(await sharp({ create: { width: 8, height: 8, channels: 3, background: "#fff" } }).tiff().toBuffer())
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>')
    for (const bytes of [tiff, svg, new TextEncoder().encode("<!doctype html><p>hi")]) {
      expect((await refusal(recognize(bytes, "upload"))).reason).toBe("unsupported_type")
    }
    expect((await refusal(recognize(new Uint8Array(0), "image"))).reason).toBe("empty")
  })

  it("refuses a signature on bytes the decoder cannot read, and a truncated body", async () => {
    const fakePng = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array<number>(200).fill(7)])
    expect((await refusal(recognize(fakePng, "upload"))).reason).toBe("undecodable")
    const jpeg = await stripedImage("jpeg", 256, 256, 64, RED, GREEN)
    const truncated = jpeg.subarray(0, Math.floor(jpeg.byteLength / 2))
    expect((await refusal(recognize(truncated, "upload"))).reason).toBe("undecodable")
    const png = await stripedImage("png", 256, 256, 64, RED, GREEN)
    expect((await refusal(recognize(png.subarray(0, png.byteLength - 40), "banner"))).reason).toBe("undecodable")
  })

  it("accepts exactly the size bound and refuses one byte over", async () => {
    expect(imageBytesMax).toBe(10 * 1024 * 1024 - 1)
    const png = await solidImage("png", 100, 100)
    const atBound = padPng(png, imageBytesMax)
    const image = await run(recognize(atBound, "upload"))
    expect(image).toMatchObject({ format: "png", width: 100, height: 100 })
    const square = await run(squareForUpload(image))
    expect(Buffer.from(square.bytes).equals(Buffer.from(atBound))).toBe(true)

    const over = await refusal(recognize(padPng(png, imageBytesMax + 1), "upload"))
    expect(over).toMatchObject({ reason: "too_large", limitBytes: imageBytesMax, role: "upload" })
  }, 30_000)

  it("refuses more decoded pixels than the bound, at the bound exactly", async () => {
    const limits = { ...defaultImageLimits, pixelsMax: 200 * 100 }
    const at = await run(recognize(await solidImage("png", 200, 100), "upload", limits))
    expect(at).toMatchObject({ width: 200, height: 100 })
    const over = await refusal(recognize(await solidImage("png", 201, 100), "upload", limits))
    expect(over.reason).toBe("too_many_pixels")
    // every frame counts
    const frames = await refusal(recognize(await animatedImage("gif", 100, 100, 3), "upload", { ...defaultImageLimits, pixelsMax: 299 * 100 }))
    expect(frames.reason).toBe("too_many_pixels")
  })

  it("reads displayed dimensions: an EXIF quarter turn swaps width and height", async () => {
    const turned = new Uint8Array(
      await sharp({ create: { width: 300, height: 200, channels: 3, background: "#08f" } }).jpeg().withMetadata({ orientation: 6 }).toBuffer()
    )
    expect(await run(recognize(turned, "image"))).toMatchObject({ width: 200, height: 300 })
  })
})

describe("squareForUpload", () => {
  it("keeps a square image's bytes exactly, metadata included", async () => {
    for (const format of ["jpeg", "png", "gif", "webp"] as const) {
      const bytes = await solidImage(format, 120, 120)
      const out = await run(Effect.flatMap(recognize(bytes, "upload"), (i) => squareForUpload(i)))
      expect(out.bytes).toBe(bytes)
    }
    const withExif = new Uint8Array(
      await sharp({ create: { width: 90, height: 90, channels: 3, background: "#f80" } })
        .jpeg()
        .withExif({ IFD0: { Copyright: "curvestream test", ImageDescription: "kept" } })
        .toBuffer()
    )
    const out = await run(Effect.flatMap(recognize(withExif, "upload"), (i) => squareForUpload(i)))
    expect(Buffer.from(out.bytes).equals(Buffer.from(withExif))).toBe(true)
    expect((await sharp(out.bytes).metadata()).exif).toBeDefined()
  })

  it.each([
    ["png", 0],
    ["gif", 0],
    ["webp", 30],
    ["jpeg", 40]
  ] as const)("crops a wide %s to its centered square, in its own type", async (format: ImageFormat, tolerance) => {
    // 300x200: 50 red columns each side, green between: the centered 200x200 square is all green.
    const bytes = await stripedImage(format, 300, 200, 50, RED, GREEN)
    const out = await run(Effect.flatMap(recognize(bytes, "upload"), (i) => squareForUpload(i)))
    expect(out).toMatchObject({ format, width: 200, height: 200 })
    const again = await run(recognize(out.bytes, "upload"))
    expect(again).toMatchObject({ format, width: 200, height: 200 })
    const px = await pixelsOf(out.bytes)
    // Lossy encoders blur colours across their blocks near the old red edge; judge the interior.
    const interior = await sharp(px.data, { raw: { width: 200, height: 200, channels: 3 } })
      .extract({ left: 16, top: 16, width: 168, height: 168 })
      .raw()
      .toBuffer()
    expect(allNear(interior, GREEN, tolerance)).toBe(true)
    // and the red sides are gone: no pixel anywhere is near red
    expect(countNear(px.data, RED, 100)).toBe(0)
  })

  it("crops a tall image to its centered square", async () => {
    const tall = await sharp(await stripedImage("png", 300, 200, 50, RED, GREEN)).rotate(90).png().toBuffer()
    const out = await run(Effect.flatMap(recognize(new Uint8Array(tall), "upload"), (i) => squareForUpload(i)))
    expect(out).toMatchObject({ width: 200, height: 200 })
    expect(allNear((await pixelsOf(out.bytes)).data, GREEN, 0)).toBe(true)
  })

  it("crops an EXIF-turned JPEG upright", async () => {
    const turned = new Uint8Array(
      await sharp({ create: { width: 300, height: 200, channels: 3, background: "#08f" } }).jpeg().withMetadata({ orientation: 6 }).toBuffer()
    )
    const out = await run(Effect.flatMap(recognize(turned, "upload"), (i) => squareForUpload(i)))
    expect(out).toMatchObject({ width: 200, height: 200 })
    const meta = await sharp(out.bytes).metadata()
    expect(meta.orientation ?? 1).toBe(1)
  })

  it.each(["gif", "webp"] as const)("crops every frame of an animated %s", async (format) => {
    const bytes = await animatedImage(format, 60, 40, 3)
    const image = await run(recognize(bytes, "upload"))
    expect(image).toMatchObject({ width: 60, height: 40, frames: 3 })
    const out = await run(squareForUpload(image))
    expect(out).toMatchObject({ format, width: 40, height: 40, frames: 3 })
    const meta = await sharp(out.bytes, { animated: true }).metadata()
    expect(meta.pages).toBe(3)
    expect(meta.pageHeight ?? meta.height).toBe(40)
    expect(meta.width).toBe(40)
  })
})
