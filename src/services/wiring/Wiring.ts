/**
 * The ports between the accounts/keys, wallets and webhooks subsystems, implemented over each
 * other's real stores (the composition root provides these; tests use them too):
 *
 * - `AccountWallets` (what keys and tiers ask of the wallet side) over the wallet provider
 *   (embedded wallets and per-chain delegation, re-resolved on every call) and the wallet
 *   service's tables (`wallets`, `sign_claims`).
 * - `AccountEvents` (key access events) = the webhook outbox, on the caller's `SqlClient`, so
 *   the event joins the caller's transaction.
 * - `KeyDirectory` (what the wallet rules ask about agent keys) over the keys repository.
 *
 * Every query is bounded (LIMIT) and reads live rows; nothing here caches.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Layer } from "effect"
import type { Chain } from "../../domain/Chain.js"
import { AccountEvents } from "../accounts/AccountEvents.js"
import { AccountWallets, type AccountWalletsShape, WalletLookupFailed } from "../accounts/AccountWallets.js"
import { type AgentKey, findAccountKey } from "../keys/KeyRepository.js"
import type { WalletChain } from "../wallets/ChainKeys.js"
import type { KeyDirectory, KeyInfo } from "../wallets/Principal.js"
import { WalletProvider, type WalletProviderShape } from "../wallets/WalletProvider.js"
import { isNoAgentAccess, walletRefusal } from "../wallets/WalletRefusal.js"
import * as Outbox from "../webhooks/Outbox.js"

/** Pro-by-holding reads at most this many wallets (spec 2.2). */
export const ELIGIBLE_WALLETS_MAX = 200
/** Bound TEE wallets listed as a sample in access-change effects. */
export const BOUND_SAMPLE_MAX = 5

/** The wallet side's chain names to the engine's (`evm` is Hood). */
const walletChains: ReadonlyArray<readonly [WalletChain, Chain]> = [
  ["solana", "solana"],
  ["evm", "hood"]
]

const lookupFailed = (what: string) => (e: unknown) =>
  Effect.zipRight(
    Effect.logWarning(`wallet lookup failed: ${what}`, e),
    Effect.fail(new WalletLookupFailed({ message: `the wallet side could not answer (${what})` }))
  )

