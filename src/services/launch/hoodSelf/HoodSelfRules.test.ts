import { type Address, getAddress, type Hex, InvalidInputRpcError, RpcRequestError, zeroAddress } from "viem"
import { describe, expect, it } from "vitest"
import { spendError } from "../../spend/SpendError.js"
import { hoodSelfLaunchBodyOf } from "../../../../test/support/selfLaunchRequest.js"
import {
  blockMissing,
  buildAgainOf,
  createInput,
  deadHoldOf,
  deadSettlementOf,
  devBuyMatches,
  devBuyOnVirginCurve,
  devBuyOutcome,
  feeLegVerifies,
  holdAgainRefused,
  legOnChainOf,
  NEVER_LANDS_DEPTH_BLOCKS,
  nonceBlockOf,
  readBehindHead,
  type SeenTransaction,
  settledHoldOf,
  unminedRecordOf
} from "./HoodSelfRules.js"

const bodyOf = hoodSelfLaunchBodyOf

const payer = getAddress("0x1111111111111111111111111111111111111111")
const treasury = getAddress("0x2222222222222222222222222222222222222222")
const curve = getAddress("0x3333333333333333333333333333333333333333")
const usdg = getAddress("0x4444444444444444444444444444444444444444")
const salt = `0x${"ab".repeat(32)}` as Hex
const tx = (over: Partial<SeenTransaction>): SeenTransaction => ({ from: payer, to: treasury, value: 1000n, input: "0x", nonce: 3, ...over })
const fee = { treasury: treasury.toLowerCase(), feeRaw: "1000" }
const success = { status: "success" } as const
const reverted = { status: "reverted" } as const

describe("HoodSelfRules", () => {
  it("createInput carries the request, the hosted URI and the salt; ETH quotes the zero address, USDG the configured token", () => {
    const eth = createInput(bodyOf({}), "http://host/img", salt, usdg)
    expect(eth).toMatchObject({ name: "Curve Cat", symbol: "CCAT", uri: "http://host/img", quoteToken: zeroAddress, dexVersion: "v4", salt })
    expect(createInput(bodyOf({ quoteAsset: "usdg" }), "u", salt, usdg).quoteToken).toBe(usdg)
  })

  it("a fee leg verifies only mined successfully, from the payer, to the treasury (any case), for exactly the fee", () => {
    expect(feeLegVerifies(fee, payer, success, tx({}))).toBe(true)
    expect(feeLegVerifies(fee, payer, undefined, tx({}))).toBe(false)
    expect(feeLegVerifies(fee, payer, reverted, tx({}))).toBe(false)
    expect(feeLegVerifies(fee, payer, success, undefined)).toBe(false)
    expect(feeLegVerifies(fee, payer, success, tx({ from: treasury }))).toBe(false)
    expect(feeLegVerifies(fee, payer, success, tx({ to: curve }))).toBe(false)
    expect(feeLegVerifies(fee, payer, success, tx({ to: null }))).toBe(false)
    expect(feeLegVerifies(fee, payer, success, tx({ value: 999n }))).toBe(false)
    expect(feeLegVerifies(fee, payer, success, tx({ value: 1001n }))).toBe(false)
  })

  it("a reported dev buy binds only to the curve with exactly buyAmount, and answers by its receipt", () => {
    expect(devBuyMatches(tx({ to: curve, value: 5n }), curve, 5n)).toBe(true)
    expect(devBuyMatches(tx({ to: curve, value: 6n }), curve, 5n)).toBe(false)
    expect(devBuyMatches(tx({ to: treasury, value: 5n }), curve, 5n)).toBe(false)
    expect(devBuyMatches(undefined, curve, 5n)).toBe(false)
    expect(devBuyOutcome("0xh", success)).toEqual({ signature: "0xh", outcome: "landed" })
    expect(devBuyOutcome("0xh", reverted)).toEqual({ pendingSignature: "0xh", outcome: "reverted" })
    expect(devBuyOutcome("0xh", undefined)).toEqual({ pendingSignature: "0xh", outcome: "pending" })
  })

  it("the TEE dev buy on the virgin curve is a payable buy of exactly buyAmount to the curve", () => {
    const plan = devBuyOnVirginCurve(bodyOf({ buyAmount: "1000000000000000" }), curve as Address, 100)
    expect(plan).toBeDefined()
    expect(plan!.call.to).toBe(curve)
    expect(plan!.call.value).toBe(1_000_000_000_000_000n)
  })
})

