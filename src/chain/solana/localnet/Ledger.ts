/**
 * The Solana localnet ledger: a deterministic, in-process, synchronous state machine that accepts
 * real wire transactions and executes the System, Compute Budget, SPL Token, Associated Token
 * Account and svc-curve programs. The JSON-RPC, Yellowstone gRPC and block-engine servers are thin
 * adapters over this class: every read they need is a method here, every write is `submit`,
 * `submitBundle` or `requestAirdrop`, and `subscribe`/`updatesSince` feed Geyser.
 *
 * Invariants (pinned by the tests beside it):
 * - a transaction lands only with every signature verified, a blockhash inside the validity window
 *   and a signature never seen in the retained history; otherwise it is Rejected and nothing
 *   changes (no fee);
 * - a landed transaction is atomic: on success every write commits, on failure only the fee payer's
 *   fee does; lamports are conserved (total before = total after + fee);
 * - every stored account with lamports > 0 is rent-exempt for its data length;
 * - a bundle lands whole in one slot, in order, or leaves no trace (no fee, no record);
 * - slots close only by `advanceSlot` (by hand or the clock); blockhash n = sha256(blockhash n−1 ‖
 *   slot n as u64 LE); a transaction is `processed` in the open slot, `confirmed` when its slot
 *   closes, `finalized` `finalizationLagSlots` closed slots later;
 * - updates reach subscribers in commit order: each transaction's account writes, then the
 *   transaction, and slot statuses as they change.
 * Bounds: history `historySlots`, replayable updates `updatesRetainedSlots`, transactions per slot
 * `maxTransactionsPerSlot` (a full slot closes itself), logs `logBytesMax` per transaction,
 * airdrops `maxAirdropLamports`, bundles 5 transactions.
 */
