/**
 * The replay's reads (`clickhouse/queries/Replay.ts`) filter with `PREWHERE` on sorting-key
 * columns only, before `FINAL` merges: all copies of a trade share the key, so they are kept
 * or dropped together. Here each copy is its own insert (its own part: an insert collapses
 * copies inside itself), so only the read-time merge can collapse them: a redelivered copy is
 * read once, a trade retracted later is not read, one retracted then re-included is read, in
 * the range read (also when its row cap ends a read on such a trade), the final mark and the
 * exhaustive pages alike. Background merges are stopped
 * on the table for the test, so the parts stay apart whatever the timing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ClickHouse } from "../../clickhouse/ClickHouse.js"
import { forEachReplayPage, lastReplayTrades, readReplayRanges, type ReplayTrade } from "../../clickhouse/queries/Replay.js"

let dataDir = ""
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "curvestream-replay-reads-"))
})
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }))

const T = Date.UTC(2024, 4, 1)
const chTs = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "")
const trade = (mint: string, k: number, extra: Record<string, unknown> = {}) => ({
  id: `solana:p${k}:0`, chain: "solana", mint, venue: "curve", side: "buy", trader: "w1",
  amount_in_raw: 1000n + BigInt(k), amount_out_raw: 5000n, fee_raw: 0n, refund_raw: 0n, quote_consumed_raw: 1000n + BigInt(k),
  quote_reserve_raw: 30n * 10n ** 9n, token_reserve_raw: 10n ** 15n, real_quote_raw: 0n, crosses_graduation: false,
  position: `s:${String(500 + k).padStart(20, "0")}:000000:0000`, ts: chTs(T + k * 1000), signature: `sig${k}`,
  version: 1, retracted: 0, ...extra
})

describe("replay reads across parts", () => {
  it("collapse copies, drop retracted trades and keep re-included ones (one insert per copy)", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const ch = yield* ClickHouse
        // No background merge may collapse the copies before the reads (the test's point is the read-time merge).
        yield* ch.command("SYSTEM STOP MERGES trades")
        // mintA: 1 kept, 2 redelivered, 3 retracted, 4 retracted then re-included, 5 kept; mintB: 6 retracted (its only trade), 7 kept.
        const a = [1, 2, 3, 4, 5].map((k) => trade("mintA", k))
        const b = [trade("mintB", 6), trade("mintB", 7)]
        yield* ch.insert("trades", [...a, ...b])
        yield* ch.insert("trades", [a[1]!])
        yield* ch.insert("trades", [{ ...a[2]!, version: 2, retracted: 1 }])
        yield* ch.insert("trades", [{ ...a[3]!, version: 2, retracted: 1 }])
        yield* ch.insert("trades", [{ ...a[3]!, version: 3, retracted: 0 }])
        yield* ch.insert("trades", [{ ...b[1]!, version: 2, retracted: 1 }])
        const [parts] = yield* ch.query<{ n: string }>("SELECT toString(count()) AS n FROM system.parts WHERE database = currentDatabase() AND table = 'trades' AND active")
        expect(Number(parts!.n)).toBeGreaterThan(1) // the copies are in separate parts (no merge yet)

        const offsets = (rows: ReadonlyArray<ReplayTrade>) => rows.map((r) => `${r.m}@${r.t}`)
        const ranges = yield* readReplayRanges({
          fromMs: T,
          ranges: [
            { chain: "solana", asset: "mintA", afterT: 0, afterP: "", toT: 60_000, rowsMax: 10 },
            { chain: "solana", asset: "mintB", afterT: 0, afterP: "", toT: 60_000, rowsMax: 10 }
          ]
        })
        expect(ranges.trades.map(offsets)).toEqual([["mintA@1000", "mintA@2000", "mintA@4000", "mintA@5000"], ["mintB@6000"]])

        // Row caps that end a read on a key with several copies in different parts (2: the
        // redelivered trade; 1 and 3: the retracted and the re-included one): the range read
        // continued from each read's last row gives the same trades, each once.
        for (const rowsMax of [1, 2, 3]) {
          const stitched: Array<ReplayTrade> = []
          let after = { t: 0, p: "" }
          for (let read = 0; read < 10; read++) {
            const page = yield* readReplayRanges({ fromMs: T, ranges: [{ chain: "solana", asset: "mintA", afterT: after.t, afterP: after.p, toT: 60_000, rowsMax }] })
            const rows = page.trades[0]!
            expect(rows.length).toBeLessThanOrEqual(rowsMax)
            stitched.push(...rows)
            if (rows.length < rowsMax) break
            after = { t: rows[rows.length - 1]!.t, p: rows[rows.length - 1]!.p }
          }
          expect([rowsMax, offsets(stitched)]).toEqual([rowsMax, ["mintA@1000", "mintA@2000", "mintA@4000", "mintA@5000"]])
        }

        const lasts = yield* lastReplayTrades({
          fromMs: T,
          ranges: [
            { chain: "solana", asset: "mintA", fromT: 0, toT: 3_500 },
            { chain: "solana", asset: "mintB", fromT: 6_500, toT: 60_000 }
          ]
        })
        expect(lasts.map((r) => (r === undefined ? undefined : `${r.m}@${r.t}`))).toEqual(["mintA@2000", undefined])

        const paged: Array<ReplayTrade> = []
        yield* forEachReplayPage(
          { chains: ["solana"], fromMs: T, toMs: T + 60_000, assets: [{ asset: "mintA", startMs: T }, { asset: "mintB", startMs: T }] },
          (page) => Effect.sync(() => paged.push(...page))
        )
        expect(offsets(paged)).toEqual(["mintA@1000", "mintA@2000", "mintA@4000", "mintA@5000", "mintB@6000"])
      }).pipe(Effect.provide(ClickHouse.layerChdb({ dataDir })), Logger.withMinimumLogLevel(LogLevel.Error))
    ), 60_000)
})
