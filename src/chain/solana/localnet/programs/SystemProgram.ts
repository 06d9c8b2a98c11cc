/**
 * The System program subset the localnet needs, at its real id and with its real layouts (a u32
 * little-endian discriminator): CreateAccount (0), Assign (1), Transfer (2), Allocate (8). Errors
 * are the real ones: AccountAlreadyInUse = Custom 0, ResultWithNegativeLamports = Custom 1,
 * InvalidAccountDataLength = Custom 3. Other instructions fail with InvalidInstructionData. An
 * instruction with too few accounts fails MissingAccount, as the builtin's (not the
 * NotEnoughAccountKeys of BPF programs; held against LiteSVM by test/conformance/solanaFidelity.test.ts).
 */
import type { Address } from "@solana/kit"
import { ByteReader } from "../../program/internal/bytes.js"
import { SYSTEM_PROGRAM_ID } from "../../program/ProgramIds.js"
import { type AccountHandle, fail, failCustom, type InvokeContext, type Program } from "../internal/runtime.js"
import { requireSigner } from "./support.js"

const accountAt = (ctx: InvokeContext, index: number): AccountHandle => ctx.accounts[index] ?? fail("MissingAccount")

export const SystemInstruction = { CreateAccount: 0, Assign: 1, Transfer: 2, Allocate: 8 } as const
export const SystemError = { AccountAlreadyInUse: 0, ResultWithNegativeLamports: 1, InvalidAccountDataLength: 3 } as const

export const MAX_PERMITTED_DATA_LENGTH = 10 * 1024 * 1024

const inUse = (h: AccountHandle): boolean =>
  h.account.lamports > 0n || h.account.data.length > 0 || h.account.owner !== SYSTEM_PROGRAM_ID

/**
 * Agave's `BorrowedAccount::set_lamports` as the System program meets it: a debit of an account it
 * does not own is ExternalAccountLamportSpend, and a read-only account refuses even an unchanged
 * balance (ReadonlyLamportChange: a 0-lamport transfer to or from it fails).
 */
const setLamports = (h: AccountHandle, lamports: bigint): void => {
  if (h.account.owner !== SYSTEM_PROGRAM_ID && lamports < h.account.lamports) fail("ExternalAccountLamportSpend")
  if (!h.isWritable) fail("ReadonlyLamportChange")
  h.account.lamports = lamports
}

const transfer = (from: AccountHandle, to: AccountHandle, lamports: bigint, ctx: InvokeContext): void => {
  requireSigner(from)
  if (from.account.data.length > 0) fail("InvalidArgument", "Transfer: `from` must not carry data")
  if (from.account.lamports < lamports) {
    ctx.log(`Transfer: insufficient lamports ${from.account.lamports}, need ${lamports}`)
    failCustom(SystemError.ResultWithNegativeLamports)
  }
  setLamports(from, from.account.lamports - lamports)
  setLamports(to, to.account.lamports + lamports)
}

const allocate = (h: AccountHandle, space: bigint, ctx: InvokeContext): void => {
  requireSigner(h)
  if (h.account.data.length > 0 || h.account.owner !== SYSTEM_PROGRAM_ID) {
    ctx.log(`Allocate: account ${h.address} already in use`)
    failCustom(SystemError.AccountAlreadyInUse)
  }
  if (space > BigInt(MAX_PERMITTED_DATA_LENGTH)) failCustom(SystemError.InvalidAccountDataLength)
  h.account.data = new Uint8Array(Number(space))
}

const assign = (h: AccountHandle, owner: Address): void => {
  if (h.account.owner === owner) return
  requireSigner(h)
  h.account.owner = owner
}

export const SystemProgram: Program = {
  programId: SYSTEM_PROGRAM_ID,
  name: "system",
  baseComputeUnits: 150,
  process(ctx) {
    const r = new ByteReader(ctx.data)
    const read = <A>(f: () => A): A => {
      try {
        return f()
      } catch {
        return fail("InvalidInstructionData")
      }
    }
    const tag = read(() => r.u32())
    switch (tag) {
      case SystemInstruction.CreateAccount: {
        const [lamports, space, owner] = read(() => [r.u64(), r.u64(), r.address()] as const)
        const from = accountAt(ctx, 0)
        const to = accountAt(ctx, 1)
        requireSigner(to)
        if (inUse(to)) {
          ctx.log(`Create Account: account Address { address: ${to.address}, base: None } already in use`)
          failCustom(SystemError.AccountAlreadyInUse)
        }
        allocate(to, space, ctx)
        assign(to, owner)
        transfer(from, to, lamports, ctx)
        return
      }
      case SystemInstruction.Assign: {
        const owner = read(() => r.address())
        assign(accountAt(ctx, 0), owner)
        return
      }
      case SystemInstruction.Transfer: {
        const lamports = read(() => r.u64())
        transfer(accountAt(ctx, 0), accountAt(ctx, 1), lamports, ctx)
        return
      }
      case SystemInstruction.Allocate: {
        const space = read(() => r.u64())
        allocate(accountAt(ctx, 0), space, ctx)
        return
      }
      default:
        fail("InvalidInstructionData")
    }
  }
}
