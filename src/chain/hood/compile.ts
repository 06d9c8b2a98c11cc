/**
 * Compiles the Hood contracts (`src/chain/hood/contracts/**.sol`) with solc-js 0.8.28, offline,
 * and caches the artifacts (abi + creation and runtime bytecode) in one JSON file per input:
 * `<cacheDir>/<sha256 of compiler version, settings and every source>.json`. A second start with the
 * same sources reads the file and never loads the compiler. The import callback resolves only
 * files inside the contracts folder and `node_modules` (no network, no paths outside those roots).
 *
 * The default cache directory is `node_modules/.cache/curvestream-solc` under the project root;
 * `HOOD_SOLC_CACHE_DIR` or the `cacheDir` option moves it. A cache file is written to a temporary
 * name and renamed, so a crash never leaves a half-written artifact set behind; an unreadable or
 * malformed cache file is ignored and rebuilt.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Schema } from "effect"
import type { Abi, Hex } from "viem"

export const SOLC_VERSION = "0.8.28"

/** The contracts we deploy or read; every other compiled unit (libraries, interfaces) is dropped. */
export const HoodContractNames = ["USDG", "WETH9", "FeeSplitter", "CurveFactory", "BondingCurve", "CurveToken", "EthUsdFeed", "TradeRouter"] as const
export type HoodContractName = (typeof HoodContractNames)[number]

export interface ContractArtifact {
  readonly abi: Abi
  readonly bytecode: Hex
  readonly deployedBytecode: Hex
}

export type HoodArtifacts = Readonly<Record<HoodContractName, ContractArtifact>>

export interface CompileResult {
  readonly artifacts: HoodArtifacts
  /** The cache key: sha256 of the compiler version, settings and sources. */
  readonly hash: string
  readonly cacheFile: string
  readonly fromCache: boolean
}

export interface CompileOptions {
  readonly cacheDir?: string
  /** Contracts root (default: `src/chain/hood/contracts` next to this module). */
  readonly contractsDir?: string
}

export class HoodCompileError extends Schema.TaggedError<HoodCompileError>()("HoodCompileError", {
  message: Schema.String
}) {}

const here = dirname(fileURLToPath(import.meta.url))
export const CONTRACTS_DIR = join(here, "contracts")
const PROJECT_ROOT = resolve(here, "..", "..", "..")
const NODE_MODULES = join(PROJECT_ROOT, "node_modules")
export const DEFAULT_SOLC_CACHE_DIR = join(NODE_MODULES, ".cache", "curvestream-solc")

/** viaIR: the CurveCreated event and the curve's migration carry more values than the legacy stack allows. */
export const SOLC_SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  viaIR: true,
  evmVersion: "cancun",
  outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } }
} as const

const listSources = (root: string): Record<string, { content: string }> => {
  const out: Record<string, { content: string }> = {}
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith(".sol")) out[relative(root, full).split(sep).join("/")] = { content: readFileSync(full, "utf8") }
    }
  }
  walk(root)
  return out
}

const within = (root: string, path: string): boolean => {
  const r = relative(root, path)
  return r !== "" && r.split(sep)[0] !== ".." && !isAbsolute(r)
}

/** solc's import callback: local sources first, then node_modules; nothing else is reachable. */
export const importResolver = (contractsDir: string) => (path: string): { contents: string } | { error: string } => {
  for (const root of [contractsDir, NODE_MODULES]) {
    const full = resolve(root, path)
    if (within(root, full) && existsSync(full)) return { contents: readFileSync(full, "utf8") }
  }
  return { error: `import not found (only the contracts folder and node_modules are searched): ${path}` }
}

export const sourcesHash = (sources: Record<string, { content: string }>): string =>
  createHash("sha256")
    .update(JSON.stringify({ compiler: SOLC_VERSION, settings: SOLC_SETTINGS, sources: Object.entries(sources) }))
    .digest("hex")

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts?: Record<
    string,
    Record<string, { abi: Abi; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
  >
}

const isArtifacts = (v: unknown): v is HoodArtifacts =>
  typeof v === "object" &&
  v !== null &&
  HoodContractNames.every((n) => {
    const a = (v as Record<string, Partial<ContractArtifact> | undefined>)[n]
    return a !== undefined && Array.isArray(a.abi) && typeof a.bytecode === "string" && a.bytecode.startsWith("0x")
  })

const readCache = (file: string): HoodArtifacts | undefined => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, "utf8"))
    return isArtifacts(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

const runSolc = (sources: Record<string, { content: string }>, contractsDir: string): HoodArtifacts => {
  const require = createRequire(import.meta.url)
  const solc = require("solc") as { version(): string; compile(input: string, callbacks: object): string }
  if (!solc.version().startsWith(SOLC_VERSION)) {
    throw new HoodCompileError({ message: `solc ${SOLC_VERSION} expected, node_modules has ${solc.version()}` })
  }
  const input = { language: "Solidity", sources, settings: SOLC_SETTINGS }
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: importResolver(contractsDir) })) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new HoodCompileError({ message: errors.map((e) => e.formattedMessage).join("\n") })
  const found: Partial<Record<HoodContractName, ContractArtifact>> = {}
  for (const file of Object.values(output.contracts ?? {})) {
    for (const [name, c] of Object.entries(file)) {
      if ((HoodContractNames as ReadonlyArray<string>).includes(name)) {
        found[name as HoodContractName] = {
          abi: c.abi,
          bytecode: `0x${c.evm.bytecode.object}`,
          deployedBytecode: `0x${c.evm.deployedBytecode.object}`
        }
      }
    }
  }
  const missing = HoodContractNames.filter((n) => found[n] === undefined)
  if (missing.length > 0) throw new HoodCompileError({ message: `solc produced no artifact for ${missing.join(", ")}` })
  return found as HoodArtifacts
}

