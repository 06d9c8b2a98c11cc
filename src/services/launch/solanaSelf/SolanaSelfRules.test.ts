import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { DefaultDevBuyCeilings, MATRIX_VERSION } from "../../../domain/Economics.js"
import { decodeLaunchRequest } from "../request/DecodeLaunchRequest.js"
import { selfDryRunView } from "./SolanaSelfRules.js"

const settings = { expCustomCurves: true, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://127.0.0.1:8080/api/v1/uploads/images/" }
const requestOf = (over: Record<string, unknown>) => {
  const decoded = decodeLaunchRequest({ clientLaunchId: "l-1", name: "Curve Cat", symbol: "CCAT", imageUrl: "https://images.example.com/cat.png", ...over }, { keyEnvironment: "production" }, settings)
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}
const size = { txBytes: 900, limit: 1232, maxNameBytes: 32 }

describe("SolanaSelfRules", () => {
  it("the self-signed dry run names the payer wallet and its id, the checks that ran, and the size, in the spec's member order", () => {
    const view = selfDryRunView(requestOf({}), { address: "P", id: "w_1" }, false, undefined, size)
    expect(Object.keys(view)).toEqual(["dryRun", "launchWallet", "launchWalletId", "resolved", "checks", "matrixVersion", "size"])
    expect(view).toMatchObject({ launchWallet: "P", launchWalletId: "w_1", checks: { image: "ok" }, matrixVersion: MATRIX_VERSION, size: { ...size, fits: true } })
    expect(selfDryRunView(requestOf({}), { address: "P", id: "w_1" }, true, true, size).checks).toEqual({ image: "ok", banner: "ok", exclusiveEligible: true })
  })

  it("an exp-custom request carries its curve as raw decimal strings; another does not", () => {
    expect(selfDryRunView(requestOf({ mode: "exp-custom", curve: { virtualQuote: "4", threshold: "5" } }), { address: "P", id: "w" }, false, undefined, size).resolved).toMatchObject({
      curve: { virtualQuoteRaw: "4000000000", thresholdRaw: "5000000000" }
    })
    expect("curve" in selfDryRunView(requestOf({}), { address: "P", id: "w" }, false, undefined, size).resolved).toBe(false)
  })
})
