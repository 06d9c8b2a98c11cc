/**
 * CustomCurve owns the acceptance rules of `exp-custom` curves (launch spec 2.2) and the exp-a/b/c
 * presets. Pure: `validateCustomCurve` returns `Accepted` with V and G in raw units, or the first
 * refusal in this order: shape (`curve_format`, field `curve`), value format (`curve_format`, V
 * before G), value precision (`curve_precision`, V before G), outer limits (V before G), price
 * ceiling, dev buy. Values are never rounded: a value that is not exact at the quote's decimals is
 * refused.
 *
 * Decisions the spec left open:
 * - fractional digits beyond the quote's decimals are allowed when they are all zeros
 *   ("5.0000000000" is exactly 5 SOL, so it is not a precision problem);
 * - a `curve` member that is null reads as absent (general rule 1), so it is a shape error;
 * - a value longer than MAX_VALUE_CHARS is `curve_format` (a bound on the work a value can cause);
 * - `price_ceiling` names field `curve.threshold`, because `maxThresholdRaw` is a bound on G.
 */
import { formatUnits, isqrt, tokenReserveRaw } from "./CurveMath.js"

export type CustomCurveQuote = "sol" | "svc"

export interface CustomCurveInput {
  quoteAsset: CustomCurveQuote
  curve: unknown /* the request's `curve` value */
  stakerAllocationBps: bigint
  supplyRaw: bigint
  buyAmountRaw: bigint
  devBuyCeilingRaw: bigint
}

/** Spec 2.2's refusal reasons, as the wire's `reason` spells them. */
export type CustomCurveRefusalReason =
  | "curve_format"
  | "curve_precision"
  | "virtual_quote_out_of_range"
  | "threshold_out_of_range"
  | "price_ceiling"
  | "curve_dev_buy_cap"

export type CustomCurveResult =
  | { _tag: "Accepted"; virtualQuoteRaw: bigint; thresholdRaw: bigint }
  | {
      _tag: "Refused"
      code: "VALIDATION_FAILED" | "CURVE_OUT_OF_RANGE" | "DEV_BUY_TOO_HIGH"
      field: string
      reason: CustomCurveRefusalReason
      message: string
      maxThresholdRaw?: string
    }

export type ParseUnitsResult = { _tag: "Ok"; raw: bigint } | { _tag: "Error"; reason: "curve_format" | "curve_precision" }

const MAX_VALUE_CHARS = 64
const DECIMAL = /^(\d+)(?:\.(\d+))?$/

