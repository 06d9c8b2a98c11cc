/**
 * Our Solana localnet beside the real SVM: a `Ledger` and a LiteSVM instance (Agave's runtime with
 * the real System, Compute Budget, SPL Token and Associated Token programs) seeded with the same
 * accounts, fed the same signed wire transactions, and compared after each one.
 *
 * What one comparison covers (`runBoth` → `Comparison`, asserted whole by `expectSameOutcome`):
 * - the outcome: refused before execution (no trace, no fee), landed ok, or landed failed with the
 *   same error in Solana's JSON shape (`TransactionError`, instruction index and kind);
 * - the fee charged (ours from the record, LiteSVM's as the lamports that left the transaction's
 *   accounts: LiteSVM burns the fee);
 * - every static account key afterwards: existence, lamports, owner, data, executable (program
 *   accounts only by existence and the executable flag: ours are stubs, theirs are ELF images);
 * - token balances (mint, owner, amount of every token account among the keys) on both sides, and
 *   our record's `postTokenBalances` against LiteSVM's accounts.
 *
 * LiteSVM accepts only its own latest blockhash, ours any blockhash of the last 150 slots, so the
 * twin signs with the ledger's blockhash and turns LiteSVM's blockhash check off; the refusal
 * tests turn it on around an unknown blockhash (`withBlockhashCheck`). Compute units are not
 * compared (ours are a fixed per-program count; docs/solana-program.md "Fidelity"). One error is
 * read through that difference: a BPF program whose meter runs out at a BPF instruction (LiteSVM
 * logs "exceeded CUs meter at BPF instruction") fails ProgramFailedToComplete where ours, counting
 * per program, fails ComputationalBudgetExceeded at the same instruction (`meterExhaustion`).
 */
import {
  type Address,
  getAddressDecoder,
  getAddressEncoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Instruction,
  type TransactionSigner
} from "@solana/kit"
import {
  Account,
  FailedTransactionMetadata,
  InstructionErrorBorshIo,
  InstructionErrorCustom,
  LiteSvm,
  TransactionErrorDuplicateInstruction,
  TransactionErrorInstructionError,
  TransactionErrorInsufficientFundsForRent,
  TransactionErrorProgramExecutionTemporarilyRestricted,
  type TransactionMetadata
} from "litesvm/dist/internal.js"
import { expect } from "vitest"
import { decodeSplTokenAccount } from "../../src/chain/solana/program/accounts/SplTokenAccount.js"
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  COMPUTE_BUDGET_PROGRAM_ID,
  SVC_CURVE_PROGRAM_ID,
  SYSTEM_PROGRAM_ID,
  TOKEN_PROGRAM_ID
} from "../../src/chain/solana/program/ProgramIds.js"
import { type AccountInfo, Ledger, type LedgerOptions, type SubmitResult } from "../../src/chain/solana/localnet/Ledger.js"
import { type SendOptions, signInstructions } from "../../src/chain/solana/localnet/testkit.js"

// Agave's fieldless variants in declaration order (litesvm's `TransactionErrorFieldless` and
// `InstructionErrorFieldless`, which are `const enum`s and so not importable as values).
const TRANSACTION_ERRORS = [
  "AccountInUse",
  "AccountLoadedTwice",
  "AccountNotFound",
  "ProgramAccountNotFound",
  "InsufficientFundsForFee",
  "InvalidAccountForFee",
  "AlreadyProcessed",
  "BlockhashNotFound",
  "CallChainTooDeep",
  "MissingSignatureForFee",
  "InvalidAccountIndex",
  "SignatureFailure",
  "InvalidProgramForExecution",
  "SanitizeFailure",
  "ClusterMaintenance",
  "AccountBorrowOutstanding",
  "WouldExceedMaxBlockCostLimit",
  "UnsupportedVersion",
  "InvalidWritableAccount",
  "WouldExceedMaxAccountCostLimit",
  "WouldExceedAccountDataBlockLimit",
  "TooManyAccountLocks",
  "AddressLookupTableNotFound",
  "InvalidAddressLookupTableOwner",
  "InvalidAddressLookupTableData",
  "InvalidAddressLookupTableIndex",
  "InvalidRentPayingAccount",
  "WouldExceedMaxVoteCostLimit",
  "WouldExceedAccountDataTotalLimit",
  "MaxLoadedAccountsDataSizeExceeded",
  "ResanitizationNeeded",
  "InvalidLoadedAccountsDataSizeLimit",
  "UnbalancedTransaction",
  "ProgramCacheHitMaxLimit",
  "CommitCancelled"
] as const

