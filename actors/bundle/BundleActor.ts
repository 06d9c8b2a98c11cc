/**
 * BundleActor: the pure state machine of one atomic launch bundle (launch spec 2.4, 2.8, 3.5,
 * 4 rules 7 to 9). `step(state, event) -> [state, outputs]` owns the submit lifecycle (built →
 * submitting → signing → sent → landed | failed), the spec's `operatorState` for the bundle and
 * for each buy, `booking.missing`, the buy rows (`rowStatus`, `errorCode`), the chain outcome
 * (`revertedLegs`), recovery passes, and when the main payer's holds are released. The service
 * (`src/services/launch/atomic/`) is its runtime: it stores the state (durable; a restart resumes
 * every bundle where it was), performs the outputs and feeds back what happened.
 *
 * Invariants (pinned by BundleActor.test.ts, which opens with the state diagram):
 * - Pure and deterministic: time comes in events (`atMs`); inputs are never mutated; an event that
 *   changes nothing returns the SAME state object and no outputs. Throwing is a defect.
 * - Sent at most once: only `built` accepts `SubmitBegun`; after `Sent` nothing ever asks for a
 *   second send, and every later submit reads the stored outcome (`submitAnswer`).
 * - Holds (rule 7): released only while nothing was signed for the owner (build expired, a
 *   consumed submit refused before signing). Both also fail the ledger attempt (`FailLaunch`: the
 *   job reads `failed`, the daily-cap slot returns, a same-id build starts over); a same-id build
 *   that supersedes a live one does not (it continues the attempt's slot with `Rebuilt`). From `Signing` on they are kept whatever follows; a
 *   landed bundle converts them into metered usage (`finalization`).
 * - Each item is booked once: `Book*` outputs are emitted only for items still missing and not
 *   already requested in this state; `Booked` for an item not missing changes nothing.
 * - A buy that failed on chain is final (`reverted`, with its reason `slippage_exceeded` or `reverted`) and
 *   owes nothing. A landed buy is booked at its ladder amount when the block engine reported the
 *   bundle landed, at the tokens its own transaction delivered when landing was proven by reading
 *   the chain; an unreadable amount stays owed until a later pass.
 */

export type OperatorState = null | "build_expired" | "execution_unknown" | "landed_pending_booking" | "booked" | "reverted"

/** Where the submit lifecycle stands (`attemptState` in the bundle record). */
export type Phase =
  | "built" // live, not submitted (or a bytes refusal returned it)
  | "submitting" // consumed by a submit, verifying the client legs
  | "signing" // owner legs being signed: holds kept from here
  | "sent" // handed to the block engine; outcome unknown until answered or read
  | "landed"
  | "failed" // the launch leg failed: nothing landed
  | "expired" // nothing sent and it never can be (expiry, a consuming refusal, or sent but proven never to land)

/**
 * Why a buy leg failed on chain: the program's minimum out, or any other failure. The API answers
 * it as the trade row code (`api/TradeCodes.ts`); a state an older version stored holds that code.
 */
export type BuyFailure = "slippage_exceeded" | "reverted"
export type BuyOutcome = "pending" | "landed" | "reverted"
export type BookItem = "token" | "launch" | "finalization" | `buy:${string}`

export interface BuyRow {
  readonly index: number
  readonly clientTradeId: string
  readonly signature: string | null
  readonly amountInRaw: bigint
  readonly expectedOutRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly outcome: BuyOutcome
  /** What was booked: the ladder amount (engine) or what the transaction delivered (chain). */
  readonly actualOutRaw: bigint | null
  /** A reverted buy's `BuyFailure` (in a state an older version stored: its spec code, kept as stored). */
  readonly errorCode: string | null
  readonly booked: boolean
}

export interface BundleState {
  readonly bundleId: string
  readonly expiresAtMs: number
  readonly phase: Phase
  readonly launchSignature: string | null
  readonly landedSlot: bigint | null
  /** How landing was learned: the engine's whole-bundle report, or a chain read. */
  readonly landedBy: "engine" | "chain" | null
  readonly buys: ReadonlyArray<BuyRow>
  readonly tokenBooked: boolean
  readonly launchBooked: boolean
  readonly finalized: boolean
  /** Items a `Book*` output was emitted for and whose `Booked` has not come back. */
  readonly requested: ReadonlyArray<BookItem>
  readonly holdsKept: boolean
  readonly holdsReleased: boolean
  /** Phases whose outcome is not known (`send`, `buy:<clientTradeId>`). */
  readonly unknownPhases: ReadonlyArray<string>
  readonly lastError: string | null
  readonly lastErrorPhase: string | null
  readonly lastAttemptAtMs: number | null
  readonly recoveryAttempts: number
}

