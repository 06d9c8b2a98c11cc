/**
 * An atomic build (launch spec 2.4, endpoint rules 7 to 10), every refusal before the ledger's
 * `begin` recording nothing: the block engine is configured (501) → plan → the creator and each
 * buyer resolved → the repeat rules (`AtomicRepeat`) and the ledger's own → exclusive eligibility
 * → images → the ladder → the spend gate → the tip account → the bundle on one blockhash →
 * `begin`, whose transaction runs `AtomicAdmission`'s writes.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { launchCurveParams } from "../../../chain/solana/launch/LaunchTransaction.js"
import { idempotencyHash } from "../Idempotency.js"
import { exclusiveEligibility, fetchImages } from "../internal/LaunchGates.js"
import { solanaLaunchResult } from "../internal/LaunchRecords.js"
import type { LaunchLedgerError, LedgerPeek } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { fromLedger, fromSolana, type LaunchError, launchFailure } from "../LaunchError.js"
import type { AtomicLaunchBody } from "../request/DecodeLaunchRequest.js"
import { launchTermsOf } from "../SolanaLaunch.js"
import { makeBundleWrites } from "./AtomicAdmission.js"
import type { AtomicBuildAnswer, AtomicCaller } from "./AtomicLaunch.js"
import type { AtomicBundles } from "./AtomicBundles.js"
import type { AtomicPayers } from "./AtomicPayers.js"
import { makeAtomicRepeat } from "./AtomicRepeat.js"
import { buildBody, duplicateLeg, duplicateLegRefusal, keyRefusal, newBundleId, type ResolvedPayer } from "./AtomicRules.js"
import type { BookedLeg } from "./AtomicBookings.js"
import { type Ladder, priceLadder } from "./PricingLadder.js"
import type { GateLeg } from "./SpendGate.js"

export const makeAtomicBuild = (b: AtomicBundles, payers: AtomicPayers) => {
  const { o, deps, links, runner, stored } = b
  const config = o
  const { ledger, images, solana } = deps
  const { resolvePayer, usdOfRaw, usedInWindow, gate, tip } = payers
  const { beginInput, repeat } = makeAtomicRepeat(b)
  const bundleWrites = makeBundleWrites(b, payers)

  const build = (caller: AtomicCaller, body: AtomicLaunchBody): Effect.Effect<AtomicBuildAnswer, LaunchError> =>
    Effect.gen(function* () {
      if (config.engine === undefined || runner === undefined) {
        return yield* launchFailure("block_engine_missing", "Atomic launches need a block engine; this server has none configured (BLOCK_ENGINE_URL)", { retryable: true })
      }
      if (!caller.plan.capabilities.selfSignedLaunch) {
        return yield* launchFailure("tier_required", "Atomic launches need the Pro or Max plan", { retryable: false, details: { requiredPlans: ["pro", "max"] } })
      }
      const request = body.request
      const payers = new Map<string, ResolvedPayer>()
      const creator = yield* resolvePayer(caller, body.payer, "payer", "launch", payers)
      const buyers: ResolvedPayer[] = []
      for (let i = 0; i < body.firstBuys.length; i++) buyers.push(yield* resolvePayer(caller, body.firstBuys[i]!.payer, `firstBuys[${i}].payer`, "spend", payers))
      const input = beginInput(caller, body, creator)

      // The repeat rules, then the ledger's own (different body, replay, in flight), on one read of the row.
      let peeked: LedgerPeek | undefined = yield* ledger.peek(input).pipe(stored("reading the launch ledger"))
      let row = peeked.record
      let rebuild = false
      if (row !== undefined && row.path === "atomic" && row.bodyHash === idempotencyHash(input.canonicalBody) && row.state === "submitted") {
        const r = yield* repeat(row)
        if (typeof r === "object") return r
        rebuild = r === "rebuild"
        if (r === "ledger") {
          // The repeat rules moved the row (its expiry's bookkeeping): read it again.
          peeked = undefined
          row = yield* ledger.get(input).pipe(stored("reading the launch ledger"))
        }
      }
      if (!rebuild) {
        const seen = yield* ledger.preview(input, peeked).pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), stored("reading the launch ledger"))
        if (seen._tag === "Replay") return { _tag: "Replay", result: seen.result } satisfies AtomicBuildAnswer
      }

      yield* exclusiveEligibility(deps.holdings, config.exclusiveHolderPassRaw, caller.accountId, request)
      const pictures = yield* fetchImages(images, request)

      // The ladder on the launch's own curve, and the gate over it (nothing reserved yet).
      const feeBps = BigInt(caller.plan.feeBps)
      const spec = { request, payer: creator.address, platformFeeBps: feeBps, metadataUri: images.metadataUrlOf(request, pictures), accountId: caller.accountId }
      const terms = launchTermsOf(request)
      if (terms === undefined) return yield* Effect.dieMessage(`AtomicLaunch: not a Solana request (${request.chain}/${request.quoteAsset})`)
      const ladder: Ladder = priceLadder({ curveParams: launchCurveParams(terms), amountsRaw: body.firstBuys.map((b) => b.amountRaw), platformFeeBps: feeBps, referred: caller.referred })
      if (ladder._tag !== "Priced") {
        return yield* launchFailure("validation_failed", `firstBuys[${ladder.position}] cannot be priced on this curve (${ladder.reason})`, {
          field: `firstBuys[${ladder.position}]`,
          retryable: false,
          details: { reason: ladder.reason }
        })
      }
      const gateLegs: ReadonlyArray<GateLeg> = ladder.legs.map((l, i) => ({
        position: i,
        payerKind: buyers[i]!.kind === "main" ? "main" : "linked",
        wallet: buyers[i]!.address,
        amountRaw: l.amountInRaw,
        feeRaw: l.platformFeeRaw
      }))
      const usdOf = yield* usdOfRaw(request.quoteAsset)
      const gateNowMs = yield* Clock.currentTimeMillis
      const verdict = gate(caller, request.quoteAsset, gateLegs, usdOf, yield* usedInWindow(caller, gateNowMs), gateNowMs)
      if (verdict._tag === "Refused") return yield* keyRefusal(verdict.refusal)

      const tipTo = yield* tip
      const hosted = yield* images.hostLaunch(request, pictures).pipe(stored("re-hosting the images and the metadata document"))
      const attempt = row === undefined ? 1 : row.attempt + 1
      const built = yield* solana
        .buildAtomic(
          { ...spec, metadataUri: hosted.metadataUrl, attempt },
          ladder.legs.map((l, i) => ({ buyer: buyers[i]!.address, amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
          { account: tipTo, lamports: config.tipLamports }
        )
        .pipe(Effect.mapError(fromSolana))
      // Two legs with the same bytes would carry one signature: the chain would take one and drop the other.
      const duplicate = duplicateLeg(built.bundle.legs.map((l) => l.messageBase64))
      if (duplicate !== undefined) return yield* duplicateLegRefusal(duplicate)

      const nowMs = yield* Clock.currentTimeMillis
      const bundleId = newBundleId()
      const expiresAtMs = nowMs + o.holdMs
      const txExpiresAtMs = nowMs + Number(built.blocksLeft) * o.slotMs + 60_000
      const clientTradeId = (index: number) => `${bundleId}-b${index}`
      const bookedLegs: ReadonlyArray<Omit<BookedLeg, "signature">> = ladder.legs.map((l) => ({
        index: l.index,
        clientTradeId: clientTradeId(l.index),
        amountInRaw: l.amountInRaw,
        platformFeeRaw: l.platformFeeRaw,
        usdMicros: usdOf(l.amountInRaw + l.platformFeeRaw)
      }))
      const result = solanaLaunchResult(links, request, { mint: built.mint, curve: built.bundle.curve, signature: "", slot: 0n, devBuy: null, fee: null })
      const signers: ReadonlyArray<ResolvedPayer> = [creator, ...buyers]
      const { also, written } = bundleWrites({ caller, request, attempt, gateLegs, usdOf, nowMs, built, signers, txExpiresAtMs, bundleId, buyers, result, feeBps, bookedLegs, ladder, clientTradeId, expiresAtMs })


      const admission: Effect.Effect<{ readonly _tag: "Accepted" | "Replay"; readonly result?: StoredResult }, LaunchError | SqlError | LaunchLedgerError> = rebuild
        ? Effect.as(ledger.rebuild({ accountId: caller.accountId, clientLaunchId: request.clientLaunchId, attempt: attempt - 1 }, also), { _tag: "Accepted" as const }).pipe(
            // The superseded attempt was failed meanwhile (its expiry's bookkeeping): a fresh attempt, as any same-id build after a failure.
            Effect.catchTag("LaunchLedgerError", () => ledger.begin(input, also))
          )
        : ledger.begin(input, also)
      const admitted = yield* admission.pipe(
        Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }),
        stored("recording the bundle")
      )
      if (admitted._tag === "Replay") return { _tag: "Replay", result: admitted.result ?? {} } satisfies AtomicBuildAnswer
      // The row its transaction inserted and committed: the answer, not read back.
      const inserted = written()
      if (inserted === undefined) return yield* Effect.dieMessage(`AtomicLaunch: bundle ${bundleId} admitted without its row written`)
      return { _tag: "Built", view: buildBody(inserted) } satisfies AtomicBuildAnswer
    })

  return { build }
}
