/**
 * Staking reward claims (spec document 2, 3.4 and 4.2's reward row): a reward is paid only to its
 * recorded owner, a wallet the key may use (the embedded wallet when the key allows it, the
 * account's imported wallets, TEE wallets bound to this key); the distributor (the service's
 * Solana key) pays the fee and rent. The lifecycle is `RewardClaimMachine`, driven by the one
 * attempt runner: each attempt is saved (`claiming`, signature, last valid block height; this
 * process its driver under a `staking_reward_claim` lease) before it is sent, and one row per
 * reward id means concurrent claims of one reward make one attempt. A claim pays at most once
 * across retries, races and crashes: a new attempt is made only when the previous one can no
 * longer land, and svc-stake itself refuses a second payment.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { KeyPairSigner } from "@solana/kit"
import { Effect, Option } from "effect"
import type { RewardAccount } from "../../chain/solana/program/staking/Accounts.js"
import type { RowLeases } from "../../db/RowLease.js"
import { type AttemptMachine, type AttemptPorts, type AttemptStore, makeAttemptRunner } from "../attempt/AttemptRunner.js"
import { awaitVerdict } from "../../platform/AwaitUntil.js"
import type { WalletProviderShape } from "../wallets/WalletProvider.js"
import type { WalletServiceShape } from "../wallets/WalletService.js"
import type { StakingChain } from "./StakingChain.js"
import { type StakingError, stakingError } from "./StakingError.js"
import type { StakingCaller } from "./StakingInputs.js"
import { type ClaimEvent, type ClaimOutput, type ClaimState, step } from "./RewardClaimMachine.js"
import type { ClaimRow, ClaimStore } from "./StakingStore.js"
import type { RewardClaimView } from "./StakingViews.js"

const U64_MAX = (1n << 64n) - 1n
/** Rounds of (read, decide, act) one request makes before answering pending: racers settle within two. */
const CLAIM_ROUNDS_MAX = 3

/** The lease kind of reward claim rows; the key is the reward id. */
export const REWARD_CLAIM_LEASE_KIND = "staking_reward_claim"

export interface RewardClaimsContext {
  readonly chain: StakingChain
  readonly store: ClaimStore
  readonly provider: WalletProviderShape
  readonly wallets: WalletServiceShape
  readonly sql: SqlClient.SqlClient
  readonly leases: RowLeases
  /** Pays the claim's fee and rent; unset: claims answer `reward_claim_failed`. */
  readonly distributor: KeyPairSigner | undefined
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
}

const stateOf = (row: ClaimRow | undefined): ClaimState | undefined => (row === undefined ? undefined : { _tag: row.state, signature: row.signature })

/** A claim event, with the new attempt's row (`Attempt`) and its signed bytes. */
interface ClaimInput {
  readonly event: ClaimEvent
  readonly attempt?: ClaimRow
  readonly wire?: string
}

type ClaimAttemptOutput = ClaimOutput | { readonly _tag: "SendWire"; readonly wire: string } | { readonly _tag: "Await" }

/** `RewardClaimMachine.step` over stored rows. Pure; the same row when nothing changes. */
const claimMachine: AttemptMachine<ClaimRow, ClaimInput, ClaimAttemptOutput> = {
  step: (row, input) => {
    const state = stateOf(row)
    const [next, outputs] = step(state, input.event)
    const mapped = outputs.flatMap((o): ReadonlyArray<ClaimAttemptOutput> =>
      o._tag === "Send" ? (input.wire === undefined ? [{ _tag: "Await" }] : [{ _tag: "SendWire", wire: input.wire }, { _tag: "Await" }]) : [o]
    )
    if (next === state || next === undefined) return [row, mapped]
    const base = input.event._tag === "Attempt" ? input.attempt : row
    return base === undefined ? [row, mapped] : [{ ...base, state: next._tag, signature: next.signature }, mapped]
  },
  inFlight: (row) => row.state === "claiming",
  owed: (row) => (row.state === "claiming" ? [{ _tag: "Await" }] : [])
}

const claimStoreOf = (store: ClaimStore): AttemptStore<string, ClaimRow, ClaimAttemptOutput> => ({
  kind: REWARD_CLAIM_LEASE_KIND,
  leaseKey: (rewardId) => rewardId,
  load: store.get,
  save: (rewardId, prev, next) =>
    prev === undefined
      ? store.insert(next)
      : prev.state === "retry" && next.state === "claiming"
        ? store.transition(rewardId, "retry", prev.signature, "claiming", { signature: next.signature, lastValidBlockHeight: next.lastValidBlockHeight })
        : store.transition(rewardId, prev.state, prev.signature, next.state),
  inFlight: Effect.map(store.inFlight, (rows) => rows.map((r) => r.rewardId))
})

