/**
 * Hood (EVM-chain) staking rewards (spec document 2, 2.4; docs/decisions.md "Hood staking
 * rewards"). Where one comes from: a Hood curve's staker allocation, which `migrate()` sends to the
 * factory's staker vault when the token graduates. When: once per graduated token, after the Hood
 * ingester has recorded its pool (`hood_pools`, at the configured confirmation depth), the
 * distributor splits that allocation over the accounts' eligible staked receipt as read then
 * (`HoodRewardSplit`: the tier snapshot's wallets, so shared wallets and wallets past the 200 cap
 * count for nothing; an account with no EVM wallet forfeits its share to the others) and records
 * the distribution with its shares in one transaction. Rewards are read-only here: they are paid
 * from the site, never through this API (4.2).
 *
 * Invariants: one distribution per (source, token), whatever sweeps race (the insert decides);
 * nothing is recorded when any figure could not be read (never a zero for an unreadable balance);
 * a sweep handles at most `batchMax` tokens and reads accounts in pages of `accountPage`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Duration, Effect } from "effect"
import { type Address, type PublicClient, zeroAddress } from "viem"
import { bondingCurveAbi, curveFactoryAbi, curveTokenAbi } from "../../chain/hood/abi.generated.js"
import type { AccountWalletsShape } from "../accounts/AccountWallets.js"
import type { BalanceReaderShape } from "../accounts/BalanceReader.js"
import { type StakingError, stakingError } from "./StakingError.js"
import { type HoodRewardWeight, splitHoodReward } from "./HoodRewardSplit.js"

/** Reward ids of Hood rewards: `hood-<seq>` (Solana rewards are svc-stake's decimal ids). */
export const HOOD_REWARD_ID = /^hood-([1-9][0-9]{0,17})$/
const MIGRATED_PHASE = 2

export interface HoodReward {
  readonly rewardId: string
  readonly accountId: string
  readonly mint: string
  readonly symbol: string
  readonly name: string
  readonly evmWallet: string
  readonly amountRaw: string
  readonly distributedAt: string
}

/** The graduated token's figures on the Hood chain. */
export interface HoodGraduation {
  readonly curve: string
  readonly allocationRaw: bigint
  readonly symbol: string
  readonly name: string
}

export interface HoodRewardChain {
  /** The token's curve and staker allocation once migrated; undefined: not (or no longer) a migrated curve. */
  readonly graduation: (mint: string) => Effect.Effect<HoodGraduation | undefined, StakingError>
}

/** The Hood chain side over a viem client: the factory's curve of the token, its phase and staker allocation. */
export const hoodRewardChain = (pc: PublicClient, factory: Address): HoodRewardChain => {
  const read = <A>(what: string, f: () => Promise<A>) =>
    Effect.tryPromise({ try: f, catch: (e) => stakingError("chain_unavailable", `${what} failed: ${String(e).slice(0, 300)}`) })
  return {
    graduation: (mint) =>
      Effect.gen(function* () {
        const token = mint as Address
        const curve = yield* read("curveOf", () => pc.readContract({ address: factory, abi: curveFactoryAbi, functionName: "curveOf", args: [token] }))
        if (curve === zeroAddress) return undefined
        const [phase, allocationRaw, symbol, name] = yield* Effect.all([
          read("phase", () => pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "phase" })),
          read("stakerAllocation", () => pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "stakerAllocation" })),
          read("symbol", () => pc.readContract({ address: token, abi: curveTokenAbi, functionName: "symbol" })),
          read("name", () => pc.readContract({ address: token, abi: curveTokenAbi, functionName: "name" }))
        ])
        return Number(phase) === MIGRATED_PHASE ? { curve, allocationRaw, symbol, name } : undefined
      })
  }
}

export interface HoodRewardsOptions {
  /** Graduated tokens handled per sweep (default 16). */
  readonly batchMax?: number
  /** Accounts read per page (default 200). */
  readonly accountPage?: number
  /** Staked-balance reads in flight (default 8). */
  readonly readConcurrency?: number
}

export interface HoodRewardsDeps {
  readonly sql: SqlClient.SqlClient
  readonly accountWallets: AccountWalletsShape
  readonly balances: BalanceReaderShape
  readonly chain: HoodRewardChain | undefined
}

interface RewardRow {
  readonly seq: string
  readonly account_id: string
  readonly mint: string
  readonly symbol: string
  readonly name: string
  readonly evm_wallet: string
  readonly amount_raw: string
  readonly distributed_at: Date | string
}

const rewardOf = (r: RewardRow): HoodReward => ({
  rewardId: `hood-${r.seq}`,
  accountId: r.account_id,
  mint: r.mint,
  symbol: r.symbol,
  name: r.name,
  evmWallet: r.evm_wallet,
  amountRaw: r.amount_raw,
  distributedAt: new Date(r.distributed_at).toISOString()
})

const unreadable = (message: string) => stakingError("chain_unavailable", message)

