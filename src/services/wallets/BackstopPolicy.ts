/**
 * The fixed backstop policy every service-signed wallet carries (spec 2.3): a platform ceiling on
 * the native value one transaction moves out of the wallet (`AGENT_WALLET_CEILING_LAMPORTS`,
 * default 50 SOL; `AGENT_WALLET_CEILING_WEI`, default 10 ETH) and, on Solana, an unconditional
 * deny of the SPL Token `Approve`, `ApproveChecked` and `SetAuthority` instructions (Token and
 * Token-2022). Evaluated on the real serialized transaction the signer is asked to sign, decoded
 * with `@solana/kit` (Solana wire transaction) or `viem` (EVM serialized transaction).
 *
 * What it does not see (by design, spec 2.3): per-asset caps (enforced at build) and spend routed
 * through other programs. The Solana ceiling counts the System program instructions that move
 * lamports out of the wallet: `Transfer`, `TransferWithSeed`, `CreateAccount`,
 * `CreateAccountWithSeed`. Anything that does not decode is denied (fail closed).
 */
import {
  type Address,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder
} from "@solana/kit"
import { type Hex, parseTransaction } from "viem"
import type { WalletChain } from "./ChainKeys.js"

export const DEFAULT_CEILING_LAMPORTS = 50_000_000_000n
export const DEFAULT_CEILING_WEI = 10_000_000_000_000_000_000n

export const SYSTEM_PROGRAM = "11111111111111111111111111111111"
export const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
export const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"

/** SPL Token instruction discriminators (first data byte), the same in Token-2022. */
export const DeniedTokenInstructions: Readonly<Record<number, string>> = {
  4: "approve",
  6: "set_authority",
  13: "approve_checked"
}

export interface BackstopRules {
  readonly ceilingLamports: bigint
  readonly ceilingWei: bigint
}

/** The stored form (JSON): amounts as decimal strings. */
export interface BackstopRulesJson {
  readonly kind: "backstop"
  readonly ceilingLamports: string
  readonly ceilingWei: string
  readonly denySolanaInstructions: ReadonlyArray<string>
}

export const rulesToJson = (r: BackstopRules): BackstopRulesJson => ({
  kind: "backstop",
  ceilingLamports: r.ceilingLamports.toString(),
  ceilingWei: r.ceilingWei.toString(),
  denySolanaInstructions: ["spl-token:approve", "spl-token:approve_checked", "spl-token:set_authority"]
})

export const rulesFromJson = (j: BackstopRulesJson): BackstopRules => ({
  ceilingLamports: BigInt(j.ceilingLamports),
  ceilingWei: BigInt(j.ceilingWei)
})

export type PolicyDecision =
  | { readonly _tag: "Allow"; readonly movedRaw: bigint }
  | {
      readonly _tag: "Deny"
      readonly reason: "ceiling" | "denied_instruction" | "undecodable" | "default_deny"
      readonly message: string
      readonly instruction?: string
      readonly program?: string
    }

const deny = (
  reason: "ceiling" | "denied_instruction" | "undecodable" | "default_deny",
  message: string,
  more: { instruction?: string; program?: string } = {}
): PolicyDecision => ({ _tag: "Deny", reason, message, ...more })

const u64le = (data: Uint8Array, offset: number): bigint | undefined => {
  if (data.byteLength < offset + 8) return undefined
  return new DataView(data.buffer, data.byteOffset + offset, 8).getBigUint64(0, true)
}
const u32le = (data: Uint8Array): number | undefined =>
  data.byteLength < 4 ? undefined : new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true)

/**
 * Lamports a System program instruction moves out of `wallet`, or undefined for one that moves
 * none from it. The funder is the first account, except `TransferWithSeed`, whose first account
 * is the derived source and whose second is the signing base (the wallet).
 */
const systemOutflow = (data: Uint8Array, signerAt: (i: number) => Address | undefined, wallet: string): bigint | undefined => {
  switch (u32le(data)) {
    case 0: // CreateAccount { lamports, space, owner }
    case 2: // Transfer { lamports }
      return signerAt(0) === wallet ? u64le(data, 4) : undefined
    case 3: {
      // CreateAccountWithSeed { base, seed: string (u64 length), lamports, space, owner }
      if (signerAt(0) !== wallet) return undefined
      const seedLen = u64le(data, 36)
      return seedLen === undefined || seedLen > 1024n ? undefined : u64le(data, 44 + Number(seedLen))
    }
    case 11: // TransferWithSeed { lamports, from_seed, from_owner }
      return signerAt(1) === wallet ? u64le(data, 4) : undefined
    default:
      return undefined
  }
}

/** Decides a Solana wire transaction (as `getTransactionEncoder` writes it) for `wallet`. */
export const evaluateSolana = (rules: BackstopRules, wireBytes: Uint8Array, wallet: string): PolicyDecision => {
  let accounts: ReadonlyArray<Address>
  let instructions: ReadonlyArray<{ programAddressIndex: number; accountIndices?: ReadonlyArray<number>; data?: Uint8Array }>
  try {
    const tx = getTransactionDecoder().decode(wireBytes)
    // Legacy and v0 messages share these two members (the compiled types differ per version).
    const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes) as unknown as {
      staticAccounts: ReadonlyArray<Address>
      instructions: typeof instructions
    }
    accounts = message.staticAccounts
    instructions = message.instructions
  } catch (e) {
    return deny("undecodable", `transaction does not decode: ${String(e)}`)
  }
  let moved = 0n
  for (const ix of instructions) {
    // Program ids are always static keys (never loaded from a lookup table).
    const program = accounts[ix.programAddressIndex]
    if (program === undefined) return deny("undecodable", "instruction names a program outside the static keys")
    const data = ix.data ?? new Uint8Array()
    if (program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM) {
      const shape = data.byteLength > 0 ? DeniedTokenInstructions[data[0] as number] : undefined
      if (shape !== undefined) {
        return deny("denied_instruction", `the wallet policy denies SPL Token ${shape}`, { instruction: shape, program })
      }
    } else if (program === SYSTEM_PROGRAM) {
      // A funder signs, so it is a static key; an index past them is never the wallet.
      const signerAt = (i: number): Address | undefined => {
        const index = ix.accountIndices?.[i]
        return index === undefined ? undefined : accounts[index]
      }
      const out = systemOutflow(data, signerAt, wallet)
      if (out !== undefined) moved += out
    }
  }
  if (moved > rules.ceilingLamports) {
    return deny("ceiling", `transaction moves ${moved} lamports, over the wallet ceiling of ${rules.ceilingLamports}`)
  }
  return { _tag: "Allow", movedRaw: moved }
}

/** Decides an EVM serialized (unsigned) transaction: its `value` against the wei ceiling. */
export const evaluateEvm = (rules: BackstopRules, serialized: Hex): PolicyDecision => {
  let value: bigint
  try {
    value = parseTransaction(serialized).value ?? 0n
  } catch (e) {
    return deny("undecodable", `transaction does not decode: ${String(e)}`)
  }
  if (value > rules.ceilingWei) return deny("ceiling", `transaction moves ${value} wei, over the wallet ceiling of ${rules.ceilingWei}`)
  return { _tag: "Allow", movedRaw: value }
}

export const evaluate = (rules: BackstopRules, chain: WalletChain, transaction: Uint8Array, wallet: string): PolicyDecision =>
  chain === "solana" ? evaluateSolana(rules, transaction, wallet) : evaluateEvm(rules, `0x${Buffer.from(transaction).toString("hex")}`)
