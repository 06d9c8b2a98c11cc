/**
 * Agent profiles (`agent_profiles`, migration 0009): the public face of an account's agent, read
 * by the copy score, the cohorts and the agent record. An operator publishes one
 * (`npm run cli -- publish-agent`); the embedded mode seeds the simulation's agents.
 *
 * Also the agent record's user resolution: an account id, a handle, or a wallet address (the
 * account's embedded wallet, an active linked/imported/TEE wallet, or its profile's wallet).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { getAddress, isAddress } from "viem"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { addressKey } from "../wallets/ChainKeys.js"

export interface AgentProfile {
  readonly id: string
  readonly accountId: string
  readonly name: string
  readonly chain: ChainId
  readonly wallet: string
  readonly published: boolean
  readonly publishedAtMs: number | null
}

interface ProfileRow {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly chain: string
  readonly wallet: string
  readonly published: boolean
  readonly published_at: Date | string | null
}

const toProfile = (r: ProfileRow): AgentProfile => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  chain: r.chain === "hood" ? "hood" : "solana",
  wallet: r.wallet,
  published: r.published,
  publishedAtMs: r.published_at === null ? null : new Date(r.published_at).getTime()
})

/** Profile ids: `ap_` and 20 hex characters. */
export const PROFILE_ID_FORMAT = /^ap_[0-9a-f]{20}$/
export const NAME_MAX = 64
/** Published profiles the cohorts consider (oldest published first). */
export const PUBLISHED_SCAN_MAX = 1_000

const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/

/** The wallet as trades carry it: Solana exactly, Hood checksummed; undefined when malformed. */
export const normalizeWallet = (chain: ChainId, wallet: string): string | undefined =>
  chain === "solana" ? (SOLANA_ADDRESS.test(wallet) ? wallet : undefined) : isAddress(wallet, { strict: false }) ? getAddress(wallet) : undefined

const columns = "id, account_id, name, chain, wallet, published, published_at"

export const findProfile = (id: string): Effect.Effect<AgentProfile | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<ProfileRow>(`SELECT ${columns} FROM agent_profiles WHERE id = $1`, [id])
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toProfile(rows[0]))))

export const profileOfAccount = (accountId: string): Effect.Effect<AgentProfile | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<ProfileRow>(`SELECT ${columns} FROM agent_profiles WHERE account_id = $1`, [accountId])
  ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : toProfile(rows[0]))))

/** Published profiles, oldest published first, at most `PUBLISHED_SCAN_MAX`. */
export const publishedProfiles = (): Effect.Effect<ReadonlyArray<AgentProfile>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<ProfileRow>(`SELECT ${columns} FROM agent_profiles WHERE published ORDER BY published_at, id LIMIT $1`, [PUBLISHED_SCAN_MAX])
  ).pipe(Effect.map((rows) => rows.map(toProfile)))

export interface PublishRequest {
  readonly accountId: string
  readonly name: string
  readonly chain: ChainId
  readonly wallet: string
}

/**
 * Creates or updates the account's profile and publishes it (the id is kept across updates).
 * Fails with a message for a bad name or wallet; the account must exist (foreign key).
 */
export const publishProfile = (req: PublishRequest, nowMs: number): Effect.Effect<AgentProfile, SqlError | string, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const name = req.name.trim()
    if (name.length < 1 || name.length > NAME_MAX) return yield* Effect.fail(`name must be 1 to ${NAME_MAX} characters`)
    const wallet = normalizeWallet(req.chain, req.wallet)
    if (wallet === undefined) return yield* Effect.fail(`wallet is not a ${req.chain} address`)
    const sql = yield* SqlClient.SqlClient
    const now = new Date(nowMs)
    const id = `ap_${randomBytes(10).toString("hex")}`
    const rows = yield* sql.unsafe<ProfileRow>(
      `INSERT INTO agent_profiles (id, account_id, name, chain, wallet, published, published_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, true, $6, $6, $6)
       ON CONFLICT (account_id) DO UPDATE
         SET name = excluded.name, chain = excluded.chain, wallet = excluded.wallet, published = true,
             published_at = COALESCE(CASE WHEN agent_profiles.published THEN agent_profiles.published_at END, excluded.published_at),
             updated_at = excluded.updated_at
       RETURNING ${columns}`,
      [id, req.accountId, name, req.chain, wallet, now]
    )
    return toProfile(rows[0]!)
  })

/** Unpublishes the account's profile; false when it has none. */
export const unpublishProfile = (accountId: string, nowMs: number): Effect.Effect<boolean, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe<{ id: string }>(
      `UPDATE agent_profiles SET published = false, published_at = NULL, updated_at = $2 WHERE account_id = $1 RETURNING id`,
      [accountId, new Date(nowMs)]
    )
  ).pipe(Effect.map((rows) => rows.length > 0))

/**
 * The account a user reference names: an account id, a handle (case-insensitive), or a wallet
 * (embedded first, then an active linked/imported/TEE wallet, then a profile's wallet).
 */
export const resolveUser = (ref: string): Effect.Effect<string | undefined, SqlError, SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = (rows: ReadonlyArray<{ account_id: string }>) => rows[0]?.account_id
    const byId = first(yield* sql.unsafe<{ account_id: string }>(`SELECT id AS account_id FROM accounts WHERE id = $1`, [ref]))
    if (byId !== undefined) return byId
    const byHandle = first(
      yield* sql.unsafe<{ account_id: string }>(`SELECT id AS account_id FROM accounts WHERE lower(handle) = lower($1) ORDER BY created_at LIMIT 1`, [ref])
    )
    if (byHandle !== undefined) return byHandle
    const evm = isAddress(ref, { strict: false })
    if (!evm && !SOLANA_ADDRESS.test(ref)) return undefined
    const chain = evm ? "evm" : "solana"
    const embedded = first(
      yield* sql.unsafe<{ account_id: string }>(
        `SELECT account_id FROM wp_wallets
         WHERE chain = $1 AND lower(address) = lower($2) AND (${evm ? "true" : "address = $2"}) AND custody = 'embedded'
         ORDER BY created_at LIMIT 1`,
        [chain, ref]
      )
    )
    if (embedded !== undefined) return embedded
    const linked = first(
      yield* sql.unsafe<{ account_id: string }>(
        `SELECT account_id FROM wallets WHERE chain = $1 AND address_key = $2 AND revoked_at IS NULL ORDER BY seq LIMIT 1`,
        [chain, addressKey(chain, ref)]
      )
    )
    if (linked !== undefined) return linked
    return first(
      yield* sql.unsafe<{ account_id: string }>(
        `SELECT account_id FROM agent_profiles WHERE chain = $1 AND wallet = $2 LIMIT 1`,
        [evm ? "hood" : "solana", evm ? getAddress(ref) : ref]
      )
    )
  })
