/**
 * Atomic launch bundles (issue 12, "Measure"): the build's latency for a 4-leg ladder (target
 * p50/p99 under 10 ms: agents must sign and submit within the blockhash's life), and build →
 * landed on the Solana localnet, each beside a baseline in the same run.
 *
 * In process: what `/launch/atomic/build` computes between its reads and its write: the pricing
 * ladder (4 legs), the spend gate and holds, the attempt's mint key, the launch transaction with
 * the tip and the four buy legs assembled, compiled and serialized, one blockhash for all.
 *
 * Through the engine (`src/main.ts`, embedded, `--quiet`, `HEADLESS_LAUNCH_ENABLED=true`, the local
 * account's Max key; `PLAN_OVERRIDES` lifts the 600 requests/min so the phase is not refused):
 * `POST /api/v1/launch/atomic/build` with four main-payer legs (a distinct `clientLaunchId` each:
 * key auth, decoding, payers, the ledger, the image, the ladder and gate, the blockhash, the five
 * transactions, the database transaction with holds and the bundle row) beside the baseline
 * `POST /api/v1/launch/headless/dry-run` (the same auth and decoding, one launch transaction
 * assembled and sized, nothing written), in 4 alternating rounds, one in flight. Then build →
 * `/submit` answered `landed` (the server legs signed by the embedded wallet, `sendBundle`, the
 * engine's Landed, each leg's status read at `confirmed`) beside the direct path on the same
 * localnet (the bundle built and signed in the bench by funded dev keys, `sendBundle`, Landed
 * polled every 5 ms, then the last buy polled to `confirmed`), alternating, each after a random
 * 0–1 slot pause.
 *
 * Run: `npm run bench:atomic` (`BENCH_BUILDS` in process, default 2000; `BENCH_ROUTE_BUILDS`,
 * default 200; `BENCH_BUNDLES`, default 30). Prints a markdown section; writes nothing.
 * `-- --in-process-only`: the in-process builds alone, with this process's CPU per build.
 * `BENCH_PROFILE_DIR=<dir>`: the route builds alone (no in-process builds, no bundles, no server),
 * the engine under `--cpu-prof` (its `.cpuprofile` lands in `<dir>` when it stops); the measured
 * route builds' bounds on the monotonic clock are printed (`bench/cpuprofileSummary.ts --from µs --to µs`).
 * `-- --route-only`: the route builds beside the dry-run baseline alone, on PGlite (about a minute).
 */
import {
  createNoopSigner,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  getSignatureFromTransaction,
  getTransactionDecoder,
  signature as asSignature
} from "@solana/kit"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { devSigner } from "../src/chain/solana/client/DevSigners.js"
import type { BlockhashLifetime } from "../src/chain/solana/client/Transactions.js"
import { assembleAtomicBundle } from "../src/chain/solana/launch/AtomicBundle.js"
import { launchMintSigner } from "../src/chain/solana/launch/LaunchMint.js"
import { isLaunchPlan, planLaunch } from "../src/chain/solana/launch/LaunchTransaction.js"
import { DEFAULT_TIP_ACCOUNTS } from "../src/chain/solana/localnet/DevKeys.js"
import { WSOL_MINT_ADDRESS } from "../src/chain/solana/program/ProgramIds.js"
import { gateBundle, holdsOf } from "../src/services/launch/atomic/SpendGate.js"
import { priceLadder } from "../src/services/launch/atomic/PricingLadder.js"
import { atomicTerms, clientSign } from "../test/support/atomicBundles.js"
import { startEngine } from "../test/support/engine.js"
import { solidImage } from "../test/support/testImages.js"
import { benchEngine, expectData, httpClient } from "./httpClient.js"
import { benchDatabases, onPostgresServer, serverNote } from "./databases.js"
import { clockTicksPerSec, processCpuSec } from "./http.js"

