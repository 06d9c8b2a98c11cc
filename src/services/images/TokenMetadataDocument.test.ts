import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { metadataIdOfUri, TokenMetadataDirectory, viewOf } from "../../../actors/TokenMetadata.js"
import { metadataIdOf, metadataUrl, parseMetadataFile, tokenMetadataDocument, viewOfDocument } from "./TokenMetadataDocument.js"

const fields = {
  name: "Curve Cat",
  symbol: "CCAT",
  description: "A cat on a curve",
  image: "https://api.example.com/api/v1/uploads/images/" + "a".repeat(64) + ".png",
  banner: "https://api.example.com/api/v1/uploads/images/" + "b".repeat(64) + ".png",
  socials: { discord: "https://discord.gg/cat", twitter: "https://x.com/cat", website: "https://cat.example.com" }
}

describe("the launch metadata document", () => {
  it("is the Metaplex fungible shape with the links and banner under extensions, members in a fixed order", () => {
    const text = new TextDecoder().decode(tokenMetadataDocument(fields))
    expect(JSON.parse(text)).toEqual({
      name: "Curve Cat",
      symbol: "CCAT",
      description: "A cat on a curve",
      image: fields.image,
      external_url: "https://cat.example.com",
      extensions: { twitter: "https://x.com/cat", website: "https://cat.example.com", discord: "https://discord.gg/cat", banner: fields.banner }
    })
    // Deterministic whatever order the links came in: the dry run's URI is the launch's.
    const reordered = { ...fields, socials: { website: fields.socials.website, twitter: fields.socials.twitter, discord: fields.socials.discord } }
    expect(tokenMetadataDocument(reordered)).toEqual(tokenMetadataDocument(fields))
  })

  it("omits what the launch did not give", () => {
    const bare = JSON.parse(new TextDecoder().decode(tokenMetadataDocument({ ...fields, description: null, banner: null, socials: {} })))
    expect(bare).toEqual({ name: "Curve Cat", symbol: "CCAT", image: fields.image })
    expect(viewOfDocument(tokenMetadataDocument({ ...fields, description: null, banner: null, socials: {} }))).toEqual({
      image: fields.image,
      banner: null,
      description: null,
      socials: null
    })
  })

  it("reads back the fields the reads serve; bytes that are not a document read as none", () => {
    expect(viewOfDocument(tokenMetadataDocument(fields))).toEqual({ image: fields.image, banner: fields.banner, description: fields.description, socials: fields.socials })
    for (const junk of ["", "null", "[]", "{\"name\":\"x\"}", "{"]) expect(viewOfDocument(new TextEncoder().encode(junk))).toBeUndefined()
  })

  it("is addressed by the SHA-256 of its bytes, under the engine's base URL", () => {
    const bytes = tokenMetadataDocument(fields)
    const id = metadataIdOf(bytes)
    expect(id).toBe(createHash("sha256").update(bytes).digest("hex"))
    const url = metadataUrl("https://api.example.com/base/", id)
    expect(url).toBe(`https://api.example.com/base/api/v1/uploads/metadata/${id}.json`)
    expect(metadataIdOfUri(url)).toBe(id)
    expect(parseMetadataFile(`${id}.json`)).toBe(id)
    for (const file of [`${id}.png`, `${id.toUpperCase()}.json`, `${id}.json.json`, "x.json"]) expect(parseMetadataFile(file)).toBeUndefined()
  })
})

describe("the metadata directory a read process holds", () => {
  const id = "c".repeat(64)
  const uri = `https://api.example.com/api/v1/uploads/metadata/${id}.json`
  const view = { image: "https://img/1.png", banner: null, description: "d", socials: { twitter: "https://x.com/c" } }

  it("reads a URI that is not ours as before documents existed: the URI is the image", () => {
    const directory = new TokenMetadataDirectory()
    expect(viewOf("https://example.com/legacy.png", directory)).toEqual({ image: "https://example.com/legacy.png", banner: null, description: null, socials: null })
    expect(viewOf("", directory).image).toBeNull()
  })

  it("reads one of ours not known yet with no image, then the document's fields once added (under any base URL)", () => {
    const directory = new TokenMetadataDirectory()
    expect(viewOf(uri, directory)).toEqual({ image: null, banner: null, description: null, socials: null })
    expect(directory.add(id, view)).toBe(true)
    expect(directory.add(id, { ...view, description: "other" })).toBe(false) // a document never changes
    expect(viewOf(uri, directory)).toEqual(view)
    expect(viewOf(`http://127.0.0.1:9/api/v1/uploads/metadata/${id}.json`, directory)).toEqual(view)
  })

  it("holds at most maxEntries, forgetting the oldest", () => {
    const directory = new TokenMetadataDirectory(2)
    const ids = ["1", "2", "3"].map((d) => d.repeat(64))
    for (const i of ids) directory.add(i, view)
    expect(directory.size).toBe(2)
    expect(directory.get(`https://h/api/v1/uploads/metadata/${ids[0]}.json`)).toBeUndefined()
    expect(directory.get(`https://h/api/v1/uploads/metadata/${ids[2]}.json`)).toEqual(view)
    expect(() => new TokenMetadataDirectory(0)).toThrow(RangeError)
  })
})
