/**
 * A transaction error as Geyser carries it: the validator's `TransactionError` enum, bincode-
 * serialized (u32 LE variant index, then the variant's fields: u8 instruction index, the
 * `InstructionError` variant as u32 LE, `Custom` as u32 LE). Variant indexes are agave's enum
 * order; the Yellowstone client's own decoder (`txErrDecode`) reads them back (pinned by test).
 */
import type { InstructionErrorName, TransactionError, TransactionErrorName } from "../../TransactionError.js"

const TRANSACTION_ERROR_INDEX: Readonly<Record<TransactionErrorName, number>> = {
  AccountInUse: 0,
  AccountLoadedTwice: 1,
  AccountNotFound: 2,
  ProgramAccountNotFound: 3,
  InsufficientFundsForFee: 4,
  InvalidAccountForFee: 5,
  AlreadyProcessed: 6,
  BlockhashNotFound: 7,
  SignatureFailure: 12,
  InvalidProgramForExecution: 13,
  SanitizeFailure: 14,
  UnsupportedVersion: 18,
  AddressLookupTableNotFound: 23
}
const INSTRUCTION_ERROR = 8
const DUPLICATE_INSTRUCTION = 30
const INSUFFICIENT_FUNDS_FOR_RENT = 31

const INSTRUCTION_ERROR_INDEX: Readonly<Record<InstructionErrorName, number>> = {
  GenericError: 0,
  InvalidArgument: 1,
  InvalidInstructionData: 2,
  InvalidAccountData: 3,
  AccountDataTooSmall: 4,
  InsufficientFunds: 5,
  IncorrectProgramId: 6,
  MissingRequiredSignature: 7,
  AccountAlreadyInitialized: 8,
  UninitializedAccount: 9,
  UnbalancedInstruction: 10,
  ModifiedProgramId: 11,
  ExternalAccountLamportSpend: 12,
  ExternalAccountDataModified: 13,
  ReadonlyLamportChange: 14,
  ReadonlyDataModified: 15,
  ExecutableModified: 17,
  NotEnoughAccountKeys: 19,
  AccountDataSizeChanged: 20,
  UnsupportedProgramId: 30,
  CallDepth: 31,
  MissingAccount: 32,
  InvalidSeeds: 35,
  ComputationalBudgetExceeded: 37,
  PrivilegeEscalation: 38,
  ProgramFailedToComplete: 40,
  InvalidAccountOwner: 46,
  ArithmeticOverflow: 47,
  IllegalOwner: 49
}
const CUSTOM = 25

const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff]

export const encodeTransactionErrorBincode = (e: TransactionError): Uint8Array => {
  if (typeof e === "string") return new Uint8Array(u32(TRANSACTION_ERROR_INDEX[e]))
  if ("InstructionError" in e) {
    const [index, inner] = e.InstructionError
    const tail = typeof inner === "string" ? u32(INSTRUCTION_ERROR_INDEX[inner]) : [...u32(CUSTOM), ...u32(inner.Custom)]
    return new Uint8Array([...u32(INSTRUCTION_ERROR), index & 0xff, ...tail])
  }
  if ("InsufficientFundsForRent" in e) return new Uint8Array([...u32(INSUFFICIENT_FUNDS_FOR_RENT), e.InsufficientFundsForRent.account_index & 0xff])
  return new Uint8Array([...u32(DUPLICATE_INSTRUCTION), e.DuplicateInstruction & 0xff])
}
