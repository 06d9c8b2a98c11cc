/**
 * The market-data service's per-account data in PostgreSQL (migration 0007): follows, rules,
 * own groups, the watchlist and the personal signals, with the caps of spec 4.5 / 8.
 *
 * Invariants:
 * - Caps hold across processes: every write that a cap bounds runs in one transaction under a
 *   per-account advisory lock (`md:<what>:<account>`), counts, then inserts. A refused write
 *   records nothing.
 * - Idempotent adds: following an address already followed (or watching one already watched, or
 *   adding a wallet already in the group) answers the existing row and counts nothing new.
 * - Personal signals: `seq` is the cursor; inserts run under one global advisory lock so a
 *   reader paging with `seq > after` never skips a row committed later with a smaller `seq`.
 *   One row per (account, signal id); the newest `retainPerAccount` rows per account are kept.
 * - Everything is the caller's account: another account's id is "not found".
 * - The account-facing methods fail only with `PersonalError` (a cap, a missing row, or storage,
 *   decided here); the writer's methods (`watchers`, `writeMatches`, `loadIndex`) keep `SqlError`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { failureFields, failureOf, storageFailure } from "../../domain/ServiceFailure.js"
import type { Pattern, Signal } from "../../domain/Signal.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { type AccountInterests, type MatchReason, PersonalIndex } from "./Matcher.js"
import type { RuleParams } from "./Rules.js"

export type PaidPlan = "pro" | "max"

/** Spec 4.5 / 8. */
export const CAPS = {
  follows: { pro: 25, max: 100 },
  rules: 20,
  groups: { pro: 1, max: 5 },
  groupWallets: 25,
  watchlist: 200
} as const

export const SIGNALS_PAGE_MAX = 200
export const SIGNALS_PAGE_DEFAULT = 50
/** Personal signals kept per account (newest first); older rows are deleted by the writer. */
export const SIGNALS_RETAIN_DEFAULT = 10_000
export const NAME_MAX = 64
export const LABEL_MAX = 64

export type CapKind = "follows" | "rules" | "groups" | "group_wallets" | "watchlist"
export type ResourceKind = "follow" | "rule" | "group" | "group_wallet" | "watchlist_entry"

export const PersonalErrorReason = Schema.Literal(
  /** Over a cap of spec 4.5 / 8 (`details`: `quota`, `used`). */
  "cap",
  /** Not the caller's, or no such row. */
  "not_found",
  /** The database could not answer; nothing was recorded. */
  "storage"
)
export type PersonalErrorReason = typeof PersonalErrorReason.Type

/** The message is the spec's plain text (`follow limit reached`, `rule not found`, ...). */
export class PersonalError extends Schema.TaggedError<PersonalError>()("PersonalError", { reason: PersonalErrorReason, ...failureFields }) {}

export const personalError = failureOf<PersonalError, PersonalErrorReason>(PersonalError)

const CAP_MESSAGE: Record<CapKind, string> = {
  follows: "follow limit reached",
  rules: "rule limit reached",
  groups: "group limit reached",
  group_wallets: "group wallet limit reached",
  watchlist: "watchlist limit reached"
}
const NOT_FOUND_MESSAGE: Record<ResourceKind, string> = {
  follow: "follow not found",
  rule: "rule not found",
  group: "group not found",
  group_wallet: "wallet not in group",
  watchlist_entry: "watchlist entry not found"
}

const cap = (what: CapKind, quota: number, used: number) => personalError("cap", CAP_MESSAGE[what], { details: { quota, used } })
const notFound = (what: ResourceKind) => personalError("not_found", NOT_FOUND_MESSAGE[what])
const storage = storageFailure("personal data", (e) => personalError("storage", `Personal data unavailable: ${e.message}`, { retryable: true }))

export interface FollowView {
  readonly id: string
  readonly chain: ChainId
  readonly address: string
  readonly created_at: string
}

export interface RuleView {
  readonly id: string
  readonly name: string
  readonly pattern: Pattern
  readonly wallet_id: string | null
  readonly params: RuleParams
  readonly created_at: string
}

export interface GroupWalletView {
  readonly chain: ChainId
  readonly address: string
  readonly added_at: string
}

