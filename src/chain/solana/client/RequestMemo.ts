/**
 * The memo a rail puts on a Solana transaction it builds for one request (a trade, a transfer):
 * `<kind>:<32 hex>`, the first 16 bytes of SHA-256 over the account and the request's client id.
 * It makes two requests with the same content in one blockhash two transactions (byte-identical
 * bytes have one signature, and a validator drops the second as already processed), and names the
 * request on chain without publishing the client's id. Pure.
 */
import { getAddMemoInstruction } from "@solana-program/memo"
import type { Instruction } from "@solana/kit"
import { createHash } from "node:crypto"

export const requestMemo = (kind: "trade" | "transfer", accountId: string, clientId: string): string =>
  `${kind}:${createHash("sha256").update(JSON.stringify([accountId, clientId])).digest("hex").slice(0, 32)}`

export const memoInstruction = (memo: string): Instruction => getAddMemoInstruction({ memo })
