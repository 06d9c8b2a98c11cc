import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { DefaultDevBuyCeilings } from "../../../domain/Economics.js"
import { decodeLaunchRequest } from "../request/DecodeLaunchRequest.js"
import { blocksLeftOf, launchTermsOf, nodeAnswered, oversizeRefusal } from "./SolanaRules.js"

const settings = { expCustomCurves: true, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://127.0.0.1:8080/api/v1/uploads/images/" }
const requestOf = (over: Record<string, unknown>, keyEnvironment: "production" | "test" = "production") => {
  const decoded = decodeLaunchRequest({ clientLaunchId: "l-1", name: "Curve Cat", symbol: "CCAT", imageUrl: "https://images.example.com/cat.png", ...over }, { keyEnvironment }, settings)
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}

describe("SolanaRules", () => {
  it("a blockhash has the blocks up to its last valid height left, none once passed", () => {
    const lifetime = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 150n }
    expect(blocksLeftOf(lifetime, 100n)).toBe(50n)
    expect(blocksLeftOf(lifetime, 150n)).toBe(0n)
    expect(blocksLeftOf(lifetime, 151n)).toBe(0n)
  })

  it("a Solana request launches on its pair's matrix terms; test-exclusive launches as exclusive; a Hood request has none", () => {
    const terms = launchTermsOf(requestOf({}))
    expect(terms!.mode).toBe(requestOf({}).mode)
    expect(terms!.supplyRaw).toBeGreaterThan(0n)
    expect(launchTermsOf(requestOf({ mode: "test-exclusive", visibility: "test" }, "test"))?.mode).toBe("exclusive")
    expect(launchTermsOf(requestOf({ chain: "hood", dexVersion: "v4" }))).toBeUndefined()
  })

  it("an oversized launch is TRANSACTION_TOO_LARGE with the spec's figures", () => {
    const e = oversizeRefusal({ txBytes: 1300, overBy: 68, limit: 1232, maxNameBytes: 12, fits: false } as never)
    expect(e).toMatchObject({ reason: "transaction_too_large", txBytes: 1300, overBy: 68, maxNameBytes: 12 })
  })

  it("only a node's JSON-RPC error counts as answered; a transport failure does not", () => {
    expect(nodeAnswered(new Error("fetch failed"))).toBe(false)
    expect(nodeAnswered(undefined)).toBe(false)
  })
})