export interface GroupView {
  readonly id: string
  readonly name: string
  readonly visibility: "private"
  readonly wallets: ReadonlyArray<GroupWalletView>
  readonly created_at: string
}

export interface WatchView {
  readonly id: string
  readonly chain: ChainId
  readonly address: string
  readonly label: string | null
  readonly created_at: string
}

export interface PersonalSignalRow {
  readonly cursor: string
  readonly signal: Signal
  readonly matched: ReadonlyArray<MatchReason>
}

export interface PersonalMatch {
  readonly accountId: string
  readonly signal: Signal
  readonly reasons: ReadonlyArray<MatchReason>
}

type Eff<A> = Effect.Effect<A, SqlError>
type Refusable<A> = Effect.Effect<A, PersonalError>

export interface PersonalStore {
  readonly follows: (accountId: string) => Refusable<ReadonlyArray<FollowView>>
  readonly addFollow: (accountId: string, plan: PaidPlan, chain: ChainId, address: string) => Refusable<{ follow: FollowView; created: boolean }>
  readonly removeFollow: (accountId: string, id: string) => Refusable<void>
  readonly rules: (accountId: string) => Refusable<ReadonlyArray<RuleView>>
  readonly addRule: (accountId: string, rule: { name: string; pattern: Pattern; walletId: string | null; params: RuleParams }) => Refusable<RuleView>
  readonly removeRule: (accountId: string, id: string) => Refusable<void>
  readonly groups: (accountId: string) => Refusable<ReadonlyArray<GroupView>>
  readonly createGroup: (accountId: string, plan: PaidPlan, name: string) => Refusable<GroupView>
  readonly deleteGroup: (accountId: string, id: string) => Refusable<void>
  readonly addGroupWallet: (accountId: string, groupId: string, chain: ChainId, address: string) => Refusable<{ group: GroupView; created: boolean }>
  readonly removeGroupWallet: (accountId: string, groupId: string, chain: ChainId, address: string) => Refusable<GroupView>
  readonly watchlist: (accountId: string) => Refusable<ReadonlyArray<WatchView>>
  readonly addWatch: (accountId: string, chain: ChainId, address: string, label: string | null) => Refusable<{ entry: WatchView; created: boolean }>
  readonly removeWatch: (accountId: string, id: string) => Refusable<void>
  /** Accounts watching this wallet (for the `tracked_wallet.*` webhook events). */
  readonly watchers: (chain: ChainId, address: string) => Eff<ReadonlyArray<{ accountId: string; label: string | null }>>
  /** A page after the cursor, oldest first; `next_after` is the last row's cursor (or `after` when empty). */
  readonly signals: (accountId: string, after: bigint | undefined, limit: number) => Refusable<{ rows: ReadonlyArray<PersonalSignalRow>; next_after: string | null }>
  /** Records matches (duplicates of (account, signal) skipped) and trims each account to `retain`; returns rows inserted. */
  readonly writeMatches: (matches: ReadonlyArray<PersonalMatch>, retain: number) => Eff<number>
  /** Every account's follows, rules and groups, indexed. */
  readonly loadIndex: () => Eff<PersonalIndex>
}

/** The same methods before storage is decided. */
type RawStore = {
  readonly [K in keyof PersonalStore]: PersonalStore[K] extends (...args: infer A) => Effect.Effect<infer X, infer E> ? (...args: A) => Effect.Effect<X, E | SqlError> : never
}

/** Time is the Effect `Clock`'s. */
export interface PersonalStoreOptions {
  readonly newId?: (prefix: string) => string
}

const defaultId = (prefix: string) => `${prefix}_${randomBytes(12).toString("hex")}`
const iso = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString()
const parseJson = <A>(v: unknown): A => (typeof v === "string" ? (JSON.parse(v) as A) : (v as A))

interface FollowRowDb {
  id: string
  chain: ChainId
  address: string
  created_at: Date
}
interface RuleRowDb {
  id: string
  name: string
  pattern: Pattern
  wallet_id: string | null
  params: unknown
  created_at: Date
}
interface GroupRowDb {
  id: string
  name: string
  created_at: Date
}
interface GroupWalletRowDb {
  group_id: string
  chain: ChainId
  address: string
  added_at: Date
}
interface WatchRowDb {
  id: string
  chain: ChainId
  address: string
  label: string | null
  created_at: Date
}

