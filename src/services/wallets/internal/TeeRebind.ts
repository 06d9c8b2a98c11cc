/**
 * TEE rebind (spec document 2, 4.1): the owner moves TEE wallets to another key of the account,
 * previewing first (`dryRun`) and committing with the bindings the preview showed (`expect`);
 * the audit history reads back newest first. The decisions are in `RebindRules`.
 *
 * Invariants:
 * - A rebind commit is one transaction: every check re-runs inside it, then only the bindings
 *   change (plus audit and assignment rows). A preview writes nothing.
 * - Chain reads for forwarded signs happen before the transaction; what they settle is a fact and
 *   is kept whether or not the rebind goes ahead. An incomplete read changes nothing.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Either } from "effect"
import type { WalletChain } from "../ChainKeys.js"
import type { KeyInfo, Principal } from "../Principal.js"
import { rebindError, type RebindErrorReason } from "../WalletError.js"
import { REBIND_WALLETS_MAX, SELECTED_SCOPE_ASSIGNMENTS_MAX } from "../WalletLimits.js"
import {
  type ClaimRow,
  forwardedClaimAction,
  forwardsOpen,
  openBuilds,
  reboundView,
  type RebindWalletProblem,
  resolveSelectors,
  staleBindings,
  teeRowProblem,
  toKeyView,
  unchangedView
} from "./RebindRules.js"
import type { ClaimOutcome } from "./SignClaims.js"
import { iso, randomId, WALLET_COLUMNS, type WalletContext, type WalletRow, type WalletRows } from "./WalletRows.js"
import { keyUnfit, type KeyUnfitReason } from "./TeeWallets.js"

/** Reads whether a signed (forwarded) transaction settled on chain. */
export interface ClaimReconciler {
  readonly outcome: (claim: {
    readonly claimId: string
    readonly chain: WalletChain
    readonly signature: string
  }) => Effect.Effect<"confirmed" | "failed" | "pending", "unavailable">
}

/** No chain reader wired: a forwarded sign stays open until settled or provably expired. */
export const pendingReconciler: ClaimReconciler = { outcome: () => Effect.succeed("pending") }

export type RebindInput =
  | { readonly _tag: "Preview"; readonly toKeyPrefix: string; readonly wallets: ReadonlyArray<string>; readonly labelPrefix?: string }
  | { readonly _tag: "Commit"; readonly toKeyPrefix: string; readonly walletIds: ReadonlyArray<string>; readonly expect: Readonly<Record<string, string>> }

/** What a rebind moved or would move (`dryRun`: a preview, nothing written). */
export interface RebindResult {
  readonly dryRun: boolean
  readonly toKey: ReturnType<typeof toKeyView>
  readonly rebound: ReadonlyArray<ReturnType<typeof reboundView>>
  readonly unchanged: ReadonlyArray<ReturnType<typeof unchangedView>>
}

/** One audit row of the history, newest first; `actorDevicePrefix` only for a device. */
export interface RebindRecord {
  readonly auditId: string
  readonly walletId: string
  readonly address: string | null
  readonly chain: string | null
  readonly fromKeyPrefix: string
  readonly toKeyPrefix: string
  readonly actor: string
  readonly actorDevicePrefix?: string | null
  readonly at: string
}

const walletReason: Record<RebindWalletProblem["reason"], RebindErrorReason> = {
  not_found: "wallet_not_found",
  not_tee: "wallet_not_tee",
  inactive: "wallet_inactive",
  authority_not_verified: "wallet_authority_not_verified",
  ambiguous: "wallet_ambiguous"
}

const targetReason: Record<KeyUnfitReason, RebindErrorReason> = {
  not_found: "target_not_found",
  revoked: "target_revoked",
  expired: "target_expired",
  test_key: "target_test_key",
  missing_scope: "target_missing_scope"
}

const walletInvalid = ({ reason, message, ...at }: RebindWalletProblem) => rebindError(walletReason[reason], message, { details: at })

const tooMany = (count: number) =>
  rebindError("too_many", `A rebind moves 1 to ${REBIND_WALLETS_MAX} wallets; this one selects ${count}`, {
    details: { max: REBIND_WALLETS_MAX, count }
  })

/**
 * What a rebind checks before it moves anything: the selected wallets' open sign claims (settled
 * from the chain when asked), the target key's launch allowance and scope room, and the target.
 */
