import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { DefaultDevBuyCeilings, MATRIX_VERSION } from "../../../domain/Economics.js"
import { decodeLaunchRequest } from "../request/DecodeLaunchRequest.js"
import { devBuyFields, headlessDryRunView } from "./HeadlessRules.js"

const settings = { expCustomCurves: true, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://127.0.0.1:8080/api/v1/uploads/images/" }
const requestOf = (over: Record<string, unknown>) => {
  const decoded = decodeLaunchRequest({ clientLaunchId: "l-1", name: "Curve Cat", symbol: "CCAT", imageUrl: "https://images.example.com/cat.png", ...over }, { keyEnvironment: "production" }, settings)
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}

describe("HeadlessRules", () => {
  it("the dry run answers the resolved request, the checks that ran, and the size only on Solana, in the spec's member order", () => {
    const view = headlessDryRunView(requestOf({}), "W", false, undefined, { txBytes: 900, limit: 1232, maxNameBytes: 32 })
    expect(Object.keys(view).slice(0, 5)).toEqual(["dryRun", "launchWallet", "resolved", "checks", "matrixVersion"])
    expect(view).toMatchObject({ dryRun: true, launchWallet: "W", checks: { image: "ok" }, matrixVersion: MATRIX_VERSION, size: { txBytes: 900, limit: 1232, maxNameBytes: 32, fits: true } })
    expect(view.checks).toEqual({ image: "ok" })
    const hood = headlessDryRunView(requestOf({ chain: "hood", dexVersion: "v4" }), "0xW", true, true, undefined)
    expect(hood.checks).toEqual({ image: "ok", banner: "ok", exclusiveEligible: true })
    expect("size" in hood).toBe(false)
    expect(hood.resolved).toMatchObject({ chain: "hood", dexVersion: "v4", buyAmount: "0" })
  })

  it("an exp-custom dry run carries its curve as raw decimal strings", () => {
    const view = headlessDryRunView(requestOf({ mode: "exp-custom", curve: { virtualQuote: "4", threshold: "5" } }), "W", false, undefined, undefined)
    expect(view.resolved).toMatchObject({ mode: "exp-custom", curve: { virtualQuoteRaw: "4000000000", thresholdRaw: "5000000000" } })
  })

  it("a Hood job's devBuy names outcome, pending signature and fee outcome, null when unknown", () => {
    expect(devBuyFields({ outcome: "pending", pendingSignature: "0xh", feeOutcome: "not_sent" })).toEqual({ outcome: "pending", pendingSignature: "0xh", feeOutcome: "not_sent" })
    expect(devBuyFields({})).toEqual({ outcome: null, pendingSignature: null, feeOutcome: null })
  })
})