const followView = (r: FollowRowDb): FollowView => ({ id: r.id, chain: r.chain, address: r.address, created_at: iso(r.created_at) })
const ruleView = (r: RuleRowDb): RuleView => ({
  id: r.id,
  name: r.name,
  pattern: r.pattern,
  wallet_id: r.wallet_id,
  params: parseJson<RuleParams>(r.params),
  created_at: iso(r.created_at)
})
const watchView = (r: WatchRowDb): WatchView => ({ id: r.id, chain: r.chain, address: r.address, label: r.label, created_at: iso(r.created_at) })

export const makePersonalStore = (sql: SqlClient.SqlClient, options: PersonalStoreOptions = {}): PersonalStore => {
  const newId = options.newId ?? defaultId
  const lock = (what: string, accountId: string) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${`md:${what}:${accountId}`}, 0))`
  const count = (table: "md_follows" | "md_rules" | "md_groups" | "md_watchlist", accountId: string) =>
    Effect.map(sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql(table)} WHERE account_id = ${accountId}`, (rows) => Number(rows[0]?.n ?? 0))

  const groupsOf = (accountId: string, id?: string): Eff<Array<GroupView>> =>
    Effect.gen(function* () {
      const groups =
        id === undefined
          ? yield* sql<GroupRowDb>`SELECT id, name, created_at FROM md_groups WHERE account_id = ${accountId} ORDER BY created_at, id`
          : yield* sql<GroupRowDb>`SELECT id, name, created_at FROM md_groups WHERE account_id = ${accountId} AND id = ${id}`
      if (groups.length === 0) return []
      const wallets =
        id === undefined
          ? yield* sql<GroupWalletRowDb>`SELECT group_id, chain, address, added_at FROM md_group_wallets WHERE account_id = ${accountId} ORDER BY seq`
          : yield* sql<GroupWalletRowDb>`SELECT group_id, chain, address, added_at FROM md_group_wallets WHERE account_id = ${accountId} AND group_id = ${id} ORDER BY seq`
      return groups.map((g) => ({
        id: g.id,
        name: g.name,
        visibility: "private" as const,
        wallets: wallets.filter((w) => w.group_id === g.id).map((w) => ({ chain: w.chain, address: w.address, added_at: iso(w.added_at) })),
        created_at: iso(g.created_at)
      }))
    })

  const oneGroup = (accountId: string, id: string): Effect.Effect<GroupView, SqlError | PersonalError> =>
    Effect.flatMap(groupsOf(accountId, id), (gs) => (gs[0] === undefined ? Effect.fail(notFound("group")) : Effect.succeed(gs[0])))

  /** Every watchlist add and remove counts a change in its own transaction (the tracked-wallets follower reloads on a new count). */
  const bumpWatchlistVersion = Effect.suspend(() => Effect.asVoid(sql`UPDATE md_watchlist_version SET version = version + 1 WHERE id = 1`))
  const deleted = (what: ResourceKind) => (rows: ReadonlyArray<unknown>) => (rows.length === 0 ? Effect.fail(notFound(what)) : Effect.void)

  const ctx: StoreCtx = { sql, newId, lock, count, groupsOf, oneGroup, bumpWatchlistVersion, deleted }
  const raw: RawStore = { ...listMethods(ctx), ...matchMethods(ctx) }

  /** Storage decided once, on every account-facing method. */
  const wrap =
    <A extends ReadonlyArray<unknown>, X, E>(f: (...args: A) => Effect.Effect<X, E | SqlError>) =>
    (...args: A) =>
      storage(f(...args))
  return {
    follows: wrap(raw.follows),
    addFollow: wrap(raw.addFollow),
    removeFollow: wrap(raw.removeFollow),
    rules: wrap(raw.rules),
    addRule: wrap(raw.addRule),
    removeRule: wrap(raw.removeRule),
    groups: wrap(raw.groups),
    createGroup: wrap(raw.createGroup),
    deleteGroup: wrap(raw.deleteGroup),
    addGroupWallet: wrap(raw.addGroupWallet),
    removeGroupWallet: wrap(raw.removeGroupWallet),
    watchlist: wrap(raw.watchlist),
    addWatch: wrap(raw.addWatch),
    removeWatch: wrap(raw.removeWatch),
    signals: wrap(raw.signals),
    watchers: raw.watchers,
    writeMatches: raw.writeMatches,
    loadIndex: raw.loadIndex
  }
}

