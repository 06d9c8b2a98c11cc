/**
 * Staking positions (spec document 2, 2.4): the pool's figures and, for each of the account's
 * Solana wallets (embedded, imported, TEE; at most 200), its staked receipt (read by the reader
 * the tier snapshot uses), withdrawals and unclaimed rewards; the account's Hood rewards on its
 * first counting wallet. Unreadable chain data is `chain_unavailable`, never a zero.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { SVC_MINT, USDC_MINT } from "../../../domain/QuotePairs.js"
import type { WalletError } from "../../wallets/WalletError.js"
import { type StakingError, stakingError } from "../StakingError.js"
import type { StakingCaller } from "../StakingInputs.js"
import type { PositionsView, RewardPositionView, WalletPositionView } from "../StakingViews.js"
import type { StakingContext } from "./StakingContext.js"

const PLATFORM_DECIMALS = 6
/** Wallets listed at most (the account's eligible-wallet cap). */
const POSITION_WALLETS_MAX = 200

/** Symbol and name of the reward mints the distributor pays in. */
const rewardAsset = (mint: string): { symbol: string; name: string } =>
  mint === USDC_MINT ? { symbol: "USDC", name: "USD Coin" } : mint === SVC_MINT ? { symbol: "SVC", name: "curvestream platform token" } : { symbol: "", name: "" }

const unreadable = (message: string) => stakingError("chain_unavailable", message)

export const makePositions = (ctx: StakingContext) => {
  const { chain } = ctx

  const positions = (caller: StakingCaller): Effect.Effect<PositionsView, StakingError | WalletError | SqlError> =>
    Effect.gen(function* () {
      const pool = yield* chain.pool
      const clock = yield* chain.clockSec
      const listed = yield* ctx.wallets.list(caller.principal)
      const eligible = new Set(yield* ctx.accountWallets.eligibleSolanaWallets(caller.accountId).pipe(Effect.mapError((e) => unreadable(`wallets unreadable: ${e.message}`))))
      const embedded = listed.embeddedWallets
        .filter((w) => w.chain === "solana")
        .map((w) => ({ payer: "main" as const, address: w.address, linkedWalletId: null, label: null, tee: false }))
      const linked = listed.wallets
        .filter((w) => w.chain === "solana" && (w.walletKind === "imported" || w.walletKind === "tee"))
        .map((w) => ({ payer: "linked" as const, address: w.address, linkedWalletId: w.id as string | null, label: w.label ?? null, tee: w.walletKind === "tee" }))
      const owned = [...embedded, ...linked].slice(0, POSITION_WALLETS_MAX)
      // The account's EVM-chain rewards (one per graduated Hood token it earned a share of),
      // listed on its first counting wallet: the mint (a 0x address) and the id (hood-<n>) name the chain.
      const hood: ReadonlyArray<RewardPositionView> = (yield* ctx.hoodRewards.forAccount(caller.accountId)).map((r) => ({
        rewardId: r.rewardId,
        mint: r.mint,
        symbol: r.symbol,
        name: r.name,
        amountRaw: r.amountRaw,
        distributedAt: r.distributedAt,
        claiming: false
      }))
      const hoodOwner = (owned.find((w) => eligible.has(w.address)) ?? owned[0])?.address
      const hasEvmWallet =
        (yield* ctx.accountWallets.rewardEvmWallet(caller.accountId).pipe(Effect.mapError((e) => unreadable(`wallets unreadable: ${e.message}`)))) !== undefined
      const rows = yield* Effect.forEach(
        owned,
        (w) =>
          Effect.gen(function* () {
            const stake = yield* chain.wallet(w.address)
            const claiming = yield* ctx.claimStore.claiming(stake.rewards.map((r) => r.rewardId.toString()))
            // The tier snapshot's figure, read by the same reader.
            const stakedRaw = yield* ctx.balances.stakedBalance("solana", w.address).pipe(Effect.mapError((e) => unreadable(e.message)))
            const withdrawals = stake.withdrawals.map((x) => ({
              withdrawal: x.withdrawal,
              amountRaw: x.amountRaw.toString(),
              startTime: Number(x.startTimeSec),
              endTime: Number(x.endTimeSec),
              claimTime: x.claimTimeSec === 0n ? null : Number(x.claimTimeSec),
              claimable: x.claimTimeSec === 0n && clock >= x.endTimeSec
            }))
            const counts = eligible.has(w.address)
            const view: WalletPositionView = {
              ...w,
              platformMint: ctx.platformMint,
              stakedMint: ctx.receiptMint,
              decimals: PLATFORM_DECIMALS,
              amountRaw: stakedRaw.toString(),
              cndlValueRaw: stakedRaw.toString(),
              heldRaw: stake.platformRaw.toString(),
              pendingWithdrawalRaw: stake.withdrawals
                .filter((x) => x.claimTimeSec === 0n)
                .reduce((s, x) => s + x.amountRaw, 0n)
                .toString(),
              activeWithdrawals: withdrawals.filter((x) => x.claimTime === null),
              finishedWithdrawals: withdrawals.filter((x) => x.claimTime !== null),
              unclaimedRewards: [
                ...stake.rewards.map((r) => ({
                  rewardId: r.rewardId.toString(),
                  mint: r.mint,
                  ...rewardAsset(r.mint),
                  amountRaw: r.amountRaw.toString(),
                  distributedAt: new Date(Number(r.distributedAtSec) * 1000).toISOString(),
                  claiming: claiming.has(r.rewardId.toString())
                })),
                ...(w.address === hoodOwner ? hood : [])
              ],
              eligibility: counts
                ? [
                    hasEvmWallet
                      ? "Staked receipt counts toward Pro and earns rewards."
                      : "Staked receipt counts toward Pro and earns Solana rewards; the account has no EVM wallet, so it earns no EVM-chain reward (its share goes to the other stakers).",
                    "Pending-withdrawal units count toward nothing for Pro."
                  ]
                : ["Not counted: another account also claims this wallet, or it is past the 200-wallet cap."]
            }
            return view
          }),
        { concurrency: 8 }
      )
      return {
        withdrawalTimelockSeconds: Number(pool.withdrawalTimelockSeconds),
        paused: pool.paused,
        maxActiveWithdrawals: pool.maxActiveWithdrawals,
        wallets: rows
      } satisfies PositionsView
    })

  return { positions }
}
