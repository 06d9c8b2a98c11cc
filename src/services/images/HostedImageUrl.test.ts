/** Hosted URLs: built and recognized, and everything that only looks like one refused. */
import { describe, expect, it } from "vitest"
import { hostedUrl, parseHostedFile, parseHostedUrl } from "./HostedImageUrl.js"

const id = "a".repeat(64)

describe("hosted image URLs", () => {
  it("builds the URL under the public base, with or without a trailing slash or a path prefix", () => {
    expect(hostedUrl("https://api.example.com", { id, format: "png" })).toBe(`https://api.example.com/api/v1/uploads/images/${id}.png`)
    expect(hostedUrl("https://api.example.com/", { id, format: "jpeg" })).toBe(`https://api.example.com/api/v1/uploads/images/${id}.jpg`)
    expect(hostedUrl("http://127.0.0.1:8080/cs", { id, format: "webp" })).toBe(`http://127.0.0.1:8080/cs/api/v1/uploads/images/${id}.webp`)
  })

  it("recognizes this engine's URLs and nothing else", () => {
    const base = "https://api.example.com"
    expect(parseHostedUrl(base, `https://api.example.com/api/v1/uploads/images/${id}.gif`)).toEqual({ id, format: "gif" })
    expect(parseHostedUrl(base, `https://API.example.com:443/api/v1/uploads/images/${id}.gif`)).toEqual({ id, format: "gif" })
    expect(parseHostedUrl("http://127.0.0.1:8080/cs/", `http://127.0.0.1:8080/cs/api/v1/uploads/images/${id}.png`)).toEqual({ id, format: "png" })
    for (const other of [
      `https://other.example.com/api/v1/uploads/images/${id}.gif`, // another host
      `https://api.example.com:8443/api/v1/uploads/images/${id}.gif`, // another port
      `http://api.example.com/api/v1/uploads/images/${id}.gif`, // another scheme
      `https://api.example.com/api/v1/uploads/images/${id}.gif?x=1`,
      `https://api.example.com/api/v1/uploads/images/${id}.gif#x`,
      `https://u:p@api.example.com/api/v1/uploads/images/${id}.gif`,
      `https://api.example.com/api/v1/uploads/images/${id}.svg`,
      `https://api.example.com/api/v1/uploads/images/${id.toUpperCase()}.gif`,
      `https://api.example.com/api/v1/uploads/images/${id.slice(1)}.gif`,
      `https://api.example.com/api/v1/uploads/images/x/${id}.gif`,
      `https://api.example.com/api/v1/uploads/agent-image`,
      "not a url"
    ]) {
      expect(parseHostedUrl(base, other)).toBeUndefined()
    }
  })

  it("parses the served file name", () => {
    expect(parseHostedFile(`${id}.jpg`)).toEqual({ id, format: "jpeg" })
    expect(parseHostedFile(`${id}.jpeg`)).toBeUndefined()
    expect(parseHostedFile(`${id}`)).toBeUndefined()
  })
})
