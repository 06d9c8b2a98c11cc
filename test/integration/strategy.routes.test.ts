/**
 * The strategy-lab routes over real HTTP (uWS) with the real job runner: status codes and refusal
 * shapes (202 {job_id}, 400 `<path>: <message>`, 403 for non-Max, 404 for another account's
 * job, 409 with the running job_id, 429 with quota and used), and the chart as well-formed SVG.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import type { Request } from "../../api/Http.js"
import type { RouteDef } from "../../api/Router.js"
import { strategyLabRoutes } from "../../api/routes/StrategyLabRoutes.js"
import { apiError } from "../../src/domain/ApiError.js"
import { chartBytesMax, equityChartSvg } from "../../src/services/strategy/Chart.js"
import type { EquityPoint, ReplayResult } from "../../src/services/strategy/Engine.js"
import { make } from "../../src/services/strategy/ReplayJobs.js"
import { type HttpReply, mountRoutes, requestRoute } from "../support/httpRoutes.js"
import { eventuallyEffect } from "../support/eventually.js"

const definition = {
  chain: "solana",
  entry: { source: "pattern", pattern: "confluence" },
  exit: { take_profit_pct: 50 },
  sizing: { usd_per_trade: 10, max_concurrent: 1 }
}
const body = { definition, from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z" }

const equity: Array<EquityPoint> = Array.from({ length: 5_000 }, (_, i) => ({
  at: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(),
  t_ms: Date.UTC(2024, 0, 1) + i * 60_000,
  equity_usd: (100 + Math.sin(i / 50) * 10).toFixed(6),
  drawdown_pct: Math.abs(Math.sin(i / 70)) * 12
}))
const result = {
  from: "2024-01-01T00:00:00.000Z", to: "2024-01-02T00:00:00.000Z", trade_count: 7, verdict: "pass",
  pnl_usd: "12.500000", max_drawdown_pct: 12, equity
} as unknown as ReplayResult

const req = (method: "GET" | "POST", path: string, token: string, params: ReadonlyArray<string> = [], b?: unknown): Request => ({
  method, path, query: "", params, headers: { authorization: `Bearer ${token}` }, body: b, remoteAddress: "127.0.0.1"
})

/** Routes mounted on a real listener (per route table), and one route called over HTTP. */
const urls = new Map<RouteDef, string>()
const mount = (routes: ReadonlyArray<RouteDef>) =>
  Effect.map(mountRoutes(routes, "strategy-lab-test"), (url) => {
    for (const r of routes) urls.set(r, url)
    return routes
  })
const call = (route: RouteDef, r: Request) =>
  Effect.promise(() => requestRoute(urls.get(route)!, route, { params: r.params, query: r.query, body: r.body, headers: r.headers }))
const bodyOf = (reply: HttpReply) => JSON.parse(reply.body) as Record<string, any>

/** A small XML well-formedness check: balanced tags, quoted attributes, known entities only. */
const wellFormed = (xml: string): boolean => {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, "")
  const stack: Array<string> = []
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>/g
  let last = 0
  for (let m = tag.exec(body); m !== null; m = tag.exec(body)) {
    const text = body.slice(last, m.index)
    if (/[<>]/.test(text) || /&(?!(amp|lt|gt|quot|apos);)/.test(text)) return false
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(m[3] ?? "")) return false
    last = m.index + m[0].length
    if (m[1] === "/") {
      if (stack.pop() !== m[2]) return false
    } else if (m[4] !== "/") stack.push(m[2]!)
  }
  return stack.length === 0 && body.slice(last).trim() === "" && body.startsWith("<svg")
}

