/**
 * The market-data listener over real uWS with real clients: accounts and keys on PGlite (the
 * accounts harness), signals in chDB (temp dir, the registered migrations) written by the real
 * `SignalWriter`, the in-memory hub, and a real WebSocket client (`ws`). Covers the bearer
 * refusals (plain 401 `invalid api key`, test keys included), the tape's filters, order, caps
 * and cursor, group visibility by plan, the stream's snapshot, live order, filters, pings, the
 * 9th socket refused (4029) and a slow client dropped (4013) — the stream fans out through uWS
 * pub/sub topics (api/data/SignalStream.test.ts covers the topics themselves).
 */
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Scope, Exit } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildSignal, type Pattern, type Signal } from "../../src/domain/Signal.js"
import { type RunningDataServer, serveData } from "../../api/data/DataServer.js"
import { dataRoutes } from "../../api/data/DataRoutes.js"
import { replayRunner } from "../../src/DataService.js"
import { fixedPriceSource } from "../../src/services/prices/PriceSource.js"
import { make as makeReplayJobs } from "../../src/services/strategy/ReplayJobs.js"
import { CLOSE_SLOW_CLIENT, CLOSE_TOO_MANY_STREAMS } from "../../api/data/SignalStream.js"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import * as SignalWriter from "../../clickhouse/writer/SignalWriter.js"
import type { ChainId } from "../../ingest/ChainEvent.js"
import { call, type Harness, startHarness } from "../support/accountsHarness.js"
import { SignalHub } from "../../src/services/signals/SignalHub.js"
import { seedTrackingData } from "../../src/services/tracking/Seed.js"
import { make as makeTracking } from "../../src/services/tracking/Tracking.js"
import { eventually } from "../support/eventually.js"

// `ws` is installed (a dependency of @effect/platform-node) without type declarations: the few members used here.
interface WsClient {
  on(event: "message", f: (data: Buffer) => void): void
  on(event: "ping", f: () => void): void
  on(event: "close", f: (code: number, reason: Buffer) => void): void
  on(event: "open", f: () => void): void
  on(event: "error", f: (e: Error) => void): void
  on(event: "unexpected-response", f: (req: unknown, res: { statusCode: number; on(e: "data", f: (c: Buffer) => void): void; on(e: "end", f: () => void): void }) => void): void
  close(): void
  pause(): void
  resume(): void
}
const WebSocket = createRequire(import.meta.url)("ws") as new (url: string, options: { headers: Record<string, string> }) => WsClient

const tracking = makeTracking(seedTrackingData())
let dataDir = ""
let h: Harness
let runtime: ManagedRuntime.ManagedRuntime<ClickHouse, unknown>
let scope: Scope.CloseableScope
/** The listener the tests below talk to: the one-thread server, or the one with two stream threads (`use`). */
let server: RunningDataServer
const servers = new Map<number, RunningDataServer>()
const use = (threads: number) => () => {
  server = servers.get(threads)!
}
let writer: SignalWriter.SignalWriterShape
const hub = new SignalHub({ capacity: 1_000 })
const keys: Record<"max" | "free" | "pro" | "test" | "slow" | "many", string> = { max: "", free: "", pro: "", test: "", slow: "", many: "" }

