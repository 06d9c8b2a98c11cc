/**
 * Services read time from the Effect `Clock` only (issue 27 item 3; docs/decisions.md, "Services
 * read time from Clock"): no module under `src/services` reads the wall clock itself or takes the
 * time as an injected function. Checked over each source module's text (test files are not
 * scanned) with its comments removed:
 *
 * - `Date.now` (called or passed along);
 * - `new Date()` with no argument (a `new Date(ms)` formats a time already read and is fine);
 * - a clock option: a member or parameter whose name holds `now` or `clock` typed `() => number`
 *   (`nowMs: () => number`, `clockMs?: () => number`). A time VALUE (`nowMs: number`) read once
 *   from the `Clock` and handed to a pure function is fine.
 *
 * Tests that want time to pass use `TestClock`, or `test/support/clock.ts` for a runtime they do
 * not run themselves. Each rule has a test that shows it catches what it names.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"
import { sourceFiles as sources } from "../support/sourceFiles.js"

const SERVICES = "src/services"

/** The text without comments (as in serviceLayering.test.ts). */
const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")

type Rule = "Date.now" | "new Date()" | "clock option"

const RULES: ReadonlyArray<readonly [Rule, RegExp]> = [
  ["Date.now", /\bDate\s*\.\s*now\b/],
  ["new Date()", /\bnew\s+Date\s*\(\s*\)/],
  ["clock option", /\b\w*(?:now|clock)\w*\s*\??\s*:\s*\(\s*\)\s*=>\s*number\b/i]
]

/** The rules `text` breaks. */
export const clockRules = (text: string): ReadonlyArray<Rule> => {
  const code = withoutComments(text)
  return RULES.filter(([, re]) => re.test(code)).map(([rule]) => rule)
}


const found = (): Record<string, ReadonlyArray<Rule>> => {
  const out: Record<string, ReadonlyArray<Rule>> = {}
  for (const file of sources(SERVICES)) {
    const broken = clockRules(readFileSync(path.join(projectRoot, file), "utf8"))
    if (broken.length > 0) out[file] = broken
  }
  return out
}

describe("services read time from the Clock", () => {
  it("the checks catch what they name, and not comments, time values or formatted times", () => {
    expect(clockRules(`const t = Date.now()`)).toEqual(["Date.now"])
    expect(clockRules(`const source = fixedPriceSource(prices, Date.now)`)).toEqual(["Date.now"])
    expect(clockRules(`const at = new Date().toISOString()`)).toEqual(["new Date()"])
    expect(clockRules(`readonly nowMs: () => number`)).toEqual(["clock option"])
    expect(clockRules(`readonly nowMs?: () => number`)).toEqual(["clock option"])
    expect(clockRules(`export const make = (sql: Sql, nowMs: () => number) => {}`)).toEqual(["clock option"])
    expect(clockRules(`function resume(clockMs: () => number) {}`)).toEqual(["clock option"])
    expect(clockRules(`const n = options.nowMs ?? Date.now`)).toEqual(["Date.now"])
    // Fine: a time value, a formatted time, a counter, a comment.
    expect(clockRules(`const judge = (o: Obs, nowMs: number) => o.publishTimeMs <= nowMs`)).toEqual([])
    expect(clockRules(`const iso = new Date(nowMs).toISOString()`)).toEqual([])
    expect(clockRules(`readonly size: () => number`)).toEqual([])
    expect(clockRules(`/** was nowMs: () => number, defaulting to Date.now */\nconst a = 1 // new Date()`)).toEqual([])
  })

  it("no module under src/services reads the wall clock or takes an injected clock", () => {
    // The scan reads the service modules (trade and orders among them), so an empty answer means something.
    const scanned = sources(SERVICES)
    expect(scanned.filter((f) => f.startsWith("src/services/trade/") || f.startsWith("src/services/orders/")).length).toBeGreaterThan(20)
    expect(found()).toEqual({})
  })
})
