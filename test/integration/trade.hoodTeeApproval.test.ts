/**
 * A Hood TEE sell's server-built token approval at its edges (docs/decisions.md "A Hood TEE sell's
 * approval, built by the server" and "A relay-signed Hood TEE approval never submitted"), through
 * `TradeService` over the real wallet service (PGlite, sign claims, the local TEE provider) and the
 * Hood localnet (the test bed: `test/support/hoodTradeRail.ts`). The spender is the trade router.
 * The trade service here is built over the wallet service with hooks, so a relay sign or a mined
 * approval can be placed exactly between two of the build's steps.
 * - a changed body under the id is refused (IDEMPOTENCY_CONFLICT) after the approval is confirmed,
 *   and, with the approval open and the allowance found in place, its claim is left signable;
 * - `expireOpen` moves only an unsigned claim; the relay signing between the standing read and the
 *   expiry: the claim stays signed, the build answers approval_pending, no sell is built on its nonce;
 * - an approval mined between the allowance read and the claim read answers approval_confirmed
 *   (never replaced by a second approval), and the next build is the sell;
 * - an approval signed at the relay and never submitted holds the wallet's sells only until its
 *   claim's lifetime (the wallet service's clock): then a new approval on the same nonce, and the sell executes.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type Address, encodeAbiParameters, encodeFunctionData, erc20Abi, getAddress, type Hash, type Hex, keccak256, numberToHex, parseTransaction, walletActions } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tokenBalance } from "../../src/chain/hood/client/HoodClient.js"
import { hoodTestClient, type StartedHoodLocalnet, setEthBalance } from "../../src/chain/hood/localnet/testkit.js"
import { MAX_ALLOWANCE } from "../../src/services/trade/HoodTradeChain.js"
import { fixedPriceSource, PriceSource } from "../../src/services/prices/PriceSource.js"
import { make as makeTrades, type TradeServiceShape } from "../../src/services/trade/TradeService.js"
import { isApproval, type TradeApprovalView, type TradeBuiltView } from "../../src/services/trade/TradeViews.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { CLAIM_LIFETIME_MS } from "../../src/services/wallets/WalletLimits.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService, type WalletServiceShape } from "../../src/services/wallets/WalletService.js"
import { ETH, hoodTradeRail, KEY_PREFIX } from "../support/hoodTradeRail.js"
import { principals, type WalletHarness } from "../support/walletHarness.js"

const prices = fixedPriceSource({ eth: "3000" })
const rail = hoodTradeRail({ label: "hood-tee-appr", prices })
const { principal, caller, run, sqlRun, pc, nonceOf, rowsOf, executedEvents, unsignedOf, bytesOf, refusal } = rail

let harness: WalletHarness
let net: StartedHoodLocalnet
let curve: { token: Address; curve: Address }
let tee: { id: string; address: Address }
let router: Address
/** The trade service over the hooked wallet service. */
let trades: TradeServiceShape

/** Runs once before the wallet service's next call of that name (then removed): where a test places the relay or the chain. */
const hooks: { claimStatus?: (claimId: string) => Promise<void>; expire?: (claimId: string) => Promise<void>; pastLifetime?: (claimId: string) => Promise<void> } = {}
const hooked = (service: WalletServiceShape): WalletServiceShape => {
  const before = (name: "claimStatus" | "expire" | "pastLifetime", claimId: string) =>
    Effect.promise(async () => {
      const h = hooks[name]
      delete hooks[name]
      if (h !== undefined) await h(claimId)
    })
  return {
    ...service,
    claimStatus: (claimId) => Effect.zipRight(before("claimStatus", claimId), service.claimStatus(claimId)),
    expireOpen: (claimId) => Effect.zipRight(before("expire", claimId), service.expireOpen(claimId)),
    // Runs after the read answers (where a submit can win the row before the lapse writes it).
    signedPastLifetime: (claimId) => Effect.tap(service.signedPastLifetime(claimId), () => before("pastLifetime", claimId)),
    // An unconditional expiry is hooked the same way (what the build used before `expireOpen`).
    settleClaim: (claimId, outcome) => (outcome === "expired" ? Effect.zipRight(before("expire", claimId), service.settleClaim(claimId, outcome)) : service.settleClaim(claimId, outcome))
  }
}

