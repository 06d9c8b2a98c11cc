import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { MATRIX_VERSION } from "../../../domain/Economics.js"
import { getAddress } from "viem"
import { hoodSelfLaunchBodyOf, launchDecodeSettings } from "../../../../test/support/selfLaunchRequest.js"
import { decodeLaunchRequest } from "../request/DecodeLaunchRequest.js"
import { selfDryRunView } from "./SelfDryRunView.js"

const requestOf = (over: Record<string, unknown>) => {
  const decoded = decodeLaunchRequest({ clientLaunchId: "l-1", name: "Curve Cat", symbol: "CCAT", imageUrl: "https://images.example.com/cat.png", ...over }, { keyEnvironment: "production" }, launchDecodeSettings)
  if (Either.isLeft(decoded)) throw new Error(`refused: ${decoded.left.message}`)
  return decoded.right
}
const size = { txBytes: 900, limit: 1232, maxNameBytes: 32 }

describe("SelfDryRunView", () => {
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

const payer = getAddress("0x1111111111111111111111111111111111111111")
const hoodRequestOf = (over: Record<string, unknown>) => hoodSelfLaunchBodyOf(over).request

describe("the Hood self-signed dry run's body", () => {
  it("names the payer wallet and its id, the resolved request and the checks that ran, in the spec's member order", () => {
    const r = hoodRequestOf({ buyAmount: "1000" })
    const view = selfDryRunView(r, { address: payer, id: "w-1" }, false, undefined, undefined)
    expect(Object.keys(view)).toEqual(["dryRun", "launchWallet", "launchWalletId", "resolved", "checks", "matrixVersion"])
    expect(Object.keys(view.resolved)).toEqual(["chain", "quoteAsset", "mode", "stakerAllocationBps", "dexVersion", "visibility", "buyAmount"])
    expect(view).toEqual({
      dryRun: true,
      launchWallet: payer,
      launchWalletId: "w-1",
      resolved: { chain: "hood", quoteAsset: r.quoteAsset, mode: r.mode, stakerAllocationBps: Number(r.stakerAllocationBps), dexVersion: "v4", visibility: r.visibility, buyAmount: r.buyAmountRaw.toString() },
      checks: { image: "ok" },
      matrixVersion: MATRIX_VERSION
    })
    expect(selfDryRunView(hoodRequestOf({}), { address: payer, id: "w-1" }, true, true, undefined).checks).toEqual({ image: "ok", banner: "ok", exclusiveEligible: true })
  })
})
