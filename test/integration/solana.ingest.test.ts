/**
 * Ledger → Yellowstone Geyser gRPC (real socket) → the ingester on the real Yellowstone client →
 * the embedded bus (temp directory) → a bus consumer, with the cursor in PGlite:
 * - every event once, in position order per mint, with the amounts the ledger executed;
 * - a dropped stream and a restarted gRPC server: reconnect and resume from the cursor, no gap;
 * - commitment: at `finalized` nothing is published before the slot is finalized;
 * - `from_slot`: a restarted ingester replays what it missed from its stored cursor; past the
 *   server's window it logs the gap and resumes from the oldest available slot;
 * - a cursor ahead of the chain (a reset localnet) starts over from the oldest slot.
 * Slots are driven by hand; every wait is a polled receipt with a deadline.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { launchCurve } from "../../src/chain/solana/localnet/testkit.js"
import { WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import * as Database from "../../src/db/Database.js"
import { runLifecycle, SOL } from "../support/solanaLifecycle.js"
import { eventually } from "../support/eventually.js"
import { actors, buyer, type LedgerOptions, type Received, solanaIngestWorld, type SolanaIngestWorld } from "../support/solanaIngestWorld.js"

// One PGlite for the file (it takes seconds to start); each test has its own cursor source.
let database: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
let sql: SqlClient.SqlClient
beforeAll(async () => {
  database = ManagedRuntime.make(Database.layerTest)
  sql = await database.runPromise(SqlClient.SqlClient)
})
afterAll(async () => {
  await database.dispose()
})

const worlds: SolanaIngestWorld[] = []
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.dispose()
})
const open = async (ledgerOptions?: LedgerOptions) => {
  const w = await solanaIngestWorld(sql, ledgerOptions)
  worlds.push(w)
  return w
}

const ids = (events: ReadonlyArray<{ readonly id: string }>) => events.map((e) => e.id)

const assertOncePerMintInOrder = (received: ReadonlyArray<Received>) => {
  expect(new Set(ids(received.map((r) => r.event))).size).toBe(received.length)
  const byMint = new Map<string, string[]>()
  for (const { event } of received) byMint.set(event.mint, [...(byMint.get(event.mint) ?? []), event.position])
  for (const positions of byMint.values()) expect(positions).toEqual([...positions].sort())
}

describe("Solana ingest: ledger → Geyser → Yellowstone client → bus", () => {
  it("publishes every event once, in position order per mint, with the executed amounts, and keeps doing so slot after slot", async () => {
    const w = await open()
    const a = await actors()
    await w.startIngester()
    // Two curves' whole lifecycles, interleaved with slot closes.
    const first = await runLifecycle(w.ledger, a, { name: "First", afterEach: () => w.ledger.advanceSlot() })
    const second = await runLifecycle(w.ledger, a, { name: "Second", afterEach: (step) => (step === "buy" || step === "migrate" ? w.ledger.advanceSlot() : undefined) })
    w.ledger.advanceSlot()
    const expected = w.expectedFrom()
    expect(expected.length).toBe(16)
    await eventually(() => (w.received.length >= expected.length ? true : undefined), { what: "every event on the bus", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.received.map((r) => r.event)).toEqual(expect.arrayContaining(expected))
    expect(w.received).toHaveLength(expected.length)
    assertOncePerMintInOrder(w.received)
    expect(new Set(w.received.map((r) => r.event.mint))).toEqual(new Set([first.curve.mint.address, second.curve.mint.address]))
    for (const { event } of w.received) {
      expect(event.timestampMs).toBe(w.ledger.getBlock(BigInt(event.position.split(":")[1]!))!.blockTimeSec! * 1000)
    }

    // The cursor is the last published slot, in PostgreSQL.
    const status = await eventually(async () => {
      const s = await w.status()
      return s.cursorSlot === w.ledger.confirmedSlot ? s : undefined
    }, { what: "cursor at the last confirmed slot", deadlineMs: 15_000, intervalMs: 2 })
    expect(status.publishedSlot).toBe(status.cursorSlot)
    expect(status.connected).toBe(true)
    expect(status.publishedEvents).toBe(expected.length)
    const rows = await w.cursorRow()
    expect(rows).toEqual([{ source: w.source, slot: String(status.cursorSlot) }])
    expect(status.cursorSlot).toBe(w.received.map((r) => BigInt(r.event.position.split(":")[1]!)).reduce((m, s) => (s > m ? s : m), 0n))

    // Then one buy per slot: each arrives on the bus once, after everything before it.
    const third = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const buy = buyer(w.ledger, a.trader, third.mint.address)
    for (let i = 0; i < 20; i++) {
      const r = await buy()
      w.ledger.advanceSlot()
      await eventually(() => w.received.find((x) => x.event.signature === r.signature), { what: "the buy on the bus", deadlineMs: 15_000, intervalMs: 2 })
    }
    assertOncePerMintInOrder(w.received)
  })

  it("survives a dropped stream and a restarted gRPC server: resumes from its cursor with no gap", async () => {
    const w = await open()
    const a = await actors()
    const curve = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const buy = buyer(w.ledger, a.trader, curve.mint.address)
    await w.startIngester()
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await buy()
        if (i % 2 === 1) w.ledger.advanceSlot()
      }
      w.ledger.advanceSlot()
    }
    await burst(6)
    await eventually(() => (w.received.length === 7 ? true : undefined), { what: "launch + 6 buys", deadlineMs: 15_000, intervalMs: 2 })

    // 1. The server drops the stream mid-flight; trades keep landing.
    expect(w.geyser().dropStreams()).toBe(1)
    await burst(6)
    // 2. The server dies (connections reset) and stays down while trades land.
    await eventually(async () => ((await w.status()).sessions >= 2 ? true : undefined), { what: "resubscribed after the drop", deadlineMs: 15_000, intervalMs: 2 })
    w.geyser().kill()
    await burst(6)
    await eventually(async () => ((await w.status()).connected ? undefined : true), { what: "the ingester notices", deadlineMs: 15_000, intervalMs: 2 })
    await w.restartGeyser("close")
    await burst(6)

    const expected = w.expectedFrom()
    expect(expected).toHaveLength(25)
    await eventually(() => (w.received.length >= expected.length ? true : undefined), { what: "every trade before and after the faults", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.received.map((r) => r.event)).toEqual(expect.arrayContaining(expected))
    expect(w.received).toHaveLength(expected.length)
    assertOncePerMintInOrder(w.received)
    const status = await w.status()
    expect(status.gaps).toEqual([])
    expect(status.sessions).toBeGreaterThanOrEqual(3)
    expect(status.reconnectAttempts.length).toBeGreaterThanOrEqual(2)
    expect(status.reconnectAttempts.every((x) => x.delayMs <= 240)).toBe(true)
    // The ingester answers the server's pings (every 200 ms here) and sees the pongs.
    await eventually(async () => ((await w.status()).lastPongId !== null ? true : undefined), { what: "a pong", deadlineMs: 15_000, intervalMs: 2 })
  })

  it("at finalized publishes a slot only once it is finalized", async () => {
    const w = await open()
    const a = await actors()
    w.ledger.advanceSlots(3) // so that some slots are finalized already (lag 2)
    await w.startIngester({ commitment: "finalized" })
    const curve = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const launchSlot = w.ledger.slot
    w.ledger.advanceSlot()
    // A receipt that the ingester has caught up with everything finalized so far…
    await eventually(async () => ((await w.status()).publishedSlot === w.ledger.finalizedSlot ? true : undefined), { what: "finalized slots published", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.ledger.finalizedSlot).toBeLessThan(launchSlot)
    // …and the confirmed launch is not among them.
    expect(w.received).toEqual([])
    w.ledger.advanceSlots(2)
    expect(w.ledger.finalizedSlot).toBe(launchSlot)
    await eventually(() => (w.received.length === 1 ? true : undefined), { what: "the launch once finalized", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.received[0]!.event).toMatchObject({ _tag: "CurveCreated", mint: curve.mint.address })
  })

  it("a restarted ingester replays from its stored cursor what it missed", async () => {
    const w = await open()
    const a = await actors()
    // History before the ingester ever ran: with no cursor it starts from the oldest slot kept.
    const curve = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const buy = buyer(w.ledger, a.trader, curve.mint.address)
    await buy()
    w.ledger.advanceSlot()
    await w.startIngester()
    await eventually(() => (w.received.length === 2 ? true : undefined), { what: "history replayed from slot 0", deadlineMs: 15_000, intervalMs: 2 })
    const cursor = await eventually(async () => (await w.status()).cursorSlot ?? undefined, { what: "a cursor", deadlineMs: 15_000, intervalMs: 2 })
    await w.stopIngester()

    // While it is down: more trades over several slots.
    for (let i = 0; i < 5; i++) {
      await buy()
      w.ledger.advanceSlot()
    }
    await w.startIngester()
    await eventually(() => (w.received.length === 7 ? true : undefined), { what: "the missed trades", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.received.map((r) => r.event)).toEqual(expect.arrayContaining(w.expectedFrom()))
    assertOncePerMintInOrder(w.received)
    expect(w.logs.some((l) => l.message.includes(`from slot ${cursor}`))).toBe(true)
    expect((await w.status()).gaps).toEqual([])
  })

  it("past the server's window it logs the gap and resumes from the oldest available slot", async () => {
    const w = await open({ updatesRetainedSlots: 10 })
    const a = await actors()
    const curve = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const buy = buyer(w.ledger, a.trader, curve.mint.address)
    w.ledger.advanceSlot()
    await w.startIngester()
    await eventually(() => (w.received.length === 1 ? true : undefined), { what: "the launch", deadlineMs: 15_000, intervalMs: 2 })
    const cursor = await eventually(async () => (await w.status()).cursorSlot ?? undefined, { what: "a cursor", deadlineMs: 15_000, intervalMs: 2 })
    await w.stopIngester()

    const lost = await buy() // lands right after the cursor, soon outside the window
    for (let i = 0; i < 20; i++) w.ledger.advanceSlot()
    const kept = await buy()
    w.ledger.advanceSlot()
    const oldest = w.ledger.oldestRetainedSlot
    expect(w.ledger.getTransaction(lost.signature)!.slot).toBeLessThan(oldest)

    await w.startIngester()
    await eventually(() => w.received.find((r) => r.event.signature === kept.signature), { what: "the trade inside the window", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.received.some((r) => r.event.signature === lost.signature)).toBe(false)
    const status = await w.status()
    expect(status.gaps).toHaveLength(1)
    expect(status.gaps[0]!.fromSlot).toBe(cursor + 1n)
    expect(status.gaps[0]!.toSlot).toBeGreaterThanOrEqual(oldest - 1n)
    expect(w.logs.some((l) => l.level === "ERROR" && l.message.includes(`slots ${cursor + 1n}..`) && l.message.includes("were not ingested"))).toBe(true)
  })

  it("a cursor ahead of the chain (a reset localnet) starts over from the oldest slot", async () => {
    const w = await open()
    const a = await actors()
    await w.runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`INSERT INTO ingest_cursors (source, slot) VALUES (${w.source}, 1000000)`
      )
    )
    const curve = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    w.ledger.advanceSlot()
    await w.startIngester()
    await eventually(() => (w.received.length === 1 ? true : undefined), { what: "the launch of the new chain", deadlineMs: 15_000, intervalMs: 2 })
    expect(w.received[0]!.event).toMatchObject({ _tag: "CurveCreated", mint: curve.mint.address })
    expect(w.logs.some((l) => l.level === "ERROR" && l.message.includes("is ahead of the server's newest slot"))).toBe(true)
    await eventually(async () => ((await w.cursorRow())[0]?.slot === String(w.ledger.confirmedSlot) ? true : undefined), { what: "cursor rewritten", deadlineMs: 15_000, intervalMs: 2 })
  })
})
