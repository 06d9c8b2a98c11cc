/**
 * A Hood TEE build's sequenced operation (launch spec 2.3, 3.4, endpoint rule 4), driven by its
 * pure machine (`HoodOperation.step`): each confirm reads the chain for the sent legs, takes the
 * signed next leg (recorded, hash and bytes, before it is broadcast), reissues a reverted fee leg
 * on a fresh nonce (a later leg whose relay-signed bytes already landed is recorded mined, not
 * reissued), decides the pending next leg from its sign claim (`pendingLegVerdict`: reissued at
 * the same nonce once its claim can no longer be signed and never was; its relay-signed bytes, sent
 * by the agent, recorded as the chain shows them), and records the launch (`record`) once every leg
 * is mined. The stored operation is compare-and-swapped: a confirm that lost the race writes nothing.
 */
import { Effect } from "effect"
import { type Address, getAddress, type Hex, keccak256, parseTransaction, recoverTransactionAddress, serializeTransaction } from "viem"
import type { HoodCall } from "../../../chain/hood/launch/HeadlessCalls.js"
import { eventsOf, type HoodOperation, type HoodOperationLeg, type PendingClaimSeen, pendingLegVerdict, step as stepOperation } from "../HoodOperation.js"
import type { HoodSelfConfirmInput } from "../HoodSelfLaunch.js"
import { launchStorage } from "../internal/LaunchGates.js"
import { failOnChainFailure, updateOperation } from "../internal/SelfBuilds.js"
import type { AttemptRef, LaunchRecord } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
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
      // The superseded claim was expired (or its signed bytes can never land) before this (`spend.supersede`, `pendingClaimOf`); the hold outlives the new claim.
      yield* spend.keepUntil(stored, claim.expiresAtMs)
      return stepOperation(op, { _tag: "Reissued", leg: leg.index, unsignedTransaction: tx, nonce, claimId: claim.claimId })
    })

  /**
   * A reverted fee leg (3.4, "pay only the missing fee"): every later leg still pending is first
   * decided by `spend.supersede` (nothing is saved before this): unsigned, or signed bytes that can
   * never land → reissued; signed bytes that landed → recorded mined with their hash (`Landed`),
   * not reissued; signed bytes that can still land → the confirm fails retryable. The fee leg is
   * reissued at the payer's pending nonce and the legs still to reissue on the nonces after it.
   * Only when a dev-buy leg is among them are its new bytes reserved first (`spend.holdAgain`: a
   * hold the sweep released is decided anew; refused: nothing reissued).
   */
  const reissueFee = (caller: SelfCaller, stored: Stored, op: HoodOperation, fee: HoodOperationLeg) =>
    Effect.gen(function* () {
      let next = op
      for (const later of op.legs.filter((l) => l.index > fee.index && l.status === "pending")) {
        const landed = yield* spend.supersede(stored, later)
        if (landed !== undefined) next = stepOperation(next, { _tag: "Landed", leg: later.index, txHash: landed })
      }
      const moved = next.legs.filter((l) => l.index > fee.index && l.status === "pending")
      if (moved.some((l) => l.kind === "devBuy")) yield* spend.holdAgain(caller, stored)
      let nonce = yield* chain.rpc("nonce", (cl) => cl.getTransactionCount({ address: getAddress(stored.row.payer), blockTag: "pending" }))
      next = yield* reissue(caller, stored, next, fee, nonce)
      for (const later of moved) {
        nonce += 1
        next = yield* reissue(caller, stored, next, later, nonce)
      }
      return next
    })

  /**
   * The pending next leg's sign claim as `pendingLegVerdict` reads it. An open claim never signed is
   * expired here when its lifetime passed (`expireUnsigned`: the wallet's clock, the one the relay's
   * sign compares with; one conditional UPDATE, so of a sign and this expiry one wins): only then is
   * it "never signable". A claim the relay signed is read on chain by its signature (the hash of
   * the bytes it signed); the bytes this very confirm hands back are left to the `Signed` path.
   */
  const pendingClaimOf = (stored: Stored, leg: HoodOperationLeg, handedBack: string | undefined): Effect.Effect<PendingClaimSeen | undefined, LaunchError> =>
    Effect.gen(function* () {
      const claim = yield* wallets.claimStatus(leg.claimId).pipe(Effect.mapError(fromWallet))
      if (claim === undefined) return undefined
      if (claim.signature === null) {
        if (claim.state !== "open") return { _tag: "Unsigned", signable: false } as const
        const expired = yield* wallets.expireUnsigned(leg.claimId).pipe(Effect.mapError(fromWallet))
        // Not expired by this call: within its lifetime, or signed since the read (the next confirm reads it signed).
        return { _tag: "Unsigned", signable: !expired } as const
      }
      if (handedBack !== undefined && claim.signature.toLowerCase() === handedBack.toLowerCase()) return undefined
      const onChain = yield* chain.legOnChain(getAddress(stored.row.payer), claim.signature, leg.nonce)
      return { _tag: "Signed", txHash: claim.signature, onChain } as const
    })

  /**
   * The pending next leg decided by the machine (`pendingLegVerdict`) from its claim: reissued at
   * its own nonce when the claim expired unsigned (a dev buy's hold reserved again first when the
   * sweep released it, `spend.holdAgain`; refused: nothing reissued); `Landed`, or recorded sent
   * and reverted, from the relay-signed bytes on chain; else nothing. Bytes that can still land are
   * never replaced.
   */
  const decidePending = (caller: SelfCaller, stored: Stored, op: HoodOperation, handedBack: string | undefined) =>
    Effect.gen(function* () {
      const leg = op.nextLeg === null ? undefined : op.legs[op.nextLeg]
      if (leg === undefined || leg.status !== "pending" || leg.kind === "createCurve" || op.state === "failed") return op
      const verdict = pendingLegVerdict(op, yield* pendingClaimOf(stored, leg, handedBack))
      if (verdict._tag === "Wait") return op
      if (verdict._tag !== "Reissue") return eventsOf(verdict).reduce(stepOperation, op)
      if (leg.kind === "devBuy") yield* spend.holdAgain(caller, stored)
      return yield* reissue(caller, stored, op, leg, verdict.nonce)
    })

  /**
   * Reads every sent leg through `chain.legOnChain` (the nonce pinned under the head, the receipt
   * read again): its receipt → `Mined` or `Reverted`; its nonce used by another transaction, on
   * that evidence → `Reverted` (it can never be mined); else no verdict: its stored bytes are
   * broadcast again (a crash or a refused send after the hash was recorded; a node refuses bytes
   * already mined). The pending next leg is then decided from its claim (`decidePending`). A
   * reverted fee leg is then reissued (`reissueFee`); a reverted buy is final (rule 4).
   */
  const observe = (caller: SelfCaller, stored: Stored, op: HoodOperation, handedBack?: string) =>
    Effect.gen(function* () {
      const from = getAddress(stored.row.payer)
      let next = op
      for (const leg of op.legs) {
        if (leg.status !== "sent" || leg.txHash === null) continue
        const seen = yield* chain.legOnChain(from, leg.txHash, leg.nonce)
        if (seen !== "open") next = stepOperation(next, { _tag: seen === "success" ? "Mined" : "Reverted", leg: leg.index })
        else if (leg.signedTransaction != null) {
          yield* chain.rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: leg.signedTransaction as Hex })).pipe(Effect.ignore)
        }
      }
      next = yield* decidePending(caller, stored, next, handedBack)
      const fee = next.legs.find((l) => l.status === "reverted" && l.kind === "feeTransfer")
      return fee === undefined ? next : yield* reissueFee(caller, stored, next, fee)
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
      const handedBack = input.signedTransaction !== undefined && /^0x(?:[0-9a-fA-F]{2})+$/.test(input.signedTransaction) ? keccak256(input.signedTransaction as Hex) : undefined
      let op = yield* observe(caller, stored, op0, handedBack)
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
        // createCurve reverted: the dev-buy hold is decided by its fee and buy legs' claims (`settleDead`; signed bytes can still move ETH).
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
