/**
 * The trade body decoder (`decodeTradeBody`): what it accepts (defaults: payer main, no dry run,
 * not async) and the field each refusal names; the list cursor's round trip; and the submit
 * route's documented answers.
 */
import { describe, expect, it } from "vitest"
import { decodeTradeCursor, encodeTradeCursor } from "../../src/services/trade/TradeService.js"
import { contractDocument, contractProblems } from "../../test/support/contract.js"
import { openApiDocument } from "../OpenApi.js"
import { decodeConfirmBody, decodeSubmitBody, decodeTradeBody, tradeRoutes } from "./TradeRoutes.js"

const MINT = "So11111111111111111111111111111111111111112"
const base = { clientTradeId: "t-1", chain: "solana", mint: MINT, side: "buy", amountIn: "1000" }
const fieldOf = (body: unknown) => {
  const d = decodeTradeBody(body)
  return "_tag" in d && d._tag === "ApiError" ? d.field : "accepted"
}

describe("decodeTradeBody", () => {
  it("accepts a minimal body with its defaults, and either slippageBps or minAmountOut", () => {
    expect(decodeTradeBody(base)).toEqual({ clientTradeId: "t-1", chain: "solana", mint: MINT, side: "buy", amountInRaw: 1000n, payer: "main", dryRun: false, async: false })
    expect(decodeTradeBody({ ...base, slippageBps: 0 })).toMatchObject({ slippageBps: 0 })
    expect(decodeTradeBody({ ...base, minAmountOut: "0", async: true, dryRun: true })).toMatchObject({ minAmountOutRaw: 0n, async: true, dryRun: true })
  })

  it("names the field of each refusal", () => {
    expect(fieldOf("x")).toBe("body")
    expect(fieldOf({ ...base, clientTradeId: "x".repeat(129) })).toBe("clientTradeId")
    expect(fieldOf({ ...base, chain: "eth" })).toBe("chain")
    expect(fieldOf({ ...base, mint: "0xabc" })).toBe("mint")
    // Base58 in the pattern's length but not 32 bytes (44 'z' decode to 33): refused here, not a 500 from the chain read.
    expect(fieldOf({ ...base, mint: "z".repeat(44) })).toBe("mint")
    expect(fieldOf({ ...base, side: "short" })).toBe("side")
    expect(fieldOf({ ...base, amountIn: "0" })).toBe("amountIn")
    expect(fieldOf({ ...base, amountIn: (2n ** 64n).toString() })).toBe("amountIn")
    expect(fieldOf({ ...base, slippageBps: 5_001 })).toBe("slippageBps")
    expect(fieldOf({ ...base, slippageBps: 1.5 })).toBe("slippageBps")
    expect(fieldOf({ ...base, minAmountOut: "-1" })).toBe("minAmountOut")
    expect(fieldOf({ ...base, slippageBps: 1, minAmountOut: "1" })).toBe("minAmountOut")
    // Linked and TEE payers name their wallet, on either chain.
    expect(fieldOf({ ...base, payer: "tee" })).toBe("linkedWalletId")
    expect(fieldOf({ ...base, payer: "linked", linkedWalletId: "" })).toBe("linkedWalletId")
    expect(fieldOf({ ...base, linkedWalletId: "w-1" })).toBe("linkedWalletId")
    expect(fieldOf({ ...base, chain: "hood", mint: "0x00000000000000000000000000000000000000aa", payer: "tee" })).toBe("linkedWalletId")
    expect(fieldOf({ ...base, payer: "other" })).toBe("payer")
    expect(fieldOf({ ...base, dryRun: "yes" })).toBe("dryRun")
    expect(fieldOf({ ...base, async: 1 })).toBe("async")
  })
})

