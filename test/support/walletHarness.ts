/**
 * Test harness for the wallet routes: `WalletService.layerTest` and `WalletProvider.layerTest` (the
 * real wallet service and local provider over `Database.layerTest`: PGlite, or a server URL),
 * served over uWS on a free port. Callers are fixed principals chosen by credential: `x-api-key: <name>` for agent keys, `Authorization:
 * Bearer <name>` for sessions and device tokens; an unknown name is `UNAUTHORIZED`, as the real
 * middleware answers. The clock is a mutable value; the claim reconciler answers from a map.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { walletRoutes } from "../../api/routes/WalletRoutes.js"
import { serve } from "../../api/Server.js"
import * as Database from "../../src/db/Database.js"
import { apiError } from "../../src/domain/ApiError.js"
import type { AuthHeaders, KeyInfo, Principal } from "../../src/services/wallets/Principal.js"
import * as WalletProviderModule from "../../src/services/wallets/WalletProvider.js"
import * as WalletServiceModule from "../../src/services/wallets/WalletService.js"
import { withContract } from "./contractRoutes.js"
import { clockAt } from "./clock.js"

export const DAY_MS = 86_400_000

const principal = (p: Partial<Principal> & Pick<Principal, "accountId" | "plan" | "credential">): Principal => ({
  keyId: null,
  keyPrefix: null,
  scopes: [],
  environment: null,
  embeddedWallet: null,
  devicePrefix: null,
  ...p
})

const WRITE = ["launch:write", "launch:read", "activity:write", "swap:write", "account:read"]

const agentKey = (accountId: string, plan: Principal["plan"], keyId: string, keyPrefix: string, scopes: ReadonlyArray<string>, environment: "production" | "test" = "production") =>
  principal({ accountId, plan, credential: "agentKey", keyId, keyPrefix, scopes, environment, embeddedWallet: "denied" })

/** The callers, by the name a test sends as its credential. */
export const principals: Record<string, Principal> = {
  "sess-a": principal({ accountId: "acct-a", plan: "max", credential: "session" }),
  "dev-a": principal({ accountId: "acct-a", plan: "max", credential: "device", devicePrefix: "dvcaaaaa" }),
  "key-a1": agentKey("acct-a", "max", "kid-a1", "a1aaaaaa", WRITE),
  "key-a2": agentKey("acct-a", "max", "kid-a2", "a2aaaaaa", WRITE),
  "key-a3": agentKey("acct-a", "max", "kid-a3", "a3aaaaaa", WRITE),
  "key-a-read": agentKey("acct-a", "max", "kid-ar", "arrrrrrr", ["account:read"]),
  "key-a-launch": agentKey("acct-a", "max", "kid-al", "alllllll", ["launch:write", "account:read"]),
  "sess-b": principal({ accountId: "acct-b", plan: "pro", credential: "session" }),
  "key-b1": agentKey("acct-b", "pro", "kid-b1", "b1bbbbbb", WRITE),
  "sess-f": principal({ accountId: "acct-f", plan: "free", credential: "session" }),
  "key-f": agentKey("acct-f", "free", "kid-f", "ffffffff", WRITE),
  "sess-l": principal({ accountId: "acct-l", plan: "pro", credential: "session" }),
  "sess-m": principal({ accountId: "acct-m", plan: "max", credential: "session" })
}

const keyInfo = (p: Principal, more: Partial<KeyInfo> = {}): KeyInfo => ({
  keyId: p.keyId ?? "",
  keyPrefix: p.keyPrefix ?? "",
  accountId: p.accountId,
  label: `label ${p.keyPrefix}`,
  environment: p.environment ?? "production",
  scopes: p.scopes,
  revokedAtMs: null,
  expiresAtMs: null,
  paused: false,
  walletScope: "all",
  spendLimits: null,
  ...more
})

/** Agent keys as the key store would answer (rebind targets and TEE bindings). */
export const keys = (nowMs: () => number): ReadonlyArray<KeyInfo> => [
  keyInfo(principals["key-a1"] as Principal),
  keyInfo(principals["key-a2"] as Principal, {
    spendLimits: [
      { asset: "sol", maxPerTxRaw: "1000000000" },
      { asset: "usdc", maxPerTxRaw: "0" }
    ]
  }),
  keyInfo(principals["key-a3"] as Principal, { walletScope: "selected", paused: true }),
  keyInfo(principals["key-a-read"] as Principal),
  { ...keyInfo(principals["key-a1"] as Principal), keyId: "kid-rev", keyPrefix: "revoked1", revokedAtMs: nowMs() - DAY_MS },
  { ...keyInfo(principals["key-a1"] as Principal), keyId: "kid-exp", keyPrefix: "expired1", expiresAtMs: nowMs() - 1 },
  { ...keyInfo(principals["key-a1"] as Principal), keyId: "kid-tst", keyPrefix: "testkey1", environment: "test" },
  keyInfo(principals["key-b1"] as Principal)
]

