/**
 * Staking of the platform token (spec document 2: 2.4, 3.3, 4.2): positions, and the `stake`,
 * `unstake` and `finish` operations, each idempotent on (account, `clientStakeId`) and moving
 * funds at most once whatever retries, races and crashes do. The lifecycle is the pure
 * `StakingMachine`; this runtime reads the chain (`StakingChain`), records each state in
 * `StakingStore` before acting on it, and signs through the wallet provider (embedded payer) or
 * stakes out a single-use sign claim (linked and TEE payers, signed at the sign relay).
 *
 * Invariants:
 * - A changed body under one id is refused; a replay answers the stored operation.
 * - Embedded payer: checks → build → sign → the row (`sending`, signature, last valid block
 *   height) → send once → confirm. A crash after the row is written is settled from the chain by
 *   `resumeInFlight` (at start, then periodically in every API process); the transaction is never
 *   re-signed or resent.
 * - One process watches an operation in flight (`RowLease`, kind `staking_operation`): the request
 *   that writes `sending` or moves the row to `submitted` makes its process the owner in that
 *   statement's transaction and keeps the lease while it sends and confirms; a resume settles only
 *   operations whose lease ended (their owner died) and skips those a live process drives.
 * - Linked/TEE: `built` holds the exact message; `submit` broadcasts only a transaction with every
 *   signature over that message, once (one conditional UPDATE wins); `confirm` records a landing of
 *   that message without sending anything, even on an expired row.
 * - Unreadable chain data is `chain_unavailable` (503), never a zero.
 * - Hood (EVM-chain) rewards (`HoodRewards.ts`) are listed in positions and never claimed here:
 *   a claim of one is refused (`reward_not_owned`, 403), as spec 4.2 has them claimed from the site.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { getCompiledTransactionMessageDecoder, getTransactionDecoder, type KeyPairSigner } from "@solana/kit"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { createHash } from "node:crypto"
import { SVC_MINT, USDC_MINT } from "../../domain/QuotePairs.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import type { AccountWalletsShape } from "../accounts/AccountWallets.js"
import type { BalanceReaderShape } from "../accounts/BalanceReader.js"
import type { Principal } from "../wallets/Principal.js"
import { type WalletProviderError, WalletProvider } from "../wallets/WalletProvider.js"
import { type PayerError, type SignClaimError, type WalletError, WalletService } from "../wallets/WalletService.js"
import {
  type BuiltTransaction,
  makeStakingChain,
  operationFeeLamports,
  operationRentLamports,
  PAYER_RESERVE_LAMPORTS,
  signedParts,
  type StakeAction,
  type StakingChain,
  toBase64,
  type WalletStake
} from "./StakingChain.js"
import { type StakingError, stakingError } from "./StakingError.js"
import { type Observation, type OperationEvent, type Output, step } from "./StakingMachine.js"
import { makeRewardClaims } from "./RewardClaims.js"
import { HOOD_REWARD_ID, type HoodRewardChain, type HoodRewards, makeHoodRewards } from "./HoodRewards.js"
import { makeClaimStore, makeStakingStore, type OperationRow, type StakePayer, stateOf, type StakingStore } from "./StakingStore.js"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"

/** The lease kind of staking operation rows; the key is the row's (account, clientStakeId). */
export const STAKING_LEASE_KIND = "staking_operation"

export const stakingLeaseKey = (row: { readonly accountId: string; readonly clientStakeId: string }): string =>
  JSON.stringify([row.accountId, row.clientStakeId])

export interface StakingServiceDeps {
  readonly balances: BalanceReaderShape
  readonly accountWallets: AccountWalletsShape
  /** Who watches an operation in flight (default: this service's own leases over its database). */
  readonly leases?: RowLeases
}

export interface StakingCaller {
  readonly accountId: string
  readonly keyId: string | null
  readonly embeddedWallet: "allowed" | "denied" | null
  /** For the wallet service (linked payers, the wallet list). */
  readonly principal: Principal
  /** A paused key cannot claim staking rewards. */
  readonly keyPaused: boolean
}

export interface StakeBuildInput {
  readonly action: StakeAction
  readonly payer: "main" | "linked"
  readonly linkedWalletId?: string
  readonly clientStakeId: string
  readonly dryRun: boolean
  readonly amountRaw?: bigint
  readonly withdrawal?: string
}

