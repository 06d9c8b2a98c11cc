/**
 * Saved strategies (spec 3.6, 4.5, 7, 8) through the route module over real HTTP (uWS), on PGlite with
 * migration 0008 and the real replay engine over chDB for the automatic backtest.
 *
 *   save ──▶ draft ──(backtest done)──▶ backtested        "backtest moves draft to backtested"
 *   backtested ──(new version)──▶ draft ──▶ backtested    "a new version is a draft until its backtest"
 *   draft | backtested ──(owner)──▶ retired               "retire; paper and live never"
 *   retired ──▶ anything: refused                          "retire; paper and live never"
 *   older version's run finishing late: no status change   "a late run of an older version changes no status"
 *   failed backtest: stays draft                           "a failed backtest leaves draft"
 *   running at shutdown: failed (interrupted) on start     "runs left running are failed at start"
 */
import { ManualClock } from "../support/webhookReceiver.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Deferred, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import type { Reply } from "../../api/Http.js"
import { strategyRoutes } from "../../api/data/strategy/StrategyRoutes.js"
import * as Database from "../../src/db/Database.js"
import type { ReplayRequest } from "../../src/services/strategy/Definition.js"
import type { ReplayResult } from "../../src/services/strategy/Engine.js"
import { defaultFees, pricingFor, ReplayError, runReplay } from "../../src/services/strategy/Replay.js"
import { make as makeResearch } from "../../src/services/strategy/Research.js"
import { mountRoutes, requestRoute } from "../support/httpRoutes.js"
import { make as makeStrategies } from "../../src/services/strategy/Strategies.js"
import { SignalHistory } from "../../src/services/strategy/SignalHistory.js"
import { eventually } from "../support/eventually.js"
import { checkAnswersInThisFile, withContract } from "../support/contractRoutes.js"

const quiet = <A, E>(e: Effect.Effect<A, E>) => e.pipe(Logger.withMinimumLogLevel(LogLevel.None))
let dataDir = ""
let scope: Scope.CloseableScope
let ctx: Context.Context<SqlClient.SqlClient | ClickHouse | SignalHistory>

const SOL = 1_000_000_000n
const MIN = 60_000
const DAY = 86_400_000
const chTs = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "")
let seq = 0
const trade = (mint: string, atMs: number, quote: bigint, tokens: bigint, V: bigint, X: bigint) => {
  seq++
  return {
    id: `solana:s${seq}:0`, chain: "solana", mint, venue: "curve", side: "buy", trader: "w1",
    amount_in_raw: quote, amount_out_raw: tokens, fee_raw: 0n, refund_raw: 0n, quote_consumed_raw: quote,
    quote_reserve_raw: V, token_reserve_raw: X, real_quote_raw: 0n, crosses_graduation: false,
    position: `s:${String(100_000 + seq).padStart(20, "0")}:000000:0000`, ts: chTs(atMs), signature: `sig${seq}`, version: 1, retracted: 0
  }
}
const signal = (id: string, mint: string, atMs: number) => ({
  id, pattern: "large_move", chain: "solana", asset: mint, symbol: null, direction: "in", wallets: ["w1"], wallet_ids: [], groups: [],
  wallet_groups: [[]], size_usd: "1500", mcap_usd: "50000", age_minutes: 30, venue: "svc-curve", confidence: 80,
  quality: "high", ts: chTs(atMs), position: `s:${String(atMs).padStart(20, "0")}`, details: "{}"
})

const definition = {
  chain: "solana",
  entry: { source: "pattern", pattern: "large_move" },
  exit: { take_profit_pct: 50, stop_loss_pct: 20 },
  sizing: { usd_per_trade: 10, max_concurrent: 2 }
}
const settings = { fees: defaultFees, pricing: pricingFor({ solana: 100_000_000n, hood: 3_000_000_000n }) }
const realBacktest = (request: ReplayRequest) => Effect.provide(runReplay(request, settings), ctx)

