/**
 * The atomic build body (spec 2.4) at its bounds: the launch fields as the headless route decodes
 * them, Solana only, no dev buy, the creator payer, and 1 to 4 first buys, each refusal naming the
 * exact field; `payer` and `firstBuys` are accepted here while `wallet` and `linkedWalletId` stay
 * refused.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { DefaultDevBuyCeilings } from "../../../domain/Economics.js"
import { decodeAtomicLaunchRequest } from "./DecodeLaunchRequest.js"
import type { LaunchRequestSettings } from "./LaunchRequest.js"

const settings: LaunchRequestSettings = { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: "http://127.0.0.1/u/" }
const main = { type: "main" }
const linked = { type: "linked", linkedWalletId: "w-1" }
const base = {
  clientLaunchId: "atomic-1",
  name: "Atomic Cat",
  symbol: "ACAT",
  imageUrl: "https://images.example.com/cat.png",
  payer: main,
  firstBuys: [{ payer: main, amountRaw: "1000000000" }]
}
const decode = (body: unknown) => decodeAtomicLaunchRequest(body, { keyEnvironment: "production" }, settings)
const refusal = (body: unknown) => {
  const r = decode(body)
  if (Either.isRight(r)) throw new Error("accepted")
  return [r.left.reason, r.left.field]
}
const buys = (n: number) => Array.from({ length: n }, (_, i) => ({ payer: i % 2 === 0 ? main : linked, amountRaw: String(i + 1) }))

describe("decodeAtomicLaunchRequest", () => {
  it("accepts 1 and 4 first buys, payers repeating, in order", () => {
    for (const n of [1, 4]) {
      const r = decode({ ...base, payer: linked, firstBuys: buys(n) })
      if (Either.isLeft(r)) throw new Error(r.left.message)
      expect(r.right.payer).toEqual(linked)
      expect(r.right.firstBuys.map((b) => [b.payer.type, b.amountRaw])).toEqual(buys(n).map((b) => [b.payer.type, BigInt(b.amountRaw)]))
      expect(r.right.request.buyAmountRaw).toBe(0n)
      expect(r.right.request.async).toBe(false)
    }
    expect(Either.isRight(decode({ ...base, buyAmount: 0 }))).toBe(true)
    expect(Either.isRight(decode({ ...base, buyAmount: "0" }))).toBe(true)
  })

  it("refuses 0 and 5 first buys, and a missing or non-array list", () => {
    expect(refusal({ ...base, firstBuys: [] })).toEqual(["out_of_range", "firstBuys"])
    expect(refusal({ ...base, firstBuys: buys(5) })).toEqual(["out_of_range", "firstBuys"])
    expect(refusal({ ...base, firstBuys: undefined })).toEqual(["required", "firstBuys"])
    expect(refusal({ ...base, firstBuys: { 0: base.firstBuys[0] } })).toEqual(["invalid_type", "firstBuys"])
  })

  it("amountRaw: positive decimal string within a safe integer; each refusal names its leg", () => {
    const at = (amountRaw: unknown) => refusal({ ...base, firstBuys: [base.firstBuys[0], { payer: main, amountRaw }] })
    for (const bad of ["0", "-1", "1.5", "01", 5, "9007199254740992"]) expect(at(bad)).toEqual(["invalid_value", "firstBuys[1].amountRaw"])
    expect(Either.isRight(decode({ ...base, firstBuys: [{ payer: main, amountRaw: "9007199254740991" }] }))).toBe(true)
    expect(refusal({ ...base, firstBuys: [{ payer: main }] })).toEqual(["required", "firstBuys[0].amountRaw"])
    expect(refusal({ ...base, firstBuys: ["x"] })).toEqual(["invalid_type", "firstBuys[0]"])
  })

  it("payers: main or linked with an id; the creator payer is required", () => {
    expect(refusal({ ...base, payer: undefined })).toEqual(["required", "payer"])
    expect(refusal({ ...base, payer: { type: "tee" } })).toEqual(["invalid_value", "payer.type"])
    expect(refusal({ ...base, payer: { type: "linked" } })).toEqual(["required", "payer.linkedWalletId"])
    expect(refusal({ ...base, firstBuys: [{ payer: { type: "linked", linkedWalletId: "x".repeat(129) }, amountRaw: "1" }] })).toEqual([
      "invalid_value",
      "firstBuys[0].payer.linkedWalletId"
    ])
  })

  it("Solana only, no dev buy; wallet and linkedWalletId stay refused", () => {
    expect(refusal({ ...base, chain: "hood", dexVersion: "v4" })).toEqual(["not_allowed", "chain"])
    expect(refusal({ ...base, buyAmount: "1" })).toEqual(["not_allowed", "buyAmount"])
    expect(refusal({ ...base, linkedWalletId: "w-1" })).toEqual(["payer_field_forbidden", "linkedWalletId"])
    expect(refusal({ ...base, wallet: "x" })).toEqual(["payer_field_forbidden", "wallet"])
  })
})