/**
 * Synchronous (solc-js is): read the cache or compile and write it. Throws `HoodCompileError`.
 * A compile takes seconds (viaIR in WebAssembly); a cache hit takes milliseconds.
 */
export const compileHoodContracts = (options: CompileOptions = {}): CompileResult => {
  const contractsDir = options.contractsDir ?? CONTRACTS_DIR
  const cacheDir = options.cacheDir ?? process.env["HOOD_SOLC_CACHE_DIR"] ?? DEFAULT_SOLC_CACHE_DIR
  const sources = listSources(contractsDir)
  const hash = sourcesHash(sources)
  const cacheFile = join(cacheDir, `${hash}.json`)
  const cached = readCache(cacheFile)
  if (cached !== undefined) return { artifacts: cached, hash, cacheFile, fromCache: true }
  const artifacts = runSolc(sources, contractsDir)
  mkdirSync(cacheDir, { recursive: true })
  const tmp = `${cacheFile}.${process.pid}.${Date.now()}.tmp`
  writeFileSync(tmp, JSON.stringify(artifacts))
  renameSync(tmp, cacheFile)
  return { artifacts, hash, cacheFile, fromCache: false }
}

/** The Effect form, for layers: compile (or read the cache) off the fiber's hot path. */
export const loadHoodArtifacts = (options: CompileOptions = {}): Effect.Effect<CompileResult, HoodCompileError> =>
  Effect.try({
    try: () => compileHoodContracts(options),
    catch: (e) => (e instanceof HoodCompileError ? e : new HoodCompileError({ message: e instanceof Error ? e.message : String(e) }))
  })

/** The Uniswap v3 artifacts the localnet deploys, as shipped in node_modules (compiled with solc 0.7.6). */
export const UniswapArtifactPaths = {
  UniswapV3Factory: "@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json",
  UniswapV3Pool: "@uniswap/v3-core/artifacts/contracts/UniswapV3Pool.sol/UniswapV3Pool.json",
  NonfungiblePositionManager:
    "@uniswap/v3-periphery/artifacts/contracts/NonfungiblePositionManager.sol/NonfungiblePositionManager.json",
  SwapRouter: "@uniswap/v3-periphery/artifacts/contracts/SwapRouter.sol/SwapRouter.json"
} as const
export type UniswapContractName = keyof typeof UniswapArtifactPaths

export const loadUniswapArtifact = (name: UniswapContractName): ContractArtifact => {
  const raw = JSON.parse(readFileSync(join(NODE_MODULES, UniswapArtifactPaths[name]), "utf8")) as ContractArtifact
  return { abi: raw.abi, bytecode: raw.bytecode, deployedBytecode: raw.deployedBytecode }
}

/** The exported name of a contract's `as const` ABI in abi.generated.ts (`BondingCurve` → `bondingCurveAbi`). */
export const abiExportName = (contract: string): string =>
  `${contract.startsWith("USDG") || contract.startsWith("WETH") ? contract.toLowerCase() : contract[0]!.toLowerCase() + contract.slice(1)}Abi`

/** abi.generated.ts: every ABI as an `as const` literal, so viem infers argument and event types. */
export const renderAbiModule = (artifacts: HoodArtifacts): string => {
  const blocks = [
    ...HoodContractNames.map((n) => [n, artifacts[n].abi] as const),
    ...(Object.keys(UniswapArtifactPaths) as UniswapContractName[]).map((n) => [n, loadUniswapArtifact(n).abi] as const)
  ].map(([name, abi]) => `export const ${abiExportName(name)} = ${JSON.stringify(abi, null, 2)} as const\n`)
  return [
    "/**",
    " * GENERATED by `npx tsx src/chain/hood/compile.ts --emit-abi` from the compiled Hood contracts and the",
    " * Uniswap v3 artifacts in node_modules. Do not edit: change the Solidity and regenerate; the test",
    " * test/integration/hood.contracts.test.ts fails while this file differs from the compiler's output.",
    " */",
    "",
    ...blocks
  ].join("\n")
}

export const ABI_MODULE_PATH = join(here, "abi.generated.ts")

/** `npx tsx src/chain/hood/compile.ts [--emit-abi]`: compile now (the build step) and print the cache file. */
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now()
  const r = compileHoodContracts()
  if (process.argv.includes("--emit-abi")) writeFileSync(ABI_MODULE_PATH, renderAbiModule(r.artifacts))
  const sizes = Object.fromEntries(HoodContractNames.map((n) => [n, (r.artifacts[n].deployedBytecode.length - 2) / 2]))
  process.stdout.write(
    JSON.stringify({ cacheFile: r.cacheFile, fromCache: r.fromCache, ms: Math.round(performance.now() - started), runtimeBytes: sizes }) + "\n"
  )
}
