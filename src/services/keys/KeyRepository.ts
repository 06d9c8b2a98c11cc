/**
 * SQL for agent keys, their access-change history and usage roll-ups. Plain functions over
 * `SqlClient` so they join the caller's transaction. Times are passed in (epoch ms).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { Effect } from "effect"
import type { Chain } from "../../domain/Chain.js"
import type { AccessLevel, Direction } from "./Scopes.js"
import { type DailyUsage, isoDay, type SpendLimit, type TxLimit, type TxLimitReset, USAGE_SINCE_MS } from "./KeyRules.js"

export type Environment = "production" | "test"

export interface AgentKey {
  readonly id: string
  readonly prefix: string
  readonly accountId: string
  readonly hash: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<string>
  readonly label: string | null
  readonly avatar: string | null
  readonly rateLimitPerMin: number
  readonly dailyLaunchCap: number
  readonly launchChains: ReadonlyArray<Chain>
  readonly embeddedWallet: "allowed" | "denied"
  readonly expiresAtMs: number | null
  readonly txLimit: TxLimit | null
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  readonly paused: boolean
  readonly walletScope: "all" | "selected"
  readonly mintedByDevicePrefix: string | null
  readonly provisionedBy: string | null
  readonly createdAtMs: number
  readonly lastUsedAtMs: number | null
  readonly revokedAtMs: number | null
}

interface KeyRowDb {
  readonly id: string
  readonly prefix: string
  readonly account_id: string
  readonly key_hash: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<string>
  readonly label: string | null
  readonly avatar: string | null
  readonly rate_limit_per_min: number
  readonly daily_launch_cap: number
  readonly launch_chains: ReadonlyArray<Chain>
  readonly embedded_wallet: "allowed" | "denied"
  readonly expires_at: Date | null
  readonly tx_limit_usd_micros: string | null
  readonly tx_limit_reset: TxLimitReset | null
  readonly spend_limits: ReadonlyArray<SpendLimit> | null
  readonly paused: boolean
  readonly wallet_scope: "all" | "selected"
  readonly device_prefix: string | null
  readonly provisioned_by: string | null
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

const ms = (d: Date | null): number | null => (d === null ? null : d.getTime())

const toKey = (r: KeyRowDb): AgentKey => ({
  id: r.id,
  prefix: r.prefix,
  accountId: r.account_id,
  hash: r.key_hash,
  environment: r.environment,
  scopes: r.scopes,
  label: r.label,
  avatar: r.avatar,
  rateLimitPerMin: r.rate_limit_per_min,
  dailyLaunchCap: r.daily_launch_cap,
  launchChains: r.launch_chains,
  embeddedWallet: r.embedded_wallet,
  expiresAtMs: ms(r.expires_at),
  txLimit: r.tx_limit_usd_micros === null || r.tx_limit_reset === null ? null : { usdMicros: Number(r.tx_limit_usd_micros), reset: r.tx_limit_reset },
  spendLimits: r.spend_limits,
  paused: r.paused,
  walletScope: r.wallet_scope,
  mintedByDevicePrefix: r.device_prefix,
  provisionedBy: r.provisioned_by,
  createdAtMs: r.created_at.getTime(),
  lastUsedAtMs: ms(r.last_used_at),
  revokedAtMs: ms(r.revoked_at)
})

export type KeyStatus = "active" | "revoked" | "expired"

export const keyStatus = (k: AgentKey, nowMs: number): KeyStatus =>
  k.revokedAtMs !== null ? "revoked" : k.expiresAtMs !== null && k.expiresAtMs <= nowMs ? "expired" : "active"

const json = (v: unknown): string => JSON.stringify(v)

export interface NewKey {
  readonly id: string
  readonly prefix: string
  readonly accountId: string
  readonly hash: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<string>
  readonly label: string | null
  readonly rateLimitPerMin: number
  readonly dailyLaunchCap: number
  readonly launchChains: ReadonlyArray<Chain>
  readonly embeddedWallet: "allowed" | "denied"
  readonly expiresAtMs: number | null
  readonly txLimit: TxLimit | null
  readonly mintedByDeviceId: string | null
  readonly provisionedBy: string | null
}

const selectKeys = (sql: SqlClient.SqlClient) => sql`
  SELECT k.*, d.prefix AS device_prefix FROM agent_keys k LEFT JOIN devices d ON d.id = k.minted_by_device_id`

export const insertKey = (k: NewKey, nowMs: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO agent_keys (id, prefix, account_id, key_hash, environment, scopes, label, rate_limit_per_min, daily_launch_cap,
        launch_chains, embedded_wallet, expires_at, tx_limit_usd_micros, tx_limit_reset, minted_by_device_id, provisioned_by, created_at)
      VALUES (${k.id}, ${k.prefix}, ${k.accountId}, ${k.hash}, ${k.environment}, ${json(k.scopes)}::jsonb, ${k.label},
        ${k.rateLimitPerMin}, ${k.dailyLaunchCap}, ${json(k.launchChains)}::jsonb, ${k.embeddedWallet},
        ${k.expiresAtMs === null ? null : new Date(k.expiresAtMs)}, ${k.txLimit === null ? null : String(k.txLimit.usdMicros)},
        ${k.txLimit?.reset ?? null}, ${k.mintedByDeviceId}, ${k.provisionedBy}, ${new Date(nowMs)})`
  ).pipe(Effect.asVoid)

export const findKeyByPrefix = (prefix: string): Effect.Effect<AgentKey | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<KeyRowDb>`${selectKeys(sql)} WHERE k.prefix = ${prefix}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toKey(rows[0])))
  )

/** A key by id (a limit order executes as the key that placed it). */
export const findKeyById = (id: string): Effect.Effect<AgentKey | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<KeyRowDb>`${selectKeys(sql)} WHERE k.id = ${id}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toKey(rows[0])))
  )

/** The account's key by prefix, locked for the rest of the transaction; another account's key is undefined. */
export const lockAccountKey = (accountId: string, prefix: string): Effect.Effect<AgentKey | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<KeyRowDb>`${selectKeys(sql)} WHERE k.prefix = ${prefix} AND k.account_id = ${accountId} FOR UPDATE OF k`
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toKey(rows[0]))))

export const findAccountKey = (accountId: string, prefix: string): Effect.Effect<AgentKey | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<KeyRowDb>`${selectKeys(sql)} WHERE k.prefix = ${prefix} AND k.account_id = ${accountId}`).pipe(
    Effect.map((rows) => (rows[0] === undefined ? undefined : toKey(rows[0])))
  )

export const listAccountKeys = (accountId: string): Effect.Effect<ReadonlyArray<AgentKey>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<KeyRowDb>`${selectKeys(sql)} WHERE k.account_id = ${accountId} ORDER BY k.created_at, k.id`).pipe(
    Effect.map((rows) => rows.map(toKey))
  )

export const countActiveKeys = (accountId: string, nowMs: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ n: number }>`
      SELECT count(*)::int AS n FROM agent_keys
      WHERE account_id = ${accountId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ${new Date(nowMs)})`
  ).pipe(Effect.map((rows) => rows[0]?.n ?? 0))

export const revokeKey = (id: string, nowMs: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE agent_keys SET revoked_at = ${new Date(nowMs)} WHERE id = ${id} AND revoked_at IS NULL`).pipe(
    Effect.asVoid
  )