const issue = async (plan: "free" | "pro" | "max", environment: "production" | "test" = "production") => {
  const { session } = await h.newAccount({ plan })
  const r = await call(h.url, "POST", "/api/v1/agent/keys", { session, body: { environment } })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.key as string
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-data-"))
  h = await startHarness()
  for (const plan of ["max", "free", "pro"] as const) keys[plan] = await issue(plan)
  keys.test = await issue("max", "test")
  keys.slow = await issue("free")
  keys.many = await issue("pro")
  const auth = (await h.auth()).dataAuth
  runtime = ManagedRuntime.make(ClickHouse.layerChdb({ dataDir }).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error))))
  scope = await Effect.runPromise(Scope.make())
  const clickhouse = await runtime.runPromise(ClickHouse)
  writer = await runtime.runPromise(SignalWriter.make({ flushIntervalMs: 20, walletGroupsOf: (c, a) => tracking.byAddress(c, a)?.groups ?? [] }).pipe(Scope.extend(scope)))
  const jobs = await runtime.runPromise(
    makeReplayJobs({ run: replayRunner(clickhouse, fixedPriceSource({ sol: "100", eth: "3000" })) }).pipe(Scope.extend(scope))
  )
  for (const streamThreads of [1, 2]) {
    servers.set(
      streamThreads,
      await runtime.runPromise(
        serveData({
          host: "127.0.0.1",
          port: 0,
          maxBodyBytes: 64 * 1024,
          routes: dataRoutes({ auth, clickhouse, hub, tracking, jobs }),
          stream: { hub, tracking, authenticate: auth.authenticate },
          streamOptions: { pingIntervalMs: 150, maxBufferedBytes: 256 * 1024 },
          streamThreads
        }).pipe(Scope.extend(scope), Logger.withMinimumLogLevel(LogLevel.Error))
      )
    )
  }
  use(1)()
}, 120_000)

/** The stream's counters: checked at once on one thread; with stream threads, once their reports arrived. */
const statsAre = async (want: Partial<ReturnType<RunningDataServer["stream"]["stats"]>>) => {
  if (server !== servers.get(1)) {
    await eventually(() => (Object.entries(want).every(([k, v]) => server.stream.stats()[k as keyof typeof want] === v) ? true : undefined), {
      what: `stats ${JSON.stringify(want)}`,
      deadlineMs: 5_000,
      intervalMs: 10,
      detail: () => JSON.stringify(server.stream.stats())
    })
  }
  expect(server.stream.stats()).toMatchObject(want)
}

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  await runtime?.dispose()
  await h?.close()
  fs.rmSync(dataDir, { recursive: true, force: true })
})

let seq = 0
/** A second trigger id unique to each made signal; a counter, not Math.random(), so a run is deterministic. */
let triggerNonce = 0
const T = Date.UTC(2025, 0, 1)
const MIN = 60_000
const DEV = seedTrackingData().wallets
const insider = DEV.find((w) => w.id === "sol_dev7")! // grp_insiders (max)
const early = DEV.find((w) => w.id === "sol_dev0")! // grp_early_birds (public)

const sig = (o: {
  pattern?: Pattern
  chain?: ChainId
  asset?: string
  atMs?: number
  confidence?: number
  mcapMicros?: bigint | null
  createdAtMs?: number | null
  venue?: Signal["venue"]
  wallets?: ReadonlyArray<{ id: string; address: string; groups: ReadonlyArray<string> }>
  details?: Signal["details"]
}): Signal => {
  seq++
  const wallets = o.wallets ?? []
  const atMs = o.atMs ?? T + seq * MIN
  return buildSignal({
    pattern: o.pattern ?? "large_move",
    chain: o.chain ?? "solana",
    asset: o.asset ?? `Mint${seq}`,
    symbol: `S${seq}`,
    direction: "in",
    wallets: wallets.map((w) => w.address),
    walletIds: wallets.map((w) => w.id),
    groups: wallets.flatMap((w) => w.groups),
    sizeUsdMicros: 1_500_000_000n,
    mcapUsdMicros: o.mcapMicros === undefined ? 50_000_000_000n : o.mcapMicros,
    createdAtMs: o.createdAtMs === undefined ? atMs - 30 * MIN : o.createdAtMs,
    venue: o.venue === undefined ? "svc-curve" : o.venue,
    confidence: o.confidence ?? 80,
    atMs,
    position: `s:${String(seq).padStart(20, "0")}`,
    triggerIds: [`e${seq}`, `n${++triggerNonce}`],
    details: o.details ?? { n: seq }
  })
}

