/**
 * The launch idempotency hash (spec document 1, 2.1 and endpoint rule 1): one launch per account
 * and `clientLaunchId`, and a repeat under that id must carry the same body. The request decoder
 * reduces a body to its `CanonicalJson` form (every field that decides the launch, defaults
 * resolved, `async` left out, amounts and `curve` in raw units as decimal strings, so `5` and
 * `5.0` are one body); this module turns that value into one text and hashes it.
 *
 * Invariants:
 * - No numbers: every number or amount is a decimal string in raw units (`"500"`, not `500`),
 *   so there is no float formatting to agree on.
 * - Object keys are sorted (UTF-16 code-unit order, `Array.prototype.sort`); no whitespace.
 *   A key whose value is `undefined` is left out, exactly as if it were absent; `null` is a value.
 * - The hash is `sha256` of the UTF-8 text, lowercase hex (64 characters), stable across
 *   processes and versions of Node.
 * - Its input is bounded by the request body limit of the route that decoded it.
 */
import { createHash } from "node:crypto"

/** A JSON value with no numbers (amounts and integers travel as decimal strings). */
export type CanonicalJson =
  | string
  | boolean
  | null
  | ReadonlyArray<CanonicalJson>
  | { readonly [key: string]: CanonicalJson | undefined }

/** The canonical text: sorted keys, no whitespace, `undefined` members omitted. */
export const canonicalJsonText = (value: CanonicalJson): string => {
  if (value === null) return "null"
  if (typeof value === "boolean") return value ? "true" : "false"
  if (typeof value === "string") return JSON.stringify(value)
  if (isArray(value)) return `[${value.map(canonicalJsonText).join(",")}]`
  const members: Array<string> = []
  for (const key of Object.keys(value).sort()) {
    const member = value[key]
    if (member !== undefined) members.push(`${JSON.stringify(key)}:${canonicalJsonText(member)}`)
  }
  return `{${members.join(",")}}`
}

/** `sha256(canonicalJsonText(canonical))`, lowercase hex. */
export const idempotencyHash = (canonical: CanonicalJson): string =>
  createHash("sha256").update(canonicalJsonText(canonical), "utf8").digest("hex")

const isArray = (value: CanonicalJson): value is ReadonlyArray<CanonicalJson> => Array.isArray(value)
