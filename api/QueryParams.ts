/**
 * Query-string and path parsing shared by the route modules. Pure and synchronous (the hot read
 * path).
 *
 * Routes declare their parameters as `Param`s (`intParam`, `enumParam`, `chainParam`,
 * `stringParam`, `timeParam`, or `param` with a hand-written decoder); `route()` in `Router.ts`
 * decodes them before the handler runs and `OpenApi.ts` documents them from the same objects.
 * `parseAddress` checks a chain-dependent address a handler reads (the mint of `{chain}/{mint}`).
 */
import { isCheckedAddress as isSolanaAddress } from "../src/chain/solana/client/Accounts.js"
import type { ChainId } from "../ingest/ChainEvent.js"
import { type ApiError, validationFailed } from "../src/domain/ApiError.js"
import { normalizeAddress } from "../src/domain/Chain.js"

export type Parsed<A> = A | ApiError

/**
 * Whether `x` is a refusal. A tag check, not `instanceof ApiError`: the Schema class's many
 * statics leave its `prototype` lookup slow (~40 ns a check, measured), and decoding checks every
 * parameter.
 */
export const isApiError = (x: unknown): x is ApiError => typeof x === "object" && x !== null && (x as { _tag?: unknown })._tag === "ApiError"

/** A Solana base58 address or a Hood 0x address. */
export const ADDRESS_FORMAT: Readonly<Record<ChainId, RegExp>> = { solana: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, hood: /^0x[0-9a-fA-F]{40}$/ }

export { normalizeAddress }

/** A well-formed address on `chain`, normalized; the error names `field`. */
export const parseAddress = (chain: ChainId, raw: string | undefined, field: string): Parsed<string> =>
  raw !== undefined && ADDRESS_FORMAT[chain].test(raw)
    ? normalizeAddress(chain, raw)
    : validationFailed(field, chain === "solana" ? `${field} must be a base58 address` : `${field} must be a 0x-prefixed 20-byte address`)

/**
 * `parseAddress`, and on Solana base58 text of exactly 32 bytes (kit's `isAddress`, ~9 µs and a
 * BigInt loop's garbage, memoized for the texts it accepted: `isCheckedAddress`; for bodies that
 * reach the chain, not the read path): the pattern alone admits 44 characters that decode to 33
 * bytes, which a chain read throws on.
 */
export const parseExactAddress = (chain: ChainId, raw: string | undefined, field: string, message: string): Parsed<string> => {
  const parsed = parseAddress(chain, raw, field)
  return typeof parsed === "string" && chain === "solana" && !isSolanaAddress(parsed) ? validationFailed(field, message) : parsed
}

// ---------------------------------------------------------------------------------------------
// Declared parameters: one declaration is both the OpenAPI parameter and its decoder.

/**
 * A declared path or query parameter: its OpenAPI documentation and its decoder, built from one
 * set of bounds so the document and the behaviour cannot drift (a conformance test in
 * `Router.test.ts` probes every declared bound through `decode`).
 */
export interface Param<A> {
  readonly description: string
  /** Documented as required; `decode(undefined)` refuses exactly when this is true. */
  readonly required: boolean
  /** JSON Schema of the value for OpenAPI, from the same bounds `decode` enforces. */
  readonly schema: Readonly<Record<string, unknown>>
  /** A repeated query parameter is refused; otherwise the first occurrence wins (as `URLSearchParams.get`). */
  readonly unique: boolean
  /** An empty query value reaches `decode` as `""`; otherwise it counts as absent. */
  readonly emptyIsValue: boolean
  /** `raw` is undefined when the parameter is absent. The value, or the refusal naming `name`. */
  readonly decode: (raw: string | undefined, name: string) => A | ApiError
}

/** Options every parameter kind takes. */
export interface ParamOptions {
  readonly unique?: boolean | undefined
  readonly emptyIsValue?: boolean | undefined
}

export type Params = Readonly<Record<string, Param<unknown>>>

/** The decoded values of a parameter declaration. */
export type Decoded<P extends Params> = { readonly [K in keyof P]: P[K] extends Param<infer A> ? A : never }

/** A parameter with a hand-written decoder; `decode(undefined)` must refuse exactly when `required`. */
export const param = <A>(p: {
  readonly description: string
  readonly schema: Readonly<Record<string, unknown>>
  readonly required?: boolean
  readonly decode: (raw: string | undefined, name: string) => A | ApiError
} & ParamOptions): Param<A> => ({
  description: p.description,
  schema: p.schema,
  required: p.required ?? false,
  unique: p.unique ?? false,
  emptyIsValue: p.emptyIsValue ?? false,
  decode: p.decode
})

