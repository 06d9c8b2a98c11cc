/**
 * Linked and TEE payers on the Solana trade rail (issue 28), through `TradeService` over the real
 * wallet service (PGlite, sign claims, the relay), the attempt runner and the Solana localnet:
 * - an imported (linked) wallet's build answers the unsigned transaction and its single-use sign
 *   claim (recorded `built`, nothing sent, the spend held); the relay signs exactly those bytes;
 *   50 concurrent submits of the signed transaction send it once and record one trade, executed
 *   to the quote's raw unit, with one `trade.executed` and the fee once; a repeat build answers the
 *   stored build, a repeat submit the stored outcome;
 * - a submit that is not the built transaction signed by its payer (unsigned, another message, a
 *   forged signature) is refused and changes nothing;
 * - confirm: the caller signs with the wallet's own key and broadcasts it itself; a signature that
 *   is not over the built message is refused; the right one is verified, awaited and recorded once;
 * - a TEE wallet bound to the key trades the same way through the relay; spend caps are strict per
 *   rail: with no USD price the imported wallet's txLimit check is advisory (it builds) while the
 *   TEE wallet's fails closed (KEY_LIMIT_REACHED, limit_unavailable) and nothing is recorded.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type Address,
  address,
  createKeyPairFromPrivateKeyBytes,
  getAddressFromPublicKey,
  getBase58Decoder,
  getTransactionDecoder,
  getTransactionEncoder,
  partiallySignTransaction,
  signBytes
} from "@solana/kit"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { webcrypto } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toApiError } from "../../api/ErrorTable.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf, launchCurve, readCurve, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { curveParamsOf, curveStateOf } from "../../src/chain/solana/program/accounts/Curve.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { fixedPriceSource, PriceSource, type PriceSourceShape, PriceUnavailable } from "../../src/services/prices/PriceSource.js"
import { reservationState } from "../../src/services/spend/SpendStore.js"
import { type TradeCaller, type TradeRequest, type TradeServiceShape, make as makeTrades } from "../../src/services/trade/TradeService.js"
import { tradeReservationId } from "../../src/services/trade/TradeStore.js"
import { isApproval, type TradeBuiltView } from "../../src/services/trade/TradeViews.js"
import { quoteVenue } from "../../src/services/trade/VenueQuote.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import { sealForImport } from "../support/hpkeSealer.js"
import { tradeRoutesOverHttp } from "../support/tradeRoutesHttp.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { swapKey } from "../support/tradeRows.js"

const SOL = 1_000_000_000n
const ACCOUNT = "acct-a"
const KEY_PREFIX = "a1aaaaaa"

let harness: WalletHarness
let ledger: Ledger
let trades: TradeServiceShape
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
let mint: Address
let curveAddress: Address
/** Whether the spend gate can value SOL (off: no USD price). */
let priced = true
let imported: { id: string; address: Address; keyPair: webcrypto.CryptoKeyPair; authorize: (bytes: Uint8Array) => Promise<Uint8Array> }
let tee: { id: string; address: Address }

const principal = principals["key-a1"] as Principal
const caller: TradeCaller = { accountId: ACCOUNT, keyId: principal.keyId, keyPrefix: KEY_PREFIX, embeddedWallet: "denied", planFeeBps: 25n, referred: false, principal }

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const sqlRun = <A>(e: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, harness.sql) as Effect.Effect<A>)
const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"))

const request = (clientTradeId: string, walletId: string, amountInRaw: bigint, more: Partial<TradeRequest> = {}): TradeRequest => ({
  clientTradeId,
  chain: "solana",
  mint,
  side: "buy",
  amountInRaw,
  slippageBps: 0,
  payer: "linked",
  linkedWalletId: walletId,
  ...more
})

const fixed = fixedPriceSource({ sol: "150" })
const prices: PriceSourceShape = {
  usd: (asset) => (priced ? fixed.usd(asset) : Effect.fail(new PriceUnavailable({ asset, reason: "not_configured", message: "prices are off in this test" })))
}

