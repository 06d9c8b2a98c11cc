/**
 * The BundleActor's thin runtime (launch spec 3.5, 4 rule 9): it feeds a bundle's `step` with
 * what the block engine and the chain say, stores every new state before acting on it, and
 * performs the outputs (bookkeeping) through the caller's `RunnerIo`, feeding each result back
 * (`Booked` / `BookFailed`). The state machine decides; this module only talks to the outside.
 *
 * - `send`: `Sent` is stored before the bundle leaves (a crash after it resumes as
 *   `execution_unknown` and is settled from the chain, never resent). Then one `sendBundle`, and
 *   `getInflightBundleStatuses` polled every `pollMs` until `Landed` or `Failed` or
 *   `statusDeadlineMs`. On `Landed` each buy's own status is read from the chain for its
 *   `errorCode`; if those cannot be read the bundle stays unknown and the next recovery pass books
 *   it from the chain. No answer, a lost acknowledgement or the deadline: `EngineUnknown`.
 * - `recover`: one pass over the chain (`readSentBundle`) → `ChainRead`.
 * - `resume`: re-asks every owed item of a stored state (after a restart), then performs them.
 * Bounds: at most `MAX_BOOKING_ROUNDS` output rounds per call (each item is asked for once, so the
 * real number is at most the 7 items of a 4-leg bundle).
 */
import { Clock, Effect, Option } from "effect"
import { getBase58Decoder } from "@solana/kit"
import {
  type BookItem,
  type BundleEvent,
  type BundleOutput,
  type BundleState,
  type ChainLegStatus,
  resume as resumeState,
  step
} from "../../../../actors/bundle/BundleActor.js"
import type { BlockEngineClient } from "../../../chain/solana/client/BlockEngineClient.js"
import type { BundleRead, SentBundleView } from "../../../chain/solana/launch/BundleChainRead.js"
import { buyLegFailure } from "../../../chain/solana/launch/BuyLegTransaction.js"
import { awaitUntil } from "../../../platform/AwaitUntil.js"

export const MAX_BOOKING_ROUNDS = 16

export interface RunnerIo<E> {
  /** Durably stores the state (before anything it implies is done). */
  readonly save: (s: BundleState) => Effect.Effect<void, E>
  /** Performs one booking output; failing means the item stays owed. */
  readonly perform: (s: BundleState, o: BundleOutput) => Effect.Effect<void, E>
}

export interface RunnerOptions {
  readonly engine: BlockEngineClient
  /** `signal` is the reading fiber's: interrupting it ends the pass's chain reads. */
  readonly readChain: (v: SentBundleView, signal?: AbortSignal) => Promise<BundleRead>
  /** How long `send` waits for the engine's verdict (default 30 s). */
  readonly statusDeadlineMs?: number
  /** Between status polls (default 100 ms). */
  readonly pollMs?: number
}

const itemOf = (o: BundleOutput): BookItem | null => {
  switch (o._tag) {
    case "BookToken":
      return "token"
    case "BookLaunch":
      return "launch"
    case "Finalize":
      return "finalization"
    case "BookBuy":
      return `buy:${o.clientTradeId}`
    default:
      return null
  }
}

/** Each wire transaction's own (first) signature, base58: the legs' signatures in bundle order. */
export const signaturesOf = (wiresBase64: ReadonlyArray<string>): ReadonlyArray<string> => wiresBase64.map(firstSignature)

const firstSignature = (wireBase64: string): string => {
  // A wire transaction starts with the compact signature count (1 byte below 128), then the signatures.
  const bytes = Buffer.from(wireBase64, "base64")
  return getBase58Decoder().decode(bytes.subarray(1, 65))
}

export const toChainRead = (r: BundleRead, atMs: number): BundleEvent => ({
  _tag: "ChainRead",
  launch: r.launch,
  blockhashExpired: r.blockhashExpired,
  slot: r.slot,
  buys: r.buys.map((b): ChainLegStatus =>
    b.status === "landed" ? { status: "landed", deliveredRaw: b.deliveredRaw } : b.status === "failed" ? { status: "failed", errorCode: buyLegFailure(b.err) } : { status: "unreadable" }
  ),
  atMs
})