const INSTRUCTION_ERRORS = [
  "GenericError",
  "InvalidArgument",
  "InvalidInstructionData",
  "InvalidAccountData",
  "AccountDataTooSmall",
  "InsufficientFunds",
  "IncorrectProgramId",
  "MissingRequiredSignature",
  "AccountAlreadyInitialized",
  "UninitializedAccount",
  "UnbalancedInstruction",
  "ModifiedProgramId",
  "ExternalAccountLamportSpend",
  "ExternalAccountDataModified",
  "ReadonlyLamportChange",
  "ReadonlyDataModified",
  "DuplicateAccountIndex",
  "ExecutableModified",
  "RentEpochModified",
  "NotEnoughAccountKeys",
  "AccountDataSizeChanged",
  "AccountNotExecutable",
  "AccountBorrowFailed",
  "AccountBorrowOutstanding",
  "DuplicateAccountOutOfSync",
  "InvalidError",
  "ExecutableDataModified",
  "ExecutableLamportChange",
  "ExecutableAccountNotRentExempt",
  "UnsupportedProgramId",
  "CallDepth",
  "MissingAccount",
  "ReentrancyNotAllowed",
  "MaxSeedLengthExceeded",
  "InvalidSeeds",
  "InvalidRealloc",
  "ComputationalBudgetExceeded",
  "PrivilegeEscalation",
  "ProgramEnvironmentSetupFailure",
  "ProgramFailedToComplete",
  "ProgramFailedToCompile",
  "Immutable",
  "IncorrectAuthority",
  "AccountNotRentExempt",
  "InvalidAccountOwner",
  "ArithmeticOverflow",
  "UnsupportedSysvar",
  "IllegalOwner",
  "MaxAccountsDataAllocationsExceeded",
  "MaxAccountsExceeded",
  "MaxInstructionTraceLengthExceeded",
  "BuiltinProgramsMustConsumeComputeUnits",
  "BorshIoError"
] as const

/** LiteSVM's error objects in Solana's JSON shape (what our ledger reports). */
export const svmErrorJson = (e: ReturnType<FailedTransactionMetadata["err"]>): unknown => {
  if (typeof e === "number") return TRANSACTION_ERRORS[e] ?? `TransactionError#${e}`
  if (e instanceof TransactionErrorInstructionError) {
    const inner = e.err()
    let value: unknown
    if (typeof inner === "number") value = INSTRUCTION_ERRORS[inner] ?? `InstructionError#${inner}`
    else if (inner instanceof InstructionErrorCustom) value = { Custom: inner.code }
    else if (inner instanceof InstructionErrorBorshIo) value = "BorshIoError"
    else value = String(inner)
    return { InstructionError: [e.index, value] }
  }
  if (e instanceof TransactionErrorInsufficientFundsForRent) return { InsufficientFundsForRent: { account_index: e.accountIndex } }
  if (e instanceof TransactionErrorDuplicateInstruction) return { DuplicateInstruction: e.index }
  if (e instanceof TransactionErrorProgramExecutionTemporarilyRestricted) {
    return { ProgramExecutionTemporarilyRestricted: { account_index: e.accountIndex } }
  }
  return String(e)
}

/** LiteSVM's ProgramFailedToComplete from the BPF meter, as the ComputationalBudgetExceeded ours reports. */
const meterExhaustion = (err: unknown, logs: ReadonlyArray<string>): unknown => {
  const ix = (err as { InstructionError?: readonly [number, unknown] } | null)?.InstructionError
  if (ix === undefined || ix[1] !== "ProgramFailedToComplete") return err
  return logs.some((l) => l.endsWith("failed: exceeded CUs meter at BPF instruction")) ? { InstructionError: [ix[0], "ComputationalBudgetExceeded"] } : err
}

const addressEncoder = getAddressEncoder()
const addressDecoder = getAddressDecoder()
const transactionDecoder = getTransactionDecoder()
const messageDecoder = getCompiledTransactionMessageDecoder()
const keyBytes = (a: Address): Uint8Array => new Uint8Array(addressEncoder.encode(a))

export interface AccountState {
  readonly lamports: bigint
  readonly owner: Address
  readonly data: Uint8Array
  readonly executable: boolean
}

export interface TokenHolding {
  readonly address: Address
  readonly mint: Address
  readonly owner: Address
  readonly amount: bigint
}

