/**
 * Query-string and path parsing shared by the route modules. Each parser returns the value or
 * the `VALIDATION_FAILED` error naming the field (`Parsed<A>`), so a handler checks with
 * `isApiError` and returns the error as its refusal. Pure and synchronous (the hot read path).
 */
import type { ChainId } from "../ingest/ChainEvent.js"
import { type ApiError, validationFailed } from "../src/domain/ApiError.js"

export type Parsed<A> = A | ApiError

export const isApiError = (x: unknown): x is ApiError => typeof x === "object" && x !== null && (x as { _tag?: unknown })._tag === "ApiError"

/** A Solana base58 address or a Hood 0x address. */
export const ADDRESS_FORMAT: Readonly<Record<ChainId, RegExp>> = { solana: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, hood: /^0x[0-9a-fA-F]{40}$/ }

/** Hood addresses compare lower-case (spec 2.3: older rows may be lower-case); Solana's exactly. */
export const normalizeAddress = (chain: ChainId, a: string): string => (chain === "hood" ? a.toLowerCase() : a)

/** A well-formed address on `chain`, normalized; the error names `field`. */
export const parseAddress = (chain: ChainId, raw: string | undefined, field: string): Parsed<string> =>
  raw !== undefined && ADDRESS_FORMAT[chain].test(raw)
    ? normalizeAddress(chain, raw)
    : validationFailed(field, chain === "solana" ? `${field} must be a base58 address` : `${field} must be a 0x-prefixed 20-byte address`)

/** A parameter's value; an empty value counts as absent. */
export const opt = (q: URLSearchParams, name: string): string | undefined => {
  const v = q.get(name)
  return v === null || v === "" ? undefined : v
}

/** `chain`, default `solana`; `only` restricts it to one chain. */
export const parseChainParam = (q: URLSearchParams, only?: ChainId): Parsed<ChainId> => {
  const v = opt(q, "chain") ?? "solana"
  if (v !== "solana" && v !== "hood") return validationFailed("chain", `Unknown chain '${v}'; expected solana or hood`)
  if (only !== undefined && v !== only) return validationFailed("chain", `This read covers ${only} only`)
  return v
}

/** An integer in `min..max` (default `dflt`); with `bounds` the error also carries `minimum` and `limit`. */
export const parseIntParam = (q: URLSearchParams, name: string, min: number, max: number, dflt: number, bounds = false): Parsed<number> => {
  const v = opt(q, name)
  if (v === undefined) return dflt
  return /^\d{1,9}$/.test(v) && Number(v) >= min && Number(v) <= max
    ? Number(v)
    : validationFailed(name, `${name} must be an integer from ${min} to ${max}`, bounds ? { minimum: min, limit: max } : undefined)
}

/** One of `allowed` (default `dflt`, which may be undefined). */
export const parseEnumParam = <T extends string, D extends T | undefined>(q: URLSearchParams, name: string, allowed: ReadonlyArray<T>, dflt: D): Parsed<T | D> => {
  const v = opt(q, name)
  if (v === undefined) return dflt
  return (allowed as ReadonlyArray<string>).includes(v) ? (v as T) : validationFailed(name, `${name} must be one of ${allowed.join(", ")}`)
}

/** An ISO 8601 time or epoch milliseconds, or undefined when absent. */
export const parseTimeParam = (q: URLSearchParams, name: string): Parsed<number | undefined> => {
  const v = opt(q, name)
  if (v === undefined) return undefined
  const ms = /^\d{1,15}$/.test(v) ? Number(v) : /^\d{4}-\d{2}-\d{2}T/.test(v) ? Date.parse(v) : Number.NaN
  return Number.isFinite(ms) && ms >= 0 ? ms : validationFailed(name, `${name} must be an ISO 8601 time or epoch milliseconds`)
}