/** Exact whole-unit decimal string to raw units; never rounds. */
export const parseWholeUnits = (value: unknown, decimals: number): ParseUnitsResult => {
  if (typeof value !== "string" || value.length > MAX_VALUE_CHARS) return { _tag: "Error", reason: "curve_format" }
  const m = DECIMAL.exec(value)
  if (m === null) return { _tag: "Error", reason: "curve_format" }
  const whole = m[1] ?? "0"
  const fraction = (m[2] ?? "").replace(/0+$/, "")
  if (fraction.length > decimals) return { _tag: "Error", reason: "curve_precision" }
  return { _tag: "Ok", raw: BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0") }
}

interface QuoteRules {
  readonly decimals: number
  readonly unit: string
  readonly virtualQuoteRaw: readonly [bigint, bigint]
  readonly thresholdRaw: readonly [bigint, bigint]
}

const SOL = 10n ** 9n
const SVC = 10n ** 6n

/** Outer limits of spec 2.2, in raw units, inclusive. */
export const CUSTOM_CURVE_RULES: Readonly<Record<CustomCurveQuote, QuoteRules>> = {
  sol: { decimals: 9, unit: "SOL", virtualQuoteRaw: [1n * SOL, 100n * SOL], thresholdRaw: [1n * SOL, 250n * SOL] },
  svc: {
    decimals: 6,
    unit: "platform-token units",
    virtualQuoteRaw: [66_000n * SVC, 6_600_000n * SVC],
    thresholdRaw: [66_000n * SVC, 16_500_000n * SVC]
  }
}

export interface PresetCurve {
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
}

/** exp-a/b/c: V = 4, 6, 8 SOL with G = 5 SOL; on svc the same at 66,000 units per SOL. */
export const EXP_PRESET_CURVES: Readonly<Record<"exp-a" | "exp-b" | "exp-c", Readonly<Record<CustomCurveQuote, PresetCurve>>>> =
  {
    "exp-a": {
      sol: { virtualQuoteRaw: 4n * SOL, thresholdRaw: 5n * SOL },
      svc: { virtualQuoteRaw: 264_000n * SVC, thresholdRaw: 330_000n * SVC }
    },
    "exp-b": {
      sol: { virtualQuoteRaw: 6n * SOL, thresholdRaw: 5n * SOL },
      svc: { virtualQuoteRaw: 396_000n * SVC, thresholdRaw: 330_000n * SVC }
    },
    "exp-c": {
      sol: { virtualQuoteRaw: 8n * SOL, thresholdRaw: 5n * SOL },
      svc: { virtualQuoteRaw: 528_000n * SVC, thresholdRaw: 330_000n * SVC }
    }
  }

/** Spec 2.2's price ceiling: the price at graduation stays bounded, (V + 20G)^2 < V·X. */
export const fitsPriceCeiling = (v: bigint, g: bigint, x: bigint): boolean => (v + 20n * g) ** 2n < v * x

/**
 * Largest G with (V + 20G)^2 < V·X: s = isqrt(V·X − 1) is the largest s with s² < V·X, then
 * G = floor((s − V)/20). "0" also covers "no G fits" since G ≥ 1 is required anyway.
 */
export const maxThresholdRaw = (v: bigint, x: bigint): bigint => {
  const vx = v * x
  if (vx <= 0n) return 0n
  const s = isqrt(vx - 1n)
  return s <= v ? 0n : (s - v) / 20n
}

type Refused = Extract<CustomCurveResult, { _tag: "Refused" }>

const FIELDS = { virtualQuote: "curve.virtualQuote", threshold: "curve.threshold" } as const

/** Every format error outranks every precision error; within a kind, V before G. */
const parseRefusal = (pv: ParseUnitsResult, pg: ParseUnitsResult, decimals: number): Refused => {
  const failsWith = (r: ParseUnitsResult, reason: "curve_format" | "curve_precision") =>
    r._tag === "Error" && r.reason === reason
  const reason = failsWith(pv, "curve_format") || failsWith(pg, "curve_format") ? "curve_format" : "curve_precision"
  const field = failsWith(pv, reason) ? FIELDS.virtualQuote : FIELDS.threshold
  return {
    _tag: "Refused",
    code: "VALIDATION_FAILED",
    field,
    reason,
    message:
      reason === "curve_format"
        ? `${field} must be a decimal string of whole quote units, such as "4" or "4.5"`
        : `${field} has more than ${decimals} decimals; values are never rounded`
  }
}

export const validateCustomCurve = (i: CustomCurveInput): CustomCurveResult => {
  const rules = CUSTOM_CURVE_RULES[i.quoteAsset]
  const c = i.curve
  const isRecord = typeof c === "object" && c !== null && !Array.isArray(c)
  // own members only, and null reads as absent (general rule 1)
  const present = (k: string): boolean => isRecord && Object.hasOwn(c, k) && (c as Record<string, unknown>)[k] != null
  if (!present("virtualQuote") || !present("threshold")) {
    return {
      _tag: "Refused",
      code: "VALIDATION_FAILED",
      field: "curve",
      reason: "curve_format",
      message: "curve must be an object {virtualQuote, threshold} of decimal strings in whole quote units"
    }
  }
  const record = c as Record<string, unknown>
  const pv = parseWholeUnits(record["virtualQuote"], rules.decimals)
  const pg = parseWholeUnits(record["threshold"], rules.decimals)
  if (pv._tag === "Error" || pg._tag === "Error") return parseRefusal(pv, pg, rules.decimals)
  const v = pv.raw
  const g = pg.raw

  const outOfRange = (key: "virtualQuote" | "threshold", value: bigint, [min, max]: readonly [bigint, bigint]) =>
    value < min || value > max
      ? ({
          _tag: "Refused",
          code: "CURVE_OUT_OF_RANGE",
          field: FIELDS[key],
          reason: key === "virtualQuote" ? "virtual_quote_out_of_range" : "threshold_out_of_range",
          message: `${FIELDS[key]} must be between ${formatUnits(min, rules.decimals)} and ${formatUnits(max, rules.decimals)} ${rules.unit}`
        } satisfies Refused)
      : undefined
  const range = outOfRange("virtualQuote", v, rules.virtualQuoteRaw) ?? outOfRange("threshold", g, rules.thresholdRaw)
  if (range !== undefined) return range

  const x = tokenReserveRaw(i.supplyRaw, i.stakerAllocationBps)
  if (!fitsPriceCeiling(v, g, x)) {
    const max = maxThresholdRaw(v, x)
    return {
      _tag: "Refused",
      code: "CURVE_OUT_OF_RANGE",
      field: FIELDS.threshold,
      reason: "price_ceiling",
      message: `(V + 20G)^2 must stay below V x X; the largest threshold for this V is ${max} raw`,
      maxThresholdRaw: max.toString()
    }
  }

  if (10n * i.buyAmountRaw > g || i.buyAmountRaw > i.devBuyCeilingRaw) {
    return {
      _tag: "Refused",
      code: "DEV_BUY_TOO_HIGH",
      field: "buyAmount",
      reason: "curve_dev_buy_cap",
      message: "buyAmount must be at most 10% of the curve threshold and not above the dev-buy ceiling"
    }
  }
  return { _tag: "Accepted", virtualQuoteRaw: v, thresholdRaw: g }
}
