/**
 * The feed's query grammar (`where`, `sort`, `fields`, `limit`), parsed once per request into a
 * plan applied to the bucket's rows. Comparisons are exact: decimal-string statistics (price,
 * volumes, market cap) compare as scaled integers, never as floats.
 *
 *   where  := cond ("," cond)*            all conditions must hold
 *   cond   := field op value               e.g. progressBps>=5000, volume24h>12.5, lifecycle=trading
 *   op     := ">=" | "<=" | "!=" | "=" | ">" | "<"
 *   sort   := ["-"] field                  "-" = descending; ties keep the bucket's own order
 *   fields := field ("," field)*           projection; `chain` and `address` are always included
 *   limit  := 1..200                       default 50
 *
 * The four parameters are declared (`FeedPlanParams`), so the feed route's decoded input is the
 * plan itself and OpenAPI documents the same bounds.
 */
import { type ApiError, validationFailed } from "../src/domain/ApiError.js"
import { decodeQuery, intParam, param } from "./QueryParams.js"

type Kind = "decimal" | "integer" | "string" | "time" | "boolean"

/** Row fields a query may name, with how they compare. */
export const FeedFields: Readonly<Record<string, Kind>> = {
  chain: "string",
  address: "string",
  name: "string",
  symbol: "string",
  image: "string",
  lifecycle: "string",
  progressBps: "integer",
  createdAt: "time",
  migratedAt: "time",
  isAgent: "boolean",
  price: "decimal",
  marketCap: "decimal",
  volume1h: "decimal",
  trades1h: "integer",
  volume24h: "decimal",
  trades24h: "integer",
  buys24h: "integer",
  sells24h: "integer",
  volumeTotal: "decimal",
  tradesTotal: "integer",
  lastTradeAt: "time",
  statsAsOf: "time"
}

export const FEED_LIMIT_DEFAULT = 50
export const FEED_LIMIT_MAX = 200
const MAX_CONDITIONS = 16
const MAX_QUERY_VALUE_LENGTH = 512

type Op = ">=" | "<=" | "!=" | "=" | ">" | "<"
type Row = Readonly<Record<string, unknown>>

interface Condition {
  readonly field: string
  readonly op: Op
  readonly kind: Kind
  readonly value: string
}

export interface FeedPlan {
  readonly where: ReadonlyArray<Condition>
  readonly sort: { readonly field: string; readonly kind: Kind; readonly desc: boolean } | undefined
  readonly fields: ReadonlyArray<string> | undefined
  readonly limit: number
}

const DECIMAL = /^-?\d+(\.\d+)?$/

const fractionLength = (s: string): number => {
  const dot = s.indexOf(".")
  return dot === -1 ? 0 : s.length - dot - 1
}

const scaled = (s: string, scale: number): bigint => {
  const negative = s.startsWith("-")
  const body = negative ? s.slice(1) : s
  const [whole, fraction = ""] = body.split(".") as [string, string?]
  const v = BigInt(whole + fraction.padEnd(scale, "0"))
  return negative ? -v : v
}

/** Exact comparison of two decimal strings. */
export const compareDecimal = (a: string, b: string): number => {
  const scale = Math.max(fractionLength(a), fractionLength(b))
  const x = scaled(a, scale)
  const y = scaled(b, scale)
  return x < y ? -1 : x > y ? 1 : 0
}

/** Compares a row value with a query value of the field's kind; null values never match. */
const compareValue = (kind: Kind, rowValue: unknown, value: string): number | undefined => {
  if (rowValue === null || rowValue === undefined) return undefined
  switch (kind) {
    case "decimal":
      return compareDecimal(String(rowValue), value)
    case "integer":
      return Math.sign(Number(rowValue) - Number(value))
    case "boolean":
      return String(rowValue) === value ? 0 : 1
    case "string":
    case "time": {
      const s = String(rowValue)
      return s < value ? -1 : s > value ? 1 : 0
    }
  }
}

const holds = (op: Op, c: number): boolean => {
  switch (op) {
    case "=":
      return c === 0
    case "!=":
      return c !== 0
    case ">":
      return c > 0
    case ">=":
      return c >= 0
    case "<":
      return c < 0
    case "<=":
      return c <= 0
  }
}

const validValue = (kind: Kind, value: string): boolean => {
  switch (kind) {
    case "decimal":
      return DECIMAL.test(value)
    case "integer":
      return /^-?\d{1,15}$/.test(value)
    case "boolean":
      return value === "true" || value === "false"
    case "time":
      return !Number.isNaN(Date.parse(value))
    case "string":
      return true
  }
}

