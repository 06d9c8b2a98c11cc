/**
 * No service closure grows past ~150 lines (issue 27 item 7; the `WalletService` recipe: a service
 * file reads as a table of methods over parts). Measured over each module under `src/services`
 * (test files excepted) with the TypeScript parser: every function (declaration, expression, arrow
 * or method) whose text spans more than {@link LIMIT} lines, counting from its first to its last
 * line. A long function nested in a long function is the outer one's length, reported once.
 *
 * {@link KNOWN} lists the functions over the limit today with their length as a ceiling: one may
 * shrink (then lower or remove its entry, which the test asks for) but never grow, and no new
 * function may pass the limit.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"
import { sourceFiles as sources } from "../support/sourceFiles.js"

const LIMIT = 150
const SERVICES = "src/services"

/** `file#name` → its length now, a ceiling, for a function still over the limit. */
const KNOWN: Readonly<Record<string, number>> = {}

type Long = { readonly name: string; readonly lines: number }

const isFunction = (n: ts.Node): n is ts.FunctionLikeDeclaration =>
  ts.isArrowFunction(n) || ts.isFunctionExpression(n) || ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n)

/** The name a reader knows the function by: its own, or that of the declaration it is the value of (through calls such as `Effect.fn(...)`). */
const nameOf = (n: ts.FunctionLikeDeclaration): string => {
  if (n.name !== undefined) return n.name.getText()
  let p: ts.Node | undefined = n.parent
  while (p !== undefined && (ts.isCallExpression(p) || ts.isParenthesizedExpression(p) || ts.isAsExpression(p))) p = p.parent
  if (p !== undefined && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p)) && p.name !== undefined) return p.name.getText()
  return "(anonymous)"
}

/** The functions of `text` longer than `limit` lines, outermost only. */
export const longFunctions = (file: string, text: string, limit = LIMIT): ReadonlyArray<Long> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Array<Long> = []
  const visit = (n: ts.Node): void => {
    if (isFunction(n)) {
      const lines = source.getLineAndCharacterOfPosition(n.getEnd()).line - source.getLineAndCharacterOfPosition(n.getStart()).line + 1
      if (lines > limit) {
        found.push({ name: nameOf(n), lines })
        return
      }
    }
    ts.forEachChild(n, visit)
  }
  visit(source)
  return found
}


describe("service closures", () => {
  it("the measure finds a long function by its declared name, outermost only", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i}`).join("\n")
    const text = [
      `export const make = Effect.fn("make")(function* () {`,
      `  const inner = () => {`,
      body(8),
      `  }`,
      body(8),
      `})`,
      `const short = () => 1`
    ].join("\n")
    expect(longFunctions("x.ts", text, 10)).toEqual([{ name: "make", lines: 20 }])
    expect(longFunctions("x.ts", text, 20)).toEqual([])
    expect(longFunctions("x.ts", `function named() {\n${body(12)}\n}`, 10)).toEqual([{ name: "named", lines: 14 }])
  })

  it(`no function under ${SERVICES} passes ${LIMIT} lines, and none of the known ones grows`, () => {
    const over: Record<string, number> = {}
    for (const file of sources(SERVICES)) {
      for (const f of longFunctions(file, readFileSync(path.join(projectRoot, file), "utf8"))) over[`${file}#${f.name}`] = f.lines
    }
    const grown = Object.entries(over).filter(([k, n]) => n > (KNOWN[k] ?? LIMIT))
    const shrunk = Object.entries(KNOWN).filter(([k, n]) => (over[k] ?? 0) < n)
    expect(grown, "new or grown (split it into parts: docs/architecture.md, the WalletService recipe)").toEqual([])
    expect(shrunk, "shrunk below its ceiling in KNOWN: lower or remove the entry").toEqual([])
  })
})
