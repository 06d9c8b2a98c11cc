/**
 * The Geyser service's wire: the `geyser.Geyser` method table for `@grpc/grpc-js`, serialized
 * with the message codecs `@triton-one/yellowstone-grpc` ships (the same code its clients use),
 * and the ledger's records converted into Yellowstone's update messages.
 *
 * One deliberate difference from the package's decoder: a filter map entry whose value is the
 * empty message (`slots: {s: {}}`, `blocksMeta: {m: {}}`) reaches us as a key without a value
 * (prost, in the native client, omits a default message), and ts-proto's decoder drops such an
 * entry. A real (prost) server reads it as the default filter, so `decodeSubscribeRequest`
 * restores it: empty filters work here as on a Yellowstone server.
 */
import {
  GetBlockHeightRequest,
  GetBlockHeightResponse,
  GetLatestBlockhashRequest,
  GetLatestBlockhashResponse,
  GetSlotRequest,
  GetSlotResponse,
  GetVersionRequest,
  GetVersionResponse,
  IsBlockhashValidRequest,
  IsBlockhashValidResponse,
  PingRequest,
  PongResponse,
  SubscribeReplayInfoRequest,
  SubscribeReplayInfoResponse,
  SubscribeRequest,
  type SubscribeUpdateAccountInfo,
  type SubscribeUpdateBlockMeta,
  type SubscribeUpdateTransactionInfo
} from "@triton-one/yellowstone-grpc"
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js"
import { getBase58Encoder } from "@solana/kit"
import type { AccountUpdate, BlockRecord, TokenBalance, TransactionRecord, TransactionUpdate } from "../../Ledger.js"
import { addressToBytes } from "../../../program/internal/bytes.js"
import { uiTokenAmount } from "./rpcShapes.js"
import { encodeTransactionErrorBincode } from "./transactionErrorBincode.js"

interface Codec<T> {
  encode(message: T): { finish(): Uint8Array }
  decode(input: Uint8Array): T
}

const toBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength)

