/**
 * The linked payer on the Hood trade rail (issue 28), through `TradeService` over the real wallet
 * service (PGlite, sign claims), the attempt runner and the Hood localnet (Hardhat/EDR) over
 * JSON-RPC (the test bed: `test/support/hoodTradeRail.ts`). The imported EVM wallet's key is the
 * test's: it signs with viem locally.
 * - build: the unsigned EIP-1559 transaction to the trade router (the curve trade and the plan's
 *   platform fee in one call: value = amountIn + fee) with the quote's minimum out, its sign
 *   claim, recorded `built` with the spend held; a repeat answers the same transaction, a changed
 *   body is refused; 10 concurrent builds of one new id record one build (one row, claim, hold);
 * - submit: bytes signed by another key, or the built transaction altered and signed by the
 *   wallet, are refused (`wrong_transaction`) and nothing moves; the right bytes, submitted by
 *   several requests at once, are sent once: executed to the quote's `amountOut` to the raw unit,
 *   `trade.executed` once, the spend booked; a repeat submit replays and sends nothing;
 * - confirm: a sell needs the wallet's allowance to the trade router (refused naming it until approved); the
 *   caller broadcasts the signed sell itself, a hash of another transaction is refused, the right
 *   one is verified, awaited and recorded once;
 * - a build whose nonce another transaction of the wallet took never lands: `never_landed`, its
 *   hold released, nothing traded (the TEE payer: `trade.hoodTee.test.ts`);
 * - the watch pass settles builds no request submitted or confirmed: one the caller broadcast
 *   itself is found (the token's transfers since the build's block, the wallet's tx on the nonce,
 *   its bytes the build) and executes once; one whose nonce another transaction took fails;
 * - a crash between the record of `sending` and the send: the row kept the signed bytes
 *   (migration 0044) and the recovery pass sends them once; the trade executes to the quote;
 * - after graduation, on the v3 pool through the trade router: a buy signed by the sign relay under
 *   the build's claim (the claim settled `confirmed`), and a sell (the router's allowance first)
 *   the caller broadcast and confirmed, paid in ETH: both to the quote's raw unit, the treasury
 *   paid exactly the fee;
 * - over HTTP, every answer checked against the OpenAPI document: dry run, build, a wrong submit,
 *   the relay's 0x-hex signed transaction submitted, a sell confirmed by its 0x hash.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { webcrypto } from "node:crypto"
import { type Address, getAddress, type Hash, type Hex, keccak256, parseEventLogs, zeroAddress } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bondingCurveAbi } from "../../src/chain/hood/abi.generated.js"
import { approve, buy, createCurve, type HoodClients, hoodWallet, migrate, saltOf, tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, hoodTestClient, type StartedHoodLocalnet, setEthBalance } from "../../src/chain/hood/localnet/testkit.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import type { TradeServiceShape } from "../../src/services/trade/TradeService.js"
import { isApproval, type TradeBuiltView } from "../../src/services/trade/TradeViews.js"
import { quoteHoodPool, viemPoolSource } from "../../src/services/trade/HoodPoolQuote.js"
import { platformFeeOf } from "../../src/services/trade/VenueQuote.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { eventually } from "../support/eventually.js"
import { sealForImport } from "../support/hpkeSealer.js"
import { ACCOUNT, ETH, hoodTradeRail, KEY_PREFIX } from "../support/hoodTradeRail.js"
import { tradeRoutesOverHttp } from "../support/tradeRoutesHttp.js"
import type { WalletHarness } from "../support/walletHarness.js"

const rail = hoodTradeRail({ label: "hood-linked", prices: fixedPriceSource({ eth: "3000" }) })
const { principal, caller, run, sqlRun, pc, nonceOf, rowsOf, executedEvents, holdOf, quoteNow, built, unsignedOf, signedBy, bytesOf, refusal } = rail

let harness: WalletHarness
let net: StartedHoodLocalnet
let trades: TradeServiceShape
let curve: { token: Address; curve: Address }
let linked: { id: string; address: Address; privateKey: Hex; clients: HoodClients; authorize: (bytes: Uint8Array) => Promise<Uint8Array> }

const request: ReturnType<typeof rail.requestFrom> = (...args) => rail.requestFrom({ payer: "linked", linkedWalletId: linked.id })(...args)

beforeAll(async () => {
  ;({ harness, net, trades, curve } = await rail.open())
  // An imported (linked) EVM wallet whose key the test holds.
  const privateKey = generatePrivateKey()
  const owner = privateKeyToAccount(privateKey)
  const importer: Principal = { ...principal, plan: "pro" }
  const init = await Effect.runPromise(harness.service.importInit(importer, "evm", owner.address))
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.encryptionPublicKey, "base64")), await exportSecretText("evm", Buffer.from(privateKey.slice(2), "hex")))
  const signer = (await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair
  const spki = new Uint8Array(await webcrypto.subtle.exportKey("spki", signer.publicKey))
  const view = await Effect.runPromise(harness.service.importSubmit(importer, { ciphertext: sealed.ciphertext, encapsulatedKey: sealed.enc, signerSpki: spki }))
  linked = {
    id: view.id,
    address: getAddress(owner.address),
    privateKey,
    clients: { publicClient: pc(), wallet: hoodWallet(net.chain, owner, net.rpcUrl) },
    authorize: async (bytes) => new Uint8Array(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.privateKey, bytes))
  }
  await setEthBalance(hoodTestClient(net), linked.address, 100n * ETH)
}, 120_000)

afterAll(rail.close)

describe("Hood linked payer", () => {
  it("build → signed locally → submitted: refused when signed by another key or altered; sent once, executed to the quote's raw unit; a repeat replays", async () => {
    const amount = ETH / 2n
    const q = await quoteNow("buy", amount)
    const b = await built(request("hl-buy", "buy", amount))
    expect(b).toMatchObject({ status: "built", chain: "hood", payer: "linked", wallet: linked.address, walletId: linked.id, expectedOut: q.amountOut.toString(), signature: "", replay: false })
    const tx = unsignedOf(b)
    const fee = platformFeeOf(q, "buy", caller).feeRaw
    expect(b.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    expect(tx).toMatchObject({ type: "eip1559", chainId: net.chain.id, value: amount + fee, nonce: await nonceOf(linked.address) })
    expect(getAddress(tx.to!)).toBe(net.addresses.tradeRouter!)
    expect(b.lastValidBlockHeight).toBe(String(tx.nonce))
    expect(await rowsOf("hl-buy")).toEqual([{ state: "built", signature: "" }])
    expect(await holdOf("hl-buy")).toBe("held")
    // A repeat build answers the same transaction and claim; a changed body is refused.
    expect(await built(request("hl-buy", "buy", amount))).toMatchObject({ replay: true, transaction: b.transaction, signClaim: b.signClaim })
    expect(refusal(await run(trades.build(caller, request("hl-buy", "buy", amount + 1n))))?.code).toBe("IDEMPOTENCY_CONFLICT")

    const tokensBefore = await tokenBalance(pc(), curve.token, linked.address)
    const nonceBefore = await nonceOf(linked.address)
    const submitted = (signed: Hex) => run(trades.submitSigned(caller, { clientTradeId: "hl-buy", signedTransaction: bytesOf(signed) }))
    // Signed by another key; the built transaction altered (a lower minimum out) and signed by the wallet; the unsigned bytes.
    const altered = { ...tx, value: amount - 1n }
    for (const wrong of [await signedBy(generatePrivateKey(), tx), await signedBy(linked.privateKey, altered), `0x${Buffer.from(b.transaction, "base64").toString("hex")}` as Hex]) {
      expect(refusal(await submitted(wrong))).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 409, field: "signedTransaction" })
    }
    expect(await rowsOf("hl-buy")).toEqual([{ state: "built", signature: "" }])
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(tokensBefore)
    expect(await nonceOf(linked.address)).toBe(nonceBefore)

    const signed = await signedBy(linked.privateKey, tx)
    const answers = await Promise.all(Array.from({ length: 8 }, () => submitted(signed)))
    const settled = answers.flatMap((a) => (a._tag === "Right" && !isApproval(a.right) ? [a.right] : []))
    for (const a of answers) if (a._tag === "Left") expect(refusal(a)?.code).toBe("IDEMPOTENCY_CONFLICT")
    expect(settled.length).toBeGreaterThan(0)
    expect(new Set(settled.map((v) => v.signature)).size).toBe(1)
    expect(settled[0]).toMatchObject({ status: "executed", payer: "linked", amountOut: q.amountOut.toString(), expectedOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(tokensBefore + q.amountOut)
    expect(await nonceOf(linked.address)).toBe(nonceBefore + 1)
    expect((await pc().getTransactionReceipt({ hash: settled[0]!.signature as Hash })).status).toBe("success")
    expect(await executedEvents("hl-buy")).toBe(1)
    expect(await holdOf("hl-buy")).toBe("booked")

    // A repeat submit answers the stored outcome and sends nothing.
    const replay = await submitted(signed)
    expect(replay._tag === "Right" && replay.right).toMatchObject({ replay: true, status: "executed", signature: settled[0]!.signature })
    expect(await nonceOf(linked.address)).toBe(nonceBefore + 1)
    expect(await executedEvents("hl-buy")).toBe(1)
  }, 120_000)

  it("10 concurrent builds of one new id record one build: every answer is its transaction and claim, one row, one hold", async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => run(trades.build(caller, request("hl-race", "buy", ETH / 50n)))))
    const builds = answers.flatMap((a) => (a._tag === "Right" && !isApproval(a.right) ? [a.right] : []))
    expect(builds).toHaveLength(10)
    expect(new Set(builds.map((b) => b.transaction)).size).toBe(1)
    expect(new Set(builds.map((b) => b.signClaim.claimId)).size).toBe(1)
    expect(builds.filter((b) => !b.replay)).toHaveLength(1)
    expect(await rowsOf("hl-race")).toEqual([{ state: "built", signature: "" }])
    expect(await holdOf("hl-race")).toBe("held")
    // Its nonce spent by the wallet elsewhere, it settles failed (watch pass), its hold released: the tests after it start clean.
    const other = await linked.clients.wallet.sendTransaction({ to: linked.address, value: 0n, nonce: unsignedOf(builds[0]!).nonce!, account: linked.clients.wallet.account!, chain: net.chain })
    expect((await pc().waitForTransactionReceipt({ hash: other })).status).toBe("success")
    await eventually(
      async () => {
        await Effect.runPromise(trades.watchBuilt)
        return (await rowsOf("hl-race"))[0]?.state === "failed"
      },
      { what: "the raced build to settle", intervalMs: 50 }
    )
    expect(await holdOf("hl-race")).toBe("released")
  }, 120_000)

  it("confirm: a sell needs the allowance; the caller broadcasts the signed sell itself; another hash is refused; the right one records once", async () => {
    const held = await tokenBalance(pc(), curve.token, linked.address)
    expect(held).toBeGreaterThan(0n)
    const amount = held / 3n
    // No allowance yet: the server cannot sign the wallet's approval.
    const short = refusal(await run(trades.build(caller, request("hl-sell-early", "sell", amount))))
    // The spender is the trade router (it pulls the tokens and pays the fee from the proceeds), not the curve.
    expect(short).toMatchObject({ code: "INSUFFICIENT_OWNER_BALANCE", extra: { reason: "allowance", spender: net.addresses.tradeRouter! } })
    expect(await rowsOf("hl-sell-early")).toEqual([])
    const approved = await approve(linked.clients, curve.token, net.addresses.tradeRouter!, 2n ** 255n)

    const q = await quoteNow("sell", amount)
    const b = await built(request("hl-sell", "sell", amount))
    expect(b).toMatchObject({ status: "built", side: "sell", expectedOut: q.amountOut.toString() })
    const signed = await signedBy(linked.privateKey, unsignedOf(b))
    // A hash that is not this build (the approval), and one the node does not know: refused, nothing recorded.
    for (const wrong of [approved.transactionHash, `0x${"ab".repeat(32)}`]) {
      expect(refusal(await run(trades.confirm(caller, { clientTradeId: "hl-sell", signature: wrong })))).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 409, field: "signature" })
    }
    expect(await rowsOf("hl-sell")).toEqual([{ state: "built", signature: "" }])
    const hash = await pc().sendRawTransaction({ serializedTransaction: signed })
    const confirmed = await Promise.all(Array.from({ length: 4 }, () => run(trades.confirm(caller, { clientTradeId: "hl-sell", signature: hash }))))
    const settled = confirmed.flatMap((c) => (c._tag === "Right" ? [c.right] : []))
    for (const c of confirmed) if (c._tag === "Left") expect(refusal(c)?.code).toBe("IDEMPOTENCY_CONFLICT")
    expect(settled.length).toBeGreaterThan(0)
    expect(settled[0]).toMatchObject({ status: "executed", side: "sell", signature: hash, amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(held - amount)
    expect(await rowsOf("hl-sell")).toEqual([{ state: "executed", signature: hash }])
    expect(await executedEvents("hl-sell")).toBe(1)
  }, 120_000)

  it("a build whose nonce another transaction of the wallet took never lands: never_landed, the hold released, nothing traded", async () => {
    const b = await built(request("hl-lost", "buy", ETH / 10n))
    const tx = unsignedOf(b)
    const tokens = await tokenBalance(pc(), curve.token, linked.address)
    // The wallet spends the nonce elsewhere first.
    const other = await linked.clients.wallet.sendTransaction({ to: linked.address, value: 0n, nonce: tx.nonce!, account: linked.clients.wallet.account!, chain: net.chain })
    expect((await pc().waitForTransactionReceipt({ hash: other })).status).toBe("success")
    const out = await run(trades.submitSigned(caller, { clientTradeId: "hl-lost", signedTransaction: bytesOf(await signedBy(linked.privateKey, tx)) }))
    expect(refusal(out)).toMatchObject({ code: "SWAP_FAILED" })
    expect(out._tag === "Left" && (out.left as { reason?: string }).reason).toBe("never_landed")
    expect((await rowsOf("hl-lost"))[0]?.state).toBe("failed")
    expect(await holdOf("hl-lost")).toBe("released")
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(tokens)
    expect(await executedEvents("hl-lost")).toBe(0)
  }, 120_000)

  it("the watch pass settles builds nobody submitted or confirmed: one the caller broadcast itself executes once; one whose nonce another transaction took fails, its hold released", async () => {
    const amount = ETH / 5n
    const q = await quoteNow("buy", amount)
    const b = await built(request("hl-watch", "buy", amount))
    const tokens = await tokenBalance(pc(), curve.token, linked.address)
    const hash = await pc().sendRawTransaction({ serializedTransaction: await signedBy(linked.privateKey, unsignedOf(b)) })
    expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    await eventually(
      async () => {
        await Effect.runPromise(trades.watchBuilt)
        return (await rowsOf("hl-watch"))[0]?.state === "executed"
      },
      { what: "the watch pass to settle the self-broadcast build", intervalMs: 50 }
    )
    expect(await rowsOf("hl-watch")).toEqual([{ state: "executed", signature: hash }])
    const view = await run(trades.trade(caller, "hl-watch"))
    expect(view._tag === "Right" && view.right).toMatchObject({ status: "executed", amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(tokens + q.amountOut)
    expect(await executedEvents("hl-watch")).toBe(1)
    expect(await holdOf("hl-watch")).toBe("booked")

    // A build left unsent keeps its hold while its nonce is open; once another transaction takes it, it fails.
    const lost = await built(request("hl-watch-lost", "buy", amount))
    await Effect.runPromise(trades.watchBuilt)
    expect(await rowsOf("hl-watch-lost")).toEqual([{ state: "built", signature: "" }])
    expect(await holdOf("hl-watch-lost")).toBe("held")
    const other = await linked.clients.wallet.sendTransaction({ to: linked.address, value: 0n, nonce: unsignedOf(lost).nonce!, account: linked.clients.wallet.account!, chain: net.chain })
    expect((await pc().waitForTransactionReceipt({ hash: other })).status).toBe("success")
    await eventually(
      async () => {
        await Effect.runPromise(trades.watchBuilt)
        return (await rowsOf("hl-watch-lost"))[0]?.state === "failed"
      },
      { what: "the watch pass to fail the build whose nonce was taken", intervalMs: 50 }
    )
    expect(await holdOf("hl-watch-lost")).toBe("released")
    expect(await executedEvents("hl-watch-lost")).toBe(0)
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(tokens + q.amountOut)
  }, 120_000)

  it("a crash between the record of sending and the send: the recovery pass sends the kept signed bytes once and the trade executes to the quote's raw unit", async () => {
    const amount = ETH / 8n
    const q = await quoteNow("buy", amount)
    const b = await built(request("hl-crash", "buy", amount))
    const signed = await signedBy(linked.privateKey, unsignedOf(b))
    const hash = keccak256(signed)
    const tokens = await tokenBalance(pc(), curve.token, linked.address)
    const nonce = await nonceOf(linked.address)
    // What the runner saves before it sends (the row `sending` with the signed bytes), then the process dies: nothing was broadcast.
    await sqlRun(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE agent_trades SET state = 'sending', signature = ${hash}, signed_transaction = ${signed} WHERE account_id = ${ACCOUNT} AND client_trade_id = 'hl-crash'`
      )
    )
    expect(await nonceOf(linked.address)).toBe(nonce)
    await Effect.runPromise(trades.resumeInFlight)
    await eventually(async () => (await rowsOf("hl-crash"))[0]?.state === "executed", { what: "the recovered trade to execute", intervalMs: 50 })
    expect(await rowsOf("hl-crash")).toEqual([{ state: "executed", signature: hash }])
    const view = await run(trades.trade(caller, "hl-crash"))
    expect(view._tag === "Right" && view.right).toMatchObject({ status: "executed", amountOut: q.amountOut.toString() })
    expect(await tokenBalance(pc(), curve.token, linked.address)).toBe(tokens + q.amountOut)
    expect(await nonceOf(linked.address)).toBe(nonce + 1)
    expect(await executedEvents("hl-crash")).toBe(1)
    // Another recovery pass finds nothing in flight and sends nothing.
    await Effect.runPromise(trades.resumeInFlight)
    expect(await nonceOf(linked.address)).toBe(nonce + 1)
  }, 120_000)

  it("a submit keeps the signed bytes on the row (for that recovery); a confirmed self-broadcast keeps none", async () => {
    const stored = (id: string) =>
      sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ signed_transaction: string | null }>`SELECT signed_transaction FROM agent_trades WHERE client_trade_id = ${id}`)).then(
        (r) => r[0]?.signed_transaction
      )
    expect(await stored("hl-buy")).toMatch(/^0x02/)
    expect(await stored("hl-sell")).toBeNull()
  })

  it("after graduation, on the Uniswap v3 pool: a relay-signed buy and a self-broadcast sell paid in ETH (router allowance first), each to the quote's raw unit", async () => {
    const label = `hood-linked-pool-${Date.now()}`
    const trader = clientsFor(net, net.roles.traders[0]!)
    const c = await createCurve(trader, net.addresses.factory, { name: label, symbol: "HLP", quoteToken: zeroAddress, virtualQuoteRaw: 2n * ETH, thresholdRaw: 4n * ETH, dexVersion: "v3", salt: saltOf(label) })
    await buy(trader, c.curve, { amountInRaw: 6n * ETH, quoteToken: zeroAddress })
    const migrated = await migrate(clientsFor(net, net.roles.keeper), c.curve)
    const pool = getAddress(parseEventLogs({ abi: bondingCurveAbi, eventName: "CurveMigrated", logs: migrated.receipt.logs })[0]!.args.pool)
    const poolQuote = async (side: "buy" | "sell", amountIn: bigint) => {
      const quoted = await quoteHoodPool(viemPoolSource(pc()), { pool, token: c.token, side, amountIn, creatorShareBps: 3000n })
      if (quoted._tag !== "Quoted" || quoted.quote._tag !== "Filled") throw new Error("no pool fill")
      return quoted.quote
    }
    const router = getAddress(net.addresses.tradeRouter!)

    // A buy, signed by the sign relay under the build's claim (0x-hex, as the relay answers).
    const amount = ETH / 2n
    const qb = await poolQuote("buy", amount)
    const b = await built(request("hl-pool-buy", "buy", amount, { mint: c.token }))
    expect(b).toMatchObject({ status: "built", venue: "hood-dex", expectedOut: qb.amountOut.toString() })
    expect(getAddress(unsignedOf(b).to!)).toBe(router)
    const bytes = new Uint8Array(Buffer.from(b.transaction, "base64"))
    const relay = await Effect.runPromise(harness.service.signClaimed(principal, linked.id, { claimId: b.signClaim.claimId, transaction: bytes, authorizationSignature: await linked.authorize(bytes) }))
    const before = await tokenBalance(pc(), c.token, linked.address)
    const out = await run(trades.submitSigned(caller, { clientTradeId: "hl-pool-buy", signedTransaction: bytesOf(relay.signedTransaction as Hex) }))
    expect(out._tag === "Right" && out.right).toMatchObject({ status: "executed", venue: "hood-dex", amountOut: qb.amountOut.toString() })
    expect(await tokenBalance(pc(), c.token, linked.address)).toBe(before + qb.amountOut)
    expect((await Effect.runPromise(harness.service.claimStatus(b.signClaim.claimId)))?.state).toBe("confirmed")
    expect(await executedEvents("hl-pool-buy")).toBe(1)

    // A sell through the router: its allowance first, then the caller broadcasts and confirms.
    const sell = qb.amountOut / 2n
    const short = refusal(await run(trades.build(caller, request("hl-pool-sell", "sell", sell, { mint: c.token }))))
    expect(short).toMatchObject({ code: "INSUFFICIENT_OWNER_BALANCE", extra: { reason: "allowance", spender: router } })
    await approve(linked.clients, c.token, router, 2n ** 255n)
    const qs = await poolQuote("sell", sell)
    const bs = await built(request("hl-pool-sell", "sell", sell, { mint: c.token }))
    const ethBefore = await pc().getBalance({ address: linked.address })
    const treasury = getAddress(net.roles.treasury.address)
    const treasuryBefore = await pc().getBalance({ address: treasury })
    const hash = await pc().sendRawTransaction({ serializedTransaction: await signedBy(linked.privateKey, unsignedOf(bs)) })
    const confirmed = await run(trades.confirm(caller, { clientTradeId: "hl-pool-sell", signature: hash }))
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "executed", venue: "hood-dex", signature: hash, amountOut: qs.amountOut.toString() })
    const receipt = await pc().getTransactionReceipt({ hash })
    // The seller receives ETH (the router unwraps WETH), exactly the quote's amountOut less the platform fee, less its gas; the treasury the fee.
    const fee = platformFeeOf(qs, "sell", caller).feeRaw
    expect(confirmed._tag === "Right" && confirmed.right.fee).toEqual({ bps: 25, feeRaw: fee.toString(), asset: "quote" })
    expect((await pc().getBalance({ address: linked.address })) - ethBefore).toBe(qs.amountOut - fee - receipt.gasUsed * receipt.effectiveGasPrice)
    expect((await pc().getBalance({ address: treasury })) - treasuryBefore).toBe(fee)
    expect(await executedEvents("hl-pool-sell")).toBe(1)
  }, 180_000)
})

describe("Hood linked payer over HTTP, answers as the OpenAPI document says", () => {
  const http = tradeRoutesOverHttp({ accountId: ACCOUNT, keyId: principal.keyId, keyPrefix: KEY_PREFIX, scopes: principal.scopes }, () => ({ trades, sql: harness.sql }))
  const call = http.call
  beforeAll(http.open)
  afterAll(http.close)

  it("build (dry run, then built), a wrong submit, the relay's 0x-hex submit; a sell broadcast by the caller and confirmed by its 0x hash", async () => {
    const amount = ETH / 20n
    const q = await quoteNow("buy", amount)
    const body = { clientTradeId: "hl-http-buy", chain: "hood", mint: curve.token, side: "buy", amountIn: String(amount), slippageBps: 0, payer: "linked", linkedWalletId: linked.id }
    const dry = await call("/api/v1/trade/agent/build", { ...body, dryRun: true })
    expect(dry).toMatchObject({ status: 200, body: { success: true, dryRun: true, payer: "linked", wallet: linked.address, expectedOut: q.amountOut.toString() } })
    expect(await rowsOf("hl-http-buy")).toEqual([])
    const b = await call("/api/v1/trade/agent/build", body)
    expect(b).toMatchObject({ status: 200, body: { success: true, status: "built", chain: "hood", payer: "linked", walletId: linked.id } })
    const wrong = await call("/api/v1/trade/agent/submit", { clientTradeId: "hl-http-buy", signedTransaction: b.body.transaction })
    expect(wrong).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED", field: "signedTransaction" } } })
    const bytes = new Uint8Array(Buffer.from(b.body.transaction as string, "base64"))
    const relay = await Effect.runPromise(harness.service.signClaimed(principal, linked.id, { claimId: b.body.signClaim.claimId, transaction: bytes, authorizationSignature: await linked.authorize(bytes) }))
    expect(relay.signedTransaction.startsWith("0x")).toBe(true)
    const submitted = await call("/api/v1/trade/agent/submit", { clientTradeId: "hl-http-buy", signedTransaction: relay.signedTransaction })
    expect(submitted).toMatchObject({ status: 200, body: { success: true, status: "executed", payer: "linked", amountOut: q.amountOut.toString(), replay: false } })
    expect(await executedEvents("hl-http-buy")).toBe(1)

    // A sell (the trade router's allowance was given above): the caller broadcasts it and confirms by hash.
    const sell = q.amountOut / 2n
    const qs = await quoteNow("sell", sell)
    const bs = await call("/api/v1/trade/agent/build", { ...body, clientTradeId: "hl-http-sell", side: "sell", amountIn: String(sell) })
    expect(bs).toMatchObject({ status: 200, body: { status: "built", side: "sell" } })
    const hash = await pc().sendRawTransaction({ serializedTransaction: await signedBy(linked.privateKey, unsignedOf(bs.body as TradeBuiltView)) })
    const confirmed = await call("/api/v1/trade/agent/confirm", { clientTradeId: "hl-http-sell", signature: hash })
    expect(confirmed).toMatchObject({ status: 200, body: { success: true, status: "executed", signature: hash, amountOut: qs.amountOut.toString() } })
    // A repeat (the hash's hex in upper case: the same hash) answers the trade as it stands.
    const again = await call("/api/v1/trade/agent/confirm", { clientTradeId: "hl-http-sell", signature: `0x${hash.slice(2).toUpperCase()}` })
    expect(again).toMatchObject({ status: 200, body: { status: "executed", replay: true } })
    expect(await executedEvents("hl-http-sell")).toBe(1)
  }, 120_000)
})
