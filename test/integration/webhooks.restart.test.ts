/**
 * The delivery worker killed mid-delivery (SIGKILL) and started again: nothing is lost, and any
 * event sent twice carries the same `x-svc-delivery` (and body `id` and `data`).
 *
 * The worker runs in a child process (`test/support/webhookWorkerChild.ts`) against
 * the same database this process prepared: an embedded PGlite data directory, and the run's
 * real PostgreSQL server when there is one. The receiver here answers the first four requests
 * 200 and leaves every later one hanging; once four sends hang in flight the child is killed.
 * A second child then finds the four hung rows due again when their lease ends, resends them,
 * and sends the rows never claimed; this time the receiver answers everything.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Context, Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { migrations } from "../../src/db/migrations/index.js"
import webhooksMigration from "../../src/db/migrations/0004_webhooks.js"
import { enqueueEvent } from "../../src/services/webhooks/Outbox.js"
import { resolveMasterKey } from "../../src/services/webhooks/SecretBox.js"
import { verifySignature } from "../../src/services/webhooks/Signature.js"
import { type Receiver, startReceiver } from "../support/webhookReceiver.js"
import * as WebhookService from "../../src/services/webhooks/WebhookService.js"
import { freshPostgresDatabase, noPostgresReason, postgresUrl } from "../support/servers.js"
import { eventually } from "../support/eventually.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const childScript = path.join(root, "test/support/webhookWorkerChild.ts")

const EVENTS = 12
const LEASE_MS = 6_000
const childConfig = { leaseMs: LEASE_MS, requestTimeoutMs: 2_000, batchSize: 8, concurrency: 4 }

const children: ChildProcess[] = []
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
  for (const c of cleanups.splice(0).reverse()) await c()
})

const startChild = async (config: Record<string, unknown>) => {
  const child = spawn(process.execPath, ["--import", "tsx", childScript, JSON.stringify(config)], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  let output = ""
  child.stderr!.on("data", (c: Buffer) => (output += c.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker child not ready:\n${output}`)), 60_000)
    createInterface({ input: child.stdout! }).on("line", (line) => {
      output += line + "\n"
      if (line === "READY") {
        clearTimeout(timer)
        resolve()
      }
    })
    child.on("exit", () => reject(new Error(`worker child exited before ready:\n${output}`)))
  })
  return { child, exited, output: () => output }
}

const migrated = (options: Database.DatabaseOptions) =>
  Layer.effectDiscard(Database.runMigrations({ ...migrations, "0004_webhooks": webhooksMigration })).pipe(
    Layer.provideMerge(Database.layer(options))
  )

interface Row {
  id: string
  status: string
  attempts: number
}

const restartSuite = (database: () => Promise<{ options: Database.DatabaseOptions; dataDir: string; child: Record<string, unknown>; strict: boolean }>) => {
  it("resumes after SIGKILL mid-delivery: nothing lost, duplicates carry the same x-svc-delivery", async () => {
    const { options, dataDir, child: childDb, strict } = await database()
    const masterKey = await Effect.runPromise(resolveMasterKey({ configured: childDb.masterKeyHex as string | undefined, dataDir }))

    // The receiver: 200 for the first four requests, then hang until told otherwise.
    let answerAll = false
    const answered = new Set<string>()
    const receiver: Receiver = await startReceiver((req, i) => {
      if (i < 4 || answerAll) {
        answered.add(String(req.headers["x-svc-delivery"]))
        return 200
      }
      return "hang"
    })
    cleanups.push(() => receiver.close())

    // Prepare: one endpoint, twelve events; then close the database for the child.
    const prepared = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(WebhookService.layer({ masterKey, allowLoopbackForTests: true }).pipe(Layer.provideMerge(migrated(options))))
          const service = Context.get(context, WebhookService.WebhookService)
          const ep = yield* service.create({ accountId: "acct_restart", testAccount: true }, { url: `${receiver.url}/restart`, events: ["transfer.executed"] })
          const ids: string[] = []
          for (let i = 0; i < EVENTS; i++) {
            const e = yield* Effect.provide(enqueueEvent("acct_restart", "transfer.executed", { seq: i, amountRaw: `${i}000` }), context)
            ids.push(e.eventId)
          }
          return { ep, ids }
        })
      )
    )

    // First worker: killed while four sends hang.
    const first = await startChild({ dataDir, ...childDb, ...childConfig })
    await eventually(() => receiver.requests.length >= 8, { what: "four delivered and four in flight", deadlineMs: 30_000, intervalMs: 10 })
    first.child.kill("SIGKILL")
    expect((await first.exited).signal).toBe("SIGKILL")
    const inFlightAtKill = receiver.requests.slice(4).map((r) => String(r.headers["x-svc-delivery"]))
    expect(inFlightAtKill.length).toBeGreaterThanOrEqual(4)
    const deliveredBeforeKill = [...answered]
    expect(deliveredBeforeKill).toHaveLength(4)

    // Second worker: everything answered now.
    answerAll = true
    const requestsBefore = receiver.requests.length
    const second = await startChild({ dataDir, ...childDb, ...childConfig })
    await eventually(() => prepared.ids.every((id) => answered.has(id)), { what: "every event answered 2xx", deadlineMs: LEASE_MS + 30_000, intervalMs: 10 })
    second.child.kill("SIGTERM")
    await second.exited

    // Every request: a known id, a valid signature, the body's id equal to x-svc-delivery.
    const byId = new Map<string, Array<{ data: unknown; createdAt: string }>>()
    for (const req of receiver.requests) {
      const id = String(req.headers["x-svc-delivery"])
      expect(prepared.ids).toContain(id)
      const body = JSON.parse(req.body.toString("utf8"))
      expect(body.id).toBe(id)
      const t = Number(/^t=(\d+),/.exec(String(req.headers["x-svc-signature"]))![1])
      expect(verifySignature(prepared.ep.secret, String(req.headers["x-svc-signature"]), req.body, t).ok).toBe(true)
      byId.set(id, [...(byId.get(id) ?? []), { data: body.data, createdAt: body.createdAt }])
    }
    // Duplicates are the same event: same id (by construction of byId) and the same data.
    for (const [id, sends] of byId) {
      const seq = prepared.ids.indexOf(id)
      for (const s of sends) expect(s.data).toEqual({ seq, amountRaw: `${seq}000` })
    }
    // The sends in flight at the kill were sent again after the restart with the same id.
    const afterRestart = receiver.requests.slice(requestsBefore).map((r) => String(r.headers["x-svc-delivery"]))
    for (const id of inFlightAtKill) expect(afterRestart).toContain(id)

    // The database agrees: all delivered; the interrupted ones took two sends.
    const rows = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(migrated(options))
          const sql = Context.get(context, SqlClient.SqlClient)
          return yield* sql<Row>`SELECT id, status, attempts FROM webhook_deliveries ORDER BY id`
        })
      )
    )
    expect(rows).toHaveLength(EVENTS)
    for (const r of rows) expect(r.status).toBe("delivered")
    for (const id of inFlightAtKill) expect(rows.find((r) => r.id === id)?.attempts).toBe(2)
    if (strict) {
      // What the first worker recorded before the kill survived it: those four were not sent again.
      for (const id of deliveredBeforeKill) {
        expect(byId.get(id)).toHaveLength(1)
        expect(rows.find((r) => r.id === id)?.attempts).toBe(1)
      }
      expect(receiver.requests).toHaveLength(EVENTS + inFlightAtKill.length)
    }
  }, 120_000)
}

describe("webhook delivery across a kill, embedded PGlite data directory", () => {
  restartSuite(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-webhooks-"))
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    return { options: { url: undefined, dataDir }, dataDir, child: {}, strict: true }
  })
})

const serverUrl = postgresUrl()

describe.skipIf(serverUrl === undefined)(
  `webhook delivery across a kill, real PostgreSQL server${serverUrl === undefined ? ` (${noPostgresReason})` : ""}`,
  () => {
    restartSuite(async () => {
      const url = await freshPostgresDatabase(serverUrl!)
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-webhooks-"))
      cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }))
      return { options: { url, dataDir: undefined }, dataDir, child: { databaseUrl: url, masterKeyHex: "ab".repeat(32) }, strict: true }
    })
  }
)