export type KeyPatch =
  | { readonly _tag: "label"; readonly label: string }
  | { readonly _tag: "avatar"; readonly avatar: string | null }
  | { readonly _tag: "txLimit"; readonly txLimit: TxLimit | null }
  | { readonly _tag: "scopes"; readonly scopes: ReadonlyArray<string> }
  | { readonly _tag: "spendLimits"; readonly spendLimits: ReadonlyArray<SpendLimit> | null }
  | { readonly _tag: "embeddedWallet"; readonly embeddedWallet: "allowed" | "denied" }
  | { readonly _tag: "paused"; readonly paused: boolean }

export const updateKey = (id: string, patch: KeyPatch): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    switch (patch._tag) {
      case "label":
        return sql`UPDATE agent_keys SET label = ${patch.label} WHERE id = ${id}`
      case "avatar":
        return sql`UPDATE agent_keys SET avatar = ${patch.avatar} WHERE id = ${id}`
      case "txLimit":
        return sql`UPDATE agent_keys SET tx_limit_usd_micros = ${patch.txLimit === null ? null : String(patch.txLimit.usdMicros)},
          tx_limit_reset = ${patch.txLimit?.reset ?? null} WHERE id = ${id}`
      case "scopes":
        return sql`UPDATE agent_keys SET scopes = ${json(patch.scopes)}::jsonb WHERE id = ${id}`
      case "spendLimits":
        return sql`UPDATE agent_keys SET spend_limits = ${patch.spendLimits === null ? null : json(patch.spendLimits)}::jsonb WHERE id = ${id}`
      case "embeddedWallet":
        return sql`UPDATE agent_keys SET embedded_wallet = ${patch.embeddedWallet} WHERE id = ${id}`
      case "paused":
        return sql`UPDATE agent_keys SET paused = ${patch.paused} WHERE id = ${id}`
    }
  }).pipe(Effect.asVoid)

