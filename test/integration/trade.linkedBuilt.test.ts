/**
 * A linked trade recorded `built` whose caller never comes back to `/submit` or `/confirm`
 * (issue 28; docs/decisions.md "A built trade its caller sent itself"), through `TradeService`
 * over the real wallet service (PGlite), the attempt runner and the Solana localnet's real RPC:
 * - the caller signs the built transaction with the wallet's own key and sends it straight to the
 *   localnet's RPC: the watch pass finds it from the chain (the payer's signatures, the built
 *   message's hash) once its blockhash expired and settles it executed exactly like a confirmed
 *   trade: one `trade.executed`, the fee once, the hold booked; the 30-minute hold sweep does not
 *   release the hold of the built trade before that, and the account's transactions list it only
 *   once it was found;
 * - a build never sent: the watch pass leaves it alone while its blockhash is valid, then settles
 *   it failed `NEVER_LANDED` with its hold released and no event; a late submit is refused and
 *   sends nothing;
 * - two processes' watch passes and the caller's own confirm, racing over one self-sent build:
 *   one trade, one `trade.executed`, the hold booked once; a second build of the same wallet that
 *   the caller sent without preflight after the market moved lands reverted: found, it settles
 *   failed `SLIPPAGE_EXCEEDED` with its hold released and no event.
 * Slots are driven by hand, so a blockhash expires exactly when the test says.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  type Address,
  createKeyPairFromPrivateKeyBytes,
  createSolanaRpc,
  getAddressFromPublicKey,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  type Base64EncodedWireTransaction,
  createSignerFromKeyPair,
  generateKeyPairSigner,
  signTransactionMessageWithSigners,
  getTransactionDecoder,
  partiallySignTransaction
} from "@solana/kit"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { webcrypto } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { toApiError } from "../../api/ErrorTable.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { buildTransactionMessage } from "../../src/chain/solana/client/Transactions.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf, launchCurve, readCurve, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { curveParamsOf, curveStateOf } from "../../src/chain/solana/program/accounts/Curve.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { insertKey } from "../../src/services/keys/KeyRepository.js"
import { fixedPriceSource, PriceSource } from "../../src/services/prices/PriceSource.js"
import { reservationState, sweep } from "../../src/services/spend/SpendStore.js"
import { makeAgentTransactions } from "../../src/services/trade/AgentTransactions.js"
import { type TradeCaller, type TradeRequest, type TradeServiceShape, make as makeTrades } from "../../src/services/trade/TradeService.js"
import { tradeReservationId } from "../../src/services/trade/TradeStore.js"
import { isApproval, type TradeBuiltView } from "../../src/services/trade/TradeViews.js"
import { quoteVenue } from "../../src/services/trade/VenueQuote.js"
import { exportSecretText } from "../../src/services/wallets/ChainKeys.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import { eventually } from "../support/eventually.js"
import { sealForImport } from "../support/hpkeSealer.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { swapKey } from "../support/tradeRows.js"

const SOL = 1_000_000_000n
const ACCOUNT = "acct-a"
const KEY_PREFIX = "a1aaaaaa"
/** Past a blockhash's last valid height by more than the finalization lag (32): it provably never lands. */
const EXPIRE_SLOTS = 150 + 32 + 5

let harness: WalletHarness
let ledger: Ledger
let rpcUrl: string
let scope: Scope.CloseableScope
let mint: Address
let curveAddress: Address
let imported: { id: string; address: Address; keyPair: webcrypto.CryptoKeyPair; authorize: (bytes: Uint8Array) => Promise<Uint8Array> }
/** Two engine processes over one database (each its own runner and leases). */
let a: TradeServiceShape
let b: TradeServiceShape

const principal = principals["key-a1"] as Principal
const caller: TradeCaller = { accountId: ACCOUNT, keyId: principal.keyId, keyPrefix: KEY_PREFIX, embeddedWallet: "denied", planFeeBps: 25n, referred: false, principal }

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))
const sqlRun = <A>(e: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, harness.sql) as Effect.Effect<A>)
const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"))
const holdOf = (clientTradeId: string) => sqlRun(reservationState(tradeReservationId({ accountId: ACCOUNT, clientTradeId })))