export type ChainLegStatus =
  | { readonly status: "landed"; readonly deliveredRaw: bigint | null }
  | { readonly status: "failed"; readonly errorCode: BuyFailure }
  | { readonly status: "unreadable" }

export type BundleEvent =
  | { readonly _tag: "Expire"; readonly atMs: number }
  /** A same-id build replaced this live build before anything was submitted: as if expired now. */
  | { readonly _tag: "Supersede"; readonly atMs: number }
  | { readonly _tag: "SubmitBegun"; readonly atMs: number }
  /** `bytes`: a leg's bytes did not match (nothing signed, resubmittable); `shape`: wrong leg count and the like (consumed). */
  | { readonly _tag: "SubmitRefused"; readonly kind: "bytes" | "shape"; readonly detail: string; readonly atMs: number }
  | { readonly _tag: "Signing"; readonly atMs: number }
  | { readonly _tag: "Sent"; readonly launchSignature: string; readonly buySignatures: ReadonlyArray<string>; readonly atMs: number }
  /** A restart found the bundle signed but not recorded as sent: it never left (`Sent` is stored first). */
  | { readonly _tag: "SendAbandoned"; readonly atMs: number }
  /** The engine reported the bundle landed; `legErrors[i]` is buy i+1's own failure, if any. */
  | { readonly _tag: "EngineLanded"; readonly slot: bigint; readonly legErrors: ReadonlyArray<BuyFailure | null>; readonly atMs: number }
  /** The engine reported the bundle failed: the launch leg failed, nothing landed. */
  | { readonly _tag: "EngineFailed"; readonly detail: string; readonly atMs: number }
  /** A send or a status read gave no answer (lost acknowledgement, engine error, timeout). */
  | { readonly _tag: "EngineUnknown"; readonly detail: string; readonly atMs: number }
  /** A recovery pass's read of the chain. */
  | {
      readonly _tag: "ChainRead"
      readonly launch: "landed" | "failed" | "absent" | "unreadable"
      /** The shared blockhash is past its last valid block height on a caught-up node. */
      readonly blockhashExpired: boolean
      readonly slot: bigint | null
      readonly buys: ReadonlyArray<ChainLegStatus>
      readonly atMs: number
    }
  | { readonly _tag: "Booked"; readonly item: BookItem; readonly atMs: number }
  | { readonly _tag: "BookFailed"; readonly item: BookItem; readonly detail: string; readonly atMs: number }

export type BundleOutput =
  | { readonly _tag: "ReleaseHolds" }
  /** Record the launch's token row (visible at the requested visibility). */
  | { readonly _tag: "BookToken"; readonly slot: bigint }
  /** Confirm the launch's ledger attempt (3.1 `confirmed`, `launch.confirmed`). */
  | { readonly _tag: "BookLaunch"; readonly slot: bigint }
  /** Record a first buy (trade row, activity, `trade.executed`). */
  | { readonly _tag: "BookBuy"; readonly index: number; readonly clientTradeId: string; readonly amountOutRaw: bigint; readonly source: "engine" | "chain" }
  /** Convert the bundle's holds into metered key usage for the buys that landed. */
  | { readonly _tag: "Finalize"; readonly landedBuyIndexes: ReadonlyArray<number> }
  /** Fail the launch's ledger attempt (3.1 `failed`; a same-id build starts over). */
  | { readonly _tag: "FailLaunch"; readonly detail: string }

export type StepResult = readonly [BundleState, ReadonlyArray<BundleOutput>]

export interface NewBuy {
  readonly clientTradeId: string
  readonly amountInRaw: bigint
  readonly expectedOutRaw: bigint
  readonly minAmountOutRaw: bigint
}

export const initialBundle = (bundleId: string, expiresAtMs: number, buys: ReadonlyArray<NewBuy>): BundleState => ({
  bundleId,
  expiresAtMs,
  phase: "built",
  launchSignature: null,
  landedSlot: null,
  landedBy: null,
  buys: buys.map((b, i) => ({
    index: i + 1,
    clientTradeId: b.clientTradeId,
    signature: null,
    amountInRaw: b.amountInRaw,
    expectedOutRaw: b.expectedOutRaw,
    minAmountOutRaw: b.minAmountOutRaw,
    outcome: "pending",
    actualOutRaw: null,
    errorCode: null,
    booked: false
  })),
  tokenBooked: false,
  launchBooked: false,
  finalized: false,
  requested: [],
  holdsKept: false,
  holdsReleased: false,
  unknownPhases: [],
  lastError: null,
  lastErrorPhase: null,
  lastAttemptAtMs: null,
  recoveryAttempts: 0
})