describe("a TEE operation's dev-buy hold", () => {
  const legs = (fee: string | null, buy: string | null) => [
    { kind: "createCurve", status: "mined" },
    ...(fee === null ? [] : [{ kind: "feeTransfer", status: fee }]),
    ...(buy === null ? [] : [{ kind: "devBuy", status: buy }])
  ]
  it("at the record, from the legs' own statuses: a mined buy books, a reverted one books the landed fee only, else releases; unsettled keeps", () => {
    expect(settledHoldOf(legs("mined", "mined"))).toBe("book")
    expect(settledHoldOf(legs("mined", "reverted"))).toBe("book_fee")
    expect(settledHoldOf(legs(null, "reverted"))).toBe("release")
    expect(settledHoldOf(legs("mined", "sent"))).toBe("keep")
    expect(settledHoldOf(legs("mined", "pending"))).toBe("keep")
    expect(settledHoldOf(legs("mined", null))).toBe("none")
  })
  it("a dead attempt's value leg, by its claim: never signed releases; signed books when it landed, releases when reverted or its nonce was used by another transaction, else keeps", () => {
    expect(deadHoldOf({ signed: false }, undefined)).toBe("release")
    expect(deadHoldOf({ signed: true }, undefined)).toBe("keep")
    expect(deadHoldOf({ signed: true }, "success")).toBe("book")
    expect(deadHoldOf({ signed: true }, "reverted")).toBe("release")
    expect(deadHoldOf({ signed: true }, "used")).toBe("release")
    expect(deadHoldOf({ signed: true }, "open")).toBe("keep")
  })
  it("a signed leg on chain: its receipt first or on the re-read; used only with the nonce passed at the depth block and no receipt, else open", () => {
    const seen = (receipt: "success" | "reverted" | undefined, nonceAtDepth: number | undefined, receiptAgain: "success" | "reverted" | undefined = undefined) =>
      legOnChainOf({ receipt, nonceAtDepth, legNonce: 7, receiptAgain })
    expect(seen("success", undefined)).toBe("success")
    expect(seen("reverted", undefined)).toBe("reverted")
    expect(seen(undefined, 8)).toBe("used")
    // The nonce passed, the receipt there on the re-read (a node catching up): mined, never "used".
    expect(seen(undefined, 8, "success")).toBe("success")
    expect(seen(undefined, 8, "reverted")).toBe("reverted")
    // The nonce not passed at the depth block (passed only nearer the head, or not at all): no verdict.
    expect(seen(undefined, 7)).toBe("open")
    expect(seen(undefined, 6)).toBe("open")
    expect(seen(undefined, undefined)).toBe("open")
  })
  it("the nonce is read NEVER_LANDS_DEPTH_BLOCKS under the head, never below block 0", () => {
    expect(nonceBlockOf(100n)).toBe(100n - NEVER_LANDS_DEPTH_BLOCKS)
    expect(nonceBlockOf(NEVER_LANDS_DEPTH_BLOCKS)).toBe(0n)
    expect(nonceBlockOf(0n)).toBe(0n)
  })
  it("a dead attempt's from both legs: either can land keeps; the buy landed books it, with the fee only when the fee landed; the buy never books the fee alone when it landed", () => {
    expect(deadSettlementOf("keep", "book")).toBe("keep")
    expect(deadSettlementOf("release", "keep")).toBe("keep")
    expect(deadSettlementOf("book", "book")).toBe("book")
    expect(deadSettlementOf("book", "release")).toBe("book_buy")
    expect(deadSettlementOf("release", "book")).toBe("book_fee")
    expect(deadSettlementOf("release", "release")).toBe("release")
  })
  it("a reissue's hold refused after createCurve landed: LAUNCH_FAILED, always retryable, the gate's reason and details (never KEY_LIMIT_REACHED or SPEND_LIMIT_EXCEEDED)", () => {
    const resetsAt = 1_700_000_000_000
    const daily = holdAgainRefused(spendError("tx_limit_reached", "over", { retryable: true, details: { resetsAt, usedUsdMicros: 5 } }))
    expect([daily.reason, daily.retryable, daily.details]).toEqual(["launch_failed", true, { reason: "tx_limit_reached", resetsAt, usedUsdMicros: 5 }])
    // A `never` window: the gate's refusal is not retryable; after createCurve landed it is.
    const never = holdAgainRefused(spendError("tx_limit_reached", "over", { retryable: false, details: { resetsAt: null } }))
    expect([never.reason, never.retryable, never.details]).toEqual(["launch_failed", true, { reason: "tx_limit_reached", resetsAt: null }])
    const spendLimit = { limitSource: "key", keyPrefix: "h0000001", asset: "eth", capDecimal: "0.01", attemptedDecimal: "0.0101" }
    const capped = holdAgainRefused(spendError("spend_limit_exceeded", "cap", { retryable: false, details: { spendLimit } }))
    expect([capped.reason, capped.retryable, capped.details]).toEqual(["launch_failed", true, { reason: "spend_limit_exceeded", spendLimit }])
    const unavailable = holdAgainRefused(spendError("limit_unavailable", "no price", { retryable: true, details: { reason: "limit_unavailable", retryAfter: 30 } }))
    expect([unavailable.reason, unavailable.retryable, unavailable.details]).toEqual(["launch_failed", true, { reason: "limit_unavailable", retryAfter: 30 }])
  })
})