import {
  type Address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  getBase58Decoder,
  getBase58Encoder,
  getTransactionEncoder,
  type Instruction,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type SignatureBytes
} from "@solana/kit"
import { createHash } from "node:crypto"
import {
  getCreateAssociatedTokenInstruction,
  getMintToInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../client/SplInstructions.js"
import { bytesEqual } from "../program/internal/bytes.js"
import { CONFIG_ACCOUNT_SIZE, DEFAULT_CREATOR_SHARE_BPS, DEFAULT_CURVE_FEE_BPS, DEFAULT_POOL_BASE_FEE_BPS, encodeConfig } from "../program/accounts/Config.js"
import {
  encodePriceUpdate,
  PRICE_UPDATE_V2_SIZE,
  PYTH_RECEIVER_PROGRAM_ID,
  PYTH_SOL_USD_ACCOUNT,
  PYTH_SOL_USD_FEED_ID
} from "../program/accounts/PythPriceUpdate.js"
import { decodeSplMint, encodeSplMint, SPL_MINT_SIZE } from "../program/accounts/SplMint.js"
import { decodeSplTokenAccount, encodeSplTokenAccount, SPL_TOKEN_ACCOUNT_SIZE } from "../program/accounts/SplTokenAccount.js"
import { decodeStakePool, encodeStakePool, STAKE_POOL_ACCOUNT_SIZE } from "../program/staking/Accounts.js"
import { findStakePoolSync, findStakeVaultSync, type PoolParams } from "../program/staking/Instructions.js"
import {
  getConfigureStakePoolInstruction,
  getDistributeRewardInstruction,
  stakeInstructions
} from "../client/StakeInstructions.js"
import { findAssociatedTokenAddressSync, findConfigAddressSync } from "../program/Pda.js"
import {
  BPF_LOADER_2_ID,
  BPF_LOADER_UPGRADEABLE_ID,
  NATIVE_LOADER_ID,
  SVC_CURVE_PROGRAM_ID,
  SVC_STAKE_PROGRAM_ID,
  STAKED_SVC_MINT_ADDRESS,
  SVC_MINT_ADDRESS,
  SYSTEM_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  USDC_MINT_ADDRESS,
  WSOL_MINT_ADDRESS
} from "../program/ProgramIds.js"
import {
  DEFAULT_TIP_ACCOUNTS,
  DEV_ADDRESSES,
  FAUCET_ADDRESS,
  FAUCET_SEED,
  KEEPER_ADDRESS,
  PYTH_PUBLISHER_ADDRESS,
  signWithSeed,
  TREASURY_ADDRESS
} from "./DevKeys.js"
import { AccountsDb, AccountsOverlay, type AccountsReader, type AccountsWriter, type StoredAccount } from "./internal/accountsDb.js"
import { LAMPORTS_PER_SOL, minimumBalanceForRentExemption } from "./internal/rent.js"
import { type InnerInstruction, LogCollector, type MutableAccount, type Program, TransactionRuntime } from "./internal/runtime.js"
import {
  type CompiledInstructionRecord,
  firstBadSignature,
  type MessageHeader,
  type ParsedTransaction,
  parseTransaction
} from "./internal/wire.js"
import { AssociatedTokenProgram } from "./programs/AssociatedTokenProgram.js"
import { ComputeBudgetProgram, prioritizationFee, readComputeBudget } from "./programs/ComputeBudgetProgram.js"
import { MemoProgram } from "./programs/MemoProgram.js"
import { PythReceiverProgram } from "./programs/PythReceiverProgram.js"
import { SvcCurveProgram } from "./programs/SvcCurveProgram.js"
import { SvcStakeProgram } from "./programs/SvcStakeProgram.js"
import { SystemProgram } from "./programs/SystemProgram.js"
import { TokenProgram } from "./programs/TokenProgram.js"
import { instructionError, type TransactionError } from "./TransactionError.js"

export type { CompiledInstructionRecord, InnerInstruction, MessageHeader }
export { minimumBalanceForRentExemption, LAMPORTS_PER_SOL }

// --- Public types ----------------------------------------------------------------------------

export interface AccountInfo {
  readonly lamports: bigint
  readonly owner: Address
  readonly data: Uint8Array
  readonly executable: boolean
}

export type Commitment = "processed" | "confirmed" | "finalized"

export interface TokenBalance {
  readonly accountIndex: number
  readonly mint: Address
  readonly owner: Address
  readonly programId: Address
  readonly amount: bigint
  readonly decimals: number
}

export interface InnerInstructions {
  readonly index: number
  readonly instructions: ReadonlyArray<InnerInstruction>
}

export interface TransactionRecord {
  readonly signature: string
  readonly signatures: ReadonlyArray<string>
  readonly slot: bigint
  /** Position inside its slot. */
  readonly index: number
  readonly err: TransactionError | null
  readonly fee: bigint
  readonly version: "legacy" | 0
  readonly wireBytes: Uint8Array
  readonly messageBytes: Uint8Array
  readonly header: MessageHeader
  readonly accountKeys: ReadonlyArray<Address>
  /** Writability after the validator's demotion of program ids. */
  readonly writable: ReadonlyArray<boolean>
  readonly recentBlockhash: string
  readonly instructions: ReadonlyArray<CompiledInstructionRecord>
  readonly innerInstructions: ReadonlyArray<InnerInstructions>
  readonly preBalances: ReadonlyArray<bigint>
  readonly postBalances: ReadonlyArray<bigint>
  readonly preTokenBalances: ReadonlyArray<TokenBalance>
  readonly postTokenBalances: ReadonlyArray<TokenBalance>
  readonly logMessages: ReadonlyArray<string>
  readonly computeUnitsConsumed: bigint
  /** The bundle it landed in, if any. */
  readonly bundleId: string | null
}

export interface BlockRecord {
  readonly slot: bigint
  readonly parentSlot: bigint
  /** Null while the slot is open. */
  readonly blockhash: string | null
  readonly previousBlockhash: string
  readonly blockHeight: bigint
  readonly blockTimeSec: number | null
  readonly commitment: Commitment
  readonly transactions: ReadonlyArray<TransactionRecord>
}

export interface SignatureStatus {
  readonly slot: bigint
  /** Closed slots since, null once finalized (the RPC's convention). */
  readonly confirmations: number | null
  readonly err: TransactionError | null
  readonly confirmationStatus: Commitment
}

export type SubmitResult =
  | {
      readonly _tag: "Landed"
      readonly signature: string
      readonly slot: bigint
      readonly index: number
      readonly err: TransactionError | null
    }
  | {
      readonly _tag: "Rejected"
      readonly signature: string | null
      readonly error: TransactionError
      readonly detail: string
    }

export interface SimulateOptions {
  /** Verify signatures (default false, as simulateTransaction). */
  readonly sigVerify?: boolean
  /** Run against the latest blockhash whatever the transaction names (default false). */
  readonly replaceRecentBlockhash?: boolean
  /** Return these accounts' post-simulation state. */
  readonly accounts?: ReadonlyArray<Address>
}

export interface LatestBlockhash {
  readonly blockhash: string
  readonly lastValidBlockHeight: bigint
  readonly slot: bigint
}

export interface SimulationResult {
  readonly slot: bigint
  readonly err: TransactionError | null
  readonly logs: ReadonlyArray<string>
  readonly unitsConsumed: bigint
  readonly fee: bigint
  readonly accounts: ReadonlyArray<AccountInfo | null> | null
  readonly replacementBlockhash: LatestBlockhash | null
  readonly innerInstructions: ReadonlyArray<InnerInstructions>
  readonly preBalances: ReadonlyArray<bigint>
  readonly postBalances: ReadonlyArray<bigint>
  readonly preTokenBalances: ReadonlyArray<TokenBalance>
  readonly postTokenBalances: ReadonlyArray<TokenBalance>
}

export interface TipCheck {
  /** The bundle's transfers to tip accounts must add up to at least this. */
  readonly minLamports: bigint
}

export const DEFAULT_TIP_CHECK: TipCheck = { minLamports: 1_000n }

export interface BundleOptions {
  /**
   * Indexes of transactions allowed to fail without dropping the bundle: such a transaction lands
   * failed (its fee paid, its other effects undone) and the rest of the bundle carries on. The
   * first transaction (index 0) can never be revertible: it must land (the atomic launch leg).
   */
  readonly revertible?: ReadonlyArray<number>
}
export const MAX_BUNDLE_TRANSACTIONS = 5

export type BundleRejection =
  | "empty"
  | "too_many_transactions"
  | "duplicate_transaction"
  | "no_tip"
  | "transaction_rejected"
  | "transaction_failed"
  | "invalid_revertible"

export type BundleResult =
  | {
      readonly _tag: "Landed"
      readonly bundleId: string
      readonly slot: bigint
      readonly signatures: ReadonlyArray<string>
    }
  | {
      readonly _tag: "Rejected"
      readonly bundleId: string | null
      readonly reason: BundleRejection
      readonly failedIndex: number | null
      readonly error: TransactionError | null
      readonly detail: string
    }

export interface BundleRecord {
  readonly bundleId: string
  readonly slot: bigint
  readonly signatures: ReadonlyArray<string>
}

export interface AccountUpdate {
  readonly kind: "account"
  readonly slot: bigint
  readonly pubkey: Address
  readonly lamports: bigint
  readonly owner: Address
  readonly data: Uint8Array
  readonly executable: boolean
  readonly writeVersion: bigint
  readonly txnSignature: string
}

export type TransactionUpdate = { readonly kind: "transaction"; readonly isVote: false } & TransactionRecord

export interface SlotUpdate {
  readonly kind: "slot"
  readonly slot: bigint
  readonly parent: bigint | null
  readonly status: Commitment
}

export type LedgerUpdate = AccountUpdate | TransactionUpdate | SlotUpdate

export type UpdatesSince =
  | { readonly _tag: "Updates"; readonly updates: ReadonlyArray<LedgerUpdate> }
  | { readonly _tag: "SlotNotRetained"; readonly oldestRetainedSlot: bigint }

export interface GenesisAccount {
  readonly address: Address
  readonly account: AccountInfo
}

export interface LedgerOptions {
  readonly blockhashValiditySlots?: number
  readonly finalizationLagSlots?: number
  readonly historySlots?: number
  readonly updatesRetainedSlots?: number
  readonly slotMs?: number
  readonly maxTransactionsPerSlot?: number
  readonly lamportsPerSignature?: bigint
  readonly tipAccounts?: ReadonlyArray<Address>
  readonly keeper?: Address
  /** Seeds the genesis blockhash (and so every later one). */
  readonly genesisSeed?: string
  readonly genesisAccounts?: ReadonlyArray<GenesisAccount>
  readonly devAccountLamports?: bigint
  readonly maxAirdropLamports?: bigint
  readonly logBytesMax?: number
  /** Wall clock in ms, used only for block times. */
  readonly clockMs?: () => number
  /** Called when a subscriber throws; the ledger carries on. */
  readonly onListenerError?: (error: unknown) => void
  /** svc-stake's pool at genesis (default `DEFAULT_STAKE_POOL_PARAMS`); the faucet is its authority. */
  readonly stakePool?: Partial<PoolParams>
  /** Block time of slot 0 (default: the clock at construction); a replayed ledger passes its first run's. */
  readonly genesisTimeSec?: number
  /** Pyth SOL/USD at genesis (`price · 10^exponent` ± `conf`; default `GENESIS_SOL_USD`), published at slot 0's time. */
  readonly solUsd?: { readonly price: bigint; readonly conf: bigint; readonly exponent: number }
  /**
   * Where the ledger records what changes it (landed transactions and bundles, slot closes), each
   * record before the change is visible to anyone; `replay` applies such records to a new ledger.
   */
  readonly journal?: LedgerJournal
}

/**
 * What changes a ledger, in the order it happened: replaying these on a ledger built with the same
 * options reproduces it exactly (accounts, blockhashes, history, retained updates).
 * Binary fields are base64; `faucetNonce` marks a transaction the faucet built.
 */
export type LedgerRecord =
  | { readonly op: "slot"; readonly timeSec: number }
  | { readonly op: "tx"; readonly wire: string; readonly faucetNonce?: number }
  | { readonly op: "bundle"; readonly wires: ReadonlyArray<string>; readonly minTipLamports: string; readonly revertible?: ReadonlyArray<number> }

export interface LedgerJournal {
  /** Records one change; it must be durable (against a crash of this process) when this returns. */
  append(record: LedgerRecord): void
  /** Called when a slot closes, before the slot's `confirmed` status is emitted. */
  slotClosed(): void
}

export class LedgerReplayError extends Error {
  constructor(readonly index: number, detail: string) {
    super(`ledger journal record ${index} does not replay: ${detail}`)
  }
}

export interface ResolvedLedgerOptions {
  readonly blockhashValiditySlots: number
  readonly finalizationLagSlots: number
  readonly historySlots: number
  readonly updatesRetainedSlots: number
  readonly slotMs: number
  readonly maxTransactionsPerSlot: number
  readonly lamportsPerSignature: bigint
  readonly genesisSeed: string
  readonly devAccountLamports: bigint
  readonly maxAirdropLamports: bigint
  readonly logBytesMax: number
}

export const DEFAULT_LEDGER_OPTIONS: ResolvedLedgerOptions = {
  blockhashValiditySlots: 150,
  finalizationLagSlots: 32,
  historySlots: 10_000,
  updatesRetainedSlots: 1_000,
  slotMs: 400,
  maxTransactionsPerSlot: 5_000,
  lamportsPerSignature: 5_000n,
  genesisSeed: "curvestream-localnet",
  devAccountLamports: 1_000_000n * LAMPORTS_PER_SOL,
  maxAirdropLamports: 1_000_000n * LAMPORTS_PER_SOL,
  logBytesMax: 10_000
}

/** svc-stake's pool at genesis: a 10-minute wait on the localnet (docs/decisions.md), 5 active withdrawals. */
export const DEFAULT_STAKE_POOL_PARAMS: PoolParams = { withdrawalTimelockSeconds: 600n, maxActiveWithdrawals: 5, paused: false }

/** What the faucet holds at genesis: 500M SOL. */
export const FAUCET_GENESIS_LAMPORTS = 500_000_000n * LAMPORTS_PER_SOL
export const KEEPER_GENESIS_LAMPORTS = 10_000n * LAMPORTS_PER_SOL
/** The Pyth publisher's fees for a long run of posts. */
export const PYTH_PUBLISHER_GENESIS_LAMPORTS = 1_000n * LAMPORTS_PER_SOL
/** SOL/USD at genesis: $150.00000000 ± $0.05 (the fixed source's default, so both sources start equal). */
export const GENESIS_SOL_USD = { price: 15_000_000_000n, conf: 5_000_000n, exponent: -8 } as const

// --- Internals -------------------------------------------------------------------------------

interface SlotState {
  readonly slot: bigint
  readonly parent: bigint
  blockhash: string | null
  readonly previousBlockhash: string
  blockTimeSec: number | null
  readonly signatures: string[]
  readonly bundleIds: string[]
}

interface Rejected {
  readonly _tag: "Rejected"
  readonly signature: string | null
  readonly error: TransactionError
  readonly detail: string
}

interface Executed {
  readonly _tag: "Executed"
  readonly tx: ParsedTransaction
  readonly fee: bigint
  readonly err: TransactionError | null
  readonly logs: ReadonlyArray<string>
  readonly unitsConsumed: number
  /** Accounts this transaction changes (fee payer only when it failed), in key order. */
  readonly writes: ReadonlyArray<readonly [Address, StoredAccount | undefined]>
  readonly postState: ReadonlyMap<string, StoredAccount | undefined>
  readonly preBalances: ReadonlyArray<bigint>
  readonly postBalances: ReadonlyArray<bigint>
  readonly preTokenBalances: ReadonlyArray<TokenBalance>
  readonly postTokenBalances: ReadonlyArray<TokenBalance>
  readonly innerInstructions: ReadonlyArray<InnerInstructions>
}

interface ExecuteOptions {
  readonly sigVerify: boolean
  readonly blockhash: "check" | "replace"
  readonly duplicateCheck: boolean
  readonly pendingSignatures?: ReadonlySet<string>
}

const base58Encoder = getBase58Encoder()
const base58Decoder = getBase58Decoder()

const sha256 = (...parts: Uint8Array[]): Uint8Array => {
  const h = createHash("sha256")
  for (const p of parts) h.update(p)
  return new Uint8Array(h.digest())
}

const u64le = (v: bigint): Uint8Array => {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, v, true)
  return b
}

