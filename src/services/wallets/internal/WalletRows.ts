/**
 * What every part of the wallet service shares: the `wallets` row and its view, the clock and
 * plans, and the one way a row is added (admission checks and the insert in one transaction).
 *
 * Invariants:
 * - At most one active row per chain and address across all accounts (a partial unique index);
 *   revoke tombstones, so a revoked address can be linked again.
 * - The active-wallet count of an account never passes its plan's `linkedWallets`: the count and
 *   the insert run in one transaction holding a per-account advisory lock.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { type Clock, Effect } from "effect"
import { type Plan, planById } from "../../../domain/Plans.js"
import { addressKey, type WalletChain } from "../ChainKeys.js"
import type { MasterKey } from "../MasterKey.js"
import type { KeyDirectory, Principal } from "../Principal.js"
import type { WalletProviderShape } from "../WalletProvider.js"
import type { ClaimReconciler } from "./TeeRebind.js"
import { walletError } from "../WalletError.js"

export type WalletKind = "linked" | "imported" | "tee"

export interface WalletRow {
  readonly id: string
  readonly account_id: string
  readonly chain: WalletChain
  readonly address: string
  readonly address_key: string
  readonly kind: WalletKind
  readonly label: string | null
  readonly allow_launch: boolean
  readonly bound_key_id: string | null
  readonly bound_key_prefix: string | null
  readonly provider_wallet_id: string | null
  readonly policy_id: string | null
  readonly policy_neutralized: boolean | null
  readonly vault_destination: string | null
  readonly authority_status: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}

export interface WalletView {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly walletKind: WalletKind
  readonly label?: string
  readonly allowLaunch: boolean
  readonly boundKeyPrefix?: string
  readonly vaultDestination?: string
  readonly createdAt: string
}

export const iso = (d: Date | string): string => new Date(d).toISOString()

export const walletView = (r: WalletRow): WalletView => ({
  id: r.id,
  chain: r.chain,
  address: r.address,
  walletKind: r.kind,
  ...(r.label !== null ? { label: r.label } : {}),
  allowLaunch: r.allow_launch,
  ...(r.kind === "tee" && r.bound_key_prefix !== null ? { boundKeyPrefix: r.bound_key_prefix } : {}),
  ...(r.kind === "tee" && r.vault_destination !== null ? { vaultDestination: r.vault_destination } : {}),
  createdAt: iso(r.created_at)
})

export const WALLET_COLUMNS = `id, account_id, chain, address, address_key, kind, label, allow_launch, bound_key_id, bound_key_prefix,
  provider_wallet_id, policy_id, policy_neutralized, vault_destination, authority_status, created_at, revoked_at`

export const randomId = (prefix: string): string => `${prefix}_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url")}`

/** What the parts of the service are built over (the service's dependencies and options). */
export interface WalletContext {
  readonly sql: SqlClient.SqlClient
  readonly provider: WalletProviderShape
  readonly masterKey: MasterKey
  readonly keys: KeyDirectory
  readonly reconciler: ClaimReconciler
  readonly plans: ReadonlyArray<Plan>
  /** Time: the Effect `Clock` the wallet service is built under. */
  readonly clock: Clock.Clock
}

/** The columns of a new row. */
export interface NewWallet {
  readonly chain: WalletChain
  readonly address: string
  readonly kind: WalletKind
  readonly label: string | null
  readonly allowLaunch: boolean
  readonly boundKeyId: string | null
  readonly boundKeyPrefix: string | null
  readonly providerWalletId: string | null
  readonly policyId: string | null
  readonly vaultDestination: string | null
}

