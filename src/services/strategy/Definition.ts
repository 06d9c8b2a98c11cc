/**
 * The strategy definition of spec 2.7 (Max strategy lab) and the replay request body, as
 * `effect/Schema`, decoded strictly: an unknown field anywhere is refused, and a refusal names
 * the FIRST problem found as `<path>: <message>` (`exit.trailing.drop_pct: must be ...`), the
 * path relative to the object decoded (`definition.` prefixed when it is the request body).
 *
 * Invariants:
 * - Money is exact: USD amounts arrive as a JSON number or a decimal string with at most 6
 *   decimals and become micro-USD `bigint`s; percentages carry at most 2 decimals and become
 *   basis points (`bigint`), multiples at most 4 decimals and become 1/10,000ths. Nothing
 *   the replay computes money from is a float.
 * - Every list and number has a bound (a definition is user input that drives a 10-minute job).
 * - Cross-field rules (a `conviction` entry needs `exit.ladder`, `pct_of_equity` needs
 *   `sizing.base_usd`, min below max) are checked after the fields and name the field to fix.
 * - Every scalar, list and the entry carry a `jsonSchema` annotation, so the definition's JSON
 *   Schema (`JSONSchema.make(StrategyDefinition)`, the wire form) documents the bounds the decoder
 *   enforces; the cross-field rules and the decimal places are in the descriptions only.
 */
import { Either, ParseResult, Schema, SchemaAST } from "effect"
import { parseUsdMicros as usdMicros } from "../prices/Money.js"

export const SignalPatterns = [
  "confluence",
  "deployer",
  "large_move",
  "dormancy",
  "intra_book",
  "new_ticker",
  "distribution",
  "kol_mention"
] as const
export type SignalPattern = (typeof SignalPatterns)[number]

/** Bounds of the definition (spec 8 where it names one; the rest are ours, in the report). */
export const DefinitionLimits = {
  walletIdsMax: 50,
  groupsMax: 25,
  venuesMax: 10,
  ladderStepsMax: 10,
  sizingRulesMax: 10,
  maxConcurrentMax: 100,
  usdMaxMicros: 1_000_000_000_000n, // $1,000,000 per amount
  takeProfitPctMax: 100_000,
  maxHoldHoursMax: 336, // 14 days: the longest window
  multipleMax: 1_000,
  convictionWindowMinutesMax: 1_440,
  kolWindowMinutesMax: 1_440
} as const

// ---------------------------------------------------------------------------------------------
// Scalars with their messages.

const USD_DECIMAL = /^(0|[1-9][0-9]{0,12})(\.[0-9]{1,6})?$/

/** Micro-USD of a decimal text in the strategy grammar (no leading zeros, at most 13 integer digits), or undefined. */
export const parseUsdMicros = (text: string): bigint | undefined => (USD_DECIMAL.test(text) ? usdMicros(text) : undefined)

/** A decimal text of a JSON number without exponent, or undefined (1e21, NaN...). */
const numberText = (n: number): string | undefined => {
  if (!Number.isFinite(n)) return undefined
  const s = String(n)
  return /e/i.test(s) ? undefined : s
}

const scaled = (n: number, decimals: number): bigint | undefined => {
  const s = numberText(n)
  if (s === undefined || n < 0) return undefined
  const [whole, frac = ""] = s.split(".")
  if (frac.length > decimals) return undefined
  return BigInt(whole!) * 10n ** BigInt(decimals) + BigInt((frac + "0".repeat(decimals)).slice(0, decimals))
}

/** A USD amount: JSON number or decimal string, > 0 (or >= 0), at most 6 decimals, at most $1,000,000. */
const usd = (options: { readonly allowZero?: boolean } = {}) => {
  const message = `must be a USD amount ${options.allowZero ? ">= 0" : "> 0"} and at most 1000000, with at most 6 decimals`
  return Schema.transformOrFail(Schema.Union(Schema.Number, Schema.String), Schema.BigIntFromSelf, {
    strict: true,
    decode: (raw, _options, ast) => {
      const micros = typeof raw === "number" ? (() => {
        const t = numberText(raw)
        return t === undefined ? undefined : parseUsdMicros(t)
      })() : parseUsdMicros(raw)
      return micros === undefined || micros > DefinitionLimits.usdMaxMicros || (!options.allowZero && micros === 0n)
        ? ParseResult.fail(new ParseResult.Type(ast, raw, message))
        : ParseResult.succeed(micros)
    },
    encode: (micros) => ParseResult.succeed(formatUsd(micros))
  }).annotations({
    message: () => message,
    jsonSchema: {
      description: `A USD amount ${options.allowZero ? ">= 0" : "> 0"}, at most 1000000 with at most 6 decimals`,
      anyOf: [
        { type: "number", [options.allowZero ? "minimum" : "exclusiveMinimum"]: 0, maximum: 1_000_000 },
        { type: "string", pattern: USD_DECIMAL.source }
      ]
    }
  })
}

