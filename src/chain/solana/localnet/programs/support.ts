/**
 * Small checks every localnet program uses: fetch the i-th account of an instruction, require a
 * signer, a writable account or an owner, and move lamports between accounts a program owns.
 * Each failure is the builtin instruction error a validator would report.
 */
import type { Address } from "@solana/kit"
import { type AccountHandle, fail, type InvokeContext } from "../internal/runtime.js"

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
