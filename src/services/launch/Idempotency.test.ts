import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type CanonicalJson, canonicalJsonText, idempotencyHash } from "./Idempotency.js"

const canonical: fc.Arbitrary<CanonicalJson> = fc.letrec<{ value: CanonicalJson }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.string(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    // `__proto__` would set a prototype in `reordered`, not a member.
    fc.dictionary(fc.string().filter((k) => k !== "__proto__"), tie("value"), { maxKeys: 4 })
  )
})).value

/** The same members in the reverse insertion order, all the way down. */
const reordered = (value: CanonicalJson): CanonicalJson => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(reordered)
  const out: Record<string, CanonicalJson> = {}
  for (const key of Object.keys(value).reverse()) {
    const member = (value as Record<string, CanonicalJson>)[key]
    if (member !== undefined) out[key] = reordered(member)
  }
  return out
}

describe("Idempotency", () => {
  it("writes sorted keys, no whitespace, strings JSON-escaped", () => {
    expect(canonicalJsonText({ b: "2", a: ["x", true, null], c: { z: "\"", y: false } })).toBe(
      `{"a":["x",true,null],"b":"2","c":{"y":false,"z":"\\""}}`
    )
  })

  it("leaves out undefined members, as if absent; null is a value", () => {
    expect(canonicalJsonText({ a: "1", b: undefined })).toBe(canonicalJsonText({ a: "1" }))
    expect(idempotencyHash({ a: "1", b: null })).not.toBe(idempotencyHash({ a: "1" }))
  })

  it("hashes to 64 lowercase hex characters of sha256 over the text", () => {
    // sha256("{}")
    expect(idempotencyHash({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a")
  })

  it("a different value hashes differently; key order does not matter", () => {
    expect(idempotencyHash({ curve: { virtualQuote: "5000000000" } })).toBe(
      idempotencyHash({ curve: { virtualQuote: "5000000000" } })
    )
    expect(idempotencyHash({ buyAmount: "1" })).not.toBe(idempotencyHash({ buyAmount: "10" }))
    // A string that looks like an object is not that object.
    expect(idempotencyHash({ a: "{}" })).not.toBe(idempotencyHash({ a: {} }))
  })

  it("property: the text parses back to the same value and ignores insertion order", () => {
    fc.assert(
      fc.property(canonical, (value) => {
        const text = canonicalJsonText(value)
        expect(JSON.parse(text)).toEqual(value)
        expect(canonicalJsonText(reordered(value))).toBe(text)
        expect(idempotencyHash(reordered(value))).toBe(idempotencyHash(value))
      })
    )
  })
})
