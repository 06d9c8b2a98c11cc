/**
 * A Hood self-signed confirm (launch spec 3.2, 3.4, endpoint rule 5): the attempt the chain shows
 * is verified (`createCurve` from the payer, to the factory with the build's own calldata, its
 * `CurveCreated` naming the predicted curve; the fee leg; a reported dev buy) and recorded once;
 * a TEE build's operation is advanced by `HoodSelfOperation`.
 */
import { Effect } from "effect"
import { type Address, getAddress } from "viem"
import { curveCreatedIn } from "../../../chain/hood/launch/HeadlessCalls.js"
import { isEvmTxHash } from "../../../domain/ChainValues.js"
import type { HoodSelfConfirmInput } from "../HoodSelfLaunch.js"
import { launchStorage, payerRules, selfSignedTier } from "../internal/LaunchGates.js"
import { attribute, confirmedWrites, hoodLaunchResult } from "../internal/LaunchRecords.js"
import { failOnChainFailure, feeTxUsedElsewhere, recordConfirmed, recordFeeTx, selfJobNotFound } from "../internal/SelfBuilds.js"
import type { Also, LaunchRecord, LaunchRef } from "../LaunchLedger.js"
import { isRevivable, type StoredResult } from "../LaunchLedgerMachine.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfAttempts } from "./HoodSelfAttempt.js"
import type { HoodSelfContext, Stored, StoredFee } from "./HoodSelfContext.js"
import { makeHoodSelfOperation } from "./HoodSelfOperation.js"
import type { HoodSelfSpend } from "./HoodSelfSpend.js"
import { devBuyMatches, devBuyOutcome, feeLegVerifies, readBehindHead, unminedRecordOf } from "./HoodSelfRules.js"

const storage = launchStorage