const buyItem = (b: BuyRow): BookItem => `buy:${b.clientTradeId}`
const NONE: ReadonlyArray<BundleOutput> = []
const same = (s: BundleState): StepResult => [s, NONE]

/** `booking.missing`: what a landed bundle still owes, in a stable order. Empty unless landed. */
export const missingItems = (s: BundleState): ReadonlyArray<BookItem> => {
  if (s.phase !== "landed") return []
  const out: BookItem[] = []
  if (!s.tokenBooked) out.push("token")
  if (!s.finalized) out.push("finalization")
  if (!s.launchBooked) out.push("launch")
  // A pending buy of a landed bundle is one whose own outcome could not be read yet: owed.
  for (const b of s.buys) if (b.outcome !== "reverted" && !b.booked) out.push(buyItem(b))
  return out
}

/**
 * The outputs a landed state asks for now, each item once: token and launch; each landed buy whose
 * amount is known; finalization once no buy is pending (its fate is known), so the usage it meters
 * is final.
 */
const requestBooking = (s: BundleState): StepResult => {
  if (s.phase !== "landed") return same(s)
  const requested = new Set(s.requested)
  const outputs: BundleOutput[] = []
  const ask = (item: BookItem, out: BundleOutput) => {
    if (requested.has(item)) return
    requested.add(item)
    outputs.push(out)
  }
  const slot = s.landedSlot ?? 0n
  if (!s.tokenBooked) ask("token", { _tag: "BookToken", slot })
  if (!s.launchBooked) ask("launch", { _tag: "BookLaunch", slot })
  for (const b of s.buys) {
    if (b.outcome === "landed" && !b.booked && b.actualOutRaw !== null) {
      ask(buyItem(b), { _tag: "BookBuy", index: b.index, clientTradeId: b.clientTradeId, amountOutRaw: b.actualOutRaw, source: s.landedBy ?? "engine" })
    }
  }
  if (!s.finalized && s.buys.every((b) => b.outcome !== "pending")) {
    ask("finalization", { _tag: "Finalize", landedBuyIndexes: s.buys.filter((b) => b.outcome === "landed").map((b) => b.index) })
  }
  if (outputs.length === 0) return same(s)
  return [{ ...s, requested: [...requested] }, outputs]
}

const withUnknown = (phases: ReadonlyArray<string>, add: ReadonlyArray<string>, remove: ReadonlyArray<string> = []): ReadonlyArray<string> => {
  const out = phases.filter((p) => !remove.includes(p))
  for (const p of add) if (!out.includes(p)) out.push(p)
  return out
}

const buyUnknown = (buys: ReadonlyArray<BuyRow>): ReadonlyArray<string> => buys.filter((b) => b.outcome === "pending").map(buyItem)

/** Landing learned from the engine: every buy that did not fail is recorded at its ladder amount. */
const landFromEngine = (s: BundleState, e: Extract<BundleEvent, { _tag: "EngineLanded" }>): StepResult => {
  const buys = s.buys.map((b, i): BuyRow => {
    const code = e.legErrors[i] ?? null
    return code === null
      ? { ...b, outcome: "landed", actualOutRaw: b.expectedOutRaw }
      : { ...b, outcome: "reverted", errorCode: code, actualOutRaw: null }
  })
  return requestBooking({
    ...s,
    phase: "landed",
    landedSlot: e.slot,
    landedBy: "engine",
    buys,
    unknownPhases: [],
    lastAttemptAtMs: e.atMs
  })
}

