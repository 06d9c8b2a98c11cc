import {
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  SolanaError
} from "@solana/kit"
import { describe, expect, it } from "vitest"
import { causedBy, customCodeOf } from "../../chain/solana/client/NodeRefusals.js"

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
