/**
 * SignalWriter against chDB (temp directory): signals from the real detectors are written by
 * size and by time, read back exactly (decimals as strings, arrays, details), stored once when
 * written twice (deterministic ids + ReplacingMergeTree, read with FINAL), refused before
 * buffering when ClickHouse could not store them, and bounded (tryRecord at the bound).
 * Waits are on receipts (`recordAndAwait`, the writer's counters), never sleeps.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, LogLevel, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { makeInputs, MIN, T0, TokenFixture, usdLamports } from "../../actors/signals/internal/fixtures.js"
import type { Signal } from "../../src/domain/Signal.js"
import { SignalReplay } from "../../actors/signals/SignalDetectors.js"
import { ClickHouse, type ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { signals as signalsMigration } from "../../clickhouse/migrations/0005_signals.js"
import * as SignalWriter from "../../clickhouse/writer/SignalWriter.js"
import { eventuallyEffect } from "../support/eventually.js"

let dataDir = ""
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-sigw-"))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

/** chDB with the signals table (migration 0005 applied here until the lead registers it in the index). */
const env = () =>
  Layer.effectDiscard(
    Effect.flatMap(ClickHouse, (ch) => Effect.forEach(signalsMigration.statements, (sql) => ch.command(sql), { discard: true }))
  ).pipe(Layer.provideMerge(ClickHouse.layerChdb({ dataDir })))

const run = <A, E>(program: Effect.Effect<A, E, ClickHouse | Scope.Scope>) =>
  Effect.provide(Effect.scoped(program), env()).pipe(Logger.withMinimumLogLevel(LogLevel.Error))

const readAll = (ch: ClickHouseShape, where = "1") =>
  Effect.map(
    ch.query(`SELECT ${SignalWriter.signalSelectSql} FROM signals FINAL WHERE ${where} ORDER BY ts, id`),
    (rows) => rows.map(SignalWriter.signalFromRow)
  )

/** Real signals: confluence, intra_book and new_ticker from one crafted sequence. */
const detected = (mint: string): ReadonlyArray<Signal> => {
  const inputs = makeInputs({ A: { id: "w_a", groups: ["g1"] }, B: { id: "w_b", groups: ["g1"] }, C: { id: "w_c", groups: [] } })
  const t = new TokenFixture(mint)
  return new SignalReplay(inputs).applyAll([
    t.created({ symbol: mint.toUpperCase() }),
    t.buy("A", T0 + MIN, usdLamports(123.4567891)),
    t.sell("B", T0 + 2 * MIN, usdLamports(100)),
    t.buy("C", T0 + 3 * MIN, usdLamports(100)),
    t.buy("B", T0 + 4 * MIN, usdLamports(100))
  ])
}

describe("SignalWriter on chDB", () => {
  it.live("writes signals and reads them back exactly; a second write of the same signals stores nothing new", () =>
    run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const writer = yield* SignalWriter.make({ batchRows: 2, flushIntervalMs: 50 })
        const sigs = detected("wr1")
        expect(sigs.map((s) => s.pattern).sort()).toEqual(["confluence", "intra_book", "new_ticker"])
        yield* writer.recordAndAwait(sigs)
        yield* writer.recordAndAwait(sigs) // a replay re-emits the same ids
        const back = yield* readAll(ch, "asset = 'wr1'")
        const byId = (xs: ReadonlyArray<Signal>) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1))
        expect(byId(back)).toEqual(byId(sigs))
        const stats = yield* writer.stats
        expect(stats.flushesBySize).toBeGreaterThanOrEqual(2)
        expect(stats.flushedRows).toBe(2 * sigs.length)
      })
    )
  )

  it.live("flushes by time when the batch is not full", () =>
    run(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        const writer = yield* SignalWriter.make({ batchRows: 1_000, flushIntervalMs: 20 })
        const sigs = detected("wr2")
        yield* writer.record(sigs)
        yield* eventuallyEffect(Effect.map(readAll(ch, "asset = 'wr2'"), (rows) => rows.length === sigs.length), {
          what: "the time-based flush",
          deadlineMs: 4_000,
          intervalMs: 20
        })
        const stats = yield* writer.stats
        expect(stats.flushesByTime).toBeGreaterThanOrEqual(1)
        expect(stats.flushesBySize).toBe(0)
      })
    )
  )

  it.live("refuses a signal ClickHouse could not store, before buffering any of the call", () =>
    run(
      Effect.gen(function* () {
        const writer = yield* SignalWriter.make()
        const [good] = detected("wr3")
        const bad = { ...good!, id: "sig_bad", size_usd: "1.1234567" }
        const exit = yield* Effect.exit(writer.record([good!, bad]))
        expect(Exit.isFailure(exit)).toBe(true)
        expect(String(exit)).toContain("size_usd")
        expect((yield* writer.stats).bufferedRows).toBe(0)
        expect(SignalWriter.invalidSignal({ ...good!, confidence: 101 })).toContain("confidence")
        expect(SignalWriter.invalidSignal({ ...good!, pattern: "nope" as never })).toContain("pattern")
        expect(SignalWriter.invalidSignal(good!)).toBeUndefined()
      })
    )
  )

  it.live("tryRecord refuses at the buffer bound and says so", () =>
    run(
      Effect.gen(function* () {
        // A flush interval far away and a batch larger than the bound: nothing leaves the buffer.
        const writer = yield* SignalWriter.make({ batchRows: 4, maxBufferedRows: 4, flushIntervalMs: 3_600_000 })
        const sigs = [...detected("wr4a"), ...detected("wr4b")].slice(0, 4)
        expect(sigs).toHaveLength(4)
        expect(yield* writer.tryRecord(sigs.slice(0, 3))).toBe(true)
        const stats0 = yield* writer.stats
        expect(stats0.bufferedRows).toBeLessThanOrEqual(4)
        expect(yield* writer.tryRecord(sigs)).toBe(false)
        const stats = yield* writer.stats
        expect(stats.dropped).toBe(4)
        expect(stats.bufferedRowsHighWater).toBeLessThanOrEqual(4)
      })
    )
  )
})
