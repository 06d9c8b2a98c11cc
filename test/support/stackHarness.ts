/**
 * The accounts, keys, wallets, transfers and webhooks stack as the engine wires it
 * (`Stack.layerTest`: `Stack.layer` over `Database.layerTest`; and `accountStackApi`, the code
 * `src/MainApi.ts` runs), served over uWS on PGlite, with the helpers the transfer suites share:
 * accounts with sessions, delegation, keys issued through the key route, device tokens through the
 * device flow, linked EVM wallets proven by a real signature, and a webhook endpoint so outbox rows
 * are written. DNS for the public-target check is a fixed table: `hooks.example.com` is public.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import { expect } from "vitest"
import { accountStackApi } from "../../api/auth/Adapters.js"
import type { AgentAuth } from "../../api/auth/AgentKeyAuth.js"
import type { RouteDef } from "../../api/Router.js"
import { serve } from "../../api/Server.js"
import * as Database from "../../src/db/Database.js"
import { createAccount, issueSession } from "../../src/services/accounts/Accounts.js"
import { layerTest as fixedBalances } from "../../src/services/accounts/BalanceReader.js"
import { WalletProvider, type WalletProviderShape } from "../../src/services/wallets/WalletProvider.js"
import * as Stack from "../../src/services/wiring/Stack.js"
import { call, checkAnswersOf } from "./accountsHarness.js"

export const PUBLIC_HOST = "hooks.example.com"

export interface StackHarness {
  readonly url: string
  readonly sql: SqlClient.SqlClient
  readonly provider: WalletProviderShape
  readonly context: Context.Context<Stack.StackServices | SqlClient.SqlClient>
  readonly query: <R extends object>(text: string, ...params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<R>>
  readonly newAccount: (o?: { plan?: "free" | "pro" | "max" }) => Promise<{ accountId: string; session: string }>
  readonly delegate: (accountId: string, chain: "solana" | "evm") => Promise<void>
  readonly issue: (session: string, body?: Record<string, unknown>) => Promise<{ key: string; keyPrefix: string; scopes: string[] }>
  readonly deviceToken: (session: string) => Promise<string>
  readonly linkEvm: (session: string, accountId: string, label?: string) => Promise<{ id: string; address: string }>
  readonly subscribe: (session: string, events: ReadonlyArray<string>) => Promise<string>
  readonly close: () => Promise<void>
}

export interface ExtraRoutes {
  (context: Context.Context<Stack.StackServices | SqlClient.SqlClient>, agentAuth: AgentAuth): Promise<ReadonlyArray<RouteDef>>
}

export const startStackHarness = async (
  options: {
    readonly extraRoutes?: ExtraRoutes
    /** Check every answer `call` receives against the mounted routes' OpenAPI document (`test/support/contract.ts`). */
    readonly contract?: boolean
  } = {}
): Promise<StackHarness> => {
  const scope = await Effect.runPromise(Scope.make())
  const stack = Layer.merge(
    Stack.layerTest({
      balances: fixedBalances({}),
      resolve: async (host) => {
        if (host === PUBLIC_HOST) return [{ address: "93.184.216.34", family: 4 }]
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" })
      }
    }),
    // The same database the stack runs on (one `Database.layerTest` per build).
    Database.layerTest
  )
  const context = await Effect.runPromise(Layer.buildWithScope(stack, scope))
  const sql = Context.get(context, SqlClient.SqlClient)
  const provider = Context.get(context, WalletProvider)
  const api = await Effect.runPromise(Effect.provide(accountStackApi({ nowMs: Date.now }), context))
  const routes = [...api.routes, ...((await options.extraRoutes?.(context, api.agentAuth)) ?? [])]
  const server = await Effect.runPromise(serve({ name: "stack-test", host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, routes }).pipe(Scope.extend(scope)))
  const url = server.url
  const stopChecking = options.contract === true ? checkAnswersOf(url, routes) : () => undefined

  const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.provideService(e, SqlClient.SqlClient, sql))
  const query = <R extends object>(text: string, ...params: ReadonlyArray<unknown>) => run(sql.unsafe<R>(text, params as unknown[]))

  const newAccount = (o: { plan?: "free" | "pro" | "max" } = {}) =>
    run(
      Effect.gen(function* () {
        const a = yield* createAccount({ plan: o.plan ?? "max", agentEnabled: true, isAdmin: false }, Date.now())
        const s = yield* issueSession(a.id, {}, Date.now())
        return { accountId: a.id, session: s.sessionToken }
      })
    )

  const delegate = (accountId: string, chain: "solana" | "evm") =>
    Effect.runPromise(Effect.zipRight(provider.ensureEmbeddedWallet(accountId, chain), provider.setDelegation(accountId, chain, "active")))

  const issue = async (session: string, body: Record<string, unknown> = {}) => {
    const r = await call(url, "POST", "/api/v1/agent/keys", { session, body })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { key: string; keyPrefix: string; scopes: string[] }
  }

  const deviceToken = async (session: string) => {
    const code = await call(url, "POST", "/api/v1/auth/device/code", { body: {} })
    expect(code.status, JSON.stringify(code.body)).toBe(200)
    expect((await call(url, "POST", "/api/v1/auth/device/decision", { session, body: { userCode: code.body.userCode } })).status).toBe(200)
    const token = await call(url, "POST", "/api/v1/auth/device/token", { body: { deviceCode: code.body.deviceCode } })
    expect(token.status, JSON.stringify(token.body)).toBe(200)
    return token.body.deviceToken as string
  }

  const linkEvm = async (session: string, accountId: string, label?: string) => {
    const account = privateKeyToAccount(generatePrivateKey())
    const message = provider.linkChallenge(accountId, "evm", account.address)
    const r = await call(url, "POST", "/api/v1/agent/wallets", {
      session,
      body: { chain: "evm", address: account.address, signature: await account.signMessage({ message }), ...(label !== undefined ? { label } : {}) }
    })
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return { id: r.body.wallet.id as string, address: account.address as string }
  }

  const subscribe = async (session: string, events: ReadonlyArray<string>) => {
    const hook = await call(url, "POST", "/api/v1/agent/webhooks", { session, body: { url: `https://${PUBLIC_HOST}/hooks`, events } })
    expect(hook.status, JSON.stringify(hook.body)).toBe(201)
    return hook.body.id as string
  }

  return {
    url,
    sql,
    provider,
    context,
    query,
    newAccount,
    delegate,
    issue,
    deviceToken,
    linkEvm,
    subscribe,
    close: () => {
      stopChecking()
      return Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}
