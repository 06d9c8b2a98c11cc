/**
 * The trade routes (`api/routes/TradeRoutes.ts`) over real HTTP in front of a test's real trade
 * service, with a key check that admits the test's agent key, and every answer checked against the
 * main OpenAPI document (`contract.ts`): what the linked-payer integration tests drive on each chain.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Exit, Scope } from "effect"
import { expect } from "vitest"
import type { AgentAuth } from "../../api/auth/AgentKeyAuth.js"
import { tradeRoutes } from "../../api/routes/TradeRoutes.js"
import { mainDocument } from "../../clients/typescript/documents.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { makeAgentTransactions } from "../../src/services/trade/AgentTransactions.js"
import type { TradeServiceShape } from "../../src/services/trade/TradeService.js"
import { contractDocument, contractProblems } from "./contract.js"
import { mountRoutes } from "./httpRoutes.js"

export interface TradeRoutesAgent {
  readonly accountId: string
  readonly keyId: string | null | undefined
  readonly keyPrefix: string
  readonly scopes: ReadonlyArray<string>
}

/** `open` (in `beforeAll`, once the service exists) mounts the routes; `call` POSTs a body and answers `{status, body}`. */
export const tradeRoutesOverHttp = (agent: TradeRoutesAgent, deps: () => { readonly trades: TradeServiceShape; readonly sql: SqlClient.SqlClient }) => {
  const agentAuth: AgentAuth = {
    authenticate: () =>
      Effect.succeed({
        _tag: "agent",
        accountId: agent.accountId,
        tier: "max",
        key: { id: agent.keyId, prefix: agent.keyPrefix, environment: "production", embeddedWallet: "denied", scopes: agent.scopes, txLimit: null, spendLimits: null },
        account: { referredBy: null },
        plan: { id: "max", feeBps: 25 }
      } as unknown as AgentPrincipal),
    verify: () => Effect.die("not used by the trade routes")
  }
  const contract = contractDocument(mainDocument())
  let url = ""
  let scope: Scope.CloseableScope | undefined
  const open = async () => {
    const { trades, sql } = deps()
    scope = await Effect.runPromise(Scope.make())
    url = await Effect.runPromise(mountRoutes(tradeRoutes({ agentAuth, trades, transactions: makeAgentTransactions(sql) })).pipe(Scope.extend(scope)))
  }
  const close = () => (scope === undefined ? Promise.resolve() : Effect.runPromise(Scope.close(scope, Exit.void)))
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method: "POST", headers: { "x-api-key": "key", "content-type": "application/json" }, body: JSON.stringify(body) })
    const text = await res.text()
    expect(contractProblems(contract, "POST", path, res.status, res.headers.get("content-type"), text)).toEqual([])
    return { status: res.status, body: JSON.parse(text) as any }
  }
  return { open, close, call }
}
