/**
 * JSON for detector states (checkpoints): bigints travel as `{"$n":"<decimal>"}` so they come back
 * as bigints and exact. Decoding throws on text it did not write (the runtime's contract).
 */
export const encodeJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? { $n: v.toString() } : v))

export const decodeJson = (text: string): unknown =>
  JSON.parse(text, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v)
      if (keys.length === 1 && keys[0] === "$n") {
        const n = (v as { $n: unknown }).$n
        if (typeof n !== "string" || !/^-?[0-9]+$/.test(n)) throw new TypeError(`not a bigint: ${String(n)}`)
        return BigInt(n)
      }
    }
    return v
  })