/** What the store's method groups work over. */
interface StoreCtx {
  readonly sql: SqlClient.SqlClient
  readonly newId: (prefix: string) => string
  readonly lock: (what: string, accountId: string) => Effect.Effect<unknown, SqlError>
  readonly count: (table: "md_follows" | "md_rules" | "md_groups" | "md_watchlist", accountId: string) => Effect.Effect<number, SqlError>
  readonly groupsOf: (accountId: string, id?: string) => Eff<Array<GroupView>>
  readonly oneGroup: (accountId: string, id: string) => Effect.Effect<GroupView, SqlError | PersonalError>
  readonly bumpWatchlistVersion: Effect.Effect<void, SqlError>
  readonly deleted: (what: ResourceKind) => (rows: ReadonlyArray<unknown>) => Effect.Effect<void, PersonalError>
}

/** An account's lists (follows, rules, groups and their wallets, the watchlist), each bounded by the plan. */
const listMethods = (ctx: StoreCtx): Pick<RawStore, "follows" | "addFollow" | "removeFollow" | "rules" | "addRule" | "removeRule" | "groups" | "createGroup" | "deleteGroup" | "addGroupWallet" | "removeGroupWallet" | "watchlist" | "addWatch" | "removeWatch"> => {
  const { sql, newId, lock, count, groupsOf, oneGroup, bumpWatchlistVersion, deleted } = ctx
  return {
    follows: (accountId) =>
      Effect.map(
        sql<FollowRowDb>`SELECT id, chain, address, created_at FROM md_follows WHERE account_id = ${accountId} ORDER BY created_at, id`,
        (rows) => rows.map(followView)
      ),
    addFollow: (accountId, plan, chain, address) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lock("follows", accountId)
          const existing = yield* sql<FollowRowDb>`
            SELECT id, chain, address, created_at FROM md_follows WHERE account_id = ${accountId} AND chain = ${chain} AND address = ${address}`
          if (existing[0] !== undefined) return { follow: followView(existing[0]), created: false }
          const quota = CAPS.follows[plan]
          const used = yield* count("md_follows", accountId)
          if (used >= quota) return yield* cap("follows", quota, used)
          const row = { id: newId("fol"), chain, address, created_at: new Date(yield* Clock.currentTimeMillis) }
          yield* sql`INSERT INTO md_follows (id, account_id, chain, address, created_at) VALUES (${row.id}, ${accountId}, ${chain}, ${address}, ${row.created_at})`
          return { follow: followView(row), created: true }
        })
      ),
    removeFollow: (accountId, id) =>
      Effect.flatMap(sql`DELETE FROM md_follows WHERE account_id = ${accountId} AND id = ${id} RETURNING id`, deleted("follow")),
    rules: (accountId) =>
      Effect.map(
        sql<RuleRowDb>`SELECT id, name, pattern, wallet_id, params, created_at FROM md_rules WHERE account_id = ${accountId} ORDER BY created_at, id`,
        (rows) => rows.map(ruleView)
      ),
    addRule: (accountId, rule) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lock("rules", accountId)
          const used = yield* count("md_rules", accountId)
          if (used >= CAPS.rules) return yield* cap("rules", CAPS.rules, used)
          const row: RuleRowDb = { id: newId("rul"), name: rule.name, pattern: rule.pattern, wallet_id: rule.walletId, params: rule.params, created_at: new Date(yield* Clock.currentTimeMillis) }
          yield* sql`
            INSERT INTO md_rules (id, account_id, name, pattern, wallet_id, params, created_at)
            VALUES (${row.id}, ${accountId}, ${row.name}, ${row.pattern}, ${row.wallet_id}, ${JSON.stringify(rule.params)}::jsonb, ${row.created_at})`
          return ruleView(row)
        })
      ),
    removeRule: (accountId, id) => Effect.flatMap(sql`DELETE FROM md_rules WHERE account_id = ${accountId} AND id = ${id} RETURNING id`, deleted("rule")),
    groups: (accountId) => groupsOf(accountId),
    createGroup: (accountId, plan, name) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lock("groups", accountId)
          const quota = CAPS.groups[plan]
          const used = yield* count("md_groups", accountId)
          if (used >= quota) return yield* cap("groups", quota, used)
          const id = newId("grp_own")
          const at = new Date(yield* Clock.currentTimeMillis)
          yield* sql`INSERT INTO md_groups (id, account_id, name, created_at) VALUES (${id}, ${accountId}, ${name}, ${at})`
          return { id, name, visibility: "private" as const, wallets: [], created_at: at.toISOString() }
        })
      ),
    deleteGroup: (accountId, id) => Effect.flatMap(sql`DELETE FROM md_groups WHERE account_id = ${accountId} AND id = ${id} RETURNING id`, deleted("group")),
    addGroupWallet: (accountId, groupId, chain, address) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lock("groups", accountId)
          const group = yield* oneGroup(accountId, groupId)
          if (group.wallets.some((w) => w.chain === chain && w.address === address)) return { group, created: false }
          if (group.wallets.length >= CAPS.groupWallets) return yield* cap("group_wallets", CAPS.groupWallets, group.wallets.length)
          yield* sql`
            INSERT INTO md_group_wallets (group_id, account_id, chain, address, added_at)
            VALUES (${groupId}, ${accountId}, ${chain}, ${address}, ${new Date(yield* Clock.currentTimeMillis)})`
          return { group: yield* oneGroup(accountId, groupId), created: true }
        })
      ),
    removeGroupWallet: (accountId, groupId, chain, address) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lock("groups", accountId)
          yield* oneGroup(accountId, groupId)
          const rows = yield* sql`
            DELETE FROM md_group_wallets WHERE account_id = ${accountId} AND group_id = ${groupId} AND chain = ${chain} AND address = ${address} RETURNING address`
          if (rows.length === 0) return yield* notFound("group_wallet")
          return yield* oneGroup(accountId, groupId)
        })
      ),
    watchlist: (accountId) =>
      Effect.map(
        sql<WatchRowDb>`SELECT id, chain, address, label, created_at FROM md_watchlist WHERE account_id = ${accountId} ORDER BY created_at, id`,
        (rows) => rows.map(watchView)
      ),
    addWatch: (accountId, chain, address, label) =>
      sql.withTransaction(
        Effect.gen(function* () {
          yield* lock("watchlist", accountId)
          const existing = yield* sql<WatchRowDb>`
            SELECT id, chain, address, label, created_at FROM md_watchlist WHERE account_id = ${accountId} AND chain = ${chain} AND address = ${address}`
          if (existing[0] !== undefined) return { entry: watchView(existing[0]), created: false }
          const used = yield* count("md_watchlist", accountId)
          if (used >= CAPS.watchlist) return yield* cap("watchlist", CAPS.watchlist, used)
          const row: WatchRowDb = { id: newId("wat"), chain, address, label, created_at: new Date(yield* Clock.currentTimeMillis) }
          yield* sql`
            INSERT INTO md_watchlist (id, account_id, chain, address, label, created_at)
            VALUES (${row.id}, ${accountId}, ${chain}, ${address}, ${label}, ${row.created_at})`
          yield* bumpWatchlistVersion
          return { entry: watchView(row), created: true }
        })
      ),
    removeWatch: (accountId, id) =>
      sql.withTransaction(
        Effect.flatMap(sql`DELETE FROM md_watchlist WHERE account_id = ${accountId} AND id = ${id} RETURNING id`, (rows) =>
          Effect.zipRight(rows.length > 0 ? bumpWatchlistVersion : Effect.void, deleted("watchlist_entry")(rows))
        )
      )
  }
}