const rowsOf = (clientTradeId: string) =>
  sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: string; signature: string }>`SELECT state, signature FROM agent_trades WHERE client_trade_id = ${clientTradeId}`))
const executedEvents = (clientTradeId: string) =>
  sqlRun(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'trade.executed' AND data->>'clientTradeId' = ${clientTradeId}`
    )
  ).then((r) => r[0]?.n ?? 0)

const newKey = () =>
  sqlRun(
    insertKey(
      swapKey({ id: principal.keyId ?? "", prefix: KEY_PREFIX, accountId: ACCOUNT, hash: "hash-linked", embeddedWallet: "denied" }),
      Date.now()
    )
  )

const quoteNow = (amount: bigint) => {
  const c = readCurve(ledger, curveAddress)
  const q = quoteVenue({ _tag: "Curve", params: curveParamsOf(c), state: curveStateOf(c), creatorShareBps: BigInt(c.creatorShareBps) }, "buy", amount)
  if (q._tag !== "Filled") throw new Error(`quote refused: ${JSON.stringify(q)}`)
  return q
}

const built = async (r: TradeRequest): Promise<TradeBuiltView> => {
  const out = await run(trades.build(caller, r))
  if (out._tag === "Left") throw new Error(`${r.clientTradeId}: ${JSON.stringify(out.left)}`)
  if (isApproval(out.right)) throw new Error(`${r.clientTradeId}: answered a token approval, not the trade`)
  return out.right
}

/** The relay's signature of a build (the imported wallet's signer authorizes the bytes). */
const relaySigned = async (b: TradeBuiltView, walletId: string, authorize?: (bytes: Uint8Array) => Promise<Uint8Array>) => {
  const tx = fromBase64(b.transaction)
  const signed = await Effect.runPromise(
    harness.service.signClaimed(principal, walletId, {
      claimId: b.signClaim.claimId,
      transaction: tx,
      ...(authorize !== undefined ? { authorizationSignature: await authorize(tx) } : {})
    })
  )
  return fromBase64(signed.signedTransaction)
}

beforeAll(async () => {
  harness = await startWalletHarness()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(
    await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true, ledger: { blockhashValiditySlots: 750 } }), scope)),
    SolanaLocalnet
  )
  ledger = net.ledger
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  await sqlRun(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.zipRight(
        sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'LINKED') ON CONFLICT DO NOTHING`,
        sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
            VALUES ('wh-linked', ${ACCOUNT}, 'https://example.com/hook', '["trade.executed"]'::jsonb, 'x', 'x', 'active', now())`
      )
    )
  )
  await newKey()
  // An imported wallet (payer linked): its key is ours too, to sign and broadcast ourselves.
  const seed = webcrypto.getRandomValues(new Uint8Array(32))
  const keyPair = await createKeyPairFromPrivateKeyBytes(seed, true)
  const walletAddress = await getAddressFromPublicKey(keyPair.publicKey)
  const importer: Principal = { ...principal, plan: "pro" }
  const init = await Effect.runPromise(harness.service.importInit(importer, "solana", walletAddress))
  const sealed = sealForImport(new Uint8Array(Buffer.from(init.encryptionPublicKey, "base64")), await exportSecretText("solana", seed))
  const signer = (await webcrypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair
  const spki = new Uint8Array(await webcrypto.subtle.exportKey("spki", signer.publicKey))
  const view = await Effect.runPromise(harness.service.importSubmit(importer, { ciphertext: sealed.ciphertext, encapsulatedKey: sealed.enc, signerSpki: spki }))
  imported = {
    id: view.id,
    address: walletAddress,
    keyPair,
    authorize: async (bytes) => new Uint8Array(await webcrypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signer.privateKey, bytes))
  }
  ledger.requestAirdrop(walletAddress, 100n * SOL)
  const t = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: KEY_PREFIX, label: "trade-tee" }))
  tee = { id: t.id, address: address(t.address) }
  ledger.requestAirdrop(tee.address, 100n * SOL)
  const c = await launchCurve(ledger, await devSigner(0), WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 400n * SOL })
  mint = c.mint.address
  curveAddress = c.addresses.curve
  trades = await Effect.runPromise(
    makeTrades({ solanaRpcUrl: net.rpcUrl, treasury: TREASURY_ADDRESS, pollIntervalMs: 20, confirmTimeoutMs: 15_000 }).pipe(
      Effect.provideService(WalletService, harness.service),
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(PriceSource, prices),
      Effect.provideService(SqlClient.SqlClient, harness.sql)
    )
  )
}, 90_000)

afterAll(async () => {
  clearInterval(ticker)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await harness?.close()
})

describe("linked payer (an imported wallet)", () => {
  it("build → relay sign → 50 concurrent submits: sent once, one trade executed to the quote's raw unit, trade.executed once", async () => {
    const amount = SOL / 2n
    const q = quoteNow(amount)
    const b = await built(request("lk-1", imported.id, amount))
    expect(b).toMatchObject({ status: "built", payer: "linked", wallet: imported.address, walletId: imported.id, expectedOut: q.amountOut.toString(), signature: "", replay: false })
    expect(await rowsOf("lk-1")).toEqual([{ state: "built", signature: "" }])
    // The spend is held at build.
    expect(await sqlRun(reservationState(tradeReservationId({ accountId: ACCOUNT, clientTradeId: "lk-1" })))).toBe("held")
    // A repeat build answers the stored one (same bytes, same claim), nothing new recorded.
    const again = await built(request("lk-1", imported.id, amount))
    expect(again).toMatchObject({ replay: true, transaction: b.transaction, signClaim: b.signClaim })
    const changed = await run(trades.build(caller, request("lk-1", imported.id, amount + 1n)))
    expect(changed._tag === "Left" && toApiError(changed.left).code).toBe("IDEMPOTENCY_CONFLICT")

    const signedTx = await relaySigned(b, imported.id, imported.authorize)
    const ata = ataOf(imported.address, mint)
    const held = tokenBalance(ledger, ata)
    const answers = await Promise.all(Array.from({ length: 50 }, () => run(trades.submitSigned(caller, { clientTradeId: "lk-1", signedTransaction: signedTx }))))
    const executed = answers.filter((a) => a._tag === "Right")
    // Every answer is the one trade (executed), or its in-flight refusal while the first settles.
    for (const a of answers) if (a._tag === "Left") expect(toApiError(a.left).code).toBe("IDEMPOTENCY_CONFLICT")
    expect(executed.length).toBeGreaterThan(0)
    const signatures = new Set(executed.map((a) => (a._tag === "Right" && !isApproval(a.right) ? a.right.signature : "")))
    expect(signatures.size).toBe(1)
    const [view] = executed.map((a) => (a._tag === "Right" ? a.right : undefined))
    expect(view).toMatchObject({ status: "executed", payer: "linked", amountOut: q.amountOut.toString(), expectedOut: q.amountOut.toString() })
    expect(tokenBalance(ledger, ata) - held).toBe(q.amountOut)
    expect(await rowsOf("lk-1")).toHaveLength(1)
    expect(await executedEvents("lk-1")).toBe(1)
    expect(await sqlRun(reservationState(tradeReservationId({ accountId: ACCOUNT, clientTradeId: "lk-1" })))).toBe("booked")
    // The claim is settled with the trade.
    const claim = await Effect.runPromise(harness.service.claimStatus(b.signClaim.claimId))
    expect(claim?.state).toBe("confirmed")
    // A later submit is the stored outcome; nothing is sent again.
    const replay = await run(trades.submitSigned(caller, { clientTradeId: "lk-1", signedTransaction: signedTx }))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ replay: true, status: "executed", signature: (view as { signature: string }).signature })
    expect(tokenBalance(ledger, ata) - held).toBe(q.amountOut)
    expect(await executedEvents("lk-1")).toBe(1)
  }, 120_000)

  it("a submit that is not the built transaction signed by its payer is refused and changes nothing", async () => {
    const b = await built(request("lk-2", imported.id, SOL / 10n))
    const unsigned = fromBase64(b.transaction)
    const refusedWith = async (bytes: Uint8Array) => {
      const r = await run(trades.submitSigned(caller, { clientTradeId: "lk-2", signedTransaction: bytes }))
      return r._tag === "Left" ? toApiError(r.left) : undefined
    }
    expect(await refusedWith(unsigned)).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 409, field: "signedTransaction" })
    // Another message, signed by the payer itself: not the build.
    const other = await built(request("lk-2b", imported.id, SOL / 9n))
    const otherSigned = await partiallySignTransaction([imported.keyPair], getTransactionDecoder().decode(fromBase64(other.transaction)))
    expect(await refusedWith(new Uint8Array(getTransactionEncoder().encode(otherSigned)))).toMatchObject({ code: "VALIDATION_FAILED", field: "signedTransaction" })
    // The built message with a forged signature in the payer's slot.
    const tx = getTransactionDecoder().decode(unsigned)
    const forged = { ...tx, signatures: { ...tx.signatures, [imported.address]: new Uint8Array(64).fill(7) } }
    expect(await refusedWith(new Uint8Array(getTransactionEncoder().encode(forged as typeof tx)))).toMatchObject({ code: "VALIDATION_FAILED" })
    expect(await rowsOf("lk-2")).toEqual([{ state: "built", signature: "" }])
    // An id never built.
    const unknown = await run(trades.submitSigned(caller, { clientTradeId: "never-built", signedTransaction: unsigned }))
    expect(unknown._tag === "Left" && toApiError(unknown.left)).toMatchObject({ code: "JOB_NOT_FOUND", httpStatus: 404 })
  }, 60_000)

  it("confirm: the caller signs with the wallet's own key and broadcasts; a signature over another message is refused; the right one records once", async () => {
    const amount = SOL / 4n
    const q = quoteNow(amount)
    const b = await built(request("lk-3", imported.id, amount))
    const signedTx = await partiallySignTransaction([imported.keyPair], getTransactionDecoder().decode(fromBase64(b.transaction)))
    const signature = getBase58Decoder().decode(signedTx.signatures[imported.address]!)
    // A signature by the payer over other bytes.
    const wrong = getBase58Decoder().decode(await signBytes(imported.keyPair.privateKey, new Uint8Array([1, 2, 3])))
    const refused = await run(trades.confirm(caller, { clientTradeId: "lk-3", signature: wrong }))
    expect(refused._tag === "Left" && toApiError(refused.left)).toMatchObject({ code: "VALIDATION_FAILED", httpStatus: 409 })
    expect(await rowsOf("lk-3")).toEqual([{ state: "built", signature: "" }])
    // Broadcast by the caller, straight to the node.
    const sent = ledger.submit(new Uint8Array(getTransactionEncoder().encode(signedTx)))
    expect(sent._tag).toBe("Landed")
    const confirmed = await Promise.all(Array.from({ length: 5 }, () => run(trades.confirm(caller, { clientTradeId: "lk-3", signature }))))
    const settled = confirmed.filter((c) => c._tag === "Right")
    expect(settled.length).toBeGreaterThan(0)
    for (const c of confirmed) if (c._tag === "Left") expect(toApiError(c.left).code).toBe("IDEMPOTENCY_CONFLICT")
    expect(settled[0]!._tag === "Right" && settled[0]!.right).toMatchObject({ status: "executed", signature, amountOut: q.amountOut.toString() })
    expect(await rowsOf("lk-3")).toEqual([{ state: "executed", signature }])
    expect(await executedEvents("lk-3")).toBe(1)
  }, 60_000)
})

describe("TEE payer and spend caps strict per rail", () => {
  it("a TEE wallet bound to the key trades through the relay", async () => {
    const amount = SOL / 5n
    const q = quoteNow(amount)
    const b = await built(request("tee-1", tee.id, amount, { payer: "tee" }))
    expect(b).toMatchObject({ status: "built", payer: "tee", wallet: tee.address })
    const signedTx = await relaySigned(b, tee.id)
    const out = await run(trades.submitSigned(caller, { clientTradeId: "tee-1", signedTransaction: signedTx }))
    expect(out._tag === "Right" && out.right).toMatchObject({ status: "executed", payer: "tee", amountOut: q.amountOut.toString() })
    expect(await executedEvents("tee-1")).toBe(1)
  }, 60_000)

  it("with no USD price the imported wallet's txLimit is advisory (it builds) and the TEE wallet's fails closed, recording nothing", async () => {
    await sqlRun(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE agent_keys SET tx_limit_usd_micros = 1000000000, tx_limit_reset = 'daily' WHERE id = ${principal.keyId ?? ""}`)
    )
    priced = false
    try {
      const linked = await run(trades.build(caller, request("cap-linked", imported.id, SOL / 10n)))
      expect(linked._tag === "Right" && linked.right.status).toBe("built")
      const teeBuild = await run(trades.build(caller, request("cap-tee", tee.id, SOL / 10n, { payer: "tee" })))
      expect(teeBuild._tag === "Left" && toApiError(teeBuild.left)).toMatchObject({ code: "KEY_LIMIT_REACHED", httpStatus: 403 })
      expect(await rowsOf("cap-tee")).toEqual([])
      expect(await sqlRun(reservationState(tradeReservationId({ accountId: ACCOUNT, clientTradeId: "cap-tee" })))).toBeUndefined()
    } finally {
      priced = true
    }
  }, 60_000)
})