export const makeWalletRows = (ctx: WalletContext) => {
  const { sql } = ctx
  /** A row timestamp from the service's Clock, read as its statement is built (inside the method's Effect). */
  const now = () => new Date(ctx.clock.unsafeCurrentTimeMillis())
  const planOf = (p: Principal) => planById(ctx.plans, p.plan)

  const requireLinkingPlan = (p: Principal) =>
    planOf(p).capabilities.linkedWallets
      ? Effect.void
      : Effect.fail(walletError("plan_required", "Linked, imported and TEE wallets need the Pro or Max plan", { details: { requiredPlans: ["pro", "max"] } }))

  const rowById = (accountId: string, id: string) =>
    Effect.map(
      sql<WalletRow>`SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE id = ${id} AND account_id = ${accountId}`,
      (rows) => rows[0]
    )

  const accountRows = (accountId: string) =>
    sql<WalletRow>`SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE account_id = ${accountId} ORDER BY seq`

  const lockAccount = (accountId: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${"wallets:" + accountId}))`

  const activeByAddress = (chain: WalletChain, address: string) =>
    Effect.map(
      sql<{ id: string; account_id: string }>`
        SELECT id, account_id FROM wallets WHERE chain = ${chain} AND address_key = ${addressKey(chain, address)} AND revoked_at IS NULL`,
      (rows) => rows[0]
    )

  const alreadyLinked = (chain: WalletChain, address: string) =>
    walletError("already_linked", `${address} already has an active linked-wallet row (on this or another account)`, {
      details: { chain, address }
    })

  /** The plan's count: one more active row must fit. Inside the account lock it is the admission check; outside, a fail-early one. */
  const requireRoom = (p: Principal) =>
    Effect.gen(function* () {
      const limit = planOf(p).limits.linkedWallets
      const [count] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM wallets WHERE account_id = ${p.accountId} AND revoked_at IS NULL`
      if ((count?.n ?? 0) >= limit) {
        return yield* walletError("limit_reached", `The account has the maximum of ${limit} active linked wallets; revoke one first`, {
          details: { limit }
        })
      }
    })

  /** The admission checks of a new row: not linked anywhere, under the plan's count. Run inside the account lock. */
  const admit = (p: Principal, chain: WalletChain, address: string) =>
    Effect.gen(function* () {
      if ((yield* activeByAddress(chain, address)) !== undefined) return yield* alreadyLinked(chain, address)
      yield* requireRoom(p)
    })

  /** Fails early on what would refuse the row; the insert checks again. */
  const precheck = (p: Principal, chain: WalletChain, address: string) =>
    sql.withTransaction(Effect.zipRight(lockAccount(p.accountId), admit(p, chain, address)))

  /** Inserts a row after `admit`, in one transaction under the account lock; `linked_by` records the credential (a session-linked wallet is a TEE transfer destination). */
  const insertRow = (p: Principal, row: NewWallet) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* lockAccount(p.accountId)
        yield* admit(p, row.chain, row.address)
        const id = randomId("wal")
        const inserted = yield* sql<WalletRow>`
          INSERT INTO wallets (id, account_id, chain, address, address_key, kind, label, allow_launch, bound_key_id, bound_key_prefix,
            provider_wallet_id, policy_id, vault_destination, linked_by, created_at)
          VALUES (${id}, ${p.accountId}, ${row.chain}, ${row.address}, ${addressKey(row.chain, row.address)}, ${row.kind}, ${row.label},
            ${row.allowLaunch}, ${row.boundKeyId}, ${row.boundKeyPrefix}, ${row.providerWalletId}, ${row.policyId}, ${row.vaultDestination}, ${p.credential}, ${now()})
          ON CONFLICT (chain, address_key) WHERE revoked_at IS NULL DO NOTHING
          RETURNING ${sql.literal(WALLET_COLUMNS)}`
        const first = inserted[0]
        if (first === undefined) return yield* alreadyLinked(row.chain, row.address)
        return first
      })
    )

  /** Inserts a row for a wallet the provider already holds; when the insert fails, the wallet's policy falls back to default-deny. */
  const insertCustodied = (p: Principal, row: NewWallet & { readonly policyId: string }) =>
    insertRow(p, row).pipe(Effect.tapError(() => ctx.provider.setPolicyState(row.policyId, "default_deny").pipe(Effect.ignore)))

  return { now, planOf, requireLinkingPlan, rowById, accountRows, lockAccount, requireRoom, precheck, insertRow, insertCustodied }
}

export type WalletRows = ReturnType<typeof makeWalletRows>