const get = async (query: string, key: string | null = keys.max) => {
  const res = await fetch(`${server.url}/v1/signals${query}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } })
  const text = await res.text()
  return { status: res.status, body: JSON.parse(text) as any }
}

const ids = (body: { signals: ReadonlyArray<Signal> }) => body.signals.map((s) => s.id)

describe.each([1, 2])("market-data listener on %i stream thread(s): auth", (threads) => {
  beforeAll(use(threads))
    it("refuses missing, malformed, unknown and TEST keys with the plain 401, on the tape and on the stream", async () => {
      for (const key of [null, "nonsense", "svc_live_" + "1".repeat(52), keys.test]) {
        const r = await get("", key)
        expect([r.status, r.body], String(key)).toEqual([401, { error: "invalid api key" }])
      }
      const refused = await new Promise<{ status: number; body: string }>((resolve) => {
        const ws = new WebSocket(`${server.url.replace("http", "ws")}/v1/signals/stream`, { headers: { authorization: `Bearer ${keys.test}` } })
        ws.on("error", () => undefined)
        ws.on("unexpected-response", (_req, res) => {
          let body = ""
          res.on("data", (c) => (body += c.toString()))
          res.on("end", () => resolve({ status: res.statusCode, body }))
        })
      })
      expect(refused).toEqual({ status: 401, body: JSON.stringify({ error: "invalid api key" }) })
      expect((await get("", keys.free)).status).toBe(200)
    })
})

describe.each([1, 2])("market-data listener on %i stream thread(s): strategy lab behind the data bearer", (threads) => {
  beforeAll(use(threads))
    const definition = { chain: "solana", entry: { source: "pattern", pattern: "confluence" }, exit: { take_profit_pct: 50 }, sizing: { usd_per_trade: 10, max_concurrent: 1 } }
    const post = async (path: string, key: string, body: unknown) => {
      const res = await fetch(server.url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) })
      return { status: res.status, body: JSON.parse(await res.text()) as any }
    }
    it("Max only (plain 403 `requires Max`), a test key is 401, and a Max key runs a real replay to done", async () => {
      const body = { definition, from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z" }
      expect(await post("/v1/strategy-lab/replay", keys.free, body)).toEqual({ status: 403, body: { error: "requires Max" } })
      expect(await post("/v1/strategy-lab/replay", keys.pro, body)).toEqual({ status: 403, body: { error: "requires Max" } })
      expect(await post("/v1/strategy-lab/replay", keys.test, body)).toEqual({ status: 401, body: { error: "invalid api key" } })
      const bad = await post("/v1/strategy-lab/replay", keys.max, { ...body, definition: { ...definition, colour: "red" } })
      expect([bad.status, bad.body.error.code]).toEqual([400, "VALIDATION_FAILED"])
      const started = await post("/v1/strategy-lab/replay", keys.max, body)
      expect(started.status).toBe(202)
      let job: any
      await eventually(async () => {
        const res = await fetch(`${server.url}/v1/strategy-lab/replay/${started.body.job_id}`, { headers: { authorization: `Bearer ${keys.max}` } })
        job = JSON.parse(await res.text())
        return job.status === "done" || job.status === "failed"
      }, { what: "the replay", deadlineMs: 5_000, intervalMs: 10 })
      expect(job.status).toBe("done")
      expect(job.result.verdict).toBe("insufficient")
      const foreign = await fetch(`${server.url}/v1/strategy-lab/replay/${started.body.job_id}`, { headers: { authorization: `Bearer ${keys.free}` } })
      expect(foreign.status).toBe(403)
    })
})

describe("market-data listener: GET /v1/signals", () => {
  beforeAll(use(1))
  const stored: Array<Signal> = []
  let fresh: Signal
  beforeAll(async () => {
    stored.push(
      sig({ pattern: "confluence", asset: "AAA", confidence: 90, wallets: [early, insider] }), // 0: groups public + max
      sig({ pattern: "large_move", asset: "AAA", confidence: 50, mcapMicros: 10_000_000_000n }), // 1: $10k cap
      sig({ pattern: "large_move", asset: "BBB", confidence: 20 }), // 2: low quality
      sig({ pattern: "deployer", asset: "CCC", createdAtMs: null, venue: "dex" }), // 3: no age, dex
      sig({ pattern: "new_ticker", chain: "hood", asset: "0xabc", venue: "hood-dex" }), // 4: hood
      sig({ pattern: "dormancy", asset: "DDD", createdAtMs: T - 3 * 86_400_000, mcapMicros: null }), // 5: >24h, no cap
      sig({ pattern: "intra_book", asset: "EEE", wallets: [insider], details: { group: "grp_insiders", bought_quote_raw: "1" } }) // 6
    )
    for (let i = 0; i < 60; i++) stored.push(sig({ pattern: "kol_mention", asset: `K${i}` }))
    await runtime.runPromise(writer.recordAndAwait(stored))
    // Emitted but not flushed yet: only the hub has it.
    fresh = sig({ pattern: "distribution", asset: "FRESH" })
    hub.publish([fresh])
  })

  it("defaults: solana, curated, newest first, 50 a page, with the hub's unflushed signal on top", async () => {
    const r = await get("")
    expect(r.status).toBe(200)
    expect(r.body.signals).toHaveLength(50)
    expect(r.body.signals[0].id).toBe(fresh.id)
    const curatedSolana = [fresh, ...stored.filter((s) => s.chain === "solana" && s.quality !== "low").reverse()]
    expect(ids(r.body)).toEqual(curatedSolana.slice(0, 50).map((s) => s.id))
    expect(r.body.next_after).toBe(curatedSolana[49]!.id)
    const next = await get(`?after=${r.body.next_after}`)
    expect(ids(next.body)).toEqual(curatedSolana.slice(50).map((s) => s.id))
    expect(next.body.next_after).toBeNull()
  })

  it("limit at most 200, offset, order=asc", async () => {
    expect((await get("?limit=200")).body.signals.length).toBe(66) // all curated solana
    for (const bad of ["201", "0", "x"]) {
      const r = await get(`?limit=${bad}`)
      expect([r.status, r.body.error.code, r.body.error.field]).toEqual([400, "VALIDATION_FAILED", "limit"])
    }
    const asc = await get("?order=asc&limit=3&offset=1&quality=all")
    expect(ids(asc.body)).toEqual([stored[1]!.id, stored[2]!.id, stored[3]!.id])
    expect((await get("?offset=10001")).status).toBe(400)
  })

  it("filters: pattern, chain, asset, since/until, quality, mcap, age, venues, group", async () => {
    const only = async (q: string) => {
      const r = await get(q)
      expect(r.status, `${q}: ${JSON.stringify(r.body)}`).toBe(200)
      return ids(r.body)
    }
    expect(await only("?pattern=large_move&quality=all")).toEqual([stored[2]!.id, stored[1]!.id])
    expect(await only("?pattern=large_move")).toEqual([stored[1]!.id])
    expect(await only("?pattern=large_move&quality=low")).toEqual([stored[2]!.id])
    expect(await only("?pattern=confluence,deployer")).toEqual([stored[3]!.id, stored[0]!.id])
    expect(await only("?chain=hood")).toEqual([stored[4]!.id])
    expect(await only("?asset=AAA&order=asc")).toEqual([stored[0]!.id, stored[1]!.id])
    expect(await only(`?since=${new Date(stored[1]!.at_ms).toISOString()}&until=${stored[3]!.at_ms}&quality=all&order=asc`)).toEqual([
      stored[1]!.id,
      stored[2]!.id
    ])
    expect(await only("?max_mcap_usd=10000&limit=200")).toEqual([stored[1]!.id])
    expect(await only("?min_mcap_usd=10000.000001&pattern=large_move,dormancy,confluence")).toEqual([stored[0]!.id])
    expect(await only("?age=>24h")).toEqual([stored[5]!.id])
    expect(await only("?min_age_minutes=31&limit=200")).toEqual([stored[5]!.id])
    expect(await only("?venues=dex")).toEqual([stored[3]!.id])
    expect((await get("?exclude_venues=svc-curve&limit=200")).body.signals.map((s: Signal) => s.venue)).toEqual(["dex"])
    expect(await only("?group=grp_early_birds")).toEqual([stored[0]!.id])
    expect(await only("?group=grp_insiders")).toEqual([stored[6]!.id, stored[0]!.id])
    for (const [q, field] of [["?chain=eth", "chain"], ["?pattern=moon", "pattern"], ["?quality=best", "quality"], ["?age=2h", "age"], ["?venues=cex", "venues"], ["?min_mcap_usd=-1", "min_mcap_usd"], ["?since=yesterday", "since"], ["?after=sig_nope", "after"], ["?group_by=asset", "group_by"]] as const) {
      const r = await get(q)
      expect([r.status, r.body.error?.field], q).toEqual([400, field])
    }
  })

  it("hides groups, wallet ids and group details the plan may not see; a hidden group is unknown", async () => {
    const free = await get("?pattern=confluence,intra_book", keys.free)
    const byId = new Map<string, Signal>(free.body.signals.map((s: Signal) => [s.id, s]))
    expect(byId.get(stored[0]!.id)).toMatchObject({ groups: ["grp_early_birds"], wallet_ids: ["sol_dev0"], wallets: [early.address, insider.address] })
    expect(byId.get(stored[6]!.id)!.details).toEqual({ bought_quote_raw: "1" })
    const max = await get("?pattern=confluence,intra_book", keys.max)
    expect(max.body.signals.find((s: Signal) => s.id === stored[0]!.id)).toMatchObject({ groups: ["grp_early_birds", "grp_insiders"], wallet_ids: ["sol_dev0", "sol_dev7"] })
    const hidden = await get("?group=grp_insiders", keys.free)
    expect([hidden.status, hidden.body.error.field]).toEqual([400, "group"])
    expect((await get("?group=grp_whales", keys.pro)).status).toBe(200)
  })

  it("group_by=token: one entry per token, newest activity first", async () => {
    const r = await get("?group_by=token&pattern=confluence,large_move&quality=all")
    expect(r.status).toBe(200)
    expect(r.body.tokens.map((t: { asset: string; signal_count: number; patterns: Array<string> }) => [t.asset, t.signal_count, t.patterns])).toEqual([
      ["BBB", 1, ["large_move"]],
      ["AAA", 2, ["confluence", "large_move"]]
    ])
    expect(r.body.tokens[1].latest.id).toBe(stored[1]!.id)
    expect(r.body.tokens[1].max_confidence).toBe(90)
  })

  it("stores per-wallet groups beside the signal for the strategy lab", async () => {
    const rows = await runtime.runPromise(
      Effect.flatMap(ClickHouse, (ch) => ch.query<{ wallet_groups: Array<Array<string>> }>("SELECT wallet_groups FROM signals FINAL WHERE id = {id:String}", { id: stored[0]!.id }))
    )
    expect(rows[0]!.wallet_groups).toEqual([["grp_early_birds"], ["grp_insiders"]])
  })
})

/** A client that records its messages, pings and close. */
const connect = (key: string, query = "") => {
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/v1/signals/stream${query}`, { headers: { authorization: `Bearer ${key}` } })
  const messages: Array<{ type: string; signals?: Array<Signal>; signal?: Signal }> = []
  let pings = 0
  let closedWith: number | undefined
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => {
      closedWith = code
      resolve({ code, reason: reason.toString() })
    })
  )
  const opened = new Promise<void>((resolve, reject) => {
    ws.on("open", resolve)
    ws.on("error", reject)
  })
  ws.on("message", (d) => messages.push(JSON.parse(d.toString())))
  ws.on("ping", () => pings++)
  return { ws, messages, closed, opened, pings: () => pings, closedWith: () => closedWith }
}