const nextBlockhash = (previous: string, slot: bigint): string =>
  base58Decoder.decode(sha256(new Uint8Array(base58Encoder.encode(previous)), u64le(slot)))

/** Bytes as the ledger holds them (a plain Uint8Array, never a Buffer view). */
const fromBase64 = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, "base64"))

const emptyAccount = (): MutableAccount => ({ lamports: 0n, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false })

const sameAccount = (a: StoredAccount | undefined, b: StoredAccount | undefined): boolean => {
  if (a === undefined || b === undefined) return a === b
  return a.lamports === b.lamports && a.owner === b.owner && a.executable === b.executable && bytesEqual(a.data, b.data)
}

const copyInfo = (a: StoredAccount): AccountInfo => ({ lamports: a.lamports, owner: a.owner, data: a.data.slice(), executable: a.executable })

export type ProgramAccountsFilter = { readonly dataSize: number } | { readonly memcmp: { readonly offset: number; readonly bytes: Uint8Array } }

/** The most accounts one `getProgramAccounts` returns (a node bounds its response too). */
export const PROGRAM_ACCOUNTS_MAX = 10_000

const passes = (data: Uint8Array, f: ProgramAccountsFilter): boolean =>
  "dataSize" in f
    ? data.length === f.dataSize
    : f.memcmp.offset + f.memcmp.bytes.length <= data.length && bytesEqual(data.subarray(f.memcmp.offset, f.memcmp.offset + f.memcmp.bytes.length), f.memcmp.bytes)

const rejected = (signature: string | null, error: TransactionError, detail: string): Rejected => ({ _tag: "Rejected", signature, error, detail })

const PROGRAMS: ReadonlyArray<{ program: Program; loader: Address }> = [
  { program: SystemProgram, loader: NATIVE_LOADER_ID },
  { program: ComputeBudgetProgram, loader: NATIVE_LOADER_ID },
  { program: TokenProgram, loader: BPF_LOADER_2_ID },
  { program: AssociatedTokenProgram, loader: BPF_LOADER_2_ID },
  { program: SvcCurveProgram, loader: BPF_LOADER_UPGRADEABLE_ID },
  { program: SvcStakeProgram, loader: BPF_LOADER_UPGRADEABLE_ID },
  { program: MemoProgram, loader: BPF_LOADER_2_ID },
  { program: PythReceiverProgram, loader: BPF_LOADER_UPGRADEABLE_ID }
]

const FAUCET_UNIT_LIMIT_BASE = 200_000

// --- The ledger ------------------------------------------------------------------------------

export class Ledger {
  readonly options: ResolvedLedgerOptions
  readonly tipAccounts: ReadonlyArray<Address>
  readonly keeper: Address
  readonly faucet: Address = FAUCET_ADDRESS

  private readonly db = new AccountsDb()
  private readonly programs = new Map<string, Program>()
  private readonly programIds = new Set<string>()
  private readonly clockMs: () => number
  private readonly stakePoolParams: Partial<PoolParams>
  private readonly genesisTimeSec: number
  private readonly genesisSolUsd: { readonly price: bigint; readonly conf: bigint; readonly exponent: number }
  private readonly onListenerError: (error: unknown) => void

  private openSlot = 1n
  private lastClosedSlot = 0n
  private lastBlockhash: string
  private readonly recentBlockhashes = new Map<string, bigint>()
  private readonly slots = new Map<bigint, SlotState>()
  private readonly records = new Map<string, TransactionRecord>()
  /** Each address's landed signatures in landing order (oldest first), pruned with the history. */
  private readonly byAddress = new Map<string, string[]>()
  private readonly bundles = new Map<string, BundleRecord>()
  private writeVersion = 0n
  private faucetNonce = 0
  private readonly listeners = new Set<(update: LedgerUpdate) => void>()
  private retained: Array<{ readonly emittedIn: bigint; readonly update: LedgerUpdate }> = []
  private retainedHead = 0
  private timer: ReturnType<typeof setInterval> | undefined
  private readonly journal: LedgerJournal | undefined
  private replaying = false

