/**
 * A Hood TEE build's sequenced operation (launch spec 2.3, 3.4, endpoint rule 4), driven by its
 * pure machine (`HoodOperation.step`): each confirm reads the chain for the sent legs, takes the
 * signed next leg (recorded, hash and bytes, before it is broadcast), reissues a reverted fee leg
 * on a fresh nonce, and records the launch (`record`) once every leg is mined. The stored
 * operation is compare-and-swapped: a confirm that lost the race writes nothing.
 */
import { Effect } from "effect"
import { type Address, getAddress, type Hex, keccak256, parseTransaction, recoverTransactionAddress, serializeTransaction } from "viem"
import type { HoodCall } from "../../../chain/hood/launch/HeadlessCalls.js"
import { type HoodOperation, type HoodOperationLeg, step as stepOperation } from "../HoodOperation.js"
import type { HoodSelfConfirmInput } from "../HoodSelfLaunch.js"
import { launchStorage } from "../internal/LaunchGates.js"
import { failOnChainFailure, updateOperation } from "../internal/SelfBuilds.js"
import type { AttemptRef, LaunchRecord } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfContext, Stored } from "./HoodSelfContext.js"
import { DEV_BUY_GAS_LIMIT, OPERATION_WAIT_MS } from "./HoodSelfRules.js"
import type { HoodSelfSpend } from "./HoodSelfSpend.js"

const storage = launchStorage

/** Records the launch the chain shows for an attempt (`HoodSelfConfirm`'s verification). */
export type RecordLaunch = (
  row: LaunchRecord,
  stored: Stored,
  hashes: { signature: string; feeTxHash?: string | undefined; devBuySignature?: string | undefined }
) => Effect.Effect<StoredResult, LaunchError>

