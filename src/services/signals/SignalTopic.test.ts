/**
 * Signals between the roles on the embedded bus: what the actors' hub takes reaches a replica's
 * hub through the `signals` topic, each id once even when a signal is published twice (a retried
 * round, a re-emission after a takeover), with its fields intact; a record that is not a signal is
 * refused by the decoder (and skipped by the follower).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as TopicPublisher from "../../../actors/replica/TopicPublisher.js"
import { Topics } from "../../../ingest/bus/Bus.js"
import * as EmbeddedBus from "../../../ingest/bus/EmbeddedBus.js"
import { buildSignal, type Signal } from "../../domain/Signal.js"
import { SignalHub } from "./SignalHub.js"
import { eventuallyEffect } from "../../../test/support/eventually.js"
import { decodeSignal, encodeSignal, followSignals, publishSignals } from "./SignalTopic.js"

const signal = (n: number): Signal =>
  buildSignal({
    pattern: "large_move",
    chain: "solana",
    asset: `Mint${n % 3}`,
    symbol: `S${n}`,
    direction: "in",
    wallets: [`W${n}`],
    walletIds: [],
    groups: [],
    sizeUsdMicros: 1_500_000_000n,
    mcapUsdMicros: null,
    createdAtMs: null,
    venue: "svc-curve",
    confidence: 60,
    atMs: Date.UTC(2026, 0, 1) + n,
    position: `s:${String(n).padStart(20, "0")}`,
    triggerIds: [`e${n}`],
    details: { move_bps: 5000 + n }
  })

describe("SignalTopic", () => {
  it("round-trips a signal and refuses records that are not one", () => {
    const s = signal(1)
    expect(decodeSignal(encodeSignal(s))).toEqual(s)
    const enc = new TextEncoder()
    for (const bad of ["{not json", "[]", JSON.stringify({ ...s, pattern: "moon" }), JSON.stringify({ ...s, quality: "best" }), JSON.stringify({ id: s.id })]) {
      expect(() => decodeSignal(enc.encode(bad)), bad).toThrow()
    }
  })

  it.scopedLive("what the actors' hub takes reaches a replica's hub once per id, and a bad record is skipped", () =>
    Effect.gen(function* () {
      const bus = yield* EmbeddedBus.make({ dir: undefined, partitions: 4 })
      const publisher = yield* TopicPublisher.make(bus)
      const actorsHub = new SignalHub()
      publishSignals(actorsHub, publisher)
      const signals = Array.from({ length: 6 }, (_, i) => signal(i))
      actorsHub.publish(signals)
      // A retried round publishes some again; the actors' hub would skip them, the topic does not.
      publisher.offer(Topics.signals, signals.slice(0, 2).map((s) => ({ key: `${s.chain}:${s.asset}`, value: encodeSignal(s) })))
      yield* bus.publish(Topics.signals, [{ key: "solana:Mint0", value: new TextEncoder().encode("{not a signal") }])
      yield* publisher.barrier
      const replicaHub = new SignalHub()
      yield* followSignals(bus, replicaHub, "test")
      // Every record of the topic read (6 signals, 2 repeats, 1 bad), not just the signals seen.
      yield* eventuallyEffect(Effect.sync(() => replicaHub.stats().published + replicaHub.stats().duplicates >= signals.length + 2), {
        what: "the replica's hub to read the whole topic",
        deadlineMs: 10_000,
        intervalMs: 10
      })
      expect(replicaHub.stats()).toMatchObject({ published: 6, duplicates: 2 })
      expect(replicaHub.newest(10).map((s) => s.id).sort()).toEqual(signals.map((s) => s.id).sort())
      expect(replicaHub.newest(10).find((s) => s.id === signals[3]!.id)).toEqual(signals[3])
    })
  )
})