export const touchKey = (id: string, nowMs: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE agent_keys SET last_used_at = ${new Date(nowMs)} WHERE id = ${id}`).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------
// Access-change history

export interface AccessChange {
  readonly changeId: string
  readonly keyId: string
  readonly atMs: number
  readonly direction: Direction
  readonly from: { readonly access: AccessLevel | null; readonly scopes: ReadonlyArray<string> }
  readonly to: { readonly access: AccessLevel | null; readonly scopes: ReadonlyArray<string> }
  readonly actor: "session" | "device" | "agent"
  readonly actorDevicePrefix: string | null
  readonly actorKeyPrefix: string | null
}

export const insertAccessChange = (accountId: string, c: AccessChange): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO agent_key_access_changes (id, key_id, account_id, at, direction, from_access, from_scopes, to_access, to_scopes,
        actor, actor_device_prefix, actor_key_prefix)
      VALUES (${c.changeId}, ${c.keyId}, ${accountId}, ${new Date(c.atMs)}, ${c.direction}, ${c.from.access}, ${json(c.from.scopes)}::jsonb,
        ${c.to.access}, ${json(c.to.scopes)}::jsonb, ${c.actor}, ${c.actorDevicePrefix}, ${c.actorKeyPrefix})`
  ).pipe(Effect.asVoid)

export const listAccessChanges = (keyId: string, limit: number): Effect.Effect<ReadonlyArray<AccessChange>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{
      id: string; key_id: string; at: Date; direction: Direction; from_access: AccessLevel | null; from_scopes: string[]
      to_access: AccessLevel | null; to_scopes: string[]; actor: AccessChange["actor"]; actor_device_prefix: string | null; actor_key_prefix: string | null
    }>`SELECT * FROM agent_key_access_changes WHERE key_id = ${keyId} ORDER BY seq DESC LIMIT ${limit}`
  ).pipe(
    Effect.map((rows) =>
      rows.map((r) => ({
        changeId: r.id,
        keyId: r.key_id,
        atMs: r.at.getTime(),
        direction: r.direction,
        from: { access: r.from_access, scopes: r.from_scopes },
        to: { access: r.to_access, scopes: r.to_scopes },
        actor: r.actor,
        actorDevicePrefix: r.actor_device_prefix,
        actorKeyPrefix: r.actor_key_prefix
      }))
    )
  )

// ---------------------------------------------------------------------------------------------
// Usage metering (daily roll-ups from 2026-08-15)

export interface UsageEvent {
  readonly keyId: string
  readonly atMs: number
  readonly usdMicros: number
  readonly trades: number
  readonly launches: number
}

/**
 * The statement that adds metered events to their keys' UTC days: `rows` yields
 * `(key_id, day, usd_micros, trade_count, launch_count)` (a `VALUES` list, or a `SELECT` over a CTE
 * of a larger statement: `SpendStore.bookStatement`).
 */