export const makeRunner = (o: RunnerOptions) => {
  const statusDeadlineMs = o.statusDeadlineMs ?? 30_000
  const pollMs = o.pollMs ?? 100

  /** Steps, stores, then performs the outputs, feeding each result back, until nothing is asked. */
  const apply = <E>(s: BundleState, e: BundleEvent, io: RunnerIo<E>): Effect.Effect<BundleState, E> =>
    Effect.gen(function* () {
      const [state, outputs] = step(s, e)
      if (state !== s) yield* io.save(state)
      return yield* drain(state, outputs, io)
    })

  const drain = <E>(start: BundleState, first: ReadonlyArray<BundleOutput>, io: RunnerIo<E>): Effect.Effect<BundleState, E> =>
    Effect.gen(function* () {
      let state = start
      let outputs = first
      for (let round = 0; outputs.length > 0 && round < MAX_BOOKING_ROUNDS; round++) {
        const next: BundleOutput[] = []
        for (const out of outputs) {
          const done = yield* Effect.either(io.perform(state, out))
          const item = itemOf(out)
          if (item === null) continue
          const atMs = yield* Clock.currentTimeMillis
          const ev: BundleEvent = done._tag === "Right" ? { _tag: "Booked", item, atMs } : { _tag: "BookFailed", item, detail: String(done.left), atMs }
          const [after, more] = step(state, ev)
          if (after !== state) yield* io.save(after)
          state = after
          next.push(...more)
        }
        outputs = next
      }
      return state
    })

  const now = Clock.currentTimeMillis

  const view = (s: BundleState, buyers: ReadonlyArray<string>, mint: string, lastValidBlockHeight: bigint): SentBundleView => ({
    launchSignature: s.launchSignature ?? "",
    buySignatures: s.buys.map((b) => b.signature ?? ""),
    buyers,
    mint,
    lastValidBlockHeight
  })

  /** One recovery pass from the chain. */
  const recover = <E>(s: BundleState, buyers: ReadonlyArray<string>, mint: string, lastValidBlockHeight: bigint, io: RunnerIo<E>) =>
    Effect.gen(function* () {
      if (s.launchSignature === null) return s
      const read = yield* Effect.promise((signal) => o.readChain(view(s, buyers, mint, lastValidBlockHeight), signal))
      return yield* apply(s, toChainRead(read, yield* now), io)
    })

  /** From `signing`: record the signatures, send once, and follow the engine's verdict. */
  const send = <E>(
    s: BundleState,
    wiresBase64: ReadonlyArray<string>,
    buyers: ReadonlyArray<string>,
    mint: string,
    lastValidBlockHeight: bigint,
    io: RunnerIo<E>
  ) =>
    Effect.gen(function* () {
      const signatures = signaturesOf(wiresBase64)
      const state = yield* apply(s, { _tag: "Sent", launchSignature: signatures[0]!, buySignatures: signatures.slice(1), atMs: yield* now }, io)
      if (state.phase !== "sent") return state
      const revertible = wiresBase64.slice(1).map((_, i) => i + 1)
      const answer = yield* Effect.promise(() => o.engine.sendBundle(wiresBase64, revertible))
      if (answer._tag === "Refused") return yield* apply(state, { _tag: "EngineFailed", detail: `block engine refused the bundle: ${answer.detail}`, atMs: yield* now }, io)
      if (answer._tag === "NoAnswer") return yield* apply(state, { _tag: "EngineUnknown", detail: `block engine gave no answer: ${answer.detail}`, atMs: yield* now }, io)
      const deadline = (yield* now) + statusDeadlineMs
      let lastDetail = "no verdict before the deadline"
      const status = Effect.promise(() => o.engine.inflightStatus(answer.bundleId)).pipe(
        Effect.tap((st) => {
          if (st._tag === "NoAnswer") lastDetail = st.detail
        })
      )
      const verdict = yield* awaitUntil(status, (st) => st._tag === "Failed" || st._tag === "Landed", {
        what: "the block engine's verdict",
        timeoutMs: statusDeadlineMs,
        intervalMs: pollMs
      }).pipe(Effect.option)
      if (Option.isNone(verdict)) return yield* apply(state, { _tag: "EngineUnknown", detail: lastDetail, atMs: yield* now }, io)
      const st = verdict.value
      if (st._tag !== "Landed") return yield* apply(state, { _tag: "EngineFailed", detail: "block engine reports the bundle failed", atMs: yield* now }, io)
      // Each buy's own outcome, once the slot is confirmed (until the same deadline).
      const legs = yield* awaitUntil(
        Effect.promise((signal) => o.readChain(view(state, buyers, mint, lastValidBlockHeight), signal)),
        (read) => read.launch === "landed" && read.buys.every((b) => b.status === "landed" || b.status === "failed"),
        { what: "the legs' own statuses", timeoutMs: Math.max(0, deadline - (yield* now)), intervalMs: pollMs }
      ).pipe(Effect.option)
      if (Option.isNone(legs)) {
        return yield* apply(state, { _tag: "EngineUnknown", detail: "landed per the engine; the legs' own statuses were not readable before the deadline", atMs: yield* now }, io)
      }
      const legErrors = legs.value.buys.map((b) => (b.status === "failed" ? buyLegFailure(b.err) : null))
      return yield* apply(state, { _tag: "EngineLanded", slot: st.slot, legErrors, atMs: yield* now }, io)
    })

  /** After a restart: ask again for everything owed and perform it. */
  const resume = <E>(s: BundleState, io: RunnerIo<E>) =>
    Effect.gen(function* () {
      const [state, outputs] = resumeState(s)
      return yield* drain(state, outputs, io)
    })

  return { apply, send, recover, resume }
}
