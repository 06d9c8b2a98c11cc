/**
 * The Solana localnet over real sockets, through the clients production uses: `@solana/kit`'s
 * `createSolanaRpc` against the JSON-RPC server (airdrop, a signed svc-curve create + buy,
 * confirmation by `getSignatureStatuses`, account reads, the preflight failure shape and the
 * other refusals), raw HTTP for what kit does not send (base58 transactions, batches, oversized
 * bodies), and the block engine's all-or-none bundles. Slots are driven by hand
 * (`manualSlots`), except in the test of the layer's own clock.
 */
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Encoder,
  isSolanaError,
  type KeyPairSigner,
  lamports,
  type Rpc,
  signature as asSignature,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  type SolanaRpcApi,
  type Base64EncodedWireTransaction
} from "@solana/kit"
import { getAddMemoInstruction } from "@solana-program/memo"
import { Context, Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { initialState, quoteBuy } from "../../src/domain/CurveMath.js"
import { findCurveAddresses, getBuyInstruction, getCreateCurveInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction, getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { causedBy } from "../../src/chain/solana/client/NodeRefusals.js"
import { makeTransactionWatch } from "../../src/chain/solana/client/TransactionWatch.js"
import { buildAndSignTransaction, type SignedTransaction } from "../../src/chain/solana/client/Transactions.js"
import { minimumBalanceForRentExemption } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf } from "../../src/chain/solana/localnet/testkit.js"
import { curveParamsOf, curveStateOf, decodeCurve } from "../../src/chain/solana/program/accounts/Curve.js"
import { SvcCurveError } from "../../src/chain/solana/program/Errors.js"
import { curveEventsFromLogs } from "../../src/chain/solana/program/Events.js"
import { SVC_CURVE_PROGRAM_ID, USDC_MINT_ADDRESS, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { decodeReward, REWARD_ACCOUNT_SIZE } from "../../src/chain/solana/program/staking/Accounts.js"
import { rewardFiltersOf } from "../../src/chain/solana/program/staking/Rewards.js"
import { eventually } from "../support/eventually.js"

const SOL = 1_000_000_000n
const TX_FEE = 5_000n

interface RpcResponse {
  readonly jsonrpc: "2.0"
  readonly id: number | string | null
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown }
}

const post = async (url: string, body: unknown): Promise<{ status: number; json: unknown }> => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text) }
}

const call = async (url: string, method: string, params: ReadonlyArray<unknown> = []): Promise<RpcResponse> =>
  (await post(url, { jsonrpc: "2.0", id: 1, method, params })).json as RpcResponse

const base58 = getBase58Decoder()
const base64Encoder = getBase64Encoder()

let runtime: ManagedRuntime.ManagedRuntime<SolanaLocalnet, unknown>
let net: SolanaLocalnetShape
let rpc: Rpc<SolanaRpcApi>

beforeAll(async () => {
  runtime = ManagedRuntime.make(SolanaLocalnet.layer({ manualSlots: true, ledger: { finalizationLagSlots: 2 } }))
  net = await runtime.runPromise(SolanaLocalnet)
  rpc = createSolanaRpc(net.rpcUrl)
})

afterAll(async () => {
  await runtime.dispose()
})