const makeRebindChecks = (
  ctx: WalletContext,
  settleClaim: (claimId: string, outcome: ClaimOutcome) => Effect.Effect<void, SqlError>
) => {
  const { sql } = ctx

  /** Open builds, then forwarded signs (reconciled against the chain), for the wallets that would move. */
  const checkClaims = (walletIds: ReadonlyArray<string>, persist: boolean) =>
    Effect.gen(function* () {
      if (walletIds.length === 0) return
      const nowMs = yield* ctx.clock.currentTimeMillis
      const claims = yield* sql<ClaimRow>`
        SELECT id, wallet_id, chain, state, expires_at, tx_expires_at, signature FROM sign_claims
        WHERE wallet_id IN ${sql.in([...walletIds])} AND state IN ('open', 'signed')`
      const building = openBuilds(claims, nowMs)
      if (building !== undefined) {
        return yield* rebindError("build_open", "A build for a wallet is inside its 30-minute claim window", { retryable: true, details: { ...building } })
      }
      const pending: Array<ClaimRow> = []
      for (const c of claims) {
        if (c.state !== "signed") continue
        if (forwardedClaimAction(c, nowMs) === "expired") {
          if (persist) yield* settleClaim(c.id, "expired")
          continue
        }
        const outcome = yield* ctx.reconciler
          .outcome({ claimId: c.id, chain: c.chain, signature: c.signature ?? "" })
          .pipe(
            Effect.catchAll(() =>
              Effect.fail(
                rebindError("reconcile_incomplete", "Could not read the chain for a forwarded sign; nothing changed, retry", {
                  retryable: true,
                  details: { walletIds: [c.wallet_id] }
                })
              )
            )
          )
        if (outcome === "pending") pending.push(c)
        else if (persist) yield* settleClaim(c.id, outcome)
      }
      const open = forwardsOpen(pending)
      if (open !== undefined) {
        return yield* rebindError(
          open.reason === "unexpirable" ? "forward_unexpirable" : "forward_pending",
          "A forwarded sign is not yet confirmed, failed or provably expired",
          { details: { walletIds: open.walletIds } }
        )
      }
    })

  const allowLaunchAfter = (accountId: string, key: KeyInfo, movingAllow: number) =>
    Effect.map(
      sql<{ n: number }>`
        SELECT count(*)::int AS n FROM wallets
        WHERE account_id = ${accountId} AND bound_key_id = ${key.keyId} AND kind = 'tee' AND allow_launch AND revoked_at IS NULL`,
      (found) => (found[0]?.n ?? 0) + movingAllow
    )

  const checkScopeRoom = (key: KeyInfo, moving: ReadonlyArray<WalletRow>) =>
    Effect.gen(function* () {
      if (key.walletScope !== "selected" || moving.length === 0) return
      const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM key_wallet_assignments WHERE key_id = ${key.keyId}`
      const already = yield* sql<{ wallet_id: string }>`
        SELECT wallet_id FROM key_wallet_assignments WHERE key_id = ${key.keyId} AND wallet_id IN ${sql.in(moving.map((r) => r.id))}`
      if ((count?.n ?? 0) + moving.length - already.length > SELECTED_SCOPE_ASSIGNMENTS_MAX) {
        return yield* rebindError("scope_full", `The target key's selected wallet scope would pass ${SELECTED_SCOPE_ASSIGNMENTS_MAX} assignments`, {
          details: { max: SELECTED_SCOPE_ASSIGNMENTS_MAX }
        })
      }
    })

  const resolveTarget = (p: Principal, prefix: string) =>
    Effect.gen(function* () {
      const key = yield* ctx.keys.findByPrefix(p.accountId, prefix)
      const unfit = keyUnfit(key, yield* ctx.clock.currentTimeMillis)
      if (unfit !== undefined || key === undefined) {
        return yield* rebindError(targetReason[unfit?.reason ?? "not_found"], unfit?.message ?? "No key with this prefix on this account")
      }
      return key
    })
  return { checkClaims, allowLaunchAfter, checkScopeRoom, resolveTarget }
}

