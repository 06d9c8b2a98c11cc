import { describe, expect, it } from "vitest"
import { keyError } from "../../keys/KeyError.js"
import { duplicateLeg, duplicateLegRefusal, keyRefusal, payerText } from "./AtomicRules.js"

describe("AtomicRules", () => {
  it("the first repeated leg message is named with the earlier leg it repeats; distinct legs pass", () => {
    expect(duplicateLeg(["a", "b", "c"])).toBeUndefined()
    expect(duplicateLeg(["a"])).toBeUndefined()
    expect(duplicateLeg(["a", "b", "b", "a"])).toEqual({ later: 2, earlier: 1 })
    expect(duplicateLeg(["a", "a"])).toEqual({ later: 1, earlier: 0 })
  })

  it("a duplicate leg is refused naming the buy, and the launch or the earlier buy it repeats", () => {
    const ofLaunch = duplicateLegRefusal({ later: 1, earlier: 0 })
    expect(ofLaunch).toMatchObject({ reason: "validation_failed", field: "firstBuys[0]", retryable: false })
    expect(ofLaunch.message).toContain("the launch")
    const ofBuy = duplicateLegRefusal({ later: 3, earlier: 2 })
    expect(ofBuy).toMatchObject({ field: "firstBuys[2]" })
    expect(ofBuy.message).toContain("as firstBuys[1]")
  })

  it("payers enter the canonical body as main or linked:<id>", () => {
    expect(payerText({ type: "main" })).toBe("main")
    expect(payerText({ type: "linked", linkedWalletId: "w_1" })).toBe("linked:w_1")
  })

  it("a transaction-limit refusal is KEY_LIMIT_REACHED keeping its retryability; a spend-cap refusal names the leg", () => {
    const tx = keyRefusal({ position: 0, field: "firstBuys[0].amountRaw", error: keyError("tx_limit_reached", "over", { retryable: true, details: { a: 1 } }) })
    expect(tx).toMatchObject({ reason: "key_limit_reached", retryable: true, details: { a: 1 } })
    expect(tx.field).toBeUndefined()
    const cap = keyRefusal({ position: 1, field: "firstBuys[1].amountRaw", error: keyError("spend_limit_exceeded", "cap") })
    expect(cap).toMatchObject({ reason: "spend_limit_exceeded", field: "firstBuys[1].amountRaw", retryable: false })
  })
})
