/**
 * Text measures the launch request rules use: UTF-8 length without encoding, code points, and
 * the metadata JSON-safety rule. Pure.
 */

/** A lone surrogate: a string holding one is not Unicode text and has no UTF-8 form. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Characters JSON cannot carry unescaped (RFC 8259 section 7: the quotation mark, the reverse
 * solidus and U+0000 to U+001F), so a metadata file written by template would break on them.
 */
const JSON_BREAKING = /["\\\u0000-\u001F]/

export const isWellFormed = (s: string): boolean => !LONE_SURROGATE.test(s)

/** True when `s` is Unicode text that metadata JSON can carry verbatim. */
export const isJsonSafe = (s: string): boolean => isWellFormed(s) && !JSON_BREAKING.test(s)

/** Control characters (C0 and DEL), which no identifier carries. */
export const hasControlCharacter = (s: string): boolean => /[\u0000-\u001F\u007F]/.test(s)

/** UTF-8 length of well-formed text (a lone surrogate counts as the 3 bytes of U+FFFD). */
export const utf8ByteLength = (s: string): number => {
  let bytes = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** Number of code points, counting at most `limit + 1` (enough to tell "over the limit"). */
export const codePointLengthUpTo = (s: string, limit: number): number => {
  let n = 0
  for (let i = 0; i < s.length && n <= limit; i++, n++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++
  }
  return n
}
