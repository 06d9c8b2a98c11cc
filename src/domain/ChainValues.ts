/**
 * Branded Schemas for the chain strings a request carries: Solana signatures and addresses, EVM
 * transaction hashes and addresses, and raw amounts. Decoded at the edge (the router decodes a
 * body by its Schema), so a service receives only values that have the right bytes: a malformed
 * signature is a 400 naming its field, never a chain read that fails.
 *
 * Invariants: every check is the chain library's own (`@solana/kit` decodes base58 and counts the
 * bytes, viem checks hex length and the EIP-55 checksum); no base58 or checksum is hand-written
 * here. Decoding never throws for any string. An `EvmAddress` decodes to its EIP-55 form (spec
 * document 2, 2.3: older rows may be lower-case, so normalize before comparing); a mixed-case
 * address whose checksum is wrong is refused. A raw amount is a decimal string of whole raw units
 * with no sign, no leading zero and no fraction (`^(0|[1-9][0-9]*)$`), bounded by the caller.
 */
import { isAddress as isSolanaAddress, isSignature } from "@solana/kit"
import { Either, ParseResult, Schema } from "effect"
import { getAddress, isAddress as isEvmAddress, isHash } from "viem"

/** The library's check as a total predicate: `@solana/kit`'s `isSignature` throws on a non-base58 character. */
const total = (check: (s: string) => boolean) => (s: string): boolean => {
  try {
    return check(s)
  } catch {
    return false
  }
}

/** A Solana transaction signature: base58 that decodes to exactly 64 bytes. */
export const SolanaSignature = Schema.String.pipe(
  Schema.filter(total(isSignature), {
    message: () => "must be a base58 Solana signature (64 bytes)",
    jsonSchema: { pattern: "^[1-9A-HJ-NP-Za-km-z]{64,88}$" }
  }),
  Schema.brand("SolanaSignature")
).annotations({ identifier: "SolanaSignature", description: "base58, 64 bytes" })
export type SolanaSignature = typeof SolanaSignature.Type
export const isSolanaSignature = Schema.is(SolanaSignature)

/** An EVM transaction hash: `0x` and 32 bytes of hex. */
export const EvmTxHash = Schema.String.pipe(
  Schema.filter((s) => isHash(s), { message: () => "must be a 0x-prefixed 32-byte transaction hash", jsonSchema: { pattern: "^0x[0-9a-fA-F]{64}$" } }),
  Schema.brand("EvmTxHash")
).annotations({ identifier: "EvmTxHash", description: "0x and 32 bytes of hex" })
export type EvmTxHash = typeof EvmTxHash.Type
export const isEvmTxHash = Schema.is(EvmTxHash)

/** A Solana address: base58 that decodes to exactly 32 bytes. */
export const SolanaAddress = Schema.String.pipe(
  Schema.filter(total(isSolanaAddress), { message: () => "must be a base58 Solana address (32 bytes)", jsonSchema: { pattern: "^[1-9A-HJ-NP-Za-km-z]{32,44}$" } }),
  Schema.brand("SolanaAddress")
).annotations({ identifier: "SolanaAddress", description: "base58, 32 bytes" })
export type SolanaAddress = typeof SolanaAddress.Type

/** 20 bytes of hex; a mixed-case address must carry a valid checksum, all-lower or all-upper carries none (viem's strict check refuses all-upper). */
const isNormalizableEvmAddress = (s: string): boolean => {
  if (!/^0x[0-9a-fA-F]{40}$/.test(s)) return false
  const hex = s.slice(2)
  return hex === hex.toLowerCase() || hex === hex.toUpperCase() || isEvmAddress(s, { strict: true })
}

const EvmAddressChecksummed = Schema.String.pipe(Schema.brand("EvmAddress"))

/**
 * An EVM address, decoded to its EIP-55 form: `0x` and 20 bytes of hex, all lower-case, all
 * upper-case, or mixed case with a valid checksum. Encodes as the checksummed form.
 */
export const EvmAddress = Schema.transformOrFail(Schema.String, EvmAddressChecksummed, {
  strict: true,
  decode: (s, _, ast) =>
    isNormalizableEvmAddress(s)
      ? ParseResult.succeed(EvmAddressChecksummed.make(getAddress(s.toLowerCase())))
      : ParseResult.fail(new ParseResult.Type(ast, s, "must be a 0x-prefixed 20-byte address (EIP-55 when mixed case)")),
  encode: (a) => ParseResult.succeed(a)
}).annotations({ identifier: "EvmAddress", description: "0x and 20 bytes of hex; EIP-55 when mixed case", jsonSchema: { type: "string", pattern: "^0x[0-9a-fA-F]{40}$" } })
export type EvmAddress = typeof EvmAddress.Type

const RAW_DECIMAL = /^(0|[1-9][0-9]*)$/
/** No raw amount on either chain passes 2^256 - 1 (78 digits); longer strings are refused before `BigInt`. */
export const RAW_AMOUNT_DIGITS_MAX = 78

/** A raw amount as its decimal string (`^(0|[1-9][0-9]*)$`, at most 78 digits). */
export const RawAmountString = Schema.String.pipe(
  Schema.filter((s) => s.length <= RAW_AMOUNT_DIGITS_MAX && RAW_DECIMAL.test(s), {
    message: () => "must be a whole number of raw units as a decimal string, such as \"1500000\"",
    jsonSchema: { pattern: "^(0|[1-9][0-9]*)$" }
  }),
  Schema.brand("RawAmountString")
).annotations({ identifier: "RawAmountString", description: "raw units as a decimal string" })
export type RawAmountString = typeof RawAmountString.Type

export interface RawAmountBounds {
  /** Inclusive; default 0. */
  readonly min?: bigint
  /** Inclusive; default none (78 digits). */
  readonly max?: bigint
}

/**
 * A raw amount decoded from its decimal string to `bigint`, within `bounds` (inclusive). Encodes
 * back to the decimal string.
 */
export const RawAmount = (bounds: RawAmountBounds = {}) => {
  const min = bounds.min ?? 0n
  const max = bounds.max
  const within = max === undefined ? (min === 0n ? "" : ` of at least ${min}`) : ` from ${min} to ${max}`
  return Schema.transformOrFail(Schema.String, Schema.BigIntFromSelf, {
    strict: true,
    decode: (s, _, ast) => {
      if (s.length > RAW_AMOUNT_DIGITS_MAX || !RAW_DECIMAL.test(s)) {
        return ParseResult.fail(new ParseResult.Type(ast, s, `must be a whole number of raw units${within} as a decimal string, such as "1500000"`))
      }
      const v = BigInt(s)
      return v < min || (max !== undefined && v > max) ? ParseResult.fail(new ParseResult.Type(ast, s, `must be${within} raw units`)) : ParseResult.succeed(v)
    },
    encode: (v) => ParseResult.succeed(v.toString())
  }).annotations({ identifier: "RawAmount", description: `raw units as a decimal string${within}`, jsonSchema: { type: "string", pattern: "^(0|[1-9][0-9]*)$" } })
}

/** A decoder of `schema` that answers the value or undefined, for a hand-written decoder that keeps its own refusal. */
export const decodeOption = <A, I>(schema: Schema.Schema<A, I, never>): ((u: unknown) => A | undefined) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (u) => Either.getOrUndefined(decode(u))
}
