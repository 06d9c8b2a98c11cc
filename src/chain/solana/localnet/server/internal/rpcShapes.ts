/**
 * The ledger's records in Solana JSON-RPC's exact shapes: transactions (`json`, `base64`,
 * `base58`), status meta, token balances with `uiTokenAmount`, account infos, simulation results,
 * and the validator's human text for a transaction error (the `-32002` message). Field names and
 * nesting follow agave's `rpc-client-types`, so kit's typed client reads them unchanged.
 */
import { getBase58Decoder } from "@solana/kit"
import type {
  AccountInfo,
  CompiledInstructionRecord,
  InnerInstructions,
  SimulationResult,
  TokenBalance,
  TransactionRecord
} from "../../Ledger.js"
import { instructionErrorText, type TransactionError } from "../../TransactionError.js"
import { invalidParams } from "./httpJsonRpc.js"

const base58 = getBase58Decoder()

/** What a validator reports as `rentEpoch` for a rent-exempt account: u64::MAX. */
export const RENT_EPOCH_EXEMPT = (1n << 64n) - 1n

/** Base58 account data above this many bytes is refused, as a validator does. */
export const BASE58_DATA_BYTES_MAX = 128

export type BinaryEncoding = "base58" | "base64"

const b64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** `amount / 10^decimals` as the shortest decimal string (agave's `real_number_string_trimmed`). */
export const uiAmountString = (amount: bigint, decimals: number): string => {
  if (decimals === 0) return amount.toString()
  const s = amount.toString().padStart(decimals + 1, "0")
  const whole = s.slice(0, s.length - decimals)
  const frac = s.slice(s.length - decimals).replace(/0+$/, "")
  return frac === "" ? whole : `${whole}.${frac}`
}

export const uiTokenAmount = (amount: bigint, decimals: number) => {
  const text = uiAmountString(amount, decimals)
  return { amount: amount.toString(), decimals, uiAmount: Number(text), uiAmountString: text }
}

export const tokenBalanceJson = (b: TokenBalance) => ({
  accountIndex: b.accountIndex,
  mint: b.mint,
  owner: b.owner,
  programId: b.programId,
  uiTokenAmount: uiTokenAmount(b.amount, b.decimals)
})

const instructionJson = (ix: CompiledInstructionRecord, stackHeight: number | null) => ({
  programIdIndex: ix.programIdIndex,
  accounts: [...ix.accounts],
  data: base58.decode(ix.data),
  stackHeight
})

export const innerInstructionsJson = (inner: ReadonlyArray<InnerInstructions>) =>
  inner.map((group) => ({
    index: group.index,
    instructions: group.instructions.map((ix) => instructionJson(ix, ix.stackHeight))
  }))

/** `{Ok: null}` or `{Err: err}`: the legacy `status` field beside `err`. */
export const statusJson = (err: TransactionError | null) => (err === null ? { Ok: null } : { Err: err })

export const metaJson = (r: TransactionRecord) => ({
  err: r.err,
  status: statusJson(r.err),
  fee: r.fee,
  preBalances: r.preBalances,
  postBalances: r.postBalances,
  innerInstructions: innerInstructionsJson(r.innerInstructions),
  logMessages: r.logMessages,
  preTokenBalances: r.preTokenBalances.map(tokenBalanceJson),
  postTokenBalances: r.postTokenBalances.map(tokenBalanceJson),
  rewards: [],
  loadedAddresses: { writable: [], readonly: [] },
  computeUnitsConsumed: r.computeUnitsConsumed
})

export type TransactionEncoding = "json" | "base64" | "base58"

export const transactionJson = (r: TransactionRecord, encoding: TransactionEncoding): unknown => {
  if (encoding === "base64") return [b64(r.wireBytes), "base64"]
  if (encoding === "base58") return [base58.decode(r.wireBytes), "base58"]
  const message: Record<string, unknown> = {
    accountKeys: r.accountKeys,
    header: r.header,
    recentBlockhash: r.recentBlockhash,
    instructions: r.instructions.map((ix) => instructionJson(ix, null))
  }
  if (r.version === 0) message["addressTableLookups"] = []
  return { signatures: r.signatures, message }
}

export const encodeData = (data: Uint8Array, encoding: BinaryEncoding | "binary"): unknown => {
  if (encoding === "base64") return [b64(data), "base64"]
  if (data.length > BASE58_DATA_BYTES_MAX) {
    throw invalidParams("Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.")
  }
  return encoding === "binary" ? base58.decode(data) : [base58.decode(data), "base58"]
}

export interface DataSlice {
  readonly offset: number
  readonly length: number
}

export const accountJson = (a: AccountInfo, encoding: BinaryEncoding | "binary", slice: DataSlice | undefined) => {
  const data = slice === undefined ? a.data : a.data.subarray(Math.min(slice.offset, a.data.length), Math.min(slice.offset + slice.length, a.data.length))
  return {
    data: encodeData(data, encoding),
    executable: a.executable,
    lamports: a.lamports,
    owner: a.owner,
    rentEpoch: RENT_EPOCH_EXEMPT,
    space: a.data.length
  }
}

export const simulationJson = (
  s: SimulationResult,
  accounts: ReadonlyArray<unknown> | null,
  withInner: boolean
) => ({
  err: s.err,
  logs: s.logs,
  accounts,
  unitsConsumed: s.unitsConsumed,
  returnData: null,
  innerInstructions: withInner ? innerInstructionsJson(s.innerInstructions) : null,
  replacementBlockhash:
    s.replacementBlockhash === null
      ? null
      : { blockhash: s.replacementBlockhash.blockhash, lastValidBlockHeight: s.replacementBlockhash.lastValidBlockHeight },
  loadedAccountsDataSize: 0,
  fee: s.fee,
  preBalances: s.preBalances,
  postBalances: s.postBalances,
  preTokenBalances: s.preTokenBalances.map(tokenBalanceJson),
  postTokenBalances: s.postTokenBalances.map(tokenBalanceJson),
  loadedAddresses: { writable: [], readonly: [] }
})

const TRANSACTION_ERROR_TEXT: Readonly<Record<string, string>> = {
  AccountInUse: "Account in use",
  AccountLoadedTwice: "Account loaded twice",
  AccountNotFound: "Attempt to debit an account but found no record of a prior credit.",
  ProgramAccountNotFound: "Attempt to load a program that does not exist",
  InsufficientFundsForFee: "Insufficient funds for fee",
  InvalidAccountForFee: "This account may not be used to pay transaction fees",
  AlreadyProcessed: "This transaction has already been processed",
  BlockhashNotFound: "Blockhash not found",
  SignatureFailure: "Transaction did not pass signature verification",
  SanitizeFailure: "Transaction failed to sanitize accounts offsets correctly",
  UnsupportedVersion: "Transaction version is unsupported",
  AddressLookupTableNotFound: "Transaction loads an address table account that doesn't exist",
  InvalidProgramForExecution: "Attempt to load a program that does not exist"
}

/** The validator's `Display` of a transaction error, as in "Transaction simulation failed: …". */
export const transactionErrorText = (e: TransactionError): string => {
  if (typeof e === "string") return TRANSACTION_ERROR_TEXT[e] ?? e
  if ("InstructionError" in e) return `Error processing Instruction ${e.InstructionError[0]}: ${instructionErrorText(e.InstructionError[1])}`
  if ("InsufficientFundsForRent" in e) {
    return `Transaction results in an account (${e.InsufficientFundsForRent.account_index}) with insufficient funds for rent`
  }
  return `Transaction contains a duplicate instruction (${e.DuplicateInstruction}) that is not allowed`
}
