/**
 * `getMultipleAccounts` (base64) decoded without kit's response path, for the engine's hot chain
 * reads (the trade build's one read: `SolanaTradeChain.accounts`). Kit stays for every other call
 * and for building transactions.
 *
 * Why (docs/decisions.md "The trade build's chain read without kit's response path"): kit parses
 * every answer by rewriting its text character by character to wrap each integer in an object
 * (`wrapIntegersInBigIntValueObject`: one array entry per character of the answer, the accounts'
 * base64 data included), then walks the whole tree twice more (unwrapping, then its transformers,
 * each node copied with its key path), and the caller decoded the base64 through kit's codec
 * (which decodes it twice and checks it with a fresh regular expression). About a third of what a
 * build allocated was that.
 *
 * Here: the answer is `JSON.parse`d once; each account's `owner`, `lamports` and `data` are read
 * and the data decoded once (`Buffer`, after the same alphabet check kit's codec makes). Exact:
 * `lamports` is a u64 sent as an integer literal; `JSON.parse` reads it exactly whenever the
 * number it gives is a safe integer (a literal of 2^53 or more never parses to one), so such a
 * value is taken as is (`BigInt`). Anything else (a number past 2^53 − 1 anywhere in `lamports`,
 * a JSON-RPC error, text that does not parse, any other shape) is handed, the same text, to kit's
 * own parse and response transformer (`kitAccounts`): the errors, their messages and every value
 * are then kit's, as before. The request is the one kit sends (`createRpcMessage`, the same
 * params: `commitment` other than `finalized` is sent as given).
 */
import { type Address, createRpcMessage, createSolanaRpcApi, DEFAULT_RPC_CONFIG, getBase64Encoder, type RpcTransport } from "@solana/kit"
import { parseJsonWithBigInts } from "@solana/rpc-spec-types"
import { parseRpcUrl, postSolanaJsonRpc } from "../../internal/JsonRpcHttp.js"

/** An account as the engine's reads use it: its owner program, its data and its lamports. */
export interface RawAccount {
  readonly owner: string
  /** A view, possibly into Buffer's shared pool (`byteOffset` not 0): read it through the view, never `data.buffer` from 0. */
  readonly data: Uint8Array
  readonly lamports: bigint
}

/** The commitments sent as given (kit drops `finalized`, the node's default, from the request). */
export type ReadCommitment = "processed" | "confirmed"

/** A character kit's base64 codec refuses (`assertValidBaseString`: the alphabet, `=` anywhere). */
const NOT_BASE64 = /[^A-Za-z0-9+/=]/

/**
 * The accounts of a `getMultipleAccounts` (base64) answer, `count` of them in order (undefined:
 * no account), when the text is a plain success: valid JSON, no `error`, `result.value` an array
 * of `count` entries each null or with a string `owner`, `lamports` a safe integer and `data` a
 * `[base64, "base64"]` pair. Undefined otherwise: kit's path decides (`kitAccounts`). Pure.
 */
export const decodeMultipleAccountsFast = (body: string, count: number): ReadonlyArray<RawAccount | undefined> | undefined => {
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return undefined
  }
  if (typeof json !== "object" || json === null || "error" in json) return undefined
  const result = (json as { readonly result?: unknown }).result
  if (typeof result !== "object" || result === null) return undefined
  const value = (result as { readonly value?: unknown }).value
  if (!Array.isArray(value) || value.length !== count) return undefined
  const out = new Array<RawAccount | undefined>(count)
  for (let i = 0; i < count; i++) {
    const a: unknown = value[i]
    if (a === null) {
      out[i] = undefined
      continue
    }
    if (typeof a !== "object") return undefined
    const { owner, lamports, data } = a as { readonly owner?: unknown; readonly lamports?: unknown; readonly data?: unknown }
    if (typeof owner !== "string" || typeof lamports !== "number" || !Number.isSafeInteger(lamports)) return undefined
    if (!Array.isArray(data) || data.length !== 2 || data[1] !== "base64") return undefined
    const text: unknown = data[0]
    if (typeof text !== "string" || NOT_BASE64.test(text)) return undefined
    const bytes = Buffer.from(text, "base64")
    out[i] = { owner, data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length), lamports: BigInt(lamports) }
  }
  return out
}

const fromBase64 = getBase64Encoder()
const kitApi = createSolanaRpcApi(DEFAULT_RPC_CONFIG)

/**
 * The accounts of the same answer text through kit's own path: `parseJsonWithBigInts`, then the
 * response transformer kit's RPC applies to `getMultipleAccounts` (a JSON-RPC error thrown as
 * kit's `SolanaError`, every integer a bigint), each account mapped as the trade chain always did
 * (data through kit's base64 codec). Throws what kit throws.
 */
export const kitAccounts = async (body: string, addresses: ReadonlyArray<Address>, commitment: ReadCommitment): Promise<ReadonlyArray<RawAccount | undefined>> => {
  const answer: RpcTransport = async <T>() => parseJsonWithBigInts(body) as T
  const r = await kitApi.getMultipleAccounts([...addresses], { encoding: "base64", commitment }).execute({ transport: answer })
  return r.value.map((a) => (a === null ? undefined : { owner: a.owner as string, data: new Uint8Array(fromBase64.encode(a.data[0])), lamports: a.lamports }))
}

/**
 * `getMultipleAccounts` of `addresses` (base64, at `commitment`) against `rpcUrl`, over
 * `postSolanaJsonRpc` (the same HTTP client, bounds and HTTP errors as `createNodeSolanaRpc`).
 */
export const makeMultipleAccountsReader = (rpcUrl: string, options: { readonly maxResponseBytes?: number } = {}) => {
  const target = parseRpcUrl(rpcUrl)
  return async (addresses: ReadonlyArray<Address>, commitment: ReadCommitment, signal?: AbortSignal): Promise<ReadonlyArray<RawAccount | undefined>> => {
    const payload = createRpcMessage({ methodName: "getMultipleAccounts", params: [addresses, { encoding: "base64", commitment }] })
    const body = await postSolanaJsonRpc(target, JSON.stringify(payload), signal, options)
    return decodeMultipleAccountsFast(body, addresses.length) ?? (await kitAccounts(body, addresses, commitment))
  }
}

export type MultipleAccountsReader = ReturnType<typeof makeMultipleAccountsReader>
