import {
  address,
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  SolanaError
} from "@solana/kit"
import { Effect, Either } from "effect"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closeLoopback, listenLoopback } from "../../../test/support/loopbackHttp.js"
import { createNodeSolanaRpc } from "../../chain/internal/JsonRpcHttp.js"
import { causedBy, customCodeOf } from "../../chain/solana/client/NodeRefusals.js"
import { eventLogLine, type TradeEvent } from "../../chain/solana/program/Events.js"
import { SVC_CURVE_PROGRAM_ID } from "../../chain/solana/program/ProgramIds.js"
import { decodeCurveTransaction } from "../../../ingest/solana/decoders/index.js"
import { Arrivals } from "../chains/ChainArrivals.js"
import { makeSolanaTradeChain, tradeOutFromStream } from "./SolanaTradeChain.js"

const hasBlockhashNotFound = (e: unknown) => causedBy(e, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)

const preflight = (cause: unknown) =>
  new SolanaError(SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE, {
    cause,
    accounts: null,
    innerInstructions: null,
    loadedAccountsDataSize: 0,
    logs: [],
    replacementBlockhash: null,
    returnData: null,
    unitsConsumed: 0n
  } as never)

describe("the node's refusal of a trade at send", () => {
  it("an unknown blockhash (expired between build and send) is recognized through the preflight failure that wraps it", () => {
    expect(hasBlockhashNotFound(preflight(new SolanaError(SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)))).toBe(true)
    expect(hasBlockhashNotFound(new SolanaError(SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND))).toBe(true)
  })

  it("any other refusal is not", () => {
    expect(hasBlockhashNotFound(preflight(new SolanaError(SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, { code: 6000, index: 2 })))).toBe(false)
    expect(hasBlockhashNotFound(new Error("Blockhash not found"))).toBe(false)
    expect(hasBlockhashNotFound(undefined)).toBe(false)
  })

  it("the program's custom error code is read through the preflight failure that wraps it", () => {
    expect(customCodeOf(preflight(new SolanaError(SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, { code: 6000, index: 2 })))).toBe(6000)
    expect(customCodeOf(preflight(new SolanaError(SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)))).toBeUndefined()
    expect(customCodeOf("Custom(6000)")).toBeUndefined()
  })
})

describe("the build's chain read fails as it did through kit's RPC", () => {
  let answer: { status: number; body: string } = { status: 200, body: "{}" }
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(answer.status, { "content-type": "application/json" })
      res.end(answer.body)
    })
  })
  let url = ""
  beforeAll(async () => {
    url = await listenLoopback(server)
  })
  afterAll(async () => {
    await closeLoopback(server)
  })

  const mint = "So11111111111111111111111111111111111111112"
  const owner = "11111111111111111111111111111111"

  it.each([
    ["a JSON-RPC error", 200, '{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid param: WrongSize"},"id":"1"}'],
    ["an HTTP 502", 502, "bad gateway"],
    ["text that is not JSON", 200, "<html></html>"]
  ])("%s: chain_unavailable, retryable, with kit's own error in the message", async (_what, status, body) => {
    answer = { status, body }
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const got = await Effect.runPromise(Effect.either(chain.venueAndHoldings(mint, owner)))
    expect(Either.isLeft(got)).toBe(true)
    if (Either.isRight(got)) return
    const kits = await createNodeSolanaRpc(url)
      .getMultipleAccounts([], { encoding: "base64", commitment: "confirmed" })
      .send()
      .then(() => undefined, (e: unknown) => e)
    expect(got.left.reason).toBe("chain_unavailable")
    expect(got.left.retryable).toBe(true)
    expect(got.left.message).toBe(`getMultipleAccounts failed: ${String(kits)}`)
  })

  it("a plain answer is the venue and holdings: no curve here (not launched), the wallet's lamports exact", async () => {
    answer = {
      status: 200,
      body: '{"jsonrpc":"2.0","result":{"context":{"slot":9},"value":[null,null,{"data":["","base64"],"executable":false,"lamports":9007199254740993,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":0},null]},"id":"1"}'
    }
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const got = await Effect.runPromise(chain.venueAndHoldings(mint, owner))
    expect(got.venue).toBeUndefined()
    expect(got.holdings).toEqual({ lamports: 9007199254740993n, tokenRaw: 0n })
  })
})

