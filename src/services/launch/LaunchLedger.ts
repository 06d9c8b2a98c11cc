/**
 * The launch ledger service: one row per account and `clientLaunchId` (spec document 1, 3.1,
 * endpoint rules 1 and 2, and the daily cap of section 8), shared by the headless, self-signed
 * and atomic paths. The decisions are `LaunchLedgerMachine.step`; this module loads, locks and
 * writes rows around it.
 *
 * Invariants:
 * - Every check-and-take is one transaction that holds across connections and processes: the
 *   row is inserted (`ON CONFLICT DO NOTHING`, so concurrent inserts of one id queue on the
 *   unique index) or locked (`FOR UPDATE`) before it is stepped, and a cap slot is taken by one
 *   conditional upsert of the day's counter. N concurrent requests with one id make exactly one
 *   attempt; N concurrent ids at the cap take exactly the cap. A refusal rolls the whole
 *   transaction back: nothing is recorded.
 * - Locks are taken in one order (ledger row, then the day's counter), so transactions never
 *   wait on each other in a cycle.
 * - The daily cap is per account and UTC day (the `Clock`'s); the effective cap is the higher of
 *   the requesting key's issued cap and the plan's (`effectiveCaps`). In-flight attempts hold
 *   their slot; a definitive failure refunds it unless kept; a timeout keeps it.
 * - A confirmed row replays its stored result without touching the chain.
 * - `also` (on the methods that settle an attempt) runs inside the same transaction, after the
 *   row changed and was written: the caller's token, activity and webhook-outbox writes commit with it or not
 *   at all.
 * - Failures: `LaunchLedgerError` (a `reason` union, `retryable`) or `SqlError`; no HTTP here.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { Chain } from "../../domain/Chain.js"
import type { Plan } from "../../domain/Plans.js"
import { DAY_MS, effectiveCaps, isoDay, utcDayStart } from "../keys/KeyRules.js"
import { type CanonicalJson, idempotencyHash } from "./Idempotency.js"
import type { LaunchErrorReason } from "./LaunchError.js"
import {
  forceSlot,
  type LaunchRecord,
  type LaunchRef,
  refundSlot,
  selectExpiredSelfBuilds,
  selectInFlight,
  selectRow,
  insertRowTakingSlot,
  selectRowAndDayUsed,
  slotsUsed,
  takeSlot,
  updateRow,
  updateRowFenced,
  type LedgerFence
} from "./internal/ledgerSql.js"
import {
  type LaunchPath,
  LaunchStates,
  type LedgerEvent,
  type LedgerOutput,
  type OnChain,
  type PayerKind,
  selfBuildExpiryMs,
  step,
  type StoredResult
} from "./LaunchLedgerMachine.js"
import * as Database from "../../db/Database.js"

export type { LaunchRecord, LaunchRef, LedgerFence } from "./internal/ledgerSql.js"

/** Self-signed builds expired per sweep (the rest go at the next `/build`). */
export const sweepBatchMax = 100

export const LedgerRefusalReasons = [
  "different_body",
  "in_flight",
  "daily_cap_reached",
  "not_found",
  "not_in_flight",
  "stale_attempt",
  "not_swept",
  "not_self_build"
] as const

/** Why the ledger refused; the route maps each reason to the spec's code through the error table. */
export class LaunchLedgerError extends Schema.TaggedError<LaunchLedgerError>()("LaunchLedgerError", {
  reason: Schema.Literal(...LedgerRefusalReasons),
  message: Schema.String,
  retryable: Schema.Boolean,
  /** The row's state when it exists. */
  state: Schema.optional(Schema.Literal(...LaunchStates)),
  /** `daily_cap_reached`: the effective cap, the slots used, and when the day resets (epoch ms). */
  cap: Schema.optional(Schema.Number),
  used: Schema.optional(Schema.Number),
  resetsAtMs: Schema.optional(Schema.Number)
}) {}

/** The cap inputs: the requesting key's issued daily cap and the account's plan. */
export interface DailyCapInput {
  readonly keyDailyCap: number
  readonly plan: Plan
}

export interface BeginInput extends LaunchRef {
  readonly keyId: string
  readonly path: LaunchPath
  readonly chain: Chain
  readonly payer: PayerKind
  /** The decoded body in canonical form (`async` left out; amounts in raw units). */
  readonly canonicalBody: CanonicalJson
  readonly dailyCap: DailyCapInput
}

/** The attempt a caller acts on after `begin` accepted it. */
export interface AttemptRef extends LaunchRef {
  readonly attempt: number
}

