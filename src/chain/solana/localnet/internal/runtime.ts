/**
 * The instruction runtime: runs a program on the accounts of one transaction and enforces
 * Solana's account rules after every invocation, so a program bug surfaces as the error a
 * validator would report rather than as silently impossible state:
 * - a read-only account's lamports, data and owner do not change;
 * - only the owner program changes an account's data or debits its lamports (anyone may credit a
 *   writable account); only the owner reassigns it, and only with zeroed data;
 * - the lamports of an instruction's accounts sum to the same total before and after;
 * - cross-program invocations may only pass accounts of the caller, never raise an account's
 *   privilege, and sign for PDAs only with the caller's own seeds; depth ≤ 4.
 * Compute units are a deterministic count (each program's base cost plus what it asks for), logs
 * follow the validator's lines and are capped at `logBytesMax` ("Log truncated"). A thrown
 * non-ProgramError is a program bug: the instruction fails with ProgramFailedToComplete and the
 * message is logged, as a panic would be.
 */
import type { Address } from "@solana/kit"
import { bytesEqual } from "../../program/internal/bytes.js"
import { createProgramAddressSync } from "../../program/Pda.js"
import { instructionErrorText, type InstructionErrorValue } from "../TransactionError.js"
import { minimumBalanceForRentExemption } from "./rent.js"

export interface MutableAccount {
  lamports: bigint
  owner: Address
  data: Uint8Array
  executable: boolean
}

export interface AccountHandle {
  readonly address: Address
  readonly isSigner: boolean
  readonly isWritable: boolean
  readonly account: MutableAccount
}

export interface AccountMetaFlags {
  readonly address: Address
  readonly isSigner: boolean
  readonly isWritable: boolean
}

export interface CpiInstruction {
  readonly programId: Address
  readonly accounts: ReadonlyArray<AccountMetaFlags>
  readonly data: Uint8Array
}

export interface InvokeContext {
  readonly programId: Address
  readonly accounts: ReadonlyArray<AccountHandle>
  readonly data: Uint8Array
  readonly slot: bigint
  /** The Clock sysvar's `unix_timestamp`: the block time of the last closed slot (replays exactly). */
  readonly unixTimestampSec: bigint
  /** 1 for a top-level instruction. */
  readonly depth: number
  /** `Program log: <message>` */
  log(message: string): void
  /** `Program data: <base64>` (an event). */
  emitData(bytes: Uint8Array): void
  consumeUnits(units: number): void
  invoke(ix: CpiInstruction, signerSeeds?: ReadonlyArray<ReadonlyArray<Uint8Array>>): void
  rentMinimum(dataLen: number): bigint
}

export interface Program {
  readonly programId: Address
  readonly name: string
  /** Units charged on every invocation before `process` runs. */
  readonly baseComputeUnits: number
  process(ctx: InvokeContext): void
}

export class ProgramError extends Error {
  constructor(
    readonly value: InstructionErrorValue,
    detail?: string
  ) {
    super(detail ?? instructionErrorText(value))
  }
}

export function fail(value: InstructionErrorValue, detail?: string): never {
  throw new ProgramError(value, detail)
}

export function failCustom(code: number, detail?: string): never {
  throw new ProgramError({ Custom: code }, detail)
}

export const MAX_INVOKE_DEPTH = 4

export class LogCollector {
  readonly messages: string[] = []
  private bytes = 0
  private truncated = false

  constructor(private readonly limitBytes: number) {}

  push(line: string): void {
    if (this.truncated) return
    if (this.bytes + line.length > this.limitBytes) {
      this.messages.push("Log truncated")
      this.truncated = true
      return
    }
    this.bytes += line.length
    this.messages.push(line)
  }
}

export interface InnerInstruction {
  readonly programIdIndex: number
  readonly accounts: ReadonlyArray<number>
  readonly data: Uint8Array
  readonly stackHeight: number
}

