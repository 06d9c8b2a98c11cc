/**
 * Device authorization over real HTTP (uWS) with PGlite: code request (transfer:bound refused),
 * approval by a signed-in session showing the exact scopes, the exchange's pending / slow-down /
 * approved / denied / expired answers, the provisioned Write-level key, provisioning that fails
 * but still issues the token, what a device token can and cannot reach, device revocation with
 * its keys; `POST /agent/enable`; embedded provisioning (`provisionLocalAccount`); and the
 * operator CLI against a fresh embedded data directory.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { provisionLocalAccount } from "../../src/services/accounts/LocalAccount.js"
import { call, type Harness, startHarness } from "../support/accountsHarness.js"
import { LevelScopes } from "../../src/services/keys/Scopes.js"

describe("device authorization", () => {
  let h: Harness
  const noDelegation = new Set<string>()
  const noWallet = new Set<string>()
  beforeAll(async () => {
    h = await startHarness({
      contract: true,
      perAccountWallets: (id) => (noDelegation.has(id) ? { delegatedChains: [] } : noWallet.has(id) ? { solanaWallets: [] } : undefined)
    })
  }, 60_000)
  afterAll(() => h?.close())

  const post = (p: string, o: Parameters<typeof call>[3]) => call(h.url, "POST", p, o)
  const requestCode = async (body: unknown = {}) => {
    const r = await post("/api/v1/auth/device/code", { body })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { deviceCode: string; userCode: string; scopes: string[]; verificationUri: string }
  }
  const approveAndExchange = async (session: string, body: unknown = {}) => {
    const code = await requestCode(body)
    expect((await post("/api/v1/auth/device/decision", { session, body: { userCode: code.userCode } })).status).toBe(200)
    const r = await post("/api/v1/auth/device/token", { body: { deviceCode: code.deviceCode } })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  }

  it("issues a device token and a Write-level key after a session approves the exact scopes", async () => {
    const { accountId, session } = await h.newAccount()
    const code = await requestCode({ clientName: "laptop agent" })
    expect(code).toMatchObject({ verificationUri: "https://example.test/device", expiresIn: 900, interval: 5, scopes: LevelScopes.readwrite, movesFunds: false })
    expect(code.userCode).toMatch(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/)

    const pending = await post("/api/v1/auth/device/token", { body: { deviceCode: code.deviceCode } })
    expect([pending.status, pending.body.error.code, pending.body.error.reason]).toEqual([400, "VALIDATION_FAILED", "authorization_pending"])
    const tooFast = await post("/api/v1/auth/device/token", { body: { deviceCode: code.deviceCode } })
    expect([tooFast.status, tooFast.body.error.reason, tooFast.headers.get("retry-after")]).toEqual([429, "slow_down", "5"])

    const shown = await call(h.url, "GET", `/api/v1/auth/device?user_code=${code.userCode.toLowerCase()}`, { session })
    expect(shown.body.request).toMatchObject({ clientName: "laptop agent", scopes: LevelScopes.readwrite, access: "readwrite", movesFunds: false, status: "pending" })
    expect((await call(h.url, "GET", `/api/v1/auth/device?user_code=${code.userCode}`, {})).status).toBe(401)

    const approved = await post("/api/v1/auth/device/decision", { session, body: { userCode: code.userCode, approve: true } })
    expect(approved.body.request.status).toBe("approved")
    const again = await post("/api/v1/auth/device/decision", { session, body: { userCode: code.userCode } })
    expect(again.status).toBe(409)

    const token = await post("/api/v1/auth/device/token", { body: { deviceCode: code.deviceCode } })
    expect(token.status).toBe(200)
    expect(token.body).toMatchObject({ success: true, accountId, provisioned: true, scopes: LevelScopes.readwrite })
    expect(token.body.deviceToken).toMatch(/^svc_dvc_/)
    expect(token.body.key).toMatchObject({ scopes: LevelScopes.readwrite, access: "readwrite", label: "laptop agent" })
    const reuse = await post("/api/v1/auth/device/token", { body: { deviceCode: code.deviceCode } })
    expect([reuse.status, reuse.body.error.reason]).toEqual([400, "invalid_grant"])

    // The key records the device that minted it.
    const list = await call(h.url, "GET", "/api/v1/agent/keys", { bearer: token.body.deviceToken })
    expect(list.status).toBe(200)
    expect(list.body.keys[0]).toMatchObject({ keyPrefix: token.body.key.keyPrefix, mintedByDevicePrefix: token.body.devicePrefix })
    const devRows = await h.query<{ token_hash: string }>("SELECT token_hash FROM devices WHERE prefix = $1", token.body.devicePrefix)
    expect(devRows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/)
  })

  it("refuses transfer:bound, flags transfer:write as moving funds, and rejects bad requests", async () => {
    const bound = await post("/api/v1/auth/device/code", { body: { scopes: ["transfer:write", "transfer:bound"] } })
    expect([bound.status, bound.body.error.code, bound.body.error.field]).toEqual([400, "VALIDATION_FAILED", "scopes"])
    expect((await post("/api/v1/auth/device/code", { body: { scopes: ["root"] } })).body.error.field).toBe("scopes")
    expect((await post("/api/v1/auth/device/code", { body: { environment: "dev" } })).body.error.field).toBe("environment")
    const moves = await requestCode({ scopes: ["transfer:write", "launch:write"] })
    expect(moves).toMatchObject({ scopes: ["launch:write", "transfer:write"], movesFunds: true })
    const rows = await h.query("SELECT 1 FROM device_authorizations WHERE requested_scopes @> '[\"transfer:bound\"]'::jsonb")
    expect(rows).toHaveLength(0)
  })

  it("a device token reaches only owner key routes", async () => {
    const { session } = await h.newAccount()
    const out = await approveAndExchange(session)
    const device = out.deviceToken as string
    expect((await call(h.url, "GET", "/api/v1/agent/keys", { bearer: device })).status).toBe(200)
    const issued = await post("/api/v1/agent/keys", { bearer: device, body: { label: "from device" } })
    expect(issued.status).toBe(200)
    const widen = await call(h.url, "PUT", `/api/v1/agent/keys/${issued.body.keyPrefix}/access`, { bearer: device, body: { access: "readwritetransfer", dryRun: true } })
    expect(widen.status).toBe(200)
    // Not an agent key: cannot launch or trade.
    expect((await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: device })).status).toBe(401)
    expect((await call(h.url, "GET", "/api/v1/agent/tier", { bearer: device })).status).toBe(401)
    // Cannot list or revoke devices, approve another device, or enable agent features.
    expect((await call(h.url, "GET", "/api/v1/agent/devices", { bearer: device })).status).toBe(401)
    expect((await call(h.url, "DELETE", `/api/v1/agent/devices/${out.devicePrefix}`, { bearer: device })).status).toBe(401)
    const other = await requestCode()
    const approve = await post("/api/v1/auth/device/decision", { bearer: device, body: { userCode: other.userCode } })
    expect([approve.status, approve.body.error.code]).toEqual([401, "UNAUTHORIZED"])
    expect((await post("/api/v1/agent/enable", { bearer: device, body: { enabled: true } })).status).toBe(401)
  })

  it("issues the token even when provisioning fails, saying why", async () => {
    const { accountId, session } = await h.newAccount()
    noDelegation.add(accountId)
    const out = await approveAndExchange(session)
    expect(out).toMatchObject({ provisioned: false, code: "AGENT_WALLET_NOT_DELEGATED" })
    expect(out.deviceToken).toMatch(/^svc_dvc_/)
    expect((await h.query("SELECT 1 FROM agent_keys WHERE account_id = $1", accountId)).length).toBe(0)
    const off = await h.newAccount({ agentEnabled: false })
    const out2 = await approveAndExchange(off.session)
    expect(out2).toMatchObject({ provisioned: false, code: "VALIDATION_FAILED" })
  })

  it("denied and expired requests are refused", async () => {
    const { session } = await h.newAccount()
    const denied = await requestCode()
    await post("/api/v1/auth/device/decision", { session, body: { userCode: denied.userCode, approve: false } })
    const r = await post("/api/v1/auth/device/token", { body: { deviceCode: denied.deviceCode } })
    expect(r.body.error.reason).toBe("access_denied")
    const late = await requestCode()
    h.clock.offsetMs += 16 * 60_000
    try {
      const e = await post("/api/v1/auth/device/token", { body: { deviceCode: late.deviceCode } })
      expect(e.body.error.reason).toBe("expired_token")
      expect((await post("/api/v1/auth/device/decision", { session, body: { userCode: late.userCode } })).status).toBe(404)
    } finally {
      h.clock.offsetMs -= 16 * 60_000
    }
    expect((await post("/api/v1/auth/device/token", { body: { deviceCode: "nope" } })).body.error.reason).toBe("invalid_grant")
  })

  it("revoking a device can revoke every active key it minted, atomically; keys left in place keep working", async () => {
    const { session } = await h.newAccount()
    const one = await approveAndExchange(session)
    const extra = await post("/api/v1/agent/keys", { bearer: one.deviceToken, body: {} })
    const two = await approveAndExchange(session)
    const list = await call(h.url, "GET", "/api/v1/agent/devices", { session })
    expect(list.body.devices.map((d: { devicePrefix: string }) => d.devicePrefix).sort()).toEqual([one.devicePrefix, two.devicePrefix].sort())
    const r = await call(h.url, "DELETE", `/api/v1/agent/devices/${one.devicePrefix}?revokeKeys=true`, { session })
    expect(r.body.revokedKeys.sort()).toEqual([one.key.keyPrefix, extra.body.keyPrefix].sort())
    expect((await call(h.url, "GET", "/api/v1/agent/keys", { bearer: one.deviceToken })).status).toBe(401)
    expect((await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: one.key.key })).status).toBe(401)
    const keep = await call(h.url, "DELETE", `/api/v1/agent/devices/${two.devicePrefix}`, { session })
    expect(keep.body.revokedKeys).toEqual([])
    expect((await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: two.key.key })).status).toBe(200)
    expect((await call(h.url, "DELETE", "/api/v1/agent/devices/ZZZZZZZZ", { session })).status).toBe(404)
  })

  it("POST /agent/enable: session only, needs a Solana wallet, false refused", async () => {
    const a = await h.newAccount({ agentEnabled: false })
    expect((await post("/api/v1/agent/enable", { session: a.session, body: { enabled: false } })).status).toBe(403)
    noWallet.add(a.accountId)
    const r = await post("/api/v1/agent/enable", { session: a.session, body: { enabled: true } })
    expect([r.status, r.body.error.code]).toEqual([403, "VALIDATION_FAILED"])
    noWallet.delete(a.accountId)
    expect((await post("/api/v1/agent/enable", { session: a.session, body: { enabled: true } })).body).toEqual({ success: true, enabled: true })
    expect((await post("/api/v1/agent/keys", { session: a.session, body: {} })).status).toBe(200)
  })

  it("provisions the embedded local account idempotently on Max with a Write-level key", async () => {
    const first = await h.run(provisionLocalAccount(undefined, h.nowMs()))
    expect(first.sessionToken).toMatch(/^svc_ses_/)
    expect(first.agentKey).toMatch(/^svc_live_/)
    const same = await h.run(provisionLocalAccount(first, h.nowMs()))
    expect(same).toEqual(first)
    const tier = await call(h.url, "GET", "/api/v1/agent/tier", { apiKey: first.agentKey })
    expect(tier.body.tier).toBe("max")
    const keys = await call(h.url, "GET", "/api/v1/agent/keys", { session: first.sessionToken })
    expect(keys.body.keys).toHaveLength(1)
    expect(keys.body.keys[0]).toMatchObject({ access: "readwrite", embeddedWallet: "allowed" })
    // Lost credentials: fresh ones, the old key revoked, still one account.
    const fresh = await h.run(provisionLocalAccount(undefined, h.nowMs()))
    expect(fresh.accountId).toBe(first.accountId)
    expect(fresh.agentKey).not.toBe(first.agentKey)
    expect((await call(h.url, "GET", "/api/v1/agent/keys/self/limits", { apiKey: first.agentKey })).status).toBe(401)
    const active = await h.query("SELECT 1 FROM agent_keys WHERE account_id = $1 AND revoked_at IS NULL", first.accountId)
    expect(active).toHaveLength(1)
  })
})

describe("operator CLI", () => {
  const run = promisify(execFile)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-cli-"))
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const cli = async (...args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CURVESTREAM_DATA_DIR: dataDir }
    delete env.DATABASE_URL
    try {
      const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], { env, timeout: 60_000 })
      return { code: 0, out: JSON.parse(stdout) as Record<string, unknown>, err: "" }
    } catch (e) {
      const x = e as { code: number; stderr: string }
      return { code: x.code, out: {}, err: x.stderr }
    }
  }

  it("creates an account with a plan and a session, grants Max with an expiry, refuses bad input", async () => {
    const created = await cli("create-account", "--plan", "pro", "--name", "Ops", "--admin")
    expect(created.code).toBe(0)
    expect(created.out).toMatchObject({ plan: "pro", admin: true, agentEnabled: true })
    expect(created.out.sessionToken).toMatch(/^svc_ses_/)
    const id = created.out.accountId as string
    const grant = await cli("grant-max", "--account", id, "--until", "2099-01-01T00:00:00Z", "--source", "promo")
    expect(grant.out).toEqual({ accountId: id, maxGrantExpiresAt: "2099-01-01T00:00:00.000Z", maxGrantSource: "promo" })
    const session = await cli("issue-session", "--account", id, "--days", "2")
    expect(session.out.sessionToken).toMatch(/^svc_ses_/)
    const bad = await cli("grant-max", "--account", id)
    expect(bad.code).toBe(1)
    expect(bad.err).toContain("exactly one of --days or --until")
    expect((await cli("set-plan", "--account", "acc_nope", "--plan", "max")).err).toContain("no account")
    expect((await cli("frobnicate")).err).toContain("unknown command")
  }, 120_000)

  it("delegate: creates the embedded wallet once, approves and revokes agent access, refuses bad input", async () => {
    const id = (await cli("create-account", "--plan", "max")).out.accountId as string
    const approved = await cli("delegate", "--account", id, "--chain", "solana")
    expect(approved.code).toBe(0)
    expect(approved.out).toMatchObject({ accountId: id, chain: "solana", delegation: "active" })
    expect(approved.out.address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    // The engine's master key file, created once (mode 0600), seals the wallet's key.
    expect(fs.statSync(path.join(dataDir, "wallet-master.key")).mode & 0o777).toBe(0o600)
    const revoked = await cli("delegate", "--account", id, "--chain", "solana", "--revoke")
    expect(revoked.out).toEqual({ accountId: id, chain: "solana", address: approved.out.address, delegation: "revoked" })
    const evm = await cli("delegate", "--account", id, "--chain", "evm")
    expect(evm.out.address).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect((await cli("delegate", "--account", id, "--chain", "btc")).err).toContain("--chain must be solana or evm")
    expect((await cli("delegate", "--account", "acc_nope", "--chain", "solana")).err).toContain("no account")
  }, 180_000)
})
