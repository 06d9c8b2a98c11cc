/**
 * `layerTest` beside each service (issue 27 item 6; docs/decisions.md, "`layerTest`: the real
 * service over a throwaway database"):
 *
 * - every module under `src/services` (test files excepted) that exports a `layer` also exports a
 *   `layerTest`, and no module there exports another test-layer name (`fixedLayer`, `layerFixed`,
 *   `testLayer`, `recordingLayer`, ...): one name everywhere;
 * - no production module under `src/` (test files and test kits excepted) imports from `test/`,
 *   `bench/` or a test kit (a module named `testkit.ts`).
 *
 * Exports are read with the TypeScript parser (`export const`, `export function`, `export { a as
 * b }`); imports are every relative specifier, static, type-only, re-exported or dynamic. Each rule
 * has a test showing it catches what it names.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"
import { sourceFiles as sources } from "../support/sourceFiles.js"

const SERVICES = "src/services"

/** The names `text` exports. */
export const exportedNames = (file: string, text: string): ReadonlyArray<string> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const names: Array<string> = []
  const exported = (n: ts.Node) => ts.canHaveModifiers(n) && (ts.getModifiers(n) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement) && exported(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text)
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && exported(statement) && statement.name !== undefined) {
      names.push(statement.name.text)
    } else if (ts.isExportDeclaration(statement) && statement.exportClause !== undefined && ts.isNamedExports(statement.exportClause)) {
      for (const e of statement.exportClause.elements) names.push(e.name.text)
    }
  }
  return names
}

/** A test layer under another name than `layerTest`. */
const OTHER_TEST_NAME = /^(?:fixed|test|fake|stub|mock|recording)\w*Layer$|^layer(?:Fixed|Fake|Stub|Mock|Recording|ForTests?)\w*$/

/** What breaks the rule in one service module: a `layer` without `layerTest`, or another test-layer name. */
export const layerTestProblems = (file: string, text: string): ReadonlyArray<string> => {
  const names = exportedNames(file, text)
  const out: Array<string> = []
  if (names.includes("layer") && !names.includes("layerTest")) out.push(`${file} exports layer but no layerTest`)
  for (const n of names) if (OTHER_TEST_NAME.test(n)) out.push(`${file} exports ${n}: call a test layer layerTest`)
  return out
}

const IMPORT = /\bfrom\s*["'](\.[^"']*)["']|\bimport\s*\(?\s*["'](\.[^"']*)["']/g

/** The relative specifiers a module imports (comments removed first). */
const importsOf = (text: string): ReadonlyArray<string> => {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!)
}

/** The imports of production module `file` (relative to the root) that reach test support. */
export const testImports = (file: string, text: string): ReadonlyArray<string> =>
  importsOf(text).flatMap((spec) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))
    return target.startsWith("test/") || target.startsWith("bench/") || /(^|\/)testkit\.js$/.test(target) ? [`${file} imports ${target}`] : []
  })

/** What only a test may build from: a `layerTest`, the fixed test master key, the test database's URL. */
const TEST_ONLY = new Set(["layerTest", "testMasterKey", "TestDatabaseUrl"])

/**
 * Where production module `file` reaches for a test-only value: any mention of a `TEST_ONLY` name
 * outside a `layerTest`'s own definition, the name's declaration, and imports (which a use needs anyway).
 */
export const testOnlyUses = (file: string, text: string): ReadonlyArray<string> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: Array<string> = []
  const visit = (n: ts.Node, inTestLayer: boolean): void => {
    if (ts.isImportDeclaration(n)) return
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.name.text === "layerTest") {
      if (n.initializer !== undefined) visit(n.initializer, true)
      return
    }
    if ((ts.isClassDeclaration(n) || ts.isVariableDeclaration(n) || ts.isFunctionDeclaration(n)) && n.name !== undefined && ts.isIdentifier(n.name) && TEST_ONLY.has(n.name.text)) {
      return // the declaration itself
    }
    if (ts.isIdentifier(n) && TEST_ONLY.has(n.text) && !inTestLayer) {
      const { line } = source.getLineAndCharacterOfPosition(n.getStart())
      out.push(`${file}:${line + 1} uses ${n.text} outside a layerTest`)
    }
    ts.forEachChild(n, (c) => visit(c, inTestLayer))
  }
  visit(source, false)
  return out
}


