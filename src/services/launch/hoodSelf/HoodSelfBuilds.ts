/**
 * A Hood self-signed build and dry run (launch spec 3.1, 3.2, 3.3): every gate before the ledger
 * (plan, payer, TEE and cap, configuration, eligibility, the image and its URI's bound), then a
 * new attempt, a linked wallet's rebuild on a new curve address, a TEE operation answered again
 * while unsigned, or a refusal when the earlier attempt landed or can still land.
 */
import { Clock, Effect } from "effect"
import { getAddress } from "viem"
import type { WalletView } from "../../wallets/WalletService.js"
import type { HoodSelfBuildOutcome } from "../HoodSelfLaunch.js"
import { idempotencyHash } from "../Idempotency.js"
import { exclusiveEligibility, fetchImages, launchStorage, selfPayer, selfSignedTier } from "../internal/LaunchGates.js"
import { admitted, overlapping, sweepOwnBuilds } from "../internal/SelfBuilds.js"
import type { BeginInput } from "../LaunchLedger.js"
import { isRevivable } from "../LaunchLedgerMachine.js"
import { fromLedger, fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import { canonicalSelfBody } from "../request/CanonicalBody.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import { type HoodSelfAttempts, platformFeeOf } from "./HoodSelfAttempt.js"
import type { HoodSelfContext } from "./HoodSelfContext.js"
import type { HoodSelfSpend } from "./HoodSelfSpend.js"
import { buildAgainOf, FACTORY_URI_MAX_BYTES, readBehindHead, TEE_RETRY_AFTER_MS } from "./HoodSelfRules.js"
import { type SelfDryRunView, selfDryRunView } from "../internal/SelfDryRunView.js"

const storage = launchStorage

export const makeHoodSelfBuilds = (ctx: HoodSelfContext, attempts: HoodSelfAttempts, spend: HoodSelfSpend) => {
  const { config, deps, chain } = ctx
  const { ledger, images, wallets } = deps
  const { buildAttempt, storedOf } = attempts
  const feeRawOf = platformFeeOf

  const beginInput = (caller: SelfCaller, body: SelfLaunchBody, payer: WalletView): BeginInput => ({
    accountId: caller.accountId,
    clientLaunchId: body.request.clientLaunchId,
    keyId: caller.keyId,
    path: "self",
    chain: "hood",
    payer: payer.walletKind === "tee" ? "tee" : "linked",
    canonicalBody: canonicalSelfBody(body.request, body.linkedWalletId),
    dailyCap: { keyDailyCap: caller.keyDailyCap, plan: caller.plan }
  })

  /** Every gate before the ledger: plan, payer, TEE and cap, configuration, eligibility, the image (and its URI's bound). */
  const gates = (caller: SelfCaller, body: SelfLaunchBody) =>
    Effect.gen(function* () {
      if (body.request.chain !== "hood" || body.request.dexVersion === null) return yield* Effect.dieMessage("HoodSelfLaunch: not a Hood request")
      yield* selfSignedTier(caller.plan)
      const payer = yield* selfPayer(wallets, caller, body.linkedWalletId, "evm", body.request, feeRawOf(caller, body), config.teeLaunchBuysEnabled)
      const c = yield* chain.configured
      const exclusive = yield* exclusiveEligibility(deps.holdings, config.exclusiveHolderPassRaw, caller.accountId, body.request)
      const pictures = yield* fetchImages(images, body.request)
      const metadataUri = images.metadataUrlOf(body.request, pictures)
      if (Buffer.byteLength(metadataUri, "utf8") > FACTORY_URI_MAX_BYTES) {
        return yield* launchFailure("validation_failed", `the metadata URI is over the factory's ${FACTORY_URI_MAX_BYTES} bytes`, { field: "imageUrl", retryable: false })
      }
      return { payer, c, exclusive, pictures }
    })

  const sweep = (accountId: string) => sweepOwnBuilds(ledger, accountId)

  const build = (caller: SelfCaller, body: SelfLaunchBody): Effect.Effect<HoodSelfBuildOutcome, LaunchError> =>
    Effect.gen(function* () {
      // The plan gate first: a refused request sweeps nothing.
      yield* selfSignedTier(caller.plan)
      yield* sweep(caller.accountId)
      const g = yield* gates(caller, body)
      const input = beginInput(caller, body, g.payer)
      const peeked = yield* ledger.peek(input).pipe(storage("reading the launch ledger"))
      const row = peeked.record
      const sameRequest = row !== undefined && row.path === "self" && row.bodyHash === idempotencyHash(input.canonicalBody)
      // An earlier dead attempt's kept hold is decided again at every build of the id, before this one holds.
      if (sameRequest) yield* spend.settleEarlier(input, row.attempt, storedOf)
      const earlier = sameRequest && (row.state === "submitted" || isRevivable(row)) ? yield* storedOf({ ...input, attempt: row.attempt }) : undefined
      // The payer's nonce and the curve read at ONE block (the head): a curve read behind the nonce read never proves a live attempt dead.
      const onChain = earlier === undefined ? undefined : yield* chain.attemptAtHead(getAddress(earlier.row.payer), g.c.factory, earlier.build.pool)
      // What that one block lets a build again conclude (`buildAgainOf`): a snapshot at head - 1 never concludes "no curve, build again".
      const again = earlier === undefined || onChain === undefined ? undefined : buildAgainOf(onChain, earlier.row.resolved.nonce, earlier.build.operation !== undefined)
      if (earlier !== undefined && again === "on_chain") {
        return yield* launchFailure("idempotency_conflict", "the earlier build of this clientLaunchId created its curve: confirm it; never build again", {
          retryable: false,
          details: { reason: "prior_attempt_on_chain", mint: earlier.build.mint }
        })
      }
      if (earlier?.build.operation !== undefined) {
        // 3.3: a TEE wallet refuses a rebuild while a signed attempt can still land; unsigned, the same operation is the answer.
        const op = earlier.build.operation
        const signed = op.legs[0]?.status !== "pending" || (yield* wallets.claimStatus(earlier.row.claimId).pipe(Effect.mapError(fromWallet)))?.state !== "open"
        if (!signed) return { _tag: "Built", build: earlier.build } satisfies HoodSelfBuildOutcome
        if (again === "in_flight") {
          const now = yield* Clock.currentTimeMillis
          return yield* launchFailure("idempotency_conflict", "an earlier signed build of this clientLaunchId can still land: finish its operation (confirm with operationId)", {
            retryable: true,
            details: { reason: "prior_attempt_in_flight", retryAfter: now + TEE_RETRY_AFTER_MS, operationId: op.operationId }
          })
        }
      }
      if (again === "unread") return yield* readBehindHead("the earlier attempt", "build")
      // Past here an earlier TEE attempt is dead (at that one block its nonce was used and no curve existed): its dev-buy hold is decided by
      // its fee and dev-buy legs (`settleDead`) before the new attempt holds (endpoint rule 7).
      const failed = earlier === undefined && sameRequest && row.state === "failed" ? yield* storedOf({ ...input, attempt: row.attempt }) : undefined
      const dead = earlier ?? failed
      if (dead !== undefined) yield* spend.settleDead(dead)
      if (sameRequest && row.state === "submitted") {
        // 3.3: a linked wallet's repeat build gets a NEW curve address (a new attempt in the same slot); so does a TEE build proven dead.
        const ref = { ...input, attempt: row.attempt }
        const rebuilt = yield* buildAttempt(caller, body, g.payer, g, row.attempt + 1, (also) => ledger.rebuild(ref, also)).pipe(admitted)
        if (rebuilt === undefined) return yield* overlapping()
        return { _tag: "Built", build: rebuilt } satisfies HoodSelfBuildOutcome
      }
      // The peek stands when this id had no earlier attempt of this body (nothing above wrote); else the row is read again.
      const seen = yield* ledger.preview(input, sameRequest ? undefined : peeked).pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("reading the launch ledger"))
      if (seen._tag === "Replay") return { _tag: "Replay", result: seen.result } satisfies HoodSelfBuildOutcome
      const attempt = row === undefined ? 1 : row.attempt + 1
      const built = yield* buildAttempt(caller, body, g.payer, g, attempt, (also) =>
        Effect.map(ledger.begin(input, also), (a) => (a._tag === "Replay" ? ("replay" as const) : a.record))
      ).pipe(admitted)
      if (built === undefined) {
        const now = yield* ledger.get(input).pipe(storage("reading the launch ledger"))
        return { _tag: "Replay", result: now?.result ?? {} } satisfies HoodSelfBuildOutcome
      }
      return { _tag: "Built", build: built } satisfies HoodSelfBuildOutcome
    })

  const dryRun = (caller: SelfCaller, body: SelfLaunchBody): Effect.Effect<SelfDryRunView, LaunchError> =>
    Effect.gen(function* () {
      const g = yield* gates(caller, body)
      const request = body.request
      // Endpoint rule 4: the dry run does not check a TEE wallet's USD spend window (the build's hold decides it); the per-asset cap is the payer gate's.
      // No size on Hood (a contract call, no transaction-size limit to report).
      return selfDryRunView(request, { address: getAddress(g.payer.address), id: g.payer.id }, g.pictures.banner !== null, g.exclusive, undefined)
    })

  return { build, dryRun }
}
