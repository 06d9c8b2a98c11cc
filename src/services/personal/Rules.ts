/**
 * A personal rule's pattern and params (spec 4.5): which params each pattern takes, their
 * ranges, and the normalized form stored and served. Validation names the first problem's
 * field (`pattern`, `params`, `params.<name>`), so the route answers a 400 naming it.
 *
 * Params narrow the tape's signals, never widen the detectors (docs/signals.md): a rule matches
 * signals the detectors emitted with their own thresholds. So a bound the signal cannot be
 * checked against is refused rather than silently matching nothing: `confluence.window_minutes`
 * starts at the detector's window (a narrower window cannot be verified from the signal).
 */
import { defaultSignalConfig } from "../../../actors/signals/SignalConfig.js"
import { formatMicros, isPattern, type Pattern, PATTERNS, SIGNAL_WALLETS_MAX } from "../../domain/Signal.js"
import { parseUsdMicros } from "../prices/Money.js"

export interface RuleParams {
  /** Decimal USD string (at most 6 fractional digits). */
  readonly min_usd?: string
  readonly wallets?: number
  readonly window_minutes?: number
  readonly days?: number
}

export const RULE_NAME_MAX = 64
export const MIN_USD_MAX_WHOLE = 1_000_000_000_000n
export const CONFLUENCE_WINDOW_MIN = Math.round(defaultSignalConfig.confluence.windowMs / 60_000)
export const CONFLUENCE_WINDOW_MAX = 1_440
export const CONFLUENCE_WALLETS_MIN = 2
export const CONFLUENCE_WALLETS_MAX = SIGNAL_WALLETS_MAX
export const DORMANCY_DAYS_MIN = 1
export const DORMANCY_DAYS_MAX = 3_650

type ParamKind = "usd" | "wallets" | "window_minutes" | "days"
interface ParamSpec {
  readonly kind: ParamKind
  readonly required: boolean
}

/** The params each pattern takes (spec 4.5 "Rule-pattern params"); patterns not listed take none. */
export const PATTERN_PARAMS: Readonly<Record<Pattern, Readonly<Record<string, ParamSpec>>>> = {
  new_ticker: { min_usd: { kind: "usd", required: false } },
  confluence: { wallets: { kind: "wallets", required: true }, window_minutes: { kind: "window_minutes", required: true } },
  large_move: { min_usd: { kind: "usd", required: true } },
  dormancy: { days: { kind: "days", required: true } },
  distribution: { min_usd: { kind: "usd", required: false } },
  deployer: {},
  intra_book: {},
  kol_mention: {}
}

export interface RuleProblem {
  readonly field: string
  readonly message: string
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= min && v <= max

const usdValue = (v: unknown): string | undefined => {
  const text = typeof v === "number" && Number.isFinite(v) && v >= 0 ? String(v) : typeof v === "string" ? v : undefined
  if (text === undefined) return undefined
  const micros = parseUsdMicros(text)
  if (micros === undefined || micros > MIN_USD_MAX_WHOLE * 1_000_000n) return undefined
  return formatMicros(micros)!
}

/** The normalized params, or the first problem. `raw` is the body's `params` (absent allowed). */
export const validateRule = (patternRaw: unknown, raw: unknown): { readonly pattern: Pattern; readonly params: RuleParams } | RuleProblem => {
  if (!isPattern(patternRaw)) return { field: "pattern", message: `pattern must be one of ${PATTERNS.join(", ")}` }
  const pattern = patternRaw
  const specs = PATTERN_PARAMS[pattern]
  if (raw !== undefined && raw !== null && (typeof raw !== "object" || Array.isArray(raw))) return { field: "params", message: "params must be an object" }
  const given = (raw ?? {}) as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!(key in specs)) {
      const allowed = Object.keys(specs)
      return {
        field: `params.${key}`,
        message:
          allowed.length === 0 ? `${pattern} takes no params` : `Unknown param '${key}' for ${pattern}; expected ${allowed.join(", ")}`
      }
    }
  }
  const out: { -readonly [K in keyof RuleParams]: RuleParams[K] } = {}
  for (const [name, spec] of Object.entries(specs)) {
    const v = given[name]
    const field = `params.${name}`
    if (v === undefined || v === null) {
      if (spec.required) return { field, message: `${pattern} requires params.${name}` }
      continue
    }
    switch (spec.kind) {
      case "usd": {
        const usd = usdValue(v)
        if (usd === undefined) return { field, message: `${name} must be a non-negative USD amount (decimal string or number, at most 6 fractional digits, at most ${MIN_USD_MAX_WHOLE})` }
        out.min_usd = usd
        break
      }
      case "wallets":
        if (!isInt(v, CONFLUENCE_WALLETS_MIN, CONFLUENCE_WALLETS_MAX)) return { field, message: `wallets must be an integer from ${CONFLUENCE_WALLETS_MIN} to ${CONFLUENCE_WALLETS_MAX}` }
        out.wallets = v
        break
      case "window_minutes":
        if (!isInt(v, CONFLUENCE_WINDOW_MIN, CONFLUENCE_WINDOW_MAX)) {
          return {
            field,
            message: `window_minutes must be an integer from ${CONFLUENCE_WINDOW_MIN} (the confluence detector's window) to ${CONFLUENCE_WINDOW_MAX}`
          }
        }
        out.window_minutes = v
        break
      case "days":
        if (!isInt(v, DORMANCY_DAYS_MIN, DORMANCY_DAYS_MAX)) return { field, message: `days must be an integer from ${DORMANCY_DAYS_MIN} to ${DORMANCY_DAYS_MAX}` }
        out.days = v
        break
    }
  }
  return { pattern, params: out }
}

export const isRuleProblem = (x: unknown): x is RuleProblem => typeof x === "object" && x !== null && "field" in x && "message" in x
