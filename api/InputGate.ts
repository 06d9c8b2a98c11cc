/**
 * The router's one input gate (hardening issue 17, item 3): what every route of both services
 * refuses before its own decoding runs, so that no client string reaches a service, PostgreSQL
 * or a recursive walk in a form they cannot hold.
 *
 * - Text: a path parameter, query parameter or body string (or body key) with a
 *   NUL character, or that is not valid UTF-8 (an escape decoding to invalid UTF-8, raw invalid
 *   bytes, which uWS hands over as U+FFFD, or an unpaired surrogate escape in JSON) is
 *   `VALIDATION_FAILED` naming the field. PostgreSQL refuses NUL in `text` and would otherwise
 *   answer an input error as a storage failure (500, or 503 on routes that map storage to an
 *   outage). Headers need no gate: uWS hands a header value over cut at its first byte outside ASCII, and
 *   answers nothing to a NUL in a header (README, "Behind a proxy").
 * - Body: the bytes must be UTF-8, and JSON nesting deeper than `maxJsonDepth` is refused before
 *   any handler walks it (a strategy replay overflowed the stack on thousands of levels).
 * - Content type: a non-empty body must be one of the route's accepted media types (JSON unless
 *   the route says otherwise); anything else is `VALIDATION_FAILED` naming `content-type`
 *   (docs/decisions.md, "Input gate").
 *
 * Pure and allocation-free on the common path (no `%`, no non-ASCII, no NUL): a regular
 * expression test per string.
 */
import { type ApiError, validationFailed } from "../src/domain/ApiError.js"

/** Deepest JSON nesting a body may have (objects and arrays; a scalar body is depth 0). */
export const maxJsonDepth = 32

/** Media types a route takes when it declares none: JSON only. */
export const JSON_MEDIA_TYPES: ReadonlyArray<string> = ["application/json"]

const SUSPECT = /[%\u0000\u0080-\uffff]/
const REPLACEMENT = "\ufffd"
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Why `s` cannot be taken as text, or undefined when it can. */
export const textProblem = (s: string): string | undefined => {
  if (s.includes("\u0000")) return "contains a NUL character"
  if (LONE_SURROGATE.test(s)) return "is not valid UTF-8"
  return undefined
}

/**
 * A raw (percent-encoded) path segment or query component decoded, or the problem with it. A
 * malformed escape (`%zz`) is kept as sent, as the router always did; an escape sequence that is
 * not UTF-8 (`%ff`), raw invalid bytes (U+FFFD from uWS) and NUL (raw or `%00`) are refused.
 */
export const decodeComponent = (raw: string, plusIsSpace: boolean): { readonly value: string } | { readonly problem: string } => {
  if (!SUSPECT.test(raw)) return { value: plusIsSpace && raw.includes("+") ? raw.replaceAll("+", " ") : raw }
  if (raw.includes(REPLACEMENT)) return { problem: "is not valid UTF-8" }
  const spaced = plusIsSpace ? raw.replaceAll("+", " ") : raw
  let value = spaced
  if (spaced.includes("%")) {
    try {
      value = decodeURIComponent(spaced)
    } catch {
      // Every `%` starts a well-formed escape: the escapes spell invalid UTF-8. Otherwise a malformed escape, kept as sent.
      if (!/%(?![0-9a-fA-F]{2})/.test(spaced)) return { problem: "is not valid UTF-8" }
    }
  }
  const problem = textProblem(value)
  return problem === undefined ? { value } : { problem }
}

/** The refusal for the first path parameter (by template name) the gate refuses, or undefined. */
export const gatePath = (raws: ReadonlyArray<string>, names: ReadonlyArray<string>): ApiError | undefined => {
  for (let i = 0; i < raws.length; i++) {
    const raw = raws[i]!
    if (!SUSPECT.test(raw)) continue
    const d = decodeComponent(raw, false)
    if ("problem" in d) return validationFailed(names[i]!, `${names[i]!} ${d.problem}`)
  }
  return undefined
}

/** The refusal for the first query parameter the gate refuses (named by its key), or undefined. */
export const gateQuery = (query: string): ApiError | undefined => {
  if (query === "" || !SUSPECT.test(query)) return undefined
  for (const pair of query.split("&")) {
    if (!SUSPECT.test(pair)) continue
    const eq = pair.indexOf("=")
    const key = decodeComponent(eq === -1 ? pair : pair.slice(0, eq), true)
    if ("problem" in key) return validationFailed("query", `A query parameter name ${key.problem}`)
    if (eq === -1) continue
    const value = decodeComponent(pair.slice(eq + 1), true)
    if ("problem" in value) return validationFailed(key.value, `${key.value} ${value.problem}`)
  }
  return undefined
}

const formatKey = (parent: string, key: string): string =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? (parent === "" ? key : `${parent}.${key}`) : `${parent}[${JSON.stringify(key)}]`

/**
 * The refusal for a parsed JSON body: the first string (value or key, depth first) that is not
 * text, named by its path (`items[0].label`), or nesting past `maxDepth`. Iterative, so the walk
 * itself cannot overflow the stack whatever `JSON.parse` accepted.
 */
export const gateJson = (body: unknown, maxDepth: number = maxJsonDepth): ApiError | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [{ value: body, path: "", depth: 0 }]
  while (stack.length > 0) {
    const { depth, path, value } = stack.pop()!
    if (typeof value === "string") {
      const problem = SUSPECT.test(value) ? textProblem(value) : undefined
      if (problem !== undefined) return validationFailed(path === "" ? "body" : path, `${path === "" ? "body" : path}: ${problem}`)
      continue
    }
    if (typeof value !== "object" || value === null) continue
    if (depth + 1 > maxDepth) return validationFailed("body", `body: nested deeper than ${maxDepth} levels`)
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]`, depth: depth + 1 })
      continue
    }
    const keys = Object.keys(value)
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!
      const problem = SUSPECT.test(key) ? textProblem(key) : undefined
      if (problem !== undefined) return validationFailed(path === "" ? "body" : path, `${path === "" ? "body" : path}: a member name ${problem}`)
      stack.push({ value: (value as Record<string, unknown>)[key], path: formatKey(path, key), depth: depth + 1 })
    }
  }
  return undefined
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** A body's bytes as text, or the refusal when they are not UTF-8. */
export const bodyText = (bytes: Uint8Array): string | ApiError => {
  try {
    return utf8.decode(bytes)
  } catch {
    return validationFailed("body", "body: is not valid UTF-8")
  }
}

/** The media type of a Content-Type header: lower case, without parameters. */
export const mediaTypeOf = (contentType: string): string => {
  const semi = contentType.indexOf(";")
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
}

/** Whether `mediaType` is one of `accepted` (`type/*` matches a whole type, `*\/*` anything). */
export const acceptsMediaType = (accepted: ReadonlyArray<string>, mediaType: string): boolean =>
  accepted.some((a) => a === "*/*" || a === mediaType || (a.endsWith("/*") && mediaType.startsWith(a.slice(0, -1))))

export const isJsonMediaType = (mediaType: string): boolean => mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"))

/** The default refusal of a body whose media type the route does not take. */
export const unsupportedContentType = (accepted: ReadonlyArray<string>, mediaType: string): ApiError =>
  validationFailed(
    "content-type",
    mediaType === "" ? `Content-Type is required; send ${accepted.join(" or ")}` : `Content-Type ${mediaType} is not accepted; send ${accepted.join(" or ")}`
  )
