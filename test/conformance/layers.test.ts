/**
 * The import layers (docs/architecture.md "Layers"), lowest first:
 *
 *   domain, platform → chain → ingest → actors | clickhouse → services → api → main
 *
 * A module may import its own layer and any layer of a lower rank, never a higher one, and never a
 * layer of its own rank beside it (actors and ClickHouse sit side by side: neither reads the
 * other). Every source file belongs to exactly one layer below, so a new folder has to be placed
 * before it can land. Test files (`*.test.ts`), `test/` and `bench/` may reach anywhere and are not
 * scanned; a source module must not import them, nor a test kit (`testkit.ts`) beside it.
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { projectRoot } from "../support/engine.js"
import { sourceFiles } from "../support/sourceFiles.js"

interface LayerDef {
  readonly name: string
  readonly rank: number
  /** Folders (every file below them) or single files, relative to the project root. */
  readonly holds: ReadonlyArray<string>
}

const LAYERS: ReadonlyArray<LayerDef> = [
  { name: "domain", rank: 0, holds: ["src/domain"] },
  { name: "platform", rank: 0, holds: ["src/db", "src/net", "src/platform"] },
  { name: "chain", rank: 1, holds: ["src/chain"] },
  { name: "ingest", rank: 2, holds: ["ingest"] },
  { name: "actors", rank: 3, holds: ["actors"] },
  { name: "clickhouse", rank: 3, holds: ["clickhouse"] },
  { name: "services", rank: 4, holds: ["src/services"] },
  { name: "api", rank: 5, holds: ["api"] },
  // The composition root and what only it starts: configuration, the simulations, the data service's wiring.
  // The MCP endpoint and the clients it serves (`clients/`: the typed client and the tool server, clients of the routes) sit here too.
  { name: "main", rank: 6, holds: ["src/main.ts", "src/cli.ts", "src/ClickHouseMigrate.ts", "src/DataService.ts", "src/MainApi.ts", "src/McpEndpoint.ts", "src/layers", "src/config", "src/sim", "clients"] }
]

/** The folders scanned for source modules. */
const SOURCE_ROOTS = ["src", "ingest", "actors", "api", "clickhouse", "clients"]

const layerOf = (file: string): LayerDef | undefined =>
  LAYERS.find((l) => l.holds.some((h) => file === h || file.startsWith(h + "/")))

const IMPORT = /\bfrom\s*["'](\.[^"']*)["']|\bimport\s*\(?\s*["'](\.[^"']*)["']/g

/** The relative specifiers a module imports or re-exports (comments stripped first). */
const importsOf = (source: string): ReadonlyArray<string> => {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!)
}

/** `file` and the specifiers it imports → one line per import that breaks the layering. */
const violations = (file: string, specifiers: ReadonlyArray<string>): ReadonlyArray<string> => {
  const from = layerOf(file)
  if (from === undefined) return [`${file} belongs to no layer (add its folder to LAYERS)`]
  const out: Array<string> = []
  for (const spec of specifiers) {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)).replace(/\.js$/, ".ts")
    const to = layerOf(target)
    if (to === undefined) out.push(`${file} (${from.name}) imports ${target}, which is in no layer`)
    else if (to !== from && to.rank >= from.rank) out.push(`${file} (${from.name}) imports ${target} (${to.name}): a ${to.rank === from.rank ? "layer beside it" : "higher layer"}`)
  }
  return out
}


describe("import layers", () => {
  const files = SOURCE_ROOTS.flatMap(sourceFiles)

  it("every source module imports only its own layer and lower ones", () => {
    // Sanity: the scan saw the tree (a wrong root would pass vacuously).
    expect(files.length).toBeGreaterThan(200)
    expect(files).toContain("src/main.ts")
    const found = files.flatMap((f) => violations(f, importsOf(readFileSync(path.join(projectRoot, f), "utf8"))))
    expect(found).toEqual([])
  })

  it("places every layer folder that exists, and no folder twice", () => {
    const held = LAYERS.flatMap((l) => l.holds)
    expect(new Set(held).size).toBe(held.length)
    for (const h of held) expect(files.some((f) => f === h || f.startsWith(h + "/")), h).toBe(true)
  })

  it("refuses an upward import, an import beside it, one into test/ and a file outside every layer", () => {
    expect(violations("clickhouse/writer/SignalWriter.ts", ["../../actors/signals/Signal.js"])).toEqual([
      "clickhouse/writer/SignalWriter.ts (clickhouse) imports actors/signals/Signal.ts (actors): a layer beside it"
    ])
    expect(violations("src/chain/hood/HoodEndpoints.ts", ["../../config/AppConfig.js"])).toEqual([
      "src/chain/hood/HoodEndpoints.ts (chain) imports src/config/AppConfig.ts (main): a higher layer"
    ])
    expect(violations("src/services/wallets/Harness.ts", ["../../../api/Server.js"])[0]).toMatch(/\(api\): a higher layer$/)
    expect(violations("src/services/x/Y.ts", ["../../../test/support/engine.js"])[0]).toMatch(/which is in no layer$/)
    expect(violations("src/elsewhere/Z.ts", [])).toEqual(["src/elsewhere/Z.ts belongs to no layer (add its folder to LAYERS)"])
  })

  it("accepts its own layer and every lower one", () => {
    expect(violations("api/routes/MarketRoutes.ts", ["../../actors/MarketIndex.js", "../../clickhouse/ClickHouse.js", "../Router.js", "../../src/domain/Chain.js"])).toEqual([])
    expect(violations("src/main.ts", ["../api/Server.js", "./services/wiring/Stack.js", "./config/AppConfig.js"])).toEqual([])
  })

  it("no source module imports a test kit (a module named testkit.ts is test support)", () => {
    const importsTestKit = (specifiers: ReadonlyArray<string>) => specifiers.some((s) => /(^|\/)testkit\.js$/.test(s))
    expect(importsTestKit(["../chain/solana/localnet/testkit.js"])).toBe(true)
    expect(importsTestKit(["../chain/solana/localnet/LedgerTokens.js", "./mytestkit.js"])).toBe(false)
    const found = files.filter((f) => !f.endsWith("/testkit.ts") && importsTestKit(importsOf(readFileSync(path.join(projectRoot, f), "utf8"))))
    expect(found).toEqual([])
  })

  it("reads static, type-only, re-export and dynamic imports, not commented ones", () => {
    const source = [
      `import { a } from "./a.js"`,
      `import type {\n  B\n} from "../b.js"`,
      `export { c } from "./c.js"`,
      `const d = await import("./d.js")`,
      `import "./e.js"`,
      `import { Effect } from "effect"`,
      `// import { x } from "./commented.js"`,
      `/* import { y } from "./block.js" */`
    ].join("\n")
    expect(importsOf(source)).toEqual(["./a.js", "../b.js", "./c.js", "./d.js", "./e.js"])
  })
})
