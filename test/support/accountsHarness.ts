/**
 * Test harness for the accounts subsystem: `AccountsLayer.layerTest` (the real services over
 * `Database.layerTest`: in-memory PGlite, or the server database given) and the key and account
 * routes on a real uWS listener. The wallet side and (unless a reader is given) chain balances are
 * fixed answers (their `layerTest`; their own subsystems test them); events are recorded in memory
 * (`AccountEvents.layerTest`). Time is `Date.now()` plus an offset the test moves.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Layer, ManagedRuntime, Ref, Scope } from "effect"
import { type AccountApi, accountApi } from "../../api/routes/AccountRoutes.js"
import { openApiDocument } from "../../api/OpenApi.js"
import type { RouteDef } from "../../api/Router.js"
import { documentInfo } from "../../clients/typescript/documents.js"
import { type ContractDocument, contractDocument, ContractViolation, contractProblems } from "./contract.js"
import { serve } from "../../api/Server.js"
import * as Database from "../../src/db/Database.js"
import type { PlanId } from "../../src/domain/Plans.js"
import { KeyService } from "../../src/services/keys/KeyService.js"
import { AccountEvents, type RecordedEvent, layerTest as recordingEvents } from "../../src/services/accounts/AccountEvents.js"
import { AccountWallets, type FixedWallets, layerTest as fixedWallets } from "../../src/services/accounts/AccountWallets.js"
import { createAccount, issueSession } from "../../src/services/accounts/Accounts.js"
import * as AccountsLayer from "../../src/services/accounts/AccountsLayer.js"
import { BalanceReader, layerTest as fixedBalances } from "../../src/services/accounts/BalanceReader.js"
import { TierService } from "../../src/services/accounts/TierService.js"
import { Devices } from "../../src/services/accounts/Devices.js"
import { KeyStore } from "../../src/services/keys/KeyStore.js"
import { layerClockAt } from "./clock.js"

const CLOSE_WAIT_MS = 10_000

export interface HarnessOptions {
  readonly databaseUrl?: string | undefined
  readonly wallets?: FixedWallets
  readonly perAccountWallets?: (accountId: string) => FixedWallets | undefined
  readonly held?: Readonly<Record<string, bigint>>
  readonly staked?: Readonly<Record<string, bigint>>
  /** Read balances from a chain instead of the fixed `held`/`staked` answers. */
  readonly balances?: Layer.Layer<BalanceReader>
  /** Extra routes mounted beside the account routes (built from the authenticators). */
  readonly extraRoutes?: (api: AccountApi) => ReadonlyArray<RouteDef>
  /**
   * Check every answer `call` receives against the OpenAPI document of the mounted routes
   * (`test/support/contract.ts`): an undocumented status or member fails the test.
   */
  readonly contract?: boolean
}

/** The documents of the listeners started with `contract: true`, by URL. */
const contracts = new Map<string, ContractDocument>()

/** Checks every answer `call` receives from `url` against the document of `routes` (the listener's mounted table); the returned function stops it. */
export const checkAnswersOf = (url: string, routes: ReadonlyArray<RouteDef>): (() => void) => {
  contracts.set(url, contractDocument(openApiDocument(routes, documentInfo)))
  return () => void contracts.delete(url)
}

type Services = SqlClient.SqlClient | KeyService | KeyStore | TierService | Devices | AccountWallets | AccountEvents | BalanceReader

export interface Harness {
  readonly url: string
  readonly clock: { offsetMs: number }
  readonly nowMs: () => number
  readonly run: <A, E>(e: Effect.Effect<A, E, Services>) => Promise<A>
  readonly events: () => Promise<ReadonlyArray<RecordedEvent>>
  readonly query: <R extends object>(text: string, ...params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<R>>
  readonly newAccount: (options?: { plan?: PlanId; agentEnabled?: boolean; isAdmin?: boolean }) => Promise<{ accountId: string; session: string }>
  readonly auth: () => Promise<AccountApi>
  readonly close: () => Promise<void>
}

export const startHarness = async (options: HarnessOptions = {}): Promise<Harness> => {
  const clock = { offsetMs: 0 }
  const nowMs = () => Date.now() + clock.offsetMs
  const eventsRef = Ref.unsafeMake<ReadonlyArray<RecordedEvent>>([])
  const ports = Layer.mergeAll(
    fixedWallets(options.wallets ?? { delegatedChains: ["solana"], solanaWallets: ["Owner111111111111111111111111111111111111111"] }, options.perAccountWallets),
    recordingEvents(eventsRef),
    options.balances ?? fixedBalances(options.held ?? {}, options.staked ?? {})
  )
  // The real accounts subsystem and the database it runs on (one `Database.layerTest` per build:
  // in-memory PGlite, or the server database `databaseUrl` names). The services read time from the
  // Clock they are built under (and the runtime's): the harness's clock.
  const services = Layer.merge(AccountsLayer.layerTest, Database.layerTest).pipe(
    Layer.provideMerge(ports),
    Layer.provide(options.databaseUrl !== undefined ? Layer.succeed(Database.TestDatabaseUrl, options.databaseUrl) : Layer.empty),
    Layer.provide(layerClockAt(nowMs))
  )
  const runtime = ManagedRuntime.make(services)
  const run = <A, E>(e: Effect.Effect<A, E, Services>) => runtime.runPromise(e)
  const auth = () => run(accountApi({ nowMs }))
  const api = await auth()
  const scope = await Effect.runPromise(Scope.make())
  const routes = [...api.routes, ...(options.extraRoutes?.(api) ?? [])]
  const server = await run(
    serve({
      name: "accounts-test",
      host: "127.0.0.1",
      port: 0,
      maxBodyBytes: 64 * 1024,
      routes
    }).pipe(Scope.extend(scope))
  )
  if (options.contract === true) contracts.set(server.url, contractDocument(openApiDocument(routes, documentInfo)))
  const query = <R extends object>(text: string, ...params: ReadonlyArray<unknown>) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<R>(text, params as unknown[])))
  return {
    url: server.url,
    clock,
    nowMs,
    run,
    events: () => Effect.runPromise(Ref.get(eventsRef)),
    query,
    auth,
    newAccount: (o = {}) =>
      run(
        Effect.gen(function* () {
          const a = yield* createAccount({ plan: o.plan ?? "free", agentEnabled: o.agentEnabled ?? true, isAdmin: o.isAdmin ?? false }, nowMs())
          const s = yield* issueSession(a.id, {}, nowMs())
          return { accountId: a.id, session: s.sessionToken }
        })
      ),
    close: async () => {
      contracts.delete(server.url)
      await Effect.runPromise(Scope.close(scope, Exit.void))
      // Bounded: closing the embedded database must not hold a test file past its hooks.
      let timer: NodeJS.Timeout | undefined
      await Promise.race([runtime.dispose(), new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))])
      clearTimeout(timer)
    }
  }
}

/** JSON over fetch: `{status, headers, body}`. */
export const call = async (
  url: string,
  method: string,
  path: string,
  options: { readonly session?: string; readonly apiKey?: string; readonly bearer?: string; readonly body?: unknown } = {}
) => {
  const headers: Record<string, string> = {}
  const bearer = options.session ?? options.bearer
  if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(url + path, { method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}) })
  const text = await res.text()
  const contract = contracts.get(url)
  if (contract !== undefined) {
    const problems = contractProblems(contract, method, new URL(url + path).pathname, res.status, res.headers.get("content-type"), text)
    if (problems.length > 0) throw new ContractViolation(problems, text)
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, headers: res.headers, body: (text === "" ? undefined : JSON.parse(text)) as any }
}