const request: ReturnType<typeof rail.requestFrom> = (...args) => rail.requestFrom({ payer: "tee", linkedWalletId: tee.id })(...args)
const buildOf = (r: ReturnType<typeof request>) => run(trades.build(caller, r))
const built = async (r: ReturnType<typeof request>): Promise<TradeBuiltView> => {
  const out = await buildOf(r)
  if (out._tag === "Left") throw new Error(`${r.clientTradeId}: ${JSON.stringify(out.left)}`)
  if (isApproval(out.right)) throw new Error(`${r.clientTradeId}: answered a token approval, not the trade`)
  return out.right
}
const approvalBuilt = async (r: ReturnType<typeof request>): Promise<TradeApprovalView> => {
  const out = await buildOf(r)
  if (out._tag === "Left") throw new Error(`${r.clientTradeId}: ${JSON.stringify(out.left)}`)
  if (!isApproval(out.right)) throw new Error(`${r.clientTradeId}: answered the trade, not its approval`)
  return out.right
}
const submitted = (clientTradeId: string, signed: Hex) => run(trades.submitSigned(caller, { clientTradeId, signedTransaction: bytesOf(signed) }))
const relaySigned = async (claimId: string, transactionBase64: string): Promise<Hex> =>
  (await Effect.runPromise(harness.service.signClaimed(principal, tee.id, { claimId, transaction: new Uint8Array(Buffer.from(transactionBase64, "base64")) }))).signedTransaction as Hex
const relaySignedApproval = (a: TradeApprovalView) => relaySigned(a.approval.signClaim.claimId, a.approval.transaction)
const relaySignedTrade = (b: TradeBuiltView) => relaySigned(b.signClaim.claimId, b.transaction)
const claimStateOf = async (claimId: string) => (await Effect.runPromise(harness.service.claimStatus(claimId)))?.state
const allowanceOf = () => pc().readContract({ address: curve.token, abi: erc20Abi, functionName: "allowance", args: [tee.address, router] })
const approvalsOf = (clientTradeId: string) =>
  sqlRun(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: string; claim_id: string }>`SELECT state, claim_id FROM agent_trade_approvals WHERE client_trade_id = ${clientTradeId}`)
  ).then((rows) => rows.map((r) => ({ state: r.state, claimId: r.claim_id })))

/** The TEE wallet sends a transaction the service did not build (the node lets the test act as it). */
const teeSends = async (tx: { to: Address; data: Hex }): Promise<Hash> => {
  const tc = hoodTestClient(net)
  await tc.impersonateAccount({ address: tee.address })
  try {
    const hash = await tc.extend(walletActions).sendTransaction({ account: tee.address, chain: net.chain, to: tx.to, data: tx.data })
    expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    return hash
  } finally {
    await tc.stopImpersonatingAccount({ address: tee.address })
  }
}
/**
 * The allowance written straight into the token's storage (`allowance` is slot 4 of lib/ERC20.sol:
 * name, symbol, totalSupply, balanceOf before it): in place without using the wallet's nonce, so a
 * built approval's nonce stays free (the approval was made "some other way").
 */
const allowanceStored = async (amount: bigint) => {
  const inner = keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [tee.address, 4n]))
  const slot = keccak256(encodeAbiParameters([{ type: "address" }, { type: "bytes32" }], [router, inner]))
  await hoodTestClient(net).setStorageAt({ address: curve.token, index: slot, value: numberToHex(amount, { size: 32 }) })
  expect(await allowanceOf()).toBe(amount)
}
const setAllowance = (amount: bigint) => teeSends({ to: curve.token, data: encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [router, amount] }) })

beforeAll(async () => {
  ;({ harness, net, curve } = await rail.open())
  router = getAddress(net.addresses.tradeRouter!)
  const service = hooked(harness.service)
  trades = await Effect.runPromise(
    makeTrades({
      solanaRpcUrl: "http://127.0.0.1:1",
      treasury: "11111111111111111111111111111111",
      hood: { chain: net.chain, rpcUrl: net.rpcUrl, factory: net.addresses.factory, swapRouter: net.addresses.swapRouter!, tradeRouter: net.addresses.tradeRouter!, weth9: net.addresses.weth9 },
      pollIntervalMs: 20,
      confirmTimeoutMs: 15_000
    }).pipe(
      Effect.provideService(WalletService, service),
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(PriceSource, prices),
      Effect.provideService(SqlClient.SqlClient, harness.sql)
    )
  )
  const t = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "evm", keyPrefix: KEY_PREFIX, label: "hood-appr-tee" }))
  tee = { id: t.id, address: getAddress(t.address) }
  await setEthBalance(hoodTestClient(net), tee.address, 100n * ETH)
  // The TEE wallet buys tokens to sell (built, signed at the relay, submitted).
  const b = await built(request("appr-buy", "buy", 2n * ETH))
  const bought = await submitted("appr-buy", await relaySignedTrade(b))
  expect(bought._tag === "Right" && bought.right).toMatchObject({ status: "executed" })
}, 180_000)

afterAll(rail.close)