  constructor(options: LedgerOptions = {}) {
    const o: ResolvedLedgerOptions = {
      blockhashValiditySlots: options.blockhashValiditySlots ?? DEFAULT_LEDGER_OPTIONS.blockhashValiditySlots,
      finalizationLagSlots: options.finalizationLagSlots ?? DEFAULT_LEDGER_OPTIONS.finalizationLagSlots,
      historySlots: options.historySlots ?? DEFAULT_LEDGER_OPTIONS.historySlots,
      updatesRetainedSlots: options.updatesRetainedSlots ?? DEFAULT_LEDGER_OPTIONS.updatesRetainedSlots,
      slotMs: options.slotMs ?? DEFAULT_LEDGER_OPTIONS.slotMs,
      maxTransactionsPerSlot: options.maxTransactionsPerSlot ?? DEFAULT_LEDGER_OPTIONS.maxTransactionsPerSlot,
      lamportsPerSignature: options.lamportsPerSignature ?? DEFAULT_LEDGER_OPTIONS.lamportsPerSignature,
      genesisSeed: options.genesisSeed ?? DEFAULT_LEDGER_OPTIONS.genesisSeed,
      devAccountLamports: options.devAccountLamports ?? DEFAULT_LEDGER_OPTIONS.devAccountLamports,
      maxAirdropLamports: options.maxAirdropLamports ?? DEFAULT_LEDGER_OPTIONS.maxAirdropLamports,
      logBytesMax: options.logBytesMax ?? DEFAULT_LEDGER_OPTIONS.logBytesMax
    }
    const positive = (name: keyof ResolvedLedgerOptions, min: number) => {
      const v = o[name]
      if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw new RangeError(`${name} must be an integer ≥ ${min}`)
    }
    positive("blockhashValiditySlots", 1)
    positive("finalizationLagSlots", 0)
    positive("updatesRetainedSlots", 1)
    positive("slotMs", 1)
    positive("maxTransactionsPerSlot", MAX_BUNDLE_TRANSACTIONS)
    positive("logBytesMax", 100)
    // Duplicate detection reads the history, so it must cover every still-valid blockhash.
    positive("historySlots", o.blockhashValiditySlots + 1)
    this.options = o
    this.tipAccounts = options.tipAccounts ?? DEFAULT_TIP_ACCOUNTS
    if (this.tipAccounts.length === 0) throw new RangeError("at least one tip account")
    this.keeper = options.keeper ?? KEEPER_ADDRESS
    this.clockMs = options.clockMs ?? (() => Date.now())
    this.onListenerError = options.onListenerError ?? ((e) => process.emitWarning(`ledger subscriber threw: ${String(e)}`))
    this.journal = options.journal
    this.stakePoolParams = options.stakePool ?? {}
    this.genesisTimeSec = options.genesisTimeSec ?? Math.floor(this.clockMs() / 1000)
    this.genesisSolUsd = options.solUsd ?? GENESIS_SOL_USD

    for (const { program } of PROGRAMS) {
      this.programs.set(program.programId, program)
      this.programIds.add(program.programId)
    }
    this.writeGenesis(options.genesisAccounts ?? [])

    const genesisHash = base58Decoder.decode(sha256(new TextEncoder().encode(`curvestream/localnet/genesis/${o.genesisSeed}`)))
    this.lastBlockhash = genesisHash
    this.recentBlockhashes.set(genesisHash, 0n)
    this.slots.set(0n, {
      slot: 0n,
      parent: 0n,
      blockhash: genesisHash,
      previousBlockhash: genesisHash,
      blockTimeSec: this.genesisTimeSec,
      signatures: [],
      bundleIds: []
    })
    this.openNewSlot(1n, 0n, genesisHash)
  }

  private writeGenesis(extra: ReadonlyArray<GenesisAccount>): void {
    const put = (address: Address, account: StoredAccount) => this.db.set(address, account)
    const rent = minimumBalanceForRentExemption
    for (const { program, loader } of PROGRAMS) {
      put(program.programId, { lamports: rent(0), owner: loader, data: new Uint8Array(0), executable: true })
    }
    const mint = (address: Address, decimals: number, authority: Address | null) =>
      put(address, {
        lamports: rent(SPL_MINT_SIZE),
        owner: TOKEN_PROGRAM_ID,
        data: encodeSplMint({ mintAuthority: authority, supply: 0n, decimals, freezeAuthority: null }),
        executable: false
      })
    mint(WSOL_MINT_ADDRESS, 9, null)
    mint(USDC_MINT_ADDRESS, 6, FAUCET_ADDRESS)
    mint(SVC_MINT_ADDRESS, 6, FAUCET_ADDRESS)
    // svc-stake's pool: the staked receipt's mint authority, its vault of platform tokens.
    const pool = findStakePoolSync()
    const vault = findStakeVaultSync(pool.address)
    mint(STAKED_SVC_MINT_ADDRESS, 6, pool.address)
    put(pool.address, {
      lamports: rent(STAKE_POOL_ACCOUNT_SIZE),
      owner: SVC_STAKE_PROGRAM_ID,
      data: encodeStakePool({
        bump: pool.bump,
        ...DEFAULT_STAKE_POOL_PARAMS,
        ...this.stakePoolParams,
        authority: FAUCET_ADDRESS,
        platformMint: SVC_MINT_ADDRESS,
        receiptMint: STAKED_SVC_MINT_ADDRESS,
        vault: vault.address,
        totalStakedRaw: 0n,
        pendingWithdrawalRaw: 0n,
        nextRewardId: 0n
      }),
      executable: false
    })
    put(vault.address, {
      lamports: rent(SPL_TOKEN_ACCOUNT_SIZE),
      owner: TOKEN_PROGRAM_ID,
      data: encodeSplTokenAccount({
        mint: SVC_MINT_ADDRESS,
        owner: pool.address,
        amount: 0n,
        delegate: null,
        state: "initialized",
        isNative: null,
        delegatedAmount: 0n,
        closeAuthority: null
      }),
      executable: false
    })
    const config = findConfigAddressSync()
    put(config.address, {
      lamports: rent(CONFIG_ACCOUNT_SIZE),
      owner: SVC_CURVE_PROGRAM_ID,
      data: encodeConfig({
        bump: config.bump,
        keeper: this.keeper,
        treasury: TREASURY_ADDRESS,
        curveFeeBps: DEFAULT_CURVE_FEE_BPS,
        creatorShareBps: DEFAULT_CREATOR_SHARE_BPS,
        poolBaseFeeBps: DEFAULT_POOL_BASE_FEE_BPS
      }),
      executable: false
    })
    const wallet = (address: Address, lamports: bigint) =>
      put(address, { lamports, owner: SYSTEM_PROGRAM_ID, data: new Uint8Array(0), executable: false })
    wallet(FAUCET_ADDRESS, FAUCET_GENESIS_LAMPORTS)
    wallet(this.keeper, KEEPER_GENESIS_LAMPORTS)
    wallet(TREASURY_ADDRESS, rent(0))
    wallet(PYTH_PUBLISHER_ADDRESS, PYTH_PUBLISHER_GENESIS_LAMPORTS)
    // Pyth's SOL/USD price account at its mainnet address, owned by the receiver (moved by `localnet_post_price`).
    const solUsd = this.genesisSolUsd
    const genesisSec = BigInt(this.genesisTimeSec)
    put(PYTH_SOL_USD_ACCOUNT, {
      lamports: rent(PRICE_UPDATE_V2_SIZE),
      owner: PYTH_RECEIVER_PROGRAM_ID,
      data: encodePriceUpdate({
        writeAuthority: PYTH_PUBLISHER_ADDRESS,
        verificationLevel: { kind: "full" },
        feedId: PYTH_SOL_USD_FEED_ID,
        ...solUsd,
        publishTimeSec: genesisSec,
        prevPublishTimeSec: genesisSec,
        emaPrice: solUsd.price,
        emaConf: solUsd.conf,
        postedSlot: 0n
      }),
      executable: false
    })
    for (const dev of DEV_ADDRESSES) wallet(dev, this.options.devAccountLamports)
    for (const tip of this.tipAccounts) wallet(tip, rent(0))
    for (const g of extra) put(g.address, { ...g.account, data: g.account.data.slice() })
  }

  // --- Slots and commitment ------------------------------------------------------------------

  /** The open slot: where transactions land now (commitment `processed`). */
  get slot(): bigint {
    return this.openSlot
  }

  get confirmedSlot(): bigint {
    return this.lastClosedSlot
  }

  get finalizedSlot(): bigint {
    const f = this.lastClosedSlot - BigInt(this.options.finalizationLagSlots)
    return f > 0n ? f : 0n
  }

  slotAt(commitment: Commitment = "finalized"): bigint {
    return commitment === "processed" ? this.openSlot : commitment === "confirmed" ? this.lastClosedSlot : this.finalizedSlot
  }

  /**
   * The programs' clock (the Clock sysvar's `unix_timestamp`): the block time of the last closed
   * slot. Deterministic, so a journal replays the same results.
   */
  get clockUnixSec(): bigint {
    return BigInt(this.slots.get(this.lastClosedSlot)?.blockTimeSec ?? 0)
  }

  /** Block height equals slot here: the localnet never skips a slot. */
  blockHeightAt(commitment: Commitment = "finalized"): bigint {
    return this.slotAt(commitment)
  }

  commitmentOfSlot(slot: bigint): Commitment | undefined {
    if (slot > this.openSlot || slot < 0n) return undefined
    if (slot === this.openSlot) return "processed"
    return slot <= this.finalizedSlot ? "finalized" : "confirmed"
  }

  /** The newest blockhash: the last closed slot's (or the finalized slot's, at `finalized`). */
  latestBlockhash(commitment: Commitment = "confirmed"): LatestBlockhash {
    const slot = commitment === "finalized" ? this.finalizedSlot : this.lastClosedSlot
    const blockhash = this.slots.get(slot)?.blockhash ?? this.lastBlockhash
    const produced = this.recentBlockhashes.get(blockhash) ?? slot
    return { blockhash, lastValidBlockHeight: produced + BigInt(this.options.blockhashValiditySlots), slot }
  }