const missing = (name: string): ApiError => validationFailed(name, `${name} is required`)

const INTEGER = /^\d{1,15}$/

interface IntOptions extends ParamOptions {
  readonly min: number
  readonly max: number
  /** The refusal also carries `minimum` and `limit`. */
  readonly boundsInError?: boolean
  readonly message?: string
}

/** A non-negative integer in `min..max`. */
export function intParam(description: string, o: IntOptions & { readonly default: number }): Param<number>
export function intParam(description: string, o: IntOptions & { readonly required: true }): Param<number>
export function intParam(description: string, o: IntOptions): Param<number | undefined>
export function intParam(description: string, o: IntOptions & { readonly default?: number; readonly required?: boolean }): Param<number | undefined> {
  const { max, min } = o
  const dflt = o.default
  const required = o.required === true
  const extra = o.boundsInError === true ? { minimum: min, limit: max } : undefined
  return param({
    description,
    required,
    unique: o.unique,
    emptyIsValue: o.emptyIsValue,
    schema: { type: "integer", minimum: min, maximum: max, ...(dflt !== undefined ? { default: dflt } : {}) },
    decode: (raw, name) => {
      if (raw === undefined) return required ? missing(name) : dflt
      const n = INTEGER.test(raw) ? Number(raw) : Number.NaN
      return n >= min && n <= max ? n : validationFailed(name, o.message ?? `${name} must be an integer from ${min} to ${max}`, extra)
    }
  })
}

interface EnumOptions extends ParamOptions {
  /** The refusal's message for a value outside the set (default `<name> must be one of …`). */
  readonly message?: (raw: string, name: string) => string
}

/** One of `values`. */
export function enumParam<const T extends string>(description: string, values: ReadonlyArray<T>, o: EnumOptions & { readonly default: T }): Param<T>
export function enumParam<const T extends string>(description: string, values: ReadonlyArray<T>, o: EnumOptions & { readonly required: true }): Param<T>
export function enumParam<const T extends string>(description: string, values: ReadonlyArray<T>, o?: EnumOptions): Param<T | undefined>
export function enumParam<const T extends string>(
  description: string,
  values: ReadonlyArray<T>,
  o: EnumOptions & { readonly default?: T; readonly required?: boolean } = {}
): Param<T | undefined> {
  const dflt = o.default
  const required = o.required === true
  const allowed: ReadonlyArray<string> = values
  return param({
    description,
    required,
    unique: o.unique,
    emptyIsValue: o.emptyIsValue,
    schema: { type: "string", enum: [...values], ...(dflt !== undefined ? { default: dflt } : {}) },
    decode: (raw, name) => {
      if (raw === undefined) return required ? missing(name) : dflt
      return allowed.includes(raw) ? (raw as T) : validationFailed(name, o.message?.(raw, name) ?? `${name} must be one of ${values.join(", ")}`)
    }
  })
}

const unknownChain = (raw: string) => `Unknown chain '${raw}'; expected solana or hood`

/** `chain`: solana or hood. */
export function chainParam(description: string, o: ParamOptions & { readonly default: ChainId }): Param<ChainId>
export function chainParam(description: string, o: ParamOptions & { readonly required: true }): Param<ChainId>
export function chainParam(description: string, o?: ParamOptions): Param<ChainId | undefined>
export function chainParam(description: string, o: ParamOptions & { readonly default?: ChainId; readonly required?: boolean } = {}): Param<ChainId | undefined> {
  return enumParam<ChainId>(description, ["solana", "hood"], { ...o, message: unknownChain } as EnumOptions)
}

interface StringOptions extends ParamOptions {
  readonly pattern?: RegExp
  readonly maxLength?: number
  /** The refusal's message for a value the pattern or length refuses. */
  readonly message?: (name: string) => string
}

