/**
 * Accounts, keys, wallets and webhooks in the started binary (`src/main.ts --quiet`, embedded
 * mode): the engine provisions the local account, prints its session token and agent key and
 * writes them to `<dataDir>/local-credentials.json` (mode 0600); the key authenticates key,
 * tier and wallet routes, the session owner routes; a bad key is 401; webhooks refuse a
 * loopback target; a restart on the same data dir keeps the same credentials. Also the operator
 * CLI's help through `npm run cli`.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, projectRoot, startEngine } from "../support/engine.js"
import { eventually } from "../support/eventually.js"

interface Credentials {
  readonly accountId: string
  readonly sessionToken: string
  readonly agentKey: string
}

let engine: Engine
let creds: Credentials

const credentialsFile = () => path.join(engine.dataDir, "local-credentials.json")
const readCredentials = (): Credentials => JSON.parse(fs.readFileSync(credentialsFile(), "utf8")) as Credentials

const call = async (base: string, method: string, p: string, o: { apiKey?: string; bearer?: string; body?: unknown } = {}) => {
  const headers: Record<string, string> = {}
  if (o.apiKey !== undefined) headers["x-api-key"] = o.apiKey
  if (o.bearer !== undefined) headers.authorization = `Bearer ${o.bearer}`
  if (o.body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(base + p, { method, headers, ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}) })
  const text = await res.text()
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as any }
}

/** The ready line is logged just after the listener opens, so it may trail `/readyz` by a moment. */
const readyLine = (e: Engine): Promise<string> =>
  eventually(() => e.output().split("\n").find((l) => l.includes('message="curvestream ready"')), {
    what: "the ready line",
    deadlineMs: 10_000,
    intervalMs: 50,
    detail: () => e.output()
  })

beforeAll(async () => {
  engine = await startEngine({ args: ["--quiet"] })
  creds = readCredentials()
}, 120_000)

afterAll(async () => {
  if (engine !== undefined) {
    await engine.stop("SIGKILL")
    engine.cleanup()
  }
})

