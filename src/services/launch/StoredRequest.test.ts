import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { DefaultDevBuyCeilings } from "../../domain/Economics.js"
import { decodeLaunchRequest } from "./request/DecodeLaunchRequest.js"
import { decodeStoredRequest, encodeStoredRequest } from "./StoredRequest.js"

const settings = { expCustomCurves: true, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://127.0.0.1:8080/api/v1/uploads/images/" }

const decoded = (body: Record<string, unknown>) => {
  const r = decodeLaunchRequest(body, { keyEnvironment: "production" }, settings)
  if (Either.isLeft(r)) throw new Error(r.left.message)
  return r.right
}

describe("StoredRequest", () => {
  it("round-trips decoded requests through JSON exactly (amounts as decimal strings)", () => {
    const requests = [
      decoded({ clientLaunchId: "a", name: "A", symbol: "A", imageUrl: "https://example.com/a.png", buyAmount: "123" }),
      decoded({
        clientLaunchId: "b",
        chain: "hood",
        dexVersion: "v4",
        name: "B",
        symbol: "B",
        imageUrl: "http://127.0.0.1:8080/api/v1/uploads/images/" + "a".repeat(64) + ".png",
        bannerUrl: "https://example.com/banner.png",
        buyAmount: "20000000000000000",
        description: "d",
        socials: { twitter: "https://x.com/b" },
        visibility: "hidden",
        async: true
      }),
      decoded({ clientLaunchId: "c", mode: "exp-custom", curve: { virtualQuote: "5", threshold: "6.5" }, name: "C", symbol: "C", imageUrl: "https://example.com/c.png" })
    ]
    for (const r of requests) {
      const json = JSON.parse(JSON.stringify(encodeStoredRequest(r)))
      expect(json.buyAmountRaw).toBeTypeOf("string")
      expect(decodeStoredRequest(json)).toEqual(r)
    }
  })

  it("refuses a row that is not a stored request", () => {
    expect(() => decodeStoredRequest({ clientLaunchId: "x" })).toThrow()
  })
})