const authenticate = (headers: AuthHeaders) => {
  const apiKey = headers["x-api-key"]
  const bearer = headers["authorization"]?.replace(/^Bearer\s+/i, "")
  const name = apiKey ?? bearer
  const p = name === undefined ? undefined : principals[name]
  if (p === undefined || (apiKey !== undefined) !== (p.credential === "agentKey")) {
    return Effect.fail(apiError("UNAUTHORIZED", "Missing or unknown credential"))
  }
  return Effect.succeed(p)
}

export interface WalletHarness {
  readonly url: string
  readonly service: WalletServiceModule.WalletServiceShape
  readonly provider: WalletProviderModule.WalletProviderShape
  readonly sql: SqlClient.SqlClient
  /** The service clock (epoch ms); tests move it. */
  readonly clock: { ms: number }
  /** Reconciler answers by claim id; absent: `pending`. */
  readonly chainOutcomes: Map<string, "confirmed" | "failed" | "pending" | "unavailable">
  readonly call: (method: string, path: string, as: string | undefined, body?: unknown) => Promise<{ status: number; body: any }>
  readonly query: <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) => Promise<ReadonlyArray<A>>
  readonly close: () => Promise<void>
}

export const startWalletHarness = async (options: { databaseUrl?: string | undefined } = {}): Promise<WalletHarness> => {
  const clock = { ms: Date.UTC(2026, 9, 20, 12) }
  const nowMs = () => clock.ms
  const chainOutcomes = new Map<string, "confirmed" | "failed" | "pending" | "unavailable">()
  const directory = keys(nowMs)
  const scope = await Effect.runPromise(Scope.make())
  // The real wallet service, provider and fixed master key over one `Database.layerTest` (in-memory
  // PGlite, or the server database `databaseUrl` names); the key directory and the chain's answers are the harness's.
  const service = Layer.mergeAll(
    WalletServiceModule.layerTest({
      keys: {
        findByPrefix: (accountId, prefix) => Effect.succeed(directory.find((k) => k.accountId === accountId && k.keyPrefix === prefix))
      },
      reconciler: {
        outcome: (claim) => {
          const o = chainOutcomes.get(claim.claimId) ?? "pending"
          return o === "unavailable" ? Effect.fail("unavailable" as const) : Effect.succeed(o)
        }
      }
    }),
    WalletProviderModule.layerTest,
    Database.layerTest
  ).pipe(Layer.provide(options.databaseUrl !== undefined ? Layer.succeed(Database.TestDatabaseUrl, options.databaseUrl) : Layer.empty))
  // The services read time from the Clock they are built under: the harness's clock.
  const context = await Effect.runPromise(Layer.buildWithScope(service, scope).pipe(Effect.withClock(clockAt(nowMs))))
  const svc = Context.get(context, WalletServiceModule.WalletService)
  const prov = Context.get(context, WalletProviderModule.WalletProvider)
  const sql = Context.get(context, SqlClient.SqlClient)
  const server = await Effect.runPromise(
    serve({ name: "wallets", host: "127.0.0.1", port: 0, maxBodyBytes: 16 * 1024, routes: withContract(walletRoutes({ wallets: svc, authenticate })) }).pipe(
      Scope.extend(scope)
    )
  )
  const call = async (method: string, path: string, as: string | undefined, body?: unknown) => {
    const headers: Record<string, string> = {}
    if (as !== undefined) {
      if (principals[as]?.credential === "agentKey" || as.startsWith("key-")) headers["x-api-key"] = as
      else headers["authorization"] = `Bearer ${as}`
    }
    if (body !== undefined) headers["content-type"] = "application/json"
    const res = await fetch(server.url + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) })
    const text = await res.text()
    return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
  }
  return {
    url: server.url,
    service: svc,
    provider: prov,
    sql,
    clock,
    chainOutcomes,
    call,
    query: (f) => Effect.runPromise(f(sql)) as Promise<ReadonlyArray<any>>,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