/** A recovery pass: what the chain shows for the launch and each buy. */
const readChain = (s: BundleState, e: Extract<BundleEvent, { _tag: "ChainRead" }>): StepResult => {
  const attempted = { ...s, recoveryAttempts: s.recoveryAttempts + 1, lastAttemptAtMs: e.atMs }
  if (s.phase === "sent") {
    if (e.launch === "failed") {
      return [
        { ...attempted, phase: "failed", unknownPhases: [], lastError: "launch transaction failed on chain", lastErrorPhase: "launch" },
        [{ _tag: "FailLaunch", detail: "launch transaction failed on chain" }]
      ]
    }
    if (e.launch === "absent" && e.blockhashExpired) {
      return [
        { ...attempted, phase: "expired", unknownPhases: [], lastError: "bundle never landed: blockhash expired", lastErrorPhase: "send" },
        [{ _tag: "FailLaunch", detail: "bundle never landed" }]
      ]
    }
    if (e.launch !== "landed") {
      return [{ ...attempted, unknownPhases: withUnknown(s.unknownPhases, ["send"]), lastError: `chain shows launch ${e.launch}`, lastErrorPhase: "recovery" }, NONE]
    }
    return requestBooking(applyBuyReads({ ...attempted, phase: "landed", landedSlot: e.slot ?? s.landedSlot, landedBy: "chain" }, e.buys))
  }
  if (s.phase === "landed" && s.buys.some((b) => b.outcome === "pending")) {
    return requestBooking(applyBuyReads(attempted, e.buys))
  }
  return same(s)
}

const applyBuyReads = (s: BundleState, reads: ReadonlyArray<ChainLegStatus>): BundleState => {
  const buys = s.buys.map((b, i): BuyRow => {
    if (b.outcome !== "pending") return b
    const r = reads[i]
    if (r === undefined || r.status === "unreadable") return b
    if (r.status === "failed") return { ...b, outcome: "reverted", errorCode: r.errorCode }
    return r.deliveredRaw === null ? b : { ...b, outcome: "landed", actualOutRaw: r.deliveredRaw }
  })
  const pending = buyUnknown(buys)
  return {
    ...s,
    buys,
    unknownPhases: pending,
    ...(pending.length > 0 ? { lastError: `${pending.length} buy amount(s) unreadable`, lastErrorPhase: "recovery" } : {})
  }
}

const booked = (s: BundleState, item: BookItem): StepResult => {
  if (!missingItems(s).includes(item)) return same(s)
  const requested = s.requested.filter((i) => i !== item)
  const next: BundleState =
    item === "token"
      ? { ...s, tokenBooked: true, requested }
      : item === "launch"
        ? { ...s, launchBooked: true, requested }
        : item === "finalization"
          ? { ...s, finalized: true, requested }
          : { ...s, buys: s.buys.map((b) => (buyItem(b) === item ? { ...b, booked: true } : b)), requested }
  return requestBooking(next)
}

export const step = (s: BundleState, e: BundleEvent): StepResult => {
  switch (e._tag) {
    case "Expire":
      if ((s.phase !== "built" && s.phase !== "submitting") || e.atMs < s.expiresAtMs) return same(s)
      if (s.phase === "submitting") return same(s) // the running submit decides
      // Nothing was sent and nothing can be: the holds return and the attempt fails (its daily-cap slot refunded; a same-id build starts over).
      return [
        { ...s, phase: "expired", holdsReleased: true, lastAttemptAtMs: e.atMs },
        [{ _tag: "ReleaseHolds" }, { _tag: "FailLaunch", detail: "the build expired before it was submitted" }]
      ]
    case "Supersede":
      if (s.phase !== "built") return same(s)
      return [{ ...s, phase: "expired", holdsReleased: true, lastError: "superseded by a new build of this clientLaunchId", lastErrorPhase: "build", lastAttemptAtMs: e.atMs }, [{ _tag: "ReleaseHolds" }]]
    case "SubmitBegun":
      if (s.phase !== "built" || e.atMs >= s.expiresAtMs) return same(s)
      return [{ ...s, phase: "submitting", lastAttemptAtMs: e.atMs }, NONE]
    case "SubmitRefused":
      if (s.phase !== "submitting") return same(s)
      if (e.kind === "bytes") return [{ ...s, phase: "built", lastError: e.detail, lastErrorPhase: "submit", lastAttemptAtMs: e.atMs }, NONE]
      return [
        { ...s, phase: "expired", holdsReleased: true, lastError: e.detail, lastErrorPhase: "submit", lastAttemptAtMs: e.atMs },
        [{ _tag: "ReleaseHolds" }, { _tag: "FailLaunch", detail: `submit refused: ${e.detail}` }]
      ]
    case "Signing":
      if (s.phase !== "submitting") return same(s)
      return [{ ...s, phase: "signing", holdsKept: true, lastAttemptAtMs: e.atMs }, NONE]
    case "Sent":
      if (s.phase !== "signing") return same(s)
      return [
        {
          ...s,
          phase: "sent",
          launchSignature: e.launchSignature,
          buys: s.buys.map((b, i) => ({ ...b, signature: e.buySignatures[i] ?? null })),
          unknownPhases: ["send"],
          lastAttemptAtMs: e.atMs
        },
        NONE
      ]
    case "SendAbandoned":
      if (s.phase !== "signing") return same(s)
      // Signed for the owner but never sent: it cannot land; the holds stay (rule 7), the attempt fails.
      return [
        { ...s, phase: "expired", lastError: "signed but never sent (interrupted)", lastErrorPhase: "send", lastAttemptAtMs: e.atMs },
        [{ _tag: "FailLaunch", detail: "bundle never sent" }]
      ]
    case "EngineLanded":
      if (s.phase !== "sent") return same(s)
      return landFromEngine(s, e)
    case "EngineFailed":
      if (s.phase !== "sent") return same(s)
      return [
        { ...s, phase: "failed", holdsKept: true, unknownPhases: [], lastError: e.detail, lastErrorPhase: "engine", lastAttemptAtMs: e.atMs },
        [{ _tag: "FailLaunch", detail: e.detail }]
      ]
    case "EngineUnknown":
      if (s.phase !== "sent") return same(s)
      return [{ ...s, unknownPhases: withUnknown(s.unknownPhases, ["send"]), lastError: e.detail, lastErrorPhase: "engine", lastAttemptAtMs: e.atMs }, NONE]
    case "ChainRead":
      return readChain(s, e)
    case "Booked":
      return booked(s, e.item)
    case "BookFailed":
      if (!s.requested.includes(e.item)) return same(s)
      // Owed again: the next recovery pass (or restart) asks for it anew.
      return [{ ...s, requested: s.requested.filter((i) => i !== e.item), lastError: e.detail, lastErrorPhase: e.item, lastAttemptAtMs: e.atMs }, NONE]
  }
}

