/**
 * Small checks every localnet program uses: fetch the i-th account of an instruction (or all of
 * them by name, from an account list), require a signer, a writable account or an owner, move
 * lamports between accounts a program owns, and the CPIs into the System and Token programs our
 * own programs make. Each failure is the builtin instruction error a validator would report.
 */
import type { Address } from "@solana/kit"
import type { AccountSlot } from "../../program/Instructions.js"
import { ByteWriter } from "../../program/internal/bytes.js"
import { SPL_TOKEN_ACCOUNT_SIZE } from "../../program/accounts/SplTokenAccount.js"
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID } from "../../program/ProgramIds.js"
import { type AccountHandle, fail, type InvokeContext } from "../internal/runtime.js"
import { SystemInstruction } from "./SystemProgram.js"
import { TokenInstruction } from "./TokenProgram.js"

export const accountAt = (ctx: InvokeContext, index: number): AccountHandle => {
  const h = ctx.accounts[index]
  if (h === undefined) fail("NotEnoughAccountKeys")
  return h
}

export const requireSigner = (h: AccountHandle): void => {
  if (!h.isSigner) fail("MissingRequiredSignature", `${h.address} must sign`)
}

export const requireWritable = (h: AccountHandle): void => {
  if (!h.isWritable) fail("InvalidArgument", `${h.address} must be writable`)
}

export const requireOwner = (h: AccountHandle, owner: Address): void => {
  if (h.account.owner !== owner) fail("IncorrectProgramId", `${h.address} is not owned by ${owner}`)
}

/** Direct lamport move; `from` must be owned by the running program (the runtime checks it). */
export const moveLamports = (from: AccountHandle, to: AccountHandle, lamports: bigint): void => {
  if (lamports < 0n || from.account.lamports < lamports) fail("InsufficientFunds")
  from.account.lamports -= lamports
  to.account.lamports += lamports
}

export const u64Data = (tag: number, tagBytes: 1 | 4, value: bigint): Uint8Array => {
  const out = new Uint8Array(tagBytes + 8)
  const view = new DataView(out.buffer)
  if (tagBytes === 4) view.setUint32(0, tag, true)
  else view.setUint8(0, tag)
  view.setBigUint64(tagBytes, value, true)
  return out
}

export type Named<L extends ReadonlyArray<AccountSlot>> = { readonly [K in L[number]["name"]]: AccountHandle }

/** The instruction's accounts by name, with each slot's signer/writable requirement enforced. */
export const named = <L extends ReadonlyArray<AccountSlot>>(ctx: InvokeContext, slots: L): Named<L> => {
  if (ctx.accounts.length < slots.length) fail("NotEnoughAccountKeys")
  const out: Record<string, AccountHandle> = {}
  slots.forEach((slot, i) => {
    const h = ctx.accounts[i]!
    if (slot.signer) requireSigner(h)
    if (slot.writable) requireWritable(h)
    out[slot.name] = h
  })
  return out as Named<L>
}

// --- CPIs into System and SPL Token ----------------------------------------------------------

export const meta = (h: AccountHandle, isSigner: boolean, isWritable: boolean) => ({ address: h.address, isSigner, isWritable })

export type Signer = ReadonlyArray<ReadonlyArray<Uint8Array>>

export const systemTransfer = (ctx: InvokeContext, from: AccountHandle, to: AccountHandle, lamports: bigint): void => {
  if (lamports === 0n) return
  ctx.invoke({
    programId: SYSTEM_PROGRAM_ID,
    accounts: [meta(from, true, true), meta(to, false, true)],
    data: u64Data(SystemInstruction.Transfer, 4, lamports)
  })
}

export const createAccount = (ctx: InvokeContext, payer: AccountHandle, target: AccountHandle, space: number, owner: Address, signer: Signer): void =>
  ctx.invoke(
    {
      programId: SYSTEM_PROGRAM_ID,
      accounts: [meta(payer, true, true), meta(target, true, true)],
      data: new ByteWriter(52)
        .u32(SystemInstruction.CreateAccount)
        .u64(ctx.rentMinimum(space))
        .u64(BigInt(space))
        .address(owner)
        .done()
    },
    signer
  )

export const tokenTransfer = (
  ctx: InvokeContext,
  source: AccountHandle,
  dest: AccountHandle,
  authority: AccountHandle,
  amount: bigint,
  signer: Signer = []
): void => {
  if (amount === 0n) return
  ctx.invoke(
    {
      programId: TOKEN_PROGRAM_ID,
      accounts: [meta(source, false, true), meta(dest, false, true), meta(authority, true, false)],
      data: u64Data(TokenInstruction.Transfer, 1, amount)
    },
    signer
  )
}

export const createTokenAccount = (
  ctx: InvokeContext,
  payer: AccountHandle,
  target: AccountHandle,
  mint: AccountHandle,
  owner: Address,
  signer: Signer
): void => {
  createAccount(ctx, payer, target, SPL_TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID, signer)
  ctx.invoke({
    programId: TOKEN_PROGRAM_ID,
    accounts: [meta(target, false, true), meta(mint, false, false)],
    data: new ByteWriter(33).u8(TokenInstruction.InitializeAccount3).address(owner).done()
  })
}