/** A number within (min, max] (or [min, max]) with at most `decimals` decimals, as an integer scaled by 10^decimals. */
const scaledNumber = (options: {
  readonly min: number
  readonly minInclusive: boolean
  readonly max: number
  readonly maxInclusive: boolean
  readonly decimals: number
}) => {
  const { min, max, decimals } = options
  const message = `must be a number ${options.minInclusive ? ">=" : ">"} ${min} and ${options.maxInclusive ? "<=" : "<"} ${max} with at most ${decimals} decimals`
  return Schema.transformOrFail(Schema.Unknown, Schema.BigIntFromSelf, {
    strict: true,
    decode: (raw, _o, ast) => {
      const ok =
        typeof raw === "number" &&
        (options.minInclusive ? raw >= min : raw > min) &&
        (options.maxInclusive ? raw <= max : raw < max)
      const v = ok ? scaled(raw as number, decimals) : undefined
      return v === undefined ? ParseResult.fail(new ParseResult.Type(ast, raw, message)) : ParseResult.succeed(v)
    },
    encode: (v) => ParseResult.succeed(Number(v) / 10 ** decimals)
  }).annotations({
    jsonSchema: {
      type: "number",
      description: `At most ${decimals} decimals`,
      [options.minInclusive ? "minimum" : "exclusiveMinimum"]: min,
      [options.maxInclusive ? "maximum" : "exclusiveMaximum"]: max
    }
  })
}

