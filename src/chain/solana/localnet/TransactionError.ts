/**
 * Transaction and instruction errors in Solana's own JSON shapes (what `getSignatureStatuses`,
 * `getTransaction` and `simulateTransaction` carry in `err`): a bare name, `{InstructionError:
 * [index, "Name" | {Custom: n}]}` or `{InsufficientFundsForRent: {account_index}}`. The names are
 * the validator's, so the production adapters decode localnet failures exactly as mainnet's.
 */

export type InstructionErrorName =
  | "GenericError"
  | "InvalidArgument"
  | "InvalidInstructionData"
  | "InvalidAccountData"
  | "AccountDataTooSmall"
  | "InsufficientFunds"
  | "IncorrectProgramId"
  | "MissingRequiredSignature"
  | "AccountAlreadyInitialized"
  | "UninitializedAccount"
  | "UnbalancedInstruction"
  | "ModifiedProgramId"
  | "ExternalAccountLamportSpend"
  | "ExternalAccountDataModified"
  | "ReadonlyLamportChange"
  | "ReadonlyDataModified"
  | "ExecutableModified"
  | "NotEnoughAccountKeys"
  | "AccountDataSizeChanged"
  | "InvalidSeeds"
  | "PrivilegeEscalation"
  | "ProgramFailedToComplete"
  | "ComputationalBudgetExceeded"
  | "CallDepth"
  | "MissingAccount"
  | "ArithmeticOverflow"
  | "IllegalOwner"
  | "InvalidAccountOwner"
  | "UnsupportedProgramId"

export type InstructionErrorValue = InstructionErrorName | { readonly Custom: number }

export type TransactionErrorName =
  | "AccountInUse"
  | "AccountNotFound"
  | "ProgramAccountNotFound"
  | "InsufficientFundsForFee"
  | "InvalidAccountForFee"
  | "AlreadyProcessed"
  | "BlockhashNotFound"
  | "SignatureFailure"
  | "SanitizeFailure"
  | "UnsupportedVersion"
  | "AddressLookupTableNotFound"
  | "InvalidProgramForExecution"
  | "AccountLoadedTwice"

export type TransactionError =
  | TransactionErrorName
  | { readonly InstructionError: readonly [number, InstructionErrorValue] }
  | { readonly InsufficientFundsForRent: { readonly account_index: number } }
  | { readonly DuplicateInstruction: number }

export const instructionError = (index: number, value: InstructionErrorValue): TransactionError => ({
  InstructionError: [index, value]
})

/** The text a validator logs for a failed program: `Program X failed: <this>`. */
export const instructionErrorText = (e: InstructionErrorValue): string => {
  if (typeof e !== "string") return `custom program error: 0x${e.Custom.toString(16)}`
  switch (e) {
    case "MissingRequiredSignature":
      return "missing required signature for instruction"
    case "InvalidInstructionData":
      return "invalid instruction data"
    case "InvalidAccountData":
      return "invalid account data for instruction"
    case "InsufficientFunds":
      return "insufficient funds for instruction"
    case "ComputationalBudgetExceeded":
      return "Computational budget exceeded"
    default:
      return e.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()
  }
}

/** The custom code of an instruction error, if it is one. */
export const customErrorCode = (err: TransactionError | null): number | undefined => {
  if (err === null || typeof err !== "object" || !("InstructionError" in err)) return undefined
  const v = err.InstructionError[1]
  return typeof v === "object" ? v.Custom : undefined
}