/** One side's result: refused (no trace), or landed with `err` null on success. */
export interface SideOutcome {
  readonly status: "refused" | "landed"
  readonly err: unknown
  readonly fee: bigint
  readonly accounts: ReadonlyArray<readonly [Address, AccountState | null]>
  readonly tokens: ReadonlyArray<TokenHolding>
}

export interface Comparison {
  readonly keys: ReadonlyArray<Address>
  readonly ours: SideOutcome
  readonly svm: SideOutcome & { readonly computeUnits: bigint; readonly logs: ReadonlyArray<string> }
  /** Our record's postTokenBalances (landed only), as holdings. */
  readonly oursRecordedTokens: ReadonlyArray<TokenHolding> | null
}

const tokenHoldings = (accounts: ReadonlyArray<readonly [Address, AccountState | null]>): TokenHolding[] =>
  accounts.flatMap(([address, a]) => {
    if (a === null || a.owner !== TOKEN_PROGRAM_ID) return []
    const t = decodeSplTokenAccount(a.data)
    return t === undefined ? [] : [{ address, mint: t.mint, owner: t.owner, amount: t.amount }]
  })

/** The static account keys a wire transaction names, or null when it does not decode. */
export const wireKeys = (wire: Uint8Array): ReadonlyArray<Address> | null => {
  try {
    return messageDecoder.decode(transactionDecoder.decode(wire).messageBytes).staticAccounts
  } catch {
    return null
  }
}

const isLegacy = (wire: Uint8Array): boolean => {
  try {
    return messageDecoder.decode(transactionDecoder.decode(wire).messageBytes).version === "legacy"
  } catch {
    return true
  }
}

export class SvmTwin {
  readonly ledger: Ledger
  readonly svm: LiteSvm
  /** Program ids both sides run natively (compared by existence and `executable` only). */
  private readonly programIds: ReadonlySet<string>

  constructor(options: LedgerOptions = {}) {
    this.ledger = new Ledger({ clockMs: () => 1_700_000_000_000, ...options })
    this.svm = new LiteSvm()
    this.svm.setBlockhashCheck(false)
    // Every account of our genesis (and the caller's `genesisAccounts`) that LiteSVM does not
    // hold as a program of its own: wallets, mints, token accounts, svc-curve's config.
    for (const owner of [SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, SVC_CURVE_PROGRAM_ID]) {
      for (const { address, account } of this.ledger.accountsOwnedBy(owner)) this.setSvmAccount(address, account)
    }
    for (const g of options.genesisAccounts ?? []) this.setSvmAccount(g.address, g.account)
    this.programIds = new Set([SYSTEM_PROGRAM_ID, COMPUTE_BUDGET_PROGRAM_ID, TOKEN_PROGRAM_ID, ASSOCIATED_TOKEN_PROGRAM_ID])
  }

  private setSvmAccount(address: Address, a: AccountInfo): void {
    this.svm.setAccount(keyBytes(address), new Account(a.lamports, a.data.slice(), keyBytes(a.owner), a.executable, 0n))
  }

  /** Turns LiteSVM's blockhash check on for `f` (the tests that send an unknown blockhash). */
  withBlockhashCheck<A>(f: () => A): A {
    this.svm.setBlockhashCheck(true)
    try {
      return f()
    } finally {
      this.svm.setBlockhashCheck(false)
    }
  }

  oursAccount(address: Address): AccountState | null {
    return this.ledger.getAccount(address) ?? null
  }

  svmAccount(address: Address): AccountState | null {
    const a = this.svm.getAccount(keyBytes(address))
    if (a === null || (a.lamports() === 0n && a.data().length === 0)) return null
    return { lamports: a.lamports(), owner: addressDecoder.decode(a.owner()), data: new Uint8Array(a.data()), executable: a.executable() }
  }

  /** Signs `instructions` with the ledger's latest blockhash. */
  async sign(feePayer: TransactionSigner, instructions: ReadonlyArray<Instruction>, o: SendOptions = {}): Promise<Uint8Array> {
    return (await signInstructions(this.ledger, feePayer, instructions, o)).wireBytes
  }

  /** Sends the same wire bytes to both and reads back every key on both sides. */
  runBoth(wire: Uint8Array): Comparison {
    return this.compareWith(wire, this.ledger.submit(wire))
  }

