/**
 * Readers for JSON-RPC positional parameters, each throwing the `-32602` error a validator
 * returns for a malformed argument. Integers arrive as numbers or, past 2^53, as bigints
 * (`json.ts`); both are accepted wherever Solana takes a u64.
 */
import { type Address, getBase58Encoder, isAddress } from "@solana/kit"
import type { Commitment } from "../../Ledger.js"
import { invalidParams, JsonRpcError } from "./httpJsonRpc.js"

const base58 = getBase58Encoder()

export type Config = Readonly<Record<string, unknown>>

export const configAt = (params: ReadonlyArray<unknown>, index: number): Config => {
  const v = params[index]
  if (v === undefined || v === null) return {}
  if (typeof v !== "object" || Array.isArray(v)) throw invalidParams(`Invalid params: argument ${index + 1} must be a configuration object`)
  return v as Config
}

export const requiredAt = (params: ReadonlyArray<unknown>, index: number, what: string): unknown => {
  const v = params[index]
  if (v === undefined || v === null) throw invalidParams(`Invalid params: missing ${what}`)
  return v
}

export const addressParam = (v: unknown, what = "address"): Address => {
  if (typeof v !== "string" || !isAddress(v)) throw invalidParams(`Invalid param: ${what} is not a valid public key`)
  return v
}

export const signatureParam = (v: unknown): string => {
  if (typeof v !== "string") throw invalidParams("Invalid param: signature must be a base58 string")
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(base58.encode(v))
  } catch {
    throw invalidParams("Invalid param: WrongSize")
  }
  if (bytes.length !== 64) throw invalidParams("Invalid param: WrongSize")
  return v
}

export const u64Param = (v: unknown, what: string): bigint => {
  if (typeof v === "bigint" && v >= 0n && v < 1n << 64n) return v
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v)
  throw invalidParams(`Invalid params: ${what} must be an unsigned 64-bit integer`)
}

export const usizeParam = (v: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number => {
  const n = u64Param(v, what)
  if (n > BigInt(max)) throw invalidParams(`Invalid params: ${what} must be at most ${max}`)
  return Number(n)
}

export const boolOption = (config: Config, key: string, fallback: boolean): boolean => {
  const v = config[key]
  if (v === undefined || v === null) return fallback
  if (typeof v !== "boolean") throw invalidParams(`Invalid params: ${key} must be a boolean`)
  return v
}

export const stringOption = <const T extends string>(config: Config, key: string, allowed: ReadonlyArray<T>, fallback: T): T => {
  const v = config[key]
  if (v === undefined || v === null) return fallback
  if (typeof v !== "string" || !(allowed as ReadonlyArray<string>).includes(v)) {
    throw invalidParams(`Invalid params: ${key} must be one of ${allowed.join(", ")}`)
  }
  return v as T
}

/** The RPC's default commitment is `finalized`, as a validator's. */
export const commitmentOption = (config: Config, key = "commitment"): Commitment =>
  stringOption(config, key, ["processed", "confirmed", "finalized"] as const, "finalized")

/** `minContextSlot`: fail with -32016 when the context slot has not reached it. */
export const checkMinContextSlot = (config: Config, contextSlot: bigint): void => {
  const v = config["minContextSlot"]
  if (v === undefined || v === null) return
  const min = u64Param(v, "minContextSlot")
  if (contextSlot < min) throw new JsonRpcError(-32016, "Minimum context slot has not been reached", { contextSlot })
}

export const arrayParam = (v: unknown, what: string, max: number): ReadonlyArray<unknown> => {
  if (!Array.isArray(v)) throw invalidParams(`Invalid params: ${what} must be an array`)
  if (v.length > max) throw invalidParams(`Too many inputs provided; max ${max}`)
  return v
}
