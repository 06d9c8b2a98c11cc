/**
 * The job read (launch spec 2.7, `GET /api/v1/launch/headless/jobs/{clientLaunchId}`) on the real
 * stack: the engine's launch layer (`src/layers/Launch.ts`, built from the configuration as
 * `main.ts` builds it, over the account stack's layer, the fixed price source and configured chain
 * endpoints) on PGlite with every migration, and the job read the route serves, composed from its
 * services by `src/MainApi.ts` (`launchJobRead`, over `LaunchJobs.ledgerLaunchJob`). Pinned: the
 * invariant `LaunchJobs.ts` states, one `launch_ledger` statement per job read whatever the path
 * (issue 34: the route asked the headless, self-signed and atomic services in turn and each read
 * the same row, three statements for an unknown id). The unit test (`LaunchJobs.test.ts`) counts
 * fake reads; this one counts the SQL the real services send.
 *
 * Counted: every statement `@effect/sql` runs opens one `sql.execute` span carrying its text
 * (`db.query.text`). A tracer that keeps the spans it opens (the native tracer underneath) is given
 * to the job read's fiber alone (`Effect.withTracer`), so the layer's own fibers (the in-flight
 * sweep, the hold sweeper, webhook delivery) are not counted. Each statement is named by the table
 * it reads. Not seen: the pool's `NamedStatements` (raw `pg` named queries, no span); no launch
 * read uses them.
 *
 * Expected statements per job read:
 *   unknown or foreign id ...... launch_ledger                       "an unknown id ..." / "another account's id ..."
 *   headless row (Solana, Hood)  launch_ledger                       "a headless row ..."
 *   self-signed row ............ launch_ledger, self_launch_builds   "a self-signed row ..."
 *   atomic row ................. launch_ledger, atomic_bundles       "an atomic row ..."
 * No chain is reached: the endpoints are configured at a port nothing answers and no job read
 * calls them (a Hood headless row's live dev-buy status is kept in memory).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { ConfigProvider, Context, Effect, Exit, Layer, Scope, Tracer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AgentLaunches, AgentLaunchRegistry } from "../../actors/AgentLaunches.js"
import { TREASURY_ADDRESS } from "../../src/chain/solana/localnet/DevKeys.js"
import { AppConfig } from "../../src/config/AppConfig.js"
import * as Database from "../../src/db/Database.js"
import { makeRowLeases } from "../../src/db/RowLease.js"
import type { Chain } from "../../src/domain/Chain.js"
import { planById, resolvePlans } from "../../src/domain/Plans.js"
import * as AccountsLayer from "../../src/layers/Accounts.js"
import { ResolvedPlans } from "../../src/layers/Common.js"
import * as LaunchLayer from "../../src/layers/Launch.js"
import * as PipelineLayer from "../../src/layers/Pipeline.js"
import { launchJobRead } from "../../src/MainApi.js"
import { AtomicLaunch } from "../../src/services/launch/atomic/AtomicLaunch.js"
import { LAUNCH_LEASE_KIND, launchLeaseKey } from "../../src/services/launch/headless/HeadlessAttemptStore.js"
import { HeadlessLaunch } from "../../src/services/launch/HeadlessLaunch.js"
import type { LaunchJobView } from "../../src/services/launch/internal/LaunchRecords.js"
import type { LaunchError } from "../../src/services/launch/LaunchError.js"
import { type AttemptRef, LaunchLedger, type LaunchRef } from "../../src/services/launch/LaunchLedger.js"
import type { LaunchPath } from "../../src/services/launch/LaunchLedgerMachine.js"
import { SelfLaunch } from "../../src/services/launch/SelfLaunch.js"

/** Nothing listens here: a chain call would fail, and none is made. */
const NOWHERE = "http://127.0.0.1:9"
const address = (digit: string) => `0x${digit.repeat(40)}`

/** A configured (not embedded) engine: PostgreSQL embedded, chains at `NOWHERE`, fixed prices. */
const engineEnv = (dataDir: string): Record<string, string> => ({
  CURVESTREAM_DATA_DIR: dataDir,
  HEADLESS_LAUNCH_ENABLED: "true",
  SOLANA_TREASURY_ADDRESS: TREASURY_ADDRESS,
  SOLANA_RPC_URL: NOWHERE,
  YELLOWSTONE_URL: NOWHERE,
  BLOCK_ENGINE_URL: NOWHERE,
  HOOD_RPC_URL: NOWHERE,
  HOOD_FACTORY_ADDRESS: address("1"),
  HOOD_FEE_SPLITTER_ADDRESS: address("2"),
  HOOD_UNISWAP_V3_FACTORY_ADDRESS: address("3"),
  HOOD_WETH9_ADDRESS: address("4"),
  PRICE_SOURCE: "fixed"
})