interface Snapshot {
  readonly lamports: bigint
  readonly owner: Address
  readonly data: Uint8Array
  readonly executable: boolean
}

const snapshot = (a: MutableAccount): Snapshot => ({
  lamports: a.lamports,
  owner: a.owner,
  data: a.data.slice(),
  executable: a.executable
})

interface FrameEntry {
  readonly account: MutableAccount
  writable: boolean
  signer: boolean
}

/** One invocation's view: its unique accounts, their baselines, and the lamport total to keep. */
class Frame {
  readonly entries = new Map<string, FrameEntry>()
  private readonly baseline = new Map<string, Snapshot>()
  private readonly lamportSum: bigint

  constructor(
    readonly programId: Address,
    handles: ReadonlyArray<AccountHandle>
  ) {
    let sum = 0n
    for (const h of handles) {
      const e = this.entries.get(h.address)
      if (e === undefined) {
        this.entries.set(h.address, { account: h.account, writable: h.isWritable, signer: h.isSigner })
        this.baseline.set(h.address, snapshot(h.account))
        sum += h.account.lamports
      } else {
        e.writable ||= h.isWritable
        e.signer ||= h.isSigner
      }
    }
    this.lamportSum = sum
  }

  check(address: string): void {
    const e = this.entries.get(address)
    const pre = this.baseline.get(address)
    if (e === undefined || pre === undefined) return
    const post = e.account
    if (post.executable !== pre.executable) fail("ExecutableModified")
    const lamportsChanged = post.lamports !== pre.lamports
    const dataChanged = !bytesEqual(pre.data, post.data)
    const ownerChanged = post.owner !== pre.owner
    if (!e.writable) {
      if (lamportsChanged) fail("ReadonlyLamportChange")
      if (dataChanged) fail("ReadonlyDataModified")
      if (ownerChanged) fail("ModifiedProgramId")
      return
    }
    if (ownerChanged && (pre.owner !== this.programId || !post.data.every((b) => b === 0))) fail("ModifiedProgramId")
    if (post.lamports < pre.lamports && pre.owner !== this.programId) fail("ExternalAccountLamportSpend")
    if (dataChanged && pre.owner !== this.programId) fail("ExternalAccountDataModified")
    if (post.lamports < 0n) fail("ArithmeticOverflow")
  }

  refresh(address: string): void {
    const e = this.entries.get(address)
    if (e !== undefined) this.baseline.set(address, snapshot(e.account))
  }

  verify(): void {
    let sum = 0n
    for (const [address, e] of this.entries) {
      this.check(address)
      sum += e.account.lamports
    }
    if (sum !== this.lamportSum) fail("UnbalancedInstruction")
  }
}

const panicMessage = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e))

export class TransactionRuntime {
  unitsConsumed = 0
  readonly innerInstructions: InnerInstruction[][] = []
  private currentInner: InnerInstruction[] = []

  constructor(
    private readonly programs: ReadonlyMap<string, Program>,
    private readonly accounts: ReadonlyMap<string, MutableAccount>,
    private readonly keyIndex: ReadonlyMap<string, number>,
    readonly logs: LogCollector,
    private readonly slot: bigint,
    private readonly unitLimit: number,
    private readonly unixTimestampSec: bigint = 0n
  ) {}

  /** Runs one top-level instruction; its error, or undefined on success. */
  executeTopLevel(programId: Address, metas: ReadonlyArray<AccountMetaFlags>, data: Uint8Array): InstructionErrorValue | undefined {
    this.currentInner = []
    this.innerInstructions.push(this.currentInner)
    try {
      this.invoke(programId, metas, data, 1)
      return undefined
    } catch (e) {
      if (e instanceof ProgramError) return e.value
      throw e
    }
  }

  private consume(units: number): void {
    this.unitsConsumed += units
    if (this.unitsConsumed > this.unitLimit) {
      this.unitsConsumed = this.unitLimit
      fail("ComputationalBudgetExceeded")
    }
  }

