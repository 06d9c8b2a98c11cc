/**
 * The account's live tier and the tier snapshot (`GET /api/v1/agent/tier`, spec 2.2).
 *
 * Holdings are summed over the account's eligible Solana wallets (from the wallet side, at most
 * 200) through `BalanceReader`; the per-account sum is cached for `holdingsTtlMs` (default 60 s)
 * in a bounded LRU, on top of the reader's own cache, so a drop below both thresholds shows
 * within a few minutes (the spec allows 5). Only accounts that entitlements leave on Free are
 * read at all on the request path. A failed read counts as no holdings there (fail closed: never
 * Pro on a guess) and is retried after `failureTtlMs`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { planById, type Plan, type PlanId, resolvePlans } from "../../domain/Plans.js"
import { TtlLru } from "../keys/TtlLru.js"
import { type Account, feeTotals, type FeeTotal, findAccount } from "./AccountRepository.js"
import { AccountWallets } from "./AccountWallets.js"
import { BalanceReader } from "./BalanceReader.js"
import { cndl, DefaultTierThresholds, type Holdings, maxStatus, needsHoldings, resolveTier, type TierThresholds } from "./Tier.js"

export interface TierSnapshot {
  readonly tier: PlanId
  readonly liveTier: PlanId
  readonly stakedCndl: string | null
  readonly heldCndl: string | null
  readonly thresholds: { readonly minStakedCndl: number; readonly minHeldCndl: number; readonly graceMs: number }
  readonly grace: { readonly active: false; readonly startedAt: null; readonly endsAt: null }
  readonly maxTierExpiresAt: number | null
  readonly maxExpired: boolean
  readonly maxExpiredAt?: number
  readonly maxExpiredSource?: string
  readonly maxExpiredNotice?: string
  readonly renewalUrl?: string
  readonly feeBps: number
  readonly feeTotals: ReadonlyArray<FeeTotal>
  readonly planTable: ReadonlyArray<Plan>
  readonly maxPricing: { readonly usdMonthly: string; readonly display: string; readonly promoMaxDays: number }
  readonly proPricing: { readonly usdMonthly: string; readonly display: string; readonly payableWithPlatformToken: boolean } | null
  readonly tierCaps: Plan["limits"]
  readonly checkedAt: number
}

export interface TierServiceShape {
  readonly plans: ReadonlyArray<Plan>
  readonly thresholds: TierThresholds
  /** The tier the request path enforces (holdings cached; a failed read is no holdings). */
  readonly tierOf: (account: Account, nowMs: number) => Effect.Effect<PlanId>
  readonly snapshot: (account: Account, nowMs: number) => Effect.Effect<TierSnapshot, SqlError>
  readonly plan: (tier: PlanId) => Plan
  readonly account: (accountId: string) => Effect.Effect<Account | undefined, SqlError>
  /** The account's platform-token holdings (raw, summed over its eligible wallets; cached); undefined when unreadable. */
  readonly holdings: (accountId: string, nowMs: number) => Effect.Effect<Holdings | undefined>
}

export class TierService extends Context.Tag("curvestream/TierService")<TierService, TierServiceShape>() {}

export interface TierServiceOptions {
  readonly plans: ReadonlyArray<Plan>
  readonly thresholds: TierThresholds
  /** Where a lapsed Max account renews. */
  readonly renewalUrl: string
  /** Whether Pro is sold (false: `proPricing` is null). */
  readonly proSold?: boolean
  readonly holdingsTtlMs?: number
  readonly failureTtlMs?: number
  readonly maxAccountsCached?: number
}

const WALLET_READ_CONCURRENCY = 8

