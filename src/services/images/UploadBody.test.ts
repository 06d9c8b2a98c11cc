/** The upload body: a multipart `image` file part or raw `image/*` bytes; everything else refused. */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { uploadBytes } from "./UploadBody.js"

const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 0, 255, 13, 10, 45, 45])

const multipart = async (fill: (fd: FormData) => void) => {
  const fd = new FormData()
  fill(fd)
  const res = new Response(fd)
  return { contentType: res.headers.get("content-type")!, body: new Uint8Array(await res.arrayBuffer()) }
}

const read = (contentType: string | undefined, body: Uint8Array) => Effect.runPromise(Effect.either(uploadBytes(contentType, body)))
const reasonOf = async (contentType: string | undefined, body: Uint8Array) => {
  const r = await read(contentType, body)
  return Either.isLeft(r) ? `${r.left.role}/${r.left.reason}` : "accepted"
}

describe("upload body", () => {
  it("reads the multipart file part `image`, bytes exactly, beside other fields", async () => {
    const { contentType, body } = await multipart((fd) => {
      fd.append("note", "hello")
      fd.append("image", new Blob([png], { type: "image/jpeg" }), "whatever.gif")
      fd.append("other", new Blob([Uint8Array.from([9, 9])]), "other.bin")
    })
    const r = await read(contentType, body)
    expect(Either.isRight(r) && Array.from(r.right)).toEqual(Array.from(png))
  })

  it("reads raw bytes declared as any image type (the bytes decide what they are)", async () => {
    for (const ct of ["image/png", "image/jpeg", "IMAGE/WEBP; charset=binary", "image/svg+xml"]) {
      const r = await read(ct, png)
      expect(Either.isRight(r) && r.right).toBe(png)
    }
  })

  it("refuses every other body as invalid_body", async () => {
    const noImage = await multipart((fd) => fd.append("file", new Blob([png]), "a.png"))
    const textImage = await multipart((fd) => fd.append("image", "not a file"))
    const twoImages = await multipart((fd) => {
      fd.append("image", new Blob([png]), "a.png")
      fd.append("image", new Blob([png]), "b.png")
    })
    const manyParts = await multipart((fd) => {
      for (let i = 0; i < 9; i++) fd.append(`f${i}`, "x")
      fd.append("image", new Blob([png]), "a.png")
    })
    expect(await reasonOf(noImage.contentType, noImage.body)).toBe("upload/invalid_body")
    expect(await reasonOf(textImage.contentType, textImage.body)).toBe("upload/invalid_body")
    expect(await reasonOf(twoImages.contentType, twoImages.body)).toBe("upload/invalid_body")
    expect(await reasonOf(manyParts.contentType, manyParts.body)).toBe("upload/invalid_body")
    expect(await reasonOf("multipart/form-data", noImage.body)).toBe("upload/invalid_body") // no boundary
    expect(await reasonOf("application/octet-stream", png)).toBe("upload/invalid_body")
    expect(await reasonOf("application/json", png)).toBe("upload/invalid_body")
    expect(await reasonOf(undefined, png)).toBe("upload/invalid_body")
  })
})