describe("a read pinned to a block the answering node does not have (blockMissing)", () => {
  const rpcError = (message: string) => new InvalidInputRpcError(new RpcRequestError({ body: {}, url: "http://node", error: { code: -32000, message } }))
  it("the nodes' not-found answers for a block are missing; any other failure is not (it fails the read, never retried at an older block)", () => {
    for (const message of ["header not found", "block not found", "Unknown block", "Received invalid block tag 12. Latest block number is 11", "invalid block number"]) {
      expect([message, blockMissing(rpcError(message))]).toEqual([message, true])
    }
    for (const message of ["execution reverted", "missing trie node", "rate limited", "nonce too low"]) {
      expect([message, blockMissing(rpcError(message))]).toEqual([message, false])
    }
    expect(blockMissing(new Error("fetch failed"))).toBe(false)
    expect(blockMissing(undefined)).toBe(false)
  })
})

describe("what one snapshot of an earlier attempt concludes (buildAgainOf, unminedRecordOf): at head - 1 never 'no curve, build again' nor 'dead'", () => {
  const at = (atHead: boolean, nonce: number, curveExists: boolean) => ({ block: 10n, atHead, nonce, curveExists })
  it("a build again: the curve → on_chain and a TEE nonce not used → in_flight at either block; a rebuild only at the head, else unread", () => {
    for (const atHead of [true, false]) {
      for (const tee of [true, false]) expect(buildAgainOf(at(atHead, 9, true), 5, tee)).toBe("on_chain")
      expect(buildAgainOf(at(atHead, 5, false), 5, true)).toBe("in_flight")
    }
    // A linked attempt rebuilds on "no curve" (its old bytes get a new curve address), a TEE one once its nonce was used.
    expect([buildAgainOf(at(true, 5, false), 5, false), buildAgainOf(at(true, 6, false), 5, true)]).toEqual(["rebuild", "rebuild"])
    expect([buildAgainOf(at(false, 5, false), 5, false), buildAgainOf(at(false, 6, false), 5, false), buildAgainOf(at(false, 6, false), 5, true)]).toEqual(["unread", "unread", "unread"])
  })
  it("a linked record not mined: not_mined while its nonce is unused or a curve exists (either block); dead (not_found) only at the head, else unread", () => {
    for (const atHead of [true, false]) {
      expect(unminedRecordOf(at(atHead, 5, false), 5)).toBe("not_mined")
      expect(unminedRecordOf(at(atHead, 9, true), 5)).toBe("not_mined")
    }
    expect([unminedRecordOf(at(true, 6, false), 5), unminedRecordOf(at(false, 6, false), 5)]).toEqual(["not_found", "unread"])
  })
  it("an unread snapshot refuses LAUNCH_FAILED, retryable, chain_read_failed, naming what was read and what to do again", () => {
    for (const again of ["build", "confirm"] as const) {
      const e = readBehindHead("the createCurve", again)
      expect([e.reason, e.retryable, e.details, e.field]).toEqual(["launch_failed", true, { reason: "chain_read_failed" }, undefined])
      expect(e.message).toMatch(new RegExp(`^the createCurve was read one block behind the head, .*; ${again} again$`))
    }
  })
})