type Services = LaunchLedger | HeadlessLaunch | SelfLaunch | AtomicLaunch | SqlClient.SqlClient

/**
 * The launch layer as `main.ts` provides it (`servicesLayer`: the account stack below it; the
 * pipeline's price source and endpoints; storage; the resolved plans and configuration), with the
 * test's database (`Database.layerTest`) for the storage layer's (no ClickHouse or bus: the launch
 * services use neither) and the market actors' agent-launch registry as its own empty instance.
 */
const launchStack = (env: Record<string, string>) =>
  LaunchLayer.layerConfig.pipe(
    Layer.provideMerge(AccountsLayer.layerConfig),
    Layer.provideMerge(Layer.merge(PipelineLayer.localnetPrices, Layer.succeed(AgentLaunchRegistry, new AgentLaunches()))),
    Layer.provideMerge(PipelineLayer.endpointsLayer),
    Layer.provideMerge(Layer.merge(Database.layerTest, ResolvedPlans.layer)),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

/** The spans one effect opened (native spans underneath), by name, with each statement's text. */
const counted = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const native = yield* Effect.tracer
    const opened: Array<Tracer.Span> = []
    const counting = Tracer.make({
      span: (name, parent, context, links, startTime, kind, options) => {
        const span = native.span(name, parent, context, links, startTime, kind, options)
        opened.push(span)
        return span
      },
      context: (f, fiber) => native.context(f, fiber)
    })
    const exit = yield* Effect.exit(Effect.withTracer(effect, counting))
    const statements = opened.filter((s) => s.name === "sql.execute").map((s) => String(s.attributes.get("db.query.text")))
    return { exit, statements, spans: opened.map((s) => s.name) }
  })

const TABLES = ["launch_ledger", "self_launch_builds", "atomic_bundles"] as const

/** A statement named by the launch tables it reads (`FROM`/`JOIN`), or by its text when it reads none of them. */
const tablesOf = (text: string): string => {
  const read = TABLES.filter((t) => new RegExp(`\\b(FROM|JOIN)\\s+${t}\\b`, "i").test(text))
  return read.length > 0 ? read.join("+") : `other: ${text.replace(/\s+/g, " ").trim().slice(0, 160)}`
}

/** Each path's service span (its `job` method's `Effect.fn`); the self-signed job opens none. */
const serviceSpans: Record<LaunchPath, string | undefined> = { headless: "HeadlessLaunch.job", self: undefined, atomic: "AtomicLaunch.job" }
const otherPathsSpans = (spans: ReadonlyArray<string>, own: LaunchPath | undefined) =>
  spans.filter((n) => Object.entries(serviceSpans).some(([path, name]) => path !== own && name === n))

const pro = planById(resolvePlans({}, 0), "pro")

let scope: Scope.CloseableScope
let dataDir: string
let ctx: Context.Context<Services>
let jobRead: (ref: LaunchRef) => Effect.Effect<LaunchJobView, LaunchError>

const run = <A, E>(effect: Effect.Effect<A, E, Services>): Promise<A> => Effect.runPromise(Effect.provide(effect, ctx))

/** One job read of `ref`, counted. */
const readJob = (ref: LaunchRef) => run(counted(jobRead(ref)))

let seq = 0
const ACCOUNT = `acct-jobread-${process.pid}`

