/**
 * Staking reward claims (spec document 2, 3.4 and 4.2's reward row): a reward is paid only to its
 * recorded owner, a wallet the key may use (the embedded wallet when the key allows it, the
 * account's imported wallets, TEE wallets bound to this key); the distributor (the service's
 * Solana key) pays the fee and rent. The lifecycle is `RewardClaimMachine`; each attempt is
 * recorded (`claiming`, signature, last valid block height) before it is sent, and one row per
 * reward id means concurrent claims of one reward make one attempt. A claim pays at most once
 * across retries, races and crashes: a new attempt is made only when the previous one can no
 * longer land, and svc-stake itself refuses a second payment.
 */
import type { SqlError } from "@effect/sql/SqlError"
import type { KeyPairSigner } from "@solana/kit"
import { Duration, Effect } from "effect"
import type { RewardAccount } from "../../chain/solana/program/staking/Accounts.js"
import type { WalletProviderShape } from "../wallets/WalletProvider.js"
import type { WalletServiceShape } from "../wallets/WalletService.js"
import type { StakingChain } from "./StakingChain.js"
import { type StakingError, stakingError } from "./StakingError.js"
import { type ClaimOutput, type ClaimState, step } from "./RewardClaimMachine.js"
import type { ClaimRow, ClaimStore } from "./StakingStore.js"
import type { StakingCaller } from "./StakingService.js"

const U64_MAX = (1n << 64n) - 1n
/** Rounds of (read, decide, act) one request makes before answering pending: racers settle within two. */
const CLAIM_ROUNDS_MAX = 3

export interface RewardClaimsContext {
  readonly chain: StakingChain
  readonly store: ClaimStore
  readonly provider: WalletProviderShape
  readonly wallets: WalletServiceShape
  /** Pays the claim's fee and rent; unset: claims answer `reward_claim_failed`. */
  readonly distributor: KeyPairSigner | undefined
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
  readonly nowMs: () => number
}

const stateOf = (row: ClaimRow | undefined): ClaimState | undefined => (row === undefined ? undefined : { _tag: row.state, signature: row.signature })