const request = (clientTradeId: string, amountInRaw: bigint): TradeRequest => ({
  clientTradeId,
  chain: "solana",
  mint,
  side: "buy",
  amountInRaw,
  slippageBps: 0,
  payer: "linked",
  linkedWalletId: imported.id
})

const rowOf = (clientTradeId: string) =>
  sqlRun(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ state: string; signature: string; error_code: string | null; amount_out_raw: string | null }>`
        SELECT state, signature, error_code, amount_out_raw FROM agent_trades WHERE client_trade_id = ${clientTradeId}`
    )
  )
const executedEvents = (clientTradeId: string) =>
  sqlRun(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = ${ACCOUNT} AND event = 'trade.executed' AND data->>'clientTradeId' = ${clientTradeId}`
    )
  ).then((r) => r[0]?.n ?? 0)
const feeTotal = () =>
  sqlRun(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ raw: string | null }>`SELECT sum(fee_raw_sum)::text AS raw FROM account_fee_totals WHERE account_id = ${ACCOUNT}`)
  ).then((r) => BigInt(r[0]?.raw ?? "0"))
const listed = async (clientTradeId: string) => {
  const page = await Effect.runPromise(makeAgentTransactions(harness.sql).list(ACCOUNT, { kind: "trade", limit: 100 }))
  return page.transactions.filter((t) => t.id === clientTradeId)
}

const quoteNow = (amount: bigint) => {
  const c = readCurve(ledger, curveAddress)
  const q = quoteVenue({ _tag: "Curve", params: curveParamsOf(c), state: curveStateOf(c), creatorShareBps: BigInt(c.creatorShareBps) }, "buy", amount)
  if (q._tag !== "Filled") throw new Error(`quote refused: ${JSON.stringify(q)}`)
  return q
}

const built = async (r: TradeRequest): Promise<TradeBuiltView> => {
  const out = await run(a.build(caller, r))
  if (out._tag === "Left") throw new Error(`${r.clientTradeId}: ${JSON.stringify(out.left)}`)
  if (isApproval(out.right)) throw new Error(`${r.clientTradeId}: answered a token approval, not the trade`)
  return out.right
}

/** The caller's own signature and broadcast, straight to the localnet's JSON-RPC (not through the engine). */
const signAndSendOurselves = async (view: TradeBuiltView, skipPreflight = false): Promise<string> => {
  const signed = await partiallySignTransaction([imported.keyPair], getTransactionDecoder().decode(fromBase64(view.transaction)))
  const signature = await createSolanaRpc(rpcUrl)
    .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64", preflightCommitment: "confirmed", skipPreflight })
    .send()
  expect(signature).toBe(getBase58Decoder().decode(signed.signatures[imported.address]!))
  return signature
}

/** Moves all of the imported wallet's lamports to a fresh address (signed with its own key): it cannot pay a fee until funded again. */
const drainWallet = async (): Promise<void> => {
  const rpc = createSolanaRpc(rpcUrl)
  const { value: lifetime } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
  const sink = await generateKeyPairSigner()
  const signer = await createSignerFromKeyPair(imported.keyPair)
  const message = buildTransactionMessage({
    feePayer: signer,
    lifetime,
    instructions: [getTransferSolInstruction({ from: signer, to: sink.address, lamports: ledger.getBalance(imported.address) - 5_000n })]
  })
  const tx = await signTransactionMessageWithSigners(message)
  await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), { encoding: "base64", preflightCommitment: "confirmed" }).send()
  ledger.advanceSlots(1)
  expect(ledger.getBalance(imported.address)).toBe(0n)
}

/** The sign relay's signature of the build (the imported wallet's signer authorizes the bytes), broadcast by the caller itself, never submitted. */
const relaySignAndSendOurselves = async (view: TradeBuiltView): Promise<string> => {
  const tx = fromBase64(view.transaction)
  const signed = await Effect.runPromise(
    harness.service.signClaimed(principal, imported.id, { claimId: view.signClaim.claimId, transaction: tx, authorizationSignature: await imported.authorize(tx) })
  )
  return createSolanaRpc(rpcUrl)
    .sendTransaction(signed.signedTransaction as Base64EncodedWireTransaction, { encoding: "base64", preflightCommitment: "confirmed" })
    .send()
}

const claimState = async (view: TradeBuiltView) => (await Effect.runPromise(harness.service.claimStatus(view.signClaim.claimId)))?.state

const makeService = (confirmTimeoutMs = 15_000) =>
  Effect.runPromise(
    makeTrades({ solanaRpcUrl: rpcUrl, treasury: TREASURY_ADDRESS, pollIntervalMs: 20, confirmTimeoutMs }).pipe(
      Effect.provideService(WalletService, harness.service),
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(PriceSource, fixedPriceSource({ sol: "150" })),
      Effect.provideService(SqlClient.SqlClient, harness.sql)
    )
  )

beforeAll(async () => {
  harness = await startWalletHarness()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true }), scope)), SolanaLocalnet)
  ledger = net.ledger
  rpcUrl = net.rpcUrl
  await sqlRun(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.zipRight(
        sql`INSERT INTO accounts (id, plan, referral_code) VALUES (${ACCOUNT}, 'max', 'BUILT') ON CONFLICT DO NOTHING`,
        sql`INSERT INTO webhook_endpoints (id, account_id, url, events, secret_sealed, secret_prefix, status, created_at)
            VALUES ('wh-built', ${ACCOUNT}, 'https://example.com/hook', '["trade.executed"]'::jsonb, 'x', 'x', 'active', now())`
      )
    )
  )
  await sqlRun(
    insertKey(
      swapKey({ id: principal.keyId ?? "", prefix: KEY_PREFIX, accountId: ACCOUNT, hash: "hash-built", embeddedWallet: "denied" }),
      Date.now()
    )
  )
  // An imported wallet (payer linked) whose key the caller holds: it signs and broadcasts itself.
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
  const c = await launchCurve(ledger, await devSigner(0), WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 400n * SOL })
  mint = c.mint.address
  curveAddress = c.addresses.curve
  ledger.advanceSlots(2)
  a = await makeService()
  b = await makeService()
}, 90_000)

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await harness?.close()
})

describe("a built trade whose caller never submits or confirms", () => {
  it("signed and sent by the caller straight to the node: found from the chain and settled executed once, the hold booked (never swept while built)", async () => {
    const amount = SOL / 3n
    const q = quoteNow(amount)
    const view = await built(request("self-1", amount))
    expect(await holdOf("self-1")).toBe("held")
    // Not a movement yet: nothing was sent that the service knows of.
    expect(await listed("self-1")).toEqual([])
    const ata = ataOf(imported.address, mint)
    const before = tokenBalance(ledger, ata)
    const fees = await feeTotal()
    const signature = await signAndSendOurselves(view)
    ledger.advanceSlots(2)
    expect(tokenBalance(ledger, ata) - before).toBe(q.amountOut)

    // While the blockhash is valid the watch decides nothing (a confirm may still come).
    expect(await Effect.runPromise(a.watchBuilt)).toBe(0)
    expect(await rowOf("self-1")).toMatchObject([{ state: "built", signature: "" }])
    // The hold's 30 minutes are up: the sweep still keeps it, the trade is built and may have landed.
    await sqlRun(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE spend_reservations SET expires_at = now() - interval '1 minute' WHERE id = ${tradeReservationId({ accountId: ACCOUNT, clientTradeId: "self-1" })}`))
    await sqlRun(sweep())
    expect(await holdOf("self-1")).toBe("held")

    ledger.advanceSlots(EXPIRE_SLOTS)
    expect(await Effect.runPromise(a.watchBuilt)).toBe(1)
    expect(await rowOf("self-1")).toEqual([{ state: "executed", signature, error_code: null, amount_out_raw: q.amountOut.toString() }])
    expect(await executedEvents("self-1")).toBe(1)
    expect(await holdOf("self-1")).toBe("booked")
    expect((await feeTotal()) - fees).toBe(BigInt(view.fee.feeRaw))
    const claim = await Effect.runPromise(harness.service.claimStatus(view.signClaim.claimId))
    expect(claim?.state).not.toBe("confirmed") // the claim was never used: the caller signed with its own key
    expect(await listed("self-1")).toMatchObject([{ status: "executed", signature }])
    // Read, repeated and watched again: the same trade, nothing recorded twice.
    const read = await run(a.trade(caller, "self-1"))
    expect(read._tag === "Right" && read.right).toMatchObject({ status: "executed", signature, amountOut: q.amountOut.toString() })
    const confirm = await run(a.confirm(caller, { clientTradeId: "self-1", signature }))
    expect(confirm._tag === "Right" && confirm.right).toMatchObject({ status: "executed", replay: true })
    expect(await Effect.runPromise(b.watchBuilt)).toBe(0)
    expect(await executedEvents("self-1")).toBe(1)
    expect((await feeTotal()) - fees).toBe(BigInt(view.fee.feeRaw))
  }, 120_000)

  it("signed by the sign relay and broadcast by the caller, never submitted: the watch settles the trade executed and the claim confirmed; a relay-signed build never broadcast fails and its claim with it", async () => {
    const sent = await built(request("relay-1", SOL / 7n))
    const unsent = await built(request("relay-2", SOL / 9n))
    const signature = await relaySignAndSendOurselves(sent)
    await Effect.runPromise(harness.service.signClaimed(principal, imported.id, { claimId: unsent.signClaim.claimId, transaction: fromBase64(unsent.transaction), authorizationSignature: await imported.authorize(fromBase64(unsent.transaction)) }))
    expect(await claimState(sent)).toBe("signed")
    expect(await claimState(unsent)).toBe("signed")
    ledger.advanceSlots(2)
    ledger.advanceSlots(EXPIRE_SLOTS)
    expect(await Effect.runPromise(a.watchBuilt)).toBe(2)
    expect(await rowOf("relay-1")).toMatchObject([{ state: "executed", signature }])
    expect(await rowOf("relay-2")).toMatchObject([{ state: "failed", error_code: "never_landed" }])
    expect(await claimState(sent)).toBe("confirmed")
    expect(await claimState(unsent)).toBe("failed")
    // A claim the relay never used (the caller signed with its own key) is not settled by the trade: it only expires.
    const own = await built(request("own-1", SOL / 11n))
    ledger.advanceSlots(EXPIRE_SLOTS)
    expect(await Effect.runPromise(b.watchBuilt)).toBe(1)
    expect(await rowOf("own-1")).toMatchObject([{ state: "failed", error_code: "never_landed" }])
    expect(await claimState(own)).toBe("open")
  }, 120_000)

  it("a signed build the node refuses at preflight (the wallet is short now) decides nothing while its blockhash is valid: the caller broadcasts the same bytes once funded, and the trade settles executed once, its hold booked", async () => {
    const fast = await makeService(300)
    const amount = SOL / 13n
    const q = quoteNow(amount)
    const view = await built(request("short-1", amount))
    const signed = await partiallySignTransaction([imported.keyPair], getTransactionDecoder().decode(fromBase64(view.transaction)))
    const wire = getBase64EncodedWireTransaction(signed)
    await drainWallet()
    try {
      const refused = await run(fast.submitSigned(caller, { clientTradeId: "short-1", signedTransaction: new Uint8Array(Buffer.from(wire, "base64")) }))
      // Not failed: the caller holds bytes that can still land. In flight, the hold kept.
      expect(refused._tag === "Left" && refused.left).toMatchObject({ _tag: "TradeError", reason: "pending" })
      expect(refused._tag === "Left" && toApiError(refused.left).code).toBe("IDEMPOTENCY_CONFLICT")
      expect(await rowOf("short-1")).toMatchObject([{ state: "sending" }])
      expect(await holdOf("short-1")).toBe("held")
      // Funded again, the caller broadcasts the very same bytes: they land, and the trade with them.
      ledger.requestAirdrop(imported.address, 10n * SOL)
      ledger.advanceSlots(1)
      const signature = await createSolanaRpc(rpcUrl).sendTransaction(wire, { encoding: "base64", preflightCommitment: "confirmed" }).send()
      ledger.advanceSlots(2)
      // Another process's recovery pass drives it from the chain.
      await Effect.runPromise(b.resumeInFlight)
      await eventually(async () => (await rowOf("short-1"))[0]?.state === "executed", { what: "short-1 settled from the chain", deadlineMs: 20_000 })
      expect(await rowOf("short-1")).toEqual([{ state: "executed", signature, error_code: null, amount_out_raw: q.amountOut.toString() }])
      expect(await executedEvents("short-1")).toBe(1)
      expect(await holdOf("short-1")).toBe("booked")
    } finally {
      // The later tests' wallet: funded as before, whatever happened here.
      ledger.requestAirdrop(imported.address, 100n * SOL)
      ledger.advanceSlots(1)
    }
  }, 120_000)

  it("never sent: left alone while its blockhash is valid, then failed NEVER_LANDED with its hold released and no event; a late submit sends nothing", async () => {
    const view = await built(request("unsent-1", SOL / 10n))
    ledger.advanceSlots(100)
    expect(await Effect.runPromise(a.watchBuilt)).toBe(0)
    expect(await rowOf("unsent-1")).toMatchObject([{ state: "built" }])
    expect(await holdOf("unsent-1")).toBe("held")
    ledger.advanceSlots(EXPIRE_SLOTS)
    expect(await Effect.runPromise(a.watchBuilt)).toBe(1)
    expect(await rowOf("unsent-1")).toEqual([{ state: "failed", signature: "", error_code: "never_landed", amount_out_raw: null }])
    expect(await holdOf("unsent-1")).toBe("released")
    expect(await executedEvents("unsent-1")).toBe(0)
    expect(await listed("unsent-1")).toEqual([])
    // The caller comes back with the signed bytes: the trade stands failed, nothing is sent.
    const signed = await partiallySignTransaction([imported.keyPair], getTransactionDecoder().decode(fromBase64(view.transaction)))
    const late = await run(a.submitSigned(caller, { clientTradeId: "unsent-1", signedTransaction: new Uint8Array(Buffer.from(getBase64EncodedWireTransaction(signed), "base64")) }))
    expect(late._tag === "Left" && toApiError(late.left)).toMatchObject({ code: "SWAP_FAILED" })
    const lateConfirm = await run(a.confirm(caller, { clientTradeId: "unsent-1", signature: getBase58Decoder().decode(signed.signatures[imported.address]!) }))
    expect(lateConfirm._tag === "Left" && toApiError(lateConfirm.left)).toMatchObject({ code: "SWAP_FAILED" })
    expect(ledger.getTransaction(getBase58Decoder().decode(signed.signatures[imported.address]!))).toBeUndefined()
    expect(await Effect.runPromise(b.watchBuilt)).toBe(0)
    expect(await rowOf("unsent-1")).toMatchObject([{ state: "failed", error_code: "never_landed" }])
  }, 120_000)

  it("two processes' watch passes and the caller's own confirm racing over one self-sent build: one trade, one trade.executed, the hold booked; a reverted one fails", async () => {
    const amount = SOL / 7n
    const q = quoteNow(amount)
    const view = await built(request("race-1", amount))
    // Another build of the same wallet at the same price, sent after it without preflight: the
    // first moved the market past its minimum out, so it lands reverted (the payer's newest
    // signature, which the search for race-1 passes over by its memo).
    const other = await built(request("race-2", SOL / 11n))
    const signature = await signAndSendOurselves(view)
    ledger.advanceSlots(1)
    const otherSignature = await signAndSendOurselves(other, true)
    ledger.advanceSlots(1)
    expect(ledger.getTransaction(otherSignature)?.err).not.toBeNull()
    ledger.advanceSlots(EXPIRE_SLOTS)
    const fees = await feeTotal()
    const [wa, wb, confirmed] = await Promise.all([
      Effect.runPromise(a.watchBuilt),
      Effect.runPromise(b.watchBuilt),
      run(a.confirm(caller, { clientTradeId: "race-1", signature }))
    ])
    // Each of the two builds moved once, by whichever got there first.
    expect(wa + wb).toBeLessThanOrEqual(2)
    if (confirmed._tag === "Left") expect(toApiError(confirmed.left).code).toBe("IDEMPOTENCY_CONFLICT")
    else expect(confirmed.right).toMatchObject({ status: "executed", signature })
    expect(await rowOf("race-1")).toEqual([{ state: "executed", signature, error_code: null, amount_out_raw: q.amountOut.toString() }])
    expect(await rowOf("race-2")).toEqual([{ state: "failed", signature: otherSignature, error_code: "slippage_exceeded", amount_out_raw: null }])
    expect(await executedEvents("race-1")).toBe(1)
    expect(await executedEvents("race-2")).toBe(0)
    expect(await holdOf("race-1")).toBe("booked")
    expect(await holdOf("race-2")).toBe("released")
    expect((await feeTotal()) - fees).toBe(BigInt(view.fee.feeRaw))
  }, 120_000)
})