describe.each([1, 2])("market-data listener on %i stream thread(s): /v1/signals/stream", (threads) => {
  beforeAll(use(threads))
    it("snapshot of the newest 100 (oldest first), then each new signal in order, with filters and pings", async () => {
      const before = Array.from({ length: 150 }, () => sig({ pattern: "large_move", chain: "hood", confidence: 75 }))
      hub.publish(before)
      hub.publish([sig({ pattern: "large_move", chain: "hood", confidence: 10 })]) // low: not in the curated snapshot
      const all = connect(keys.max, "?chain=hood")
      const kol = connect(keys.max, "?chain=hood&event_kind=kol_mention,deployer&quality=all")
      await Promise.all([all.opened, kol.opened])
      await eventually(() => all.messages.length >= 1 && kol.messages.length >= 1, { what: "snapshots", deadlineMs: 5_000, intervalMs: 10 })
      expect(all.messages[0]!.type).toBe("snapshot")
      expect(all.messages[0]!.signals!.map((s) => s.id)).toEqual(before.slice(50).map((s) => s.id))
      expect(kol.messages[0]!.signals!.map((s) => s.pattern).every((p) => p === "kol_mention" || p === "deployer")).toBe(true)

      const live = [
        sig({ pattern: "kol_mention", chain: "hood" }),
        sig({ pattern: "large_move", chain: "hood" }),
        sig({ pattern: "large_move", chain: "solana" }), // another chain: nobody here
        sig({ pattern: "deployer", chain: "hood", confidence: 5 }), // low: only `quality=all`
        sig({ pattern: "large_move", chain: "hood", confidence: 99 })
      ]
      for (const s of live) hub.publish([s])
      await eventually(() => all.messages.length >= 4 && kol.messages.length >= 3, { what: "live signals", deadlineMs: 5_000, intervalMs: 10 })
      expect(all.messages.slice(1).map((m) => [m.type, m.signal!.id])).toEqual([live[0], live[1], live[4]].map((s) => ["signal", s!.id]))
      expect(kol.messages.slice(1).map((m) => m.signal!.id)).toEqual([live[0]!.id, live[3]!.id])
      await eventually(() => all.pings() >= 2, { what: "two pings", deadlineMs: 5_000, intervalMs: 10 })
      all.ws.close()
      kol.ws.close()
      await Promise.all([all.closed, kol.closed])
    })

    it("refuses a bad parameter before the upgrade", async () => {
      const bad = await new Promise<number>((resolve) => {
        const ws = new WebSocket(`${server.url.replace("http", "ws")}/v1/signals/stream?event_kind=moon`, { headers: { authorization: `Bearer ${keys.max}` } })
        ws.on("error", () => undefined)
        ws.on("unexpected-response", (_req, res) => resolve(res.statusCode))
      })
      expect(bad).toBe(400)
    })

    it("8 open sockets per account: the 9th is closed with 4029; closing one makes room", async () => {
      const eight = Array.from({ length: 8 }, () => connect(keys.many))
      await Promise.all(eight.map((c) => c.opened))
      await eventually(() => eight.every((c) => c.messages.length >= 1), { what: "eight snapshots", deadlineMs: 5_000, intervalMs: 10 })
      // The server counts a socket in its own open handler: wait for its count, not the clients' (a loaded machine orders them freely).
      await eventually(() => (server.stream.stats().open === 8 ? true : undefined), {
        what: "the server to count eight",
        deadlineMs: 5_000,
        intervalMs: 10,
        detail: () => `stats ${JSON.stringify(server.stream.stats())}; clients' close codes ${JSON.stringify(eight.map((c) => c.closedWith() ?? null))}`
      })
      expect(server.stream.stats()).toMatchObject({ open: 8, topics: 1 }) // one plan, one filter: one pub/sub topic
      const ninth = connect(keys.many)
      const refused = await ninth.closed
      expect(refused).toEqual({ code: CLOSE_TOO_MANY_STREAMS, reason: "too many open streams: at most 8 per account" })
      expect(ninth.messages).toEqual([])
      // Another account is not affected.
      const other = connect(keys.pro)
      await other.opened
      await eventually(() => other.messages.length >= 1, { what: "other account's snapshot", deadlineMs: 5_000, intervalMs: 10 })
      eight[0]!.ws.close()
      await eight[0]!.closed
      const again = connect(keys.many)
      await again.opened
      await eventually(() => again.messages.length >= 1, { what: "a socket after one closed", deadlineMs: 5_000, intervalMs: 10 })
      for (const c of [...eight.slice(1), again, other]) c.ws.close()
      await Promise.all([...eight.slice(1), again, other].map((c) => c.closed))
      await statsAre({ open: 0, topics: 0 })
    })

    it("drops a client that stops reading (4013) instead of buffering without bound", async () => {
      const slow = connect(keys.slow, "?chain=hood&event_kind=dormancy")
      const healthy = connect(keys.free, "?chain=hood&event_kind=dormancy")
      await Promise.all([slow.opened, healthy.opened])
      await eventually(() => slow.messages.length >= 1 && healthy.messages.length >= 1, { what: "snapshots", deadlineMs: 5_000, intervalMs: 10 })
      slow.ws.pause()
      const droppedBefore = server.stream.stats().droppedSlow
      const filler = Array.from({ length: 200 }, (_, i) => `padding-${i}-${"x".repeat(40)}`)
      let published = 0
      while (server.stream.stats().droppedSlow === droppedBefore && published < 20_000) {
        hub.publish([sig({ pattern: "dormancy", chain: "hood", details: { filler } })])
        published++
        // Bursts of 20 (~200 KB): the healthy client reads between bursts (it shares this event loop),
        // so only the paused one falls behind; 200 at once could leave even a reader over 1 MiB.
        if (published % 20 === 0) await new Promise((r) => setTimeout(r, 5))
      }
      expect(server.stream.stats().droppedSlow).toBe(droppedBefore + 1)
      await eventually(() => (server.stream.stats().open === 1 ? true : undefined), {
        what: "the dropped socket to be closed",
        deadlineMs: 5_000,
        intervalMs: 10,
        detail: () => `stats ${JSON.stringify(server.stream.stats())}; close codes slow ${slow.closedWith() ?? null}, healthy ${healthy.closedWith() ?? null}`
      })
      expect(server.stream.stats().open).toBe(1) // the healthy socket only
      // Signals after the drop reach the healthy client only.
      const after = Array.from({ length: 5 }, () => sig({ pattern: "dormancy", chain: "hood" }))
      hub.publish(after)
      published += after.length
      await eventually(() => healthy.messages.length >= 1 + published, { what: "the healthy client's signals", deadlineMs: 20_000, intervalMs: 10 })
      expect(healthy.messages.slice(-5).map((m) => m.signal!.id)).toEqual(after.map((s) => s.id))
      slow.ws.resume()
      const closed = await slow.closed
      expect(closed.code).toBe(CLOSE_SLOW_CLIENT)
      expect(closed.reason).toContain("slow client")
      // It got a prefix of the stream, never a gap.
      const got = slow.messages.slice(1).map((m) => m.signal!.id)
      expect(got).toEqual(healthy.messages.slice(1, 1 + got.length).map((m) => m.signal!.id))
      expect(got.length).toBeLessThan(published)
      healthy.ws.close()
      await healthy.closed
    }, 60_000)
})
