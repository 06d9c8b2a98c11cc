/**
 * `build` of a stake, unstake or finish (spec document 2, 3.3): every check (payer, balances, the
 * pool, the withdrawal's wait, SOL for fee, rent and reserve), then either the dry run's figures,
 * or the embedded payer's signed transaction recorded `sending` and sent once through the attempt
 * runner, or a linked/TEE build recorded `built` with a single-use sign claim. A repeated id is a
 * replay of the stored row (a changed body is refused).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { PayerError, SignClaimError, WalletError } from "../../wallets/WalletError.js"
import { type BuiltTransaction, toBase64 } from "../StakingChain.js"
import { type StakingError, stakingError } from "../StakingError.js"
import type { StakeBuildInput, StakingCaller } from "../StakingInputs.js"
import { step } from "../StakingMachine.js"
import { type OperationRow, stateOf, type StakePayer } from "../StakingStore.js"
import type { StakeBuildView, StakeDryRunView, StakeOperationView } from "../StakingViews.js"
import { builtView, buildNotFound, drivenElsewhere, fromProvider, operationView, refusal, replayView, unconfirmed } from "./Answers.js"
import { awaitVerdict, observedEvent } from "./OperationAttempt.js"
import { checkBuild, type Figures } from "./BuildChecks.js"
import type { StakingContext } from "./StakingContext.js"

export const sha256Hex = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex")

/** The idempotency hash of a build body (everything but `dryRun`). Pure. */
export const bodyHashOf = (i: StakeBuildInput): string =>
  sha256Hex(JSON.stringify([i.action, i.payer, i.linkedWalletId ?? null, i.amountRaw?.toString() ?? null, i.withdrawal ?? null]))

type Failure = StakingError | PayerError | SignClaimError | WalletError

/** What an operation the runner drove answers: confirmed, failed (409), or still in flight (pending). */
export const settledAnswer = (ctx: StakingContext, row: OperationRow, replay: boolean): Effect.Effect<StakeOperationView, StakingError> =>
  row.state === "failed"
    ? Effect.fail(refusal("failed", row))
    : row.state === "sending" || row.state === "submitted"
      ? Effect.fail(unconfirmed(row, ctx.confirmTimeoutMs))
      : Effect.succeed(operationView(row, replay))