  isBlockhashValid(blockhash: string): boolean {
    const produced = this.recentBlockhashes.get(blockhash)
    return produced !== undefined && this.openSlot <= produced + BigInt(this.options.blockhashValiditySlots)
  }

  /** Closes the open slot and opens the next; returns the closed block. */
  advanceSlot(): BlockRecord {
    const timeSec = Math.floor(this.clockMs() / 1000)
    this.record({ op: "slot", timeSec })
    return this.closeSlot(timeSec)
  }

  private closeSlot(timeSec: number): BlockRecord {
    const closing = this.openSlot
    const state = this.slots.get(closing)!
    const blockhash = nextBlockhash(this.lastBlockhash, closing)
    state.blockhash = blockhash
    state.blockTimeSec = timeSec
    if (!this.replaying) this.journal?.slotClosed()
    this.lastBlockhash = blockhash
    this.lastClosedSlot = closing
    this.recentBlockhashes.set(blockhash, closing)
    const oldestValid = closing + 1n - BigInt(this.options.blockhashValiditySlots)
    for (const [hash, produced] of this.recentBlockhashes) {
      if (produced < oldestValid) this.recentBlockhashes.delete(hash)
      else break
    }
    this.emit([{ kind: "slot", slot: closing, parent: state.parent, status: "confirmed" }])
    const finalized = closing - BigInt(this.options.finalizationLagSlots)
    if (finalized >= 1n) this.emit([{ kind: "slot", slot: finalized, parent: finalized - 1n, status: "finalized" }])
    this.openNewSlot(closing + 1n, closing, blockhash)
    this.pruneHistory()
    this.pruneUpdates()
    return this.blockOf(state)
  }

  advanceSlots(count: number): void {
    for (let i = 0; i < count; i++) this.advanceSlot()
  }

