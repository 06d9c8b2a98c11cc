import { describe, expect, it } from "vitest"
import { BoundedMemo } from "./BoundedMemo.js"

describe("BoundedMemo", () => {
  it("computes once per key, clears at the bound before keeping one more, and keeps nothing when compute throws", () => {
    const memo = new BoundedMemo<number, string>(3)
    let calls = 0
    const f = (n: number) => {
      calls++
      if (n < 0) throw new Error("negative")
      return `v${n}`
    }
    expect([memo.get(1, 1, f), memo.get(1, 1, f), memo.get(2, 2, f), memo.get(3, 3, f)]).toEqual(["v1", "v1", "v2", "v3"])
    expect([calls, memo.size]).toEqual([3, 3])
    // At the bound: the fourth key clears the memo and is the one kept.
    expect(memo.get(4, 4, f)).toBe("v4")
    expect(memo.size).toBe(1)
    expect(memo.get(1, 1, f)).toBe("v1")
    expect(calls).toBe(5)
    expect(() => memo.get(-1, -1, f)).toThrow("negative")
    expect(memo.size).toBe(2)
  })

  it("peek and keep: a value kept from elsewhere under the same bound; keeping a key already kept at the bound replaces it without clearing", () => {
    const memo = new BoundedMemo<string, number>(2)
    expect(memo.peek("a")).toBeUndefined()
    expect(memo.keep("a", 1)).toBe(1)
    memo.keep("b", 2)
    expect([memo.peek("a"), memo.peek("b"), memo.size]).toEqual([1, 2, 2])
    memo.keep("b", 3)
    expect([memo.peek("a"), memo.peek("b"), memo.size]).toEqual([1, 3, 2])
    // At the bound: a new key clears the memo and is the one kept.
    memo.keep("c", 4)
    expect([memo.peek("a"), memo.peek("b"), memo.peek("c"), memo.size]).toEqual([undefined, undefined, 4, 1])
  })
})
