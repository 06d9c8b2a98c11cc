/**
 * A Hood TEE self-signed launch's dev buy through the spend gate (`src/services/spend`; launch spec
 * 3.1's self-signed row: "reserved against the bound key's USD spend window before signing";
 * document 2, 4.1): the buy plus its platform fee on the `tee` rail, held in the build's ledger
 * transaction under the key's lock (a refusal rolls the attempt back: nothing recorded), kept at
 * least as long as its legs' sign claims can be signed, and never released by the sweep while the
 * dev-buy leg's claim is signed or still signable, or the fee leg's claim is signed with the leg
 * pending or sent (`SpendStore.sweep`). Settled:
 * - at the launch's record, from the operation's own leg statuses (`settledHoldOf`): the buy landed
 *   → booked; reverted after its fee leg landed → the fee booked, the buy released (rule 4);
 * - for a dead attempt (its `createCurve` reverted, or a rebuild proved it dead), by its fee and
 *   dev-buy claims (`deadHoldOf` each, `deadSettlementOf`): the open ones are expired first; what
 *   landed is booked (both, the buy alone, or the fee alone), what can still land keeps the hold,
 *   else released; decided again for every earlier attempt still held at each confirm and build
 *   of the id (`settleEarlier`);
 * - before a fee-leg reissue: a later leg the relay signed is not replaced while it can land, and
 *   one that landed is recorded mined (booked with the fee at the record), never reissued
 *   (`supersede`); a hold the sweep released is reserved again, against the launch's own key, only
 *   when a dev-buy leg is reissued (`holdAgain`; refused: `LAUNCH_FAILED`, retryable).
 * The dry run does not check the USD window (launch spec endpoint rule 4). A linked (imported)
 * wallet's Hood dev buy is not built by the service, so nothing is held for it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { getAddress } from "viem"
import { findKeyById } from "../../keys/KeyRepository.js"
import { type SpendError, spendError } from "../../spend/SpendError.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import { bookIn, holdUntilIn, keepHeldIn, type ReserveInput, releaseIn, reservationState, reservationValue, reserveIn } from "../../spend/SpendStore.js"
import { CLAIM_LIFETIME_MS } from "../../wallets/WalletLimits.js"
import type { WalletView } from "../../wallets/WalletService.js"
import type { HoodOperation, HoodOperationLeg } from "../HoodOperation.js"
import { devBuyAttempt, devBuyBooking, devBuyFeeRaw, devBuyReservationId } from "../internal/LaunchSpend.js"
import { launchStorage } from "../internal/LaunchGates.js"
import type { Also, AttemptRef, LaunchRef } from "../LaunchLedger.js"
import { fromWallet, type LaunchError, launchFailure } from "../LaunchError.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { HoodSelfContext, Stored } from "./HoodSelfContext.js"
import { deadHoldOf, deadSettlementOf, holdAgainRefused, settledHoldOf, TEE_RETRY_AFTER_MS } from "./HoodSelfRules.js"

export type HoodSelfSpend = ReturnType<typeof makeHoodSelfSpend>

/** The reservation id of one attempt's dev-buy hold (the self-signed path's, as on Solana). */
export const hoodSelfHoldOf = (ref: AttemptRef): string => devBuyReservationId("self", ref)

/** The booking of a dev buy that reverted after its fee leg landed: the fee alone (its share of the hold's USD value). */
export const hoodSelfFeeBookingOf = (ref: AttemptRef): string => `${hoodSelfHoldOf(ref)}:fee`

const refOf = (stored: Stored): AttemptRef => ({ accountId: stored.row.accountId, clientLaunchId: stored.row.clientLaunchId, attempt: stored.row.attempt })

/** The whole hold booked: the buy and its fee landed. */
const bookAll = (stored: Stored) =>
  bookIn(
    devBuyBooking(
      hoodSelfHoldOf(refOf(stored)),
      { accountId: stored.row.accountId, keyId: stored.row.keyId },
      "tee",
      { chain: "hood", quoteAsset: stored.row.request.quoteAsset, buyAmountRaw: stored.row.request.buyAmountRaw },
      stored.build.fee?.bps ?? 0
    )
  )