/**
 * The linked rail through the route module over real HTTP (router, decoders, error table) and the
 * real service; every answer validated against the main OpenAPI document (`test/support/contract.ts`).
 */
describe("linked payer routes over HTTP, answers as the OpenAPI document says", () => {
  const http = tradeRoutesOverHttp({ accountId: ACCOUNT, keyId: principal.keyId, keyPrefix: KEY_PREFIX, scopes: principal.scopes }, () => ({ trades, sql: harness.sql }))
  const call = http.call
  beforeAll(http.open)
  afterAll(http.close)

  it("build (dry run, then built), a wrong submit, the relay-signed submit, a confirm of another signature", async () => {
    const body = { clientTradeId: "http-1", chain: "solana", mint, side: "buy", amountIn: String(SOL / 20n), payer: "linked", linkedWalletId: imported.id }
    const dry = await call("/api/v1/trade/agent/build", { ...body, dryRun: true })
    expect(dry).toMatchObject({ status: 200, body: { success: true, dryRun: true, payer: "linked", wallet: imported.address } })
    expect(await rowsOf("http-1")).toEqual([])
    // Not one-shot: /submit without the signed bytes names the payer.
    expect(await call("/api/v1/trade/agent/submit", body)).toMatchObject({ status: 400, body: { error: { code: "VALIDATION_FAILED", field: "payer" } } })
    const b = await call("/api/v1/trade/agent/build", body)
    expect(b).toMatchObject({ status: 200, body: { success: true, status: "built", payer: "linked", walletId: imported.id } })
    const wrong = await call("/api/v1/trade/agent/submit", { clientTradeId: "http-1", signedTransaction: b.body.transaction })
    expect(wrong).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED", field: "signedTransaction" } } })
    const signedTx = await relaySigned(b.body as TradeBuiltView, imported.id, imported.authorize)
    const submitted = await call("/api/v1/trade/agent/submit", { clientTradeId: "http-1", signedTransaction: Buffer.from(signedTx).toString("base64") })
    expect(submitted).toMatchObject({ status: 200, body: { success: true, status: "executed", payer: "linked", replay: false } })
    const other = await call("/api/v1/trade/agent/confirm", { clientTradeId: "http-1", signature: "5".repeat(87) })
    expect(other).toMatchObject({ status: 409, body: { error: { code: "VALIDATION_FAILED" } } })
    const same = await call("/api/v1/trade/agent/confirm", { clientTradeId: "http-1", signature: submitted.body.signature })
    expect(same).toMatchObject({ status: 200, body: { status: "executed", replay: true } })
    expect(await call("/api/v1/trade/agent/confirm", { clientTradeId: "http-none", signature: submitted.body.signature })).toMatchObject({
      status: 404,
      body: { error: { code: "JOB_NOT_FOUND" } }
    })
    expect(await executedEvents("http-1")).toBe(1)
  }, 60_000)
})

