/**
 * The order body decoder's mint (`decodeOrderBody`): a Solana mint must be base58 of 32 bytes, as
 * the trade rail that executes the order requires; the pattern alone admits 44 characters that
 * decode to 33 bytes.
 */
import { describe, expect, it } from "vitest"
import { decodeOrderBody } from "./OrderDecoders.js"

const base = { clientOrderId: "o-1", chain: "solana", mint: "So11111111111111111111111111111111111111112", side: "sell", type: "stop", amount: "1000", stopPrice: "0.5" }
const fieldOf = (body: unknown) => {
  const d = decodeOrderBody(body)
  return "_tag" in d && d._tag === "ApiError" ? d.field : "accepted"
}

describe("decodeOrderBody's mint", () => {
  it("accepts a Solana address of 32 bytes and refuses base58 text of another length, naming mint", () => {
    expect(fieldOf(base)).toBe("accepted")
    expect(fieldOf({ ...base, mint: "z".repeat(44) })).toBe("mint")
    expect(fieldOf({ ...base, mint: "1".repeat(31) })).toBe("mint")
  })
})
