/**
 * The launch ledger row (spec 3.1, daily cap of section 8), driven through `step` directly.
 *
 *   State                     event                                   next        outputs                    test
 *   (none) ──Begin (new id)──────────────────────────────────────────▶ submitted  TakeSlot, Accepted        "accepted: a new id"
 *   submitted ──Sent (transaction broadcast)─────────────────────────▶ confirming                            "sent"
 *   submitted|confirming ──Confirmed──────────────────────────────────▶ confirmed  LaunchConfirmed           "confirmed"
 *   submitted|confirming ──Failed (definitive)────────────────────────▶ failed     RefundSlot, LaunchFailed  "definitive failure"
 *   submitted|confirming ──Failed keepSlot (Hood fee-splitter deploy)─▶ failed     LaunchFailed (slot kept)  "kept slot"
 *   submitted|confirming ──TimedOut───────────────────────────────────▶ (same)                                "timeout"
 *   submitted|confirming ──Begin, same body───────────────────────────▶ (same)     Refused in_flight         "in flight"
 *   submitted (self-signed, older than 30 min) ──SweepSelfBuild──────▶ failed     RefundSlot, LaunchFailed  "sweep"
 *   submitted (self-signed) ──Rebuilt (3.3 proven dead)──────────────▶ submitted  Accepted (attempt + 1)    "rebuilt"
 *   failed ──Begin, same body─────────────────────────────────────────▶ submitted  TakeSlot (or kept slot)   "fresh attempt", "kept slot"
 *   failed (swept, self-signed: Solana linked, or Hood) ──ConfirmSwept▶ confirmed  TakeSlot force           "swept confirm"
 *   confirmed ──Begin, same body──────────────────────────────────────▶ (same)     Replay                    "replay"
 *   any row ──Begin, different body or path───────────────────────────▶ (same)     Refused different_body    "different body"
 *
 *   Refused, row unchanged: not found, stale attempt, not in flight, not swept: "refusals".
 *   Every sequence: "property: random event sequences".
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  isInFlight,
  isRevivable,
  type LaunchPath,
  LaunchStates,
  type LedgerEvent,
  type LedgerOutput,
  type LedgerRow,
  type PayerKind,
  selfBuildExpiredReason,
  selfBuildExpiryMs,
  step
} from "./LaunchLedgerMachine.js"

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0)
const DAY = "2026-11-25"
const NEXT_DAY = "2026-11-26"
const H1 = "a".repeat(64)
const H2 = "b".repeat(64)

type Of<T extends LedgerEvent["_tag"]> = Extract<LedgerEvent, { readonly _tag: T }>

const begin = (o: { hash?: string; path?: LaunchPath; payer?: PayerKind; day?: string; nowMs?: number } = {}): Of<"Begin"> => ({
  _tag: "Begin",
  path: o.path ?? "headless",
  chain: "solana",
  payer: o.payer ?? "embedded",
  bodyHash: o.hash ?? H1,
  day: o.day ?? DAY,
  nowMs: o.nowMs ?? T0
})
const sent = (attempt = 1): Of<"Sent"> => ({ _tag: "Sent", attempt, onChain: { mint: "Mint1", pool: "Pool1", signature: "Sig1" }, nowMs: T0 + 1 })
const confirmed = (attempt = 1): Of<"Confirmed"> => ({ _tag: "Confirmed", attempt, result: { success: true, mint: "Mint1" }, onChain: { signature: "Sig1" }, nowMs: T0 + 2 })
const failed = (attempt = 1, keepSlot = false): Of<"Failed"> => ({ _tag: "Failed", attempt, errorCode: "INSUFFICIENT_OWNER_BALANCE", keepSlot, nowMs: T0 + 2 })

/** Runs the events from `row`, collecting outputs. */
const run = (events: ReadonlyArray<LedgerEvent>, row: LedgerRow | undefined = undefined) => {
  const outputs: Array<LedgerOutput> = []
  for (const e of events) {
    const [next, out] = step(row, e)
    row = next
    outputs.push(...out)
  }
  return { row, outputs }
}

const accepted = (o: Parameters<typeof begin>[0] = {}) => run([begin(o)]).row!