  /**
   * A transaction the ledger built and landed itself (the faucet's airdrops and test-token mints):
   * its recorded wire bytes replayed on LiteSVM, which has not moved since the ledger's pre-state.
   */
  expectSameAsLanded(submitted: SubmitResult, label: string): Comparison {
    if (submitted._tag !== "Landed") throw new Error(`${label}: the ledger refused it (${JSON.stringify(submitted.error)})`)
    const c = this.compareWith(this.ledger.getTransaction(submitted.signature)!.wireBytes, submitted)
    expectSameOutcome(this, c, label)
    return c
  }

  private compareWith(wire: Uint8Array, submitted: SubmitResult): Comparison {
    const keys = wireKeys(wire) ?? []
    const svmPre = keys.map((k) => this.svmAccount(k))

    const oursAccounts = keys.map((k) => [k, this.oursAccount(k)] as const)
    const record = submitted._tag === "Landed" ? this.ledger.getTransaction(submitted.signature) : undefined
    const ours: SideOutcome = {
      status: submitted._tag === "Landed" ? "landed" : "refused",
      err: submitted._tag === "Landed" ? submitted.err : submitted.error,
      fee: record?.fee ?? 0n,
      accounts: oursAccounts,
      tokens: tokenHoldings(oursAccounts)
    }

    let result: TransactionMetadata | FailedTransactionMetadata | string
    try {
      result = isLegacy(wire) ? this.svm.sendLegacyTransaction(wire) : this.svm.sendVersionedTransaction(wire)
    } catch (e) {
      result = `threw: ${e instanceof Error ? e.message : String(e)}`
    }
    const svmAccounts = keys.map((k) => [k, this.svmAccount(k)] as const)
    const lamportsOf = (xs: ReadonlyArray<AccountState | null>) => xs.reduce((s, a) => s + (a?.lamports ?? 0n), 0n)
    const burned = lamportsOf(svmPre) - lamportsOf(svmAccounts.map(([, a]) => a))
    const failed = typeof result !== "string" && result instanceof FailedTransactionMetadata
    const meta = typeof result === "string" ? undefined : failed ? (result as FailedTransactionMetadata).meta() : (result as TransactionMetadata)
    const svm = {
      // LiteSVM charges a fee exactly when the transaction was loaded and executed.
      status: burned > 0n ? ("landed" as const) : ("refused" as const),
      err: typeof result === "string" ? result : failed ? meterExhaustion(svmErrorJson((result as FailedTransactionMetadata).err()), meta?.logs() ?? []) : null,
      fee: burned,
      accounts: svmAccounts,
      tokens: tokenHoldings(svmAccounts),
      computeUnits: meta?.computeUnitsConsumed() ?? 0n,
      logs: meta?.logs() ?? []
    }
    return {
      keys,
      ours,
      svm,
      oursRecordedTokens:
        record === undefined
          ? null
          : record.postTokenBalances.map((b) => ({ address: record.accountKeys[b.accountIndex]!, mint: b.mint, owner: b.owner, amount: b.amount }))
    }
  }

  /** The comparison with program accounts reduced to existence and the executable flag. */
  comparable(c: Comparison): { ours: unknown; svm: unknown } {
    const side = (s: SideOutcome) => ({
      status: s.status,
      err: s.err,
      fee: s.fee,
      accounts: s.accounts.map(([k, a]) => [
        k,
        a === null ? null : this.programIds.has(k) ? { executable: a.executable } : { ...a, data: Buffer.from(a.data).toString("hex") }
      ]),
      tokens: s.tokens
    })
    return { ours: side(c.ours), svm: side(c.svm) }
  }

  /** Runs the transaction on both and asserts the two sides agree; returns the comparison. */
  expectSame(wire: Uint8Array, label = "transaction"): Comparison {
    const c = this.runBoth(wire)
    expectSameOutcome(this, c, label)
    return c
  }
}

export const expectSameOutcome = (twin: SvmTwin, c: Comparison, label: string): void => {
  const { ours, svm } = twin.comparable(c)
  const context = `${label}\nLiteSVM logs:\n${c.svm.logs.join("\n")}`
  expect(ours, context).toEqual(svm)
  if (c.oursRecordedTokens !== null) {
    const sort = (xs: ReadonlyArray<TokenHolding>) => [...xs].sort((a, b) => (a.address < b.address ? -1 : 1))
    expect(sort(c.oursRecordedTokens), `${label}: recorded postTokenBalances`).toEqual(sort(c.svm.tokens))
  }
}