// Every answer is checked against the document of the mounted routes (issue 32).
checkAnswersInThisFile()

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-strategies-"))
  scope = await Effect.runPromise(Scope.make())
  const ch = ClickHouse.layerChdb({ dataDir })
  const layer = Layer.mergeAll(Database.layerTest, ch, Layer.provide(SignalHistory.layerClickHouse, ch))
  ctx = await Effect.runPromise(quiet(Layer.buildWithScope(layer, scope)))
  // Five tokens two days ago, each: signal, entry trade, a trade at 2x (take profit), the fill trade.
  const now = Date.now()
  const X = 10n ** 15n
  const start = now - 2 * DAY
  const rows = [trade("OLD", now - 20 * DAY, SOL, 10n ** 14n, 30n * SOL, X)]
  const sigs: Array<Record<string, unknown>> = []
  for (let i = 0; i < 5; i++) {
    const at = start + i * 60 * MIN
    sigs.push(signal(`p${i}`, `P${i}`, at))
    rows.push(trade(`P${i}`, at + MIN, 3n * SOL, 10n ** 14n, 30n * SOL, X))
    rows.push(trade(`P${i}`, at + 2 * MIN, 6n * SOL, 10n ** 14n, 60n * SOL, X))
    rows.push(trade(`P${i}`, at + 3 * MIN, 6n * SOL, 10n ** 14n, 60n * SOL, X))
  }
  await Effect.runPromise(
    Effect.provide(Effect.flatMap(ClickHouse, (c) => Effect.zipRight(c.insert("trades", rows), c.insert("signals", sigs))), ctx)
  )
}, 120_000)
afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dataDir, { recursive: true, force: true })
})

const callers: Record<string, { accountId: string; plan: "free" | "pro" | "max" }> = {
  a: { accountId: "acct_a", plan: "max" },
  b: { accountId: "acct_b", plan: "max" },
  q: { accountId: "acct_q", plan: "max" },
  pro: { accountId: "acct_p", plan: "pro" }
}

/** Builds a strategies service in the shared scope and its routes. */
const setup = async (
  runBacktest: (r: ReplayRequest) => Effect.Effect<ReplayResult, ReplayError> = realBacktest,
  s: Scope.Scope = scope,
  limits: { backtestTimeoutMs?: number; staleGraceMs?: number } = {},
  /** The clock the service starts with (default the real one); its start-up sweep reads it. */
  clock?: ManualClock
) => {
  const made = quiet(Effect.provide(makeStrategies({ runBacktest, ...limits }), Context.add(ctx, Scope.Scope, s)))
  const strategies = await Effect.runPromise(clock === undefined ? made : Effect.withClock(made, clock))
  const routes = strategyRoutes({
    strategies,
    research: makeResearch({ clickhouse: Context.get(ctx, ClickHouse) }),
    authenticate: (req) => {
      const who = callers[(req.headers.authorization ?? "").replace("Bearer ", "")]
      return who === undefined ? Effect.fail({ status: 401, body: JSON.stringify({ error: "invalid api key" }) } satisfies Reply) : Effect.succeed(who)
    }
  })
  const url = await Effect.runPromise(mountRoutes(withContract(routes), "strategies-test").pipe(Scope.extend(s)))
  const byOp = (op: string) => routes.find((r) => r.operationId === op)!
  const call = async (op: string, token: string, opts: { params?: ReadonlyArray<string>; query?: string; body?: unknown } = {}) => {
    const reply = await requestRoute(url, byOp(op), { ...opts, headers: { authorization: `Bearer ${token}` } })
    return { status: reply.status, body: JSON.parse(reply.body) as any, headers: reply.headers }
  }
  const idle = () => Effect.runPromise(strategies.idle)
  return { strategies, call, idle }
}

