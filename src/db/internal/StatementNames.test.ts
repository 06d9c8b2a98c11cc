import { describe, expect, it } from "vitest"
import { runsBeforeNamed, StatementNames } from "./StatementNames.js"

describe("StatementNames", () => {
  it("names a text with parameters from its second run, and keeps that name for it", () => {
    const names = new StatementNames()
    expect(runsBeforeNamed).toBe(2)
    expect(names.nameOf("SELECT $1::int", 1)).toBeUndefined()
    const name = names.nameOf("SELECT $1::int", 1)
    expect(name).toBe("cs_1")
    expect(names.nameOf("SELECT $1::int", 1)).toBe(name)
    expect(names.nameOf("SELECT $1::text", 1)).toBeUndefined()
    expect(names.nameOf("SELECT $1::text", 1)).toBe("cs_2")
    expect(names.nameOf("SELECT $1::int", 1)).toBe("cs_1")
  })

  it("never names a text without parameters (it may be several statements)", () => {
    const names = new StatementNames()
    for (let i = 0; i < 5; i++) expect(names.nameOf("BEGIN; SELECT 1; COMMIT", 0)).toBeUndefined()
    expect(names.size()).toBe(0)
  })

  it("at the names' bound, a new text runs unnamed and the named ones keep their names", () => {
    const names = new StatementNames(3, 100)
    for (let i = 0; i < 3; i++) {
      names.nameOf(`SELECT ${i} + $1`, 1)
      expect(names.nameOf(`SELECT ${i} + $1`, 1)).toBe(`cs_${i + 1}`)
    }
    for (let run = 0; run < 5; run++) expect(names.nameOf("SELECT 99 + $1", 1)).toBeUndefined()
    expect(names.size()).toBe(3)
    expect(names.nameOf("SELECT 1 + $1", 1)).toBe("cs_2")
  })

  it("at the counted texts' bound, the counts start again: a varying text costs a bounded map and a repeated one is still named", () => {
    const names = new StatementNames(10, 4)
    for (let i = 0; i < 1000; i++) expect(names.nameOf(`SELECT $1 IN (${"$1,".repeat(i)}$1)`, 1)).toBeUndefined()
    expect(names.size()).toBe(0)
    names.nameOf("SELECT hot = $1", 1)
    expect(names.nameOf("SELECT hot = $1", 1)).toBe("cs_1")
  })
})
