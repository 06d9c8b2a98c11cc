/**
 * The Compute Budget program at its real id. Its instructions are read before execution (they set
 * the transaction's unit limit and priority fee) and are no-ops when executed.
 * Layouts (u8 discriminator): RequestHeapFrame (1, u32), SetComputeUnitLimit (2, u32),
 * SetComputeUnitPrice (3, u64 micro-lamports per unit), SetLoadedAccountsDataSizeLimit (4, u32).
 * A malformed one fails the transaction before it lands (InvalidInstructionData), a repeated one
 * with DuplicateInstruction, as on a validator. Without SetComputeUnitLimit the limit is Agave's
 * default: 3,000 units per instruction of a builtin program (System, Compute Budget) and 200,000 per
 * other instruction, at most 1,400,000 (held against the real runtime by
 * test/conformance/solanaFidelity.test.ts; it sets the priority fee of a price without a limit).
 */
import { COMPUTE_BUDGET_PROGRAM_ID, SYSTEM_PROGRAM_ID } from "../../program/ProgramIds.js"
import type { Program } from "../internal/runtime.js"
import type { CompiledInstructionRecord } from "../internal/wire.js"
import { instructionError, type TransactionError } from "../TransactionError.js"

export const DEFAULT_UNITS_PER_INSTRUCTION = 200_000
/** Agave's MAX_BUILTIN_ALLOCATION_COMPUTE_UNIT_LIMIT: the default for a builtin's instruction. */
export const DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION = 3_000
const BUILTIN_PROGRAM_IDS: ReadonlySet<string> = new Set([SYSTEM_PROGRAM_ID, COMPUTE_BUDGET_PROGRAM_ID])
export const MAX_COMPUTE_UNIT_LIMIT = 1_400_000
export const MICRO_LAMPORTS_PER_LAMPORT = 1_000_000n

export interface ComputeBudget {
  readonly unitLimit: number
  readonly unitPriceMicroLamports: bigint
}

export const ComputeBudgetProgram: Program = {
  programId: COMPUTE_BUDGET_PROGRAM_ID,
  name: "compute-budget",
  baseComputeUnits: 150,
  process() {}
}

/** The budget a transaction asks for, or the error that refuses it. */
export const readComputeBudget = (
  keys: ReadonlyArray<string>,
  instructions: ReadonlyArray<CompiledInstructionRecord>
): ComputeBudget | TransactionError => {
  let unitLimit: number | undefined
  let unitPrice: bigint | undefined
  const seen = new Set<number>()
  for (let i = 0; i < instructions.length; i++) {
    const ix = instructions[i]!
    if (keys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM_ID) continue
    const d = ix.data
    const view = new DataView(d.buffer, d.byteOffset, d.byteLength)
    const tag = d[0]
    if (tag === undefined) return instructionError(i, "InvalidInstructionData")
    if (seen.has(tag)) return { DuplicateInstruction: i }
    seen.add(tag)
    switch (tag) {
      case 1:
      case 4:
        if (d.length !== 5) return instructionError(i, "InvalidInstructionData")
        break
      case 2:
        if (d.length !== 5) return instructionError(i, "InvalidInstructionData")
        unitLimit = view.getUint32(1, true)
        break
      case 3:
        if (d.length !== 9) return instructionError(i, "InvalidInstructionData")
        unitPrice = view.getBigUint64(1, true)
        break
      default:
        return instructionError(i, "InvalidInstructionData")
    }
  }
  const defaultLimit = instructions.reduce(
    (sum, ix) => sum + (BUILTIN_PROGRAM_IDS.has(keys[ix.programIdIndex] ?? "") ? DEFAULT_UNITS_PER_BUILTIN_INSTRUCTION : DEFAULT_UNITS_PER_INSTRUCTION),
    0
  )
  return {
    unitLimit: Math.min(MAX_COMPUTE_UNIT_LIMIT, unitLimit ?? defaultLimit),
    unitPriceMicroLamports: unitPrice ?? 0n
  }
}

export const prioritizationFee = (b: ComputeBudget): bigint => {
  const micro = b.unitPriceMicroLamports * BigInt(b.unitLimit)
  return (micro + MICRO_LAMPORTS_PER_LAMPORT - 1n) / MICRO_LAMPORTS_PER_LAMPORT
}