const blockhash = async () => (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value

const sign = async (payer: KeyPairSigner, instructions: Parameters<typeof buildAndSignTransaction>[0]["instructions"]): Promise<SignedTransaction> =>
  buildAndSignTransaction({ feePayer: payer, lifetime: await blockhash(), instructions, computeUnitLimit: 400_000 })

const statusOf = async (sig: string) =>
  (await rpc.getSignatureStatuses([asSignature(sig)], { searchTransactionHistory: true }).send()).value[0] ?? null

const funded = async (sol: bigint): Promise<KeyPairSigner> => {
  const signer = await generateKeyPairSigner()
  const sig = await rpc.requestAirdrop(signer.address, lamports(sol * SOL)).send()
  await eventually(async () => ((await statusOf(sig)) === null ? undefined : true), { what: "airdrop status", deadlineMs: 10_000, intervalMs: 5 })
  return signer
}

describe("Solana JSON-RPC through kit", () => {
  it("answers the node reads in Solana's shapes", async () => {
    expect(await rpc.getHealth().send()).toBe("ok")
    const version = await rpc.getVersion().send()
    expect(version["solana-core"]).toMatch(/^\d+\.\d+\.\d+$/)
    const ledger = net.ledger
    ledger.advanceSlots(3)
    expect(await rpc.getSlot({ commitment: "processed" }).send()).toBe(ledger.slot)
    expect(await rpc.getSlot({ commitment: "confirmed" }).send()).toBe(ledger.confirmedSlot)
    expect(await rpc.getSlot({ commitment: "finalized" }).send()).toBe(ledger.finalizedSlot)
    expect(await rpc.getBlockHeight({ commitment: "confirmed" }).send()).toBe(ledger.confirmedSlot)
    const lb = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()
    expect(lb.context.slot).toBe(ledger.confirmedSlot)
    expect(lb.value).toEqual({
      blockhash: ledger.latestBlockhash("confirmed").blockhash,
      lastValidBlockHeight: ledger.latestBlockhash("confirmed").lastValidBlockHeight
    })
    expect((await rpc.isBlockhashValid(lb.value.blockhash, { commitment: "processed" }).send()).value).toBe(true)
    expect((await rpc.isBlockhashValid(base58.decode(new Uint8Array(32).fill(7)) as never, {}).send()).value).toBe(false)
    expect(await rpc.getMinimumBalanceForRentExemption(165n).send()).toBe(minimumBalanceForRentExemption(165))
    const blockTime = await rpc.getBlockTime(ledger.confirmedSlot).send()
    expect(blockTime).toBe(BigInt(ledger.getBlock(ledger.confirmedSlot)!.blockTimeSec!))
  })

  it("airdrops, lands a signed create + buy, confirms it and reads the accounts", async () => {
    const ledger = net.ledger
    const creator = await funded(100n)
    expect((await rpc.getBalance(creator.address, { commitment: "processed" }).send()).value).toBe(100n * SOL)

    const mint = await generateKeyPairSigner()
    const virtualQuoteRaw = 30n * SOL
    const thresholdRaw = 85n * SOL
    const create = await getCreateCurveInstruction({
      creator,
      mint,
      quoteMint: WSOL_MINT_ADDRESS,
      virtualQuoteRaw,
      thresholdRaw,
      supplyRaw: 10n ** 15n,
      stakerAllocationBps: 50,
      mode: "open",
      creatorFeeBps: 0,
      name: "Kit Token",
      symbol: "KIT",
      uri: "https://example.com/kit.json"
    })
    const ata = ataOf(creator.address, mint.address)
    const amountIn = 2n * SOL
    const buy = await getBuyInstruction({ trader: creator, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: amountIn, minAmountOutRaw: 1n })
    const tx = await sign(creator, [create, getCreateAssociatedTokenInstruction({ payer: creator, ata, owner: creator.address, mint: mint.address }), buy])
    const sig = await rpc.sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send()
    expect(sig).toBe(tx.signature)

    const processed = await eventually(() => statusOf(sig).then((s) => s ?? undefined), { what: "processed status", deadlineMs: 10_000, intervalMs: 5 })
    expect(processed).toMatchObject({ slot: ledger.slot, confirmationStatus: "processed", err: null, status: { Ok: null }, confirmations: 0n })
    ledger.advanceSlot()
    expect(await statusOf(sig)).toMatchObject({ confirmationStatus: "confirmed", confirmations: 1n })
    ledger.advanceSlots(2)
    expect(await statusOf(sig)).toMatchObject({ confirmationStatus: "finalized", confirmations: null })

    // The curve account, read back through kit and decoded with our layout, matches the math.
    const addresses = await findCurveAddresses(mint.address)
    const info = await rpc.getAccountInfo(addresses.curve, { encoding: "base64", commitment: "confirmed" }).send()
    expect(info.value).toMatchObject({ owner: SVC_CURVE_PROGRAM_ID, executable: false, space: 376n, rentEpoch: (1n << 64n) - 1n })
    const curve = decodeCurve(new Uint8Array(base64Encoder.encode(info.value!.data[0])))!
    expect(curve.mint).toBe(mint.address)
    const params = curveParamsOf(curve)
    const quoted = quoteBuy(params, initialState(params), amountIn)
    if (quoted._tag !== "Filled") throw new Error("quote refused")
    const expected = { amountOutRaw: quoted.amountOut }
    expect(curveStateOf(curve)).toEqual(quoted.next)

    const balance = await rpc.getTokenAccountBalance(ata, { commitment: "confirmed" }).send()
    expect(balance.value).toMatchObject({ amount: expected.amountOutRaw.toString(), decimals: 6 })
    expect(balance.value.uiAmountString).toBe((Number(expected.amountOutRaw) / 1e6).toString())

    const many = await rpc.getMultipleAccounts([addresses.curve, mint.address, (await generateKeyPairSigner()).address], { encoding: "base64" }).send()
    expect(many.value.map((a) => a?.space ?? null)).toEqual([376n, 82n, null])

    // getTransaction: json and base64, and the version rule for v0 transactions.
    const json = await rpc.getTransaction(asSignature(sig), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send()
    expect(json).not.toBeNull()
    expect(json!.version).toBe(0)
    expect(json!.slot).toBe(processed.slot)
    expect(json!.blockTime).toBe(BigInt(ledger.getBlock(processed.slot)!.blockTimeSec!))
    expect(json!.meta!.err).toBeNull()
    expect(json!.meta!.fee).toBe(ledger.getTransaction(sig)!.fee)
    expect(json!.transaction.signatures).toEqual(ledger.getTransaction(sig)!.signatures)
    expect(json!.transaction.message.accountKeys).toEqual(ledger.getTransaction(sig)!.accountKeys)
    const events = curveEventsFromLogs(json!.meta!.logMessages ?? [])
    expect(events.map((e) => e.event.kind)).toEqual(["CurveCreated", "Trade"])
    expect(json!.meta!.postTokenBalances!.some((b) => b.owner === creator.address && b.uiTokenAmount.amount === expected.amountOutRaw.toString())).toBe(true)
    const b64 = await rpc.getTransaction(asSignature(sig), { encoding: "base64", maxSupportedTransactionVersion: 0 }).send()
    expect(b64!.transaction).toEqual([tx.base64, "base64"])
    await expect(rpc.getTransaction(asSignature(sig), { encoding: "json" }).send()).rejects.toSatisfy((e: unknown) =>
      isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION)
    )
  })

  it("a failing preflight is -32002 with the simulation's logs, and nothing lands", async () => {
    const ledger = net.ledger
    const trader = await funded(10n)
    const creator = await funded(10n)
    const mint = await generateKeyPairSigner()
    const create = await getCreateCurveInstruction({
      creator,
      mint,
      quoteMint: WSOL_MINT_ADDRESS,
      virtualQuoteRaw: 30n * SOL,
      thresholdRaw: 85n * SOL,
      supplyRaw: 10n ** 15n,
      stakerAllocationBps: 50,
      mode: "open",
      creatorFeeBps: 0,
      name: "Slip",
      symbol: "SLIP",
      uri: ""
    })
    const created = await sign(creator, [create])
    await rpc.sendTransaction(created.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send()
    const ata = ataOf(trader.address, mint.address)
    const greedy = await sign(trader, [
      getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint: mint.address }),
      await getBuyInstruction({ trader, mint: mint.address, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: SOL, minAmountOutRaw: 10n ** 15n })
    ])
    const before = ledger.getBalance(trader.address)
    const error = await rpc
      .sendTransaction(greedy.base64 as Base64EncodedWireTransaction, { encoding: "base64" })
      .send()
      .then(() => undefined, (e: unknown) => e)
    expect(isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)).toBe(true)
    if (!isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) return
    expect(error.context.logs).toContain(`Program ${SVC_CURVE_PROGRAM_ID} failed: custom program error: 0x${SvcCurveError.SlippageExceeded.toString(16)}`)
    expect(error.context.unitsConsumed).toBeGreaterThan(0n)
    expect(error.cause).toBeDefined()
    expect(ledger.getBalance(trader.address)).toBe(before)
    expect(await statusOf(greedy.signature)).toBeNull()

    // The raw error object, as a validator writes it.
    const raw = await call(net.rpcUrl, "sendTransaction", [greedy.base64, { encoding: "base64" }])
    expect(raw.error).toMatchObject({
      code: -32002,
      message: `Transaction simulation failed: Error processing Instruction 1: custom program error: 0x${SvcCurveError.SlippageExceeded.toString(16)}`,
      data: { err: { InstructionError: [1, { Custom: SvcCurveError.SlippageExceeded }] }, accounts: null, returnData: null }
    })

    // skipPreflight sends it anyway: it lands failed, fee charged, status carries the error.
    const sig = await rpc.sendTransaction(greedy.base64 as Base64EncodedWireTransaction, { encoding: "base64", skipPreflight: true }).send()
    const status = await eventually(() => statusOf(sig).then((s) => s ?? undefined), { what: "failed status", deadlineMs: 10_000, intervalMs: 5 })
    // kit reads every JSON integer as a bigint.
    expect(status.err).toEqual({ InstructionError: [1n, { Custom: BigInt(SvcCurveError.SlippageExceeded) }] })
    expect(ledger.getBalance(trader.address)).toBe(before - TX_FEE)
  })

  it("refuses a bad signature (-32003), bad params (-32602) and unknown methods (-32601)", async () => {
    const payer = await funded(1n)
    const tx = await sign(payer, [getTransferSolInstruction({ from: payer, to: (await generateKeyPairSigner()).address, lamports: 1_000_000n })])
    const forged = tx.wireBytes.slice()
    forged[1] = forged[1]! ^ 0xff // inside the first signature
    const forgedB64 = Buffer.from(forged).toString("base64")
    await expect(rpc.sendTransaction(forgedB64 as Base64EncodedWireTransaction, { encoding: "base64" }).send()).rejects.toSatisfy((e: unknown) =>
      isSolanaError(e, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)
    )
    await expect(rpc.getBalance("not-an-address" as Address).send()).rejects.toSatisfy((e: unknown) =>
      isSolanaError(e, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)
    )
    const unknown = await call(net.rpcUrl, "getEverything")
    expect(unknown.error).toEqual({ code: -32601, message: "Method not found" })
    const garbage = await call(net.rpcUrl, "sendTransaction", ["!!!", { encoding: "base64" }])
    expect(garbage.error?.code).toBe(-32602)
    const tooMany = await call(net.rpcUrl, "getMultipleAccounts", [Array.from({ length: 101 }, () => payer.address)])
    expect(tooMany.error).toEqual({ code: -32602, message: "Too many inputs provided; max 100" })
  })

  it("accepts base58 transactions (the default encoding), batches, and bounds the body and the batch", async () => {
    const payer = await funded(1n)
    const to = (await generateKeyPairSigner()).address
    const tx = await sign(payer, [getTransferSolInstruction({ from: payer, to, lamports: 2_000_000n })])
    const sent = await call(net.rpcUrl, "sendTransaction", [base58.decode(tx.wireBytes)])
    expect(sent.result).toBe(tx.signature)
    expect(net.ledger.getBalance(to)).toBe(2_000_000n)

    const batch = await post(net.rpcUrl, [
      { jsonrpc: "2.0", id: 1, method: "getBalance", params: [to, { commitment: "processed" }] },
      { jsonrpc: "2.0", id: "b", method: "getHealth" },
      { jsonrpc: "2.0", method: "getHealth" } // a notification: no answer
    ])
    expect(batch.json).toEqual([
      { jsonrpc: "2.0", id: 1, result: { context: { slot: Number(net.ledger.slot), apiVersion: "2.2.0" }, value: 2_000_000 } },
      { jsonrpc: "2.0", id: "b", result: "ok" }
    ])
    const big = await post(net.rpcUrl, Array.from({ length: 101 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "getHealth" })))
    expect(big.json).toMatchObject({ error: { code: -32600 } })
    const empty = await post(net.rpcUrl, [])
    expect(empty.json).toMatchObject({ error: { code: -32600 } })
    const parse = await post(net.rpcUrl, "{nope")
    expect(parse.json).toEqual({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null })
    const huge = await post(net.rpcUrl, { jsonrpc: "2.0", id: 1, method: "getHealth", params: ["x".repeat(1024 * 1024 + 1)] })
    expect(huge.status).toBe(413)
    expect(await rpc.getHealth().send()).toBe("ok")
  })

  it("getProgramAccounts filters by owner program, size and memcmp, and bounds the filters", async () => {
    const a = (await generateKeyPairSigner()).address
    const b = (await generateKeyPairSigner()).address
    for (const owner of [a, a, b]) net.ledger.distributeStakingReward(owner, USDC_MINT_ADDRESS, 5n)
    const [programId, filters] = rewardFiltersOf(a)
    const memcmp = filters.flatMap((f) => ("memcmp" in f ? [{ memcmp: { offset: BigInt(f.memcmp.offset), bytes: a as never, encoding: "base58" as const } }] : []))
    const found = await rpc
      .getProgramAccounts(programId, { encoding: "base64", filters: [{ dataSize: BigInt(REWARD_ACCOUNT_SIZE) }, ...memcmp] })
      .send()
    const rewards = found.map((f) => decodeReward(Buffer.from(f.account.data[0], "base64"))!)
    expect(rewards.map((r) => r.owner)).toEqual([a, a])
    expect([...found.map((f) => f.pubkey)].sort()).toEqual(found.map((f) => f.pubkey))
    const all = await rpc.getProgramAccounts(programId, { encoding: "base64", filters: [{ dataSize: BigInt(REWARD_ACCOUNT_SIZE) }] }).send()
    expect(all.length).toBeGreaterThanOrEqual(3)
    const five = await call(net.rpcUrl, "getProgramAccounts", [programId, { filters: Array.from({ length: 5 }, () => ({ dataSize: 1 })) }])
    expect(five.error?.code).toBe(-32602)
  })

  it("signature statuses come from the recent cache unless history search is asked", async () => {
    const payer = await funded(1n)
    const tx = await sign(payer, [getTransferSolInstruction({ from: payer, to: (await generateKeyPairSigner()).address, lamports: 1_000_000n })])
    await rpc.sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send()
    net.ledger.advanceSlots(301)
    expect((await rpc.getSignatureStatuses([asSignature(tx.signature)]).send()).value).toEqual([null])
    expect((await rpc.getSignatureStatuses([asSignature(tx.signature)], { searchTransactionHistory: true }).send()).value[0]).toMatchObject({
      confirmationStatus: "finalized"
    })
  })

  it("bytes sent again are AlreadyProcessed: the node refuses them, the engine's send does not (their status decides); a real refusal stays one", async () => {
    const payer = await funded(1n)
    const to = (await generateKeyPairSigner()).address
    const tx = await sign(payer, [getTransferSolInstruction({ from: payer, to, lamports: 1_000_000n })])
    await rpc.sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send()
    const again = await rpc.sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send().then(
      () => undefined,
      (e: unknown) => e
    )
    expect(causedBy(again, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)).toBe(true)
    const watch = makeTransactionWatch(net.rpcUrl, (m) => new Error(m))
    expect((await Effect.runPromise(Effect.either(watch.send(tx.base64))))._tag).toBe("Right")
    net.ledger.advanceSlots(2)
    const height = await rpc.getBlockHeight({ commitment: "confirmed" }).send()
    expect(await Effect.runPromise(watch.observe(tx.signature, height + 100n))).toEqual({ outcome: "landed" })
    expect((await rpc.getBalance(to, { commitment: "confirmed" }).send()).value).toBe(1_000_000n)
    // A transaction the chain would refuse is still a refusal.
    const poor = await generateKeyPairSigner()
    const refused = await Effect.runPromise(Effect.either(watch.send((await sign(poor, [getTransferSolInstruction({ from: poor, to, lamports: 1n })])).base64)))
    expect(refused._tag).toBe("Left")
    expect(causedBy(refused, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)).toBe(false)
    // The lowest slot the node still has history for (what decides whether "never landed" can be told).
    expect(await rpc.minimumLedgerSlot().send()).toBe(net.ledger.oldestHistorySlot)
  })

  it("getSignaturesForAddress: the address's landed transactions newest first, paged by before/until, with their memos, up to the commitment", async () => {
    const payer = await funded(1n)
    const to = (await generateKeyPairSigner()).address
    const sent: string[] = []
    for (let i = 0; i < 3; i++) {
      const tx = await sign(payer, [getTransferSolInstruction({ from: payer, to, lamports: 1_000_000n + BigInt(i) }), getAddMemoInstruction({ memo: `pay ${i}` })])
      sent.push(await rpc.sendTransaction(tx.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send())
      net.ledger.advanceSlots(1)
    }
    // A fourth, still processed: not listed at confirmed.
    const open = await sign(payer, [getTransferSolInstruction({ from: payer, to, lamports: 7n })])
    await rpc.sendTransaction(open.base64 as Base64EncodedWireTransaction, { encoding: "base64" }).send()
    const listed = await rpc.getSignaturesForAddress(to, { commitment: "confirmed" }).send()
    expect(listed.map((s) => s.signature)).toEqual([...sent].reverse())
    expect(listed[0]).toMatchObject({ err: null, memo: "[5] pay 2", confirmationStatus: "confirmed", slot: net.ledger.getTransaction(sent[2]!)!.slot })
    expect(listed[0]!.blockTime).toBe(BigInt(net.ledger.getBlock(listed[0]!.slot)!.blockTimeSec!))
    // The payer's list holds its airdrop too (no memo), oldest last.
    const payerList = await rpc.getSignaturesForAddress(payer.address, { commitment: "confirmed" }).send()
    expect(payerList).toHaveLength(4)
    expect(payerList[3]!.memo).toBeNull()
    // Pages: at most `limit`, strictly older than `before`, stopping at `until`.
    const first = await rpc.getSignaturesForAddress(to, { commitment: "confirmed", limit: 2 }).send()
    expect(first.map((s) => s.signature)).toEqual([sent[2], sent[1]])
    const next = await rpc.getSignaturesForAddress(to, { commitment: "confirmed", limit: 2, before: first[1]!.signature }).send()
    expect(next.map((s) => s.signature)).toEqual([sent[0]])
    const until = await rpc.getSignaturesForAddress(to, { commitment: "confirmed", until: asSignature(sent[0]!) }).send()
    expect(until.map((s) => s.signature)).toEqual([sent[2], sent[1]])
    net.ledger.advanceSlots(1)
    expect((await rpc.getSignaturesForAddress(to, { commitment: "confirmed" }).send()).map((s) => s.signature)).toEqual([open.signature, ...[...sent].reverse()])
    // Finalized lags; an unknown `before` answers nothing; the bounds are a validator's.
    expect((await rpc.getSignaturesForAddress(to, { commitment: "finalized" }).send()).length).toBeLessThan(4)
    expect(await rpc.getSignaturesForAddress(to, { before: asSignature(base58.decode(new Uint8Array(64).fill(3))) }).send()).toEqual([])
    expect((await call(net.rpcUrl, "getSignaturesForAddress", [to, { limit: 1001 }])).error?.code).toBe(-32602)
    expect((await call(net.rpcUrl, "getSignaturesForAddress", [to, { commitment: "processed" }])).error?.code).toBe(-32602)
  })
})