const SOL = 1_000_000_000n
const BUILDS = Number(process.env["BENCH_BUILDS"] ?? 2000)
const BUNDLES = Number(process.env["BENCH_BUNDLES"] ?? 30)
const ROUTE_BUILDS = Number(process.env["BENCH_ROUTE_BUILDS"] ?? 200)
const PROFILE_DIR = process.env["BENCH_PROFILE_DIR"]
const ticks = clockTicksPerSec()
/** The monotonic clock in µs: the clock of V8's `.cpuprofile` timestamps. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n)
const terms = atomicTerms
const secret = new Uint8Array(32).fill(7)

const pct = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
const ms = (v: number) => v.toFixed(2)

interface Parties {
  readonly creator: KeyPairSigner
  readonly buyers: ReadonlyArray<KeyPairSigner>
  readonly treasury: KeyPairSigner
  readonly tip: string
}

/** One build: ladder, gate, holds, mint key, assembled and serialized bundle. */
const build = async (p: Parties, n: number, lifetime: BlockhashLifetime) => {
  const plan = planLaunch(terms, 0n, { bps: 25n, treasury: p.treasury.address })
  if (!isLaunchPlan(plan)) throw new Error("plan")
  const amounts = [SOL / 2n + BigInt(n % 97), SOL, 2n * SOL, SOL / 3n]
  const ladder = priceLadder({ curveParams: plan.curveParams, amountsRaw: amounts, platformFeeBps: 25n, referred: n % 2 === 0 })
  if (ladder._tag !== "Priced") throw new Error("unpriced")
  const legs = ladder.legs.map((l, i) => ({ position: i, payerKind: i === 0 ? ("main" as const) : ("linked" as const), wallet: p.buyers[i]!.address, amountRaw: l.amountInRaw, feeRaw: l.platformFeeRaw }))
  const usd = (raw: bigint) => raw / 10n
  const gate = gateBundle({ keyPrefix: "benchkey", asset: "sol", spendLimits: [{ asset: "sol", maxPerTxRaw: String(10n * SOL) }], txLimit: { usdMicros: 10 ** 12, reset: "daily" }, legs, usedUsdMicros: 0, usdMicrosOf: usd, nowMs: 0 })
  if (gate._tag !== "Allowed") throw new Error("gated")
  holdsOf(legs, usd)
  const mint = await launchMintSigner(secret, { accountId: "bench", clientLaunchId: `b-${n}`, attempt: 1 })
  const bundle = await assembleAtomicBundle({
    launch: {
      payer: createNoopSigner(p.creator.address),
      mint,
      quoteMint: WSOL_MINT_ADDRESS,
      terms,
      name: "Bench Atomic",
      symbol: "BATM",
      metadataUri: "https://example.com/bench.json",
      devBuyRaw: 0n,
      platformFee: { bps: 25n, treasury: p.treasury.address },
      lifetime,
      bundleTip: { account: p.tip as never, lamports: 100_000n }
    },
    launchPlan: plan,
    legs: ladder.legs.map((l, i) => ({ buyer: createNoopSigner(p.buyers[i]!.address), amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
    treasury: p.treasury.address,
    lifetime
  })
  return { bundle, ladder, mint }
}

const call = async (url: string, method: string, params: ReadonlyArray<unknown>) => {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) })
  return (await res.json()) as { result?: unknown; error?: { message: string } }
}

/** Warm-up builds before the timed ones (attempt ids after theirs: every build a new mint). */
const BUILD_WARMUP = 100

/** One in process build per iteration after a warm-up; sorted milliseconds. */
const inProcessBuilds = async (parties: Parties) => {
  const fixedLifetime = { blockhash: "11111111111111111111111111111111", lastValidBlockHeight: 1_000n }
  for (let i = 0; i < BUILD_WARMUP; i++) await build(parties, BUILDS + i, fixedLifetime) // warm-up
  const builds: number[] = []
  for (let i = 0; i < BUILDS; i++) {
    const t0 = performance.now()
    await build(parties, i, fixedLifetime)
    builds.push(performance.now() - t0)
  }
  return builds.sort((a, b) => a - b)
}

