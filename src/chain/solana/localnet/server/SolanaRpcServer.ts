/**
 * The localnet's Solana JSON-RPC server: a validator's HTTP RPC over the in-process `Ledger`,
 * in the exact request and response shapes of agave's RPC, so `@solana/kit`'s
 * `createSolanaRpc(url)` (and every production adapter built on it) works against it unchanged.
 *
 * Behaviour a client can rely on (each as a validator does, unless noted):
 * - `sendTransaction`: base58 (default) or base64; with preflight (default) the transaction is
 *   simulated first with signature verification: a bad signature is `-32003`, a failing
 *   simulation `-32002` carrying the simulation (`err`, `logs`, `unitsConsumed`, …), an
 *   undecodable transaction `-32602`. `skipPreflight` submits directly: a transaction the ledger
 *   refuses is then dropped silently and its signature never gets a status.
 * - Commitment: the default is `finalized`. Account reads return the newest state whatever the
 *   commitment (the ledger keeps no per-slot snapshots); `context.slot` is the requested
 *   commitment's slot. `getTransaction` answers null until the slot reaches the requested
 *   commitment and refuses `processed`.
 * - `getSignatureStatuses` without `searchTransactionHistory` sees only the recent status cache
 *   (`statusCacheSlots`, 300 slots); with it, the ledger's whole retained history.
 * - Bounds: request body `maxBodyBytes` (1 MiB), batch `maxBatch` (100), 100 accounts per
 *   `getMultipleAccounts`, 256 signatures per `getSignatureStatuses`, 4 filters and 10,000
 *   accounts per `getProgramAccounts` (more matches: -32010, as a node's scan limit answers),
 *   1,000 signatures per `getSignaturesForAddress` (newest first, `before`/`until`, its retained
 *   history only; each with agave's `memo` text).
 * Errors use Solana's codes: -32002 preflight, -32003 signature verification, -32015 transaction
 * version, -32016 min context slot, -32602 invalid params, -32601 method not found.
 */
import { type Address, getBase58Encoder, getTransactionDecoder, getBase58Decoder } from "@solana/kit"
import { MEMO_PROGRAM_ADDRESS } from "@solana-program/memo"
import { decodeSplMint } from "../../program/accounts/SplMint.js"
import { decodeSplTokenAccount } from "../../program/accounts/SplTokenAccount.js"
import { TOKEN_PROGRAM_ID } from "../../program/ProgramIds.js"
import type { Commitment, Ledger, ProgramAccountsFilter, SignatureStatus, TransactionRecord } from "../Ledger.js"
import type { TransactionError } from "../TransactionError.js"
import { invalidParams, JsonRpcError, type MethodHandler, type RunningServer, startJsonRpcHttpServer } from "./internal/httpJsonRpc.js"
import {
  addressParam,
  arrayParam,
  boolOption,
  checkMinContextSlot,
  commitmentOption,
  type Config,
  configAt,
  requiredAt,
  signatureParam,
  stringOption,
  u64Param,
  usizeParam
} from "./internal/params.js"
import {
  accountJson,
  type DataSlice,
  metaJson,
  simulationJson,
  statusJson,
  transactionErrorText,
  transactionJson,
  uiTokenAmount
} from "./internal/rpcShapes.js"

export interface SolanaRpcServerOptions {
  readonly host: string
  /** 0 = a free port. */
  readonly port: number
  readonly maxBodyBytes: number
  readonly maxBatch: number
  /** Slots the recent status cache covers (getSignatureStatuses without history search). */
  readonly statusCacheSlots: number
  /** Reported by getVersion. */
  readonly solanaCoreVersion: string
}

export const defaultSolanaRpcServerOptions: SolanaRpcServerOptions = {
  host: "127.0.0.1",
  port: 0,
  maxBodyBytes: 1024 * 1024,
  maxBatch: 100,
  statusCacheSlots: 300,
  solanaCoreVersion: "2.2.0"
}

export const MAX_MULTIPLE_ACCOUNTS = 100
export const MAX_SIGNATURE_STATUSES = 256
/** A validator's most signatures per `getSignaturesForAddress` (and its default). */
export const MAX_SIGNATURES_FOR_ADDRESS = 1000
/** A validator's bounds on an encoded wire transaction (1232 bytes raw). */
export const MAX_BASE58_TRANSACTION_CHARS = 1683
export const MAX_BASE64_TRANSACTION_CHARS = 1644
const PACKET_DATA_SIZE = 1232