const unary = <Req, Res>(name: string, req: Codec<Req>, res: Codec<Res>): MethodDefinition<Req, Res> => ({
  path: `/geyser.Geyser/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: (m: Req) => toBuffer(req.encode(m).finish()),
  requestDeserialize: (b: Buffer) => req.decode(b),
  responseSerialize: (m: Res) => toBuffer(res.encode(m).finish()),
  responseDeserialize: (b: Buffer) => res.decode(b)
})

/** Map fields of `SubscribeRequest` (field number → property) whose values are filter messages. */
const FILTER_MAPS: ReadonlyMap<number, keyof SubscribeRequest> = new Map([
  [1, "accounts"],
  [2, "slots"],
  [3, "transactions"],
  [4, "blocks"],
  [5, "blocksMeta"],
  [8, "entry"],
  [10, "transactionsStatus"]
])

const utf8 = new TextDecoder()

/** Reads a varint at `at`; returns [value, next offset], or undefined past the end. */
const varint = (b: Uint8Array, at: number): [number, number] | undefined => {
  let value = 0
  let shift = 0
  for (let i = at; i < b.length && shift < 49; i++) {
    const byte = b[i]!
    value += (byte & 0x7f) * 2 ** shift
    if ((byte & 0x80) === 0) return [value, i + 1]
    shift += 7
  }
  return undefined
}

/** The offset after a field's value, or undefined when the bytes end inside it. */
const skipField = (b: Uint8Array, at: number, wireType: number): number | undefined => {
  switch (wireType) {
    case 0:
      return varint(b, at)?.[1]
    case 1:
      return at + 8
    case 2: {
      const len = varint(b, at)
      return len === undefined ? undefined : len[1] + len[0]
    }
    case 5:
      return at + 4
    default:
      return undefined
  }
}

/** The key (field 1) of a map entry. */
const entryKey = (entry: Uint8Array): string | undefined => {
  let at = 0
  while (at < entry.length) {
    const tag = varint(entry, at)
    if (tag === undefined) return undefined
    const field = Math.floor(tag[0] / 8)
    const wireType = tag[0] & 7
    if (field === 1 && wireType === 2) {
      const len = varint(entry, tag[1])
      if (len === undefined) return undefined
      return utf8.decode(entry.subarray(len[1], len[1] + len[0]))
    }
    const next = skipField(entry, tag[1], wireType)
    if (next === undefined) return undefined
    at = next
  }
  return undefined
}

/** `SubscribeRequest.decode`, restoring filter entries whose value was the empty message. */
export const decodeSubscribeRequest = (bytes: Uint8Array): SubscribeRequest => {
  const request = SubscribeRequest.decode(bytes)
  let at = 0
  while (at < bytes.length) {
    const tag = varint(bytes, at)
    if (tag === undefined) break
    const field = Math.floor(tag[0] / 8)
    const wireType = tag[0] & 7
    const map = FILTER_MAPS.get(field)
    if (map !== undefined && wireType === 2) {
      const len = varint(bytes, tag[1])
      if (len === undefined) break
      const key = entryKey(bytes.subarray(len[1], len[1] + len[0]))
      const target = request[map] as Record<string, unknown>
      if (key !== undefined && !(key in target)) target[key] = defaultFilter(map)
      at = len[1] + len[0]
      continue
    }
    const next = skipField(bytes, tag[1], wireType)
    if (next === undefined) break
    at = next
  }
  return request
}

const defaultFilter = (map: keyof SubscribeRequest): unknown => {
  switch (map) {
    case "accounts":
      return { account: [], owner: [], filters: [] }
    case "transactions":
    case "transactionsStatus":
      return { accountInclude: [], accountExclude: [], accountRequired: [] }
    case "blocks":
      return { accountInclude: [] }
    default:
      return {}
  }
}

/**
 * The `geyser.Geyser` service. Subscribe responses are pre-encoded `Buffer`s (the server encodes
 * each update once to count its bytes against the stream's bound), so its serializer passes
 * them through.
 */
export const geyserService = {
  Subscribe: {
    path: "/geyser.Geyser/Subscribe",
    requestStream: true,
    responseStream: true,
    requestSerialize: (m: SubscribeRequest) => toBuffer(SubscribeRequest.encode(m).finish()),
    requestDeserialize: (b: Buffer) => decodeSubscribeRequest(b),
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b
  } satisfies MethodDefinition<SubscribeRequest, Buffer>,
  SubscribeReplayInfo: unary("SubscribeReplayInfo", SubscribeReplayInfoRequest, SubscribeReplayInfoResponse),
  Ping: unary("Ping", PingRequest, PongResponse),
  GetLatestBlockhash: unary("GetLatestBlockhash", GetLatestBlockhashRequest, GetLatestBlockhashResponse),
  GetBlockHeight: unary("GetBlockHeight", GetBlockHeightRequest, GetBlockHeightResponse),
  GetSlot: unary("GetSlot", GetSlotRequest, GetSlotResponse),
  IsBlockhashValid: unary("IsBlockhashValid", IsBlockhashValidRequest, IsBlockhashValidResponse),
  GetVersion: unary("GetVersion", GetVersionRequest, GetVersionResponse)
} as const

export const geyserServiceDefinition = geyserService as unknown as ServiceDefinition

// --- Ledger records → Yellowstone messages ----------------------------------------------------

const base58 = getBase58Encoder()
const bs58 = (s: string): Uint8Array => new Uint8Array(base58.encode(s))

/** u64::MAX, as a validator reports a rent-exempt account's rent epoch. */
const RENT_EPOCH_EXEMPT = "18446744073709551615"

export interface DataSlice {
  readonly offset: number
  readonly length: number
}

const sliceData = (data: Uint8Array, slices: ReadonlyArray<DataSlice>): Uint8Array => {
  if (slices.length === 0) return data
  const parts = slices.map((s) => data.subarray(Math.min(s.offset, data.length), Math.min(s.offset + s.length, data.length)))
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

export const accountInfoOf = (u: AccountUpdate, slices: ReadonlyArray<DataSlice>): SubscribeUpdateAccountInfo => ({
  pubkey: addressToBytes(u.pubkey),
  lamports: u.lamports.toString(),
  owner: addressToBytes(u.owner),
  executable: u.executable,
  rentEpoch: RENT_EPOCH_EXEMPT,
  data: sliceData(u.data, slices),
  writeVersion: u.writeVersion.toString(),
  txnSignature: bs58(u.txnSignature)
})

const tokenBalanceOf = (b: TokenBalance) => ({
  accountIndex: b.accountIndex,
  mint: b.mint,
  owner: b.owner,
  programId: b.programId,
  uiTokenAmount: uiTokenAmount(b.amount, b.decimals)
})

const infoCache = new WeakMap<TransactionRecord, SubscribeUpdateTransactionInfo>()

/** The transaction as Yellowstone sends it (cached per record: every stream shares it). */
export const transactionInfoOf = (r: TransactionRecord | TransactionUpdate): SubscribeUpdateTransactionInfo => {
  const hit = infoCache.get(r)
  if (hit !== undefined) return hit
  const info: SubscribeUpdateTransactionInfo = {
    signature: bs58(r.signature),
    isVote: false,
    transaction: {
      signatures: r.signatures.map(bs58),
      message: {
        header: { ...r.header },
        accountKeys: r.accountKeys.map(addressToBytes),
        recentBlockhash: bs58(r.recentBlockhash),
        instructions: r.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: Uint8Array.from(ix.accounts),
          data: ix.data
        })),
        versioned: r.version === 0,
        addressTableLookups: []
      }
    },
    meta: {
      err: r.err === null ? undefined : { err: encodeTransactionErrorBincode(r.err) },
      fee: r.fee.toString(),
      preBalances: r.preBalances.map(String),
      postBalances: r.postBalances.map(String),
      innerInstructions: r.innerInstructions.map((g) => ({
        index: g.index,
        instructions: g.instructions.map((ix) => ({
          programIdIndex: ix.programIdIndex,
          accounts: Uint8Array.from(ix.accounts),
          data: ix.data,
          stackHeight: ix.stackHeight
        }))
      })),
      innerInstructionsNone: false,
      logMessages: [...r.logMessages],
      logMessagesNone: false,
      preTokenBalances: r.preTokenBalances.map(tokenBalanceOf),
      postTokenBalances: r.postTokenBalances.map(tokenBalanceOf),
      rewards: [],
      loadedWritableAddresses: [],
      loadedReadonlyAddresses: [],
      returnData: undefined,
      returnDataNone: true,
      computeUnitsConsumed: r.computeUnitsConsumed.toString()
    },
    index: String(r.index)
  }
  infoCache.set(r, info)
  return info
}

export const blockMetaOf = (b: BlockRecord): SubscribeUpdateBlockMeta => ({
  slot: b.slot.toString(),
  blockhash: b.blockhash ?? "",
  rewards: { rewards: [], numPartitions: undefined },
  blockTime: b.blockTimeSec === null ? undefined : { timestamp: String(b.blockTimeSec) },
  blockHeight: { blockHeight: b.blockHeight.toString() },
  parentSlot: b.parentSlot.toString(),
  parentBlockhash: b.previousBlockhash,
  executedTransactionCount: String(b.transactions.length),
  entriesCount: "0"
})