const CONDITION = /^([A-Za-z0-9]+)(>=|<=|!=|=|>|<)(.*)$/

const parseWhere = (where: string): ReadonlyArray<Condition> | ApiError => {
  if (where.length > MAX_QUERY_VALUE_LENGTH) return validationFailed("where", `where is longer than ${MAX_QUERY_VALUE_LENGTH} characters`)
  const parts = where.split(",")
  if (parts.length > MAX_CONDITIONS) return validationFailed("where", `at most ${MAX_CONDITIONS} conditions`)
  const conditions: Condition[] = []
  for (const part of parts) {
    const m = CONDITION.exec(part.trim())
    if (m === null) return validationFailed("where", `'${part}' is not <field><op><value> with op one of >= <= != = > <`)
    const [, field, op, value] = m as unknown as [string, string, Op, string]
    const kind = FeedFields[field]
    if (kind === undefined) return validationFailed("where", `unknown field '${field}'`)
    if (!validValue(kind, value)) return validationFailed("where", `'${value}' is not a valid ${kind} for ${field}`)
    if (kind === "time") conditions.push({ field, op, kind, value: new Date(Date.parse(value)).toISOString() })
    else conditions.push({ field, op, kind, value })
  }
  return conditions
}

const parseSort = (sort: string): FeedPlan["sort"] | ApiError => {
  const desc = sort.startsWith("-")
  const field = desc ? sort.slice(1) : sort
  const kind = FeedFields[field]
  return kind === undefined ? validationFailed("sort", `unknown field '${field}'`) : { field, kind, desc }
}

const parseFields = (list: string): ReadonlyArray<string> | ApiError => {
  const fields = ["chain", "address"]
  for (const f of list.split(",")) {
    const name = f.trim()
    if (FeedFields[name] === undefined) return validationFailed("fields", `unknown field '${name}'`)
    if (!fields.includes(name)) fields.push(name)
  }
  return fields
}

const NO_CONDITIONS: ReadonlyArray<Condition> = []

/** The grammar's parameters, declared: the feed route decodes them into its input, which is a `FeedPlan`. */
export const FeedPlanParams = {
  where: param({
    description: "Filters (see the grammar above), e.g. progressBps>=5000,volume24h>10",
    schema: { type: "string", maxLength: MAX_QUERY_VALUE_LENGTH },
    decode: (raw) => (raw === undefined ? NO_CONDITIONS : parseWhere(raw))
  }),
  sort: param({
    description: "A field, '-' prefix for descending",
    schema: { type: "string", enum: Object.keys(FeedFields).flatMap((f) => [f, `-${f}`]) },
    decode: (raw) => (raw === undefined ? undefined : parseSort(raw))
  }),
  fields: param({
    description: "Comma-separated projection",
    schema: { type: "string" },
    decode: (raw) => (raw === undefined ? undefined : parseFields(raw))
  }),
  limit: intParam(`1 to ${FEED_LIMIT_MAX}, default ${FEED_LIMIT_DEFAULT}`, { min: 1, max: FEED_LIMIT_MAX, default: FEED_LIMIT_DEFAULT, emptyIsValue: true })
}

export const parseFeedPlan = (params: URLSearchParams): FeedPlan | ApiError => decodeQuery(FeedPlanParams, params.toString())

export const matches = (plan: FeedPlan, row: Row): boolean => {
  for (const c of plan.where) {
    const cmp = compareValue(c.kind, row[c.field], c.value)
    if (cmp === undefined || !holds(c.op, cmp)) return false
  }
  return true
}

/** Stable sort by the plan's key (nulls last in either direction). */
export const sortRows = <R extends Row>(plan: FeedPlan, rows: ReadonlyArray<R>): ReadonlyArray<R> => {
  const sort = plan.sort
  if (sort === undefined) return rows
  const indexed = rows.map((row, i) => ({ row, i }))
  indexed.sort((a, b) => {
    const av = a.row[sort.field]
    const bv = b.row[sort.field]
    if (av === null || av === undefined) return bv === null || bv === undefined ? a.i - b.i : 1
    if (bv === null || bv === undefined) return -1
    const c = compareValue(sort.kind, av, String(bv)) ?? 0
    return c === 0 ? a.i - b.i : sort.desc ? -c : c
  })
  return indexed.map((x) => x.row)
}

export const project = (plan: FeedPlan, row: Row): Row => {
  if (plan.fields === undefined) return row
  const out: Record<string, unknown> = {}
  for (const f of plan.fields) out[f] = row[f] ?? null
  return out
}