describe("a sent trade's verdict: the transaction read beside its status once the stream delivered it", () => {
  // A scripted node: each request is logged by method; `getTransaction` answers `transactions` in
  // turn (the last one repeated). `holdStatus: "untilRead"`: the status answer waits until a
  // `getTransaction` request has arrived (so a look that reads one after the other never ends);
  // `holdStatus: 50`: it waits 50 ms, then logs `status answered` (a read sent beside the status
  // shows in the log before it).
  const log: Array<string> = []
  let transactions: Array<unknown> = []
  let holdStatus: "untilRead" | number | undefined
  let txArrived: () => void = () => {}
  let txSeen = new Promise<void>((r) => (txArrived = r))
  const signature = "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW"
  const trade: TradeEvent = {
    kind: "Trade",
    mint: address("So11111111111111111111111111111111111111112"),
    curve: address("11111111111111111111111111111111"),
    trader: address("11111111111111111111111111111111"),
    side: "buy",
    amountInRaw: 10n,
    amountOutRaw: 123_456_789n,
    feeRaw: 0n,
    creatorFeeRaw: 0n,
    virtualQuoteAfterRaw: 1n,
    virtualTokenAfterRaw: 1n,
    realQuoteAfterRaw: 1n,
    crossesGraduation: false
  }
  const landedTx = {
    slot: 9,
    blockTime: null,
    meta: { err: null, fee: 5000, logMessages: [`Program ${SVC_CURVE_PROGRAM_ID} invoke [1]`, eventLogLine(trade), `Program ${SVC_CURVE_PROGRAM_ID} success`] },
    transaction: ["", "base64"],
    version: 0
  }
  const rpcAnswer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: "2.0", id, result })
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string }
      log.push(body.method)
      const reply = (result: unknown) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(rpcAnswer(body.id, result))
      }
      if (body.method === "getTransaction") {
        txArrived()
        reply(transactions.length > 1 ? transactions.shift() : transactions[0])
      } else if (body.method === "getSignatureStatuses") {
        const status = { context: { slot: 9 }, value: [{ slot: 9, confirmations: null, err: null, confirmationStatus: "confirmed", status: { Ok: null } }] }
        if (holdStatus === "untilRead") void txSeen.then(() => reply(status))
        else if (holdStatus !== undefined) setTimeout(() => (log.push("status answered"), reply(status)), holdStatus)
        else reply(status)
      } else reply(null)
    })
  })
  let url = ""
  beforeAll(async () => {
    url = await listenLoopback(server)
  })
  afterAll(async () => {
    await closeLoopback(server)
  })
  const reset = (script: { readonly transactions: Array<unknown>; readonly holdStatus?: "untilRead" | number }) => {
    log.length = 0
    transactions = [...script.transactions]
    holdStatus = script.holdStatus
    txSeen = new Promise<void>((r) => (txArrived = r))
  }

  it("delivered: the read starts before the status answers, and the landed trade's amount comes from it", async () => {
    reset({ transactions: [landedTx], holdStatus: "untilRead" })
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const seen = await Effect.runPromise(chain.observe(signature, 100n, () => true))
    expect(seen).toEqual({ outcome: "landed", amountOutRaw: 123_456_789n })
    expect(log.slice().sort()).toEqual(["getSignatureStatuses", "getTransaction"])
  })

  it("delivered, but the node did not have the transaction yet when read: it is read again once the status says landed", async () => {
    reset({ transactions: [null, landedTx], holdStatus: "untilRead" })
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const seen = await Effect.runPromise(chain.observe(signature, 100n, () => true))
    expect(seen).toEqual({ outcome: "landed", amountOutRaw: 123_456_789n })
    expect(log.filter((m) => m === "getTransaction")).toHaveLength(2)
  })

  it("delivered, and the node's transaction carries no trade event: read once, pending (not read again)", async () => {
    reset({ transactions: [{ ...landedTx, meta: { ...landedTx.meta, logMessages: [] } }], holdStatus: "untilRead" })
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const seen = await Effect.runPromise(chain.observe(signature, 100n, () => true))
    expect(seen).toEqual({ outcome: "pending" })
    expect(log.filter((m) => m === "getTransaction")).toHaveLength(1)
  })

  it("carried by the stream at a deciding commitment: the stream's executed amount is the verdict, and the node is not read", async () => {
    reset({ transactions: [landedTx] })
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const seen = await Effect.runPromise(chain.observe(signature, 100n, () => true, () => 42n))
    expect(seen).toEqual({ outcome: "landed", amountOutRaw: 42n })
    expect(log).toEqual([])
  })

  it("the stream and the node agree: the ingester's decoding of the landed transaction gives the amount the node's read gives", async () => {
    reset({ transactions: [landedTx] })
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const fromNode = await Effect.runPromise(chain.observe(signature, 100n))
    // The same transaction as the Solana ingester decodes it, delivered to the arrivals.
    const decoded = decodeCurveTransaction({ signature, slot: 9n, index: 0, failed: false, logMessages: landedTx.meta.logMessages }, 0, SVC_CURVE_PROGRAM_ID)
    const arrivals = new Arrivals(8, 8)
    for (const e of decoded.events) arrivals.seen(e.signature, e)
    const row = { mint: trade.mint, wallet: trade.trader, side: trade.side }
    expect(fromNode).toEqual({ outcome: "landed", amountOutRaw: tradeOutFromStream(arrivals.landed(signature), row) })
    expect(arrivals.landed(signature)?.slot).toBe(9n)
    // Another wallet's or the other side's trade is not the row's.
    expect(tradeOutFromStream(arrivals.landed(signature), { ...row, wallet: "So11111111111111111111111111111111111111112" })).toBeUndefined()
    expect(tradeOutFromStream(arrivals.landed(signature), { ...row, side: "sell" })).toBeUndefined()
    // A failed transaction is never delivered: the ingester decodes nothing of it.
    expect(decodeCurveTransaction({ signature, slot: 9n, index: 0, failed: true, logMessages: landedTx.meta.logMessages }, 0, SVC_CURVE_PROGRAM_ID).events).toEqual([])
  })

  it("not delivered: the status first, then the read once it answered (one request at a time, as a pending poll needs)", async () => {
    reset({ transactions: [landedTx], holdStatus: 50 })
    const chain = makeSolanaTradeChain({ rpcUrl: url })
    const seen = await Effect.runPromise(chain.observe(signature, 100n))
    expect(seen).toEqual({ outcome: "landed", amountOutRaw: 123_456_789n })
    expect(log).toEqual(["getSignatureStatuses", "status answered", "getTransaction"])
  })
})
