/**
 * The TEE payer on the Hood trade rail (issue 28), through `TradeService` over the real wallet
 * service (PGlite, sign claims, the local TEE provider), the attempt runner and the Hood localnet
 * (Hardhat/EDR) over JSON-RPC (the test bed: `test/support/hoodTradeRail.ts`). The TEE wallet is
 * bound to the caller's key; its bytes are signed only by the sign relay under a build's claim.
 * - build: the unsigned EIP-1559 transaction to the trade router (the curve trade and the plan's
 *   platform fee in one call: value = amountIn + fee) with the quote's minimum out, its sign
 *   claim, recorded `built` with the spend held; a repeat answers the same transaction, a changed
 *   body is refused; a TEE wallet bound to another key is refused and nothing is recorded;
 * - the relay signs the built bytes once (a second sign of the claim, or altered bytes, refused);
 * - submit: the unsigned bytes, bytes signed by another key, another build signed by the TEE
 *   wallet, the relay's bytes altered and its high-s twin are refused (`wrong_transaction`) and
 *   nothing moves; the relay's bytes, submitted by several requests at once, are sent once:
 *   executed to the quote's `amountOut` to the raw unit, `trade.executed` once, the spend booked,
 *   the claim `confirmed`; a repeat submit replays and sends nothing;
 * - a sell with no allowance (docs/decisions.md "A Hood TEE sell's approval, built by the server"):
 *   the build answers the `approve` the server built for the spender `spenderOf` names (the trade
 *   router), with its own
 *   claim, no trade row and no hold; repeats (also concurrent) answer the same approval, a changed
 *   body is refused, another id of the wallet is told the live approval's id; the relay signs it
 *   once; the unsigned, foreign-signed and altered bytes are refused at submit with nothing moved;
 *   concurrent submits send it once and answer `approval_confirmed`; the same build then answers the
 *   sell on the next nonce to the trade router, executed to the quote, the seller paid the proceeds
 *   less the platform fee and the treasury exactly the fee; a crash between the approval's `sending` record
 *   and its send is recovered by the next build (the kept bytes, one approval); an approval left
 *   unsigned past its claim's lifetime lapses and a new one is built; one the caller broadcast
 *   itself is found mined and the sell is confirmed by hash; after graduation the approval names the
 *   trade router too and the sell through it executes to the pool quote, the fee to the treasury;
 * - the spend caps are hard on the `tee` rail: over the key's ETH cap (`SPEND_LIMIT_EXCEEDED`),
 *   over its txLimit, and without a USD price (`KEY_LIMIT_REACHED`), the build is refused and
 *   records nothing (no row, no hold);
 * - the watch pass settles a build the caller broadcast itself (executed once) and fails the build
 *   whose nonce another trade took (its hold released);
 * - a crash between the record of `sending` and the send: the recovery pass sends the kept signed
 *   bytes once and the trade executes to the quote; a crash after the send (the relay's bytes
 *   broadcast, the row `sending`): the recovery's second send decides nothing, executed once;
 * - a build never signed past its claim's 30-minute lifetime (the wallet service's clock): the
 *   watch pass expires the claim and fails the trade once (`NEVER_LANDED`), its hold released;
 * - a relay-signed build broadcast more blocks after its build than the log scan reads: found by
 *   the claim's hash and executed once;
 * - over HTTP, every answer checked against the OpenAPI document: dry run, build, a wrong submit,
 *   the relay's 0x-hex signed transaction submitted; a sell's approval built, submitted and then the sell.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import {
  type Address,
  decodeFunctionData,
  parseEventLogs,
  zeroAddress,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hash,
  type Hex,
  hexToBigInt,
  keccak256,
  numberToHex,
  parseTransaction,
  serializeTransaction,
  walletActions
} from "viem"
import { generatePrivateKey } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tradeAnswer } from "../../api/TradeCodes.js"
import { bondingCurveAbi } from "../../src/chain/hood/abi.generated.js"
import { buy, createCurve, migrate, saltOf, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, hoodTestClient, mine, type StartedHoodLocalnet, setEthBalance } from "../../src/chain/hood/localnet/testkit.js"
import { quoteHoodPool, viemPoolSource } from "../../src/services/trade/HoodPoolQuote.js"
import { HOOD_TRACE_WINDOW, HOOD_TRACE_WINDOWS, MAX_ALLOWANCE } from "../../src/services/trade/HoodTradeChain.js"
import { platformFeeOf } from "../../src/services/trade/VenueQuote.js"
import { PriceUnavailable, fixedPriceSource, type PriceSourceShape } from "../../src/services/prices/PriceSource.js"
import type { TradeServiceShape } from "../../src/services/trade/TradeService.js"
import { isApproval, type TradeApprovalView, type TradeBuiltView } from "../../src/services/trade/TradeViews.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { CLAIM_LIFETIME_MS } from "../../src/services/wallets/WalletLimits.js"
import { eventually } from "../support/eventually.js"
import { ETH, hoodTradeRail, KEY_PREFIX } from "../support/hoodTradeRail.js"
import { tradeRoutesOverHttp } from "../support/tradeRoutesHttp.js"
import { principals, type WalletHarness } from "../support/walletHarness.js"

/** The USD price source, switched off by the cap test (a TEE wallet's USD limit then fails closed). */
let priced = true
const fixed = fixedPriceSource({ eth: "3000" })
const prices: PriceSourceShape = {
  ...fixed,
  usd: (asset) => (priced ? fixed.usd(asset) : Effect.fail(new PriceUnavailable({ asset, reason: "not_configured", message: "prices are off in this test" })))
}

const rail = hoodTradeRail({ label: "hood-tee", prices })
const { principal, caller, run, sqlRun, pc, nonceOf, rowsOf, executedEvents, holdOf, quoteNow, built, unsignedOf, signedBy, bytesOf, refusal } = rail

let harness: WalletHarness
let net: StartedHoodLocalnet
let trades: TradeServiceShape
let curve: { token: Address; curve: Address }
let tee: { id: string; address: Address }