describe("LaunchLedgerMachine", () => {
  it("accepted: a new id → submitted, takes one slot of the day", () => {
    const { row, outputs } = run([begin()])
    expect(row).toMatchObject({ state: "submitted", attempt: 1, bodyHash: H1, path: "headless", slot: { day: DAY, kept: false }, errorCode: null, result: null })
    expect(outputs).toEqual([
      { _tag: "TakeSlot", day: DAY, force: false },
      { _tag: "Accepted", attempt: 1, fresh: false }
    ])
  })

  it("sent: submitted → confirming with what is known on chain; still in flight", () => {
    const { row, outputs } = run([sent()], accepted())
    expect(row).toMatchObject({ state: "confirming", mint: "Mint1", pool: "Pool1", signature: "Sig1", slot: { day: DAY, kept: false } })
    expect(outputs).toEqual([])
    expect(step(row, begin())[1]).toEqual([{ _tag: "Refused", reason: "in_flight", state: "confirming" }])
  })

  it("confirmed: from submitted and from confirming, result stored, slot stays counted", () => {
    for (const before of [accepted(), run([sent()], accepted()).row!]) {
      const { row, outputs } = run([confirmed()], before)
      expect(row).toMatchObject({ state: "confirmed", result: { success: true, mint: "Mint1" }, signature: "Sig1", slot: { day: DAY, kept: false } })
      expect(row!.mint).toBe(before.state === "confirming" ? "Mint1" : null)
      expect(outputs).toEqual([{ _tag: "LaunchConfirmed", attempt: 1 }])
    }
  })

  it("definitive failure: from submitted and confirming → failed, errorCode set, slot refunded", () => {
    for (const before of [accepted(), run([sent()], accepted()).row!]) {
      const { row, outputs } = run([failed()], before)
      expect(row).toMatchObject({ state: "failed", errorCode: "INSUFFICIENT_OWNER_BALANCE", slot: null })
      expect(outputs).toEqual([
        { _tag: "RefundSlot", day: DAY },
        { _tag: "LaunchFailed", attempt: 1, errorCode: "INSUFFICIENT_OWNER_BALANCE" }
      ])
    }
  })

  it("timeout: the row stays in flight (same object) and keeps its slot", () => {
    for (const before of [accepted(), run([sent()], accepted()).row!]) {
      const [row, outputs] = step(before, { _tag: "TimedOut", attempt: 1 })
      expect(row).toBe(before)
      expect(outputs).toEqual([])
    }
  })

  it("in flight: a same-id same-body repeat is refused (retryable), nothing changes", () => {
    const before = accepted()
    const [row, outputs] = step(before, begin({ nowMs: T0 + 5 }))
    expect(row).toBe(before)
    expect(outputs).toEqual([{ _tag: "Refused", reason: "in_flight", state: "submitted" }])
  })

  it("different body: refused in every state, also after a failure; another path is another body", () => {
    const rows = [accepted(), run([sent()], accepted()).row!, run([confirmed()], accepted()).row!, run([failed()], accepted()).row!]
    for (const before of rows) {
      for (const e of [begin({ hash: H2 }), begin({ path: "self", payer: "linked" })]) {
        const [row, outputs] = step(before, e)
        expect(row).toBe(before)
        expect(outputs).toEqual([{ _tag: "Refused", reason: "different_body", state: before.state }])
      }
    }
  })

  it("replay: a confirmed row answers its stored result and changes nothing", () => {
    const before = run([confirmed()], accepted()).row!
    const [row, outputs] = step(before, begin({ day: NEXT_DAY, nowMs: T0 + 86_400_000 }))
    expect(row).toBe(before)
    expect(outputs).toEqual([{ _tag: "Replay", result: { success: true, mint: "Mint1" } }])
  })

  it("fresh attempt: a failed row starts over (attempt + 1) and takes that day's slot", () => {
    const before = run([sent(), failed()], accepted()).row!
    const { row, outputs } = run([begin({ day: NEXT_DAY, nowMs: T0 + 86_400_000 })], before)
    expect(row).toMatchObject({
      state: "submitted",
      attempt: 2,
      slot: { day: NEXT_DAY, kept: false },
      errorCode: null,
      mint: null,
      signature: null,
      attemptStartedAtMs: T0 + 86_400_000
    })
    expect(outputs).toEqual([
      { _tag: "TakeSlot", day: NEXT_DAY, force: false },
      { _tag: "Accepted", attempt: 2, fresh: true }
    ])
    // The first attempt's events no longer act on the row.
    expect(step(row, confirmed(1))[1]).toEqual([{ _tag: "Refused", reason: "stale_attempt", state: "submitted" }])
  })

  it("kept slot: a Hood fee-splitter failure keeps its day's slot; a retry that day reuses it, a later day takes a new one", () => {
    const hood = (o: Parameters<typeof begin>[0] = {}): LedgerEvent => ({ ...begin(o), chain: "hood" })
    const keptFail = run([hood(), failed(1, true)])
    expect(keptFail.row).toMatchObject({ state: "failed", slot: { day: DAY, kept: true } })
    expect(keptFail.outputs.filter((o) => o._tag === "RefundSlot")).toEqual([])

    const sameDay = run([hood({ nowMs: T0 + 10 })], keptFail.row)
    expect(sameDay.row).toMatchObject({ state: "submitted", attempt: 2, slot: { day: DAY, kept: true } })
    expect(sameDay.outputs).toEqual([{ _tag: "Accepted", attempt: 2, fresh: true }])
    // The retained slot is never refunded, whatever the retry's failure.
    expect(run([failed(2)], sameDay.row).outputs.filter((o) => o._tag === "RefundSlot")).toEqual([])

    const laterDay = run([hood({ day: NEXT_DAY, nowMs: T0 + 86_400_000 })], keptFail.row)
    expect(laterDay.row).toMatchObject({ attempt: 2, slot: { day: NEXT_DAY, kept: false } })
    expect(laterDay.outputs[0]).toEqual({ _tag: "TakeSlot", day: NEXT_DAY, force: false })
  })

  it("sweep: a self-signed build older than 30 minutes fails SELF_BUILD_EXPIRED with a refund; nothing else is swept", () => {
    const self = accepted({ path: "self", payer: "linked" })
    const sweep = (nowMs: number): LedgerEvent => ({ _tag: "SweepSelfBuild", nowMs })
    expect(step(self, sweep(T0 + selfBuildExpiryMs))[0]).toBe(self) // exactly 30 minutes: not older
    const { row, outputs } = run([sweep(T0 + selfBuildExpiryMs + 1)], self)
    expect(row).toMatchObject({ state: "failed", errorCode: selfBuildExpiredReason, slot: null })
    expect(outputs).toEqual([
      { _tag: "RefundSlot", day: DAY },
      { _tag: "LaunchFailed", attempt: 1, errorCode: selfBuildExpiredReason }
    ])
    const untouched = [accepted(), run([confirmed()], self).row!, run([sent()], self).row!, undefined]
    for (const before of untouched) expect(step(before, sweep(T0 + 2 * selfBuildExpiryMs))).toEqual([before, []])
  })

  it("swept confirm: a swept Solana linked-wallet build verified on chain is confirmed and takes a slot even at the cap", () => {
    const swept = run([{ _tag: "SweepSelfBuild", nowMs: T0 + selfBuildExpiryMs + 1 }], accepted({ path: "self", payer: "linked" })).row!
    expect(isRevivable(swept)).toBe(true)
    const event: LedgerEvent = { _tag: "ConfirmSwept", result: { success: true }, onChain: { signature: "Late" }, day: NEXT_DAY, nowMs: T0 + 86_400_000 }
    const { row, outputs } = run([event], swept)
    expect(row).toMatchObject({ state: "confirmed", signature: "Late", errorCode: null, slot: { day: NEXT_DAY, kept: false } })
    expect(outputs).toEqual([
      { _tag: "TakeSlot", day: NEXT_DAY, force: true },
      { _tag: "LaunchConfirmed", attempt: 1 }
    ])
    // A swept Hood build is revivable whatever its payer (3.4: a mined createCurve is recorded, never built again).
    expect(isRevivable({ ...swept, chain: "hood", payer: "tee" })).toBe(true)
    // A row an older version swept recorded the spec code itself: still revivable, and confirmed the same way.
    const sweptBefore: LedgerRow = { ...swept, errorCode: "SELF_BUILD_EXPIRED" }
    expect(isRevivable(sweptBefore)).toBe(true)
    expect(run([event], sweptBefore).row).toMatchObject({ state: "confirmed", errorCode: null, slot: { day: NEXT_DAY, kept: false } })
    expect(isRevivable({ ...swept, errorCode: "LAUNCH_FAILED" })).toBe(false)
    // Not revivable: a Solana TEE wallet's build, a headless failure, a failure other than the sweep.
    const tee = run([{ _tag: "SweepSelfBuild", nowMs: T0 + selfBuildExpiryMs + 1 }], accepted({ path: "self", payer: "tee" })).row!
    const headless = run([failed()], accepted()).row!
    const selfFailed = run([failed()], accepted({ path: "self", payer: "linked" })).row!
    for (const before of [tee, headless, selfFailed]) {
      expect(step(before, event)).toEqual([before, [{ _tag: "Refused", reason: "not_swept", state: "failed" }]])
    }
  })

  it("rebuilt: an unsent self-signed build proven dead becomes attempt + 1 in the same slot, its clock restarted; nothing else rebuilds", () => {
    const self = accepted({ path: "self", payer: "linked" })
    const rebuilt: LedgerEvent = { _tag: "Rebuilt", attempt: 1, nowMs: T0 + 5_000 }
    const { row, outputs } = run([rebuilt], self)
    expect(row).toMatchObject({ state: "submitted", attempt: 2, slot: self.slot, attemptStartedAtMs: T0 + 5_000, mint: null, signature: null })
    expect(outputs).toEqual([{ _tag: "Accepted", attempt: 2, fresh: true }])
    // A stale attempt, a headless row, a confirmed or failed self row: refused, unchanged.
    expect(step(row, rebuilt)).toEqual([row, [{ _tag: "Refused", reason: "stale_attempt", state: "submitted" }]])
    const headless = accepted()
    expect(step(headless, rebuilt)).toEqual([headless, [{ _tag: "Refused", reason: "not_self_build", state: "submitted" }]])
    const sentSelf = run([sent()], self).row!
    expect(step(sentSelf, rebuilt)).toEqual([sentSelf, [{ _tag: "Refused", reason: "not_self_build", state: "confirming" }]])
    for (const done of [run([confirmed()], self).row!, run([failed()], self).row!]) {
      expect(step(done, rebuilt)).toEqual([done, [{ _tag: "Refused", reason: "not_in_flight", state: done.state }]])
    }
    expect(step(undefined, rebuilt)).toEqual([undefined, [{ _tag: "Refused", reason: "not_found", state: null }]])
  })

  it("refusals: not found, stale attempt, not in flight; the row is unchanged", () => {
    const onAttempt: ReadonlyArray<Extract<LedgerEvent, { readonly attempt: number }>> = [
      sent(),
      confirmed(),
      failed(),
      { _tag: "TimedOut", attempt: 1 }
    ]
    for (const e of onAttempt) {
      expect(step(undefined, e)).toEqual([undefined, [{ _tag: "Refused", reason: "not_found", state: null }]])
      const live = accepted()
      expect(step(live, { ...e, attempt: 2 })).toEqual([live, [{ _tag: "Refused", reason: "stale_attempt", state: "submitted" }]])
      for (const done of [run([confirmed()], live).row!, run([failed()], live).row!]) {
        const [row, outputs] = step(done, e)
        expect(row).toBe(done)
        expect(outputs).toEqual([{ _tag: "Refused", reason: "not_in_flight", state: done.state }])
      }
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Property

const days = ["2026-11-25", "2026-11-26", "2026-11-27"] as const

const eventArb: fc.Arbitrary<LedgerEvent> = fc.oneof(
  fc.record({
    _tag: fc.constant("Begin" as const),
    path: fc.constantFrom<LaunchPath>("headless", "self", "atomic"),
    chain: fc.constantFrom("solana" as const, "hood" as const),
    payer: fc.constantFrom<PayerKind>("embedded", "linked", "tee"),
    bodyHash: fc.constantFrom(H1, H2),
    day: fc.constantFrom(...days),
    nowMs: fc.integer({ min: T0, max: T0 + 4 * selfBuildExpiryMs })
  }),
  fc.record({
    _tag: fc.constant("Sent" as const),
    attempt: fc.integer({ min: 1, max: 4 }),
    onChain: fc.record({ signature: fc.constantFrom("S1", "S2") }),
    nowMs: fc.constant(T0)
  }),
  fc.record({
    _tag: fc.constant("Confirmed" as const),
    attempt: fc.integer({ min: 1, max: 4 }),
    result: fc.constant({ success: true }),
    onChain: fc.constant({}),
    nowMs: fc.constant(T0)
  }),
  fc.record({
    _tag: fc.constant("Failed" as const),
    attempt: fc.integer({ min: 1, max: 4 }),
    errorCode: fc.constantFrom("LAUNCH_FAILED", "INSUFFICIENT_OWNER_BALANCE"),
    keepSlot: fc.boolean(),
    nowMs: fc.constant(T0)
  }),
  fc.record({ _tag: fc.constant("TimedOut" as const), attempt: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ _tag: fc.constant("Rebuilt" as const), attempt: fc.integer({ min: 1, max: 4 }), nowMs: fc.integer({ min: T0, max: T0 + 4 * selfBuildExpiryMs }) }),
  fc.record({ _tag: fc.constant("SweepSelfBuild" as const), nowMs: fc.integer({ min: T0, max: T0 + 8 * selfBuildExpiryMs }) }),
  fc.record({
    _tag: fc.constant("ConfirmSwept" as const),
    result: fc.constant({ success: true }),
    onChain: fc.constant({}),
    day: fc.constantFrom(...days),
    nowMs: fc.constant(T0)
  })
)

/** (from, to) pairs spec 3.1 allows (plus `confirming`, entered by `Sent`); staying put is always allowed. */
const allowed = new Set(["none>submitted", "submitted>confirming", "submitted>confirmed", "submitted>failed", "confirming>confirmed", "confirming>failed", "failed>submitted", "failed>confirmed"])

describe("LaunchLedgerMachine property", () => {
  it("property: random event sequences never reach a forbidden state, never leave a terminal state except as 3.1 allows, and keep the slot books", () => {
    const seen = new Set<string>()
    const selfBegin = begin({ path: "self", payer: "linked" })
    const late = T0 + 2 * selfBuildExpiryMs
    // Explicit examples walk every allowed transition, so coverage never depends on the draw.
    const examples: Array<[Array<LedgerEvent>]> = [
      [[selfBegin, failed(1), selfBegin, sent(2), failed(2), selfBegin, { _tag: "SweepSelfBuild", nowMs: late }, { _tag: "ConfirmSwept", result: {}, onChain: {}, day: DAY, nowMs: late }]],
      [[begin(), confirmed(1), begin()]],
      [[selfBegin, { _tag: "Rebuilt", attempt: 1, nowMs: T0 + 1 }, confirmed(2)]],
      [[begin(), sent(1), { _tag: "TimedOut", attempt: 1 }, confirmed(1)]]
    ]
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 40 }), (events) => {
        let row: LedgerRow | undefined
        // Slots taken minus refunded per day, and the slots a failure kept behind.
        const counted = new Map<string, number>()
        const add = (day: string, n: number) => counted.set(day, (counted.get(day) ?? 0) + n)
        for (const e of events) {
          const before = row
          const [next, outputs] = step(before, e)
          const from = before?.state ?? "none"
          const to = next?.state ?? "none"

          // Only the states of 3.1, and each state's own invariants.
          if (next !== undefined) {
            expect(LaunchStates).toContain(next.state)
            expect(next.state === "confirmed").toBe(next.result !== null)
            expect(next.state === "failed").toBe(next.errorCode !== null)
            if (isInFlight(next.state)) expect(next.slot).not.toBeNull()
            // A failed row holds no slot but a kept one: everything else was refunded.
            if (next.state === "failed") expect(next.slot === null || next.slot.kept).toBe(true)
            expect(next.attempt).toBeGreaterThanOrEqual(1)
          }
          if (from !== to) {
            expect(allowed.has(`${from}>${to}`)).toBe(true)
            seen.add(`${from}>${to}`)
          }

          // A refusal returns the same row object.
          if (outputs.some((o) => o._tag === "Refused")) {
            expect(outputs).toHaveLength(1)
            expect(next).toBe(before)
          }

          // Terminal states: confirmed is never left; failed only by a same-body Begin or a revivable ConfirmSwept.
          if (before?.state === "confirmed") expect(next).toBe(before)
          if (before?.state === "failed" && to !== "failed") {
            if (to === "submitted") expect(e._tag === "Begin" && e.bodyHash === before.bodyHash && e.path === before.path).toBe(true)
            else expect(e._tag === "ConfirmSwept" && isRevivable(before)).toBe(true)
          }
          // The id keeps its body and path.
          if (before !== undefined && next !== undefined) {
            expect(next.bodyHash).toBe(before.bodyHash)
            expect(next.path).toBe(before.path)
          }

          // Slot books: a refund returns exactly the row's own unkept slot; a take gives the row that slot.
          for (const o of outputs) {
            if (o._tag === "RefundSlot") {
              expect(before?.slot).toEqual({ day: o.day, kept: false })
              expect(next?.slot).toBeNull()
              add(o.day, -1)
            }
            if (o._tag === "TakeSlot") {
              expect(next?.slot).toEqual({ day: o.day, kept: false })
              expect(o.force).toBe(e._tag === "ConfirmSwept")
              add(o.day, 1)
            }
          }
          expect(outputs.filter((o) => o._tag === "TakeSlot" || o._tag === "RefundSlot").length).toBeLessThanOrEqual(1)
          for (const n of counted.values()) expect(n).toBeGreaterThanOrEqual(0)
          if (next?.slot != null) expect(counted.get(next.slot.day) ?? 0).toBeGreaterThanOrEqual(1)
          row = next
        }
      }),
      { numRuns: 500, examples }
    )
    expect([...seen].sort()).toEqual([...allowed].sort())
  })
})