const int = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`
  return Schema.Unknown.pipe(
    Schema.filter((u): u is number => typeof u === "number" && Number.isInteger(u) && u >= min && u <= max, {
      message: () => message,
      jsonSchema: { type: "integer", minimum: min, maximum: max }
    })
  ) as unknown as Schema.Schema<number, number>
}

const nonEmptyId = Schema.String.pipe(
  Schema.filter((s) => s.length >= 1 && s.length <= 128, { message: () => "must be a string of 1 to 128 characters", jsonSchema: { minLength: 1, maxLength: 128 } })
)

const list = <A, I>(item: Schema.Schema<A, I>, max: number, what = "items") =>
  Schema.Array(item).pipe(
    Schema.filter((a) => a.length >= 1 && a.length <= max, { message: () => `must hold 1 to ${max} ${what}`, jsonSchema: { minItems: 1, maxItems: max } }),
    Schema.filter((a) => new Set(a.map((x) => JSON.stringify(x))).size === a.length, { message: () => "must not repeat an item", jsonSchema: { uniqueItems: true } })
  )

/** One of `values`, refused with one message (a literal union would name only its first member). */
const literal = <const L extends ReadonlyArray<string>>(...values: L) => {
  const message = `must be one of ${values.join(", ")}`
  return Schema.Unknown.pipe(
    Schema.filter((u): u is L[number] => typeof u === "string" && values.includes(u), { message: () => message, jsonSchema: { type: "string", enum: values } })
  ) as unknown as Schema.Schema<L[number], L[number]>
}

const bool = Schema.Boolean.annotations({ message: () => "must be true or false" })

/** Percent with 2 decimals as bps. */
const pct = (min: number, max: number, maxInclusive = true) =>
  scaledNumber({ min, minInclusive: false, max, maxInclusive, decimals: 2 })
/** A multiple (x entry price) with 4 decimals, as 1/10,000ths. */
const multiple = scaledNumber({ min: 1, minInclusive: false, max: DefinitionLimits.multipleMax, maxInclusive: true, decimals: 4 })
const confidence = scaledNumber({ min: 0, minInclusive: true, max: 1, maxInclusive: true, decimals: 4 })

// ---------------------------------------------------------------------------------------------
// The definition.

/** A struct of the definition: decoded closed (`onExcessProperty: "error"`), so documented closed whatever a document's default for bodies. */
const closedStruct = <F extends Schema.Struct.Fields>(fields: F) => Schema.Struct(fields).annotations({ jsonSchema: { additionalProperties: false } })

const KolMentions = closedStruct({
  min_mentions: int(1, 100),
  within_minutes: int(1, DefinitionLimits.kolWindowMinutesMax)
})

export const EntryFilters = closedStruct({
  min_usd: Schema.optional(usd({ allowZero: true })),
  min_mcap_usd: Schema.optional(usd({ allowZero: true })),
  max_mcap_usd: Schema.optional(usd()),
  min_age_minutes: Schema.optional(int(0, 525_600)),
  max_age_minutes: Schema.optional(int(0, 525_600)),
  groups: Schema.optional(list(nonEmptyId, DefinitionLimits.groupsMax, "groups")),
  groups_all: Schema.optional(list(nonEmptyId, DefinitionLimits.groupsMax, "groups")),
  min_group_wallets: Schema.optional(int(1, 50)),
  wallet_ids: Schema.optional(list(nonEmptyId, DefinitionLimits.walletIdsMax, "wallets")),
  venues: Schema.optional(list(nonEmptyId, DefinitionLimits.venuesMax, "venues")),
  exclude_venues: Schema.optional(list(nonEmptyId, DefinitionLimits.venuesMax, "venues")),
  direction: Schema.optional(literal("in", "out")),
  hours_et: Schema.optional(list(int(0, 23), 24, "hours")),
  min_score_1h: Schema.optional(scaledNumber({ min: 0, minInclusive: true, max: 100, maxInclusive: true, decimals: 2 })),
  kol_mentions: Schema.optional(KolMentions)
}).pipe(
  Schema.filter((f) => {
    if (f.min_mcap_usd !== undefined && f.max_mcap_usd !== undefined && f.min_mcap_usd > f.max_mcap_usd)
      return { path: ["max_mcap_usd"], message: "must be >= min_mcap_usd" }
    if (f.min_age_minutes !== undefined && f.max_age_minutes !== undefined && f.min_age_minutes > f.max_age_minutes)
      return { path: ["max_age_minutes"], message: "must be >= min_age_minutes" }
    const excluded = new Set(f.exclude_venues ?? [])
    const both = (f.venues ?? []).find((v) => excluded.has(v))
    if (both !== undefined) return { path: ["exclude_venues"], message: `must not repeat a venue of venues (${both})` }
    return true
  })
)
export type EntryFilters = typeof EntryFilters.Type

const PatternEntry = closedStruct({
  source: Schema.Literal("pattern"),
  pattern: literal(...SignalPatterns),
  filters: Schema.optional(EntryFilters)
})
const TradeSignalEntry = closedStruct({
  source: Schema.Literal("trade_signal"),
  min_confidence: confidence,
  filters: Schema.optional(EntryFilters)
})
const ConvictionEntry = closedStruct({
  source: Schema.Literal("conviction"),
  min_signals: int(2, 50),
  window_minutes: int(1, DefinitionLimits.convictionWindowMinutesMax),
  patterns: Schema.optional(list(literal(...SignalPatterns), SignalPatterns.length, "patterns")),
  filters: Schema.optional(EntryFilters)
})
export const EntrySources = ["pattern", "trade_signal", "conviction"] as const
const entries = { pattern: PatternEntry, trade_signal: TradeSignalEntry, conviction: ConvictionEntry } as const

/**
 * The entry is decoded in two steps so a wrong `source` is named as `entry.source` (a plain
 * union would report every member's mismatch at once). Its JSON Schema is the plain union's
 * (the surrogate), a component named `StrategyEntry`.
 */
const Entry = Schema.declare(
  [],
  {
    decode: () => (input, options, ast) => {
      if (typeof input !== "object" || input === null || Array.isArray(input))
        return ParseResult.fail(new ParseResult.Type(ast, input, "must be an object"))
      const source = (input as Record<string, unknown>).source
      if (source === undefined) return ParseResult.fail(new ParseResult.Pointer("source", input, new ParseResult.Type(Schema.String.ast, undefined, "is required")))
      if (typeof source !== "string" || !(EntrySources as ReadonlyArray<string>).includes(source))
        return ParseResult.fail(
          new ParseResult.Pointer("source", input, new ParseResult.Type(Schema.String.ast, source, `must be one of ${EntrySources.join(", ")}`))
        )
      const schema = entries[source as keyof typeof entries] as unknown as Schema.Schema<unknown, unknown>
      return ParseResult.decodeUnknown(schema)(input, { ...options, onExcessProperty: "error" })
    },
    encode: () => (input) => ParseResult.succeed(input)
  },
  {
    identifier: "Entry",
    [SchemaAST.JSONIdentifierAnnotationId]: "StrategyEntry",
    [SchemaAST.SurrogateAnnotationId]: Schema.Union(PatternEntry, TradeSignalEntry, ConvictionEntry).ast
  }
) as unknown as Schema.Schema<typeof PatternEntry.Type | typeof TradeSignalEntry.Type | typeof ConvictionEntry.Type, unknown>
export type Entry = typeof PatternEntry.Type | typeof TradeSignalEntry.Type | typeof ConvictionEntry.Type

const Trailing = closedStruct({
  arm_multiple: multiple,
  drop_pct: pct(0, 100, false)
})

const LadderStep = closedStruct({
  at_multiple: multiple,
  sell_pct: pct(0, 100)
})

export const ExitOptions = ["take_profit_pct", "stop_loss_pct", "max_hold_hours", "exit_on_signal", "trailing", "ladder"] as const

export const Exit = closedStruct({
  take_profit_pct: Schema.optional(pct(0, DefinitionLimits.takeProfitPctMax)),
  stop_loss_pct: Schema.optional(pct(0, 100, false)),
  max_hold_hours: Schema.optional(
    scaledNumber({ min: 0, minInclusive: false, max: DefinitionLimits.maxHoldHoursMax, maxInclusive: true, decimals: 2 })
  ),
  exit_on_signal: Schema.optional(bool),
  trailing: Schema.optional(Trailing),
  ladder: Schema.optional(
    Schema.Array(LadderStep).pipe(
      Schema.filter((a) => a.length >= 1 && a.length <= DefinitionLimits.ladderStepsMax, {
        message: () => `must hold 1 to ${DefinitionLimits.ladderStepsMax} steps`,
        jsonSchema: { minItems: 1, maxItems: DefinitionLimits.ladderStepsMax }
      })
    )
  )
}).pipe(
  Schema.filter((e) => {
    const any =
      e.take_profit_pct !== undefined ||
      e.stop_loss_pct !== undefined ||
      e.max_hold_hours !== undefined ||
      e.exit_on_signal === true ||
      e.trailing !== undefined ||
      e.ladder !== undefined
    if (!any) return `must set at least one of ${ExitOptions.join(", ")}`
    if (e.ladder !== undefined) {
      for (let i = 1; i < e.ladder.length; i++) {
        if (e.ladder[i]!.at_multiple <= e.ladder[i - 1]!.at_multiple)
          return { path: ["ladder", i, "at_multiple"], message: "must be greater than the previous step's at_multiple" }
      }
      const total = e.ladder.reduce((s, step) => s + step.sell_pct, 0n)
      if (total > 10_000n) return { path: ["ladder"], message: "sell_pct of the steps must add up to at most 100" }
    }
    return true
  })
)
export type Exit = typeof Exit.Type

const RuleWhen = closedStruct({
  pattern: Schema.optional(literal(...SignalPatterns)),
  min_confidence: Schema.optional(confidence),
  min_usd: Schema.optional(usd({ allowZero: true })),
  min_mcap_usd: Schema.optional(usd({ allowZero: true })),
  max_mcap_usd: Schema.optional(usd())
})

const SizingRule = closedStruct({
  when: Schema.optional(RuleWhen),
  usd: Schema.optional(usd()),
  pct_of_equity: Schema.optional(pct(0, 100)),
  multiplier: Schema.optional(scaledNumber({ min: 0, minInclusive: false, max: 10, maxInclusive: true, decimals: 4 }))
}).pipe(
  Schema.filter((r) => {
    const set = [r.usd, r.pct_of_equity, r.multiplier].filter((x) => x !== undefined).length
    return set === 1 ? true : "must set exactly one of usd, pct_of_equity, multiplier"
  })
)
export type SizingRule = typeof SizingRule.Type

export const Sizing = closedStruct({
  usd_per_trade: usd(),
  max_concurrent: int(1, DefinitionLimits.maxConcurrentMax),
  base_usd: Schema.optional(usd()),
  max_usd: Schema.optional(usd()),
  rules: Schema.optional(
    Schema.Array(SizingRule).pipe(
      Schema.filter((a) => a.length >= 1 && a.length <= DefinitionLimits.sizingRulesMax, {
        message: () => `must hold 1 to ${DefinitionLimits.sizingRulesMax} rules`,
        jsonSchema: { minItems: 1, maxItems: DefinitionLimits.sizingRulesMax }
      })
    )
  )
})
export type Sizing = typeof Sizing.Type

export const StrategyDefinition = closedStruct({
  chain: literal("solana", "hood", "any"),
  entry: Entry,
  exit: Exit,
  sizing: Sizing
}).pipe(
  Schema.filter((d) => {
    if (d.entry.source === "conviction" && d.exit.ladder === undefined)
      return { path: ["exit", "ladder"], message: "is required when entry.source is conviction" }
    const pctRule = d.sizing.rules?.findIndex((r) => r.pct_of_equity !== undefined) ?? -1
    if (pctRule >= 0 && d.sizing.base_usd === undefined)
      return { path: ["sizing", "base_usd"], message: `is required when sizing.rules[${pctRule}] uses pct_of_equity` }
    return true
  })
)
export type StrategyDefinition = typeof StrategyDefinition.Type

// ---------------------------------------------------------------------------------------------
// The replay body.

/** Replay window bound (spec 8). */
export const replayWindowMsMax = 14 * 86_400_000
export const assetIdsMax = 50

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/
const timestamp = Schema.transformOrFail(Schema.Unknown, Schema.Number, {
  strict: true,
  decode: (raw, _o, ast) => {
    const ms = typeof raw === "string" && ISO_8601.test(raw) ? Date.parse(raw) : Number.NaN
    return Number.isFinite(ms)
      ? ParseResult.succeed(ms)
      : ParseResult.fail(new ParseResult.Type(ast, raw, "must be an ISO 8601 timestamp with a time zone (2024-01-01T00:00:00Z)"))
  },
  encode: (ms) => ParseResult.succeed(new Date(ms).toISOString())
})

export const ReplayRequest = Schema.Struct({
  definition: StrategyDefinition,
  from: timestamp,
  to: timestamp,
  asset_ids: Schema.optional(list(nonEmptyId, assetIdsMax, "assets"))
}).pipe(
  Schema.filter((r) => {
    if (r.to <= r.from) return { path: ["to"], message: "must be after from" }
    if (r.to - r.from > replayWindowMsMax) return { path: ["to"], message: "must be at most 14 days after from" }
    return true
  })
)
export type ReplayRequest = typeof ReplayRequest.Type

// ---------------------------------------------------------------------------------------------
// Decoding with the first problem named.

export interface DefinitionProblem {
  /** Dotted path with `[i]` for list items; empty for the root. */
  readonly path: string
  readonly message: string
}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

/** `<path>: <message>` (just the message at the root). */
export const problemText = (p: DefinitionProblem): string => (p.path === "" ? p.message : `${p.path}: ${p.message}`)

const firstProblem = (error: ParseResult.ParseError): DefinitionProblem => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  if (first === undefined) return { path: "", message: "is invalid" }
  const message =
    first._tag === "Unexpected"
      ? "is not a known field"
      : first._tag === "Missing"
        ? "is required"
        : first.message.startsWith("Expected { ") || first.message.startsWith("Expected {")
          ? "must be an object"
          : first.message.startsWith("Expected ReadonlyArray") || first.message.startsWith("Expected array")
            ? "must be a list"
            : first.message.startsWith("Expected string")
              ? "must be a string"
              : first.message
  return { path: formatPath(first.path), message }
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "first", onExcessProperty: "error" })
  return (input: unknown): Either.Either<A, DefinitionProblem> => Either.mapLeft(decode(input), firstProblem)
}

/** A strategy definition, or its first problem. */
export const decodeDefinition = decodeWith(StrategyDefinition)
/** A replay body `{definition, from, to, asset_ids?}`, or its first problem (paths from the body). */
export const decodeReplayRequest = decodeWith(ReplayRequest)

// ---------------------------------------------------------------------------------------------
// Formatting exact amounts.

/** Micro-USD as a decimal string with 6 decimals ("-12.500000"). */
export const formatUsd = (micros: bigint): string => {
  const neg = micros < 0n
  const abs = neg ? -micros : micros
  return `${neg ? "-" : ""}${abs / 1_000_000n}.${(abs % 1_000_000n).toString().padStart(6, "0")}`
}