describe("strategy-lab routes", () => {
  it.scopedLive("start, poll, refuse, cancel and chart, with the spec's status codes and shapes", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const jobs = yield* make({ run: () => Effect.as(Deferred.await(gate), result) })
      const accounts: Record<string, { accountId: string; plan: "free" | "pro" | "max" }> = {
        max1: { accountId: "acct1", plan: "max" },
        max2: { accountId: "acct2", plan: "max" },
        pro: { accountId: "acct3", plan: "pro" }
      }
      const routes = yield* mount(strategyLabRoutes({
        jobs,
        authenticate: (r) => {
          const who = accounts[(r.headers.authorization ?? "").replace("Bearer ", "")]
          return who === undefined ? Effect.fail(apiError("UNAUTHORIZED", "invalid api key")) : Effect.succeed(who)
        }
      }))
      const route = (method: string, suffix: string) => routes.find((r) => r.method === method && r.path === `/v1/strategy-lab/replay${suffix}`)!
      const start = route("POST", "")
      const get = route("GET", "/{job_id}")
      const cancel = route("POST", "/{job_id}/cancel")
      const chart = route("GET", "/{job_id}/chart.svg")

      const bad = yield* call(start, req("POST", "/v1/strategy-lab/replay", "max1", [], { ...body, definition: { ...definition, exit: { trailing: { arm_multiple: 2 } } } }))
      expect(bad.status).toBe(400)
      expect(bodyOf(bad).error).toMatchObject({ code: "VALIDATION_FAILED", field: "definition.exit.trailing.drop_pct", message: "definition.exit.trailing.drop_pct: is required" })

      const pro = yield* call(start, req("POST", "/v1/strategy-lab/replay", "pro", [], body))
      expect(pro.status).toBe(403)
      expect(bodyOf(pro).error.code).toBe("TIER_REQUIRED")

      const started = yield* call(start, req("POST", "/v1/strategy-lab/replay", "max1", [], body))
      expect(started.status).toBe(202)
      const jobId = bodyOf(started).job_id as string

      const second = yield* call(start, req("POST", "/v1/strategy-lab/replay", "max1", [], body))
      expect(second.status).toBe(409)
      expect(bodyOf(second).error).toMatchObject({ code: "REPLAY_RUNNING", job_id: jobId })

      const foreign = yield* call(get, req("GET", "", "max2", [jobId]))
      expect(foreign.status).toBe(404)
      expect(bodyOf(foreign).error.code).toBe("JOB_NOT_FOUND")

      const notYet = yield* call(chart, req("GET", "", "max1", [jobId]))
      expect(notYet.status).toBe(409)

      yield* Deferred.succeed(gate, undefined)
      const polled = yield* eventuallyEffect(
        Effect.map(call(get, req("GET", "", "max1", [jobId])), (r) => (bodyOf(r).status === "done" ? bodyOf(r) : undefined)),
        { what: "the job to finish", deadlineMs: 5_000, intervalMs: 5 }
      )
      expect(polled.status).toBe("done")
      expect(polled.result.trade_count).toBe(7)

      const svg = yield* call(chart, req("GET", "", "max1", [jobId]))
      expect(svg.status).toBe(200)
      expect(svg.contentType).toBe("image/svg+xml; charset=utf-8")
      expect(wellFormed(String(svg.body))).toBe(true)
      expect(Buffer.byteLength(String(svg.body))).toBeLessThanOrEqual(chartBytesMax)

      // Cancel: a finished job stays as it was; a running one ends failed/cancelled.
      expect(bodyOf(yield* call(cancel, req("POST", "", "max1", [jobId]))).status).toBe("done")
      const never = yield* make({ run: () => Effect.never })
      const routes2 = yield* mount(strategyLabRoutes({ jobs: never, authenticate: () => Effect.succeed({ accountId: "acct1", plan: "max" as const }) }))
      const j2 = bodyOf(yield* call(routes2[0]!, req("POST", "", "x", [], body))).job_id as string
      const c2 = bodyOf(yield* call(routes2.find((r) => r.operationId === "cancelReplay")!, req("POST", "", "x", [j2])))
      expect(c2).toMatchObject({ status: "failed", error: { code: "cancelled" } })
    })
  )

  it.scopedLive("20 a day: the 21st is 429 with quota and used", () =>
    Effect.gen(function* () {
      const jobs = yield* make({ run: () => Effect.succeed(result) })
      const routes = yield* mount(strategyLabRoutes({ jobs, authenticate: () => Effect.succeed({ accountId: "acct1", plan: "max" as const }) }))
      for (let i = 0; i < 20; i++) {
        const r = yield* call(routes[0]!, req("POST", "", "x", [], body))
        expect(r.status).toBe(202)
        const id = bodyOf(r).job_id as string
        yield* eventuallyEffect(Effect.map(jobs.get("acct1", id), (j) => j.status === "done"), { what: `job ${i} to finish`, deadlineMs: 5_000, intervalMs: 1 })
      }
      const refused = yield* call(routes[0]!, req("POST", "", "x", [], body))
      expect(refused.status).toBe(429)
      expect(bodyOf(refused).error).toMatchObject({ code: "RATE_LIMITED", quota: 20, used: 20 })
      expect(refused.headers.some(([k]) => k === "retry-after")).toBe(true)
    })
  )

  it("the chart escapes text, is well-formed and bounded for any input", () => {
    const hostile = equityChartSvg({ title: `<script>alert("x")</script> & 'q'`, equity: [], maxDrawdownPct: Number.NaN, pnlUsd: "<0>" })
    expect(wellFormed(hostile)).toBe(true)
    expect(hostile).not.toContain("<script>")
    const big = equityChartSvg({ title: "big", equity: Array.from({ length: 100_000 }, (_, i) => ({ ...equity[i % equity.length]!, t_ms: i })), maxDrawdownPct: 5, pnlUsd: "1" })
    expect(wellFormed(big)).toBe(true)
    expect(Buffer.byteLength(big)).toBeLessThanOrEqual(chartBytesMax)
  })
})
