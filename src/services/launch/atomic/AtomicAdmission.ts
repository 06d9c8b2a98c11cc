/**
 * What an atomic build writes inside the ledger transaction that admits its attempt (launch spec
 * 2.4, endpoint rules 7 and 8): the spend gate again under the key's row lock (concurrent builds of
 * one key see each other's holds), a sign claim per client leg, the bundle row with its initial
 * `BundleActor` state, the main payer's holds, and the token row (`hidden` until booked).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { initialBundle } from "../../../../actors/bundle/BundleActor.js"
import { lockAccountKey } from "../../keys/KeyRepository.js"
import { announceAttribution, attributionStatement } from "../internal/LaunchRecords.js"
import type { Also } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { SolanaLaunchShape } from "../SolanaLaunch.js"
import type { BookedLeg } from "./AtomicBookings.js"
import type { AtomicCaller, AtomicStoredBuild, StoredLeg } from "./AtomicLaunch.js"
import type { AtomicBundles } from "./AtomicBundles.js"
import type { AtomicPayers } from "./AtomicPayers.js"
import { encodeBuild, keyRefusal, type ResolvedPayer } from "./AtomicRules.js"
import { admitBundle, type BundleRow } from "./BundleStore.js"
import type { Ladder } from "./PricingLadder.js"
import { type GateLeg, holdsOf } from "./SpendGate.js"

/** An admitted build's parts, as `AtomicBuild` computed them before the ledger's transaction. */
export interface BundleWritesInput {
  readonly caller: AtomicCaller
  readonly request: LaunchRequest
  readonly attempt: number
  readonly gateLegs: ReadonlyArray<GateLeg>
  readonly usdOf: (raw: bigint) => bigint | null
  readonly nowMs: number
  readonly built: Effect.Effect.Success<ReturnType<SolanaLaunchShape["buildAtomic"]>>
  readonly signers: ReadonlyArray<ResolvedPayer>
  readonly txExpiresAtMs: number
  readonly bundleId: string
  readonly buyers: ReadonlyArray<ResolvedPayer>
  readonly result: StoredResult
  readonly feeBps: bigint
  readonly bookedLegs: ReadonlyArray<Omit<BookedLeg, "signature">>
  readonly ladder: Extract<Ladder, { readonly _tag: "Priced" }>
  readonly clientTradeId: (index: number) => string
  readonly expiresAtMs: number
}

export const makeBundleWrites = (b: AtomicBundles, payers: AtomicPayers) => {
  const { deps } = b
  const { wallets } = deps
  const { usedInWindow, gate } = payers
  /**
   * The admitting transaction's writes, and the bundle row they inserted (read by the build once
   * its transaction committed: its answer, without reading the row back).
   */
  return (p: BundleWritesInput): { readonly also: Also<LaunchError | SqlError>; readonly written: () => BundleRow<AtomicStoredBuild> | undefined } => {
    const { caller, request, attempt, gateLegs, usdOf, nowMs, built, signers, txExpiresAtMs, bundleId, buyers, result, feeBps, bookedLegs, ladder, clientTradeId, expiresAtMs } = p
    let written: BundleRow<AtomicStoredBuild> | undefined
    const also: Also<LaunchError | SqlError> = (record) =>
    Effect.gen(function* () {
      if (record.attempt !== attempt) {
        return yield* launchFailure("launch_failed", "another build of this clientLaunchId moved first; retry with the same id", { retryable: true, details: { reason: "build_in_progress" } })
      }
      // The gate again under the key's row lock: concurrent builds of one key see each other's holds.
      yield* lockAccountKey(caller.accountId, caller.keyPrefix)
      const again = gate(caller, request.quoteAsset, gateLegs, usdOf, yield* usedInWindow(caller, nowMs), nowMs)
      if (again._tag === "Refused") return yield* keyRefusal(again.refusal)
      const legs: StoredLeg[] = []
      for (let i = 0; i < built.bundle.legs.length; i++) {
        const leg = built.bundle.legs[i]!
        const payer = signers[i]!
        let signClaim: StoredLeg["signClaim"] = null
        if (payer.kind !== "main") {
          const claim = yield* wallets
            .recordBuilt({
              accountId: caller.accountId,
              walletId: payer.walletId!,
              keyId: caller.keyId,
              chain: "solana",
              transaction: new Uint8Array(Buffer.from(leg.wireBase64, "base64")),
              purpose: i === 0 ? "launch" : "trade",
              txExpiresAtMs
            })
            .pipe(Effect.mapError((e) => launchFailure("launch_failed", e.message, { retryable: true })))
          signClaim = { claimId: claim.claimId, walletId: payer.walletId! }
        }
        legs.push({ index: i, signer: payer.kind === "main" ? "server" : "client", wireBase64: leg.wireBase64, messageBase64: leg.messageBase64, bytes: leg.bytes, signClaim })
      }
      const storedBuild: AtomicStoredBuild = {
        buyers: buyers.map((b) => b.address),
        lastValidBlockHeight: built.lastValidBlockHeight,
        booking: {
          bundleId,
          accountId: caller.accountId,
          keyId: caller.keyId,
          clientLaunchId: request.clientLaunchId,
          attempt,
          mint: built.mint,
          curve: built.bundle.curve,
          quoteAsset: request.quoteAsset,
          visibility: request.visibility,
          result,
          platformFeeBps: feeBps,
          legs: bookedLegs
        },
        legs
      }
      const state = initialBundle(
        bundleId,
        expiresAtMs,
        ladder.legs.map((l) => ({ clientTradeId: clientTradeId(l.index), amountInRaw: l.amountInRaw, expectedOutRaw: l.amountOutRaw, minAmountOutRaw: l.minAmountOutRaw }))
      )
      const row: BundleRow<AtomicStoredBuild> = {
        bundleId,
        accountId: caller.accountId,
        keyId: caller.keyId,
        keyPrefix: caller.keyPrefix,
        clientLaunchId: request.clientLaunchId,
        attempt,
        mint: built.mint,
        build: storedBuild,
        state,
        submitToken: null,
        expiresAtMs
      }
      // The bundle row, its holds and the token row (`hidden` until booked) in one statement; the token row
      // stamped now, as `attribute` stamps it (its visibility's follow looks back from its commit).
      const attributedAtMs = yield* Clock.currentTimeMillis
      const attribution = { accountId: caller.accountId, keyId: caller.keyId, path: "atomic", chain: "solana", mint: built.mint, visibility: "hidden", requestedVisibility: request.visibility } as const
      yield* admitBundle(
        row,
        encodeBuild,
        { owner: { bundleId, keyId: caller.keyId, accountId: caller.accountId, asset: request.quoteAsset }, holds: holdsOf(gateLegs, usdOf) },
        (sql) => attributionStatement(sql, attribution, record.clientLaunchId, attributedAtMs),
        nowMs
      )
      announceAttribution(attribution, deps.agentLaunches)
      written = row
    })
    return { also, written: () => written }
  }
}