export type Admission =
  /** A new attempt holds the id (and a cap slot); the caller launches it. */
  | { readonly _tag: "Accepted"; readonly attempt: AttemptRef; readonly fresh: boolean; readonly record: LaunchRecord }
  /** Same id and body already confirmed: answer `result`; nothing was written. */
  | { readonly _tag: "Replay"; readonly result: StoredResult; readonly record: LaunchRecord }

/** What `preview` decides on: the row and the slots of `day`, read in one statement without locks. */
export interface LedgerPeek {
  readonly record: LaunchRecord | undefined
  readonly day: string
  readonly dayUsed: number
}

/** What `begin` would answer now, without writing (dry runs). */
export type AdmissionPreview = { readonly _tag: "WouldAccept"; readonly fresh: boolean } | { readonly _tag: "Replay"; readonly result: StoredResult }

/** The caller's own writes for a settled attempt, run in the ledger's transaction. */
export type Also<E = never> = (record: LaunchRecord) => Effect.Effect<void, SqlError | E, SqlClient.SqlClient>

export interface LaunchLedgerShape {
  /**
   * Idempotency begin and daily cap in one transaction: accept a new attempt, replay, or refuse.
   * `also` runs in that transaction when an attempt is accepted (the path's own record of it).
   */
  readonly begin: <E = never>(input: BeginInput, also?: Also<E>) => Effect.Effect<Admission, LaunchLedgerError | SqlError | E>
  /**
   * The answer `begin` would give now; writes nothing, takes no slot. With `peeked` (a `peek` of the
   * same input this request made) it decides on that read instead of reading again.
   */
  readonly preview: (input: BeginInput, peeked?: LedgerPeek) => Effect.Effect<AdmissionPreview, LaunchLedgerError | SqlError>
  /** The row and today's slots in one statement, without locks: a build's repeat rules and its `preview` read once. */
  readonly peek: (ref: LaunchRef) => Effect.Effect<LedgerPeek, SqlError>
  /** The attempt's transaction is about to leave: the row moves to `confirming` with what is known on chain. */
  readonly sent: (ref: AttemptRef, onChain: OnChain, also?: Also, fence?: LedgerFence) => Effect.Effect<LaunchRecord, LaunchLedgerError | SqlError>
  /** Confirmation succeeded: store the result for replay. */
  readonly confirm: (ref: AttemptRef, result: StoredResult, onChain: OnChain, also?: Also, fence?: LedgerFence) => Effect.Effect<LaunchRecord, LaunchLedgerError | SqlError>
  /** Definitive failure: its reason recorded (`errorCode` of the row), the slot refunded unless `keepSlot`. */
  readonly fail: (
    ref: AttemptRef,
    reason: LaunchErrorReason,
    options?: { readonly keepSlot?: boolean; readonly also?: Also; readonly fence?: LedgerFence }
  ) => Effect.Effect<LaunchRecord, LaunchLedgerError | SqlError>
  /** Confirmation timed out: the row stays in flight and keeps its slot (checks the attempt is current). */
  readonly timedOut: (ref: AttemptRef) => Effect.Effect<LaunchRecord, LaunchLedgerError | SqlError>
  /** 3.3 "proven dead": the unsent self-signed attempt is replaced by a new one in the same row and slot. */
  readonly rebuild: <E = never>(ref: AttemptRef, also?: Also<E>) => Effect.Effect<LaunchRecord, LaunchLedgerError | SqlError | E>
  /** Start of a `/launch/self/build`: fail this account's self-signed builds older than 30 minutes. */
  readonly sweepSelfBuilds: (accountId: string, also?: Also) => Effect.Effect<ReadonlyArray<LaunchRecord>, SqlError>
  /** A swept Solana linked-wallet build verified landed: confirmed, its slot taken again even at the cap. */
  readonly confirmSwept: (ref: LaunchRef, result: StoredResult, onChain: OnChain, also?: Also) => Effect.Effect<LaunchRecord, LaunchLedgerError | SqlError>
  /** The row, or undefined (job reads; a foreign id is simply not found under this account). */
  readonly get: (ref: LaunchRef) => Effect.Effect<LaunchRecord | undefined, SqlError>
  /** Rows of `path` still in flight (`submitted`, `confirming`), oldest attempt first, at most `limit` (crash recovery). */
  readonly inFlight: (path: LaunchPath, limit: number) => Effect.Effect<ReadonlyArray<LaunchRecord>, SqlError>
  /** Slots the account holds on the UTC day of `atMs` (default now). */
  readonly slotsUsed: (accountId: string, atMs?: number) => Effect.Effect<number, SqlError>
  /** The `errorCode` the wire says for a row's recorded failure (`LaunchFailureCodes`): the `launch.failed` event's. */
  readonly failureCode: (recorded: string) => string
}