describe("Hood TEE sell approval edges", () => {
  it("a changed body after the approval is confirmed is refused (IDEMPOTENCY_CONFLICT), nothing built; with the approval open and the allowance in place, a changed body leaves its claim signable", async () => {
    await setAllowance(0n)
    const amount = (await tokenBalance(pc(), curve.token, tee.address)) / 8n
    const a = await approvalBuilt(request("appr-body", "sell", amount))
    expect(getAddress(a.approval.spender)).toBe(router)
    const confirmed = await submitted("appr-body", await relaySignedApproval(a))
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "approval_confirmed" })
    const nonce = await nonceOf(tee.address)
    expect(refusal(await buildOf(request("appr-body", "sell", amount + 1n)))).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", httpStatus: 409 })
    expect(await rowsOf("appr-body")).toEqual([])
    expect(await approvalsOf("appr-body")).toEqual([{ state: "approved", claimId: a.approval.signClaim.claimId }])
    // The original body still builds the sell, on the next nonce.
    const b = await built(request("appr-body", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(nonce)

    // Open: another id's approval built, then the allowance set some other way; a changed body under that id moves nothing.
    await setAllowance(0n)
    const open = await approvalBuilt(request("appr-body-open", "sell", amount))
    await allowanceStored(MAX_ALLOWANCE)
    expect(refusal(await buildOf(request("appr-body-open", "sell", amount + 1n)))).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", httpStatus: 409 })
    expect(await claimStateOf(open.approval.signClaim.claimId)).toBe("open")
    expect(await approvalsOf("appr-body-open")).toEqual([{ state: "built", claimId: open.approval.signClaim.claimId }])
    expect(await rowsOf("appr-body-open")).toEqual([])
    // The same body: its unsigned approval expired (it would take the sell's nonce), then the sell.
    const sell = await built(request("appr-body-open", "sell", amount))
    expect(await claimStateOf(open.approval.signClaim.claimId)).toBe("expired")
    expect(unsignedOf(sell).nonce).toBe(await nonceOf(tee.address))
  }, 180_000)

  it("expireOpen moves only an unsigned claim; the relay signing between the standing read and the expiry keeps the claim signed and the build answers approval_pending (no sell on its nonce)", async () => {
    await setAllowance(0n)
    const amount = (await tokenBalance(pc(), curve.token, tee.address)) / 8n
    // At the wallet service: a signed claim is never expired by expireOpen; an open one is, once.
    const probe = await approvalBuilt(request("appr-probe", "sell", amount))
    const probeSigned = await relaySignedApproval(probe)
    expect(await Effect.runPromise(harness.service.expireOpen(probe.approval.signClaim.claimId))).toBe(false)
    expect(await claimStateOf(probe.approval.signClaim.claimId)).toBe("signed")
    // (the probe's approval is submitted so the wallet's nonce moves on)
    expect((await submitted("appr-probe", probeSigned))._tag).toBe("Right")
    await setAllowance(0n)

    const a = await approvalBuilt(request("appr-race", "sell", amount))
    const nonce = await nonceOf(tee.address)
    expect(a.approval.nonce).toBe(String(nonce))
    await allowanceStored(MAX_ALLOWANCE)
    // The relay signs between the build's standing read (open) and its expiry.
    let relayBytes: Hex | undefined
    hooks.expire = async (claimId) => {
      expect(claimId).toBe(a.approval.signClaim.claimId)
      relayBytes = await relaySignedApproval(a)
    }
    const raced = await buildOf(request("appr-race", "sell", amount))
    const held = refusal(raced)
    expect(relayBytes).toBeDefined()
    expect(held).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: true, extra: { reason: "approval_pending", clientTradeId: "appr-race" } })
    expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("signed")
    expect(await rowsOf("appr-race")).toEqual([])
    // The signed approval still lands on its nonce; then the sell is built on the next one.
    const confirmed = await submitted("appr-race", relayBytes!)
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "approval_confirmed", approval: { signature: keccak256(relayBytes!) } })
    const b = await built(request("appr-race", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(nonce + 1)
  }, 180_000)

  it("an approval mined between the allowance read and the claim read answers approval_confirmed, never a second approval; the next build is the sell", async () => {
    await setAllowance(0n)
    const amount = (await tokenBalance(pc(), curve.token, tee.address)) / 8n
    const a = await approvalBuilt(request("appr-mined", "sell", amount))
    const nonce = await nonceOf(tee.address)
    const signed = await relaySignedApproval(a)
    // The caller broadcasts it, mined after the build read the allowance (short) and before it reads the claim.
    hooks.claimStatus = async () => {
      const hash = await pc().sendRawTransaction({ serializedTransaction: signed })
      expect((await pc().waitForTransactionReceipt({ hash })).status).toBe("success")
    }
    const out = await buildOf(request("appr-mined", "sell", amount))
    expect(out._tag === "Right" && out.right).toMatchObject({ status: "approval_confirmed", replay: true, approval: { nonce: String(nonce) } })
    expect(await approvalsOf("appr-mined")).toEqual([{ state: "approved", claimId: a.approval.signClaim.claimId }])
    expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("confirmed")
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
    expect(await allowanceOf()).toBe(MAX_ALLOWANCE)
    const b = await built(request("appr-mined", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(nonce + 1)
    expect(getAddress(unsignedOf(b).to!)).toBe(router)
  }, 180_000)

  it("an approval signed at the relay and never submitted holds sells until its claim's lifetime passes (wallet clock); then a new approval on the same nonce, and the sell executes once", async () => {
    await setAllowance(0n)
    const held = await tokenBalance(pc(), curve.token, tee.address)
    const amount = held / 8n
    const a = await approvalBuilt(request("appr-stuck", "sell", amount))
    const nonce = await nonceOf(tee.address)
    await relaySignedApproval(a) // signed, the bytes never submitted nor broadcast
    expect(refusal(await buildOf(request("appr-stuck", "sell", amount)))).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", retryable: true, extra: { reason: "approval_pending" } })
    const before = harness.clock.ms
    let fresh: TradeApprovalView
    try {
      harness.clock.ms = before + CLAIM_LIFETIME_MS - 1
      expect(refusal(await buildOf(request("appr-stuck", "sell", amount)))).toMatchObject({ extra: { reason: "approval_pending" } })
      expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("signed")
      harness.clock.ms = before + CLAIM_LIFETIME_MS
      fresh = await approvalBuilt(request("appr-stuck", "sell", amount))
    } finally {
      harness.clock.ms = before
    }
    expect(fresh).toMatchObject({ status: "approval_built", replay: false, approval: { nonce: String(nonce) } })
    expect(fresh.approval.signClaim.claimId).not.toBe(a.approval.signClaim.claimId)
    expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("failed")
    expect(getAddress(parseTransaction(`0x${Buffer.from(fresh.approval.transaction, "base64").toString("hex")}` as Hex).to!)).toBe(curve.token)
    const confirmed = await submitted("appr-stuck", await relaySignedApproval(fresh))
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "approval_confirmed" })
    const b = await built(request("appr-stuck", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(nonce + 1)
    const sold = await submitted("appr-stuck", await relaySignedTrade(b))
    expect(sold._tag === "Right" && sold.right).toMatchObject({ status: "executed", side: "sell" })
    expect(await tokenBalance(pc(), curve.token, tee.address)).toBe(held - amount)
    expect(await executedEvents("appr-stuck")).toBe(1)
  }, 180_000)

  it("a submit that takes a relay-signed approval's row while the build decides to lapse it wins: the build answers approval_pending, no second approval, the approval sent once and confirmed", async () => {
    await setAllowance(0n)
    const held = await tokenBalance(pc(), curve.token, tee.address)
    const amount = held / 8n
    const a = await approvalBuilt(request("appr-lapse-race", "sell", amount))
    const nonce = await nonceOf(tee.address)
    const signed = await relaySignedApproval(a)
    const hash = keccak256(signed)
    const before = harness.clock.ms
    try {
      harness.clock.ms = before + CLAIM_LIFETIME_MS
      // A submit's `built → sending` lands between the build's lifetime read and its lapse (the bytes not sent yet).
      hooks.pastLifetime = () =>
        sqlRun(
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`UPDATE agent_trade_approvals SET state = 'sending', signature = ${hash}, signed_transaction = ${signed} WHERE client_trade_id = 'appr-lapse-race' AND state = 'built'`
          )
        ).then(() => undefined)
      expect(refusal(await buildOf(request("appr-lapse-race", "sell", amount)))).toMatchObject({ code: "IDEMPOTENCY_CONFLICT", extra: { reason: "approval_pending" } })
    } finally {
      harness.clock.ms = before
      delete hooks.pastLifetime
    }
    expect(await approvalsOf("appr-lapse-race")).toEqual([{ state: "sending", claimId: a.approval.signClaim.claimId }])
    expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("signed")
    // The submit that won goes on: its kept bytes are sent once and the approval confirmed; the sell follows on the next nonce.
    const confirmed = await submitted("appr-lapse-race", signed)
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "approval_confirmed", approval: { signature: hash } })
    expect(await nonceOf(tee.address)).toBe(nonce + 1)
    expect(await claimStateOf(a.approval.signClaim.claimId)).toBe("confirmed")
    const b = await built(request("appr-lapse-race", "sell", amount))
    expect(unsignedOf(b).nonce).toBe(nonce + 1)
  }, 180_000)
})