const base58Encoder = getBase58Encoder()
const base58Decoder = getBase58Decoder()
const transactionDecoder = getTransactionDecoder()

const context = (slot: bigint) => ({ slot, apiVersion: "2.2.0" })

const REFUSED_AS_INVALID: ReadonlySet<string> = new Set(["SanitizeFailure", "UnsupportedVersion", "AddressLookupTableNotFound", "AccountLoadedTwice"])

/** Decodes a wire transaction parameter, as the validator's `decode_and_deserialize`. */
const wireTransaction = (v: unknown, encoding: "base58" | "base64"): Uint8Array => {
  if (typeof v !== "string") throw invalidParams("Invalid params: transaction must be an encoded string")
  const max = encoding === "base58" ? MAX_BASE58_TRANSACTION_CHARS : MAX_BASE64_TRANSACTION_CHARS
  if (v.length > max) {
    throw invalidParams(`base${encoding === "base58" ? 58 : 64} encoded solana_transaction::versioned::VersionedTransaction too large: ${v.length} bytes (max: encoded/raw ${max}/${PACKET_DATA_SIZE})`)
  }
  let bytes: Uint8Array
  try {
    bytes = encoding === "base58" ? new Uint8Array(base58Encoder.encode(v)) : new Uint8Array(Buffer.from(v, "base64"))
  } catch {
    throw invalidParams(`invalid ${encoding} encoding`)
  }
  if (bytes.length > PACKET_DATA_SIZE) {
    throw invalidParams(`decoded solana_transaction::versioned::VersionedTransaction too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`)
  }
  try {
    transactionDecoder.decode(bytes)
  } catch (e) {
    throw invalidParams(`failed to deserialize solana_transaction::versioned::VersionedTransaction: ${e instanceof Error ? e.message : String(e)}`)
  }
  return bytes
}

const firstSignature = (wire: Uint8Array): string | null => {
  try {
    const tx = transactionDecoder.decode(wire)
    const first = Object.values(tx.signatures)[0]
    return first === undefined || first === null ? null : base58Decoder.decode(first)
  } catch {
    return null
  }
}

const dataSliceOption = (config: Config): DataSlice | undefined => {
  const v = config["dataSlice"]
  if (v === undefined || v === null) return undefined
  if (typeof v !== "object" || Array.isArray(v)) throw invalidParams("Invalid params: dataSlice must be {offset, length}")
  const s = v as Record<string, unknown>
  return { offset: usizeParam(s["offset"], "dataSlice.offset"), length: usizeParam(s["length"], "dataSlice.length") }
}

const accountEncoding = (config: Config) => {
  const v = config["encoding"]
  if (v === "jsonParsed" || v === "base64+zstd") throw invalidParams(`Invalid params: encoding ${v} is not supported by the localnet; use base64`)
  return stringOption(config, "encoding", ["binary", "base58", "base64"] as const, "binary")
}

const commitmentRank: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 }

const statusJsonOf = (s: SignatureStatus) => ({
  slot: s.slot,
  confirmations: s.confirmations,
  err: s.err,
  status: statusJson(s.err),
  confirmationStatus: s.confirmationStatus
})

/**
 * A transaction's memos as `getSignaturesForAddress` reports them (agave's `extract_and_fmt_memos`):
 * each memo instruction's data as `[<byte length>] <text>`, joined by `; `; null without one.
 */
export const memoOf = (r: TransactionRecord): string | null => {
  const memos = r.instructions
    .filter((ix) => r.accountKeys[ix.programIdIndex] === MEMO_PROGRAM_ADDRESS)
    .map((ix) => `[${ix.data.length}] ${new TextDecoder("utf-8", { fatal: false }).decode(ix.data)}`)
  return memos.length === 0 ? null : memos.join("; ")
}

/** The method table, exported for direct tests; `startSolanaRpcServer` serves it over HTTP. */
/** `filters` of getProgramAccounts: at most 4, each `{dataSize}` or `{memcmp: {offset, bytes, encoding?}}` (base58 default). */
const programAccountsFilters = (v: unknown): ProgramAccountsFilter[] => {
  if (v === undefined) return []
  return arrayParam(v, "filters", 4).map((f): ProgramAccountsFilter => {
    const o = f as Record<string, any>
    if (o !== null && typeof o === "object" && typeof o.dataSize === "number") return { dataSize: o.dataSize }
    const m = o?.memcmp
    if (m !== null && typeof m === "object" && typeof m.offset === "number" && typeof m.bytes === "string") {
      try {
        const bytes = m.encoding === "base64" ? new Uint8Array(Buffer.from(m.bytes, "base64")) : new Uint8Array(base58Encoder.encode(m.bytes))
        return { memcmp: { offset: m.offset, bytes } }
      } catch {
        throw invalidParams("Invalid params: memcmp bytes do not decode")
      }
    }
    throw invalidParams("Invalid params: a filter is {dataSize} or {memcmp: {offset, bytes}}")
  })
}

