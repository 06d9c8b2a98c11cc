/**
 * Services speak the domain, routes speak HTTP (docs/architecture.md): no module under
 * `src/services` imports from `api/`, builds the `success:` envelope, decides an HTTP status, or
 * decides a spec code.
 * Checked over each source module's text (test files, `*.test.ts`, are not scanned) with its
 * comments removed:
 *
 * - an import: `from "…/api/…"` or `import("…/api/…")`;
 * - an envelope: an object member `success: true` or `success: false`;
 * - a status: an object member `status: NNN` with a numeric 4xx or 5xx literal (the remote end's
 *   `statusCode` of an outbound fetch is a fact, not an answer, and is not matched);
 * - a code: a string literal that is one of the error table's codes (`ErrorCodes`), e.g.
 *   `"TRADE_REVERTED"`. Services record and fail with lower-case reasons; `api/` words them
 *   (`api/LaunchCodes.ts`, `api/TradeCodes.ts`, the error table).
 *
 * The routes and `api/ErrorTable.ts` own all four. Each rule has a test that shows it catches
 * what it names.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { ErrorCodes } from "../../src/domain/ErrorCodes.js"
import { projectRoot } from "../support/engine.js"
import { sourceFiles as sources } from "../support/sourceFiles.js"

const SERVICES = "src/services"

/**
 * Modules that still break a rule: none. (The launch results stored on a ledger row and replayed
 * as stored are the answer's body; the routes add the envelope, also to rows stored with it.)
 */
const ALLOWED: Readonly<Record<string, ReadonlyArray<Rule>>> = {}

type Rule = "import" | "envelope" | "status" | "code"

const RULES: ReadonlyArray<readonly [Rule, RegExp]> = [
  ["import", /(?:\bfrom\s*|\bimport\s*\(\s*)["'][^"']*\/api\/[^"']*["']/],
  ["envelope", /\bsuccess\s*:\s*(?:true|false)\b/],
  ["status", /\bstatus\s*:\s*[45]\d\d\b/],
  ["code", new RegExp(`(["'\`])(?:${Object.keys(ErrorCodes).join("|")})\\1`)]
]

/** The text without comments (block comments, then line comments not inside a URL or string opening). */
export const withoutComments = (text: string): string => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")

/** The rules `text` breaks. */
export const brokenRules = (text: string): ReadonlyArray<Rule> => {
  const code = withoutComments(text)
  return RULES.filter(([, re]) => re.test(code)).map(([rule]) => rule)
}


describe("service layering", () => {
  it("the checks catch what they name, and not comments or an outbound fetch's status code", () => {
    expect(brokenRules(`import { toApiError } from "../../api/ErrorTable.js"`)).toEqual(["import"])
    expect(brokenRules(`const m = await import("../../../api/Http.js")`)).toEqual(["import"])
    expect(brokenRules(`return { success: true, tokens }`)).toEqual(["envelope"])
    expect(brokenRules(`return {success:false, error}`)).toEqual(["envelope"])
    expect(brokenRules(`return { status: 502, body }`)).toEqual(["status"])
    expect(brokenRules(`/** answers { success: true } with status: 404 */\nconst a = 1 // success: true`)).toEqual([])
    expect(brokenRules(`imageRefused(role, "unreachable", m, { statusCode: 404 })`)).toEqual([])
    expect(brokenRules(`const url = "http://127.0.0.1/api/v1" // status: 500`)).toEqual([])
    expect(brokenRules(`return { status: "confirmed", success: ok }`)).toEqual([])
    expect(brokenRules(`export type TradeFailureCode = "SLIPPAGE_EXCEEDED" | "TRADE_REVERTED" | "NEVER_LANDED"`)).toEqual(["code"])
    expect(brokenRules(`return 'TRADE_REVERTED'`)).toEqual(["code"])
    expect(brokenRules("fail(ref, `LAUNCH_FAILED`)")).toEqual(["code"])
    expect(brokenRules(`x: { code: "VALIDATION_FAILED", status: 409 }`)).toEqual(["status", "code"])
    // Not a code: a reason, an unknown upper-case word, a code inside a longer string, or in a comment.
    expect(brokenRules(`return "slippage_exceeded" // was "SLIPPAGE_EXCEEDED"`)).toEqual([])
    expect(brokenRules(`Config.string("LOCALNET_USD_PRICES"); warn("MOVES_FUNDS"); const m = "the trade is TRADE_REVERTED"`)).toEqual([])
  })

  it("no module under src/services imports api/, builds the envelope, decides an HTTP status or a spec code", () => {
    const files = sources(SERVICES)
    expect(files.length).toBeGreaterThan(50)
    const found: Record<string, ReadonlyArray<Rule>> = {}
    for (const file of files) {
      const broken = brokenRules(readFileSync(path.join(projectRoot, file), "utf8"))
      if (broken.length > 0) found[file] = broken
    }
    const unexpected = Object.entries(found).filter(([file, rules]) => rules.some((r) => !(ALLOWED[file] ?? []).includes(r)))
    expect(Object.fromEntries(unexpected)).toEqual({})
  })

  it("no module under src/chain decides a spec code (the chain's classifiers answer reasons too)", () => {
    const files = sources("src/chain")
    expect(files.length).toBeGreaterThan(20)
    const found = files.filter((file) => brokenRules(readFileSync(path.join(projectRoot, file), "utf8")).includes("code"))
    expect(found).toEqual([])
  })

  it("the allowlist names only modules that still break the rule they are allowed", () => {
    const stale = Object.entries(ALLOWED).flatMap(([file, rules]) => {
      const broken = brokenRules(readFileSync(path.join(projectRoot, file), "utf8"))
      return rules.filter((r) => !broken.includes(r)).map((r) => `${file}: ${r}`)
    })
    expect(stale).toEqual([])
  })
})