export const makeHoodSelfConfirm = (ctx: HoodSelfContext, attempts: HoodSelfAttempts, spend: HoodSelfSpend) => {
  const { config, deps, chain, withSql } = ctx
  const { ledger, wallets } = deps
  const { receiptOf, transactionOf } = chain
  const { storedOf } = attempts
  const notFound = selfJobNotFound

  /** The fee leg verifies: mined successfully, from the payer, to the treasury, exactly the fee. */
  const feeVerified = (fee: StoredFee, payer: Address, hash: string | undefined) =>
    Effect.gen(function* () {
      if (hash === undefined) return false
      const receipt = yield* receiptOf(hash)
      const tx = yield* transactionOf(hash)
      return feeLegVerifies(fee, payer, receipt, tx)
    })

  /** Endpoint rule 5: a dev buy is bound only when it went to the curve with exactly `buyAmount`; else it is ignored. */
  const boundDevBuy = (buyAmountRaw: bigint, curve: Address, hash: string | undefined) =>
    Effect.gen(function* () {
      if (hash === undefined || buyAmountRaw === 0n) return null
      const tx = yield* transactionOf(hash)
      if (!devBuyMatches(tx, curve, buyAmountRaw)) return null
      return devBuyOutcome(hash, yield* receiptOf(hash))
    })

  /** The attempt the chain shows: verify `createCurve` (and the fee, and a reported dev buy), then record the launch. */
  const record = (row: LaunchRecord, stored: Stored, hashes: { signature: string; feeTxHash?: string | undefined; devBuySignature?: string | undefined }) =>
    Effect.gen(function* () {
      const c = yield* chain.configured
      const ref: LaunchRef = { accountId: row.accountId, clientLaunchId: row.clientLaunchId }
      const attemptRef = { ...ref, attempt: row.attempt }
      const payer = getAddress(stored.row.payer)
      const receipt = yield* receiptOf(hashes.signature)
      if (receipt === undefined) {
        // A TEE operation is recorded only after its createCurve leg was seen mined: a receipt "not found" now is a node behind, never a
        // verdict (3.4: once createCurve is mined, never build again), so it is the retryable read failure, not JOB_NOT_FOUND.
        if (stored.build.operation !== undefined) {
          return yield* launchFailure("launch_failed", "the createCurve receipt is not readable now; confirm again", { retryable: true, details: { reason: "chain_read_failed" } })
        }
        // Not mined. Dead only when, at the head's one block, the payer's nonce moved past the build's and no curve exists (`unminedRecordOf`).
        const unmined = unminedRecordOf(yield* chain.attemptAtHead(payer, c.factory, stored.build.pool), stored.row.resolved.nonce)
        if (unmined === "not_found") return yield* notFound()
        if (unmined === "unread") return yield* readBehindHead("the createCurve", "confirm")
        return yield* launchFailure("validation_failed", "the createCurve transaction is not mined yet; confirm again once it is", { field: "signature", retryable: true })
      }
      const tx = yield* transactionOf(hashes.signature)
      if (tx === undefined) return yield* launchFailure("launch_failed", "the createCurve transaction is not readable; confirm again", { retryable: true, details: { reason: "chain_read_failed" } })
      if (tx.from !== payer) return yield* launchFailure("signer_mismatch", "the createCurve transaction was not sent by the wallet this launch was built for", { retryable: false })
      // This build's createCurve: to the factory with the build's own calldata (its salt names the attempt). Anything else, failed or not, is not this launch.
      const notThis = launchFailure("validation_failed", "this transaction did not create this launch's curve", { field: "signature", retryable: false })
      if (tx.to !== getAddress(c.factory) || tx.input.toLowerCase() !== stored.build.transaction.data.toLowerCase()) return yield* notThis
      if (receipt.status !== "success") {
        yield* failOnChainFailure(ledger, row)
        yield* spend.settleFailed(stored)
        return yield* launchFailure("launch_failed", `createCurve ${hashes.signature} reverted on chain; build again with the same clientLaunchId`, {
          retryable: true,
          details: { reason: "reverted", signature: hashes.signature }
        })
      }
      const created = curveCreatedIn(c.factory, receipt)
      if (created === undefined || created.curve !== getAddress(stored.build.pool) || created.creator !== payer) return yield* notThis
      const fee = stored.row.fee
      const feeReused = fee !== null && hashes.feeTxHash !== undefined && (yield* withSql(feeTxUsedElsewhere(attemptRef, hashes.feeTxHash)).pipe(storage("reading the fee leg")))
      if (fee !== null && (feeReused || !(yield* feeVerified(fee, payer, hashes.feeTxHash)))) {
        return yield* launchFailure("fee_leg_missing", "this build's platform fee leg has no verifying feeTxHash; pay only the missing fee with the build's feeTransfer leg, then confirm", {
          retryable: false
        })
      }
      // A TEE operation's dev buy is its own leg, settled by the operation (mined or reverted): its outcome is that, never a fresh read.
      const op = stored.build.operation
      const buyLeg = op?.legs.find((l) => l.kind === "devBuy")
      const devBuy =
        op !== undefined
          ? buyLeg?.txHash == null
            ? null
            : devBuyOutcome(buyLeg.txHash, buyLeg.status === "mined" ? { status: "success" } : buyLeg.status === "reverted" ? { status: "reverted" } : undefined)
          : yield* boundDevBuy(stored.row.request.buyAmountRaw, created.curve, hashes.devBuySignature)
      const result = hoodLaunchResult({ baseUrl: config.baseUrl, explorerUrl: config.explorerUrl }, stored.row.request, created, devBuy)
      const onChain = { mint: created.token, pool: created.curve, signature: created.txHash }
      const writes: Also = (r) =>
        Effect.gen(function* () {
          yield* attribute(
            { accountId: row.accountId, keyId: stored.row.keyId, path: "self", chain: "hood", mint: created.token, visibility: stored.row.request.visibility },
            deps.agentLaunches
          )(r)
          // One fee transfer pays one launch: the unique index refuses a race that passed the check above.
          if (fee !== null && hashes.feeTxHash !== undefined) yield* recordFeeTx(attemptRef, hashes.feeTxHash)
          yield* confirmedWrites({ keyId: stored.row.keyId, fee: fee === null ? null : { quoteAsset: "eth", feeRaw: BigInt(fee.feeRaw) }, devBuy: result.devBuy })(r)
          // A TEE build's dev-buy hold, from the operation's legs: booked once when the buy landed; the fee alone when only the fee did.
          yield* spend.settledIn(stored, op)(r)
        })
      const confirmed = yield* recordConfirmed(ledger, row, result, onChain, writes)
      const claims = stored.build.operation?.legs.map((l) => l.claimId) ?? [stored.row.claimId, ...(fee !== null ? [fee.leg.claimId] : [])]
      for (const claimId of claims) yield* wallets.settleClaim(claimId, "confirmed").pipe(Effect.ignore)
      return confirmed
    })

  const operations = makeHoodSelfOperation(ctx, record, spend)

  const confirm = (caller: SelfCaller, input: HoodSelfConfirmInput): Effect.Effect<StoredResult, LaunchError> =>
    Effect.gen(function* () {
      yield* selfSignedTier(caller.plan)
      yield* chain.configured
      const ref: LaunchRef = { accountId: caller.accountId, clientLaunchId: input.clientLaunchId }
      const row = yield* ledger.get(ref).pipe(storage("reading the launch ledger"))
      if (row === undefined || row.path !== "self" || row.chain !== "hood") return yield* notFound()
      // An earlier dead attempt's kept hold is decided again at every confirm of the id (its buy's nonce may be used by now).
      yield* spend.settleEarlier(ref, row.attempt, storedOf)
      if (row.state === "confirmed") return row.result ?? {}
      if (row.state === "failed" && !isRevivable(row)) return yield* notFound()
      const stored = yield* storedOf({ ...ref, attempt: row.attempt })
      if (stored === undefined) return yield* notFound()
      yield* payerRules(wallets, caller.principal, stored.row.walletId, "evm")
      const op = stored.build.operation
      if (op !== undefined) return yield* operations.advance(caller, row, stored, op, input)
      if (input.signature === undefined) return yield* launchFailure("validation_failed", "signature is required: the broadcast createCurve hash", { field: "signature", retryable: false })
      // The confirm body carries no chain: a hash that is not 0x and 32 bytes is refused, not read as "not mined yet" or an unpaid fee.
      for (const field of ["signature", "feeTxHash", "devBuySignature"] as const) {
        const hash = input[field]
        if (hash !== undefined && !isEvmTxHash(hash)) {
          return yield* launchFailure("validation_failed", `${field} must be a Hood transaction hash (0x and 32 bytes)`, { field, retryable: false })
        }
      }
      return yield* record(row, stored, { signature: input.signature, feeTxHash: input.feeTxHash, devBuySignature: input.devBuySignature })
    })

  return { confirm }
}