const request: ReturnType<typeof rail.requestFrom> = (...args) => rail.requestFrom({ payer: "tee", linkedWalletId: tee.id })(...args)

/** The sign relay's signature of a build under its claim (0x-hex, as the relay answers an EVM transaction). */
const relaySigned = async (b: TradeBuiltView): Promise<Hex> => {
  const signed = await Effect.runPromise(harness.service.signClaimed(principal, tee.id, { claimId: b.signClaim.claimId, transaction: new Uint8Array(Buffer.from(b.transaction, "base64")) }))
  return signed.signedTransaction as Hex
}
const submitted = (clientTradeId: string, signed: Hex) => run(trades.submitSigned(caller, { clientTradeId, signedTransaction: bytesOf(signed) }))
const signedTransactionOf = async (clientTradeId: string) =>
  (await sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ signed_transaction: string | null }>`SELECT signed_transaction FROM agent_trades WHERE client_trade_id = ${clientTradeId}`)))[0]
    ?.signed_transaction
const claimState = async (b: TradeBuiltView) => (await Effect.runPromise(harness.service.claimStatus(b.signClaim.claimId)))?.state
const claimStateOf = async (claimId: string) => (await Effect.runPromise(harness.service.claimStatus(claimId)))?.state

/** A build that answers the token approval (a TEE sell with no allowance). */
const approvalBuilt = async (r: ReturnType<typeof request>): Promise<TradeApprovalView> => {
  const out = await run(trades.build(caller, r))
  if (out._tag === "Left") throw new Error(`${r.clientTradeId}: ${JSON.stringify(out.left)}`)
  if (!isApproval(out.right)) throw new Error(`${r.clientTradeId}: answered the trade, not its approval`)
  return out.right
}
const approvalBytes = (a: TradeApprovalView) => new Uint8Array(Buffer.from(a.approval.transaction, "base64"))
const approvalTx = (a: TradeApprovalView) => parseTransaction(`0x${Buffer.from(a.approval.transaction, "base64").toString("hex")}` as Hex)
const relaySignedApproval = async (a: TradeApprovalView): Promise<Hex> =>
  (await Effect.runPromise(harness.service.signClaimed(principal, tee.id, { claimId: a.approval.signClaim.claimId, transaction: approvalBytes(a) }))).signedTransaction as Hex
/** The spender of every Hood sell (`HoodTradeChain.spenderOf`): the trade router, which also takes the platform fee. */
const tradeRouter = () => getAddress(net.addresses.tradeRouter!)
const treasuryWei = () => pc().getBalance({ address: net.roles.treasury.address })
const allowanceOf = () => pc().readContract({ address: curve.token, abi: erc20Abi, functionName: "allowance", args: [tee.address, tradeRouter()] })
const approvalsOf = (clientTradeId: string) =>
  sqlRun(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: string; signature: string | null }>`SELECT state, signature FROM agent_trade_approvals WHERE client_trade_id = ${clientTradeId}`)
  ).then((rows) => rows.map((r) => ({ state: r.state, signature: r.signature })))

/** The TEE wallet sends a transaction the service did not build (the node lets the test act as it): an approval, or a nonce spent elsewhere. */
const teeSends = async (tx: { to: Address; data?: Hex; nonce?: number }): Promise<Hash> => {
  const tc = hoodTestClient(net)
  await tc.impersonateAccount({ address: tee.address })
  try {
    // eth_sendTransaction from the impersonated address (the node signs nothing: it skips the check).
    const hash = await tc.extend(walletActions).sendTransaction({ account: tee.address, chain: net.chain, to: tx.to, ...(tx.data !== undefined ? { data: tx.data } : {}), ...(tx.nonce !== undefined ? { nonce: tx.nonce } : {}) })
    expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    return hash
  } finally {
    await tc.stopImpersonatingAccount({ address: tee.address })
  }
}

beforeAll(async () => {
  ;({ harness, net, trades, curve } = await rail.open())
  const t = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: KEY_PREFIX, label: "hood-trade-tee" }))
  tee = { id: t.id, address: getAddress(t.address) }
  await setEthBalance(hoodTestClient(net), tee.address, 100n * ETH)
}, 120_000)

afterAll(rail.close)