export const solanaRpcMethods = (ledger: Ledger, o: SolanaRpcServerOptions): ReadonlyMap<string, MethodHandler> => {
  const contextSlot = (config: Config): bigint => {
    const slot = ledger.slotAt(commitmentOption(config))
    checkMinContextSlot(config, slot)
    return slot
  }

  const preflightFailure = (err: TransactionError, data: unknown): JsonRpcError =>
    new JsonRpcError(-32002, `Transaction simulation failed: ${transactionErrorText(err)}`, data)

  const emptySimulation = (err: TransactionError) => ({
    err,
    logs: [],
    accounts: null,
    unitsConsumed: 0,
    returnData: null,
    innerInstructions: null,
    replacementBlockhash: null,
    loadedAccountsDataSize: 0
  })

  const methods: Record<string, MethodHandler> = {
    getHealth: () => "ok",

    getVersion: () => ({ "solana-core": o.solanaCoreVersion, "feature-set": 3294202862 }),

    getGenesisHash: () => ledger.getBlock(0n)?.blockhash ?? null,

    getSlot: (p) => contextSlot(configAt(p, 0)),

    getBlockHeight: (p) => ledger.blockHeightAt(commitmentOption(configAt(p, 0))),

    // The lowest slot whose block and transactions the node still has (its history is pruned).
    minimumLedgerSlot: () => ledger.oldestHistorySlot,

    getBlockTime: (p) => {
      const slot = u64Param(requiredAt(p, 0, "slot"), "slot")
      const block = ledger.getBlock(slot)
      if (block === undefined || block.blockTimeSec === null) {
        throw new JsonRpcError(-32004, `Block not available for slot ${slot}`)
      }
      return block.blockTimeSec
    },

    getMinimumBalanceForRentExemption: (p) =>
      ledger.minimumBalanceForRentExemption(usizeParam(requiredAt(p, 0, "data length"), "data length", 10 * 1024 * 1024)),

    getLatestBlockhash: (p) => {
      const config = configAt(p, 0)
      const lb = ledger.latestBlockhash(commitmentOption(config))
      checkMinContextSlot(config, lb.slot)
      return { context: context(lb.slot), value: { blockhash: lb.blockhash, lastValidBlockHeight: lb.lastValidBlockHeight } }
    },

    isBlockhashValid: (p) => {
      const blockhash = requiredAt(p, 0, "blockhash")
      if (typeof blockhash !== "string") throw invalidParams("Invalid params: blockhash must be a base58 string")
      const slot = contextSlot(configAt(p, 1))
      return { context: context(slot), value: ledger.isBlockhashValid(blockhash) }
    },

    getBalance: (p) => {
      const address = addressParam(requiredAt(p, 0, "address"))
      const slot = contextSlot(configAt(p, 1))
      return { context: context(slot), value: ledger.getBalance(address) }
    },

    getAccountInfo: (p) => {
      const address = addressParam(requiredAt(p, 0, "address"))
      const config = configAt(p, 1)
      const encoding = accountEncoding(config)
      const slice = dataSliceOption(config)
      const slot = contextSlot(config)
      const account = ledger.getAccount(address)
      return { context: context(slot), value: account === undefined ? null : accountJson(account, encoding, slice) }
    },

    getMultipleAccounts: (p) => {
      const addresses = arrayParam(requiredAt(p, 0, "addresses"), "addresses", MAX_MULTIPLE_ACCOUNTS).map((a) => addressParam(a))
      const config = configAt(p, 1)
      const encoding = accountEncoding(config)
      const slice = dataSliceOption(config)
      const slot = contextSlot(config)
      return {
        context: context(slot),
        value: ledger.getMultipleAccounts(addresses).map((a) => (a === undefined ? null : accountJson(a, encoding, slice)))
      }
    },

    getProgramAccounts: (p) => {
      const programId = addressParam(requiredAt(p, 0, "program id"))
      const config = configAt(p, 1)
      const encoding = accountEncoding(config)
      const slice = dataSliceOption(config)
      const slot = contextSlot(config)
      const filters = programAccountsFilters(config.filters)
      let found
      try {
        found = ledger.getProgramAccounts(programId, filters)
      } catch (e) {
        throw new JsonRpcError(-32010, `getProgramAccounts: ${(e as Error).message}`)
      }
      const value = found.map(({ address, account }) => ({ pubkey: address, account: accountJson(account, encoding, slice) }))
      return config.withContext === true ? { context: context(slot), value } : value
    },

    getTokenAccountBalance: (p) => {
      const address = addressParam(requiredAt(p, 0, "token account"))
      const slot = contextSlot(configAt(p, 1))
      const account = ledger.getAccount(address)
      const token = account !== undefined && account.owner === TOKEN_PROGRAM_ID ? decodeSplTokenAccount(account.data) : undefined
      if (token === undefined) throw invalidParams("Invalid param: not a Token account")
      const mint = ledger.getAccount(token.mint)
      const decimals = mint === undefined ? undefined : decodeSplMint(mint.data)?.decimals
      if (decimals === undefined) throw invalidParams("Invalid param: could not find mint")
      return { context: context(slot), value: uiTokenAmount(token.amount, decimals) }
    },

    getSignatureStatuses: (p) => {
      const signatures = arrayParam(requiredAt(p, 0, "signatures"), "signatures", MAX_SIGNATURE_STATUSES).map(signatureParam)
      const config = configAt(p, 1)
      const searchHistory = boolOption(config, "searchTransactionHistory", false)
      const recentFrom = ledger.slot - BigInt(o.statusCacheSlots)
      return {
        context: context(ledger.slot),
        value: ledger.getSignatureStatuses(signatures).map((s) =>
          s === null || (!searchHistory && s.slot < recentFrom) ? null : statusJsonOf(s)
        )
      }
    },

    getSignaturesForAddress: (p) => {
      const address = addressParam(requiredAt(p, 0, "address"))
      const config = configAt(p, 1)
      const commitment = commitmentOption(config)
      if (commitment === "processed") throw invalidParams("Method does not support commitment below `confirmed`")
      checkMinContextSlot(config, ledger.slotAt(commitment))
      const limitOption = config["limit"]
      const limit = limitOption === undefined || limitOption === null ? MAX_SIGNATURES_FOR_ADDRESS : usizeParam(limitOption, "limit", MAX_SIGNATURES_FOR_ADDRESS)
      if (limit === 0) throw invalidParams(`Invalid limit; max ${MAX_SIGNATURES_FOR_ADDRESS}`)
      const before = config["before"] === undefined || config["before"] === null ? undefined : signatureParam(config["before"])
      const until = config["until"] === undefined || config["until"] === null ? undefined : signatureParam(config["until"])
      return ledger
        .signaturesForAddress(address, { limit, commitment, ...(before === undefined ? {} : { before }), ...(until === undefined ? {} : { until }) })
        .map((r) => ({
          signature: r.signature,
          slot: r.slot,
          err: r.err,
          memo: memoOf(r),
          blockTime: ledger.getBlock(r.slot)?.blockTimeSec ?? null,
          confirmationStatus: ledger.commitmentOfSlot(r.slot) ?? "finalized"
        }))
    },

    getTransaction: (p) => {
      const signature = signatureParam(requiredAt(p, 0, "signature"))
      const config = configAt(p, 1)
      const encoding = stringOption(config, "encoding", ["json", "base64", "base58"] as const, "json")
      const commitment = commitmentOption(config)
      if (commitment === "processed") throw invalidParams("Method does not support commitment below `confirmed`")
      const maxVersion = config["maxSupportedTransactionVersion"]
      if (maxVersion !== undefined && maxVersion !== null && maxVersion !== 0) {
        throw invalidParams("Invalid params: maxSupportedTransactionVersion must be 0")
      }
      const record = ledger.getTransaction(signature)
      if (record === undefined) return null
      const reached = ledger.commitmentOfSlot(record.slot)
      if (reached === undefined || commitmentRank[reached] < commitmentRank[commitment]) return null
      if (record.version === 0 && maxVersion !== 0) {
        throw new JsonRpcError(
          -32015,
          "Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: \"maxSupportedTransactionVersion\": 0"
        )
      }
      const block = ledger.getBlock(record.slot)
      return {
        slot: record.slot,
        blockTime: block?.blockTimeSec ?? null,
        transaction: transactionJson(record, encoding),
        meta: metaJson(record),
        ...(maxVersion === 0 ? { version: record.version } : {})
      }
    },

    requestAirdrop: (p) => {
      const to = addressParam(requiredAt(p, 0, "recipient"))
      const lamports = u64Param(requiredAt(p, 1, "lamports"), "lamports")
      if (lamports === 0n || lamports > ledger.options.maxAirdropLamports) {
        throw invalidParams(`Invalid params: an airdrop is 1..${ledger.options.maxAirdropLamports} lamports`)
      }
      const r = ledger.requestAirdrop(to, lamports)
      if (r._tag === "Rejected" || r.err !== null) {
        throw new JsonRpcError(-32603, `airdrop failed: ${r._tag === "Rejected" ? r.detail : transactionErrorText(r.err!)}`)
      }
      return r.signature
    },

    simulateTransaction: (p) => {
      const config = configAt(p, 1)
      const encoding = stringOption(config, "encoding", ["base58", "base64"] as const, "base58")
      const wire = wireTransaction(requiredAt(p, 0, "transaction"), encoding)
      const sigVerify = boolOption(config, "sigVerify", false)
      const replaceRecentBlockhash = boolOption(config, "replaceRecentBlockhash", false)
      if (sigVerify && replaceRecentBlockhash) throw invalidParams("sigVerify may not be used with replaceRecentBlockhash")
      const withInner = boolOption(config, "innerInstructions", false)
      let addresses: ReadonlyArray<Address> | undefined
      let accountsEncoding: "base58" | "base64" | "binary" = "base64"
      const accountsConfig = config["accounts"]
      if (accountsConfig !== undefined && accountsConfig !== null) {
        if (typeof accountsConfig !== "object" || Array.isArray(accountsConfig)) throw invalidParams("Invalid params: accounts must be {addresses, encoding}")
        const ac = accountsConfig as Config
        addresses = arrayParam(ac["addresses"], "accounts.addresses", MAX_MULTIPLE_ACCOUNTS).map((a) => addressParam(a))
        accountsEncoding = accountEncoding(ac)
      }
      const slot = contextSlot(config)
      const sim = ledger.simulate(wire, {
        sigVerify,
        replaceRecentBlockhash,
        ...(addresses === undefined ? {} : { accounts: addresses })
      })
      const accounts = sim.accounts === null ? null : sim.accounts.map((a) => (a === null ? null : accountJson(a, accountsEncoding, undefined)))
      return { context: context(slot), value: simulationJson(sim, accounts, withInner) }
    },

    sendTransaction: (p) => {
      const config = configAt(p, 1)
      const encoding = stringOption(config, "encoding", ["base58", "base64"] as const, "base58")
      const wire = wireTransaction(requiredAt(p, 0, "transaction"), encoding)
      const skipPreflight = boolOption(config, "skipPreflight", false)
      commitmentOption(config, "preflightCommitment")
      checkMinContextSlot(config, ledger.slot)
      if (skipPreflight) {
        const r = ledger.submit(wire)
        if (r._tag === "Landed") return r.signature
        const signature = r.signature ?? firstSignature(wire)
        if (signature === null) throw invalidParams(`invalid transaction: ${r.detail}`)
        // A leader drops what it cannot execute; the client only ever sees no status.
        return signature
      }
      const sim = ledger.simulate(wire, { sigVerify: true })
      if (sim.err === "SignatureFailure") throw new JsonRpcError(-32003, "Transaction signature verification failure")
      if (sim.err !== null && typeof sim.err === "string" && REFUSED_AS_INVALID.has(sim.err)) {
        throw invalidParams(`invalid transaction: ${transactionErrorText(sim.err)}`)
      }
      if (sim.err !== null) throw preflightFailure(sim.err, simulationJson(sim, null, false))
      const r = ledger.submit(wire)
      if (r._tag === "Rejected") throw preflightFailure(r.error, emptySimulation(r.error))
      return r.signature
    }
  }
  return new Map(Object.entries(methods))
}

export const startSolanaRpcServer = (ledger: Ledger, options: Partial<SolanaRpcServerOptions> = {}): Promise<RunningServer> => {
  const o = { ...defaultSolanaRpcServerOptions, ...options }
  return startJsonRpcHttpServer({
    name: "solana-rpc",
    host: o.host,
    port: o.port,
    maxBodyBytes: o.maxBodyBytes,
    maxBatch: o.maxBatch,
    methods: solanaRpcMethods(ledger, o)
  })
}