const count = (table: string) =>
  Effect.runPromise(Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`), ctx)).then(
    (r) => r[0]!.n
  )

describe("strategies", () => {
  it("backtest moves draft to backtested; a new version is a draft until its backtest; runs, trades, comparison", async () => {
    const { call, idle } = await setup()
    const created = await call("createStrategy", "a", { body: { name: "  momentum  ", definition } })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ name: "momentum", status: "draft", current_version: 1, verdict: null })
    expect(created.body.run).toMatchObject({ status: "running", version: 1, kind: "backtest" })
    expect(Date.parse(created.body.run.to) - Date.parse(created.body.run.from)).toBe(14 * DAY)
    const id = created.body.id as string
    await idle()
    const got = await call("getStrategy", "a", { params: [id] })
    expect(got.body).toMatchObject({ status: "backtested", verdict: "pass", current_version: 1 })
    expect(got.body.run).toMatchObject({ status: "done", verdict: "pass", trade_count: 5 })
    expect(got.body.run.result.trade_count).toBe(5)
    expect(got.body.run.result.trades).toBeUndefined()
    expect(got.body.versions).toEqual([{ version: 1, definition, created_at: expect.any(String) }])

    const trades = await call("strategyTrades", "a", { params: [id], query: "limit=2&offset=1" })
    expect(trades.body.run_id).toBe(got.body.run.id)
    expect(trades.body.trades.map((t: any) => [t.n, t.asset, t.close_reason])).toEqual([[2, "P1", "take_profit"], [3, "P2", "take_profit"]])
    const all = await call("listStrategyTrades", "a", { query: `run_id=${got.body.run.id}` })
    expect(all.body.trades).toHaveLength(5)
    expect(all.body.trades[0].pnl_usd).toBe(got.body.run.result.per_token.find((t: any) => t.asset === "P0").pnl_usd)

    // Version 2: draft again, then backtested; version 1 unchanged.
    const v2def = { ...definition, exit: { take_profit_pct: 500, max_hold_hours: 1 } }
    const v2 = await call("addStrategyVersion", "a", { params: [id], body: { definition: v2def } })
    expect(v2.status).toBe(201)
    expect(v2.body).toMatchObject({ status: "draft", current_version: 2, verdict: null })
    await idle()
    const after = await call("getStrategy", "a", { params: [id] })
    expect(after.body.status).toBe("backtested")
    expect(after.body.versions.map((v: any) => [v.version, v.definition])).toEqual([[1, definition], [2, v2def]])
    const old = await call("getStrategy", "a", { params: [id], query: "version=1" })
    expect(old.body.run.id).toBe(got.body.run.id)

    const runs = await call("listStrategyRuns", "a", { query: `strategy_id=${id}` })
    expect(runs.body.runs.map((r: any) => [r.version, r.status])).toEqual([[2, "done"], [1, "done"]])
    const cmp = await call("strategyComparison", "a", { params: [id] })
    expect(cmp.body.runs.map((r: any) => r.version)).toEqual([1, 2])
    expect(cmp.body.runs[0].pnl_vs_first_usd).toBe("0.000000")
    const pnl = (s: string) => BigInt(s.replace(".", ""))
    const diff = pnl(cmp.body.runs[1].pnl_usd) - pnl(cmp.body.runs[0].pnl_usd)
    expect(pnl(cmp.body.runs[1].pnl_vs_first_usd)).toBe(diff)
    expect(cmp.body.best_pnl_run_id).toBe(diff > 0n ? cmp.body.runs[1].run_id : cmp.body.runs[0].run_id)
    const named = await call("strategyComparison", "a", { params: [id], query: `runs=${got.body.run.id}` })
    expect(named.body.runs.map((r: any) => r.run_id)).toEqual([got.body.run.id])
    const list = await call("listStrategies", "a", { query: "status=backtested" })
    expect(list.body.strategies.map((s: any) => s.id)).toContain(id)
  }, 60_000)

  it("retire; paper and live never; retired is final", async () => {
    const { call, idle } = await setup()
    const id = (await call("createStrategy", "a", { body: { name: "r", definition } })).body.id as string
    await idle()
    for (const status of ["paper", "live"]) {
      const r = await call("setStrategyStatus", "a", { params: [id], body: { status } })
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "status", message: `status: a strategy can never be set to ${status}` })
    }
    for (const status of ["draft", "backtested", "bogus", 7]) {
      expect((await call("setStrategyStatus", "a", { params: [id], body: { status } })).status).toBe(400)
    }
    expect((await call("setStrategyStatus", "a", { params: [id], body: { status: "retired", extra: 1 } })).body.error.field).toBe("extra")
    expect((await call("getStrategy", "a", { params: [id] })).body.status).toBe("backtested")
    const retired = await call("setStrategyStatus", "a", { params: [id], body: { status: "retired" } })
    expect(retired.status).toBe(200)
    expect(retired.body).toMatchObject({ status: "retired", retired_at: expect.any(String) })
    const again = await call("setStrategyStatus", "a", { params: [id], body: { status: "retired" } })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatchObject({ code: "VALIDATION_FAILED", reason: "retired" })
    expect((await call("setStrategyStatus", "a", { params: [id], body: { status: "live" } })).status).toBe(400)
    const versions = await count("strategy_versions")
    const v = await call("addStrategyVersion", "a", { params: [id], body: { definition } })
    expect(v.status).toBe(409)
    expect(await count("strategy_versions")).toBe(versions)
    expect((await call("getStrategy", "a", { params: [id] })).body.status).toBe("retired")
  }, 60_000)

  it("another account's ids answer 404 with a plain body, like unknown ones; Pro is 403; no key is 401", async () => {
    const { call, idle } = await setup()
    const mine = (await call("createStrategy", "a", { body: { name: "mine", definition } })).body
    await idle()
    const runId = (await call("getStrategy", "a", { params: [mine.id] })).body.run.id as string
    const foreign = [
      await call("getStrategy", "b", { params: [mine.id] }),
      await call("strategyTrades", "b", { params: [mine.id] }),
      await call("strategyComparison", "b", { params: [mine.id] }),
      await call("addStrategyVersion", "b", { params: [mine.id], body: { definition } }),
      await call("setStrategyStatus", "b", { params: [mine.id], body: { status: "retired" } }),
      await call("listStrategyRuns", "b", { query: `strategy_id=${mine.id}` }),
      await call("listStrategyTrades", "b", { query: `run_id=${runId}` }),
      await call("listStrategyTrades", "b", { query: `strategy_id=${mine.id}` }),
      await call("getStrategy", "a", { params: ["str_unknown"] }),
      await call("strategyComparison", "a", { params: [mine.id], query: "runs=run_not_mine" })
    ]
    for (const r of foreign) expect([r.status, r.body]).toEqual([404, { error: "not found" }])
    expect((await call("getStrategy", "a", { params: [mine.id] })).body.status).toBe("backtested")
    expect((await call("listStrategies", "b")).body.strategies.map((s: any) => s.id)).not.toContain(mine.id)
    expect((await call("listStrategyTrades", "b")).body.trades.every((t: any) => t.run_id !== runId)).toBe(true)
    const pro = await call("listStrategies", "pro")
    expect([pro.status, pro.body]).toEqual([403, { error: "requires Max" }])
    expect((await call("researchEdges", "pro")).status).toBe(403)
    const none = await call("listStrategies", "nobody")
    expect([none.status, none.body]).toEqual([401, { error: "invalid api key" }])
  }, 60_000)

  it("20 saves a day: the 21st is 429 with quota and used and records nothing; bad bodies are not counted", async () => {
    const instant = () => Effect.fail(new ReplayError({ reason: "Unavailable", message: "not needed here" }))
    const { call, idle } = await setup(instant)
    const bad = await call("createStrategy", "q", { body: { name: "x", definition: { ...definition, exit: { trailing: { arm_multiple: 2 } } } } })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "definition.exit.trailing.drop_pct", message: "definition.exit.trailing.drop_pct: is required" })
    expect((await call("createStrategy", "q", { body: { name: "", definition } })).body.error.field).toBe("name")
    expect((await call("createStrategy", "q", { body: { name: "x", definition, color: "red" } })).body.error.field).toBe("color")
    expect((await call("createStrategy", "q", { body: [1] })).status).toBe(400)
    const first = await call("createStrategy", "q", { body: { name: "s0", definition } })
    expect(first.status).toBe(201)
    for (let i = 1; i < 19; i++) expect((await call("createStrategy", "q", { body: { name: `s${i}`, definition } })).status).toBe(201)
    // The 20th save is a version.
    expect((await call("addStrategyVersion", "q", { params: [first.body.id], body: { definition } })).status).toBe(201)
    const [strategies, versions, runs] = [await count("strategies"), await count("strategy_versions"), await count("strategy_runs")]
    const refused = await call("createStrategy", "q", { body: { name: "s20", definition } })
    expect(refused.status).toBe(429)
    expect(refused.body.error).toMatchObject({ code: "RATE_LIMITED", quota: 20, used: 20 })
    expect(refused.headers.some(([k]) => k === "retry-after")).toBe(true)
    const refusedVersion = await call("addStrategyVersion", "q", { params: [first.body.id], body: { definition } })
    expect(refusedVersion.status).toBe(429)
    expect([await count("strategies"), await count("strategy_versions"), await count("strategy_runs")]).toEqual([strategies, versions, runs])
    // Another account's quota is its own.
    expect((await call("createStrategy", "b", { body: { name: "b", definition } })).status).toBe(201)
    await idle()
    // A failed backtest leaves draft, with the run failed and its error.
    const s = await call("getStrategy", "q", { params: [first.body.id] })
    expect(s.body.status).toBe("draft")
    expect(s.body.run).toMatchObject({ status: "failed", error: "replay_failed: not needed here" })
  }, 60_000)

  it("a late run of an older version changes no status", async () => {
    // Each backtest waits on its own gate, keyed by the version's take-profit (v1 50%, v2 60%).
    const gates = new Map<string, Deferred.Deferred<void>>()
    const gate = (key: string) => {
      let d = gates.get(key)
      if (d === undefined) {
        d = Effect.runSync(Deferred.make<void>())
        gates.set(key, d)
      }
      return d
    }
    const gated = (r: ReplayRequest) =>
      Effect.zipRight(Deferred.await(gate(String(r.definition.exit.take_profit_pct))), realBacktest(r))
    const { call, idle } = await setup(gated)
    const id = (await call("createStrategy", "b", { body: { name: "late", definition } })).body.id as string
    await call("addStrategyVersion", "b", { params: [id], body: { definition: { ...definition, exit: { take_profit_pct: 60 } } } })
    // Version 1's backtest finishes after version 2 was saved: its run is done, the strategy stays draft.
    await Effect.runPromise(Deferred.succeed(gate("5000"), undefined))
    const v1Done = async () => (await call("getStrategy", "b", { params: [id], query: "version=1" })).body.run.status === "done"
    await eventually(v1Done, { what: "version 1's backtest to finish", deadlineMs: 5_000, intervalMs: 10 })
    expect(await v1Done()).toBe(true)
    const mid = await call("getStrategy", "b", { params: [id] })
    expect(mid.body).toMatchObject({ status: "draft", current_version: 2, verdict: null })
    expect(mid.body.run.status).toBe("running")
    await Effect.runPromise(Deferred.succeed(gate("6000"), undefined))
    await idle()
    expect((await call("getStrategy", "b", { params: [id] })).body).toMatchObject({ status: "backtested", current_version: 2 })
  }, 60_000)

  it("runs left running are failed at start, once older than the time limit, never a live one", async () => {
    const inner = await Effect.runPromise(Scope.make())
    const { call } = await setup(() => Effect.never, inner)
    const id = (await call("createStrategy", "b", { body: { name: "stuck", definition } })).body.id as string
    await Effect.runPromise(Scope.close(inner, Exit.void))
    // Another process starting with the default limit (10 min + 60 s): the run could still be live.
    const { call: fresh } = await setup()
    expect((await fresh("getStrategy", "b", { params: [id] })).body.run.status).toBe("running")
    // Past the limit and the grace (a process starting a minute later): failed as interrupted.
    const { call: later } = await setup(realBacktest, scope, { backtestTimeoutMs: 10, staleGraceMs: 10 }, new ManualClock(Date.now() + 60_000))
    const s = await later("getStrategy", "b", { params: [id] })
    expect(s.body.status).toBe("draft")
    expect(s.body.run).toMatchObject({ status: "failed", error: expect.stringContaining("interrupted") })
  }, 60_000)

  it("a backtest stops at its time limit: failed timed_out, still draft", async () => {
    const { call, idle } = await setup(() => Effect.never, scope, { backtestTimeoutMs: 50 })
    const id = (await call("createStrategy", "b", { body: { name: "slow", definition } })).body.id as string
    await idle()
    const s = await call("getStrategy", "b", { params: [id] })
    expect(s.body.status).toBe("draft")
    expect(s.body.run).toMatchObject({ status: "failed", error: expect.stringContaining("timed_out") })
  }, 60_000)
})