/** Time: `Clock.currentTimeMillis` of the fiber that asks. */
export const makeAccountWallets = (sql: SqlClient.SqlClient, provider: WalletProviderShape): AccountWalletsShape => {
  const run = <A>(what: string, e: Effect.Effect<A, SqlError | { readonly _tag: string }>): Effect.Effect<A, WalletLookupFailed> =>
    e.pipe(Effect.catchAll(lookupFailed(what)))

  const delegatedChains = (accountId: string) =>
    run(
      "delegation",
      Effect.forEach(walletChains, ([walletChain, chain]) =>
        provider.resolveDelegation(accountId, walletChain).pipe(
          Effect.as([chain]),
          // Not embedded, not delegated or revoked: no agent access on that chain; any other refusal is a failed lookup.
          Effect.catchTag("WalletProviderError", (e) => (isNoAgentAccess(walletRefusal(e)) ? Effect.succeed([] as ReadonlyArray<Chain>) : Effect.fail(e)))
        )
      ).pipe(Effect.map((lists) => lists.flat()))
    )

  const embeddedSolana = (accountId: string) =>
    Effect.map(provider.embeddedWallets(accountId), (ws) => ws.filter((w) => w.chain === "solana").map((w) => w.address))

  const linkedSolana = (accountId: string, limit: number) =>
    Effect.map(
      sql<{ address: string }>`
        SELECT address FROM wallets
        WHERE account_id = ${accountId} AND chain = 'solana' AND revoked_at IS NULL
        ORDER BY seq LIMIT ${limit}`,
      (rows) => rows.map((r) => r.address)
    )

  const hasSolanaWallet = (accountId: string) =>
    run(
      "solana wallet",
      Effect.gen(function* () {
        if ((yield* embeddedSolana(accountId)).length > 0) return true
        return (yield* linkedSolana(accountId, 1)).length > 0
      })
    )

  const eligibleSolanaWallets = (accountId: string) =>
    run(
      "eligible wallets",
      Effect.gen(function* () {
        // The embedded wallet is the account's primary wallet here; then linked, oldest first (TEE included).
        const ordered = [...new Set([...(yield* embeddedSolana(accountId)), ...(yield* linkedSolana(accountId, ELIGIBLE_WALLETS_MAX))])]
        if (ordered.length === 0) return []
        // A wallet another account also claims (linked there, or its embedded wallet) counts for neither.
        const contested = yield* sql<{ address: string }>`
          SELECT address_key AS address FROM wallets
          WHERE chain = 'solana' AND revoked_at IS NULL AND account_id <> ${accountId} AND address_key IN ${sql.in(ordered)}
          UNION
          SELECT address FROM wp_wallets
          WHERE chain = 'solana' AND custody = 'embedded' AND account_id <> ${accountId} AND address IN ${sql.in(ordered)}`
        const taken = new Set(contested.map((r) => r.address))
        return ordered.filter((a) => !taken.has(a)).slice(0, ELIGIBLE_WALLETS_MAX)
      })
    )

  const solanaAccounts = (afterAccountId: string, limit: number) =>
    run(
      "solana accounts",
      Effect.map(
        sql<{ account_id: string }>`
          SELECT account_id FROM (
            SELECT account_id FROM wp_wallets WHERE chain = 'solana' AND custody = 'embedded'
            UNION
            SELECT account_id FROM wallets WHERE chain = 'solana' AND revoked_at IS NULL
          ) a WHERE account_id > ${afterAccountId} ORDER BY account_id LIMIT ${limit}`,
        (rows) => rows.map((r) => r.account_id)
      )
    )

  const rewardEvmWallet = (accountId: string) =>
    run(
      "evm wallet",
      Effect.gen(function* () {
        const embedded = (yield* provider.embeddedWallets(accountId)).find((w) => w.chain === "evm")
        if (embedded !== undefined) return embedded.address
        const [linked] = yield* sql<{ address: string }>`
          SELECT address FROM wallets WHERE account_id = ${accountId} AND chain = 'evm' AND revoked_at IS NULL ORDER BY seq LIMIT 1`
        return linked?.address
      })
    )

  const boundTeeWallets = (keyId: string) =>
    run(
      "bound TEE wallets",
      Effect.gen(function* () {
        const [count] = yield* sql<{ n: number; vault: number }>`
          SELECT count(*)::int AS n, (count(*) FILTER (WHERE vault_destination IS NOT NULL))::int AS vault
          FROM wallets WHERE kind = 'tee' AND bound_key_id = ${keyId} AND revoked_at IS NULL`
        const sample = yield* sql<{ address: string }>`
          SELECT address FROM wallets WHERE kind = 'tee' AND bound_key_id = ${keyId} AND revoked_at IS NULL
          ORDER BY seq LIMIT ${BOUND_SAMPLE_MAX}`
        // `withVault` only when some has a vault pinned (absent reads as none).
        const withVault = count?.vault ?? 0
        return { count: count?.n ?? 0, sample: sample.map((r) => r.address), ...(withVault > 0 ? { withVault } : {}) }
      })
    )

  const openSignClaims = (keyId: string) =>
    run(
      "open sign claims",
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
        Effect.map(
          sql<{ n: number }>`
            SELECT count(*)::int AS n FROM sign_claims WHERE key_id = ${keyId} AND state = 'open' AND expires_at > ${new Date(nowMs)}`,
          (rows) => rows[0]?.n ?? 0
        )
      )
    )

  return { delegatedChains, hasSolanaWallet, eligibleSolanaWallets, solanaAccounts, rewardEvmWallet, boundTeeWallets, openSignClaims }
}

/** `AccountWallets` over the wallet provider and the wallet tables. */
export const accountWalletsLayer: Layer.Layer<AccountWallets, never, SqlClient.SqlClient | WalletProvider> = Layer.effect(
  AccountWallets,
  Effect.map(Effect.all([SqlClient.SqlClient, WalletProvider]), ([sql, provider]) => makeAccountWallets(sql, provider))
)

/** Key access events go to the webhook outbox, inside the caller's transaction. */
export const accountEventsLayer: Layer.Layer<AccountEvents> = Layer.succeed(AccountEvents, { enqueue: Outbox.enqueue })

export const keyInfo = (k: AgentKey): KeyInfo => ({
  keyId: k.id,
  keyPrefix: k.prefix,
  accountId: k.accountId,
  label: k.label,
  environment: k.environment,
  scopes: k.scopes,
  revokedAtMs: k.revokedAtMs,
  expiresAtMs: k.expiresAtMs,
  paused: k.paused,
  walletScope: k.walletScope,
  spendLimits: k.spendLimits === null ? null : k.spendLimits.map((l) => ({ asset: l.asset, maxPerTxRaw: l.maxPerTxRaw }))
})

/** The wallet rules' view of agent keys, read from the keys table on every call. */
export const makeKeyDirectory = (sql: SqlClient.SqlClient): KeyDirectory => ({
  findByPrefix: (accountId, keyPrefix) =>
    findAccountKey(accountId, keyPrefix).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.map((k) => (k === undefined ? undefined : keyInfo(k)))
    )
})

/**
 * A test account, for the webhook loopback flag: it holds at least one active test key and no
 * active production key. An account with no keys, or with any production key, is not one.
 */
export const isTestAccount = (accountId: string, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ environment: string; revoked_at: Date | null; expires_at: Date | null }>`
      SELECT environment, revoked_at, expires_at FROM agent_keys
      WHERE account_id = ${accountId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${new Date(nowMs)})
      LIMIT 100`
    return rows.length > 0 && rows.every((r) => r.environment === "test")
  })