export const layer = (options: TierServiceOptions): Layer.Layer<TierService, never, AccountWallets | BalanceReader | SqlClient.SqlClient> =>
  Layer.effect(
    TierService,
    Effect.gen(function* () {
      const wallets = yield* AccountWallets
      const balances = yield* BalanceReader
      const context = yield* Effect.context<SqlClient.SqlClient>()
      const cache = new TtlLru<string, Holdings | "failed">({ maxEntries: options.maxAccountsCached ?? 50_000, ttlMs: options.holdingsTtlMs ?? 60_000 })

      const readHoldings = (accountId: string): Effect.Effect<Holdings, unknown> =>
        Effect.gen(function* () {
          const owners = (yield* wallets.eligibleSolanaWallets(accountId)).slice(0, 200)
          const each = yield* Effect.forEach(
            owners,
            (owner) => Effect.all([balances.stakedBalance("solana", owner), balances.platformTokenBalance("solana", owner)]),
            { concurrency: WALLET_READ_CONCURRENCY }
          )
          return each.reduce<Holdings>((acc, [s, h]) => ({ stakedRaw: acc.stakedRaw + s, heldRaw: acc.heldRaw + h }), { stakedRaw: 0n, heldRaw: 0n })
        })

      const holdings = (accountId: string, nowMs: number): Effect.Effect<Holdings | undefined> =>
        Effect.suspend(() => {
          const hit = cache.get(accountId, nowMs)
          if (hit !== undefined) return Effect.succeed(hit === "failed" ? undefined : hit)
          return readHoldings(accountId).pipe(
            Effect.tap((h) => Effect.sync(() => cache.set(accountId, h, nowMs))),
            Effect.catchAll((e) =>
              Effect.logWarning("platform-token balances unreadable; counting no holdings", e).pipe(
                Effect.zipRight(Effect.sync(() => cache.set(accountId, "failed", nowMs, options.failureTtlMs ?? 30_000))),
                Effect.as(undefined)
              )
            )
          )
        })

      const plan = (tier: PlanId) => planById(options.plans, tier)

      const tierOf = (account: Account, nowMs: number): Effect.Effect<PlanId> =>
        needsHoldings(account, nowMs)
          ? Effect.map(holdings(account.id, nowMs), (h) => resolveTier(account, h, options.thresholds, nowMs))
          : Effect.succeed(resolveTier(account, undefined, options.thresholds, nowMs))

      const snapshot = (account: Account, nowMs: number): Effect.Effect<TierSnapshot, SqlError> =>
        Effect.gen(function* () {
          const h = yield* holdings(account.id, nowMs)
          const tier = resolveTier(account, h, options.thresholds, nowMs)
          const max = maxStatus(account, nowMs)
          const totals = yield* Effect.provide(feeTotals(account.id), context)
          const maxPlan = plan("max")
          const proPlan = plan("pro")
          return {
            tier,
            liveTier: tier,
            stakedCndl: h === undefined ? null : cndl(h.stakedRaw),
            heldCndl: h === undefined ? null : cndl(h.heldRaw),
            thresholds: { ...options.thresholds },
            grace: { active: false as const, startedAt: null, endsAt: null },
            maxTierExpiresAt: max.maxTierExpiresAt,
            maxExpired: max.maxExpired,
            ...(max.maxExpired && max.maxExpiredAt !== undefined
              ? {
                  maxExpiredAt: max.maxExpiredAt,
                  maxExpiredSource: max.maxExpiredSource ?? "team",
                  maxExpiredNotice: `Max ended on ${new Date(max.maxExpiredAt).toISOString()}; this account is on ${plan(tier).name} now.`,
                  renewalUrl: options.renewalUrl
                }
              : {}),
            feeBps: plan(tier).feeBps,
            feeTotals: totals,
            planTable: options.plans,
            maxPricing: { usdMonthly: maxPlan.price.usdMonthly, display: maxPlan.price.display, promoMaxDays: maxPlan.promoMaxDays },
            proPricing: options.proSold === false ? null : { ...proPlan.price },
            tierCaps: plan(tier).limits,
            checkedAt: nowMs
          }
        })

      return {
        plans: options.plans,
        thresholds: options.thresholds,
        tierOf,
        snapshot,
        plan,
        account: (id) => Effect.provide(findAccount(id), context),
        holdings
      }
    })
  )

/**
 * The real tier service over `Database.layerTest`: the default plans and thresholds, holdings
 * read on every call (no cache). The wallet side and the balances are the test's (their `layerTest`).
 */
export const layerTest: Layer.Layer<TierService, SqlError, AccountWallets | BalanceReader> = layer({
  plans: resolvePlans({}, 30),
  thresholds: DefaultTierThresholds,
  renewalUrl: "https://example.test/pricing",
  holdingsTtlMs: 0
}).pipe(Layer.provide(Database.layerTest))