describe("block engine", () => {
  const bundle = (txs: ReadonlyArray<SignedTransaction>, encoding: "base58" | "base64" = "base64") =>
    call(net.blockEngineUrl + "/api/v1/bundles", "sendBundle", [
      txs.map((t) => (encoding === "base64" ? t.base64 : base58.decode(t.wireBytes))),
      { encoding }
    ])

  it("lands a tipped bundle whole in one slot", async () => {
    const payer = await devSigner(3)
    const a = (await generateKeyPairSigner()).address
    const b = (await generateKeyPairSigner()).address
    const tipAccounts = (await call(net.blockEngineUrl, "getTipAccounts")).result as ReadonlyArray<Address>
    expect(tipAccounts).toEqual(net.ledger.tipAccounts)
    const t1 = await sign(payer, [getTransferSolInstruction({ from: payer, to: a, lamports: SOL })])
    const t2 = await sign(payer, [
      getTransferSolInstruction({ from: payer, to: b, lamports: SOL }),
      getTransferSolInstruction({ from: payer, to: tipAccounts[0]!, lamports: 10_000n })
    ])
    const sent = await bundle([t1, t2], "base58")
    const bundleId = sent.result as string
    expect(bundleId).toMatch(/^[0-9a-f]{64}$/)
    const statuses = (await call(net.blockEngineUrl, "getBundleStatuses", [[bundleId]])).result as { value: ReadonlyArray<Record<string, unknown>> }
    const landed = statuses.value[0]!
    expect(landed).toMatchObject({ bundle_id: bundleId, transactions: [t1.signature, t2.signature], confirmation_status: "processed", err: { Ok: null } })
    const s1 = await statusOf(t1.signature)
    const s2 = await statusOf(t2.signature)
    expect(s1?.slot).toBe(BigInt(landed["slot"] as number))
    expect(s2?.slot).toBe(s1?.slot)
    const inflight = (await call(net.blockEngineUrl, "getInflightBundleStatuses", [[bundleId, "unknown"]])).result as { value: unknown[] }
    expect(inflight.value).toEqual([
      { bundle_id: bundleId, status: "Landed", landed_slot: Number(s1!.slot) },
      { bundle_id: "unknown", status: "Invalid", landed_slot: null }
    ])
  })

  it("lands nothing when one transaction fails, and refuses untipped or oversized bundles up front", async () => {
    const payer = await devSigner(4)
    const poor = await funded(1n)
    const a = await generateKeyPairSigner()
    const tip = net.ledger.tipAccounts[1]!
    const good = await sign(payer, [getTransferSolInstruction({ from: payer, to: a.address, lamports: SOL }), getTransferSolInstruction({ from: payer, to: tip, lamports: 10_000n })])
    const failing = await sign(poor, [getTransferSolInstruction({ from: poor, to: a.address, lamports: 100n * SOL })])
    const payerBefore = net.ledger.getBalance(payer.address)
    const poorBefore = net.ledger.getBalance(poor.address)
    const sent = await bundle([good, failing])
    const bundleId = sent.result as string
    expect(bundleId).toMatch(/^[0-9a-f]{64}$/)
    const inflight = (await call(net.blockEngineUrl, "getInflightBundleStatuses", [[bundleId]])).result as { value: unknown[] }
    expect(inflight.value).toEqual([{ bundle_id: bundleId, status: "Failed", landed_slot: null }])
    expect(((await call(net.blockEngineUrl, "getBundleStatuses", [[bundleId]])).result as { value: unknown[] }).value).toEqual([null])
    expect(await statusOf(good.signature)).toBeNull()
    expect(await statusOf(failing.signature)).toBeNull()
    expect(net.ledger.getBalance(payer.address)).toBe(payerBefore)
    expect(net.ledger.getBalance(poor.address)).toBe(poorBefore)
    expect(net.ledger.getBalance(a.address)).toBe(0n)

    const untipped = await sign(payer, [getTransferSolInstruction({ from: payer, to: a.address, lamports: SOL })])
    expect((await bundle([untipped])).error).toMatchObject({ code: -32602, message: expect.stringContaining("no_tip") })
    expect((await bundle(Array.from({ length: 6 }, () => untipped))).error).toMatchObject({ code: -32602, message: expect.stringContaining("at most 5") })
    expect((await bundle([])).error).toMatchObject({ code: -32602 })
    expect(await statusOf(untipped.signature)).toBeNull()
    // The same good transactions still land once the failing one is left out.
    const retry = await bundle([good])
    expect(((await call(net.blockEngineUrl, "getInflightBundleStatuses", [[retry.result]])).result as { value: Array<{ status: string }> }).value[0]!.status).toBe("Landed")
    expect(net.ledger.getBalance(a.address)).toBe(SOL)
  })
})

describe("SolanaLocalnet layer", () => {
  it("runs the slot clock, and closing the scope stops the clock and every server", async () => {
    const scope = Effect.runSync(Scope.make())
    const localnet = await Effect.runPromise(
      Layer.buildWithScope(SolanaLocalnet.layer({ ledger: { slotMs: 10 } }), scope).pipe(Effect.map((ctx) => Context.get(ctx, SolanaLocalnet)))
    )
    const first = localnet.ledger.slot
    await eventually(() => (localnet.ledger.slot >= first + 3n ? true : undefined), { what: "three slots from the clock", deadlineMs: 10_000, intervalMs: 5 })
    const kit = createSolanaRpc(localnet.rpcUrl)
    expect(await kit.getSlot({ commitment: "processed" }).send()).toBeGreaterThanOrEqual(first + 3n)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    expect(localnet.ledger.running).toBe(false)
    const stoppedAt = localnet.ledger.slot
    await expect(fetch(localnet.rpcUrl + "/health")).rejects.toThrow()
    await expect(fetch(localnet.blockEngineUrl + "/health")).rejects.toThrow()
    expect(localnet.ledger.slot).toBe(stoppedAt)
  })
})