export const usageStatement = (sql: SqlClient.SqlClient, rows: Statement.Fragment): Statement.Fragment => sql`
          INSERT INTO agent_key_usage_daily (key_id, day, usd_micros, trade_count, launch_count)
          ${rows}
          ON CONFLICT (key_id, day) DO UPDATE SET
            usd_micros = agent_key_usage_daily.usd_micros + EXCLUDED.usd_micros,
            trade_count = agent_key_usage_daily.trade_count + EXCLUDED.trade_count,
            launch_count = agent_key_usage_daily.launch_count + EXCLUDED.launch_count`

/** `recordUsage`'s write (a statement alone, or a CTE of a larger one); undefined before metering started. */
export const usageEventStatement = (sql: SqlClient.SqlClient, e: UsageEvent): Statement.Fragment | undefined =>
  e.atMs < USAGE_SINCE_MS
    ? undefined
    : usageStatement(sql, sql`VALUES (${e.keyId}, ${isoDay(e.atMs)}::date, ${String(e.usdMicros)}, ${e.trades}, ${e.launches})`)

/** Adds one metered event to its UTC day; events before metering started are not recorded. */
export const recordUsage = (e: UsageEvent): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const statement = usageEventStatement(sql, e)
    return statement === undefined ? Effect.succeed(false) : sql`${statement}`.pipe(Effect.as(true))
  })

interface UsageRowDb {
  readonly key_id: string
  readonly day: string
  readonly usd_micros: string
  readonly trade_count: number
  readonly launch_count: number
}

const toDaily = (r: UsageRowDb): DailyUsage => ({ day: r.day, usdMicros: Number(r.usd_micros), tradeCount: r.trade_count, launchCount: r.launch_count })

/** Daily rows of every key of the account from `fromDay` (inclusive), by key id. */
export const accountUsageSince = (accountId: string, fromDay: string): Effect.Effect<ReadonlyMap<string, ReadonlyArray<DailyUsage>>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<UsageRowDb>`
      SELECT u.key_id, to_char(u.day, 'YYYY-MM-DD') AS day, u.usd_micros::text AS usd_micros, u.trade_count, u.launch_count
      FROM agent_key_usage_daily u JOIN agent_keys k ON k.id = u.key_id
      WHERE k.account_id = ${accountId} AND u.day >= ${fromDay}::date`
  ).pipe(
    Effect.map((rows) => {
      const out = new Map<string, DailyUsage[]>()
      for (const r of rows) {
        const list = out.get(r.key_id) ?? []
        list.push(toDaily(r))
        out.set(r.key_id, list)
      }
      return out
    })
  )

/** Lifetime sums of every key of the account, by key id. */
export const accountUsageLifetime = (
  accountId: string
): Effect.Effect<ReadonlyMap<string, { usdMicros: number; launches: number }>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ key_id: string; usd: string; launches: string }>`
      SELECT u.key_id, sum(u.usd_micros)::text AS usd, sum(u.launch_count)::text AS launches
      FROM agent_key_usage_daily u JOIN agent_keys k ON k.id = u.key_id
      WHERE k.account_id = ${accountId} GROUP BY u.key_id`
  ).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.key_id, { usdMicros: Number(r.usd), launches: Number(r.launches) }]))))

export const keyUsageSince = (keyId: string, fromDay: string): Effect.Effect<ReadonlyArray<DailyUsage>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<UsageRowDb>`
      SELECT key_id, to_char(day, 'YYYY-MM-DD') AS day, usd_micros::text AS usd_micros, trade_count, launch_count
      FROM agent_key_usage_daily WHERE key_id = ${keyId} AND day >= ${fromDay}::date ORDER BY day`
  ).pipe(Effect.map((rows) => rows.map(toDaily)))

/** USD micros metered in the key's txLimit window starting at `fromDay` (bookings only). */
export const usedInWindow = (keyId: string, fromMs: number): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ used: string | null }>`
      SELECT sum(usd_micros)::text AS used FROM agent_key_usage_daily WHERE key_id = ${keyId} AND day >= ${isoDay(Math.max(fromMs, 0))}::date`
  ).pipe(Effect.map((rows) => Number(rows[0]?.used ?? 0)))