/** A string, optionally matching `pattern` (anchored) and at most `maxLength` characters. */
export function stringParam(description: string, o: StringOptions & { readonly required: true }): Param<string>
export function stringParam(description: string, o?: StringOptions): Param<string | undefined>
export function stringParam(description: string, o: StringOptions & { readonly required?: boolean } = {}): Param<string | undefined> {
  const required = o.required === true
  const { maxLength, pattern } = o
  return param({
    description,
    required,
    unique: o.unique,
    emptyIsValue: o.emptyIsValue,
    schema: { type: "string", ...(pattern !== undefined ? { pattern: pattern.source } : {}), ...(maxLength !== undefined ? { maxLength } : {}) },
    decode: (raw, name) => {
      if (raw === undefined) return required ? missing(name) : undefined
      return (pattern === undefined || pattern.test(raw)) && (maxLength === undefined || raw.length <= maxLength)
        ? raw
        : validationFailed(name, o.message?.(name) ?? (pattern !== undefined ? `${name} must match ${pattern.source}` : `${name} is longer than ${maxLength} characters`))
    }
  })
}

/** An ISO 8601 time or epoch milliseconds (decoded to epoch milliseconds), or undefined when absent. */
export const timeParam = (description: string, o: ParamOptions = {}): Param<number | undefined> =>
  param({
    description,
    ...o,
    schema: { type: "string", description: "ISO 8601 time or epoch milliseconds" },
    decode: (raw, name) => {
      if (raw === undefined) return undefined
      const ms = /^\d{1,15}$/.test(raw) ? Number(raw) : /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : Number.NaN
      return Number.isFinite(ms) && ms >= 0 ? ms : validationFailed(name, `${name} must be an ISO 8601 time or epoch milliseconds`)
    }
  })

/**
 * The raw values of `names` in a query string (without `?`), in declaration order; undefined
 * when absent; `""` for an empty value. A query without escapes is scanned in place (no
 * `URLSearchParams`, one array); one with `%` or `+` goes through `URLSearchParams`.
 */
export const scanQuery = (
  query: string,
  names: ReadonlyArray<string>,
  params: ReadonlyArray<Param<unknown>>
): Array<string | undefined> | ApiError => {
  const n = names.length
  const raws = new Array<string | undefined>(n)
  if (query === "") return raws
  if (query.includes("%") || query.includes("+")) {
    const q = new URLSearchParams(query)
    for (let i = 0; i < n; i++) {
      const name = names[i]!
      const all = q.getAll(name)
      if (all.length > 1 && params[i]!.unique) return validationFailed(name, `${name} given more than once`)
      raws[i] = all[0]
    }
    return raws
  }
  let start = 0
  const length = query.length
  while (start < length) {
    let end = query.indexOf("&", start)
    if (end === -1) end = length
    let keyEnd = query.indexOf("=", start)
    if (keyEnd === -1 || keyEnd > end) keyEnd = end
    const keyLength = keyEnd - start
    for (let i = 0; i < n; i++) {
      const name = names[i]!
      if (name.length !== keyLength || !query.startsWith(name, start)) continue
      if (raws[i] === undefined) raws[i] = keyEnd === end ? "" : query.slice(keyEnd + 1, end)
      else if (params[i]!.unique) return validationFailed(name, `${name} given more than once`)
      break
    }
    start = end + 1
  }
  return raws
}

/** Decodes `raws` (from `scanQuery` or path segments) into `out` under `names`; the first refusal wins. */
export const decodeInto = (
  out: Record<string, unknown>,
  raws: ReadonlyArray<string | undefined>,
  names: ReadonlyArray<string>,
  params: ReadonlyArray<Param<unknown>>
): ApiError | undefined => {
  for (let i = 0; i < names.length; i++) {
    const p = params[i]!
    let raw = raws[i]
    if (raw === "" && !p.emptyIsValue) raw = undefined
    const v = p.decode(raw, names[i]!)
    if (isApiError(v)) return v
    out[names[i]!] = v
  }
  return undefined
}

/** Decodes a query string against a declaration (what the router does for a route's `query`). */
export const decodeQuery = <P extends Params>(declared: P, query: string): Decoded<P> | ApiError => {
  const names = Object.keys(declared)
  const params = names.map((k) => declared[k]!)
  const raws = scanQuery(query, names, params)
  if (isApiError(raws)) return raws
  const out: Record<string, unknown> = {}
  const refused = decodeInto(out, raws, names, params)
  return refused ?? (out as unknown as Decoded<P>)
}

/** The first parameter of `query` not in `names` (a route with `closedQuery`), or undefined. */
export const undeclaredParam = (query: string, names: ReadonlyArray<string>): string | undefined => {
  if (query === "") return undefined
  for (const k of new URLSearchParams(query).keys()) if (!names.includes(k)) return k
  return undefined
}
