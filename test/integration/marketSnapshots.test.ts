/**
 * The market-snapshot sampler against real chDB: a changed market gets one row per interval, an
 * unchanged one none, and the rows carry the market's exact raw figures.
 */
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { MarketIndexStore } from "../../actors/MarketIndex.js"
import { marketActorDefinition } from "../../actors/MarketActors.js"
import type { MarketState } from "../../actors/market/MarketActor.js"
import { ChainClock, SimMarket } from "../support/marketSim.js"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import { MarketSnapshotWriter } from "../../clickhouse/writer/MarketSnapshotWriter.js"
import type { ChainEvent } from "../../ingest/ChainEvent.js"
import { runMarketSnapshotSampler } from "../../src/services/snapshots/MarketSnapshotSampler.js"
import { eventually } from "../support/eventually.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-snapshots-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("market snapshot sampler", () => {
  it("writes one row per changed market per interval", async () => {
    const scope = await Effect.runPromise(Scope.make())
    try {
      const layer = MarketSnapshotWriter.layer({ flushIntervalMs: 10 }).pipe(Layer.provideMerge(ClickHouse.layerChdb({ dataDir: dir })))
      const ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope))
      const ch = ctx.unsafeMap.get(ClickHouse.key) as ClickHouse["Type"]
      const writer = ctx.unsafeMap.get(MarketSnapshotWriter.key) as MarketSnapshotWriter["Type"]

      const index = new MarketIndexStore()
      const definition = marketActorDefinition()
      const clock = new ChainClock("solana")
      const a = new SimMarket(clock, { mint: "Snap1111111111111111111111111111111111111111".slice(0, 43) })
      const b = new SimMarket(clock, { mint: "Snap2222222222222222222222222222222222222222".slice(0, 43) })
      const states = new Map<string, MarketState | undefined>()
      const apply = (events: ReadonlyArray<ChainEvent>) => {
        for (const e of events) {
          const key = `${e.chain}:${e.mint}`
          const [next] = definition.step(states.get(key), e)
          states.set(key, next)
        }
        index.publish([...states.entries()])
      }
      apply([a.created(), b.created(), ...a.buy("t", 3n * 10n ** 9n)])
      const firstRealQuote = a.curve.realQuoteRaw.toString()

      // Receipts: each sample reads the index once; what it records goes through the writer.
      let samples = 0
      let recorded = 0
      const sampledIndex = new Proxy(index, {
        get: (target, key) => {
          if (key === "markets") {
            return () => {
              samples++
              return target.markets()
            }
          }
          const value = Reflect.get(target, key, target) as unknown
          return typeof value === "function" ? value.bind(target) : value
        }
      })
      const countingWriter: typeof writer = {
        ...writer,
        tryRecord: (batch) => {
          recorded += batch.length
          return writer.tryRecord(batch)
        }
      }
      const fiber = Effect.runFork(runMarketSnapshotSampler(sampledIndex, countingWriter, 50))
      const count = () => Effect.runPromise(ch.query<{ n: string }>("SELECT count() AS n FROM market_snapshots")).then((r) => Number(r[0]!.n))
      const snapshotRows = (n: number) => eventually(async () => (await count()) >= n, { what: `${n} snapshot rows`, deadlineMs: 10_000, intervalMs: 20 })
      await snapshotRows(2)
      // Several intervals with no change: six whole samples (a seventh started) record nothing.
      const before = samples
      await eventually(() => samples >= before + 7, { what: "seven more samples", deadlineMs: 10_000, intervalMs: 10 })
      expect(recorded).toBe(2)
      expect(await count()).toBe(2)
      apply(a.buy("t", 10n ** 9n))
      await snapshotRows(3)
      await Effect.runPromise(Fiber.interrupt(fiber))

      const rows = await Effect.runPromise(
        ch.query<{ mint: string; real_quote_raw: string; lifecycle: string; migration_status: string }>(
          "SELECT mint, real_quote_raw, lifecycle, migration_status FROM market_snapshots WHERE mint = {mint:String} ORDER BY ts",
          { mint: a.mint }
        )
      )
      expect(rows.map((r) => r.real_quote_raw)).toEqual([firstRealQuote, a.curve.realQuoteRaw.toString()])
      expect(rows.at(-1)).toMatchObject({ lifecycle: "trading", migration_status: "not_started" })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 60_000)
})
