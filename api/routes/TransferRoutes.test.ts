/**
 * The transfer build body's per-chain rules: Solana assets and base58 destinations, Hood assets
 * (eth, usdg, a token address) and EVM destinations, a mixed-case address only with its EIP-55
 * checksum; each refusal names its field (`asset` or `to`), as the router reports the first
 * problem's path. The submit body's signed transaction in each chain's form (Solana base64, Hood
 * 0x-hex, as the sign relay answers them).
 */
import { Either, ParseResult, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { signedBytesOf, TransferBuildBody, TransferSubmitBody } from "./TransferRoutes.js"

const CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
const SOLANA = "So11111111111111111111111111111111111111112"
const decode = (body: Record<string, unknown>) => Schema.decodeUnknownEither(TransferBuildBody)({ clientTransferId: "t", amountRaw: "1", ...body })
const fieldOf = (body: Record<string, unknown>) => {
  const r = decode(body)
  if (Either.isRight(r)) return undefined
  return ParseResult.ArrayFormatter.formatErrorSync(r.left)[0]?.path.join(".")
}

describe("TransferBuildBody", () => {
  it("takes each chain's assets and destinations", () => {
    expect(Either.isRight(decode({ chain: "solana", asset: "sol", to: SOLANA }))).toBe(true)
    expect(Either.isRight(decode({ chain: "solana", asset: SOLANA, to: SOLANA }))).toBe(true)
    expect(Either.isRight(decode({ chain: "hood", asset: "eth", to: CHECKSUMMED }))).toBe(true)
    expect(Either.isRight(decode({ chain: "evm", asset: "usdg", to: CHECKSUMMED.toLowerCase() }))).toBe(true)
    expect(Either.isRight(decode({ chain: "hood", asset: CHECKSUMMED, to: CHECKSUMMED }))).toBe(true)
  })

  it("refuses another chain's forms and a broken EIP-55 checksum, naming the field", () => {
    expect(fieldOf({ chain: "hood", asset: "sol", to: CHECKSUMMED })).toBe("asset")
    expect(fieldOf({ chain: "solana", asset: "eth", to: SOLANA })).toBe("asset")
    expect(fieldOf({ chain: "hood", asset: "eth", to: SOLANA })).toBe("to")
    expect(fieldOf({ chain: "solana", asset: "sol", to: CHECKSUMMED })).toBe("to")
    // One letter's case flipped: not the checksum.
    expect(fieldOf({ chain: "hood", asset: "eth", to: CHECKSUMMED.replace("aA", "AA") })).toBe("to")
    expect(fieldOf({ chain: "hood", asset: CHECKSUMMED.replace("aA", "AA"), to: CHECKSUMMED })).toBe("asset")
  })
})

describe("TransferSubmitBody", () => {
  const submit = (signedTransaction: string) => Schema.decodeUnknownEither(TransferSubmitBody)({ clientTransferId: "t", signedTransaction })
  it("takes Solana's base64 and Hood's 0x-hex, and reads each as its bytes", () => {
    expect(Either.isRight(submit("AQIDBA=="))).toBe(true)
    expect(Either.isRight(submit("0x02f86a0101"))).toBe(true)
    expect([...signedBytesOf("AQIDBA==")]).toEqual([1, 2, 3, 4])
    expect([...signedBytesOf("0x02f86a0101")]).toEqual([0x02, 0xf8, 0x6a, 0x01, 0x01])
  })

  it("refuses hex of an odd length or with a non-hex digit, and text that is neither", () => {
    for (const bad of ["0x02f", "0x0g", "0x", "not base64!"]) expect(Either.isLeft(submit(bad))).toBe(true)
  })
})