export class LaunchLedger extends Context.Tag("curvestream/LaunchLedger")<LaunchLedger, LaunchLedgerShape>() {}

/**
 * How the API words a recorded failure (a reason, or a spec code an older version recorded) as the
 * spec's `errorCode`. The launch services decide no codes: the composition root provides the API's
 * (`api/LaunchCodes.ts` `launchFailureCodesLayer`), and the ledger hands it to the writes of
 * `launch.failed`.
 */
export class LaunchFailureCodes extends Context.Tag("curvestream/LaunchFailureCodes")<LaunchFailureCodes, (recorded: string) => string>() {}

/** The cap enforced on a request: the higher of the key's issued cap and the plan's (spec 2.2). */
export const effectiveDailyCap = (input: DailyCapInput): number =>
  effectiveCaps({ rateLimitPerMin: input.plan.limits.requestsPerMin, dailyLaunchCap: input.keyDailyCap }, input.plan).effective
    .dailyLaunchCap

const refusalMessages: Record<Exclude<LaunchLedgerError["reason"], "daily_cap_reached">, string> = {
  different_body: "clientLaunchId was already used with a different body",
  in_flight: "A launch with this clientLaunchId is still in flight; retry with the same id",
  not_found: "No launch with this clientLaunchId on this account",
  not_in_flight: "This launch is no longer in flight",
  stale_attempt: "This attempt is no longer the launch's current attempt",
  not_swept: "This launch is not an expired self-signed build that can still be confirmed",
  not_self_build: "This launch is not an unsent self-signed build"
}

const refusal = (output: Extract<LedgerOutput, { _tag: "Refused" }>): LaunchLedgerError =>
  new LaunchLedgerError({
    reason: output.reason,
    message: refusalMessages[output.reason],
    retryable: output.reason === "in_flight",
    ...(output.state !== null ? { state: output.state } : {})
  })

const capReached = (cap: number, used: number, nowMs: number): LaunchLedgerError =>
  new LaunchLedgerError({
    reason: "daily_cap_reached",
    message: `Daily launch cap reached (${used} of ${cap} today); it resets at 00:00 UTC`,
    retryable: true,
    cap,
    used,
    resetsAtMs: utcDayStart(nowMs) + DAY_MS
  })

const withRow = (base: LaunchRecord, row: ReturnType<typeof step>[0]): LaunchRecord =>
  row === undefined || row === base ? base : { ...base, ...row }

const refusedIn = (outputs: ReadonlyArray<LedgerOutput>): LaunchLedgerError | undefined => {
  const refused = outputs.find((o) => o._tag === "Refused")
  return refused === undefined ? undefined : refusal(refused)
}

/**
 * Applies the slot outputs of one step; a cap refusal fails (and so rolls back) the
 * transaction. Only `Begin` takes a capped slot; the settling events pass cap 0.
 */
const applySlots = (accountId: string, outputs: ReadonlyArray<LedgerOutput>, cap: number, nowMs: number) =>
  Effect.forEach(
    outputs,
    (o) => {
      switch (o._tag) {
        case "TakeSlot":
          if (o.force) return forceSlot(accountId, o.day)
          return Effect.flatMap(takeSlot(accountId, o.day, cap), (used) =>
            used !== undefined
              ? Effect.void
              : Effect.flatMap(slotsUsed(accountId, o.day), (now) => Effect.fail(capReached(cap, now, nowMs)))
          )
        case "RefundSlot":
          return refundSlot(accountId, o.day)
        default:
          return Effect.void
      }
    },
    { discard: true }
  )

const hashOf = (input: BeginInput) => idempotencyHash(input.canonicalBody)

const beginEvent = (input: BeginInput, bodyHash: string, nowMs: number): LedgerEvent => ({
  _tag: "Begin",
  path: input.path,
  chain: input.chain,
  payer: input.payer,
  bodyHash,
  day: isoDay(nowMs),
  nowMs
})

/**
 * Locks the row, steps it with `event`, applies the slots and writes it (with `fence`, the lease's
 * renewal in the same statement, a lost lease dying), then runs `also` on the settled record: one
 * transaction.
 */