export type StakingFailure = StakingError | PayerError | WalletError | SignClaimError

const PLATFORM_DECIMALS = 6

export interface StakingServiceOptions {
  readonly rpcUrl: string
  readonly platformMint: string
  readonly receiptMint: string
  /** Status polls until `confirmed` after a send (default 30 s); past it the operation stays pending. */
  readonly confirmTimeoutMs?: number
  readonly pollIntervalMs?: number
  /** How long a linked build may be submitted (the sign claim's lifetime, 30 minutes). */
  readonly buildLifetimeMs?: number
  /** Pays reward claims' fees and rent (the service's Solana key); unset: claims fail retryably. */
  readonly distributor?: KeyPairSigner | undefined
  readonly nowMs?: () => number
}

export interface StakingServiceShape {
  readonly positions: (caller: StakingCaller) => Effect.Effect<Record<string, unknown>, StakingFailure>
  readonly build: (caller: StakingCaller, input: StakeBuildInput) => Effect.Effect<Record<string, unknown>, StakingFailure>
  readonly submit: (caller: StakingCaller, input: { clientStakeId: string; signedTransaction: Uint8Array }) => Effect.Effect<Record<string, unknown>, StakingFailure>
  readonly confirm: (caller: StakingCaller, input: { clientStakeId: string; signature: string }) => Effect.Effect<Record<string, unknown>, StakingFailure>
  /** Claims a staking reward for its recorded owner, at most once (3.4). */
  readonly claimReward: (caller: StakingCaller, rewardId: string) => Effect.Effect<Record<string, unknown>, StakingFailure>
  /** Settles every operation and reward claim a previous run left in flight, from the chain; how many there were. */
  readonly resumeInFlight: Effect.Effect<number, StakingFailure>
  /**
   * The operations part of `resumeInFlight`: settles (in the background) the in-flight operations
   * no live process watches; how many it took. What each API process repeats periodically.
   */
  readonly resumeOperations: Effect.Effect<number, StakingFailure>
  readonly chain: StakingChain
  /** Hood (EVM-chain) rewards: their distributor's sweep and the reads positions use. */
  readonly hoodRewards: HoodRewards
}

export interface StakingServiceDeps {
  readonly balances: BalanceReaderShape
  readonly accountWallets: AccountWalletsShape
  /** The Hood chain's graduations; undefined: no Hood reward is distributed. */
  readonly hoodChain?: HoodRewardChain | undefined
}

export class StakingService extends Context.Tag("curvestream/StakingService")<StakingService, StakingServiceShape>() {}

const sha256Hex = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex")

/** The idempotency hash of a build body (everything but `dryRun`). Pure. */
export const bodyHashOf = (i: StakeBuildInput): string =>
  sha256Hex(
    JSON.stringify([i.action, i.payer, i.linkedWalletId ?? null, i.amountRaw?.toString() ?? null, i.withdrawal ?? null])
  )

const storage = storageFailure("staking", () => stakingError("storage", "Internal error; nothing was recorded"))

const fromProvider = (e: WalletProviderError): StakingError => {
  switch (e.reason) {
    case "not_embedded":
      return stakingError("agent_wallet_not_embedded", e.message)
    case "not_delegated":
      return stakingError("agent_wallet_not_delegated", e.message, { retryable: true })
    case "delegation_revoked":
      return stakingError("delegation_revoked", e.message, { retryable: true })
    case "policy_denied":
      return stakingError("spend_policy_denied", e.message, { details: e.rule === undefined ? {} : { reason: e.rule } })
    default:
      return stakingError("chain_unavailable", `the signer is unavailable: ${e.reason}: ${e.message}`, { retryable: true })
  }
}

const refusal = (reason: Extract<Output, { _tag: "Refuse" }>["reason"], row: OperationRow | undefined): StakingError => {
  const details = { ...(row?.signature != null ? { signature: row.signature } : {}), ...(row !== undefined ? { state: row.state } : {}) }
  switch (reason) {
    case "build_expired":
      return stakingError("build_expired", "The build expired; build again with a new clientStakeId, or confirm if it already landed", { details })
    case "pending":
      return stakingError("pending", "A transaction of this operation is in flight; confirm or retry shortly", { retryable: true, details })
    case "wrong_message":
      return stakingError("wrong_message", "The transaction is not the built one with every signature")
    case "not_landed":
      return stakingError("not_landed", "That signature has not landed successfully on chain", { details })
    case "failed":
      return stakingError("operation_failed", `The operation failed: ${row?.error ?? "on chain"}; use a new clientStakeId`, { details })
    case "not_built":
      return stakingError("build_not_found", "No staking build with this clientStakeId on this account")
    case "already_confirmed":
      return stakingError("idempotency_conflict", "The operation is already confirmed", { details })
  }
}