describe("embedded accounts end to end", () => {
  it("writes local-credentials.json (0600) and prints the same session token and agent key", async () => {
    expect(creds.accountId).toMatch(/^acc_/)
    expect(creds.sessionToken).toMatch(/^svc_ses_/)
    expect(creds.agentKey).toMatch(/^svc_live_/)
    expect(fs.statSync(credentialsFile()).mode & 0o777).toBe(0o600)
    const ready = await readyLine(engine)
    expect(ready).toContain(`sessionToken=${creds.sessionToken}`)
    expect(ready).toContain(`agentKey=${creds.agentKey}`)
    expect(ready).toContain(`localAccount=${creds.accountId}`)
  })

  it("the agent key authenticates key, tier and wallet routes; the account is Max with delegated embedded wallets", async () => {
    const limits = await call(engine.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: creds.agentKey })
    expect(limits).toEqual({ status: 200, body: { success: true, keyLimits: null } })
    const tier = await call(engine.url, "GET", "/api/v1/agent/tier", { apiKey: creds.agentKey })
    expect(tier.status).toBe(200)
    expect(tier.body).toMatchObject({ success: true, tier: "max" })
    const wallets = await call(engine.url, "GET", "/api/v1/agent/wallets", { apiKey: creds.agentKey })
    expect(wallets.status).toBe(200)
    expect(wallets.body.embeddedWallets.map((w: { chain: string; delegation: string }) => [w.chain, w.delegation]).sort()).toEqual([
      ["evm", "active"],
      ["solana", "active"]
    ])
  })

  it("the session token authenticates owner routes; the local key is Write level on both chains", async () => {
    const keys = await call(engine.url, "GET", "/api/v1/agent/keys", { bearer: creds.sessionToken })
    expect(keys.status).toBe(200)
    const local = keys.body.keys.find((k: { keyPrefix: string }) => creds.agentKey.slice(9, 17) === k.keyPrefix)
    expect(local).toMatchObject({ access: "readwrite", status: "active", environment: "production", embeddedWallet: "allowed", launchChains: ["solana", "hood"] })
    const issued = await call(engine.url, "POST", "/api/v1/agent/keys", { bearer: creds.sessionToken, body: { label: "e2e" } })
    expect(issued.status).toBe(200)
    expect(issued.body.key).toMatch(/^svc_live_/)
    expect((await call(engine.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: issued.body.key })).status).toBe(200)
  })

  it("refuses a bad key, a missing credential and an agent key on an owner route with 401 UNAUTHORIZED", async () => {
    for (const r of [
      await call(engine.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: "svc_live_" + "1".repeat(52) }),
      await call(engine.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: "not-a-key" }),
      await call(engine.url, "GET", "/api/v1/agent/wallets"),
      await call(engine.url, "GET", "/api/v1/agent/keys", { apiKey: creds.agentKey }),
      await call(engine.url, "GET", "/api/v1/agent/webhooks", { apiKey: creds.agentKey })
    ]) {
      expect(r.status).toBe(401)
      expect(r.body).toMatchObject({ success: false, error: { code: "UNAUTHORIZED", retryable: false } })
    }
  })

  it("webhooks: the session lists endpoints; loopback and private targets are refused and nothing is recorded", async () => {
    const listed = await call(engine.url, "GET", "/api/v1/agent/webhooks", { bearer: creds.sessionToken })
    expect(listed).toEqual({ status: 200, body: { success: true, webhooks: [] } })
    const loopback = await call(engine.url, "POST", "/api/v1/agent/webhooks", {
      bearer: creds.sessionToken,
      body: { url: "https://127.0.0.1:8443/hook", events: ["key.access_narrowed"] }
    })
    expect(loopback.status).toBe(400)
    expect(loopback.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "url", reason: "loopback" })
    const privateTarget = await call(engine.url, "POST", "/api/v1/agent/webhooks", {
      bearer: creds.sessionToken,
      body: { url: "https://10.1.2.3/hook", events: ["key.access_narrowed"] }
    })
    expect(privateTarget.status).toBe(400)
    expect(privateTarget.body.error).toMatchObject({ code: "VALIDATION_FAILED", field: "url" })
    const unknownEvent = await call(engine.url, "POST", "/api/v1/agent/webhooks", {
      bearer: creds.sessionToken,
      body: { url: "https://10.1.2.3/hook", events: ["key.nope"] }
    })
    expect(unknownEvent.status).toBe(400)
    expect((await call(engine.url, "GET", "/api/v1/agent/webhooks", { bearer: creds.sessionToken })).body.webhooks).toEqual([])
  })

  it("describes the mounted routes in the OpenAPI document", async () => {
    const doc = await call(engine.url, "GET", "/api/v1/openapi.json")
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        "/api/v1/agent/keys",
        "/api/v1/agent/keys/self/access",
        "/api/v1/agent/tier",
        "/api/v1/admin/agent-tier",
        "/api/v1/auth/device/code",
        "/api/v1/agent/wallets",
        "/api/v1/agent/tee-wallets",
        "/api/v1/agent/webhooks"
      ])
    )
  })

  it("keeps the same credentials across a restart on the same data dir", async () => {
    expect(await engine.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    const before = fs.readFileSync(credentialsFile(), "utf8")
    const second = await startEngine({ dataDir: engine.dataDir, args: ["--quiet"] })
    try {
      expect(fs.readFileSync(credentialsFile(), "utf8")).toBe(before)
      expect(await readyLine(second)).toContain(`agentKey=${creds.agentKey}`)
      expect((await call(second.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: creds.agentKey })).status).toBe(200)
      const keys = await call(second.url, "GET", "/api/v1/agent/keys", { bearer: creds.sessionToken })
      expect(keys.status).toBe(200)
      // Nothing piled up: the local key, and the one issued above.
      expect(keys.body.keys.filter((k: { status: string }) => k.status === "active")).toHaveLength(2)
    } finally {
      expect(await second.stop("SIGTERM")).toEqual({ code: 0, signal: null })
    }
  }, 120_000)
})

describe("operator CLI", () => {
  it("npm run cli -- --help prints the commands and exits 0", async () => {
    const { stdout } = await promisify(execFile)("npm", ["run", "--silent", "cli", "--", "--help"], { cwd: projectRoot, timeout: 60_000 })
    expect(stdout).toContain("usage: npm run cli -- <command>")
    for (const command of ["create-account", "issue-session", "grant-max", "end-max", "set-plan", "enable-agent", "publish-agent", "unpublish-agent", "delegate"]) expect(stdout).toContain(command)
  })
})
