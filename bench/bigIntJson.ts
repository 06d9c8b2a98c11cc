/**
 * Parsing a Solana JSON-RPC answer with every integer a bigint, side by side in one run: kit's
 * `parseJsonWithBigInts` (`@solana/rpc-spec-types`: the text copied character by character with
 * each integer wrapped in an object, then `JSON.parse` and an unwrapping reviver) against a
 * candidate (below: one `JSON.parse`, the reviver reading each number's source text), and
 * `JSON.parse` alone as the floor. Both give the same values (checked once per answer before timing).
 *
 * Answers: the shapes the engine's kit calls get, built as a node sends them: `getLatestBlockhash`,
 * `getSignatureStatuses` of 10 signatures, `getMultipleAccounts` of 4 accounts (200 bytes of data
 * each, base64) and `getTransaction` (json: balances, token balances, 20 log lines, inner
 * instructions). Each round times every variant once per answer, in an order that alternates
 * between rounds; the figure is the median over rounds of the process's CPU time per parse (µs,
 * `process.cpuUsage`), the spread in brackets (min–max), and the scavenges per 10,000 parses
 * (`perf_hooks` GC entries, minor; with the semi-space fixed, e.g. `node --max-semi-space-size=16
 * --min-semi-space-size=16 --import tsx bench/bigIntJson.ts`, they count bytes allocated).
 *
 * Run: `npm run bench:bigintjson [-- --quick]` (the semi-space fixed at 16 MiB, so scavenges count
 * bytes; default 30 rounds, a few seconds; --quick 6).
 * Prints a markdown section and, unless --quick, rewrites it between the `bigintjson` markers in
 * docs/benchmarks.md. Printed, never asserted.
 */
import * as os from "node:os"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { parseJsonWithBigInts as kitParse } from "@solana/rpc-spec-types"
import { writeBenchmarkSection } from "./benchmarksDoc.js"

/**
 * The candidate: kit's values from one `JSON.parse` whose reviver reads each number's own source
 * text (V8's JSON.parse source text access, Node 22): a literal with a fraction or a negative
 * exponent stays a number, every other integer literal is the bigint it denotes (kit's pattern and
 * 1,000-digit bound). Checked equal to kit's on every answer below before timing.
 */
const INTEGER_LITERAL = /^(-?)(\d+)(?:[eE]\+?(\d+))?$/
const sourceReviver = (_key: string, value: unknown, context: { readonly source: string }): unknown => {
  if (typeof value !== "number") return value
  const source = context.source
  if (/\.|[eE]-/.test(source)) return value
  const m = INTEGER_LITERAL.exec(source)
  if (m === null || m[2]!.length + Number(m[3] ?? 0) > 1000) throw new Error(`malformed bigint ${source}`)
  return m[3] === undefined ? BigInt(source) : BigInt(`${m[1]}${m[2]}`) * 10n ** BigInt(m[3])
}
const parseJsonWithBigInts = (json: string): unknown => JSON.parse(json, sourceReviver as (key: string, value: unknown) => unknown)

const quick = process.argv.includes("--quick")
const ROUNDS = quick ? 6 : 30
const loads = (): string => os.loadavg().map((l) => l.toFixed(2)).join(" / ")
const loadStart = loads()
const startedAt = performance.now()

const key = (i: number) => `${"So1ana".repeat(6)}${String(i).padStart(8, "1")}`.slice(0, 44)
const base64 = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff)).toString("base64")
const answer = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", result, id: "7" })