export const makeTeeRebind = (
  ctx: WalletContext,
  rows: WalletRows,
  settleClaim: (claimId: string, outcome: ClaimOutcome) => Effect.Effect<void, SqlError>
) => {
  const { sql } = ctx
  const { checkClaims, allowLaunchAfter, checkScopeRoom, resolveTarget } = makeRebindChecks(ctx, settleClaim)

  const preview = (p: Principal, input: Extract<RebindInput, { _tag: "Preview" }>) =>
    Effect.gen(function* () {
      if (input.wallets.length > REBIND_WALLETS_MAX) return yield* tooMany(input.wallets.length)
      const key = yield* resolveTarget(p, input.toKeyPrefix)
      const selected = resolveSelectors(yield* rows.accountRows(p.accountId), input.wallets, input.labelPrefix)
      if (Either.isLeft(selected)) return yield* walletInvalid(selected.left)
      const chosen = selected.right
      if (chosen.length === 0 || chosen.length > REBIND_WALLETS_MAX) return yield* tooMany(chosen.length)
      const moving = chosen.filter((r) => r.bound_key_id !== key.keyId)
      const unchanged = chosen.filter((r) => r.bound_key_id === key.keyId)
      yield* checkClaims(moving.map((r) => r.id), false)
      yield* checkScopeRoom(key, moving)
      const allow = yield* allowLaunchAfter(p.accountId, key, moving.filter((r) => r.allow_launch).length)
      const response: RebindResult = {
        dryRun: true,
        toKey: toKeyView(key, allow),
        rebound: moving.map((r) => reboundView(r)),
        unchanged: unchanged.map(unchangedView)
      }
      return response
    })

  const commit = (p: Principal, input: Extract<RebindInput, { _tag: "Commit" }>) =>
    Effect.gen(function* () {
      const ids = [...new Set(input.walletIds)]
      if (ids.length === 0 || ids.length > REBIND_WALLETS_MAX) return yield* tooMany(ids.length)
      const key = yield* resolveTarget(p, input.toKeyPrefix)
      // Chain reads happen before the transaction (settlements are facts, kept either way).
      const pre = (yield* rows.accountRows(p.accountId)).filter((r) => ids.includes(r.id) && r.bound_key_id !== key.keyId)
      yield* checkClaims(pre.map((r) => r.id), true)
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* rows.lockAccount(p.accountId)
          const locked = yield* sql<WalletRow>`
            SELECT ${sql.literal(WALLET_COLUMNS)} FROM wallets WHERE account_id = ${p.accountId} AND id IN ${sql.in(ids)} FOR UPDATE`
          const byId = new Map(locked.map((r) => [r.id, r]))
          for (const id of ids) {
            const row = byId.get(id)
            if (row === undefined) return yield* walletInvalid({ reason: "not_found", message: `No wallet ${id} on this account`, walletId: id })
            const bad = teeRowProblem(row)
            if (bad !== undefined) return yield* walletInvalid(bad)
          }
          const stale = staleBindings(ids, byId, input.expect)
          if (stale !== undefined) return yield* rebindError("stale", "A binding changed since the preview; preview again", { details: { ...stale } })
          const selected = ids.map((id) => byId.get(id) as WalletRow)
          const moving = selected.filter((r) => r.bound_key_id !== key.keyId)
          const unchanged = selected.filter((r) => r.bound_key_id === key.keyId)
          yield* checkClaims(moving.map((r) => r.id), true)
          yield* checkScopeRoom(key, moving)
          const at = rows.now()
          const rebound: Array<ReturnType<typeof reboundView>> = []
          for (const r of moving) {
            const auditId = randomId("rbd")
            yield* sql`UPDATE wallets SET bound_key_id = ${key.keyId}, bound_key_prefix = ${key.keyPrefix} WHERE id = ${r.id}`
            yield* sql`
              INSERT INTO tee_rebinds (id, account_id, wallet_id, from_key_id, from_key_prefix, to_key_id, to_key_prefix, actor, actor_device_prefix, at)
              VALUES (${auditId}, ${p.accountId}, ${r.id}, ${r.bound_key_id ?? ""}, ${r.bound_key_prefix ?? ""}, ${key.keyId}, ${key.keyPrefix},
                ${p.credential === "device" ? "device" : "session"}, ${p.credential === "device" ? p.devicePrefix : null}, ${at})`
            if (r.bound_key_id !== null) yield* sql`DELETE FROM key_wallet_assignments WHERE key_id = ${r.bound_key_id} AND wallet_id = ${r.id}`
            if (key.walletScope === "selected") {
              yield* sql`
                INSERT INTO key_wallet_assignments (key_id, wallet_id, account_id, created_at) VALUES (${key.keyId}, ${r.id}, ${p.accountId}, ${at})
                ON CONFLICT (key_id, wallet_id) DO NOTHING`
            }
            rebound.push(reboundView(r, auditId))
          }
          const allow = yield* allowLaunchAfter(p.accountId, key, 0)
          const response: RebindResult = {
            dryRun: false,
            toKey: toKeyView(key, allow),
            rebound,
            unchanged: unchanged.map(unchangedView)
          }
          return response
        })
      )
    })

  const rebind = (p: Principal, input: RebindInput) =>
    (input._tag === "Preview" ? preview(p, input) : commit(p, input)).pipe(Effect.withSpan("WalletService.rebind", { attributes: { mode: input._tag } }))

  const rebinds = (p: Principal, walletId: string | undefined, limit: number) =>
    Effect.map(
      sql<{
        id: string
        wallet_id: string
        address: string | null
        chain: string | null
        from_key_prefix: string
        to_key_prefix: string
        actor: string
        actor_device_prefix: string | null
        at: Date
      }>`
        SELECT r.id, r.wallet_id, w.address, w.chain, r.from_key_prefix, r.to_key_prefix, r.actor, r.actor_device_prefix, r.at
        FROM tee_rebinds r LEFT JOIN wallets w ON w.id = r.wallet_id
        WHERE r.account_id = ${p.accountId} ${walletId !== undefined ? sql`AND r.wallet_id = ${walletId}` : sql``}
        ORDER BY r.seq DESC LIMIT ${limit}`,
      (found) =>
        found.map((r): RebindRecord => ({
          auditId: r.id,
          walletId: r.wallet_id,
          address: r.address,
          chain: r.chain,
          fromKeyPrefix: r.from_key_prefix,
          toKeyPrefix: r.to_key_prefix,
          actor: r.actor,
          ...(r.actor === "device" ? { actorDevicePrefix: r.actor_device_prefix } : {}),
          at: iso(r.at)
        }))
    )

  return { rebind, rebinds }
}
