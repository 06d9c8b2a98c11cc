/**
 * JSON with exact integers, as Solana's JSON-RPC speaks it: u64 values (lamports, `rentEpoch`
 * = 2^64−1) are bare integer literals, never strings, and kit's client parses them back as
 * bigints. `stringifyJson` writes a bigint as its digits; `parseJsonExact` reads an integer
 * literal beyond 2^53 as a bigint instead of rounding it. Both are total: `parseJsonExact`
 * throws only `SyntaxError` (what `JSON.parse` throws) for text that is not JSON.
 */

const BIG_MARK = "\u0000curvestream-bigint:"

const isUnsafeIntegerLiteral = (token: string): boolean => {
  if (!/^-?\d+$/.test(token)) return false
  const digits = token.startsWith("-") ? token.length - 1 : token.length
  if (digits < 16) return false
  return !Number.isSafeInteger(Number(token))
}

/** `JSON.parse`, except that integer literals past ±(2^53−1) come back as `bigint`. */
export const parseJsonExact = (text: string): unknown => {
  let out: string | undefined
  let copiedTo = 0
  let i = 0
  const n = text.length
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 34 /* " */) {
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if (d === 92 /* \ */) i += 2
        else if (d === 34) break
        else i++
      }
      i++
      continue
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) i++
        else break
      }
      const token = text.slice(start, i)
      if (isUnsafeIntegerLiteral(token)) {
        out = (out ?? "") + text.slice(copiedTo, start) + JSON.stringify(BIG_MARK + token)
        copiedTo = i
      }
      continue
    }
    i++
  }
  const source = out === undefined ? text : out + text.slice(copiedTo)
  if (out === undefined) return JSON.parse(source)
  return JSON.parse(source, (_key, value: unknown) =>
    typeof value === "string" && value.startsWith(BIG_MARK) ? BigInt(value.slice(BIG_MARK.length)) : value
  )
}

/** `JSON.stringify` for plain data, with `bigint` written as an integer literal. */
export const stringifyJson = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value)
    case "number":
      return Number.isFinite(value) ? String(value) : "null"
    case "bigint":
      return value.toString()
    case "boolean":
      return value ? "true" : "false"
    case "object": {
      if (value === null) return "null"
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : stringifyJson(v))).join(",")}]`
      const parts: string[] = []
      for (const [k, v] of Object.entries(value)) {
        if (v === undefined || typeof v === "function") continue
        parts.push(`${JSON.stringify(k)}:${stringifyJson(v)}`)
      }
      return `{${parts.join(",")}}`
    }
    default:
      return "null"
  }
}