/** The direct path on a localnet: blockhash, build, sign as each client, sendBundle, Landed, last buy confirmed. */
const directBundle = async (net: { rpcUrl: string; blockEngineUrl: string }, parties: Parties, n: number) => {
  const rpc = createSolanaRpc(net.rpcUrl)
  const t0 = performance.now()
  const latest = (await rpc.getLatestBlockhash({ commitment: "confirmed" }).send()).value
  const { bundle } = await build(parties, n, { blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight })
  const signed = await Promise.all(bundle.legs.map((l, j) => clientSign(l.wireBase64, j === 0 ? parties.creator : parties.buyers[j - 1]!)))
  const sent = await call(net.blockEngineUrl, "sendBundle", [signed, { encoding: "base64", revertible: [1, 2, 3, 4] }])
  if (typeof sent.result !== "string") throw new Error(`sendBundle: ${sent.error?.message}`)
  for (;;) {
    const st = (await call(net.blockEngineUrl, "getInflightBundleStatuses", [[sent.result]])).result as { value: Array<{ status: string }> }
    if (st.value[0]!.status === "Landed") break
    if (st.value[0]!.status === "Failed") throw new Error("bundle failed")
    await new Promise((r) => setTimeout(r, 5))
  }
  const landed = performance.now() - t0
  const lastSig = getSignatureFromTransaction(getTransactionDecoder().decode(new Uint8Array(Buffer.from(signed.at(-1)!, "base64"))))
  for (;;) {
    const st = (await rpc.getSignatureStatuses([asSignature(lastSig)]).send()).value[0]
    if (st?.confirmationStatus === "confirmed" || st?.confirmationStatus === "finalized") break
    await new Promise((r) => setTimeout(r, 5))
  }
  return { landed, confirmed: performance.now() - t0 }
}

const row = (name: string, xs: ReadonlyArray<number>) => `| ${name} | ${xs.length} | ${ms(pct(xs, 50))} | ${ms(pct(xs, 99))} | ${ms(xs.at(-1)!)} |`
const sorted = (xs: number[]) => xs.sort((a, b) => a - b)

