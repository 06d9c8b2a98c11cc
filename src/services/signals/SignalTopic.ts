/**
 * Signals between the cluster roles (docs/architecture.md, "Roles"): the actors role hands every
 * signal its detectors emit to the `signals` topic (key `chain:asset`, so a token's signals keep
 * their order; the value is the signal's JSON, the shape the tape serves), and each API replica
 * follows the topic from its log start into its own hub, which serves the tape's fresh rows and
 * the WebSocket stream. The hub skips an id it holds, so a signal re-emitted after a takeover or
 * published twice by a retried round reaches each subscriber once.
 */
import { randomUUID } from "node:crypto"
import { Effect, Either, type Scope } from "effect"
import type { TopicPublisher } from "../../../actors/replica/TopicPublisher.js"
import { type BusError, type BusShape, Topics } from "../../../ingest/bus/Bus.js"
import { isPattern, QUALITIES, type Signal } from "../../domain/Signal.js"
import type { SignalHub } from "./SignalHub.js"

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8", { fatal: true })

export const encodeSignal = (signal: Signal): Uint8Array => encoder.encode(JSON.stringify(signal))

/** The signal a record carries; throws on a record the actors did not write. */
export const decodeSignal = (bytes: Uint8Array): Signal => {
  const v: unknown = JSON.parse(decoder.decode(bytes))
  if (typeof v !== "object" || v === null) throw new Error("a signals record is not an object")
  const s = v as Record<string, unknown>
  const ok =
    typeof s.id === "string" &&
    isPattern(s.pattern) &&
    (s.chain === "solana" || s.chain === "hood") &&
    typeof s.asset === "string" &&
    typeof s.at_ms === "number" &&
    typeof s.position === "string" &&
    typeof s.confidence === "number" &&
    (QUALITIES as ReadonlyArray<unknown>).includes(s.quality) &&
    Array.isArray(s.wallets) &&
    typeof s.details === "object" &&
    s.details !== null
  if (!ok) throw new Error("a signals record is not a signal")
  return v as Signal
}

/** Actors role: every signal the hub takes is offered to the `signals` topic. Returns the unsubscribe. */
export const publishSignals = (hub: SignalHub, publisher: TopicPublisher): (() => void) =>
  hub.subscribe((signal) => publisher.offer(Topics.signals, [{ key: `${signal.chain}:${signal.asset}`, value: encodeSignal(signal) }]))

/** API role: follows the `signals` topic from its log start into the hub, in a consumer group of this replica's own. */
export const followSignals = (bus: BusShape, hub: SignalHub, groupPrefix: string): Effect.Effect<void, BusError, Scope.Scope> =>
  bus.subscribe({ group: `${groupPrefix}-${randomUUID()}-signals`, topic: Topics.signals, fromBeginning: true, autoCommit: false, maxBatch: 5_000 }, (batch) =>
    Effect.suspend(() => {
      const signals: Array<Signal> = []
      const failures: Array<readonly [number, unknown]> = []
      for (const record of batch.records) {
        const decoded = Either.try(() => decodeSignal(record.value))
        if (Either.isRight(decoded)) signals.push(decoded.right)
        else failures.push([record.offset, decoded.left])
      }
      hub.publish(signals)
      return Effect.forEach(
        failures,
        ([offset, error]) => Effect.logWarning("signals: a signals record is not a signal; skipped", error).pipe(Effect.annotateLogs({ partition: batch.partition, offset })),
        { discard: true }
      )
    })
  )
