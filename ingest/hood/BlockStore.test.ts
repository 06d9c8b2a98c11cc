/**
 * The Hood ingester's durable window on PGlite: loaded in numeric block order (a window across
 * 9 → 10 must end at its tip, not at "9"), pools kept with the cursor and dropped with a reorg.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { commitStep, loadState, type PoolEntry, type WindowBlock } from "./BlockStore.js"

let db: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
beforeAll(() => {
  db = ManagedRuntime.make(Database.layer({ url: undefined, dataDir: undefined }))
}, 60_000)
afterAll(() => db?.dispose())

const block = (n: number): WindowBlock => ({ number: BigInt(n), hash: `0xh${n}`, parentHash: `0xh${n - 1}`, events: [] })
const pool = (n: number): PoolEntry => ({ pool: `0xPool${n}`, mint: `0xmint${n}`, tokenIsToken0: n % 2 === 0, feePips: 3000, fromPosition: `h:${n}`, block: BigInt(n) })

describe("Hood block store", () => {
  it("loads the window in numeric order and its pools; a reorg drops both above the ancestor", async () => {
    const blocks = [7, 8, 9, 10, 11, 12].map(block)
    await db.runPromise(commitStep("s1", { keepUpTo: null, added: blocks, pruneBelow: 7n, cursor: 12n, pools: [pool(9), pool(11)] }))
    const loaded = await db.runPromise(loadState("s1"))
    expect(loaded.cursor).toBe(12n)
    expect(loaded.window.map((b) => Number(b.number))).toEqual([7, 8, 9, 10, 11, 12])
    expect(loaded.pools.map((p) => p.pool)).toEqual(["0xPool9", "0xPool11"])
    expect(loaded.pools[0]).toEqual(pool(9))
    // A reorg back to 9: blocks and pools above it go; the new branch adds 10'.
    await db.runPromise(commitStep("s1", { keepUpTo: 9n, added: [{ ...block(10), hash: "0xh10b" }], pruneBelow: 7n, cursor: 10n, pools: [] }))
    const after = await db.runPromise(loadState("s1"))
    expect(after.window.map((b) => b.hash)).toEqual(["0xh7", "0xh8", "0xh9", "0xh10b"])
    expect(after.pools.map((p) => p.pool)).toEqual(["0xPool9"])
    // Another source is separate.
    expect((await db.runPromise(loadState("s2"))).window).toEqual([])
  })
})