describe("linked and TEE payers' bodies", () => {
  it("a build names its wallet; submit takes a trade (payer main) or a build's signed transaction; confirm a signature", () => {
    expect(decodeTradeBody({ ...base, payer: "linked", linkedWalletId: "w-1" })).toMatchObject({ payer: "linked", linkedWalletId: "w-1" })
    // Hood: the linked and TEE payers are served.
    const hoodMint = "0xBa1eAAE41f21daED374A80Ec9F4d29ea867c4258"
    expect(decodeTradeBody({ ...base, chain: "hood", mint: hoodMint, payer: "linked", linkedWalletId: "w-1" })).toMatchObject({ chain: "hood", payer: "linked", linkedWalletId: "w-1" })
    expect(decodeTradeBody({ ...base, chain: "hood", mint: hoodMint, payer: "tee", linkedWalletId: "w-1" })).toMatchObject({ chain: "hood", payer: "tee", linkedWalletId: "w-1" })
    const tx = Buffer.from([1, 2, 3]).toString("base64")
    expect(decodeSubmitBody({ clientTradeId: "t-1", signedTransaction: tx })).toEqual({ _tag: "Signed", clientTradeId: "t-1", signedTransaction: new Uint8Array([1, 2, 3]) })
    expect(decodeSubmitBody(base)).toMatchObject({ _tag: "Trade", payer: "main" })
    const refused = (d: unknown) => (d as { field?: string }).field
    // A linked trade is not one-shot: build, sign, then submit the signed bytes.
    expect(refused(decodeSubmitBody({ ...base, payer: "linked", linkedWalletId: "w-1" }))).toBe("payer")
    expect(refused(decodeSubmitBody({ clientTradeId: "t-1", signedTransaction: "not base64!" }))).toBe("signedTransaction")
    expect(refused(decodeSubmitBody({ clientTradeId: "t-1", signedTransaction: "A".repeat(1_648) }))).toBe("signedTransaction")
    const signature = "5".repeat(87)
    expect(decodeConfirmBody({ clientTradeId: "t-1", signature })).toEqual({ clientTradeId: "t-1", signature })
    expect(refused(decodeConfirmBody({ clientTradeId: "t-1", signature: "0x00" }))).toBe("signature")
    // Hood: the signed transaction as 0x-hex (as the sign relay answers it), decoded like base64; odd or oversized hex is refused.
    expect(decodeSubmitBody({ clientTradeId: "t-1", signedTransaction: "0x02f8ab" })).toEqual({ _tag: "Signed", clientTradeId: "t-1", signedTransaction: new Uint8Array([2, 0xf8, 0xab]) })
    expect(refused(decodeSubmitBody({ clientTradeId: "t-1", signedTransaction: "0x02f" }))).toBe("signedTransaction")
    expect(refused(decodeSubmitBody({ clientTradeId: "t-1", signedTransaction: `0x${"ab".repeat(1_233)}` }))).toBe("signedTransaction")
    // Hood: the broadcast transaction's hash (0x and 32 bytes); nothing shorter or longer.
    const hash = `0x${"ab".repeat(32)}`
    expect(decodeConfirmBody({ clientTradeId: "t-1", signature: hash })).toEqual({ clientTradeId: "t-1", signature: hash })
    expect(refused(decodeConfirmBody({ clientTradeId: "t-1", signature: `${hash}00` }))).toBe("signature")
    expect(refused(decodeConfirmBody({ clientTradeId: "t-1", signature: `0x${"zz".repeat(32)}` }))).toBe("signature")
    expect(refused(decodeConfirmBody({ signature }))).toBe("clientTradeId")
  })
})

describe("trade list cursor", () => {
  it("round-trips its position and refuses anything it did not issue", () => {
    const at = { createdAtMs: 1_764_000_000_123, clientTradeId: "a/b é" }
    expect(decodeTradeCursor(encodeTradeCursor(at))).toEqual(at)
    expect(decodeTradeCursor("zz")).toBeUndefined()
    expect(decodeTradeCursor(Buffer.from(JSON.stringify([1.5, "x"])).toString("base64url"))).toBeUndefined()
    expect(decodeTradeCursor(Buffer.from(JSON.stringify({ a: 1 })).toString("base64url"))).toBeUndefined()
  })
})

describe("the submit route's document", () => {
  // `dryRun: true` on submit answers the dry run's figures at 200, as the build route does.
  const contract = contractDocument(
    openApiDocument(tradeRoutes({ agentAuth: undefined as never, trades: undefined as never, transactions: undefined as never }), { title: "t", description: "d" })
  )
  const dryRun = {
    success: true, dryRun: true, clientTradeId: "t-1", chain: "solana", mint: MINT, side: "buy", venue: "curve", payer: "main", wallet: MINT,
    quoteMint: MINT, quoteAsset: "SOL", amountIn: "1000", expectedOut: "990", minAmountOut: "980", fee: { bps: 100, feeRaw: "10", asset: "quote" }
  }
  const check = (path: string, body: unknown) => contractProblems(contract, "POST", path, 200, "application/json", JSON.stringify(body))

  it("documents a dry run's answer at 200 on submit as on build, and still refuses an undocumented member", () => {
    expect(check("/api/v1/trade/agent/build", dryRun)).toEqual([])
    expect(check("/api/v1/trade/agent/submit", dryRun)).toEqual([])
    expect(check("/api/v1/trade/agent/submit", { ...dryRun, extra: 1 })).not.toEqual([])
  })
})
