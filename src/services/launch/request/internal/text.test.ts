import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { codePointLengthUpTo, hasControlCharacter, isJsonSafe, isWellFormed, utf8ByteLength } from "./text.js"

const anyText = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), fc.string())

describe("text measures", () => {
  it("utf8ByteLength agrees with TextEncoder on every string (lone surrogates encode as U+FFFD)", () => {
    fc.assert(fc.property(anyText, (s) => {
      expect(utf8ByteLength(s)).toBe(new TextEncoder().encode(s).length)
    }), { numRuns: 2_000 })
    expect(utf8ByteLength("\uD800")).toBe(3)
  })

  it("codePointLengthUpTo counts code points, stopping one past the limit", () => {
    fc.assert(
      fc.property(anyText, fc.nat({ max: 40 }), (s, limit) => {
        expect(codePointLengthUpTo(s, limit)).toBe(Math.min([...s].length, limit + 1))
      }),
      { numRuns: 2_000 }
    )
  })

  it("isJsonSafe holds exactly when JSON.stringify needs no escape", () => {
    fc.assert(fc.property(anyText, (s) => {
      expect(isJsonSafe(s)).toBe(JSON.stringify(s) === `"${s}"`)
    }), { numRuns: 2_000 })
    for (const unsafe of ['"', "\\", "\u0000", "\n", "\u001F", "\uD800", "\uDC00x"]) expect(isJsonSafe(`a${unsafe}b`)).toBe(false)
    for (const safe of ["'", "/", "\u007F", "\u2028", "😀", "é"]) expect(isJsonSafe(`a${safe}b`)).toBe(true)
  })

  it("isWellFormed refuses lone surrogates only; hasControlCharacter finds C0 and DEL", () => {
    expect([isWellFormed("😀"), isWellFormed("\uD83D"), isWellFormed("\uDE00"), isWellFormed("\uDE00\uD83D")]).toEqual([true, false, false, false])
    expect([hasControlCharacter("a\u007Fb"), hasControlCharacter("a\tb"), hasControlCharacter("a b")]).toEqual([true, true, false])
  })
})