export const make = (options: StakingServiceOptions, deps: StakingServiceDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const leases = deps.leases ?? makeRowLeases(sql)
    const provider = yield* WalletProvider
    const wallets = yield* WalletService
    const nowMs = options.nowMs ?? Date.now
    const store: StakingStore = makeStakingStore(sql, nowMs)
    const chain = makeStakingChain({ rpcUrl: options.rpcUrl })
    const confirmTimeoutMs = options.confirmTimeoutMs ?? 30_000
    const pollIntervalMs = options.pollIntervalMs ?? 250
    const claimStore = makeClaimStore(sql, nowMs)
    const rewards = makeRewardClaims({
      chain,
      store: claimStore,
      provider,
      wallets,
      distributor: options.distributor,
      confirmTimeoutMs,
      pollIntervalMs,
      nowMs
    })
    const buildLifetimeMs = options.buildLifetimeMs ?? 30 * 60_000
    const hoodRewards = makeHoodRewards({ sql, accountWallets: deps.accountWallets, balances: deps.balances, chain: deps.hoodChain }, { nowMs })

    /** Runs `write` (a row becoming in flight) and, if it wrote, makes this process the row's owner, in one transaction. */
    const writeOwned = (row: OperationRow, write: Effect.Effect<boolean, SqlError>) =>
      sql.withTransaction(
        Effect.flatMap(write, (wrote) =>
          wrote ? Effect.as(Effect.provideService(leases.claimIn(STAKING_LEASE_KIND, stakingLeaseKey(row)), SqlClient.SqlClient, sql), true) : Effect.succeed(false)
        )
      )

    /** Runs `self` holding the operation's lease (renewed while it runs, given back after). */
    const owning = <A>(row: OperationRow, self: Effect.Effect<A, StakingError | SqlError>) =>
      leases.whileHeld(STAKING_LEASE_KIND, stakingLeaseKey(row), self).pipe(
        Effect.catchTag("RowLeaseLost", () =>
          stakingError("pending", "Another engine process watches this operation now; confirm or retry shortly", { retryable: true, details: { signature: row.signature } })
        )
      )

    /** The answer for an operation as it stands. */
    const operation = (row: OperationRow, replay: boolean): Record<string, unknown> => ({
      success: true,
      clientStakeId: row.clientStakeId,
      wallet: row.wallet,
      payer: row.payer === "tee" ? "linked" : row.payer,
      action: row.action,
      ...(row.amountRaw !== null ? { amountRaw: row.amountRaw } : {}),
      ...(row.withdrawal !== null ? { withdrawal: row.withdrawal } : {}),
      signature: row.signature,
      status: row.state,
      replay,
      warnings: []
    })

    const builtAnswer = (row: OperationRow, replay: boolean): Record<string, unknown> => ({
      ...operation(row, replay),
      status: "built",
      transaction: row.transaction,
      recentBlockhash: recentBlockhashOf(row),
      builtAt: row.builtAtMs === null ? null : new Date(row.builtAtMs).toISOString(),
      lastValidBlockHeight: row.lastValidBlockHeight?.toString() ?? null,
      claimId: row.claimId,
      linkedWalletId: row.walletId
    })

    /** Applies the machine's answer to a stored row: the refusal, or the row as it stands. */
    const answerOf = (row: OperationRow, outputs: ReadonlyArray<Output>) => {
      const refused = outputs.find((o) => o._tag === "Refuse")
      if (refused !== undefined && refused._tag === "Refuse") return Effect.fail(refusal(refused.reason, row))
      return Effect.succeed(row.state === "built" ? builtAnswer(row, true) : operation(row, true))
    }

    /** Polls the chain for a sent operation until it settles (or the deadline: it stays pending). */
    const settle = (row: OperationRow): Effect.Effect<OperationRow, StakingError | SqlError> =>
      Effect.gen(function* () {
        const deadline = nowMs() + confirmTimeoutMs
        for (;;) {
          const seen = yield* Effect.either(chain.observe(row.signature ?? "", row.lastValidBlockHeight ?? 0n))
          if (seen._tag === "Right" && seen.right.outcome !== "pending") {
            const settled = yield* record(row, { _tag: "Observed", outcome: seen.right.outcome, ...(seen.right.error !== undefined ? { error: seen.right.error } : {}) })
            return settled
          }
          if (nowMs() >= deadline) {
            return yield* stakingError("pending", `No confirmation within ${confirmTimeoutMs} ms; the transaction may still land. Retry with the same clientStakeId`, {
              retryable: true,
              details: { signature: row.signature, state: row.state }
            })
          }
          yield* Effect.sleep(Duration.millis(pollIntervalMs))
        }
      })

    /** Steps a stored row with `event` and writes the new state (conditionally); the row after. */
    const record = (row: OperationRow, event: OperationEvent): Effect.Effect<OperationRow, SqlError> =>
      Effect.gen(function* () {
        const [next, outputs] = step(stateOf(row), event)
        if (next === undefined || next._tag === row.state) return row
        const confirmedSig = outputs.find((o) => o._tag === "RecordConfirmed")
        const patch = {
          ...(confirmedSig?._tag === "RecordConfirmed" ? { signature: confirmedSig.signature } : {}),
          ...(next._tag === "submitted" ? { signature: next.signature } : {}),
          ...(next._tag === "failed" ? { error: next.error } : {})
        }
        yield* store.transition(row.accountId, row.clientStakeId, [row.state], next._tag, patch)
        const after = yield* store.get(row.accountId, row.clientStakeId)
        if (after !== undefined && after.state === "confirmed" && row.claimId !== null) yield* wallets.settleClaim(row.claimId, "confirmed").pipe(Effect.ignore)
        if (after !== undefined && after.state === "confirmed" && after.state !== row.state) {
          yield* Effect.logInfo("staking operation confirmed").pipe(
            Effect.annotateLogs({ accountId: row.accountId, clientStakeId: row.clientStakeId, action: row.action, signature: after.signature })
          )
        }
        return after ?? row
      })

    /**
     * Holding the operation's lease: sends its transaction (`wire`, base64; undefined: nothing to
     * send), once, and waits for it to settle; the answer.
     */
    const sendAndSettle = (row: OperationRow, wire: string | undefined) =>
      owning(
        row,
        Effect.gen(function* () {
          if (wire !== undefined) {
            const sent = yield* Effect.either(chain.send(wire))
            if (sent._tag === "Left") {
              const failed = yield* record(row, { _tag: "Observed", outcome: "reverted", error: `the node refused the transaction: ${sent.left.message}` })
              return yield* refusal("failed", failed)
            }
          }
          const settled = yield* settle(row)
          if (settled.state === "failed") return yield* refusal("failed", settled)
          return operation(settled, false)
        })
      )

    /** The wallet paying for `input`: the embedded wallet (main) or a spend-capable linked or TEE wallet. */
    const payerOf = (caller: StakingCaller, input: StakeBuildInput) =>
      Effect.gen(function* () {
        if (input.payer === "main") {
          if (caller.embeddedWallet === "denied") {
            return yield* stakingError("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot stake from the embedded wallet")
          }
          const embedded = (yield* provider.embeddedWallets(caller.accountId)).find((w) => w.chain === "solana")
          if (embedded === undefined) return yield* stakingError("agent_wallet_not_embedded", "This account has no embedded Solana wallet")
          return { payer: "main" as StakePayer, walletId: null, address: embedded.address }
        }
        const view = yield* wallets.resolvePayer(caller.principal, input.linkedWalletId ?? "", "solana", "spend")
        return { payer: (view.walletKind === "tee" ? "tee" : "linked") as StakePayer, walletId: view.id, address: view.address }
      })

    /** Every check a build makes (balances, the wait, the pool, SOL); the figures of a dry run. */
    const check = (input: StakeBuildInput, w: WalletStake) =>
      Effect.gen(function* () {
        const pool = yield* chain.pool
        if (pool.paused) return yield* stakingError("pool_paused", "The staking pool is paused; nothing can be staked, unstaked or finished now")
        const amountRaw = input.amountRaw ?? 0n
        if (input.action === "stake" && w.platformRaw < amountRaw) {
          return yield* stakingError("insufficient_platform_token", `The wallet holds ${w.platformRaw} raw platform-token units, less than ${amountRaw}`, {
            details: { heldRaw: w.platformRaw.toString(), amountRaw: amountRaw.toString() }
          })
        }
        if (input.action === "unstake") {
          if (w.receiptRaw < amountRaw) {
            return yield* stakingError("insufficient_staked_receipt", `The wallet holds ${w.receiptRaw} raw staked-receipt units, less than ${amountRaw}`, {
              details: { stakedRaw: w.receiptRaw.toString(), amountRaw: amountRaw.toString() }
            })
          }
          if (w.activeWithdrawals >= pool.maxActiveWithdrawals) {
            return yield* stakingError("active_withdrawal_limit", `The wallet has ${w.activeWithdrawals} active withdrawals, the pool's maximum; finish one first`, {
              details: { maxActiveWithdrawals: pool.maxActiveWithdrawals }
            })
          }
        }
        let withdrawalAmount: bigint | undefined
        if (input.action === "finish") {
          const found = w.withdrawals.find((x) => x.withdrawal === input.withdrawal)
          if (found === undefined) return yield* stakingError("invalid_withdrawal", "No withdrawal of this wallet has that address")
          if (found.claimTimeSec !== 0n) return yield* stakingError("withdrawal_finished", "This withdrawal was already finished")
          const clock = yield* chain.clockSec
          if (clock < found.endTimeSec) {
            return yield* stakingError("wait_unfinished", `The withdrawal's wait ends at ${new Date(Number(found.endTimeSec) * 1000).toISOString()}`, {
              details: { endTime: Number(found.endTimeSec), waitSecondsLeft: Number(found.endTimeSec - clock) }
            })
          }
          withdrawalAmount = found.amountRaw
        }
        const feeLamports = operationFeeLamports(input.action)
        const rentLamports = operationRentLamports(input.action, w)
        const solRequiredLamports = feeLamports + rentLamports + PAYER_RESERVE_LAMPORTS
        if (w.lamports < solRequiredLamports) {
          return yield* stakingError("insufficient_sol", `The wallet holds ${w.lamports} lamports; the fee, rent and reserve need ${solRequiredLamports}`, {
            details: { solBalanceLamports: w.lamports.toString(), solRequiredLamports: solRequiredLamports.toString() }
          })
        }
        return {
          amountRaw: (withdrawalAmount ?? amountRaw).toString(),
          feeLamports: feeLamports.toString(),
          rentLamports: rentLamports.toString(),
          reserveLamports: PAYER_RESERVE_LAMPORTS.toString(),
          solRequiredLamports: solRequiredLamports.toString(),
          solBalanceLamports: w.lamports.toString(),
          withdrawalTimelockSeconds: Number(pool.withdrawalTimelockSeconds)
        }
      })

    const newRow = (caller: StakingCaller, input: StakeBuildInput, payer: { payer: StakePayer; walletId: string | null; address: string }, figures: { amountRaw: string }, built: BuiltTransaction): OperationRow => ({
      accountId: caller.accountId,
      clientStakeId: input.clientStakeId,
      action: input.action,
      payer: payer.payer,
      walletId: payer.walletId,
      wallet: payer.address,
      keyId: caller.keyId,
      bodyHash: bodyHashOf(input),
      state: "sending",
      amountRaw: figures.amountRaw,
      withdrawal: input.action === "finish" ? (input.withdrawal ?? null) : built.withdrawal,
      signature: null,
      transaction: null,
      messageHash: sha256Hex(built.messageBytes),
      claimId: null,
      lastValidBlockHeight: built.lastValidBlockHeight,
      builtAtMs: nowMs(),
      expiresAtMs: null,
      error: null
    })

    /** A second writer lost the insert race: answer as a replay of the winner's row. */
    const replayOf = (caller: StakingCaller, input: StakeBuildInput) =>
      Effect.gen(function* () {
        const row = yield* store.get(caller.accountId, input.clientStakeId)
        if (row === undefined) return yield* stakingError("build_not_found", "No staking build with this clientStakeId on this account")
        if (row.bodyHash !== bodyHashOf(input)) {
          return yield* stakingError("idempotency_conflict", "This clientStakeId was used with a different body", { details: { state: row.state } })
        }
        if (row.state === "sending") {
          const settled = yield* settle(row)
          if (settled.state === "failed") return yield* refusal("failed", settled)
          return operation(settled, true)
        }
        const [, outputs] = step(stateOf(row), { _tag: "Built", payer: "main", signature: "" })
        return yield* answerOf(row, outputs)
      })

    const build: StakingServiceShape["build"] = (caller, input) =>
      storage(
        Effect.gen(function* () {
          if (!input.dryRun) {
            const existing = yield* store.get(caller.accountId, input.clientStakeId)
            if (existing !== undefined) return yield* replayOf(caller, input)
          }
          const payer = yield* payerOf(caller, input)
          const w = yield* chain.wallet(payer.address)
          const figures = yield* check(input, w)
          if (input.dryRun) {
            return { success: true, dryRun: true, wallet: payer.address, payer: input.payer, action: input.action, ...figures, ...(input.withdrawal !== undefined ? { withdrawal: input.withdrawal } : {}) }
          }
          const built = yield* chain.build({
            action: input.action,
            owner: payer.address,
            ...(input.amountRaw !== undefined ? { amountRaw: input.amountRaw } : {}),
            ...(input.withdrawal !== undefined ? { withdrawal: input.withdrawal } : {})
          })
          if (payer.payer === "main") {
            const signed = yield* provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromProvider(e) : e)))
            const row = { ...newRow(caller, input, payer, figures, built), signature: signed.signature }
            const [, outputs] = step(undefined, { _tag: "Built", payer: "main", signature: signed.signature })
            if (!(yield* writeOwned(row, store.insert(row)))) return yield* replayOf(caller, input)
            return yield* sendAndSettle(row, outputs.some((o) => o._tag === "Broadcast") ? signed.signedTransaction : undefined)
          }
          const { claimId, expiresAtMs } = yield* wallets.recordBuilt({
            accountId: caller.accountId,
            walletId: payer.walletId ?? "",
            keyId: caller.keyId,
            chain: "solana",
            transaction: built.wire,
            purpose: "stake"
          })
          const row: OperationRow = {
            ...newRow(caller, input, payer, figures, built),
            state: "built",
            transaction: toBase64(built.wire),
            claimId,
            expiresAtMs: Math.min(expiresAtMs, nowMs() + buildLifetimeMs)
          }
          if (!(yield* store.insert(row))) return yield* replayOf(caller, input)
          return builtAnswer(row, false)
        }).pipe(Effect.withSpan("StakingService.build"))
      )

    const existing = (caller: StakingCaller, clientStakeId: string) =>
      Effect.flatMap(store.get(caller.accountId, clientStakeId), (row) =>
        row === undefined ? Effect.fail(stakingError("build_not_found", "No staking build with this clientStakeId on this account")) : Effect.succeed(row)
      )

    const submit: StakingServiceShape["submit"] = (caller, input) =>
      storage(
        Effect.gen(function* () {
          const row = yield* existing(caller, input.clientStakeId)
          const parts = signedParts(input.signedTransaction)
          if (parts === undefined) return yield* stakingError("wrong_message", "signedTransaction does not decode as a transaction")
          const exactMessage = parts.complete && sha256Hex(parts.messageBytes) === row.messageHash
          let nowHeightExpired = false
          if (row.state === "built" && exactMessage && row.lastValidBlockHeight !== null) {
            // A transaction past its blockhash can never land: the build is expired whatever the clock says.
            const seen = yield* chain.observe(parts.signature, row.lastValidBlockHeight)
            nowHeightExpired = seen.outcome === "never_lands"
          }
          const event: OperationEvent = { _tag: "Submit", signature: parts.signature, exactMessage, nowMs: nowHeightExpired ? Number.MAX_SAFE_INTEGER : nowMs() }
          const [next, outputs] = step(stateOf(row), event)
          if (!outputs.some((o) => o._tag === "Broadcast")) {
            if (next?._tag === "expired" && row.state === "built") yield* store.transition(row.accountId, row.clientStakeId, ["built"], "expired")
            return yield* answerOf(row, outputs)
          }
          // Broadcast once: only the request that moves the row to `submitted` sends.
          if (!(yield* writeOwned(row, store.transition(row.accountId, row.clientStakeId, ["built"], "submitted", { signature: parts.signature })))) {
            const now = yield* existing(caller, input.clientStakeId)
            return yield* answerOf(now, step(stateOf(now), event)[1])
          }
          const submitted = { ...row, state: "submitted" as const, signature: parts.signature }
          return yield* sendAndSettle(submitted, toBase64(input.signedTransaction))
        }).pipe(Effect.withSpan("StakingService.submit"))
      )

    const confirm: StakingServiceShape["confirm"] = (caller, input) =>
      storage(
        Effect.gen(function* () {
          const row = yield* existing(caller, input.clientStakeId)
          if (row.state === "confirmed") return operation(row, true)
          const landedTx = yield* chain.landedMessage(input.signature)
          let landed: Observation
          if (landedTx === undefined) landed = row.lastValidBlockHeight === null ? "pending" : (yield* chain.observe(input.signature, row.lastValidBlockHeight)).outcome
          else landed = landedTx.err === null ? "landed" : "reverted"
          const exactMessage = landedTx === undefined ? true : sha256Hex(landedTx.messageBytes) === row.messageHash
          const [, outputs] = step(stateOf(row), { _tag: "Confirm", signature: input.signature, exactMessage, landed })
          if (!outputs.some((o) => o._tag === "RecordConfirmed")) return yield* answerOf(row, outputs)
          const after = yield* record(row, { _tag: "Confirm", signature: input.signature, exactMessage, landed })
          return operation(after, false)
        }).pipe(Effect.withSpan("StakingService.confirm"))
      )

    const positions: StakingServiceShape["positions"] = (caller) =>
      storage(
        Effect.gen(function* () {
          const pool = yield* chain.pool
          const clock = yield* chain.clockSec
          const listed = yield* wallets.list(caller.principal)
          const eligible = new Set(
            yield* deps.accountWallets
              .eligibleSolanaWallets(caller.accountId)
              .pipe(Effect.mapError((e) => stakingError("chain_unavailable", `wallets unreadable: ${e.message}`, { retryable: true })))
          )
          const embedded = listed.embeddedWallets.filter((w) => w.chain === "solana").map((w) => ({ payer: "main", address: w.address, linkedWalletId: null, label: null, tee: false }))
          const linked = listed.wallets
            .filter((w) => w.chain === "solana" && (w.walletKind === "imported" || w.walletKind === "tee"))
            .map((w) => ({ payer: "linked", address: w.address, linkedWalletId: w.id, label: w.label ?? null, tee: w.walletKind === "tee" }))
          const owned = [...embedded, ...linked].slice(0, 200)
          // The account's EVM-chain rewards (one per graduated Hood token it earned a share of),
          // listed on its first counting wallet: the mint (a 0x address) and the id (hood-<n>) name the chain.
          const hood = (yield* hoodRewards.forAccount(caller.accountId)).map((r) => ({
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
            (yield* deps.accountWallets
              .rewardEvmWallet(caller.accountId)
              .pipe(Effect.mapError((e) => stakingError("chain_unavailable", `wallets unreadable: ${e.message}`, { retryable: true })))) !== undefined
          const rows = yield* Effect.forEach(
            owned,
            (w) =>
              Effect.gen(function* () {
                const stake = yield* chain.wallet(w.address)
                const claiming = yield* claimStore.claiming(stake.rewards.map((r) => r.rewardId.toString()))
                // The tier snapshot's figure, read by the same reader.
                const stakedRaw = yield* deps.balances
                  .stakedBalance("solana", w.address)
                  .pipe(Effect.mapError((e) => stakingError("chain_unavailable", e.message, { retryable: true })))
                const withdrawals = stake.withdrawals.map((x) => ({
                  withdrawal: x.withdrawal,
                  amountRaw: x.amountRaw.toString(),
                  startTime: Number(x.startTimeSec),
                  endTime: Number(x.endTimeSec),
                  claimTime: x.claimTimeSec === 0n ? null : Number(x.claimTimeSec),
                  claimable: x.claimTimeSec === 0n && clock >= x.endTimeSec
                }))
                const counts = eligible.has(w.address)
                return {
                  ...w,
                  platformMint: options.platformMint,
                  stakedMint: options.receiptMint,
                  decimals: PLATFORM_DECIMALS,
                  amountRaw: stakedRaw.toString(),
                  cndlValueRaw: stakedRaw.toString(),
                  heldRaw: stake.platformRaw.toString(),
                  pendingWithdrawalRaw: stake.withdrawals.filter((x) => x.claimTimeSec === 0n).reduce((s, x) => s + x.amountRaw, 0n).toString(),
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
              }),
            { concurrency: 8 }
          )
          return {
            success: true,
            withdrawalTimelockSeconds: Number(pool.withdrawalTimelockSeconds),
            paused: pool.paused,
            maxActiveWithdrawals: pool.maxActiveWithdrawals,
            wallets: rows
          }
        }).pipe(Effect.withSpan("StakingService.positions"))
      )

    /** Takes over an operation whose lease ended (or that never had one); false when a live process watches it or it settled. */
    const takeOver = (row: OperationRow) =>
      Effect.gen(function* () {
        const key = stakingLeaseKey(row)
        if (!(yield* leases.take(STAKING_LEASE_KIND, key))) return false
        // Read again under the lease: the previous owner may have settled it after the list was read.
        const current = yield* store.get(row.accountId, row.clientStakeId).pipe(Effect.tapErrorCause(() => leases.release(STAKING_LEASE_KIND, key).pipe(Effect.ignore)))
        if (current === undefined || (current.state !== "sending" && current.state !== "submitted")) {
          yield* leases.release(STAKING_LEASE_KIND, key)
          return false
        }
        // Settled in the background: a pending one is watched until its blockhash expires.
        yield* Effect.forkDaemon(
          owning(current, settle(current).pipe(Effect.retry({ schedule: Schedule.spaced(Duration.seconds(2)), times: 60 }))).pipe(
            Effect.catchAll((e) => Effect.logWarning("a staking operation left in flight is still unsettled", e))
          )
        )
        return true
      })

    const resumeOperations: StakingServiceShape["resumeOperations"] = storage(
      Effect.gen(function* () {
        const rows = yield* store.inFlight
        const watched = yield* leases.live(STAKING_LEASE_KIND, rows.map(stakingLeaseKey))
        let resumed = 0
        for (const row of rows) if (!watched.has(stakingLeaseKey(row)) && (yield* takeOver(row))) resumed++
        return resumed
      })
    )

    /** A Hood reward is read-only here (4.2: "made from the site"): refused as not usable by the key, or not found. */
    const refuseHoodReward = (caller: StakingCaller, rewardId: string) =>
      Effect.gen(function* () {
        const r = yield* hoodRewards.byId(rewardId)
        if (r === undefined) return yield* stakingError("reward_not_found", `No reward ${rewardId.slice(0, 64)}`)
        return yield* stakingError(
          "reward_not_owned",
          r.accountId === caller.accountId
            ? "Rewards on the EVM chain are not agent-claimable: claim this one from the site"
            : "This reward belongs to a wallet this key may not use",
          { details: { chain: "hood" } }
        )
      })

    const resumeInFlight: StakingServiceShape["resumeInFlight"] = Effect.zipWith(resumeOperations, storage(rewards.resume), (a, b) => a + b)

    const claimReward: StakingServiceShape["claimReward"] = (caller, rewardId) =>
      caller.keyPaused
        ? Effect.fail(stakingError("key_paused", "This key is paused; a paused key cannot claim staking rewards"))
        : storage(HOOD_REWARD_ID.test(rewardId) ? refuseHoodReward(caller, rewardId) : rewards.claim(caller, rewardId))

    return { positions, build, submit, confirm, claimReward, resumeInFlight, resumeOperations, chain, hoodRewards } satisfies StakingServiceShape
  })

/** The built transaction's blockhash (its lifetime token). */
const recentBlockhashOf = (row: OperationRow): string | null => {
  if (row.transaction === null) return null
  try {
    const tx = getTransactionDecoder().decode(Buffer.from(row.transaction, "base64"))
    return getCompiledTransactionMessageDecoder().decode(tx.messageBytes).lifetimeToken
  } catch {
    return null
  }
}

/** Symbol and name of the reward mints the distributor pays in. */
const rewardAsset = (mint: string): { symbol: string; name: string } =>
  mint === USDC_MINT ? { symbol: "USDC", name: "USD Coin" } : mint === SVC_MINT ? { symbol: "SVC", name: "curvestream platform token" } : { symbol: "", name: "" }

export const layer = (
  options: StakingServiceOptions,
  deps: StakingServiceDeps
): Layer.Layer<StakingService, never, SqlClient.SqlClient | WalletProvider | WalletService> => Layer.effect(StakingService, make(options, deps))