/** Rule 4: the fee leg landed, the buy reverted. The buy's share is released and the fee booked under its own id, valued as its share of the hold. */
const bookFee = (stored: Stored) =>
  Effect.gen(function* () {
    const ref = refOf(stored)
    const held = yield* reservationValue(hoodSelfHoldOf(ref))
    const buyRaw = stored.row.request.buyAmountRaw
    const feeRaw = devBuyFeeRaw("hood", buyRaw, stored.build.fee?.bps ?? 0)
    const usdMicros = held === undefined || held.usdMicros === null || held.amountRaw === 0n ? null : (held.usdMicros * feeRaw) / held.amountRaw
    yield* releaseIn(hoodSelfHoldOf(ref))
    yield* bookIn({
      ...devBuyBooking(hoodSelfFeeBookingOf(ref), { accountId: ref.accountId, keyId: stored.row.keyId }, "tee", { chain: "hood", quoteAsset: "eth", buyAmountRaw: 0n }, 0),
      amountRaw: feeRaw,
      usdMicros,
      trades: 0
    })
  })

/** The buy landed without its fee leg (another transaction used the fee's nonce, or the fee reverted): the hold booked at the buy's share. */
const bookBuy = (stored: Stored) =>
  Effect.gen(function* () {
    const ref = refOf(stored)
    const held = yield* reservationValue(hoodSelfHoldOf(ref))
    const buyRaw = stored.row.request.buyAmountRaw
    const usdMicros = held === undefined || held.usdMicros === null || held.amountRaw === 0n ? null : (held.usdMicros * buyRaw) / held.amountRaw
    yield* bookIn({ ...devBuyBooking(hoodSelfHoldOf(ref), { accountId: ref.accountId, keyId: stored.row.keyId }, "tee", { chain: "hood", quoteAsset: stored.row.request.quoteAsset, buyAmountRaw: buyRaw }, 0), usdMicros })
  })

/**
 * `gate` in its own transaction, on the reserve input of the key that built the launch
 * (`stored.row.keyId`, the key its bookings meter; the gate locks it by its prefix), whichever key
 * confirms.
 */
const onLaunchKey = <A>(stored: Stored, attempt: SpendAttempt, gate: (input: ReserveInput) => Effect.Effect<A, SpendError | SqlError, SqlClient.SqlClient>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const key = yield* findKeyById(stored.row.keyId)
        if (key === undefined || key.accountId !== stored.row.accountId) {
          return yield* spendError("key_not_found", "The key that built this launch is not on the account; nothing was reserved", { retryable: false })
        }
        return yield* gate({ reservationId: hoodSelfHoldOf(refOf(stored)), accountId: stored.row.accountId, keyPrefix: key.prefix, chain: "hood", attempt })
      })
    )
  )

/**
 * A reissued leg's new claim kept covered: the hold extended to the claim's lifetime's end, only
 * while it is still `held` (one conditional UPDATE). A hold that exists and is no longer held (the
 * sweep released it) fails retryable: the caller saves nothing, so no claim is handed out without
 * its hold. An attempt with no hold (no dev buy) has nothing to keep.
 */
const keepUntilOf =
  (withSql: HoodSelfContext["withSql"]) =>
  (stored: Stored, untilMs: number): Effect.Effect<void, LaunchError> =>
    Effect.gen(function* () {
      const id = hoodSelfHoldOf(refOf(stored))
      if (yield* withSql(holdUntilIn(id, untilMs)).pipe(launchStorage("keeping the dev-buy hold"))) return
      if ((yield* withSql(reservationState(id)).pipe(launchStorage("reading the dev-buy hold"))) === undefined) return
      return yield* launchFailure("launch_failed", "the dev-buy hold was released before the reissued leg's claim was kept; confirm again", {
        retryable: true,
        details: { reason: "hold_released" }
      })
    })