export const makeStakeBuild = (ctx: StakingContext) => {
  const { chain, store } = ctx

  /** The wallet paying for `input`: the embedded wallet (main) or a spend-capable linked or TEE wallet. */
  const payerOf = (caller: StakingCaller, input: StakeBuildInput) =>
    Effect.gen(function* () {
      if (input.payer === "main") {
        if (caller.embeddedWallet === "denied") {
          return yield* stakingError("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot stake from the embedded wallet")
        }
        const embedded = (yield* ctx.provider.embeddedWallets(caller.accountId)).find((w) => w.chain === "solana")
        if (embedded === undefined) return yield* stakingError("agent_wallet_not_embedded", "This account has no embedded Solana wallet")
        return { payer: "main" as StakePayer, walletId: null, address: embedded.address }
      }
      const view = yield* ctx.wallets.resolvePayer(caller.principal, input.linkedWalletId ?? "", "solana", "spend")
      return { payer: (view.walletKind === "tee" ? "tee" : "linked") as StakePayer, walletId: view.id, address: view.address }
    })

  const newRow = (caller: StakingCaller, input: StakeBuildInput, payer: { payer: StakePayer; walletId: string | null; address: string }, figures: Figures, built: BuiltTransaction, builtAtMs: number): OperationRow => ({
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
    builtAtMs,
    expiresAtMs: null,
    error: null
  })

  /** A stored id: the replay of its row (a `sending` one is settled from the chain first, without its lease). */
  const replayOf = (caller: StakingCaller, input: StakeBuildInput): Effect.Effect<StakeOperationView, Failure | SqlError> =>
    Effect.gen(function* () {
      const row = yield* store.get(caller.accountId, input.clientStakeId)
      if (row === undefined) return yield* buildNotFound()
      if (row.bodyHash !== bodyHashOf(input)) {
        return yield* stakingError("idempotency_conflict", "This clientStakeId was used with a different body", { details: { state: row.state } })
      }
      if (row.state === "sending") {
        const seen = yield* awaitVerdict(ctx, row)
        if (seen._tag === "None") return yield* unconfirmed(row, ctx.confirmTimeoutMs)
        const applied = yield* ctx.operations.apply(row, row, observedEvent(seen.value)).pipe(Effect.catchTag("RowLeaseLost", () => drivenElsewhere(row)))
        const settled = applied._tag === "Moved" ? ((yield* store.get(row.accountId, row.clientStakeId)) ?? row) : (applied.state ?? row)
        return yield* settledAnswer(ctx, settled, true)
      }
      const [, outputs] = step(stateOf(row), { _tag: "Built", payer: "main", signature: "" })
      const refused = outputs.find((o) => o._tag === "Refuse")
      return refused?._tag === "Refuse" ? yield* refusal(refused.reason, row) : replayView(row)
    })

  const build = (caller: StakingCaller, input: StakeBuildInput): Effect.Effect<StakeBuildView, Failure | SqlError> =>
    Effect.gen(function* () {
      if (!input.dryRun && (yield* store.get(caller.accountId, input.clientStakeId)) !== undefined) return yield* replayOf(caller, input)
      const payer = yield* payerOf(caller, input)
      const figures = yield* checkBuild(chain, input, yield* chain.wallet(payer.address))
      if (input.dryRun) {
        return {
          dryRun: true,
          wallet: payer.address,
          payer: input.payer,
          action: input.action,
          ...figures,
          ...(input.withdrawal !== undefined ? { withdrawal: input.withdrawal } : {})
        } satisfies StakeDryRunView
      }
      const built = yield* chain.build({
        action: input.action,
        owner: payer.address,
        ...(input.amountRaw !== undefined ? { amountRaw: input.amountRaw } : {}),
        ...(input.withdrawal !== undefined ? { withdrawal: input.withdrawal } : {})
      })
      if (payer.payer === "main") {
        const signed = yield* ctx.provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(Effect.mapError((e) => (e._tag === "WalletProviderError" ? fromProvider(e) : e)))
        const row = { ...newRow(caller, input, payer, figures, built, yield* ctx.clock.currentTimeMillis), signature: signed.signature }
        // Recorded `sending` (and this process its driver) before the one send; then its verdict.
        const applied = yield* ctx.operations
          .apply(row, undefined, { event: { _tag: "Built", payer: "main", signature: signed.signature }, insert: row, wire: signed.signedTransaction })
          .pipe(Effect.catchTag("RowLeaseLost", () => drivenElsewhere(row)))
        if (applied._tag !== "Saved") return yield* replayOf(caller, input)
        return yield* settledAnswer(ctx, applied.state, false)
      }
      const { claimId, expiresAtMs } = yield* ctx.wallets.recordBuilt({
        accountId: caller.accountId,
        walletId: payer.walletId ?? "",
        keyId: caller.keyId,
        chain: "solana",
        transaction: built.wire,
        purpose: "stake"
      })
      const builtAtMs = yield* ctx.clock.currentTimeMillis
      const row: OperationRow = {
        ...newRow(caller, input, payer, figures, built, builtAtMs),
        state: "built",
        transaction: toBase64(built.wire),
        claimId,
        expiresAtMs: Math.min(expiresAtMs, builtAtMs + ctx.buildLifetimeMs)
      }
      const recorded = yield* ctx.operations.apply(row, undefined, {
        event: { _tag: "Built", payer: payer.payer === "tee" ? "tee" : "linked", expiresAtMs: row.expiresAtMs ?? 0 },
        insert: row
      }).pipe(Effect.catchTag("RowLeaseLost", () => drivenElsewhere(row)))
      if (recorded._tag !== "Saved") return yield* replayOf(caller, input)
      return builtView(row, false)
    })

  return { build }
}