  /** Closes a slot every `slotMs`; tests leave it stopped and drive slots by hand. */
  start(): void {
    if (this.timer !== undefined) return
    this.timer = setInterval(() => this.advanceSlot(), this.options.slotMs)
    this.timer.unref()
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  get running(): boolean {
    return this.timer !== undefined
  }

  private openNewSlot(slot: bigint, parent: bigint, previousBlockhash: string): void {
    this.openSlot = slot
    this.slots.set(slot, { slot, parent, blockhash: null, previousBlockhash, blockTimeSec: null, signatures: [], bundleIds: [] })
    this.emit([{ kind: "slot", slot, parent, status: "processed" }])
  }

  private pruneHistory(): void {
    const oldest = this.openSlot - BigInt(this.options.historySlots)
    for (const [slot, state] of this.slots) {
      if (slot >= oldest) break
      for (const sig of state.signatures) {
        const r = this.records.get(sig)
        // Pruned oldest first, so each of its addresses' lists starts with it.
        for (const key of r === undefined ? [] : new Set(r.accountKeys)) {
          const list = this.byAddress.get(key)
          if (list?.[0] === sig) list.shift()
          if (list !== undefined && list.length === 0) this.byAddress.delete(key)
        }
        this.records.delete(sig)
      }
      for (const id of state.bundleIds) this.bundles.delete(id)
      this.slots.delete(slot)
    }
  }

  // --- Accounts ------------------------------------------------------------------------------

  getAccount(address: Address): AccountInfo | undefined {
    const a = this.db.get(address)
    return a === undefined ? undefined : copyInfo(a)
  }

  getBalance(address: Address): bigint {
    return this.db.get(address)?.lamports ?? 0n
  }

  /**
   * Accounts `programId` owns whose data passes every filter (`dataSize`, `memcmp` bytes at an
   * offset), sorted by address; at most `limit` (default PROGRAM_ACCOUNTS_MAX), else a RangeError.
   */
  getProgramAccounts(programId: Address, filters: ReadonlyArray<ProgramAccountsFilter> = [], limit = PROGRAM_ACCOUNTS_MAX): Array<{ address: Address; account: AccountInfo }> {
    const out: Array<{ address: Address; account: AccountInfo }> = []
    for (const [address, a] of this.db.entries()) {
      if (a.owner !== programId || !filters.every((f) => passes(a.data, f))) continue
      if (out.length === limit) throw new RangeError(`more than ${limit} accounts match`)
      out.push({ address: address as Address, account: copyInfo(a) })
    }
    return out.sort((x, y) => (x.address < y.address ? -1 : x.address > y.address ? 1 : 0))
  }

  getMultipleAccounts(addresses: ReadonlyArray<Address>): Array<AccountInfo | undefined> {
    return addresses.map((a) => this.getAccount(a))
  }

  /** Every account owned by `owner` (a scan: the localnet holds thousands, not millions). */
  accountsOwnedBy(owner: Address): Array<{ readonly address: Address; readonly account: AccountInfo }> {
    const out: Array<{ address: Address; account: AccountInfo }> = []
    for (const [address, a] of this.db.entries()) if (a.owner === owner) out.push({ address: address as Address, account: copyInfo(a) })
    return out
  }

  get accountCount(): number {
    return this.db.size
  }

  minimumBalanceForRentExemption(dataLen: number): bigint {
    return minimumBalanceForRentExemption(dataLen)
  }

  // --- Transactions --------------------------------------------------------------------------

  /** sendTransaction: lands the transaction in the open slot, or rejects it without a trace. */
  submit(wireBytes: Uint8Array): SubmitResult {
    return this.submitRecorded(wireBytes, undefined)
  }

  private submitRecorded(wireBytes: Uint8Array, faucetNonce: number | undefined): SubmitResult {
    const parsed = parseTransaction(wireBytes, this.programIds)
    if (parsed._tag === "Err") return rejected(null, parsed.error, parsed.detail)
    this.ensureRoom(1)
    // A replayed transaction was verified when it first landed.
    const ex = this.execute(this.db, parsed.tx, { sigVerify: !this.replaying, blockhash: "check", duplicateCheck: true })
    if (ex._tag === "Rejected") return ex
    this.record({ op: "tx", wire: Buffer.from(wireBytes).toString("base64"), ...(faucetNonce === undefined ? {} : { faucetNonce }) })
    const record = this.land(this.db, ex, null)
    return { _tag: "Landed", signature: record.signature, slot: record.slot, index: record.index, err: record.err }
  }

  /** simulateTransaction: runs against the current state and commits nothing. */
  simulate(wireBytes: Uint8Array, options: SimulateOptions = {}): SimulationResult {
    const base: Omit<SimulationResult, "err"> = {
      slot: this.openSlot,
      logs: [],
      unitsConsumed: 0n,
      fee: 0n,
      accounts: null,
      replacementBlockhash: null,
      innerInstructions: [],
      preBalances: [],
      postBalances: [],
      preTokenBalances: [],
      postTokenBalances: []
    }
    const parsed = parseTransaction(wireBytes, this.programIds)
    if (parsed._tag === "Err") return { ...base, err: parsed.error }
    const replace = options.replaceRecentBlockhash ?? false
    const ex = this.execute(this.db, parsed.tx, {
      sigVerify: options.sigVerify ?? false,
      blockhash: replace ? "replace" : "check",
      duplicateCheck: false
    })
    const replacementBlockhash = replace ? this.latestBlockhash() : null
    if (ex._tag === "Rejected") return { ...base, err: ex.error, replacementBlockhash }
    const view = new AccountsOverlay(this.db)
    for (const [k, a] of ex.writes) view.set(k, a)
    return {
      slot: this.openSlot,
      err: ex.err,
      logs: ex.logs,
      unitsConsumed: BigInt(ex.unitsConsumed),
      fee: ex.fee,
      accounts:
        options.accounts === undefined
          ? null
          : options.accounts.map((a) => {
              const s = view.get(a)
              return s === undefined ? null : copyInfo(s)
            }),
      replacementBlockhash,
      innerInstructions: ex.innerInstructions,
      preBalances: ex.preBalances,
      postBalances: ex.postBalances,
      preTokenBalances: ex.preTokenBalances,
      postTokenBalances: ex.postTokenBalances
    }
  }

  /**
   * A block-engine bundle: up to 5 transactions executed in order in one slot, all or none. Any
   * rejection or failed transaction leaves no trace (no fee, no record, no update), except a failure
   * of a transaction `options.revertible` names: it lands failed and the bundle carries on. The bundle must
   * transfer at least `tipCheck.minLamports` in total to the tip accounts (System Transfer,
   * top-level). The id is sha256 of the transactions' first signatures, hex (as Jito's).
   */
  submitBundle(transactions: ReadonlyArray<Uint8Array>, tipCheck: TipCheck = DEFAULT_TIP_CHECK, options: BundleOptions = {}): BundleResult {
    const refuse = (
      reason: BundleRejection,
      detail: string,
      bundleId: string | null = null,
      failedIndex: number | null = null,
      error: TransactionError | null = null
    ): BundleResult => ({ _tag: "Rejected", bundleId, reason, failedIndex, error, detail })
    if (transactions.length === 0) return refuse("empty", "a bundle needs at least one transaction")
    if (transactions.length > MAX_BUNDLE_TRANSACTIONS) {
      return refuse("too_many_transactions", `a bundle holds at most ${MAX_BUNDLE_TRANSACTIONS} transactions, got ${transactions.length}`)
    }
    const revertible = new Set(options.revertible ?? [])
    for (const i of revertible) {
      if (!Number.isSafeInteger(i) || i < 1 || i >= transactions.length) {
        return refuse("invalid_revertible", `revertible index ${i} must name a transaction after the first (1..${transactions.length - 1})`)
      }
    }
    const txs: ParsedTransaction[] = []
    for (let i = 0; i < transactions.length; i++) {
      const parsed = parseTransaction(transactions[i]!, this.programIds)
      if (parsed._tag === "Err") return refuse("transaction_rejected", parsed.detail, null, i, parsed.error)
      txs.push(parsed.tx)
    }
    const bundleId = createHash("sha256")
      .update(Buffer.concat(txs.map((t) => Buffer.from(t.signatureBytes[0] ?? new Uint8Array(64)))))
      .digest("hex")
    if (new Set(txs.map((t) => t.signature)).size !== txs.length) {
      return refuse("duplicate_transaction", "a transaction appears twice in the bundle", bundleId)
    }
    const tipped = txs.reduce((sum, t) => sum + this.tipLamports(t), 0n)
    if (tipped < tipCheck.minLamports) {
      return refuse("no_tip", `bundle tips ${tipped} lamports to tip accounts, at least ${tipCheck.minLamports} required`, bundleId)
    }
    this.ensureRoom(txs.length)
    const overlay = new AccountsOverlay(this.db)
    const pending = new Set<string>()
    const executed: Executed[] = []
    for (let i = 0; i < txs.length; i++) {
      const ex = this.execute(overlay, txs[i]!, { sigVerify: !this.replaying, blockhash: "check", duplicateCheck: true, pendingSignatures: pending })
      if (ex._tag === "Rejected") return refuse("transaction_rejected", ex.detail, bundleId, i, ex.error)
      if (ex.err !== null && !revertible.has(i)) return refuse("transaction_failed", `transaction ${i} failed`, bundleId, i, ex.err)
      for (const [k, a] of ex.writes) overlay.set(k, a)
      pending.add(ex.tx.signature)
      executed.push(ex)
    }
    this.record({
      op: "bundle",
      wires: transactions.map((t) => Buffer.from(t).toString("base64")),
      minTipLamports: tipCheck.minLamports.toString(),
      ...(revertible.size === 0 ? {} : { revertible: [...revertible].sort((a, b) => a - b) })
    })
    const signatures = executed.map((ex) => this.land(this.db, ex, bundleId).signature)
    const record: BundleRecord = { bundleId, slot: this.openSlot, signatures }
    this.bundles.set(bundleId, record)
    this.slots.get(this.openSlot)!.bundleIds.push(bundleId)
    return { _tag: "Landed", bundleId, slot: record.slot, signatures }
  }

  getBundle(bundleId: string): BundleRecord | undefined {
    return this.bundles.get(bundleId)
  }

  getTransaction(signature: string): TransactionRecord | undefined {
    return this.records.get(signature)
  }

  /**
   * The retained transactions naming `address` among their account keys (`getSignaturesForAddress`),
   * newest first (landing order, descending), in slots up to `commitment`'s: strictly older than
   * `before` (none when `before` is not retained, as a validator answers), stopping at `until`
   * (excluded), at most `limit`.
   */
  signaturesForAddress(
    address: Address,
    options: { readonly limit: number; readonly before?: string; readonly until?: string; readonly commitment?: Commitment }
  ): TransactionRecord[] {
    const list = this.byAddress.get(address) ?? []
    const top = this.slotAt(options.commitment ?? "finalized")
    let i = list.length - 1
    if (options.before !== undefined) {
      if (!this.records.has(options.before)) return []
      while (i >= 0 && list[i] !== options.before) i--
      i--
    }
    const out: TransactionRecord[] = []
    for (; i >= 0 && out.length < options.limit; i--) {
      const sig = list[i]!
      if (sig === options.until) break
      const r = this.records.get(sig)
      if (r !== undefined && r.slot <= top) out.push(r)
    }
    return out
  }

  getSignatureStatus(signature: string): SignatureStatus | undefined {
    const r = this.records.get(signature)
    if (r === undefined) return undefined
    const commitment = this.commitmentOfSlot(r.slot) ?? "processed"
    return {
      slot: r.slot,
      confirmations: commitment === "finalized" ? null : commitment === "processed" ? 0 : Number(this.lastClosedSlot - r.slot + 1n),
      err: r.err,
      confirmationStatus: commitment
    }
  }

  getSignatureStatuses(signatures: ReadonlyArray<string>): Array<SignatureStatus | null> {
    return signatures.map((s) => this.getSignatureStatus(s) ?? null)
  }

  getBlock(slot: bigint): BlockRecord | undefined {
    const s = this.slots.get(slot)
    return s === undefined ? undefined : this.blockOf(s)
  }

  /** The oldest slot whose block and transactions are still kept. */
  get oldestHistorySlot(): bigint {
    for (const slot of this.slots.keys()) return slot
    return this.openSlot
  }

  private blockOf(s: SlotState): BlockRecord {
    return {
      slot: s.slot,
      parentSlot: s.parent,
      blockhash: s.blockhash,
      previousBlockhash: s.previousBlockhash,
      blockHeight: s.slot,
      blockTimeSec: s.blockTimeSec,
      commitment: this.commitmentOfSlot(s.slot) ?? "finalized",
      transactions: s.signatures.flatMap((sig) => {
        const r = this.records.get(sig)
        return r === undefined ? [] : [r]
      })
    }
  }

  // --- Faucet --------------------------------------------------------------------------------

  /** requestAirdrop: a real System transfer from the faucet, signed by the ledger. */
  requestAirdrop(to: Address, lamports: bigint): SubmitResult {
    if (lamports <= 0n || lamports > this.options.maxAirdropLamports) {
      throw new RangeError(`airdrop must be 1..${this.options.maxAirdropLamports} lamports`)
    }
    return this.submitFaucet([getTransferSolInstruction({ from: FAUCET_ADDRESS, to, lamports })])
  }

  /**
   * Mints localnet USDC or SVC (the faucet is their mint authority) to `owner`'s ATA, creating it.
   * The staked receipt is minted only by svc-stake: for it the faucet mints SVC to itself, stakes
   * it and transfers the receipt, so the pool's vault backs every receipt unit.
   */
  mintTestTokens(mint: Address, owner: Address, amountRaw: bigint): SubmitResult {
    const ata = findAssociatedTokenAddressSync(owner, mint).address
    if (mint === STAKED_SVC_MINT_ADDRESS) {
      const faucetReceipt = findAssociatedTokenAddressSync(FAUCET_ADDRESS, mint).address
      return this.submitFaucet([
        ...this.faucetMintTo(SVC_MINT_ADDRESS, amountRaw),
        ...stakeInstructions({ owner: FAUCET_ADDRESS, amountRaw }),
        getCreateAssociatedTokenInstruction({ payer: FAUCET_ADDRESS, ata, owner, mint }),
        getTokenTransferInstruction({ source: faucetReceipt, destination: ata, authority: FAUCET_ADDRESS, amount: amountRaw })
      ])
    }
    return this.submitFaucet([
      getCreateAssociatedTokenInstruction({ payer: FAUCET_ADDRESS, ata, owner, mint }),
      getMintToInstruction({ mint, destination: ata, authority: FAUCET_ADDRESS, amount: amountRaw })
    ])
  }

  private faucetMintTo(mint: Address, amountRaw: bigint): Instruction[] {
    const ata = findAssociatedTokenAddressSync(FAUCET_ADDRESS, mint).address
    return [
      getCreateAssociatedTokenInstruction({ payer: FAUCET_ADDRESS, ata, owner: FAUCET_ADDRESS, mint }),
      getMintToInstruction({ mint, destination: ata, authority: FAUCET_ADDRESS, amount: amountRaw })
    ]
  }

  /** svc-stake's pool as it is now (undefined only if someone could have closed it: never). */
  stakePool() {
    const a = this.db.get(findStakePoolSync().address)
    return a === undefined ? undefined : decodeStakePool(a.data)
  }

  /** Reconfigures svc-stake's pool (the faucet is its authority): wait, active-withdrawal bound, pause. */
  configureStakePool(params: PoolParams): SubmitResult {
    return this.submitFaucet([getConfigureStakePoolInstruction({ authority: FAUCET_ADDRESS, ...params })])
  }

  /**
   * The reward distributor: mints `amountRaw` of `mint` (USDC or SVC) to the faucet and records it
   * as reward `rewardId` (the pool's next id) owed to `owner`.
   */
  distributeStakingReward(owner: Address, mint: Address, amountRaw: bigint): SubmitResult & { readonly rewardId: bigint } {
    const rewardId = this.stakePool()?.nextRewardId ?? 0n
    const result = this.submitFaucet([
      ...this.faucetMintTo(mint, amountRaw),
      getDistributeRewardInstruction({ authority: FAUCET_ADDRESS, rewardId, owner, mint, amountRaw })
    ])
    return { ...result, rewardId }
  }

  private submitFaucet(instructions: ReadonlyArray<Instruction>): SubmitResult {
    const nonce = this.faucetNonce++
    return this.submitRecorded(this.faucetTransaction(instructions, nonce % 100_000), nonce)
  }

  private faucetTransaction(instructions: ReadonlyArray<Instruction>, nonce: number): Uint8Array {
    // A varying unit limit keeps two identical requests in one blockhash window distinct.
    const { blockhash, lastValidBlockHeight } = this.latestBlockhash()
    const message = setTransactionMessageComputeUnitLimit(
      FAUCET_UNIT_LIMIT_BASE + nonce,
      appendTransactionMessageInstructions(
        instructions,
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash as Blockhash, lastValidBlockHeight },
          setTransactionMessageFeePayer(FAUCET_ADDRESS, createTransactionMessage({ version: "legacy" }))
        )
      )
    )
    const compiled = compileTransaction(message)
    const signature = signWithSeed(FAUCET_SEED, new Uint8Array(compiled.messageBytes)) as SignatureBytes
    return new Uint8Array(
      getTransactionEncoder().encode({ messageBytes: compiled.messageBytes, signatures: { [FAUCET_ADDRESS]: signature } })
    )
  }

  // --- Journal -------------------------------------------------------------------------------

  private record(r: LedgerRecord): void {
    if (!this.replaying) this.journal?.append(r)
  }

  /**
   * Applies a journal (records a ledger with the same options wrote, oldest first) to this fresh
   * ledger: slots close at their recorded times and every recorded transaction and bundle lands
   * again exactly where it did. Nothing is journaled again and no subscriber is told (replay runs
   * before anyone subscribes). Throws `LedgerReplayError` when a record does not land as it did.
   */
  replay(records: ReadonlyArray<LedgerRecord>): void {
    if (this.openSlot !== 1n || this.records.size > 0) throw new Error("replay needs a fresh ledger")
    this.replaying = true
    try {
      records.forEach((r, i) => {
        if (r.op === "slot") {
          this.closeSlot(r.timeSec)
        } else if (r.op === "tx") {
          if (r.faucetNonce !== undefined) this.faucetNonce = r.faucetNonce + 1
          const result = this.submit(fromBase64(r.wire))
          if (result._tag !== "Landed") throw new LedgerReplayError(i, `transaction rejected: ${result.detail}`)
        } else {
          const result = this.submitBundle(
            r.wires.map(fromBase64),
            { minLamports: BigInt(r.minTipLamports) },
            r.revertible === undefined ? {} : { revertible: r.revertible }
          )
          if (result._tag !== "Landed") throw new LedgerReplayError(i, `bundle rejected: ${result.detail}`)
        }
      })
    } finally {
      this.replaying = false
    }
  }

  // --- Update stream -------------------------------------------------------------------------

  /** Receives every update from now on, synchronously at commit; returns the unsubscribe. */
  subscribe(listener: (update: LedgerUpdate) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /** Retained updates about slot ≥ `fromSlot`, in emission order (Geyser's `from_slot` replay). */
  updatesSince(fromSlot: bigint): UpdatesSince {
    const oldestRetainedSlot = this.oldestRetainedSlot
    if (fromSlot < oldestRetainedSlot) return { _tag: "SlotNotRetained", oldestRetainedSlot }
    const updates: LedgerUpdate[] = []
    for (let i = this.retainedHead; i < this.retained.length; i++) {
      const u = this.retained[i]!.update
      if (u.slot >= fromSlot) updates.push(u)
    }
    return { _tag: "Updates", updates }
  }

  get oldestRetainedSlot(): bigint {
    const o = this.openSlot - BigInt(this.options.updatesRetainedSlots)
    return o > 0n ? o : 0n
  }

  private emit(updates: ReadonlyArray<LedgerUpdate>): void {
    for (const update of updates) {
      this.retained.push({ emittedIn: this.openSlot, update })
      for (const l of this.listeners) {
        try {
          l(update)
        } catch (e) {
          this.onListenerError(e)
        }
      }
    }
  }

  private pruneUpdates(): void {
    const oldest = this.oldestRetainedSlot
    while (this.retainedHead < this.retained.length && this.retained[this.retainedHead]!.emittedIn < oldest) this.retainedHead++
    if (this.retainedHead > 4_096 && this.retainedHead * 2 > this.retained.length) {
      this.retained = this.retained.slice(this.retainedHead)
      this.retainedHead = 0
    }
  }

  // --- Execution -----------------------------------------------------------------------------

  private ensureRoom(count: number): void {
    if (this.slots.get(this.openSlot)!.signatures.length + count > this.options.maxTransactionsPerSlot) this.advanceSlot()
  }

  private tipLamports(tx: ParsedTransaction): bigint {
    let sum = 0n
    for (const ix of tx.instructions) {
      if (tx.accountKeys[ix.programIdIndex] !== SYSTEM_PROGRAM_ID || ix.data.length !== 12) continue
      const view = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength)
      if (view.getUint32(0, true) !== 2) continue
      const to = tx.accountKeys[ix.accounts[1] ?? -1]
      if (to !== undefined && this.tipAccounts.includes(to)) sum += view.getBigUint64(4, true)
    }
    return sum
  }

  private tokenBalances(tx: ParsedTransaction, state: (key: string) => StoredAccount | undefined): TokenBalance[] {
    const out: TokenBalance[] = []
    tx.accountKeys.forEach((key, accountIndex) => {
      const a = state(key)
      if (a === undefined || a.owner !== TOKEN_PROGRAM_ID) return
      const t = decodeSplTokenAccount(a.data)
      if (t === undefined) return
      const mint = state(t.mint) ?? this.db.get(t.mint)
      const decimals = mint === undefined ? 0 : (decodeSplMint(mint.data)?.decimals ?? 0)
      out.push({ accountIndex, mint: t.mint, owner: t.owner, programId: TOKEN_PROGRAM_ID, amount: t.amount, decimals })
    })
    return out
  }

  private execute(view: AccountsReader, tx: ParsedTransaction, o: ExecuteOptions): Executed | Rejected {
    const sig = tx.signature
    if (o.sigVerify) {
      const bad = firstBadSignature(tx)
      if (bad >= 0) return rejected(sig, "SignatureFailure", `signature ${bad} (${tx.accountKeys[bad]}) is missing or does not verify`)
    }
    if (o.blockhash === "check" && !this.isBlockhashValid(tx.recentBlockhash)) {
      return rejected(sig, "BlockhashNotFound", `blockhash ${tx.recentBlockhash} is unknown or expired`)
    }
    if (o.duplicateCheck && (this.records.has(sig) || o.pendingSignatures?.has(sig) === true)) {
      return rejected(sig, "AlreadyProcessed", `transaction ${sig} was already processed`)
    }
    const budget = readComputeBudget(tx.accountKeys, tx.instructions)
    if (typeof budget !== "object" || !("unitLimit" in budget)) return rejected(sig, budget, "invalid compute budget instruction")
    const fee = this.options.lamportsPerSignature * BigInt(tx.header.numRequiredSignatures) + prioritizationFee(budget)
    const payerKey = tx.accountKeys[0]!
    const payer = view.get(payerKey)
    if (payer === undefined) return rejected(sig, "AccountNotFound", `fee payer ${payerKey} does not exist`)
    if (payer.owner !== SYSTEM_PROGRAM_ID || payer.data.length > 0) {
      return rejected(sig, "InvalidAccountForFee", `fee payer ${payerKey} is not a system account`)
    }
    if (payer.lamports < fee) return rejected(sig, "InsufficientFundsForFee", `fee payer holds ${payer.lamports}, fee is ${fee}`)
    const left = payer.lamports - fee
    if (left > 0n && left < minimumBalanceForRentExemption(0)) {
      return rejected(sig, { InsufficientFundsForRent: { account_index: 0 } }, "fee payer would drop below rent exemption")
    }

    const keys = tx.accountKeys
    // Loading, as Agave's: an instruction naming a program the ledger does not run (no account,
    // or an account that is not a program) refuses the transaction before execution, no fee.
    const unknownProgram = tx.instructions.find((ix) => !this.programs.has(keys[ix.programIdIndex]!))
    if (unknownProgram !== undefined) {
      return rejected(sig, "InvalidProgramForExecution", `${keys[unknownProgram.programIdIndex]} is not a program this ledger runs`)
    }
    const pre = keys.map((k) => view.get(k))
    const loaded = new Map<string, MutableAccount>()
    const keyIndex = new Map<string, number>()
    keys.forEach((k, i) => {
      const s = pre[i]
      keyIndex.set(k, i)
      loaded.set(k, s === undefined ? emptyAccount() : { lamports: s.lamports, owner: s.owner, data: s.data.slice(), executable: s.executable })
    })
    loaded.get(payerKey)!.lamports -= fee

    const logs = new LogCollector(this.options.logBytesMax)
    const runtime = new TransactionRuntime(this.programs, loaded, keyIndex, logs, this.openSlot, budget.unitLimit, this.clockUnixSec)
    let err: TransactionError | null = null
    for (let i = 0; i < tx.instructions.length && err === null; i++) {
      const ix = tx.instructions[i]!
      const programId = keys[ix.programIdIndex]!
      const metas = ix.accounts.map((k) => ({ address: keys[k]!, isSigner: tx.isSigner[k]!, isWritable: tx.isWritable[k]! }))
      const e = runtime.executeTopLevel(programId, metas, ix.data)
      if (e !== undefined) err = instructionError(i, e)
    }

    const post = new Map<string, StoredAccount | undefined>()
    keys.forEach((k) => {
      const m = loaded.get(k)!
      post.set(k, m.lamports === 0n ? undefined : { lamports: m.lamports, owner: m.owner, data: m.data, executable: m.executable })
    })
    if (err === null) {
      for (let i = 0; i < keys.length; i++) {
        const a = post.get(keys[i]!)
        if (a !== undefined && tx.isWritable[i] && !sameAccount(a, pre[i]) && a.lamports < minimumBalanceForRentExemption(a.data.length)) {
          err = { InsufficientFundsForRent: { account_index: i } }
          break
        }
      }
    }

    const preBalances = pre.map((a) => a?.lamports ?? 0n)
    let writes: Array<readonly [Address, StoredAccount | undefined]>
    if (err === null) {
      writes = []
      let before = 0n
      let after = 0n
      keys.forEach((k, i) => {
        const a = post.get(k)
        before += preBalances[i]!
        after += a?.lamports ?? 0n
        if (sameAccount(a, pre[i])) return
        if (!tx.isWritable[i]) throw new Error(`ledger invariant: read-only account ${k} changed`)
        writes.push([k, a])
      })
      if (before !== after + fee) throw new Error(`ledger invariant: lamports not conserved (${before} ≠ ${after} + ${fee})`)
    } else {
      const charged = { ...payer, lamports: left }
      writes = [[payerKey, left === 0n ? undefined : charged]]
      keys.forEach((k, i) => post.set(k, i === 0 ? writes[0]![1] : pre[i]))
    }
    const postBalances = keys.map((k) => post.get(k)?.lamports ?? 0n)
    return {
      _tag: "Executed",
      tx,
      fee,
      err,
      logs: logs.messages,
      unitsConsumed: runtime.unitsConsumed,
      writes,
      postState: post,
      preBalances,
      postBalances,
      preTokenBalances: this.tokenBalances(tx, (k) => (keyIndex.has(k) ? pre[keyIndex.get(k)!] : view.get(k))),
      postTokenBalances: this.tokenBalances(tx, (k) => (post.has(k) ? post.get(k) : view.get(k))),
      innerInstructions: runtime.innerInstructions
        .map((instructions, index) => ({ index, instructions }))
        .filter((x) => x.instructions.length > 0)
    }
  }

  /** Commits an executed transaction into the open slot: writes, record, updates. */
  private land(target: AccountsWriter, ex: Executed, bundleId: string | null): TransactionRecord {
    for (const [k, a] of ex.writes) target.set(k, a)
    const state = this.slots.get(this.openSlot)!
    const tx = ex.tx
    const record: TransactionRecord = {
      signature: tx.signature,
      signatures: tx.signatures,
      slot: this.openSlot,
      index: state.signatures.length,
      err: ex.err,
      fee: ex.fee,
      version: tx.version,
      wireBytes: tx.wireBytes,
      messageBytes: tx.messageBytes,
      header: tx.header,
      accountKeys: tx.accountKeys,
      writable: tx.isWritable,
      recentBlockhash: tx.recentBlockhash,
      instructions: tx.instructions,
      innerInstructions: ex.innerInstructions,
      preBalances: ex.preBalances,
      postBalances: ex.postBalances,
      preTokenBalances: ex.preTokenBalances,
      postTokenBalances: ex.postTokenBalances,
      logMessages: ex.logs,
      computeUnitsConsumed: BigInt(ex.unitsConsumed),
      bundleId
    }
    state.signatures.push(record.signature)
    this.records.set(record.signature, record)
    for (const key of new Set(record.accountKeys)) {
      const list = this.byAddress.get(key)
      if (list === undefined) this.byAddress.set(key, [record.signature])
      else list.push(record.signature)
    }
    const updates: LedgerUpdate[] = ex.writes.map(([pubkey, a]) => ({
      kind: "account",
      slot: record.slot,
      pubkey,
      lamports: a?.lamports ?? 0n,
      owner: a?.owner ?? SYSTEM_PROGRAM_ID,
      data: a === undefined ? new Uint8Array(0) : a.data.slice(),
      executable: a?.executable ?? false,
      writeVersion: ++this.writeVersion,
      txnSignature: record.signature
    }))
    updates.push({ kind: "transaction", isVote: false, ...record })
    this.emit(updates)
    return record
  }
}