export const makeHoodSelfSpend = (ctx: HoodSelfContext) => {
  const { deps, withSql, chain } = ctx

  /** The TEE dev buy (plus its platform fee) as the gate sees it, on the `tee` rail; undefined for a linked payer or without a buy. */
  const devBuySpend = (caller: SelfCaller, request: LaunchRequest, payer: WalletView): Effect.Effect<SpendAttempt | undefined> =>
    payer.walletKind !== "tee" ? Effect.succeed(undefined) : devBuyAttempt(deps.prices, "tee", request, caller.plan.feeBps)

  /**
   * The hold, inside the ledger's accepting transaction (the key locked; a refusal fails the
   * transaction). Each attempt has its own id and the ledger accepts an attempt once (a replayed or
   * racing build answers the stored operation, or loses on the ledger row, before this runs), so
   * `reserveIn`'s replay branch is not reached from here.
   */
  const holdIn = (caller: SelfCaller, ref: AttemptRef, spend: SpendAttempt | undefined): Effect.Effect<void, SpendError | SqlError, SqlClient.SqlClient> =>
    spend === undefined
      ? Effect.void
      : Effect.asVoid(reserveIn({ reservationId: hoodSelfHoldOf(ref), accountId: caller.accountId, keyPrefix: caller.keyPrefix, chain: "hood", attempt: spend }))

  /** The hold lives at least until a leg's sign claim can no longer be signed (its lifetime's end): an unsigned leg's hold is swept only then. */
  const keepUntilIn = (ref: AttemptRef, untilMs: number): Effect.Effect<void, SqlError, SqlClient.SqlClient> => Effect.asVoid(holdUntilIn(hoodSelfHoldOf(ref), untilMs))

  const keepUntil = keepUntilOf(withSql)

  /**
   * Before a reissue issues new dev-buy bytes, the buy's hold (the key that built the launch, its
   * window locked; "reserved before signing"), valued now (`devBuyAttempt`):
   * - still held: extended to a new claim's whole lifetime in the statement after the row's lock
   *   (`keepHeldIn`), so a sweep cannot release it before the new claim is recorded and kept
   *   (`keepUntil`); one taken before the key's window last reset (a daily, weekly or monthly
   *   txLimit) is decided anew in the current window first and moves into it (h48 review, Low: it
   *   weighed in neither window while extended);
   * - released by the sweep (every claim's lifetime had passed): decided anew (`reserveIn`'s
   *   released branch);
   * - booked: left.
   * A refusal fails the reissue and nothing is recorded: `createCurve` landed by then, so it is the
   * self-signed confirm's `LAUNCH_FAILED`, retryable (launch spec 7), the gate's reason and details
   * (`resetsAt`, `spendLimit`, `retryAfter`) in its details (`holdAgainRefused`).
   */
  const holdAgain = (caller: SelfCaller, stored: Stored): Effect.Effect<void, LaunchError> =>
    Effect.gen(function* () {
      if (stored.row.walletKind !== "tee") return
      const attempt = yield* devBuyAttempt(deps.prices, "tee", stored.row.request, stored.build.fee?.bps ?? caller.plan.feeBps)
      if (attempt === undefined) return
      const until = (yield* Clock.currentTimeMillis) + CLAIM_LIFETIME_MS
      // One transaction, the key locked once: held → kept (or decided anew); released → reserved anew; booked → left.
      const keepOrReserve = (input: ReserveInput) =>
        Effect.flatMap(keepHeldIn(input, until), (kept) =>
          kept !== "not_held" ? Effect.void : Effect.flatMap(reservationState(input.reservationId), (state) => (state === "released" ? Effect.asVoid(reserveIn(input)) : Effect.void))
        )
      yield* withSql(onLaunchKey(stored, attempt, keepOrReserve)).pipe(Effect.catchTag("SpendError", (e) => Effect.fail(holdAgainRefused(e))), launchStorage("holding the dev buy again"))
    })

  /** At the launch's record (its confirming transaction): the hold settled from the operation's own legs (`settledHoldOf`). */
  const settledIn = (stored: Stored, op: HoodOperation | undefined): Also => () => {
    if (stored.row.walletKind !== "tee" || op === undefined) return Effect.void
    const verdict = settledHoldOf(op.legs)
    if (verdict === "book") return Effect.asVoid(bookAll(stored))
    if (verdict === "book_fee") return bookFee(stored)
    if (verdict === "release") return Effect.asVoid(releaseIn(hoodSelfHoldOf(refOf(stored))))
    return Effect.void
  }

  /**
   * A dead attempt's hold (`createCurve` reverted, or a rebuild proved it dead), by both of its
   * value legs: the open fee and dev-buy claims are expired first, so neither can be signed after
   * the hold is settled; then each leg's claim is read (`legVerdict`: landed, never lands, or can
   * still land) and the two combined (`deadSettlementOf`): either can still land → kept; else what
   * landed is booked (both, the buy alone, or the fee alone), the rest released. A read that fails
   * fails this call (retryable): the hold stays as it is.
   */
  const settleDead = (stored: Stored): Effect.Effect<ReturnType<typeof deadSettlementOf> | "none", LaunchError> =>
    Effect.gen(function* () {
      const legs = stored.build.operation?.legs ?? []
      const buy = legs.find((l) => l.kind === "devBuy")
      if (stored.row.walletKind !== "tee" || buy === undefined) return "none" as const
      for (const leg of legs) if (leg.kind !== "createCurve") yield* deps.wallets.expireOpen(leg.claimId).pipe(Effect.mapError(fromWallet))
      const fee = legs.find((l) => l.kind === "feeTransfer")
      const verdict = deadSettlementOf((yield* legVerdict(stored, buy)).verdict, fee === undefined ? "release" : (yield* legVerdict(stored, fee)).verdict)
      const settle = { book: bookAll, book_buy: bookBuy, book_fee: bookFee, release: (s: Stored) => releaseIn(hoodSelfHoldOf(refOf(s))), keep: () => Effect.void }[verdict]
      yield* withSql(Effect.asVoid(settle(stored))).pipe(launchStorage("settling the dev-buy hold"))
      return verdict
    })

  /**
   * A value leg's claim, once it can no longer be signed anew, by `deadHoldOf` over what the chain
   * shows of its bytes (`chain.legOnChain`: the nonce pinned under the head, the receipt read again;
   * "never lands" only on evidence): landed (`book`, with the hash), never (`release`) or can still
   * land (`keep`).
   */
  const legVerdict = (stored: Stored, leg: HoodOperationLeg) =>
    Effect.gen(function* () {
      const claim = yield* deps.wallets.claimStatus(leg.claimId).pipe(Effect.mapError(fromWallet))
      const hash = leg.txHash ?? claim?.signature ?? null
      const seen = hash === null ? undefined : yield* chain.legOnChain(getAddress(stored.row.payer), hash, leg.nonce)
      return { verdict: deadHoldOf({ signed: hash !== null }, seen), hash }
    })

  /**
   * Before a reissue moves a pending later leg (its fee leg reverted) to a new nonce and claim: its
   * claim expired unsigned (a failed expiry fails the reissue, retryable; nothing is saved yet), or
   * signed by the relay with bytes that can never land → undefined, it is reissued. Bytes that
   * landed → their hash: the leg is recorded mined with it (`Landed`), not reissued, and the hold
   * stays held for the record, which books the buy and the reissued fee once (`settledHoldOf`).
   * Bytes that can still land refuse the reissue: `LAUNCH_FAILED`, retryable, `signed_leg_in_flight`
   * with `retryAfter` (the leg kept, so is the hold: its claim is signed).
   */
  const supersede = (stored: Stored, later: HoodOperationLeg): Effect.Effect<string | undefined, LaunchError> =>
    Effect.gen(function* () {
      const expired = yield* deps.wallets.expireOpen(later.claimId).pipe(Effect.mapError(() => launchFailure("launch_failed", "expiring the superseded leg's claim failed; confirm again", { retryable: true })))
      if (expired) return undefined
      const { verdict, hash } = yield* legVerdict(stored, later)
      if (verdict === "release") return undefined
      if (verdict === "book" && hash !== null) return hash
      const now = yield* Clock.currentTimeMillis
      return yield* launchFailure(
        "launch_failed",
        "the leg the relay signed before the fee leg reverted can still land: it is not replaced; send it or let its nonce be used, then confirm again",
        { retryable: true, details: { reason: "signed_leg_in_flight", retryAfter: now + TEE_RETRY_AFTER_MS } }
      )
    })

  /** `settleDead` where the launch's own failure is being answered: a failure here is logged and leaves the hold (kept by the sweep while signed). */
  const settleFailed = (stored: Stored): Effect.Effect<void> =>
    settleDead(stored).pipe(
      Effect.asVoid,
      Effect.catchAll((e) => Effect.logWarning("Hood self-signed: the failed launch's dev-buy hold was not decided; the next rebuild of this clientLaunchId decides it", e))
    )

  /**
   * Every earlier attempt of one clientLaunchId whose hold is still `held` (a dead attempt kept
   * because its buy was signed), decided again by `settleDead`: at each confirm and build of the id,
   * so once another transaction used the old buy's nonce (the new attempt's fee, say) its hold is
   * released, and booked if those bytes landed. Bounded by the id's attempts; a failure is logged
   * and leaves the hold for the next confirm or build.
   */
  const settleEarlier = (ref: LaunchRef, attempt: number, storedOf: (ref: AttemptRef) => Effect.Effect<Stored | undefined, LaunchError>): Effect.Effect<void> =>
    Effect.gen(function* () {
      for (let k = 1; k < attempt; k++) {
        const earlier = { ...ref, attempt: k }
        const state = yield* withSql(reservationState(hoodSelfHoldOf(earlier))).pipe(launchStorage("reading the dev-buy hold"))
        if (state !== "held") continue
        const stored = yield* storedOf(earlier)
        if (stored !== undefined) yield* settleDead(stored)
      }
    }).pipe(Effect.catchAll((e) => Effect.logWarning("Hood self-signed: an earlier attempt's dev-buy hold was not decided; the next confirm or build decides it", e)))

  return { devBuySpend, holdIn, keepUntilIn, keepUntil, settledIn, settleDead, settleFailed, settleEarlier, supersede, holdAgain }
}