/** A row of `path` on `chain` admitted by the ledger, as each path's `begin` writes one. */
const admitted = (path: LaunchPath, chain: Chain, payer: "embedded" | "linked" = "embedded"): Promise<AttemptRef> =>
  run(
    Effect.gen(function* () {
      const ledger = yield* LaunchLedger
      const clientLaunchId = `job-${path}-${chain}-${++seq}`
      // A headless row is leased first, as the launch's own run holds it: the layer's in-flight
      // sweep (every 10 s) takes over a row with no live lease, and must not between this
      // admission and the test's settling of it.
      if (path === "headless" && !(yield* makeRowLeases(yield* SqlClient.SqlClient).take(LAUNCH_LEASE_KIND, launchLeaseKey({ accountId: ACCOUNT, clientLaunchId })))) {
        return yield* Effect.dieMessage("the headless row's lease was not taken")
      }
      const admission = yield* ledger.begin({
        accountId: ACCOUNT,
        clientLaunchId,
        keyId: "key-jobread",
        path,
        chain,
        payer,
        canonicalBody: { path, chain, n: String(seq) },
        dailyCap: { keyDailyCap: 1_000, plan: pro }
      })
      if (admission._tag !== "Accepted") return yield* Effect.dieMessage(`expected Accepted, got ${admission._tag}`)
      return admission.attempt
    })
  )

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), "curvestream-jobread-"))
  scope = await Effect.runPromise(Scope.make())
  ctx = await Effect.runPromise(Layer.buildWithScope(launchStack(engineEnv(dataDir)), scope))
  // The job read the route serves (`src/MainApi.ts`), over the same services.
  jobRead = await run(launchJobRead)
}, 120_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true })
})

describe("the job read on the real launch services reads launch_ledger once", () => {
  it("an unknown id is job_not_found after one launch_ledger statement and nothing else", async () => {
    const { exit, statements, spans } = await readJob({ accountId: ACCOUNT, clientLaunchId: "never-launched" })
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : exit).toMatchObject({
      reason: "job_not_found",
      message: "No launch job with this clientLaunchId on this account"
    })
    expect(statements.map(tablesOf)).toEqual(["launch_ledger"])
    // The row decides which service runs: with no row, none does.
    expect(otherPathsSpans(spans, undefined)).toEqual([])
  })

  it("another account's id is job_not_found after one launch_ledger statement", async () => {
    const row = await admitted("headless", "solana")
    const { exit, statements } = await readJob({ accountId: `${ACCOUNT}-other`, clientLaunchId: row.clientLaunchId })
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.reason : exit).toBe("job_not_found")
    expect(statements.map(tablesOf)).toEqual(["launch_ledger"])
  })

  it("a headless row (Solana confirmed, Hood failed) is answered from the one launch_ledger statement", async () => {
    const solana = await admitted("headless", "solana")
    await run(
      Effect.flatMap(LaunchLedger, (l) =>
        Effect.zipRight(l.sent(solana, { mint: "MintJobRead1111111111111111111111111111111" }), l.confirm(solana, { success: true }, { signature: "sig-jobread" }))
      )
    )
    const hood = await admitted("headless", "hood")
    await run(Effect.flatMap(LaunchLedger, (l) => l.fail(hood, "launch_failed")))
    for (const [row, status] of [[solana, "confirmed"], [hood, "failed"]] as const) {
      const { exit, statements, spans } = await readJob(row)
      expect(Exit.isSuccess(exit) ? exit.value : exit).toMatchObject({ clientLaunchId: row.clientLaunchId, chain: row === solana ? "solana" : "hood", status })
      expect(statements.map(tablesOf)).toEqual(["launch_ledger"])
      expect(spans).toContain("HeadlessLaunch.job")
      expect(otherPathsSpans(spans, "headless")).toEqual([])
    }
  })

  it("a self-signed row reads launch_ledger once, then its stored build", async () => {
    for (const chain of ["solana", "hood"] as const) {
      const row = await admitted("self", chain, "linked")
      const { exit, statements, spans } = await readJob(row)
      expect(Exit.isSuccess(exit) ? exit.value : exit).toMatchObject({ clientLaunchId: row.clientLaunchId, chain, status: "submitted" })
      expect(statements.map(tablesOf)).toEqual(["launch_ledger", "self_launch_builds"])
      expect(otherPathsSpans(spans, "self")).toEqual([])
    }
  })

  it("an atomic row reads launch_ledger once, then its newest bundle", async () => {
    const row = await admitted("atomic", "solana")
    const { exit, statements, spans } = await readJob(row)
    expect(Exit.isSuccess(exit) ? exit.value : exit).toMatchObject({ clientLaunchId: row.clientLaunchId, chain: "solana", status: "submitted" })
    expect(statements.map(tablesOf)).toEqual(["launch_ledger", "atomic_bundles"])
    expect(spans).toContain("AtomicLaunch.job")
    expect(otherPathsSpans(spans, "atomic")).toEqual([])
  })
})