const read = (file: string) => readFileSync(path.join(projectRoot, file), "utf8")

describe("layerTest beside each service", () => {
  it("every service module that exports layer exports layerTest, under that one name", () => {
    const files = sources(SERVICES)
    // Sanity: the scan saw the services (a wrong root would pass vacuously).
    const withLayer = files.filter((f) => exportedNames(f, read(f)).includes("layer"))
    expect(withLayer.length).toBeGreaterThan(25)
    expect(withLayer).toContain("src/services/wiring/Stack.ts")
    expect(files.flatMap((f) => layerTestProblems(f, read(f)))).toEqual([])
  })

  it("the database has its layerTest", () => {
    expect(exportedNames("src/db/Database.ts", read("src/db/Database.ts"))).toEqual(expect.arrayContaining(["layer", "layerTest"]))
  })

  it("no production module under src/ imports test support", () => {
    const files = sources("src").filter((f) => !f.endsWith("/testkit.ts"))
    expect(files.length).toBeGreaterThan(200)
    expect(files.flatMap((f) => testImports(f, read(f)))).toEqual([])
  })

  it("no production module uses a test-only value (a layerTest, the test master key, the test database URL) outside a layerTest", () => {
    const files = ["src", "api", "actors", "ingest", "clickhouse"].flatMap((d) => sources(d))
    expect(files.length).toBeGreaterThan(300)
    expect(files.flatMap((f) => testOnlyUses(f, read(f)))).toEqual([])
    // And it catches one.
    expect(testOnlyUses("src/Main.ts", `import * as Stack from "./Stack.js"\nconst live = Stack.layerTest`)).toEqual(["src/Main.ts:2 uses layerTest outside a layerTest"])
    expect(testOnlyUses("src/A.ts", `export const layerTest = Stack.layerTest.pipe(f(testMasterKey))\nexport const testMasterKey = 1`)).toEqual([])
    expect(testOnlyUses("src/A.ts", `export const layer = make(testMasterKey)`)).toEqual(["src/A.ts:1 uses testMasterKey outside a layerTest"])
  })

  it("the checks catch what they name", () => {
    expect(exportedNames("x.ts", `export const layer = 1\nexport function make() {}\nconst a = 2\nexport { a as layerTest }\nexport class Tag {}`)).toEqual([
      "layer",
      "make",
      "layerTest",
      "Tag"
    ])
    expect(layerTestProblems("src/services/x/A.ts", `export const layer: Layer.Layer<A> = Layer.succeed(A, a)`)).toEqual([
      "src/services/x/A.ts exports layer but no layerTest"
    ])
    expect(layerTestProblems("src/services/x/A.ts", `export const layer = 1\nexport const layerTest = 2`)).toEqual([])
    expect(layerTestProblems("src/services/x/A.ts", `export const layerLocal = 1\nexport const solanaLayer = 2`)).toEqual([])
    expect(layerTestProblems("src/services/x/A.ts", `export const layer = 1\nexport const layerTest = 2\nexport const fixedLayer = 3\nexport const layerFixed = 4`)).toEqual([
      "src/services/x/A.ts exports fixedLayer: call a test layer layerTest",
      "src/services/x/A.ts exports layerFixed: call a test layer layerTest"
    ])
    // A comment is not an export.
    expect(layerTestProblems("src/services/x/A.ts", `// export const layerTest = 2\nexport const layer = 1`)).toEqual(["src/services/x/A.ts exports layer but no layerTest"])
    expect(testImports("src/sim/LocalFunding.ts", `import { a } from "../chain/solana/localnet/testkit.js"`)).toEqual([
      "src/sim/LocalFunding.ts imports src/chain/solana/localnet/testkit.js"
    ])
    expect(testImports("src/services/x/A.ts", `import type { H } from "../../../test/support/stackHarness.js"`)).toEqual([
      "src/services/x/A.ts imports test/support/stackHarness.js"
    ])
    expect(testImports("src/services/x/A.ts", `const b = await import("../../../bench/run.js")`)).toEqual(["src/services/x/A.ts imports bench/run.js"])
    expect(testImports("src/services/x/A.ts", `import { a } from "../wallets/WalletProvider.js"\n// import { t } from "../../../test/x.js"`)).toEqual([])
  })
})
