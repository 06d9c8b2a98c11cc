import {
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
import { makeSolanaTradeChain } from "./SolanaTradeChain.js"

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