export const makeHoodRewards = (deps: HoodRewardsDeps, options: HoodRewardsOptions = {}) => {
  const { sql } = deps
  const batchMax = options.batchMax ?? 16
  const accountPage = options.accountPage ?? 200
  const concurrency = options.readConcurrency ?? 8

  /** Graduated tokens the ingester recorded and no distribution covers yet, oldest first. */
  const pending = sql<{ source: string; pool: string; mint: string }>`
    SELECT p.source, p.pool, p.mint FROM hood_pools p
    WHERE NOT EXISTS (SELECT 1 FROM hood_reward_distributions d WHERE d.source = p.source AND d.mint = p.mint)
    ORDER BY p.block, p.pool LIMIT ${batchMax}`

  /** One account's weight: staked receipt over its eligible wallets, and its EVM wallet. */
  const weightOf = (accountId: string) =>
    Effect.gen(function* () {
      const owners = yield* deps.accountWallets.eligibleSolanaWallets(accountId).pipe(Effect.mapError((e) => unreadable(`wallets unreadable: ${e.message}`)))
      const each = yield* Effect.forEach(owners, (o) => deps.balances.stakedBalance("solana", o).pipe(Effect.mapError((e) => unreadable(e.message))), { concurrency })
      const stakedRaw = each.reduce((s, x) => s + x, 0n)
      if (stakedRaw === 0n) return undefined
      const evmWallet = yield* deps.accountWallets.rewardEvmWallet(accountId).pipe(Effect.mapError((e) => unreadable(`wallets unreadable: ${e.message}`)))
      return { accountId, stakedRaw, evmWallet } satisfies HoodRewardWeight
    })

  /** Every account with staked receipt (only those are kept), page by page. */
  const weights = Effect.gen(function* () {
    const out: HoodRewardWeight[] = []
    let after = ""
    for (;;) {
      const page = yield* deps.accountWallets.solanaAccounts(after, accountPage).pipe(Effect.mapError((e) => unreadable(`accounts unreadable: ${e.message}`)))
      const read = yield* Effect.forEach(page, weightOf, { concurrency })
      for (const w of read) if (w !== undefined) out.push(w)
      if (page.length < accountPage) return out
      after = page[page.length - 1]!
    }
  })

  /** Splits one graduated token's staker allocation and records it with its shares, once; the shares recorded (0 when another writer won or the curve is not migrated). */
  const distribute = (p: { source: string; pool: string; mint: string }) =>
    Effect.gen(function* () {
      if (deps.chain === undefined) return 0
      const g = yield* deps.chain.graduation(p.mint)
      if (g === undefined) return 0
      const split = splitHoodReward(g.allocationRaw, yield* weights)
      const at = new Date(yield* Clock.currentTimeMillis)
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          const inserted = yield* sql`
            INSERT INTO hood_reward_distributions (source, mint, curve, pool, symbol, name, allocation_raw, eligible_staked_raw, distributed_raw,
              undistributed_raw, recipients, forfeited_accounts, distributed_at)
            VALUES (${p.source}, ${p.mint}, ${g.curve.toLowerCase()}, ${p.pool}, ${g.symbol}, ${g.name}, ${g.allocationRaw.toString()},
              ${split.eligibleStakedRaw.toString()}, ${split.distributedRaw.toString()}, ${split.undistributedRaw.toString()},
              ${split.shares.length}, ${split.forfeited.length}, ${at})
            ON CONFLICT (source, mint) DO NOTHING RETURNING mint`
          if (inserted.length === 0) return 0
          for (const s of split.shares) {
            yield* sql`
              INSERT INTO hood_rewards (source, mint, account_id, evm_wallet, staked_raw, amount_raw, distributed_at)
              VALUES (${p.source}, ${p.mint}, ${s.accountId}, ${s.evmWallet}, ${s.stakedRaw.toString()}, ${s.amountRaw.toString()}, ${at})`
          }
          yield* Effect.logInfo("hood staking reward distributed").pipe(
            Effect.annotateLogs({ mint: p.mint, allocationRaw: g.allocationRaw.toString(), recipients: split.shares.length, forfeited: split.forfeited.length })
          )
          return split.shares.length
        })
      )
    })

  /** One sweep: every pending graduation (up to `batchMax`); how many were handled. A token whose reads fail waits for the next sweep. */
  const sweep = Effect.gen(function* () {
    let recorded = 0
    for (const p of yield* pending) {
      const r = yield* Effect.either(distribute(p))
      if (r._tag === "Left") yield* Effect.logWarning(`hood staking reward of ${p.mint} not distributed yet`, r.left)
      else recorded += 1
    }
    return recorded
  })

  /** Reward rows of one account or one id, newest first. */
  const rewards = (by: { accountId: string | null; seq: string | null }, limit: number) =>
    Effect.map(
      sql<RewardRow>`
        SELECT r.seq::text AS seq, r.account_id, r.mint, d.symbol, d.name, r.evm_wallet, r.amount_raw, r.distributed_at
        FROM hood_rewards r JOIN hood_reward_distributions d ON d.source = r.source AND d.mint = r.mint
        WHERE (${by.accountId}::text IS NULL OR r.account_id = ${by.accountId}) AND (${by.seq}::bigint IS NULL OR r.seq = ${by.seq}::bigint)
        ORDER BY r.seq DESC LIMIT ${limit}`,
      (rows) => rows.map(rewardOf)
    )

  /** The account's Hood rewards, newest first (at most `limit`, default 100). */
  const forAccount = (accountId: string, limit = 100) => rewards({ accountId, seq: null }, limit)

  /** A Hood reward by its id (`hood-<seq>`); undefined when there is none. */
  const byId = (rewardId: string) => {
    const m = HOOD_REWARD_ID.exec(rewardId)
    return m === null ? Effect.succeed(undefined) : Effect.map(rewards({ accountId: null, seq: m[1]! }, 1), (rows) => rows[0])
  }

  return { pending, distribute, sweep, forAccount, byId }
}

export type HoodRewards = ReturnType<typeof makeHoodRewards>

/** The distributor: a sweep every `sweepIntervalMs` (default 5 s), for the life of the scope. */
export const runHoodRewardDistributor = (rewards: HoodRewards, sweepIntervalMs = 5_000) =>
  Effect.gen(function* () {
    for (;;) {
      yield* rewards.sweep.pipe(Effect.catchAll((e) => Effect.logWarning("hood staking reward sweep failed", e)))
      yield* Effect.sleep(Duration.millis(sweepIntervalMs))
    }
  })