const transition = <E = never>(ref: LaunchRef, event: (nowMs: number) => LedgerEvent, also: Also<E> | undefined, fence?: LedgerFence) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const nowMs = yield* Clock.currentTimeMillis
        const current = yield* selectRow(ref, true)
        const [next, outputs] = step(current, event(nowMs))
        const refused = refusedIn(outputs)
        if (refused !== undefined || current === undefined) return yield* refused ?? refusal({ _tag: "Refused", reason: "not_found", state: null })
        yield* applySlots(ref.accountId, outputs, 0, nowMs)
        const record = withRow(current, next)
        if (record === current) return record
        yield* fence === undefined ? updateRow(record) : updateRowFenced(record, fence)
        if (also !== undefined) yield* also(record)
        return record
      })
    )
  )

const begin = Effect.fn("LaunchLedger.begin")(function* <E = never>(input: BeginInput, also?: Also<E>) {
  const sql = yield* SqlClient.SqlClient
  const bodyHash = hashOf(input)
  const cap = effectiveDailyCap(input.dailyCap)
  return yield* sql.withTransaction(
    Effect.gen(function* () {
      const nowMs = yield* Clock.currentTimeMillis
      const event = beginEvent(input, bodyHash, nowMs)
      const [fresh, freshOutputs] = step(undefined, event)
      const created: LaunchRecord = {
        ...fresh!,
        accountId: input.accountId,
        clientLaunchId: input.clientLaunchId,
        keyId: input.keyId,
        createdAtMs: nowMs
      }
      let record: LaunchRecord
      let outputs: ReadonlyArray<LedgerOutput>
      // A new id's slot is taken by the insert's own statement (one round trip); an existing id's, below.
      const slot = freshOutputs.find((o): o is Extract<LedgerOutput, { _tag: "TakeSlot" }> => o._tag === "TakeSlot" && !o.force)
      const fresh1 = yield* insertRowTakingSlot(created, slot === undefined ? undefined : { day: slot.day, cap })
      if (fresh1.inserted) {
        if (slot !== undefined && fresh1.used === undefined) return yield* capReached(cap, yield* slotsUsed(input.accountId, slot.day), nowMs)
        record = created
        outputs = freshOutputs.filter((o) => o !== slot)
      } else {
        // The insert found the id committed by another transaction; rows are never deleted.
        const current = (yield* selectRow(input, true))!
        const [next, stepped] = step(current, event)
        const refused = refusedIn(stepped)
        if (refused !== undefined) return yield* refused
        record = next === current ? current : { ...withRow(current, next), keyId: input.keyId }
        outputs = stepped
      }
      yield* applySlots(input.accountId, outputs, cap, nowMs)
      const acceptedNow = outputs.some((o) => o._tag === "Accepted")
      if (record !== created && acceptedNow) yield* updateRow(record)
      if (acceptedNow && also !== undefined) yield* also(record)
      const replay = outputs.find((o) => o._tag === "Replay")
      if (replay !== undefined) return { _tag: "Replay", result: replay.result, record } as const
      const accepted = outputs.find((o) => o._tag === "Accepted")!
      return {
        _tag: "Accepted",
        attempt: { accountId: input.accountId, clientLaunchId: input.clientLaunchId, attempt: accepted.attempt },
        fresh: accepted.fresh,
        record
      } as const
    })
  )
})

// One statement: the row and today's slots together (the day `begin` would take a slot of), read
// without locks, as the two reads were; `begin` decides again under its locks.
const peek = (ref: LaunchRef) =>
  Effect.gen(function* () {
    const day = isoDay(yield* Clock.currentTimeMillis)
    const { record, dayUsed } = yield* selectRowAndDayUsed(ref, day)
    return { record, day, dayUsed } satisfies LedgerPeek
  })

const preview = Effect.fn("LaunchLedger.preview")(function* (input: BeginInput, peeked?: LedgerPeek) {
  const nowMs = yield* Clock.currentTimeMillis
  const { record: current, day, dayUsed } = peeked ?? (yield* peek(input))
  const [, outputs] = step(current, beginEvent(input, hashOf(input), nowMs))
  const refused = refusedIn(outputs)
  if (refused !== undefined) return yield* refused
  const replay = outputs.find((o) => o._tag === "Replay")
  if (replay !== undefined) return { _tag: "Replay", result: replay.result } as const
  const take = outputs.find((o) => o._tag === "TakeSlot")
  if (take !== undefined) {
    const cap = effectiveDailyCap(input.dailyCap)
    // A day that turned since the peek: that day's slots, read.
    const used = take.day === day ? dayUsed : yield* slotsUsed(input.accountId, take.day)
    if (used >= cap) return yield* capReached(cap, used, nowMs)
  }
  return { _tag: "WouldAccept", fresh: current !== undefined } as const
})