/** Asks again for every owed item nothing is waiting on (a restart forgets in-flight requests). */
export const resume = (s: BundleState): StepResult => requestBooking(s.requested.length === 0 ? s : { ...s, requested: [] })

// ---------------------------------------------------------------------------------------------
// Derived views (spec 2.8, 3.5)

export const operatorStateOf = (s: BundleState): OperatorState => {
  switch (s.phase) {
    case "built":
    case "submitting":
    case "signing":
      return null
    case "sent":
      return "execution_unknown"
    case "landed":
      return missingItems(s).length === 0 ? "booked" : "landed_pending_booking"
    case "failed":
      return "reverted"
    case "expired":
      return "build_expired"
  }
}

export const buyOperatorStateOf = (s: BundleState, b: BuyRow): OperatorState => {
  if (s.phase === "expired" || s.phase === "failed") return operatorStateOf(s)
  if (s.phase !== "landed") return operatorStateOf(s)
  if (b.outcome === "reverted") return "reverted"
  if (b.outcome === "pending") return "landed_pending_booking"
  return b.booked ? "booked" : "landed_pending_booking"
}

/** The trade row's status for a buy: `pending` until known, `confirmed` once booked, `failed` when reverted or never landed. */
export const buyRowStatusOf = (s: BundleState, b: BuyRow): "pending" | "confirmed" | "failed" =>
  b.outcome === "reverted" || s.phase === "failed" || s.phase === "expired" ? "failed" : b.booked ? "confirmed" : "pending"

/** What a submit answers for this bundle once it was sent: the stored outcome, never a resend. */
export const submitAnswer = (s: BundleState): "landed" | "failed" | "timeout" | null =>
  s.phase === "landed" ? "landed" : s.phase === "failed" ? "failed" : s.phase === "sent" ? "timeout" : s.phase === "expired" && s.launchSignature !== null ? "failed" : null

export type NextAction = "submit" | "build_again" | "wait" | "none"

export const nextActionOf = (s: BundleState): NextAction => {
  switch (operatorStateOf(s)) {
    case null:
      return s.phase === "built" ? "submit" : "wait"
    case "build_expired":
    case "reverted":
      return "build_again"
    case "execution_unknown":
    case "landed_pending_booking":
      return "wait"
    case "booked":
      return "none"
  }
}

export const revertedLegsOf = (s: BundleState): ReadonlyArray<{ readonly index: number; readonly signature: string | null; readonly errorCode: string }> =>
  s.buys.filter((b) => b.outcome === "reverted").map((b) => ({ index: b.index, signature: b.signature, errorCode: b.errorCode! }))
