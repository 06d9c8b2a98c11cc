import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseJsonExact, stringifyJson } from "./json.js"

describe("exact-integer JSON", () => {
  it("reads integers past 2^53 as bigints and leaves the rest to JSON.parse", () => {
    expect(parseJsonExact('{"a":18446744073709551615,"b":-9007199254740993,"c":9007199254740991,"d":1.5e300,"e":"12345678901234567890"}')).toEqual({
      a: 18446744073709551615n,
      b: -9007199254740993n,
      c: 9007199254740991,
      d: 1.5e300,
      e: "12345678901234567890"
    })
    expect(parseJsonExact('["\\"99999999999999999999", 99999999999999999999]')).toEqual(['"99999999999999999999', 99999999999999999999n])
    expect(() => parseJsonExact("{nope")).toThrow(SyntaxError)
  })

  it("writes bigints as integer literals and round-trips", () => {
    expect(stringifyJson({ lamports: (1n << 64n) - 1n, skip: undefined, list: [1, "x", null, true] })).toBe(
      '{"lamports":18446744073709551615,"list":[1,"x",null,true]}'
    )
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }), fc.string(), fc.integer())), (values) => {
        const back = parseJsonExact(stringifyJson(values)) as unknown[]
        expect(back.map((v) => (typeof v === "number" ? BigInt(v) : v))).toEqual(values.map((v) => (typeof v === "number" ? BigInt(v) : v)))
      })
    )
  })
})