export const makeRewardClaims = (ctx: RewardClaimsContext) => {
  const { chain, store } = ctx

  const observe = (row: ClaimRow) => chain.observe(row.signature, row.lastValidBlockHeight)

  const ports: AttemptPorts<string, ClaimRow, ClaimInput, ClaimAttemptOutput, never> = {
    perform: (_rewardId, row, output) => {
      switch (output._tag) {
        case "SendWire":
          // A node that refuses the attempt: it cannot pay; the next claim makes a new one.
          return Effect.map(Effect.either(chain.send(output.wire)), (sent) =>
            sent._tag === "Left" ? ({ event: { _tag: "Observed", outcome: "reverted" } } as ClaimInput) : undefined
          )
        case "Await":
          return row.state !== "claiming"
            ? Effect.succeed(undefined)
            : Effect.map(
                awaitVerdict(observe(row), (seen) => seen.outcome !== "pending", { what: "a verdict", intervalMs: ctx.pollIntervalMs, timeoutMs: ctx.confirmTimeoutMs }),
                Option.match({ onNone: () => undefined, onSome: (seen) => ({ event: { _tag: "Observed", outcome: seen.outcome } }) as ClaimInput })
              )
        default:
          return Effect.succeed(undefined)
      }
    }
  }
  const runner = makeAttemptRunner({ machine: claimMachine, store: claimStoreOf(store), ports, leases: ctx.leases, sql: ctx.sql })

  const answer = (r: RewardAccount, signature: string): RewardClaimView => ({
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
          ...(row === undefined ? {} : { details: { signature: row.signature } })
        })
      case "claim_failed":
        return stakingError("reward_claim_failed", "The claim did not land; retry: it still pays at most once")
    }
  }

  /** What an attempt's row says now: paid, failed (retry), or still claiming (pending). */
  const verdictOf = (row: ClaimRow): ReadonlyArray<ClaimOutput> =>
    row.state === "claimed"
      ? [{ _tag: "Answer", signature: row.signature }]
      : row.state === "retry"
        ? [{ _tag: "Refuse", reason: "claim_failed" }]
        : [{ _tag: "Refuse", reason: "pending" }]

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

  /** One read of a stored attempt's fate, recorded (a proven verdict needs no lease); undefined when the row moved. */
  const observeOnce = (row: ClaimRow) =>
    Effect.gen(function* () {
      const seen = yield* observe(row)
      const applied = yield* runner.apply(row.rewardId, row, { event: { _tag: "Observed", outcome: seen.outcome } })
      return applied._tag === "Moved" ? undefined : applied.outputs.filter((o): o is ClaimOutput => o._tag !== "Await" && o._tag !== "SendWire")
    })

  /** Builds, saves and sends one attempt, then waits for its verdict; undefined when another request saved first. */
  const attempt = (caller: StakingCaller, r: RewardAccount, previous: ClaimRow | undefined) =>
    Effect.gen(function* () {
      if (ctx.distributor === undefined) return yield* stakingError("reward_claim_failed", "No distributor key is configured to pay reward claims")
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
      const applied = yield* runner.apply(row.rewardId, previous, { event: { _tag: "Attempt", signature: tx.signature }, attempt: row, wire: tx.base64 })
      return applied._tag === "Saved" ? verdictOf(applied.state) : undefined
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
        if (out._tag === "Answer") return answer(r, out.signature)
        if (out._tag === "Refuse") return yield* refusal(out, row)
        const result = out._tag === "Observe" ? yield* observeOnce(row!) : yield* attempt(caller, r, row)
        if (result === undefined) continue // another request recorded first: read again
        const decided = result.find((o) => o._tag === "Answer" || o._tag === "Refuse")
        if (decided?._tag === "Answer") return answer(r, decided.signature)
        if (decided?._tag === "Refuse") return yield* refusal(decided, yield* store.get(rewardIdText))
      }
      return yield* refusal({ _tag: "Refuse", reason: "pending" }, yield* store.get(rewardIdText))
    }).pipe(Effect.catchTag("RowLeaseLost", () => Effect.fail(refusal({ _tag: "Refuse", reason: "pending" }, undefined))))

  return { claim, resume: runner.recover }
}