describe("Hood TEE payer", () => {
  it("build → relay sign (once) → submitted: forged, altered and unsigned bytes refused with nothing moved; sent once by concurrent submits, executed to the quote's raw unit; a repeat replays", async () => {
    const amount = ETH / 2n
    const q = await quoteNow("buy", amount)
    const b = await built(request("ht-buy", "buy", amount))
    expect(b).toMatchObject({ status: "built", chain: "hood", payer: "tee", wallet: tee.address, walletId: tee.id, expectedOut: q.amountOut.toString(), signature: "", replay: false })
    const tx = unsignedOf(b)
    const fee = platformFeeOf(q, "buy", caller).feeRaw
    expect(b.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    expect(tx).toMatchObject({ type: "eip1559", chainId: net.chain.id, value: amount + fee, nonce: await nonceOf(tee.address) })
    expect(getAddress(tx.to!)).toBe(net.addresses.tradeRouter!)
    expect(await rowsOf("ht-buy")).toEqual([{ state: "built", signature: "" }])
    expect(await holdOf("ht-buy")).toBe("held")
    // A repeat build answers the same transaction and claim; a changed body is refused.
    expect(await built(request("ht-buy", "buy", amount))).toMatchObject({ replay: true, transaction: b.transaction, signClaim: b.signClaim })
    expect(refusal(await run(trades.build(caller, request("ht-buy", "buy", amount + 1n))))?.code).toBe("IDEMPOTENCY_CONFLICT")

    // The relay signs the built bytes once: a second sign of the claim, or altered bytes under it, is refused.
    const signed = await relaySigned(b)
    expect(await claimState(b)).toBe("signed")
    const again = await Effect.runPromise(Effect.either(harness.service.signClaimed(principal, tee.id, { claimId: b.signClaim.claimId, transaction: new Uint8Array(Buffer.from(b.transaction, "base64")) })))
    expect(again._tag === "Left" && again.left).toMatchObject({ reason: "no_matching_claim" })

    // Another build of the wallet (the same nonce), signed by the relay: the TEE wallet's valid signature over other bytes.
    const other = await built(request("ht-other", "buy", ETH / 10n))
    const otherSigned = await relaySigned(other)
    const parsed = parseTransaction(signed)
    const altered = serializeTransaction({ ...(parsed as Parameters<typeof serializeTransaction>[0]), value: amount - 1n } as Parameters<typeof serializeTransaction>[0], {
      r: parsed.r!,
      s: parsed.s!,
      yParity: parsed.yParity!
    })
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const highS = serializeTransaction(parsed as Parameters<typeof serializeTransaction>[0], { r: parsed.r!, s: numberToHex(n - hexToBigInt(parsed.s!), { size: 32 }), yParity: parsed.yParity === 0 ? 1 : 0 })
    const unsigned = `0x${Buffer.from(b.transaction, "base64").toString("hex")}` as Hex
    const tokensBefore = await tokenBalance(pc(), curve.token, tee.address)
    const nonceBefore = await nonceOf(tee.address)
    for (const wrong of [unsigned, await signedBy(generatePrivateKey(), tx), otherSigned, altered, highS]) {
      expect(refusal(await submitted("ht-buy", wrong))).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 409, field: "signedTransaction" })
    }
    expect(await rowsOf("ht-buy")).toEqual([{ state: "built", signature: "" }])
    expect(await holdOf("ht-buy")).toBe("held")
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokensBefore)
    expect(await nonceOf(tee.address)).toBe(nonceBefore)
    expect(await executedEvents("ht-buy")).toBe(0)

    const answers = await Promise.all(Array.from({ length: 8 }, () => submitted("ht-buy", signed)))
    const settled = answers.flatMap((a) => (a._tag === "Right" && !isApproval(a.right) ? [a.right] : []))
    for (const a of answers) if (a._tag === "Left") expect(refusal(a)?.code).toBe("IDEMPOTENCY_CONFLICT")
    expect(settled.length).toBeGreaterThan(0)
    expect(new Set(settled.map((v) => v.signature))).toEqual(new Set([keccak256(signed)]))
    expect(settled[0]).toMatchObject({ status: "executed", payer: "tee", amountOut: q.amountOut.toString(), expectedOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokensBefore + q.amountOut)
    expect(await nonceOf(tee.address)).toBe(nonceBefore + 1)
    expect(await executedEvents("ht-buy")).toBe(1)
    expect(await holdOf("ht-buy")).toBe("booked")
    expect(await claimState(b)).toBe("confirmed")
    // The row keeps exactly the bytes it sent (a recovery pass would send them again).
    expect((await signedTransactionOf("ht-buy"))?.toLowerCase()).toBe(signed.toLowerCase())

    // A repeat submit answers the stored outcome and sends nothing.
    const replay = await submitted("ht-buy", signed)
    expect(replay._tag === "Right" && replay.right).toMatchObject({ replay: true, status: "executed", signature: keccak256(signed) })
    expect(await nonceOf(tee.address)).toBe(nonceBefore + 1)
    expect(await executedEvents("ht-buy")).toBe(1)

    // The other build's nonce is taken: the watch pass fails it, its hold released, nothing traded.
    await eventually(
      async () => {
        await Effect.runPromise(trades.watchBuilt)
        return (await rowsOf("ht-other"))[0]?.state === "failed"
      },
      { what: "the watch pass to fail the build whose nonce the trade took", intervalMs: 50 }
    )
    expect(await holdOf("ht-other")).toBe("released")
    expect(await executedEvents("ht-other")).toBe(0)
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokensBefore + q.amountOut)
  }, 120_000)

  it("the wallet rules: a TEE wallet bound to another key is refused, a linked body naming the bound TEE wallet pays on the tee rail; nothing recorded", async () => {
    const t2 = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: "a2aaaaaa", label: "other-key-tee" }))
    const unbound = refusal(await run(trades.build(caller, rail.requestFrom({ payer: "tee", linkedWalletId: t2.id })("ht-unbound", "buy", ETH / 10n))))
    expect(unbound).toMatchObject({ code: "VALIDATION_FAILED", field: "linkedWalletId", extra: { reason: "key_not_bound" } })
    expect(await rowsOf("ht-unbound")).toEqual([])
    expect(await holdOf("ht-unbound")).toBeUndefined()
    const dry = await run(trades.dryRun(caller, request("ht-dry", "buy", ETH / 10n, { payer: "linked" })))
    expect(dry._tag === "Right" && dry.right).toMatchObject({ dryRun: true, payer: "tee", wallet: tee.address })
    expect(await rowsOf("ht-dry")).toEqual([])
  }, 60_000)

  it("a sell with no allowance, end to end: the build answers the approval the server built (its own claim, the spender spenderOf names); signed once at the relay, foreign bytes refused, sent once and mined; then the sell on the next nonce through the trade router, executed to the quote, the fee to the treasury", async () => {
    const held = await tokenBalance(pc(), curve.token, tee.address)
    expect(held).toBeGreaterThan(0n)
    expect(await allowanceOf()).toBe(0n)
    const amount = held / 4n
    const nonce = await nonceOf(tee.address)
    const router = tradeRouter()
    // The dry run says an approval comes first; nothing recorded.
    const dry = await run(trades.dryRun(caller, request("ht-sell", "sell", amount)))
    expect(dry._tag === "Right" && dry.right).toMatchObject({ dryRun: true, payer: "tee", approval: { spender: router, allowanceRaw: "0" } })

    const a = await approvalBuilt(request("ht-sell", "sell", amount))
    expect(a).toMatchObject({ status: "approval_built", chain: "hood", side: "sell", payer: "tee", wallet: tee.address, walletId: tee.id, replay: false })
    expect(a.approval).toMatchObject({ spender: router, amount: MAX_ALLOWANCE.toString(), nonce: String(nonce), signature: "" })
    const tx = approvalTx(a)
    expect(tx).toMatchObject({ type: "eip1559", chainId: net.chain.id, nonce })
    expect(tx.value ?? 0n).toBe(0n)
    expect(getAddress(tx.to!)).toBe(curve.token)
    expect(decodeFunctionData({ abi: erc20Abi, data: tx.data! }).args).toEqual([router, MAX_ALLOWANCE])
    // No trade row and no hold: the approval moves no money.
    expect(await rowsOf("ht-sell")).toEqual([])
    expect(await holdOf("ht-sell")).toBeUndefined()

    // Idempotent: a repeat (also several at once) answers the same approval; a changed body is refused.
    const repeats = await Promise.all(Array.from({ length: 5 }, () => approvalBuilt(request("ht-sell", "sell", amount))))
    for (const r of repeats) expect(r).toMatchObject({ replay: true, approval: { transaction: a.approval.transaction, signClaim: a.approval.signClaim } })
    expect(refusal(await run(trades.build(caller, request("ht-sell", "sell", amount + 1n))))?.code).toBe("IDEMPOTENCY_CONFLICT")
    // Another id's sell of the same wallet meanwhile: the live approval is named, nothing built or recorded (never two approvals on two nonces).
    const other = refusal(await run(trades.build(caller, request("ht-sell-other", "sell", amount))))
    expect(other).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: true, extra: { reason: "approval_pending", clientTradeId: "ht-sell" } })
    expect(await approvalsOf("ht-sell-other")).toEqual([])
    expect(await rowsOf("ht-sell-other")).toEqual([])

    // The relay signs the approval once: a second sign of its claim, or altered bytes under it, are refused.
    const signed = await relaySignedApproval(a)
    const again = await Effect.runPromise(Effect.either(harness.service.signClaimed(principal, tee.id, { claimId: a.approval.signClaim.claimId, transaction: approvalBytes(a) })))
    expect(again._tag === "Left" && again.left).toMatchObject({ reason: "no_matching_claim" })

    // Foreign bytes at submit: the unsigned approval, one signed by another key, the relay's bytes altered (another spender). Nothing moves.
    const parsed = parseTransaction(signed)
    const otherSpender = serializeTransaction(
      { ...(parsed as Parameters<typeof serializeTransaction>[0]), data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [tee.address, MAX_ALLOWANCE] }) } as Parameters<typeof serializeTransaction>[0],
      { r: parsed.r!, s: parsed.s!, yParity: parsed.yParity! }
    )
    for (const wrong of [`0x${Buffer.from(approvalBytes(a)).toString("hex")}` as Hex, await signedBy(generatePrivateKey(), tx), otherSpender]) {
      expect(refusal(await submitted("ht-sell", wrong))).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 409, field: "signedTransaction" })
    }
    expect(await nonceOf(tee.address)).toBe(nonce)
    expect(await allowanceOf()).toBe(0n)
    expect(await approvalsOf("ht-sell")).toEqual([{ state: "built", signature: null }])

    // Submitted by several requests at once: sent once, mined, answered approval_confirmed.
    const answers = await Promise.all(Array.from({ length: 4 }, () => submitted("ht-sell", signed)))
    for (const r of answers) {
      expect(r._tag === "Right" && r.right).toMatchObject({ status: "approval_confirmed", approval: { signature: keccak256(signed), nonce: String(nonce) } })
    }
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
    expect(await allowanceOf()).toBe(MAX_ALLOWANCE)
    expect(await approvalsOf("ht-sell")).toEqual([{ state: "approved", signature: keccak256(signed) }])
    expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("confirmed")

    // The same build now answers the sell, on the nonce after the approval's.
    const q = await quoteNow("sell", amount)
    const b = await built(request("ht-sell", "sell", amount))
    expect(b).toMatchObject({ status: "built", side: "sell", payer: "tee", expectedOut: q.amountOut.toString() })
    expect(unsignedOf(b).nonce).toBe(nonce + 1)
    expect(getAddress(unsignedOf(b).to!)).toBe(router)
    const fee = platformFeeOf(q, "sell", caller).feeRaw
    expect(fee).toBeGreaterThan(0n)
    expect(b.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    const sellSigned = await relaySigned(b)
    const ethBefore = await pc().getBalance({ address: tee.address })
    const treasuryBefore = await treasuryWei()
    const sold = await submitted("ht-sell", sellSigned)
    expect(sold._tag === "Right" && sold.right).toMatchObject({ status: "executed", side: "sell", payer: "tee", amountOut: q.amountOut.toString(), signature: keccak256(sellSigned) })
    expect(sold._tag === "Right" && !isApproval(sold.right) && sold.right.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    const receipt = await pc().getTransactionReceipt({ hash: keccak256(sellSigned) })
    // The seller gets the proceeds less the platform fee and its gas; the treasury exactly the fee.
    expect((await pc().getBalance({ address: tee.address })) - ethBefore).toBe(q.amountOut - fee - receipt.gasUsed * receipt.effectiveGasPrice)
    expect((await treasuryWei()) - treasuryBefore).toBe(fee)
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(held - amount)
    expect(await executedEvents("ht-sell")).toBe(1)
    expect(await nonceOf(tee.address)).toBe(nonce + 2)
    // A repeat submit of the approval's bytes, now that the sell is recorded, answers the trade as it stands and sends nothing.
    const late = await submitted("ht-sell", signed)
    expect(late._tag === "Right" && late.right).toMatchObject({ status: "executed", replay: true, signature: keccak256(sellSigned) })
    expect(await nonceOf(tee.address)).toBe(nonce + 2)
  }, 180_000)

  it("an approval crashed between its sending record and the send: the next build sends the kept bytes once (no second approval), then the sell is built on the next nonce", async () => {
    await teeSends({ to: curve.token, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [tradeRouter(), 0n] }) })
    const amount = (await tokenBalance(pc(), curve.token, tee.address)) / 4n
    const nonce = await nonceOf(tee.address)
    const a = await approvalBuilt(request("ht-appr-crash", "sell", amount))
    const signed = await relaySignedApproval(a)
    // The crash: the row `sending` with the relay's bytes (what the submit saves before it sends), nothing broadcast.
    await sqlRun(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE agent_trade_approvals SET state = 'sending', signature = ${keccak256(signed)}, signed_transaction = ${signed} WHERE client_trade_id = 'ht-appr-crash'`
      )
    )
    expect(await nonceOf(tee.address)).toBe(nonce)
    // The next build finds it in flight, sends the kept bytes again and answers pending (retryable).
    const pending = refusal(await run(trades.build(caller, request("ht-appr-crash", "sell", amount))))
    expect(pending).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: true, extra: { reason: "approval_pending", signature: keccak256(signed) } })
    await eventually(async () => (await allowanceOf()) === MAX_ALLOWANCE, { what: "the recovered approval to be mined", intervalMs: 50 })
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
    const b = await built(request("ht-appr-crash", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(nonce + 1)
    expect(await approvalsOf("ht-appr-crash")).toEqual([{ state: "approved", signature: keccak256(signed) }])
    const sold = await submitted("ht-appr-crash", await relaySigned(b))
    expect(sold._tag === "Right" && sold.right).toMatchObject({ status: "executed", side: "sell" })
    expect(await nonceOf(tee.address)).toBe(nonce + 2)
    expect(await executedEvents("ht-appr-crash")).toBe(1)
  }, 180_000)

  it("an approval left unsigned past its claim's lifetime lapses and the next build answers a new one; one the caller broadcast itself is found mined and the sell is built, confirmed by hash, once", async () => {
    await teeSends({ to: curve.token, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [tradeRouter(), 0n] }) })
    const held = await tokenBalance(pc(), curve.token, tee.address)
    const amount = held / 4n
    const first = await approvalBuilt(request("ht-appr-lapse", "sell", amount))
    const before = harness.clock.ms
    let second: TradeApprovalView
    try {
      harness.clock.ms = before + CLAIM_LIFETIME_MS
      second = await approvalBuilt(request("ht-appr-lapse", "sell", amount))
    } finally {
      harness.clock.ms = before
    }
    expect(second.replay).toBe(false)
    expect(second.approval.signClaim.claimId).not.toBe(first.approval.signClaim.claimId)
    expect(second.approval.nonce).toBe(first.approval.nonce)
    expect(await claimStateOf(first.approval.signClaim.claimId)).toBe("expired")
    const late = await Effect.runPromise(Effect.either(harness.service.signClaimed(principal, tee.id, { claimId: first.approval.signClaim.claimId, transaction: approvalBytes(first) })))
    expect(late._tag === "Left" && late.left).toMatchObject({ reason: "no_matching_claim" })
    // The caller broadcasts the relay's approval itself; the same build then answers the sell.
    const hash = await pc().sendRawTransaction({ serializedTransaction: await relaySignedApproval(second) })
    expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    const q = await quoteNow("sell", amount)
    const b = await built(request("ht-appr-lapse", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(Number(second.approval.nonce) + 1)
    expect(await approvalsOf("ht-appr-lapse")).toEqual([{ state: "approved", signature: null }])
    expect(await claimStateOf(second.approval.signClaim.claimId)).toBe("confirmed")
    const sellHash = await pc().sendRawTransaction({ serializedTransaction: await relaySigned(b) })
    const confirmed = await run(trades.confirm(caller, { clientTradeId: "ht-appr-lapse", signature: sellHash }))
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "executed", side: "sell", signature: sellHash, amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(held - amount)
    expect(await executedEvents("ht-appr-lapse")).toBe(1)
  }, 180_000)

  it("a TEE wallet bound to another key gets no approval: refused, nothing recorded", async () => {
    const t2 = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: "a2aaaaaa", label: "other-key-tee-2" }))
    const unbound = refusal(await run(trades.build(caller, rail.requestFrom({ payer: "tee", linkedWalletId: t2.id })("ht-appr-unbound", "sell", 1n))))
    expect(unbound).toMatchObject({ code: "VALIDATION_FAILED", field: "linkedWalletId", extra: { reason: "key_not_bound" } })
    expect(await approvalsOf("ht-appr-unbound")).toEqual([])
  }, 60_000)

  it("the spend caps are hard on the tee rail: over the key's ETH cap, over its txLimit, and with no USD price, a build is refused and records nothing", async () => {
    const setLimit = (usdMicros: number | null) =>
      sqlRun(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          usdMicros === null
            ? sql`UPDATE agent_keys SET tx_limit_usd_micros = NULL, tx_limit_reset = NULL WHERE id = ${principal.keyId ?? ""}`
            : sql`UPDATE agent_keys SET tx_limit_usd_micros = ${usdMicros}, tx_limit_reset = 'daily' WHERE id = ${principal.keyId ?? ""}`
        )
      )
    const setCap = (maxPerTxRaw: bigint | null) =>
      sqlRun(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          maxPerTxRaw === null
            ? sql`UPDATE agent_keys SET spend_limits = NULL WHERE id = ${principal.keyId ?? ""}`
            : sql`UPDATE agent_keys SET spend_limits = ${JSON.stringify([{ asset: "eth", maxPerTxRaw: maxPerTxRaw.toString() }])}::jsonb WHERE id = ${principal.keyId ?? ""}`
        )
      )
    const nonce = await nonceOf(tee.address)
    try {
      // The key's per-transaction ETH cap: 0.05 ETH, the buy 0.1 ETH.
      await setCap(ETH / 20n)
      const capped = refusal(await run(trades.build(caller, request("ht-cap-eth", "buy", ETH / 10n))))
      expect(capped).toMatchObject({ code: "SPEND_LIMIT_EXCEEDED" })
      await setCap(null)
      // $100 a day; 0.1 ETH is $300.
      await setLimit(100_000_000)
      const over = refusal(await run(trades.build(caller, request("ht-cap-over", "buy", ETH / 10n))))
      expect(over).toMatchObject({ code: "KEY_LIMIT_REACHED", httpStatus: 403 })
      // The window's end: when a retry may fit (a daily window).
      expect(over?.extra?.["resetsAt"]).toEqual(expect.anything())
      expect(Number.isNaN(new Date(over?.extra?.["resetsAt"] as string | number).getTime())).toBe(false)
      // A limit far above the window's use, but no USD price: the service-controlled wallet fails closed.
      await setLimit(1_000_000_000_000_000)
      priced = false
      const unpriced = refusal(await run(trades.build(caller, request("ht-cap-unpriced", "buy", ETH / 10n))))
      expect(unpriced).toMatchObject({ code: "KEY_LIMIT_REACHED", httpStatus: 403, retryable: true, extra: { reason: "limit_unavailable" } })
      expect(unpriced?.extra?.["retryAfter"]).toEqual(expect.any(Number))
      for (const id of ["ht-cap-eth", "ht-cap-over", "ht-cap-unpriced"]) {
        expect(await rowsOf(id)).toEqual([])
        expect(await holdOf(id)).toBeUndefined()
      }
      expect(await nonceOf(tee.address)).toBe(nonce)
    } finally {
      priced = true
      await setLimit(null)
      await setCap(null)
    }
  }, 60_000)

  it("the watch pass settles a build the caller broadcast itself (executed once); a crash between sending and the send is recovered by sending the kept bytes once", async () => {
    const amount = ETH / 5n
    const q = await quoteNow("buy", amount)
    const b = await built(request("ht-watch", "buy", amount))
    const tokens = await tokenBalance(pc(), curve.token, tee.address)
    const hash = await pc().sendRawTransaction({ serializedTransaction: await relaySigned(b) })
    expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    await eventually(
      async () => {
        await Effect.runPromise(trades.watchBuilt)
        return (await rowsOf("ht-watch"))[0]?.state === "executed"
      },
      { what: "the watch pass to settle the self-broadcast build", intervalMs: 50 }
    )
    expect(await rowsOf("ht-watch")).toEqual([{ state: "executed", signature: hash }])
    const view = await run(trades.trade(caller, "ht-watch"))
    expect(view._tag === "Right" && view.right).toMatchObject({ status: "executed", payer: "tee", amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokens + q.amountOut)
    expect(await executedEvents("ht-watch")).toBe(1)
    expect(await holdOf("ht-watch")).toBe("booked")

    // The crash: the row `sending` with the relay's bytes (what the runner saves before it sends), nothing broadcast.
    const amount2 = ETH / 8n
    const q2 = await quoteNow("buy", amount2)
    const c = await built(request("ht-crash", "buy", amount2))
    const signed = await relaySigned(c)
    const crashHash = keccak256(signed)
    const nonce = await nonceOf(tee.address)
    await sqlRun(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE agent_trades SET state = 'sending', signature = ${crashHash}, signed_transaction = ${signed} WHERE client_trade_id = 'ht-crash'`
      )
    )
    await Effect.runPromise(trades.resumeInFlight)
    await eventually(async () => (await rowsOf("ht-crash"))[0]?.state === "executed", { what: "the recovered trade to execute", intervalMs: 50 })
    expect(await rowsOf("ht-crash")).toEqual([{ state: "executed", signature: crashHash }])
    const crashed = await run(trades.trade(caller, "ht-crash"))
    expect(crashed._tag === "Right" && crashed.right).toMatchObject({ status: "executed", amountOut: q2.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokens + q.amountOut + q2.amountOut)
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
    expect(await executedEvents("ht-crash")).toBe(1)
    await Effect.runPromise(trades.resumeInFlight)
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
  }, 120_000)

  it("a crash after the send: the relay's bytes broadcast, the row left sending with them; the recovery's second send decides nothing and the trade executes once", async () => {
    const amount = ETH / 9n
    const q = await quoteNow("buy", amount)
    const b = await built(request("ht-crash-sent", "buy", amount))
    const tokens = await tokenBalance(pc(), curve.token, tee.address)
    const signed = await relaySigned(b)
    const nonce = await nonceOf(tee.address)
    const hash = await pc().sendRawTransaction({ serializedTransaction: signed })
    expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    await sqlRun(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE agent_trades SET state = 'sending', signature = ${hash}, signed_transaction = ${signed} WHERE client_trade_id = 'ht-crash-sent'`)
    )
    await Effect.runPromise(trades.resumeInFlight)
    await eventually(async () => (await rowsOf("ht-crash-sent"))[0]?.state !== "sending", { what: "the recovered trade to settle", intervalMs: 50 })
    expect(await rowsOf("ht-crash-sent")).toEqual([{ state: "executed", signature: hash }])
    const view = await run(trades.trade(caller, "ht-crash-sent"))
    expect(view._tag === "Right" && view.right).toMatchObject({ status: "executed", amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokens + q.amountOut)
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
    expect(await executedEvents("ht-crash-sent")).toBe(1)
    expect(await holdOf("ht-crash-sent")).toBe("booked")
    await Effect.runPromise(trades.resumeInFlight)
    expect(await executedEvents("ht-crash-sent")).toBe(1)
  }, 120_000)

  it("a build whose sign claim's lifetime passed unsigned: the watch pass expires the claim and fails the trade once (NEVER_LANDED), its hold released; the relay can no longer sign it", async () => {
    const b = await built(request("ht-expired", "buy", ETH / 10n))
    const nonce = await nonceOf(tee.address)
    // Within the claim's lifetime the build stays open (nothing can tell it will not be signed).
    await Effect.runPromise(trades.watchBuilt)
    expect(await rowsOf("ht-expired")).toEqual([{ state: "built", signature: "" }])
    expect(await claimState(b)).toBe("open")
    // Its 30-minute lifetime passes on the wallet service's clock (the wallet's nonce has not moved).
    const before = harness.clock.ms
    try {
      harness.clock.ms = before + CLAIM_LIFETIME_MS - 1
      await Effect.runPromise(trades.watchBuilt)
      expect(await rowsOf("ht-expired")).toEqual([{ state: "built", signature: "" }])
      harness.clock.ms = before + CLAIM_LIFETIME_MS
      await Effect.runPromise(trades.watchBuilt)
      expect(await rowsOf("ht-expired")).toEqual([{ state: "failed", signature: "" }])
      const view = await run(trades.trade(caller, "ht-expired"))
      expect(view._tag === "Right" && tradeAnswer(view.right)).toMatchObject({ status: "failed", errorCode: "NEVER_LANDED" })
      expect(await holdOf("ht-expired")).toBe("released")
      expect(await claimState(b)).toBe("expired")
      const late = await Effect.runPromise(Effect.either(harness.service.signClaimed(principal, tee.id, { claimId: b.signClaim.claimId, transaction: new Uint8Array(Buffer.from(b.transaction, "base64")) })))
      expect(late._tag === "Left" && late.left).toMatchObject({ reason: "no_matching_claim" })
      // Once: another pass changes nothing.
      await Effect.runPromise(trades.watchBuilt)
      expect(await rowsOf("ht-expired")).toEqual([{ state: "failed", signature: "" }])
      expect(await executedEvents("ht-expired")).toBe(0)
      expect(await nonceOf(tee.address)).toBe(nonce)
    } finally {
      harness.clock.ms = before
    }
  }, 120_000)

  it("a relay-signed build the caller broadcast, far behind the head (past the log scan's bound): found by the claim's hash and executed once", async () => {
    const amount = ETH / 7n
    const q = await quoteNow("buy", amount)
    const b = await built(request("ht-by-hash", "buy", amount))
    const tokens = await tokenBalance(pc(), curve.token, tee.address)
    // More blocks than the trace's windows cover before it lands: a log scan from the build's block is cut short at its bound every pass.
    const builtAt = await pc().getBlockNumber()
    await mine(hoodTestClient(net), Number(HOOD_TRACE_WINDOW * HOOD_TRACE_WINDOWS) + 1_000)
    const hash = await pc().sendRawTransaction({ serializedTransaction: await relaySigned(b) })
    const landed = await pc().waitForTransactionReceipt({ hash })
    expect(landed.status).toBe("success")
    expect(landed.blockNumber - builtAt).toBeGreaterThan(HOOD_TRACE_WINDOW * HOOD_TRACE_WINDOWS)
    await eventually(
      async () => {
        await Effect.runPromise(trades.watchBuilt)
        return (await rowsOf("ht-by-hash"))[0]?.state === "executed"
      },
      { what: "the watch pass to find the relay-signed build by its hash", intervalMs: 50, deadlineMs: 30_000 }
    )
    expect(await rowsOf("ht-by-hash")).toEqual([{ state: "executed", signature: hash }])
    const view = await run(trades.trade(caller, "ht-by-hash"))
    expect(view._tag === "Right" && view.right).toMatchObject({ status: "executed", amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(tokens + q.amountOut)
    expect(await executedEvents("ht-by-hash")).toBe(1)
    expect(await holdOf("ht-by-hash")).toBe("booked")
    expect(await claimState(b)).toBe("confirmed")
  }, 180_000)

  it("after graduation: the approval names the trade router (spenderOf's spender for the pool too), and the TEE sell through it executes to the pool quote, the seller paid the proceeds less the fee and the treasury exactly the fee", async () => {
    const label = `hood-tee-pool-${Date.now()}`
    const trader = clientsFor(net, net.roles.traders[0]!)
    const c = await createCurve(trader, net.addresses.factory, { name: label, symbol: "HTP", quoteToken: zeroAddress, virtualQuoteRaw: 2n * ETH, thresholdRaw: 4n * ETH, dexVersion: "v3", salt: saltOf(label) })
    await buy(trader, c.curve, { amountInRaw: 6n * ETH, quoteToken: zeroAddress })
    const migrated = await migrate(clientsFor(net, net.roles.keeper), c.curve)
    const pool = getAddress(parseEventLogs({ abi: bondingCurveAbi, eventName: "CurveMigrated", logs: migrated.receipt.logs })[0]!.args.pool)
    const poolQuote = async (side: "buy" | "sell", amountIn: bigint) => {
      const quoted = await quoteHoodPool(viemPoolSource(pc()), { pool, token: c.token, side, amountIn, creatorShareBps: 3000n })
      if (quoted._tag !== "Quoted" || quoted.quote._tag !== "Filled") throw new Error("no pool fill")
      return quoted.quote
    }
    const router = tradeRouter()
    const b = await built(request("ht-pool-buy", "buy", ETH / 2n, { mint: c.token }))
    const bought = await submitted("ht-pool-buy", await relaySigned(b))
    expect(bought._tag === "Right" && bought.right).toMatchObject({ status: "executed", venue: "hood-dex" })
    const held = await tokenBalance(pc(), c.token, tee.address)

    const amount = held / 2n
    const nonce = await nonceOf(tee.address)
    const a = await approvalBuilt(request("ht-pool-sell", "sell", amount, { mint: c.token }))
    expect(a.approval).toMatchObject({ spender: router, nonce: String(nonce) })
    expect(getAddress(approvalTx(a).to!)).toBe(c.token)
    expect(decodeFunctionData({ abi: erc20Abi, data: approvalTx(a).data! }).args).toEqual([router, MAX_ALLOWANCE])
    const approved = await submitted("ht-pool-sell", await relaySignedApproval(a))
    expect(approved._tag === "Right" && approved.right).toMatchObject({ status: "approval_confirmed" })
    expect(await pc().readContract({ address: c.token, abi: erc20Abi, functionName: "allowance", args: [tee.address, router] })).toBe(MAX_ALLOWANCE)
    const q = await poolQuote("sell", amount)
    const s = await built(request("ht-pool-sell", "sell", amount, { mint: c.token }))
    expect(s).toMatchObject({ status: "built", venue: "hood-dex", expectedOut: q.amountOut.toString() })
    expect(unsignedOf(s).nonce).toBe(nonce + 1)
    expect(getAddress(unsignedOf(s).to!)).toBe(router)
    const fee = platformFeeOf(q, "sell", caller).feeRaw
    expect(fee).toBeGreaterThan(0n)
    expect(s.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    const sellSigned = await relaySigned(s)
    const ethBefore = await pc().getBalance({ address: tee.address })
    const treasuryBefore = await treasuryWei()
    const sold = await submitted("ht-pool-sell", sellSigned)
    expect(sold._tag === "Right" && sold.right).toMatchObject({ status: "executed", venue: "hood-dex", side: "sell", amountOut: q.amountOut.toString() })
    expect(sold._tag === "Right" && !isApproval(sold.right) && sold.right.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    // The seller receives ETH (the router unwraps WETH): the pool quote's amountOut less the fee and its gas; the treasury exactly the fee.
    const receipt = await pc().getTransactionReceipt({ hash: keccak256(sellSigned) })
    expect((await pc().getBalance({ address: tee.address })) - ethBefore).toBe(q.amountOut - fee - receipt.gasUsed * receipt.effectiveGasPrice)
    expect((await treasuryWei()) - treasuryBefore).toBe(fee)
    expect(await tokenBalance(pc(), c.token, tee.address)).toBe(held - amount)
    expect(await executedEvents("ht-pool-sell")).toBe(1)
  }, 180_000)
})

describe("Hood TEE payer over HTTP, answers as the OpenAPI document says", () => {
  const http = tradeRoutesOverHttp({ accountId: caller.accountId, keyId: principal.keyId, keyPrefix: KEY_PREFIX, scopes: principal.scopes }, () => ({ trades, sql: harness.sql }))
  const call = http.call
  beforeAll(http.open)
  afterAll(http.close)

  it("build (dry run, then built), a wrong submit, the relay's 0x-hex signed transaction submitted and executed once", async () => {
    const amount = ETH / 20n
    const q = await quoteNow("buy", amount)
    const body = { clientTradeId: "ht-http-buy", chain: "hood", mint: curve.token, side: "buy", amountIn: String(amount), slippageBps: 0, payer: "tee", linkedWalletId: tee.id }
    const dry = await call("/api/v1/trade/agent/build", { ...body, dryRun: true })
    expect(dry).toMatchObject({ status: 200, body: { success: true, dryRun: true, payer: "tee", wallet: tee.address, expectedOut: q.amountOut.toString() } })
    expect(await rowsOf("ht-http-buy")).toEqual([])
    const b = await call("/api/v1/trade/agent/build", body)
    expect(b).toMatchObject({ status: 200, body: { success: true, status: "built", chain: "hood", payer: "tee", walletId: tee.id } })
    const wrong = await call("/api/v1/trade/agent/submit", { clientTradeId: "ht-http-buy", signedTransaction: b.body.transaction })
    expect(wrong).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED", field: "signedTransaction" } } })
    const signed = await relaySigned(b.body as TradeBuiltView)
    const submittedHttp = await call("/api/v1/trade/agent/submit", { clientTradeId: "ht-http-buy", signedTransaction: signed })
    expect(submittedHttp).toMatchObject({ status: 200, body: { success: true, status: "executed", payer: "tee", amountOut: q.amountOut.toString(), replay: false } })
    const again = await call("/api/v1/trade/agent/submit", { clientTradeId: "ht-http-buy", signedTransaction: signed })
    expect(again).toMatchObject({ status: 200, body: { status: "executed", replay: true } })
    expect(await executedEvents("ht-http-buy")).toBe(1)
  }, 120_000)

  it("a TEE sell with no allowance over HTTP: the dry run names the approval, the build answers it (AgentTradeApproval), its signed bytes submitted answer approval_confirmed, the same build then the sell", async () => {
    await teeSends({ to: curve.token, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [tradeRouter(), 0n] }) })
    const amount = (await tokenBalance(pc(), curve.token, tee.address)) / 5n
    const body = { clientTradeId: "ht-http-sell", chain: "hood", mint: curve.token, side: "sell", amountIn: String(amount), slippageBps: 0, payer: "tee", linkedWalletId: tee.id }
    const dry = await call("/api/v1/trade/agent/build", { ...body, dryRun: true })
    expect(dry).toMatchObject({ status: 200, body: { success: true, dryRun: true, approval: { spender: tradeRouter(), allowanceRaw: "0" } } })
    const a = await call("/api/v1/trade/agent/build", body)
    expect(a).toMatchObject({ status: 200, body: { success: true, status: "approval_built", payer: "tee", approval: { spender: tradeRouter(), amount: MAX_ALLOWANCE.toString(), signature: "" } } })
    const wrong = await call("/api/v1/trade/agent/submit", { clientTradeId: "ht-http-sell", signedTransaction: a.body.approval.transaction })
    expect(wrong).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED", field: "signedTransaction" } } })
    const signed = await relaySignedApproval(a.body as TradeApprovalView)
    const approved = await call("/api/v1/trade/agent/submit", { clientTradeId: "ht-http-sell", signedTransaction: signed })
    expect(approved).toMatchObject({ status: 200, body: { success: true, status: "approval_confirmed", approval: { signature: keccak256(signed) }, replay: false } })
    const b = await call("/api/v1/trade/agent/build", body)
    expect(b).toMatchObject({ status: 200, body: { success: true, status: "built", side: "sell", payer: "tee" } })
    expect(unsignedOf(b.body as TradeBuiltView).nonce).toBe(Number(a.body.approval.nonce) + 1)
    const sold = await call("/api/v1/trade/agent/submit", { clientTradeId: "ht-http-sell", signedTransaction: await relaySigned(b.body as TradeBuiltView) })
    expect(sold).toMatchObject({ status: 200, body: { success: true, status: "executed", side: "sell" } })
    expect(await executedEvents("ht-http-sell")).toBe(1)
  }, 120_000)
})