/** What the matcher reads and writes: who watches a wallet, the stored personal signals, the interest index. */
const matchMethods = (ctx: StoreCtx): Pick<RawStore, "watchers" | "signals" | "writeMatches" | "loadIndex"> => {
  const { sql } = ctx
  return {
    watchers: (chain, address) =>
      Effect.map(
        sql<{ account_id: string; label: string | null }>`SELECT account_id, label FROM md_watchlist WHERE chain = ${chain} AND address = ${address} ORDER BY account_id`,
        (rows) => rows.map((r) => ({ accountId: r.account_id, label: r.label }))
      ),
    signals: (accountId, after, limit) =>
      Effect.map(
        sql<{ seq: string | number | bigint; signal: unknown; reasons: unknown }>`
          SELECT seq, signal, reasons FROM md_personal_signals
          WHERE account_id = ${accountId} AND seq > ${(after ?? 0n).toString()}::bigint
          ORDER BY seq LIMIT ${limit}`,
        (rows) => {
          const out = rows.map((r) => ({ cursor: String(r.seq), signal: parseJson<Signal>(r.signal), matched: parseJson<Array<MatchReason>>(r.reasons) }))
          const last = out[out.length - 1]
          return { rows: out, next_after: last !== undefined ? last.cursor : after !== undefined ? after.toString() : null }
        }
      ),
    writeMatches: (matches, retain) =>
      matches.length === 0
        ? Effect.succeed(0)
        : sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`SELECT pg_advisory_xact_lock(hashtextextended('md:personal_signals', 0))`
              const at = new Date(yield* Clock.currentTimeMillis)
              let inserted = 0
              for (const m of matches) {
                const rows = yield* sql`
                  INSERT INTO md_personal_signals (account_id, signal_id, signal, reasons, created_at)
                  VALUES (${m.accountId}, ${m.signal.id}, ${JSON.stringify(m.signal)}::jsonb, ${JSON.stringify(m.reasons)}::jsonb, ${at})
                  ON CONFLICT (account_id, signal_id) DO NOTHING
                  RETURNING seq`
                inserted += rows.length
              }
              for (const accountId of new Set(matches.map((m) => m.accountId))) {
                yield* sql`
                  DELETE FROM md_personal_signals WHERE account_id = ${accountId} AND seq < (
                    SELECT seq FROM md_personal_signals WHERE account_id = ${accountId} ORDER BY seq DESC OFFSET ${retain - 1} LIMIT 1)`
              }
              return inserted
            })
          ),
    loadIndex: () =>
      Effect.gen(function* () {
        const [follows, rules, wallets] = yield* Effect.all([
          sql<{ account_id: string; id: string; chain: ChainId; address: string }>`SELECT account_id, id, chain, address FROM md_follows`,
          sql<{ account_id: string; id: string; pattern: Pattern; wallet_id: string | null; params: unknown }>`
            SELECT account_id, id, pattern, wallet_id, params FROM md_rules`,
          sql<{ account_id: string; group_id: string; chain: ChainId; address: string }>`
            SELECT account_id, group_id, chain, address FROM md_group_wallets ORDER BY seq`
        ])
        const accounts = new Map<string, { follows: Array<AccountInterests["follows"][number]>; rules: Array<AccountInterests["rules"][number]>; groups: Map<string, Array<{ chain: ChainId; address: string }>> }>()
        const of = (a: string) => {
          let x = accounts.get(a)
          if (x === undefined) accounts.set(a, (x = { follows: [], rules: [], groups: new Map() }))
          return x
        }
        for (const f of follows) of(f.account_id).follows.push({ id: f.id, chain: f.chain, address: f.address })
        for (const r of rules) of(r.account_id).rules.push({ id: r.id, pattern: r.pattern, walletId: r.wallet_id, params: parseJson<RuleParams>(r.params) })
        for (const w of wallets) {
          const g = of(w.account_id).groups
          const list = g.get(w.group_id) ?? []
          list.push({ chain: w.chain, address: w.address })
          g.set(w.group_id, list)
        }
        const out = new Map<string, AccountInterests>()
        for (const [a, x] of accounts) out.set(a, { follows: x.follows, rules: x.rules, groups: [...x.groups].map(([id, ws]) => ({ id, wallets: ws })) })
        return new PersonalIndex(out)
      })
  }
}