/** An engine (embedded, --quiet; `databaseEnv` puts it on a PostgreSQL server), its agent key's client and the two timed builds. */
const engineSession = async (databaseEnv: Record<string, string>) => {
  const engine = await startEngine({
    env: {
      ...databaseEnv,
      HEADLESS_LAUNCH_ENABLED: "true",
      PLAN_OVERRIDES: JSON.stringify({ max: { limits: { requestsPerMin: 1_000_000 } } }),
      ...(PROFILE_DIR !== undefined ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${path.resolve(PROFILE_DIR)}` } : {})
    },
    args: ["--quiet"],
    readyTimeoutMs: 120_000
  })
  const client = httpClient(engine.url, 1)
  const key = (JSON.parse(readFileSync(path.join(engine.dataDir, "local-credentials.json"), "utf8")) as { agentKey: string }).agentKey
  const net = (JSON.parse(readFileSync(path.join(engine.dataDir, "localnet.json"), "utf8")) as { solana: { rpcUrl: string; blockEngineUrl: string } }).solana
  const api = benchEngine(engine.url, client, key)
  const png = await solidImage("png", 32, 32)
  // Raw bytes with an image content type; the document types a binary body as a string.
  const upload = { body: png as unknown as string, bodySerializer: (b: string) => b, headers: { "content-type": "image/png" } }
  const { imageUrl } = expectData("image upload", await api.POST("/api/v1/uploads/agent-image", upload), 200)
  let n = 0
  const launchFields = () => ({ clientLaunchId: `bench-atomic-${process.pid}-${++n}`, name: "Bench Atomic", symbol: "BATM", imageUrl })
  const main4 = [SOL / 2n, SOL, 2n * SOL, SOL / 3n].map((a) => ({ payer: { type: "main" as const }, amountRaw: a.toString() }))
  const routeBuild = async () => {
    const t0 = performance.now()
    const r = await api.POST("/api/v1/launch/atomic/build", { body: { ...launchFields(), payer: { type: "main" }, firstBuys: main4 } })
    const dt = performance.now() - t0
    const body = expectData("atomic build", r, 200)
    // A fresh clientLaunchId each: the bundle's legs, never a repeat's stored launch result.
    if (!("bundleId" in body)) throw new Error(`atomic build: unexpected answer ${JSON.stringify(body).slice(0, 400)}`)
    return { dt, body }
  }
  const dryRun = async () => {
    const t0 = performance.now()
    expectData("dry run", await api.POST("/api/v1/launch/headless/dry-run", { body: launchFields() }), 200)
    return performance.now() - t0
  }
  return { engine, client, api, net, routeBuild, dryRun }
}

/** The route builds and their dry-run baseline in alternating rounds after a warm-up; with the engine's pid, its CPU (all threads) per request of each. */
const buildRounds = async (routeBuild: () => Promise<{ readonly dt: number }>, dryRun: () => Promise<number>, pid?: number) => {
  for (let i = 0; i < 20; i++) {
    await routeBuild()
    await dryRun()
  }
  const route: number[] = []
  const dry: number[] = []
  let routeCpuSec = 0
  let dryCpuSec = 0
  const from = monotonicUs()
  for (let round = 0; round < 4; round++) {
    const per = Math.ceil(ROUTE_BUILDS / 4)
    const cpu = () => (pid === undefined ? 0 : processCpuSec(pid, ticks))
    const a = async () => {
      const c0 = cpu()
      for (let i = 0; i < per; i++) route.push((await routeBuild()).dt)
      routeCpuSec += cpu() - c0
    }
    const b = async () => {
      const c0 = cpu()
      for (let i = 0; i < per; i++) dry.push(await dryRun())
      dryCpuSec += cpu() - c0
    }
    if (round % 2 === 0) { await a(); await b() } else { await b(); await a() }
  }
  process.stderr.write(`bench: route builds and dry runs, ${route.length} + ${dry.length}: --from ${from} --to ${monotonicUs()}\n`)
  return { route, dry, routeCpuMs: (routeCpuSec * 1000) / route.length, dryCpuMs: (dryCpuSec * 1000) / dry.length }
}

/** Profiling: the route builds alone, the engine under `--cpu-prof`. With `--route-only` (no profile): the route builds beside their dry-run baseline, PGlite only. */
const profileRoute = async () => {
  const { engine, client, routeBuild, dryRun } = await engineSession({})
  try {
    if (PROFILE_DIR === undefined) {
      const { route, dry, routeCpuMs, dryCpuMs } = await buildRounds(routeBuild, dryRun, engine.child.pid)
      console.log(`| Measure | n | p50 ms | p99 ms | max ms | engine CPU ms/req |\n|---|---|---|---|---|---|`)
      console.log(`${row("`POST /launch/atomic/build`, 4 main-payer legs, through the engine", sorted(route))} ${routeCpuMs.toFixed(2)} |`)
      console.log(`${row("baseline: `POST /launch/headless/dry-run`", sorted(dry))} ${dryCpuMs.toFixed(2)} |`)
      return
    }
    for (let i = 0; i < 20; i++) await routeBuild()
    const route: number[] = []
    const from = monotonicUs()
    for (let i = 0; i < ROUTE_BUILDS; i++) route.push((await routeBuild()).dt)
    process.stderr.write(`bench: ${ROUTE_BUILDS} route builds: --from ${from} --to ${monotonicUs()} --requests ${ROUTE_BUILDS}\n`)
    console.log(row("`POST /launch/atomic/build`, 4 main-payer legs, through the engine (profiled)", sorted(route)))
  } finally {
    client.close()
    await engine.stop("SIGTERM")
    engine.cleanup()
  }
}

const main = async () => {
  if (PROFILE_DIR !== undefined || process.argv.includes("--route-only")) return profileRoute()
  // The build phase first, alone in the process (no localnet slot clock beside it).
  const parties: Parties = {
    creator: await devSigner(0),
    buyers: await Promise.all([1, 2, 3, 4].map((i) => devSigner(i))),
    treasury: await generateKeyPairSigner(),
    tip: DEFAULT_TIP_ACCOUNTS[0]!
  }
  const cpu = process.cpuUsage()
  const builds = await inProcessBuilds(parties)
  if (process.argv.includes("--in-process-only")) {
    const used = process.cpuUsage(cpu)
    console.log(`${row("build, 4-leg ladder, in process (ladder, gate, mint key, five transactions)", builds)} CPU ${((used.user + used.system) / 1000 / (builds.length + BUILD_WARMUP)).toFixed(2)} ms a build, warm-up included`)
    return
  }

  // Through the engine (embedded, --quiet), side by side in rounds with its baselines.
  const { engine, client, api, net, routeBuild, dryRun } = await engineSession({})
  try {
    const { route, dry } = await buildRounds(routeBuild, dryRun)
    // Build → submit answered `landed` through the routes, beside the direct path on the same localnet.
    const submitted: number[] = []
    const viaRoutes: number[] = []
    const directLanded: number[] = []
    const directConfirmed: number[] = []
    const onChain: Parties = { ...parties, tip: DEFAULT_TIP_ACCOUNTS[0]! }
    for (let i = 0; i < BUNDLES; i++) {
      const pause = () => new Promise((r) => setTimeout(r, Math.random() * 400)) // do not phase-lock with the slot clock
      const routeCase = async () => {
        const t0 = performance.now()
        const b = await routeBuild()
        const t1 = performance.now()
        const s = expectData("atomic submit", await api.POST("/api/v1/launch/atomic/submit", { body: { bundleId: b.body.bundleId, signedTxsBase64: [] } }), 200)
        if (s.status !== "landed") throw new Error(`submit answered ${s.status}`)
        submitted.push(performance.now() - t1)
        viaRoutes.push(performance.now() - t0)
      }
      const directCase = async () => {
        const d = await directBundle(net, onChain, 2_000_000 + i)
        directLanded.push(d.landed)
        directConfirmed.push(d.confirmed)
      }
      await pause()
      if (i % 2 === 0) await routeCase()
      else await directCase()
      await pause()
      if (i % 2 === 0) await directCase()
      else await routeCase()
    }
    console.log(`## Atomic bundles (\`bench/atomicBundle.ts\`)\n`)
    console.log(`| Measure | n | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|`)
    console.log(row("build, 4-leg ladder, in process (ladder, gate, mint key, five transactions)", builds))
    console.log(row("`POST /launch/atomic/build`, 4 main-payer legs, through the engine", sorted(route)))
    console.log(row("baseline: `POST /launch/headless/dry-run` (same auth, decoding, one transaction assembled and sized)", sorted(dry)))
    console.log(row("`/submit` → 200 `landed` (server legs signed, sent, each leg's status read at `confirmed`)", sorted(submitted)))
    console.log(row("build → submit answered `landed`, through the routes", sorted(viaRoutes)))
    console.log(row("direct: build in the bench → engine reports Landed", sorted(directLanded)))
    console.log(row("direct: build in the bench → last buy `confirmed` (400 ms slots)", sorted(directConfirmed)))
  } finally {
    client.close()
    await engine.stop("SIGTERM")
    engine.cleanup()
  }
  // The two builds again on the PostgreSQL server (issue 34 item 3): what the embedded default costs.
  if (benchDatabases().includes("postgres")) {
    await onPostgresServer(async (env, version) => {
      const server = await engineSession(env)
      try {
        const { route, dry } = await buildRounds(server.routeBuild, server.dryRun)
        console.log(`\nThe same builds on ${serverNote(version)}:\n`)
        console.log(`| Measure | n | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|`)
        console.log(row("`POST /launch/atomic/build`, 4 main-payer legs, through the engine on the PostgreSQL server", sorted(route)))
        console.log(row("baseline: `POST /launch/headless/dry-run` on the PostgreSQL server", sorted(dry)))
      } finally {
        server.client.close()
        await server.engine.stop("SIGTERM")
        server.engine.cleanup()
      }
    })
  }
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e)
    process.exit(1)
  }
)