const sent = Effect.fn("LaunchLedger.sent")((ref: AttemptRef, onChain: OnChain, also?: Also, fence?: LedgerFence) =>
  transition(ref, (nowMs) => ({ _tag: "Sent", attempt: ref.attempt, onChain, nowMs }), also, fence)
)

const confirm = Effect.fn("LaunchLedger.confirm")((ref: AttemptRef, result: StoredResult, onChain: OnChain, also?: Also, fence?: LedgerFence) =>
  transition(ref, (nowMs) => ({ _tag: "Confirmed", attempt: ref.attempt, result, onChain, nowMs }), also, fence)
)

const fail = Effect.fn("LaunchLedger.fail")(
  (ref: AttemptRef, errorCode: LaunchErrorReason, options?: { readonly keepSlot?: boolean; readonly also?: Also; readonly fence?: LedgerFence }) =>
    transition(
      ref,
      (nowMs) => ({ _tag: "Failed", attempt: ref.attempt, errorCode, keepSlot: options?.keepSlot ?? false, nowMs }),
      options?.also,
      options?.fence
    )
)

const timedOut = Effect.fn("LaunchLedger.timedOut")((ref: AttemptRef) =>
  transition(ref, () => ({ _tag: "TimedOut", attempt: ref.attempt }), undefined)
)

const rebuild = Effect.fn("LaunchLedger.rebuild")(<E = never>(ref: AttemptRef, also?: Also<E>) =>
  transition(ref, (nowMs) => ({ _tag: "Rebuilt", attempt: ref.attempt, nowMs }), also)
)

const sweepSelfBuilds = Effect.fn("LaunchLedger.sweepSelfBuilds")(function* (accountId: string, also?: Also) {
  const nowMs = yield* Clock.currentTimeMillis
  const candidates = yield* selectExpiredSelfBuilds(accountId, nowMs - selfBuildExpiryMs, sweepBatchMax)
  // One transaction per row: each is re-checked under its lock (a confirm may have won).
  const swept = yield* Effect.forEach(candidates, (ref) =>
    transition(ref, (at) => ({ _tag: "SweepSelfBuild", nowMs: at }), also).pipe(
      Effect.map((record) => (record.state === "failed" ? [record] : [])),
      Effect.catchTag("LaunchLedgerError", () => Effect.succeed([]))
    )
  )
  return swept.flat()
})

const confirmSwept = Effect.fn("LaunchLedger.confirmSwept")(
  (ref: LaunchRef, result: StoredResult, onChain: OnChain, also?: Also) =>
    transition(ref, (nowMs) => ({ _tag: "ConfirmSwept", result, onChain, day: isoDay(nowMs), nowMs }), also)
)

const get = (ref: LaunchRef) => selectRow(ref, false)

const inFlight = (path: LaunchPath, limit: number) => selectInFlight(path, limit)

const used = (accountId: string, atMs?: number) =>
  Effect.flatMap(atMs !== undefined ? Effect.succeed(atMs) : Clock.currentTimeMillis, (ms) => slotsUsed(accountId, isoDay(ms)))

export const make: Effect.Effect<LaunchLedgerShape, never, SqlClient.SqlClient | LaunchFailureCodes> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const failureCode = yield* LaunchFailureCodes

  /** The methods' SQL (and the callers' `also`) run on this layer's client. */
  const onClient =
    <Args extends ReadonlyArray<unknown>, A, E>(f: (...args: Args) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
    (...args: Args): Effect.Effect<A, E> =>
      Effect.provideService(f(...args), SqlClient.SqlClient, sql)

  return {
    begin: onClient(begin),
    preview: onClient(preview),
    peek: onClient(peek),
    sent: onClient(sent),
    confirm: onClient(confirm),
    fail: onClient(fail),
    timedOut: onClient(timedOut),
    rebuild: onClient(rebuild),
    sweepSelfBuilds: onClient(sweepSelfBuilds),
    confirmSwept: onClient(confirmSwept),
    get: onClient(get),
    inFlight: onClient(inFlight),
    slotsUsed: onClient(used),
    failureCode
  }
})

/** Needs `SqlClient` (the engine's `Database.layer`, migrated) and the API's `LaunchFailureCodes`. */
export const layer: Layer.Layer<LaunchLedger, never, SqlClient.SqlClient | LaunchFailureCodes> = Layer.effect(LaunchLedger, make)

/** The real ledger over `Database.layerTest`; the failure codes are the API's table (`LaunchFailureCodes`), given by the test. */
export const layerTest: Layer.Layer<LaunchLedger, SqlError, LaunchFailureCodes> = layer.pipe(Layer.provide(Database.layerTest))