export const makeHoodSelfOperation = (ctx: HoodSelfContext, record: RecordLaunch, spend: HoodSelfSpend) => {
  const { chain, withSql } = ctx
  const { ledger, wallets } = ctx.deps

  /** Compare-and-swap of the stored operation: a confirm that lost the race to another answers retryable and wrote nothing. */
  const saveOperation = (ref: AttemptRef, from: HoodOperation, to: HoodOperation) =>
    withSql(updateOperation(ref, from, to)).pipe(
      storage("recording the operation"),
      Effect.flatMap((saved) =>
        saved
          ? Effect.void
          : Effect.fail(launchFailure("launch_failed", "another confirm is advancing this operation; confirm again with the same operationId", { retryable: true, details: { reason: "build_in_progress" } }))
      )
    )

  /** A leg rebuilt for the payer on `nonce` with a new claim (a reissued fee leg, or a later leg moved after it). */
  const reissue = (caller: SelfCaller, stored: Stored, op: HoodOperation, leg: HoodOperationLeg, nonce: number) =>
    Effect.gen(function* () {
      const c = yield* chain.configured
      const from = getAddress(stored.row.payer)
      const call: HoodCall = { to: getAddress(leg.to), data: leg.data as Hex, value: BigInt(leg.value) }
      const tx = yield* chain.unsigned(c.chain, from, call, nonce, leg.kind, leg.kind === "devBuy" ? DEV_BUY_GAS_LIMIT : undefined)
      const claim = yield* wallets
        .recordBuilt({ accountId: caller.accountId, walletId: stored.row.walletId, keyId: caller.keyId, chain: "evm", transaction: Buffer.from(tx.slice(2), "hex"), purpose: "launch", txExpiresAtMs: null })
        .pipe(Effect.mapError(() => launchFailure("launch_failed", "reissuing the leg failed; confirm again", { retryable: true })))
      // The superseded claim was expired (or its signed bytes can never land) before this (`spend.supersede`); the dev-buy hold outlives the new claim.
      yield* spend.keepUntil(stored, claim.expiresAtMs)
      return stepOperation(op, { _tag: "Reissued", leg: leg.index, unsignedTransaction: tx, nonce, claimId: claim.claimId })
    })

  /**
   * Reads every sent leg. Mined: `Mined` or `Reverted` by its receipt. Not mined: if another
   * transaction used its nonce it can never be mined (`Reverted`); else its stored bytes are
   * broadcast again (a crash or a refused send after the hash was recorded). A reverted fee leg is
   * reissued on a fresh nonce with a new claim, and the legs after it move to the nonces after it
   * (3.4); a reverted buy is final (rule 4).
   */
  const observe = (caller: SelfCaller, stored: Stored, op: HoodOperation) =>
    Effect.gen(function* () {
      const from = getAddress(stored.row.payer)
      let next = op
      for (const leg of op.legs) {
        if (leg.status !== "sent" || leg.txHash === null) continue
        const receipt = yield* chain.receiptOf(leg.txHash)
        if (receipt === undefined) {
          // The nonce read at the head this node answers, so a node behind the block that mined the leg never sees it passed.
          const head = yield* chain.rpc("block number", (cl) => cl.getBlockNumber({ cacheTime: 0 }))
          const used = yield* chain.rpc("nonce", (cl) => cl.getTransactionCount({ address: from, blockNumber: head }))
          if (used > leg.nonce) {
            // Another transaction took the nonce (or ours was mined meanwhile: read once more).
            if ((yield* chain.receiptOf(leg.txHash)) === undefined) next = stepOperation(next, { _tag: "Reverted", leg: leg.index })
            else next = stepOperation(next, { _tag: "Mined", leg: leg.index })
          } else if (leg.signedTransaction != null) {
            yield* chain.rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: leg.signedTransaction as Hex })).pipe(Effect.ignore)
          }
          continue
        }
        next = stepOperation(next, { _tag: receipt.status === "success" ? "Mined" : "Reverted", leg: leg.index })
      }
      for (const leg of next.legs) {
        if (leg.status !== "reverted" || leg.kind !== "feeTransfer") continue
        // A later leg the relay already signed is not replaced while its bytes can land (nothing is saved before this).
        for (const later of next.legs.filter((l) => l.index > leg.index && l.status === "pending")) yield* spend.supersede(stored, later)
        // New buy bytes are reserved before signing: a hold the sweep released is decided anew (refused: nothing reissued).
        yield* spend.holdAgain(caller, stored)
        let nonce = yield* chain.rpc("nonce", (cl) => cl.getTransactionCount({ address: from, blockTag: "pending" }))
        next = yield* reissue(caller, stored, next, leg, nonce)
        for (const later of next.legs.filter((l) => l.index > leg.index && l.status === "pending")) {
          nonce += 1
          next = yield* reissue(caller, stored, next, later, nonce)
        }
      }
      return next
    })

  /** The signed `nextLeg`: exactly the leg's unsigned transaction, signed by the payer. */
  const signedLeg = (op: HoodOperation, payer: Address, signedTransaction: string) =>
    Effect.gen(function* () {
      const leg = op.nextLeg === null ? undefined : op.legs[op.nextLeg]
      const refused = launchFailure("validation_failed", "signedTransaction is not the operation's next leg signed by its wallet", { field: "signedTransaction", retryable: false })
      if (leg === undefined || leg.status !== "pending" || !/^0x[0-9a-fA-F]+$/.test(signedTransaction)) return yield* refused
      const parsed = yield* Effect.try({ try: () => parseTransaction(signedTransaction as Hex), catch: () => refused })
      const { r: _r, s: _s, v: _v, yParity: _y, ...fields } = parsed as typeof parsed & { r?: Hex; s?: Hex; v?: bigint; yParity?: number }
      const same = yield* Effect.try({ try: () => serializeTransaction(fields as Parameters<typeof serializeTransaction>[0]) === leg.unsignedTransaction, catch: () => refused })
      const signer = yield* Effect.tryPromise({ try: () => recoverTransactionAddress({ serializedTransaction: signedTransaction as never }), catch: () => refused })
      if (!same || getAddress(signer) !== payer) return yield* refused
      return { leg, hash: keccak256(signedTransaction as Hex) }
    })

  /** One step of a TEE operation: read the chain, take the signed next leg (recorded before it is sent), and record the launch once every leg is mined. */
  const advance = (caller: SelfCaller, row: LaunchRecord, stored: Stored, op0: HoodOperation, input: HoodSelfConfirmInput) =>
    Effect.gen(function* () {
      if (input.operationId !== op0.operationId) {
        return yield* launchFailure("validation_failed", "operationId does not name this launch's operation", { field: "operationId", retryable: false })
      }
      const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
      const payer = getAddress(stored.row.payer)
      let saved = op0
      const save = (to: HoodOperation) => (to === saved ? Effect.void : Effect.tap(saveOperation(ref, saved, to), () => Effect.sync(() => void (saved = to))))
      let op = yield* observe(caller, stored, op0)
      yield* save(op)
      if (input.signedTransaction !== undefined) {
        const { leg, hash } = yield* signedLeg(op, payer, input.signedTransaction)
        // Recorded (hash and bytes) before it is broadcast: a crash or a refused send is retried from the record.
        op = stepOperation(op, { _tag: "Signed", leg: leg.index, txHash: hash, signedTransaction: input.signedTransaction })
        yield* save(op)
        yield* chain.rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: input.signedTransaction as Hex })).pipe(Effect.ignore)
        yield* chain.rpc("receipt", (c) => c.waitForTransactionReceipt({ hash, pollingInterval: 250, timeout: OPERATION_WAIT_MS })).pipe(Effect.ignore)
        op = yield* observe(caller, stored, op)
        yield* save(op)
      }
      if (op.state === "failed") {
        yield* failOnChainFailure(ledger, row)
        // createCurve reverted: the dev-buy hold is decided by the buy's claim (a signed buy can still move its ETH).
        yield* spend.settleFailed(stored)
        return yield* launchFailure("launch_failed", "createCurve reverted on chain; build again with the same clientLaunchId", { retryable: true, details: { reason: "reverted" } })
      }
      if (op.nextLeg !== null) return { clientLaunchId: row.clientLaunchId, operation: op } satisfies StoredResult
      const hashOf = (kind: string) => op.legs.find((l) => l.kind === kind)?.txHash ?? undefined
      const result = yield* record(row, { ...stored, build: { ...stored.build, operation: op } }, { signature: hashOf("createCurve")!, feeTxHash: hashOf("feeTransfer"), devBuySignature: hashOf("devBuy") })
      yield* save(stepOperation(op, { _tag: "Recorded" })).pipe(Effect.ignore)
      return result
    })

  return { advance }
}
