/**
 * The SPL Token subset the localnet needs, at the real program id with the real layouts (Mint 82
 * bytes, Account 165 bytes; u8 discriminators): InitializeMint (0), InitializeAccount (1),
 * Transfer (3), SetAuthority (6), MintTo (7), Burn (8), CloseAccount (9), TransferChecked (12),
 * MintToChecked (14), BurnChecked (15), InitializeAccount2 (16), SyncNative (17),
 * InitializeAccount3 (18), InitializeMint2 (20). Authorities are single signers (no multisig, no
 * delegates: Approve is not supported). Wrapped SOL follows the real rules: an account of the
 * native mint keeps its rent reserve in `isNative`, its `amount` is its lamports above it,
 * transfers move lamports, SyncNative re-reads them, CloseAccount may close it with a balance.
 * Errors are the real TokenError codes (`TokenError` below).
 */
import type { Address } from "@solana/kit"
import { ByteReader, U64_MAX } from "../../program/internal/bytes.js"
import { decodeSplMint, encodeSplMint, SPL_MINT_SIZE, type SplMint } from "../../program/accounts/SplMint.js"
import {
  decodeSplTokenAccount,
  encodeSplTokenAccount,
  SPL_TOKEN_ACCOUNT_SIZE,
  SPL_TOKEN_ACCOUNT_STATE_OFFSET,
  type SplTokenAccount
} from "../../program/accounts/SplTokenAccount.js"
import { SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../program/ProgramIds.js"
import { type AccountHandle, fail, failCustom, type InvokeContext, type Program } from "../internal/runtime.js"
import { accountAt, requireOwner, requireSigner } from "./support.js"

export const TokenInstruction = {
  InitializeMint: 0,
  InitializeAccount: 1,
  Transfer: 3,
  SetAuthority: 6,
  MintTo: 7,
  Burn: 8,
  CloseAccount: 9,
  TransferChecked: 12,
  MintToChecked: 14,
  BurnChecked: 15,
  InitializeAccount2: 16,
  SyncNative: 17,
  InitializeAccount3: 18,
  InitializeMint2: 20
} as const

export const TokenError = {
  NotRentExempt: 0,
  InsufficientFunds: 1,
  InvalidMint: 2,
  MintMismatch: 3,
  OwnerMismatch: 4,
  FixedSupply: 5,
  AlreadyInUse: 6,
  UninitializedState: 9,
  NativeNotSupported: 10,
  NonNativeHasBalance: 11,
  InvalidInstruction: 12,
  InvalidState: 13,
  Overflow: 14,
  AuthorityTypeNotSupported: 15,
  MintCannotFreeze: 16,
  AccountFrozen: 17,
  MintDecimalsMismatch: 18,
  NonNativeNotSupported: 19
} as const

export const AuthorityType = { MintTokens: 0, FreezeAccount: 1, AccountOwner: 2, CloseAccount: 3 } as const

const tokenFail = (code: number, ctx: InvokeContext, message: string): never => {
  ctx.log(`Error: ${message}`)
  return failCustom(code)
}

/** Offset of the mint's `is_initialized` byte. */
const SPL_MINT_INITIALIZED_OFFSET = 45

/**
 * The real program's `unpack`: wrong length or bytes that do not decode are InvalidAccountData, a
 * zero initialized/state byte UninitializedAccount. Like the real program it does not check the
 * owner here: writing to an account it does not own fails in the runtime (ExternalAccountDataModified).
 */
const unpack = <A>(h: AccountHandle, size: number, stateOffset: number, decode: (data: Uint8Array) => A | undefined): A => {
  const data = h.account.data
  if (data.length !== size) return fail("InvalidAccountData")
  const decoded = decode(data)
  if (decoded !== undefined) return decoded
  return fail(data[stateOffset] === 0 ? "UninitializedAccount" : "InvalidAccountData")
}

const loadMint = (h: AccountHandle): SplMint => unpack(h, SPL_MINT_SIZE, SPL_MINT_INITIALIZED_OFFSET, decodeSplMint)

const loadAccount = (h: AccountHandle): SplTokenAccount =>
  unpack(h, SPL_TOKEN_ACCOUNT_SIZE, SPL_TOKEN_ACCOUNT_STATE_OFFSET, decodeSplTokenAccount)

const storeMint = (h: AccountHandle, m: SplMint) => {
  h.account.data = encodeSplMint(m)
}
const storeAccount = (h: AccountHandle, a: SplTokenAccount) => {
  h.account.data = encodeSplTokenAccount(a)
}

const requireAuthority = (authority: AccountHandle, expected: Address | null, ctx: InvokeContext): void => {
  if (expected === null || authority.address !== expected) tokenFail(TokenError.OwnerMismatch, ctx, "owner does not match")
  requireSigner(authority)
}

const requireRentExempt = (h: AccountHandle, ctx: InvokeContext): void => {
  if (h.account.lamports < ctx.rentMinimum(h.account.data.length)) tokenFail(TokenError.NotRentExempt, ctx, "Lamport balance below rent-exempt threshold")
}

interface InitializeMintArgs {
  readonly decimals: number
  readonly mintAuthority: Address
  readonly freeze: Address | null
}

const readInitializeMint = (r: ByteReader): InitializeMintArgs => {
  const decimals = r.u8()
  const mintAuthority = r.address()
  const freezeTag = r.u8()
  if (freezeTag > 1) throw new RangeError("COption tag")
  return { decimals, mintAuthority, freeze: freezeTag === 1 ? r.address() : null }
}

const initializeMint = (ctx: InvokeContext, { decimals, mintAuthority, freeze }: InitializeMintArgs): void => {
  const mint = accountAt(ctx, 0)
  requireOwner(mint, TOKEN_PROGRAM_ID)
  if (mint.account.data.length !== SPL_MINT_SIZE) fail("InvalidAccountData")
  if (mint.account.data[SPL_MINT_INITIALIZED_OFFSET] !== 0) tokenFail(TokenError.AlreadyInUse, ctx, "Already in use")
  requireRentExempt(mint, ctx)
  storeMint(mint, { mintAuthority, supply: 0n, decimals, freezeAuthority: freeze })
}

const initializeAccount = (ctx: InvokeContext, accountIndex: number, mintIndex: number, owner: Address): void => {
  const account = accountAt(ctx, accountIndex)
  const mintHandle = accountAt(ctx, mintIndex)
  requireOwner(account, TOKEN_PROGRAM_ID)
  if (account.account.data.length !== SPL_TOKEN_ACCOUNT_SIZE) fail("InvalidAccountData")
  if (account.account.data[SPL_TOKEN_ACCOUNT_STATE_OFFSET] !== 0) tokenFail(TokenError.AlreadyInUse, ctx, "Already in use")
  requireRentExempt(account, ctx)
  const isNativeMint = mintHandle.address === WSOL_MINT_ADDRESS
  if (!isNativeMint) {
    requireOwner(mintHandle, TOKEN_PROGRAM_ID)
    if (decodeSplMint(mintHandle.account.data) === undefined) tokenFail(TokenError.InvalidMint, ctx, "Invalid Mint")
  }
  const reserve = ctx.rentMinimum(SPL_TOKEN_ACCOUNT_SIZE)
  storeAccount(account, {
    mint: mintHandle.address,
    owner,
    amount: isNativeMint ? account.account.lamports - reserve : 0n,
    delegate: null,
    state: "initialized",
    isNative: isNativeMint ? reserve : null,
    delegatedAmount: 0n,
    closeAuthority: null
  })
}

const transfer = (ctx: InvokeContext, amount: bigint, checked: { decimals: number } | undefined): void => {
  const sourceH = accountAt(ctx, 0)
  const mintH = checked === undefined ? undefined : accountAt(ctx, 1)
  const destH = accountAt(ctx, checked === undefined ? 1 : 2)
  const authority = accountAt(ctx, checked === undefined ? 2 : 3)
  const source = loadAccount(sourceH)
  const dest = loadAccount(destH)
  if (source.state === "frozen" || dest.state === "frozen") tokenFail(TokenError.AccountFrozen, ctx, "Account is frozen")
  if (source.amount < amount) tokenFail(TokenError.InsufficientFunds, ctx, "insufficient funds")
  if (source.mint !== dest.mint) tokenFail(TokenError.MintMismatch, ctx, "Account not associated with this Mint")
  if (mintH !== undefined && checked !== undefined) {
    if (mintH.address !== source.mint) tokenFail(TokenError.MintMismatch, ctx, "Account not associated with this Mint")
    const mint = loadMint(mintH)
    if (mint.decimals !== checked.decimals) tokenFail(TokenError.MintDecimalsMismatch, ctx, "The provided decimals value different from the Mint decimals")
  }
  requireAuthority(authority, source.owner, ctx)
  if (sourceH.address === destH.address || amount === 0n) {
    requireOwner(sourceH, TOKEN_PROGRAM_ID)
    requireOwner(destH, TOKEN_PROGRAM_ID)
  }
  if (sourceH.address === destH.address) return
  storeAccount(sourceH, { ...source, amount: source.amount - amount })
  const fresh = loadAccount(destH)
  storeAccount(destH, { ...fresh, amount: fresh.amount + amount })
  if (source.isNative !== null) {
    sourceH.account.lamports -= amount
    destH.account.lamports += amount
  }
}

const mintTo = (ctx: InvokeContext, amount: bigint, checked: { decimals: number } | undefined): void => {
  const mintH = accountAt(ctx, 0)
  const destH = accountAt(ctx, 1)
  const authority = accountAt(ctx, 2)
  const dest = loadAccount(destH)
  if (dest.state === "frozen") tokenFail(TokenError.AccountFrozen, ctx, "Account is frozen")
  if (dest.isNative !== null) tokenFail(TokenError.NativeNotSupported, ctx, "Instruction does not support native tokens")
  if (dest.mint !== mintH.address) tokenFail(TokenError.MintMismatch, ctx, "Account not associated with this Mint")
  const mint = loadMint(mintH)
  if (checked !== undefined && mint.decimals !== checked.decimals) tokenFail(TokenError.MintDecimalsMismatch, ctx, "decimals mismatch")
  if (mint.mintAuthority === null) tokenFail(TokenError.FixedSupply, ctx, "Fixed supply")
  requireAuthority(authority, mint.mintAuthority, ctx)
  if (amount === 0n) {
    requireOwner(mintH, TOKEN_PROGRAM_ID)
    requireOwner(destH, TOKEN_PROGRAM_ID)
  }
  if (mint.supply + amount > U64_MAX || dest.amount + amount > U64_MAX) tokenFail(TokenError.Overflow, ctx, "Operation overflowed")
  storeMint(mintH, { ...mint, supply: mint.supply + amount })
  storeAccount(destH, { ...dest, amount: dest.amount + amount })
}

const burn = (ctx: InvokeContext, amount: bigint, checked: { decimals: number } | undefined): void => {
  const sourceH = accountAt(ctx, 0)
  const mintH = accountAt(ctx, 1)
  const authority = accountAt(ctx, 2)
  const source = loadAccount(sourceH)
  const mint = loadMint(mintH)
  if (source.state === "frozen") tokenFail(TokenError.AccountFrozen, ctx, "Account is frozen")
  if (source.isNative !== null) tokenFail(TokenError.NativeNotSupported, ctx, "Instruction does not support native tokens")
  if (source.amount < amount) tokenFail(TokenError.InsufficientFunds, ctx, "insufficient funds")
  if (source.mint !== mintH.address) tokenFail(TokenError.MintMismatch, ctx, "Account not associated with this Mint")
  if (checked !== undefined && mint.decimals !== checked.decimals) tokenFail(TokenError.MintDecimalsMismatch, ctx, "decimals mismatch")
  requireAuthority(authority, source.owner, ctx)
  if (amount === 0n) {
    requireOwner(sourceH, TOKEN_PROGRAM_ID)
    requireOwner(mintH, TOKEN_PROGRAM_ID)
  }
  storeAccount(sourceH, { ...source, amount: source.amount - amount })
  storeMint(mintH, { ...mint, supply: mint.supply - amount })
}

const closeAccount = (ctx: InvokeContext): void => {
  const sourceH = accountAt(ctx, 0)
  const destH = accountAt(ctx, 1)
  const authority = accountAt(ctx, 2)
  if (sourceH.address === destH.address) fail("InvalidAccountData")
  const source = loadAccount(sourceH)
  if (source.isNative === null && source.amount !== 0n) tokenFail(TokenError.NonNativeHasBalance, ctx, "Non-native account can only be closed if its balance is zero")
  requireAuthority(authority, source.closeAuthority ?? source.owner, ctx)
  destH.account.lamports += sourceH.account.lamports
  sourceH.account.lamports = 0n
  // The real program's delete_account: back to the System program with no data, so a later
  // instruction of the same transaction sees an empty system account.
  sourceH.account.data = new Uint8Array(0)
  sourceH.account.owner = SYSTEM_PROGRAM_ID
}

const syncNative = (ctx: InvokeContext): void => {
  const h = accountAt(ctx, 0)
  requireOwner(h, TOKEN_PROGRAM_ID)
  const a = loadAccount(h)
  if (a.isNative === null) tokenFail(TokenError.NonNativeNotSupported, ctx, "Instruction does not support non-native tokens")
  const amount = h.account.lamports - (a.isNative ?? 0n)
  if (amount < a.amount) tokenFail(TokenError.InvalidState, ctx, "Invalid account state for operation")
  storeAccount(h, { ...a, amount })
}

interface SetAuthorityArgs {
  readonly type: number
  readonly next: Address | null
}

const readSetAuthority = (r: ByteReader): SetAuthorityArgs => {
  const type = r.u8()
  const tag = r.u8()
  if (tag > 1) throw new RangeError("COption tag")
  return { type, next: tag === 1 ? r.address() : null }
}

const setAuthority = (ctx: InvokeContext, { type, next }: SetAuthorityArgs): void => {
  const target = accountAt(ctx, 0)
  const authority = accountAt(ctx, 1)
  requireOwner(target, TOKEN_PROGRAM_ID)
  if (target.account.data.length === SPL_MINT_SIZE) {
    const mint = loadMint(target)
    if (type === AuthorityType.MintTokens) {
      if (mint.mintAuthority === null) tokenFail(TokenError.FixedSupply, ctx, "Fixed supply")
      requireAuthority(authority, mint.mintAuthority, ctx)
      storeMint(target, { ...mint, mintAuthority: next })
    } else if (type === AuthorityType.FreezeAccount) {
      if (mint.freezeAuthority === null) tokenFail(TokenError.MintCannotFreeze, ctx, "This token mint cannot freeze accounts")
      requireAuthority(authority, mint.freezeAuthority, ctx)
      storeMint(target, { ...mint, freezeAuthority: next })
    } else tokenFail(TokenError.AuthorityTypeNotSupported, ctx, "Account does not support specified authority type")
    return
  }
  const account = loadAccount(target)
  if (type === AuthorityType.AccountOwner) {
    requireAuthority(authority, account.owner, ctx)
    if (next === null) fail("InvalidArgument")
    storeAccount(target, { ...account, owner: next as Address, closeAuthority: account.isNative === null ? account.closeAuthority : null })
  } else if (type === AuthorityType.CloseAccount) {
    requireAuthority(authority, account.closeAuthority ?? account.owner, ctx)
    storeAccount(target, { ...account, closeAuthority: next })
  } else tokenFail(TokenError.AuthorityTypeNotSupported, ctx, "Account does not support specified authority type")
}

export const TokenProgram: Program = {
  programId: TOKEN_PROGRAM_ID,
  name: "spl-token",
  baseComputeUnits: 2_000,
  process(ctx) {
    const r = new ByteReader(ctx.data)
    const read = <A>(f: () => A): A => {
      try {
        return f()
      } catch {
        return failCustom(TokenError.InvalidInstruction)
      }
    }
    const tag = read(() => r.u8())
    const amountAnd = (withDecimals: boolean) =>
      read(() => {
        const amount = r.u64()
        const decimals = withDecimals ? { decimals: r.u8() } : undefined
        return { amount, decimals }
      })
    switch (tag) {
      case TokenInstruction.InitializeMint:
      case TokenInstruction.InitializeMint2:
        ctx.log(`Instruction: ${tag === 0 ? "InitializeMint" : "InitializeMint2"}`)
        return initializeMint(ctx, read(() => readInitializeMint(r)))
      case TokenInstruction.InitializeAccount:
        ctx.log("Instruction: InitializeAccount")
        return initializeAccount(ctx, 0, 1, accountAt(ctx, 2).address)
      case TokenInstruction.InitializeAccount2:
      case TokenInstruction.InitializeAccount3: {
        ctx.log(`Instruction: ${tag === 16 ? "InitializeAccount2" : "InitializeAccount3"}`)
        const owner = read(() => r.address())
        return initializeAccount(ctx, 0, 1, owner)
      }
      case TokenInstruction.Transfer: {
        ctx.log("Instruction: Transfer")
        return transfer(ctx, amountAnd(false).amount, undefined)
      }
      case TokenInstruction.TransferChecked: {
        ctx.log("Instruction: TransferChecked")
        const a = amountAnd(true)
        return transfer(ctx, a.amount, a.decimals)
      }
      case TokenInstruction.MintTo:
        ctx.log("Instruction: MintTo")
        return mintTo(ctx, amountAnd(false).amount, undefined)
      case TokenInstruction.MintToChecked: {
        ctx.log("Instruction: MintToChecked")
        const a = amountAnd(true)
        return mintTo(ctx, a.amount, a.decimals)
      }
      case TokenInstruction.Burn:
        ctx.log("Instruction: Burn")
        return burn(ctx, amountAnd(false).amount, undefined)
      case TokenInstruction.BurnChecked: {
        ctx.log("Instruction: BurnChecked")
        const a = amountAnd(true)
        return burn(ctx, a.amount, a.decimals)
      }
      case TokenInstruction.CloseAccount:
        ctx.log("Instruction: CloseAccount")
        return closeAccount(ctx)
      case TokenInstruction.SyncNative:
        ctx.log("Instruction: SyncNative")
        return syncNative(ctx)
      case TokenInstruction.SetAuthority:
        ctx.log("Instruction: SetAuthority")
        return setAuthority(ctx, read(() => readSetAuthority(r)))
      default:
        failCustom(TokenError.InvalidInstruction)
    }
  }
}
