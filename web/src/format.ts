/**
 * Display formatting. Money arrives as decimal strings and is shortened as text (never parsed to a
 * float for what is shown as an amount); only the charts take numbers.
 */

/** `1234567.891` → `1.23M`; small values keep 4 significant digits. */
export const compact = (s: string | null | undefined): string => {
  if (s === null || s === undefined || s === "") return "–"
  const negative = s.startsWith("-")
  const body = negative ? s.slice(1) : s
  const [whole = "0", fraction = ""] = body.split(".")
  const sign = negative ? "-" : ""
  const units: ReadonlyArray<readonly [number, string]> = [
    [12, "T"],
    [9, "B"],
    [6, "M"],
    [3, "K"]
  ]
  const digits = whole.replace(/^0+/, "")
  for (const [exp, unit] of units) {
    if (digits.length > exp) {
      const head = digits.slice(0, digits.length - exp)
      const tail = digits.slice(digits.length - exp, digits.length - exp + 2)
      return `${sign}${head}.${tail}${unit}`
    }
  }
  if (digits.length > 0) return `${sign}${digits}${fraction.length > 0 ? `.${fraction.slice(0, 2)}` : ""}`
  // Below 1: keep four significant digits.
  const lead = fraction.search(/[1-9]/)
  if (lead === -1) return "0"
  return `${sign}0.${fraction.slice(0, lead + 4).replace(/0+$/, "")}`
}

/** Basis points as a percentage: 5234 → `52.3%`. */
export const bps = (n: number | null | undefined): string => (n === null || n === undefined ? "–" : `${(n / 100).toFixed(1)}%`)

/** Age of an ISO time: `42s`, `5m`, `3h`, `2d`. */
export const age = (iso: string | null | undefined, nowMs: number): string => {
  if (iso === null || iso === undefined) return "–"
  const s = Math.max(0, Math.floor((nowMs - Date.parse(iso)) / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m`
  if (s < 86400) return `${Math.floor(s / 3600)}h`
  return `${Math.floor(s / 86400)}d`
}

export const shortAddress = (a: string): string => (a.length > 12 ? `${a.slice(0, 4)}…${a.slice(-4)}` : a)

/** Raw integer units as a decimal string with `decimals` places (bigint, exact). */
export const fromRaw = (raw: string, decimals: number): string => {
  const negative = raw.startsWith("-")
  const digits = (negative ? raw.slice(1) : raw).padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "")
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`
}

/** A decimal string typed by a user → raw integer units, or undefined when it is not a number. */
export const toRaw = (text: string, decimals: number): string | undefined => {
  const t = text.trim()
  if (!/^\d+(\.\d*)?$/.test(t)) return undefined
  const [whole = "0", fraction = ""] = t.split(".")
  if (fraction.length > decimals) return undefined
  const raw = BigInt(whole + fraction.padEnd(decimals, "0"))
  return raw.toString()
}
