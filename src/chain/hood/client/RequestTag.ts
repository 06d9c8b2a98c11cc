/**
 * The tag a rail appends to the calldata of a Hood transaction it builds for one request (a trade):
 * 32 bytes of SHA-256 over the kind, the account and the request's client id. Hood's counterpart of
 * Solana's `requestMemo`: without it two requests with the same content (a caller's retry under a
 * new id, the same wallet's pending nonce, the same fee caps) build byte-identical transactions,
 * so one transaction on chain would verify as either build and could be recorded twice. Solidity's
 * ABI decoding ignores calldata past a call's arguments (the curve's `buy`/`sell`, the router's
 * `exactInputSingle` and `multicall`), so the tag changes nothing the contracts do; it costs 512
 * gas of calldata. Pure.
 */
import { createHash } from "node:crypto"
import { concat, type Hex } from "viem"

export const REQUEST_TAG_BYTES = 32

export const requestTag = (kind: "trade" | "transfer" | "approval", accountId: string, clientId: string): Hex =>
  `0x${createHash("sha256").update(JSON.stringify([kind, accountId, clientId])).digest("hex")}`

/** `data` with the tag after it. */
export const tagged = (data: Hex, tag: Hex | undefined): Hex => (tag === undefined ? data : concat([data, tag]))