const answers: ReadonlyArray<readonly [string, string]> = [
  ["`getLatestBlockhash`", answer({ context: { apiVersion: "2.1.0", slot: 341197053 }, value: { blockhash: key(1), lastValidBlockHeight: 329358476 } })],
  [
    "`getSignatureStatuses`, 10 signatures",
    answer({ context: { apiVersion: "2.1.0", slot: 341197053 }, value: Array.from({ length: 10 }, (_, i) => (i === 9 ? null : { confirmationStatus: "confirmed", confirmations: i, err: null, slot: 341197000 + i, status: { Ok: null } })) })
  ],
  [
    "`getMultipleAccounts`, 4 accounts of 200 bytes (base64)",
    answer({
      context: { apiVersion: "2.1.0", slot: 341197053 },
      value: Array.from({ length: 4 }, (_, i) => ({ data: [base64(200, i), "base64"], executable: false, lamports: 2_039_280 + i, owner: key(9), rentEpoch: 18446744073709551615n.toString(), space: 200 }))
    }).replace(/"rentEpoch":"(\d+)"/g, '"rentEpoch":$1')
  ],
  [
    "`getTransaction` (json), 10 accounts, 20 log lines",
    answer({
      blockTime: 1764633600,
      slot: 341197053,
      meta: {
        computeUnitsConsumed: 48213,
        err: null,
        fee: 5000,
        innerInstructions: [{ index: 2, instructions: Array.from({ length: 3 }, (_, i) => ({ accounts: [0, 1, 4 + i], data: "3Bxs4NN8M2Yn4TLb", programIdIndex: 6, stackHeight: 2 })) }],
        logMessages: Array.from({ length: 20 }, (_, i) => `Program ${key(i)} consumed ${1000 + i * 37} of 200000 compute units`),
        postBalances: Array.from({ length: 10 }, (_, i) => 1_000_000_000 + i * 7),
        postTokenBalances: [{ accountIndex: 3, mint: key(5), owner: key(0), programId: key(6), uiTokenAmount: { amount: "123456789012", decimals: 6, uiAmount: 123456.789012, uiAmountString: "123456.789012" } }],
        preBalances: Array.from({ length: 10 }, (_, i) => 1_000_005_000 + i * 7),
        preTokenBalances: [],
        rewards: [],
        status: { Ok: null }
      },
      transaction: {
        message: {
          accountKeys: Array.from({ length: 10 }, (_, i) => key(i)),
          header: { numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 4, numRequiredSignatures: 1 },
          instructions: Array.from({ length: 4 }, (_, i) => ({ accounts: [0, 1, 2, 3], data: "2ZjTR1vUs2pHXyTM", programIdIndex: 5 + (i % 3), stackHeight: null })),
          recentBlockhash: key(2)
        },
        signatures: [`${key(3)}${key(4)}`.slice(0, 88)]
      },
      version: "legacy"
    })
  ]
]

const variants = [
  { name: "kit's `parseJsonWithBigInts`", run: kitParse },
  { name: "one `JSON.parse`, a reviver reading each number's source text", run: parseJsonWithBigInts },
  { name: "floor (`JSON.parse`, no bigints)", run: (t: string) => JSON.parse(t) as unknown }
] as const

const same = (a: unknown, b: unknown) => JSON.stringify(a, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) === JSON.stringify(b, (_, v) => (typeof v === "bigint" ? `${v}n` : v))
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

let scavenges = 0
const gc = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if ((e as unknown as { readonly detail?: { readonly kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++
})
gc.observe({ entryTypes: ["gc"] })

const rows: Array<string> = []
for (const [label, text] of answers) {
  if (!same(kitParse(text), parseJsonWithBigInts(text))) throw new Error(`the two parses differ on ${label}`)
  const reps = Math.max(50, Math.round(400_000 / text.length))
  for (let w = 0; w < 3; w++) for (const v of variants) for (let r = 0; r < reps; r++) v.run(text)
  const perParse: Array<Array<number>> = variants.map(() => [])
  const minors: Array<number> = variants.map(() => 0)
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0]
    for (const i of order) {
      const s0 = scavenges
      const t0 = process.cpuUsage()
      for (let r = 0; r < reps; r++) variants[i]!.run(text)
      const spent = process.cpuUsage(t0)
      // GC entries are delivered after the loop; let them land before reading the count.
      await new Promise<void>((resolve) => setImmediate(resolve))
      minors[i]! += scavenges - s0
      perParse[i]!.push((spent.user + spent.system) / reps)
    }
  }
  variants.forEach((v, i) => {
    const xs = perParse[i]!
    const per10k = (minors[i]! * 10_000) / (ROUNDS * reps)
    rows.push(`| ${label}: ${(text.length / 1024).toFixed(1)} KiB | ${v.name} | ${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}) | ${per10k.toFixed(1)} |`)
  })
  const [k, o] = perParse.map(median) as [number, number, number]
  rows.push(`| | source text ÷ kit's, medians | ${(o / k).toFixed(2)}x | |`)
}
gc.disconnect()

const section = [
  "## Solana JSON-RPC answers with bigints (`bench/bigIntJson.ts`, issue 28)",
  "",
  `- Date: ${new Date().toISOString()} (took ${((performance.now() - startedAt) / 1000).toFixed(0)} s); command: \`node ${process.execArgv.join(" ")} bench/bigIntJson.ts${quick ? " --quick" : ""}\`; Node ${process.version}, ${os.cpus().length} cores; load average (1/5/15 min) at the start ${loadStart}, at the end ${loads()}.`,
  `- ${ROUNDS} rounds, each variant once per round per answer (order alternating), about 400 KB of answer text per timing; median µs of process CPU time (user + system) per parse (min–max over rounds); scavenges per 10,000 parses. The two bigint parses were checked to give the same values before timing. The engine's kit calls keep kit's parse (docs/benchmarks.md, "kit's JSON parse: the source-text reviver measured and not adopted"); the trade build's account read parses its answer with \`JSON.parse\` alone (\`MultipleAccounts.ts\`).`,
  "",
  "| Answer | Parse | CPU µs per parse | scavenges per 10,000 |",
  "| --- | --- | ---: | ---: |",
  ...rows,
  ""
].join("\n")

process.stdout.write(`${section}\n`)
if (!quick) writeBenchmarkSection("bigintjson", section)
