/**
 * A Hood TEE operation's legs reissued (`reissue`: the same call rebuilt for the payer at a nonce,
 * with a new sign claim) and its pending next leg decided from its sign claim at each confirm
 * (`decidePending`, the pure verdict `HoodOperation.pendingLegVerdict`). Invariant: a leg is
 * reissued only when no bytes of its old claim exist or those bytes can never land; bytes the
 * relay signed that can still land are never replaced (docs/decisions.md "The pending next leg is
 * decided from its sign claim at every confirm").
 */
import { Effect } from "effect"
import { getAddress, type Hex } from "viem"
import type { HoodCall } from "../../../chain/hood/launch/HeadlessCalls.js"
import { eventsOf, type HoodOperation, type HoodOperationLeg, type PendingClaimSeen, pendingLegVerdict, step as stepOperation } from "../HoodOperation.js"
import { fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfContext, Stored } from "./HoodSelfContext.js"
import { DEV_BUY_GAS_LIMIT } from "./HoodSelfRules.js"
import type { HoodSelfSpend } from "./HoodSelfSpend.js"

/** A dev-buy leg not yet signed and sent: its bytes are still to issue, so its hold must be held. */
const buyPending = (op: HoodOperation): boolean => op.legs.some((l) => l.kind === "devBuy" && l.status === "pending")

export const makeHoodSelfLegs = (ctx: HoodSelfContext, spend: HoodSelfSpend) => {
  const { chain } = ctx
  const { wallets } = ctx.deps

  /** A leg rebuilt for the payer on `nonce` with a new claim (a reissued fee leg, a later leg moved after it, or the pending next leg whose claim expired unsigned). */
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
      // While a dev buy is still to sign, its hold must be held (`holdAgain` ran first): a hold released since (`keepUntil` fails)
      // expires the new claim again and nothing is saved (retryable). With no buy left to sign the hold is only extended if held.
      const keep = spend.keepUntil(stored, claim.expiresAtMs)
      yield* buyPending(op) ? keep.pipe(Effect.tapError(() => Effect.ignore(wallets.expireOpen(claim.claimId)))) : Effect.ignore(keep)
      return stepOperation(op, { _tag: "Reissued", leg: leg.index, unsignedTransaction: tx, nonce, claimId: claim.claimId })
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
      if (claim.signature !== null) return yield* signedSeen(stored, leg, claim.signature, handedBack)
      if (claim.state !== "open") return { _tag: "Unsigned", signable: false } as const
      if (yield* wallets.expireUnsigned(leg.claimId).pipe(Effect.mapError(fromWallet))) return { _tag: "Unsigned", signable: false } as const
      // Not expired by this call: within its lifetime, signed since the read, or expired by a racing confirm. Read again, never assumed.
      const again = yield* wallets.claimStatus(leg.claimId).pipe(Effect.mapError(fromWallet))
      if (again === undefined) return undefined
      if (again.signature !== null) return yield* signedSeen(stored, leg, again.signature, handedBack)
      return { _tag: "Unsigned", signable: again.state === "open" } as const
    })

  /** A claim the relay signed, read on chain by its signature; the bytes this confirm hands back itself are left to the `Signed` path. */
  const signedSeen = (stored: Stored, leg: HoodOperationLeg, signature: string, handedBack: string | undefined): Effect.Effect<PendingClaimSeen | undefined, LaunchError> =>
    Effect.gen(function* () {
      if (handedBack !== undefined && signature.toLowerCase() === handedBack.toLowerCase()) return undefined
      const onChain = yield* chain.legOnChain(getAddress(stored.row.payer), signature, leg.nonce)
      return { _tag: "Signed", txHash: signature, onChain } as const
    })

  /**
   * The pending next leg decided by the machine (`pendingLegVerdict`) from its claim: reissued at
   * its own nonce when the claim expired unsigned (while a dev buy is still to sign, the fee's
   * reissue included, its hold reserved again first when the sweep released it, `spend.holdAgain`;
   * refused: nothing reissued); `Landed`, or recorded sent
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
      // Any reissue while a dev buy is still to sign (the buy itself, or the fee before it) reserves the buy first, as `reissueFee` does.
      if (buyPending(op)) yield* spend.holdAgain(caller, stored)
      return yield* reissue(caller, stored, op, leg, verdict.nonce)
    })

  return { reissue, decidePending }
}