  private invoke(programId: Address, metas: ReadonlyArray<AccountMetaFlags>, data: Uint8Array, depth: number): void {
    const program = this.programs.get(programId)
    if (program === undefined) fail("UnsupportedProgramId")
    const handles: AccountHandle[] = metas.map((m) => {
      const account = this.accounts.get(m.address)
      if (account === undefined) return fail("MissingAccount")
      return { address: m.address, isSigner: m.isSigner, isWritable: m.isWritable, account }
    })
    const frame = new Frame(programId, handles)
    const budgetAtStart = this.unitLimit - this.unitsConsumed
    const unitsAtStart = this.unitsConsumed
    this.logs.push(`Program ${programId} invoke [${depth}]`)
    const ctx: InvokeContext = {
      programId,
      accounts: handles,
      data,
      slot: this.slot,
      unixTimestampSec: this.unixTimestampSec,
      depth,
      log: (message) => this.logs.push(`Program log: ${message}`),
      emitData: (bytes) => this.logs.push(`Program data: ${Buffer.from(bytes).toString("base64")}`),
      consumeUnits: (units) => this.consume(units),
      invoke: (ix, seeds) => this.cpi(frame, ix, seeds ?? [], depth),
      rentMinimum: minimumBalanceForRentExemption
    }
    const consumed = () => `Program ${programId} consumed ${this.unitsConsumed - unitsAtStart} of ${budgetAtStart} compute units`
    try {
      this.consume(program.baseComputeUnits)
      program.process(ctx)
      frame.verify()
    } catch (e) {
      let err: ProgramError
      if (e instanceof ProgramError) err = e
      else {
        this.logs.push(`Program log: panicked: ${panicMessage(e)}`)
        err = new ProgramError("ProgramFailedToComplete")
      }
      this.logs.push(consumed())
      this.logs.push(`Program ${programId} failed: ${instructionErrorText(err.value)}`)
      throw err
    }
    this.logs.push(consumed())
    this.logs.push(`Program ${programId} success`)
  }

  private cpi(frame: Frame, ix: CpiInstruction, signerSeeds: ReadonlyArray<ReadonlyArray<Uint8Array>>, depth: number): void {
    if (depth + 1 > MAX_INVOKE_DEPTH) fail("CallDepth")
    const pdaSigners = new Set<string>()
    for (const seeds of signerSeeds) {
      let pda: Address | undefined
      try {
        pda = createProgramAddressSync(seeds, frame.programId)
      } catch {
        pda = undefined
      }
      if (pda === undefined) fail("InvalidSeeds")
      pdaSigners.add(pda)
    }
    const programIdIndex = this.keyIndex.get(ix.programId)
    if (programIdIndex === undefined) fail("MissingAccount")
    const indices: number[] = []
    for (const m of ix.accounts) {
      const e = frame.entries.get(m.address)
      const index = this.keyIndex.get(m.address)
      if (e === undefined || index === undefined) return fail("MissingAccount")
      if (m.isWritable && !e.writable) fail("PrivilegeEscalation", `${m.address}'s writable privilege escalated`)
      if (m.isSigner && !e.signer && !pdaSigners.has(m.address)) fail("PrivilegeEscalation", `${m.address}'s signer privilege escalated`)
      indices.push(index)
    }
    // The caller's own changes so far must be legal before the callee sees them.
    for (const m of ix.accounts) frame.check(m.address)
    this.currentInner.push({ programIdIndex, accounts: indices, data: data(ix), stackHeight: depth + 1 })
    // A CPI's signer flags are what the caller granted, PDAs included.
    const metas = ix.accounts.map((m) => ({ address: m.address, isWritable: m.isWritable, isSigner: m.isSigner }))
    this.invoke(ix.programId, metas, ix.data, depth + 1)
    for (const m of ix.accounts) frame.refresh(m.address)
  }
}

const data = (ix: CpiInstruction): Uint8Array => ix.data.slice()
