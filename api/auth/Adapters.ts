/**
 * The real authenticators (`AgentKeyAuth`, `OwnerAuth`) in the shapes the wallet and webhook
 * route modules ask for. Those modules were built against their own small ports so they do not
 * depend on how keys and sessions are stored; these adapters are the only place the two meet.
 *
 * Which credential a wallet route reads:
 * - `Authorization: Bearer …` present, or a route that takes no agent key: owner auth (a session,
 *   or a session or device token where the route takes device tokens). An agent key offered to an
 *   owner-only route is refused by owner auth with the reason, without spending the key's rate.
 * - otherwise `x-api-key`: agent-key auth with the route's scope (so `SCOPE_MISSING`, rate limits
 *   and `KEY_EXPIRED` come out exactly as on every other `x-api-key` route).
 * The route then checks the resolved credential kind again (`WalletRoutes.admit`).
 */
import type { SharedWindowCounts } from "../../src/db/SharedWindowCounts.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { apiError, type ApiError } from "../../src/domain/ApiError.js"
import { findAccount } from "../../src/services/accounts/AccountRepository.js"
import type { TierServiceShape } from "../../src/services/accounts/TierService.js"
import type { AgentPrincipal, OwnerPrincipal } from "../../src/services/keys/Principals.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { isTestAccount } from "../../src/services/wiring/Wiring.js"
import { TierService } from "../../src/services/accounts/TierService.js"
import { TrustedWallets } from "../../src/services/transfers/TrustedWallets.js"
import { WithdrawalAddresses } from "../../src/services/transfers/WithdrawalAddresses.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import { WebhookService } from "../../src/services/webhooks/WebhookService.js"
import { storageRefusal } from "../ErrorTable.js"
import type { Request } from "../Http.js"
import { accountApi, type AccountApiRouteDeps, accountApiRoutes } from "../routes/AccountRoutes.js"
import { transferRoutes, type TransferRoutesDeps } from "../routes/TransferRoutes.js"
import { type Authenticate, walletRoutes, type WalletRoutesDeps } from "../routes/WalletRoutes.js"
import { type AuthenticatedOwner, webhookRoutes, type WebhookRoutesDeps } from "../routes/WebhookRoutes.js"
import type { RouteDef } from "../Router.js"
import type { AgentAuth } from "./AgentKeyAuth.js"
import { bearerToken, OWNER_AUTH_HEADERS, type OwnerAuth } from "./OwnerAuth.js"


/** An agent key as the wallet rules see the caller. */
export const agentToWalletPrincipal = (p: AgentPrincipal): Principal => ({
  accountId: p.accountId,
  plan: p.tier,
  credential: "agentKey",
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  scopes: p.key.scopes,
  environment: p.key.environment,
  embeddedWallet: p.key.embeddedWallet,
  devicePrefix: null
})

export interface WalletAuthDeps {
  readonly agentAuth: AgentAuth
  readonly ownerAuth: OwnerAuth
  readonly tiers: TierServiceShape
  readonly nowMs: () => number
}

export const makeWalletAuthenticate = (deps: WalletAuthDeps): Authenticate => {
  const ownerToWalletPrincipal = (p: OwnerPrincipal): Effect.Effect<Principal, ApiError> =>
    Effect.gen(function* () {
      const account = yield* deps.tiers.account(p.accountId).pipe(Effect.catchTag("SqlError", storageRefusal))
      if (account === undefined) return yield* Effect.fail(apiError("UNAUTHORIZED", "The account no longer exists"))
      const plan = yield* deps.tiers.tierOf(account, deps.nowMs())
      return {
        accountId: p.accountId,
        plan,
        credential: p._tag,
        keyId: null,
        keyPrefix: null,
        scopes: [],
        environment: null,
        embeddedWallet: null,
        devicePrefix: p._tag === "device" ? p.devicePrefix : null
      } satisfies Principal
    })

  return (headers, need) => {
    const takesAgent = need.credentials.includes("agentKey")
    if (bearerToken(headers) !== undefined || !takesAgent) {
      const kinds = need.credentials.includes("device") || !need.credentials.includes("session") ? "sessionOrDevice" : "session"
      return Effect.flatMap(deps.ownerAuth.owner(headers, kinds), ownerToWalletPrincipal)
    }
    const req = { ...(need.scope !== undefined ? { scopes: [need.scope] } : {}), ...(need.whilePaused !== undefined ? { whilePaused: need.whilePaused } : {}) }
    return Effect.map(deps.agentAuth.authenticate(headers, req), agentToWalletPrincipal)
  }
}

export interface WebhookAuthDeps {
  readonly ownerAuth: OwnerAuth
  readonly sql: SqlClient.SqlClient
  readonly nowMs: () => number
}

/**
 * Webhook routes take a signed-in session only (spec 4.4); the account row says whether agent
 * features are on, the account's keys whether it is a test account (see `isTestAccount`).
 */
export const makeWebhookAuthenticate =
  (deps: WebhookAuthDeps) =>
  (req: Request): Effect.Effect<AuthenticatedOwner, ApiError> =>
    Effect.flatMap(deps.ownerAuth.session(req.headers), (s) =>
      Effect.gen(function* () {
        const account = yield* findAccount(s.accountId)
        if (account === undefined) return yield* Effect.fail(apiError("UNAUTHORIZED", "The account no longer exists"))
        const testAccount = yield* isTestAccount(s.accountId, deps.nowMs())
        return { accountId: account.id, testAccount, agentEnabled: account.agentEnabled } satisfies AuthenticatedOwner
      }).pipe(Effect.provideService(SqlClient.SqlClient, deps.sql), Effect.catchTag("SqlError", storageRefusal))
    )

/**
 * Every route of accounts and keys, wallets and webhooks, over the services in context (the
 * `Stack` layer), and the authenticators other route modules reuse (`agentAuth` for `x-api-key`
 * routes, `ownerAuth` for owner routes, `dataAuth` for the market-data service).
 */
export const accountStackApi = (options: { readonly nowMs: () => number; readonly sharedLimits?: SharedWindowCounts | undefined }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tiers = yield* TierService
    const wallets = yield* WalletService
    const webhooks = yield* WebhookService
    const addresses = yield* WithdrawalAddresses
    const trust = yield* TrustedWallets
    const accounts = yield* accountApi(options)
    const authenticate: Authenticate = makeWalletAuthenticate({ agentAuth: accounts.agentAuth, ownerAuth: accounts.ownerAuth, tiers, nowMs: options.nowMs })
    const routeDeps: AccountStackRouteDeps = {
      ...accounts.routeDeps,
      wallets: { wallets, authenticate },
      transfers: { addresses, trust, authenticate },
      webhooks: {
        service: webhooks,
        authHeaders: OWNER_AUTH_HEADERS,
        authenticate: makeWebhookAuthenticate({ ownerAuth: accounts.ownerAuth, sql, nowMs: options.nowMs })
      }
    }
    return { ...accounts, routeDeps, routes: accountStackRoutes(routeDeps) }
  })

/** What the account stack's routes are built over. */
export interface AccountStackRouteDeps extends AccountApiRouteDeps {
  readonly wallets: WalletRoutesDeps
  readonly transfers: TransferRoutesDeps
  readonly webhooks: WebhookRoutesDeps
}

/** Accounts and keys, wallets, withdrawal addresses and trust, webhooks, in the order they match. */
export const accountStackRoutes = (d: AccountStackRouteDeps): ReadonlyArray<RouteDef> => [
  ...accountApiRoutes(d),
  ...walletRoutes(d.wallets),
  ...transferRoutes(d.transfers),
  ...webhookRoutes(d.webhooks)
]