export const makeRewardClaims = (ctx: RewardClaimsContext) => {
  const { chain, store } = ctx

  const answer = (r: RewardAccount, signature: string) => ({
    success: true,
    rewardId: r.rewardId.toString(),
    owner: r.owner,
    mint: r.mint,
    amountRaw: r.amountRaw.toString(),
    signature
  })

  const refusal = (o: Extract<ClaimOutput, { _tag: "Refuse" }>, row: ClaimRow | undefined): StakingError => {
    switch (o.reason) {
      case "already_claimed":
        return stakingError("reward_already_claimed", "This reward was already paid", row === undefined ? {} : { details: { signature: row.signature } })
      case "pending":
        return stakingError("reward_claim_pending", "A claim of this reward is in progress; retry the same rewardId after Retry-After", {
          retryable: true,
          ...(row === undefined ? {} : { details: { signature: row.signature } })
        })
      case "claim_failed":
        return stakingError("reward_claim_failed", "The claim did not land; retry: it still pays at most once", { retryable: true })
    }
  }

  /** The wallets `caller` may be paid through. */
  const usableOwners = (caller: StakingCaller) =>
    Effect.gen(function* () {
      const owners = new Set<string>()
      if (caller.embeddedWallet !== "denied") {
        for (const w of yield* ctx.provider.embeddedWallets(caller.accountId)) if (w.chain === "solana") owners.add(w.address)
      }
      const listed = yield* ctx.wallets.list(caller.principal)
      for (const w of listed.wallets) {
        if (w.chain !== "solana") continue
        if (w.walletKind === "imported" || (w.walletKind === "tee" && w.boundKeyPrefix === caller.principal.keyPrefix)) owners.add(w.address)
      }
      return owners
    })

  /** Observes the stored attempt and records what the chain says; the machine's outputs. */
  const observe = (row: ClaimRow) =>
    Effect.gen(function* () {
      const seen = yield* chain.observe(row.signature, row.lastValidBlockHeight)
      const [next, outputs] = step(stateOf(row), { _tag: "Observed", outcome: seen.outcome })
      if (next !== undefined && next._tag !== row.state) yield* store.transition(row.rewardId, row.state, row.signature, next._tag)
      return outputs
    })

  /** Polls a sent attempt until it settles, within the deadline (then: pending). */
  const settle = (row: ClaimRow): Effect.Effect<ReadonlyArray<ClaimOutput>, StakingError | SqlError> =>
    Effect.gen(function* () {
      const deadline = ctx.nowMs() + ctx.confirmTimeoutMs
      for (;;) {
        const outputs = yield* Effect.either(observe(row))
        if (outputs._tag === "Right" && !outputs.right.some((o) => o._tag === "Refuse" && o.reason === "pending")) return outputs.right
        if (ctx.nowMs() >= deadline) return [{ _tag: "Refuse", reason: "pending" }] as const
        yield* Effect.sleep(Duration.millis(ctx.pollIntervalMs))
      }
    })

  /** Builds, records and sends one attempt; false when another request recorded first. */
  const attempt = (caller: StakingCaller, r: RewardAccount, previous: ClaimRow | undefined) =>
    Effect.gen(function* () {
      if (ctx.distributor === undefined) return yield* stakingError("reward_claim_failed", "No distributor key is configured to pay reward claims", { retryable: true })
      const tx = yield* chain.claimTransaction(ctx.distributor, r)
      const row: ClaimRow = {
        rewardId: r.rewardId.toString(),
        accountId: caller.accountId,
        owner: r.owner,
        mint: r.mint,
        amountRaw: r.amountRaw.toString(),
        state: "claiming",
        signature: tx.signature,
        lastValidBlockHeight: tx.lastValidBlockHeight
      }
      const recorded =
        previous === undefined
          ? yield* store.insert(row)
          : yield* store.transition(row.rewardId, "retry", previous.signature, "claiming", { signature: tx.signature, lastValidBlockHeight: tx.lastValidBlockHeight })
      if (!recorded) return undefined
      const sent = yield* Effect.either(chain.send(tx.base64))
      if (sent._tag === "Left") {
        yield* store.transition(row.rewardId, "claiming", row.signature, "retry")
        return [{ _tag: "Refuse", reason: "claim_failed" }] as ReadonlyArray<ClaimOutput>
      }
      return yield* settle(row)
    })

  const claim = (caller: StakingCaller, rewardIdText: string) =>
    Effect.gen(function* () {
      const notFound = stakingError("reward_not_found", `No reward ${rewardIdText.slice(0, 64)}`)
      if (!/^[0-9]{1,20}$/.test(rewardIdText) || BigInt(rewardIdText) > U64_MAX) return yield* notFound
      const r = yield* chain.reward(BigInt(rewardIdText))
      if (r === undefined) return yield* notFound
      if (!(yield* usableOwners(caller)).has(r.owner)) {
        return yield* stakingError("reward_not_owned", "This reward belongs to a wallet this key may not use")
      }
      for (let round = 0; round < CLAIM_ROUNDS_MAX; round++) {
        const row = yield* store.get(rewardIdText)
        const [, outputs] = step(stateOf(row), { _tag: "Claim", chainClaimed: r.claimedAtSec !== 0n })
        const out = outputs[0]!
        let result: ReadonlyArray<ClaimOutput> | undefined
        if (out._tag === "Answer") return answer(r, out.signature)
        if (out._tag === "Refuse") return yield* refusal(out, row)
        if (out._tag === "Observe") result = yield* observe(row!)
        else result = yield* attempt(caller, r, row)
        if (result === undefined) continue // another request recorded first: read again
        const decided = result.find((o) => o._tag === "Answer" || o._tag === "Refuse")
        if (decided?._tag === "Answer") return answer(r, decided.signature)
        if (decided?._tag === "Refuse") return yield* refusal(decided, yield* store.get(rewardIdText))
      }
      return yield* refusal({ _tag: "Refuse", reason: "pending" }, yield* store.get(rewardIdText))
    }).pipe(Effect.withSpan("StakingService.claimReward"))

  /** Claims a previous run left `claiming`: settled from the chain (in the background). */
  const resume = Effect.gen(function* () {
    const rows = yield* store.inFlight
    for (const row of rows) {
      yield* Effect.forkDaemon(settle(row).pipe(Effect.catchAll((e) => Effect.logWarning("a reward claim left in flight is still unsettled", e))))
    }
    return rows.length
  })

  return { claim, resume }
}
