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
import type { KeyPairSigner } from "@solana/kit"
import { Context, Effect, Exit, Fiber, Layer, Logger, ManagedRuntime, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { getBuyInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { startGeyserServer } from "../../src/chain/solana/localnet/server/GeyserServer.js"
import { ataOf, expectOk, launchCurve, send } from "../../src/chain/solana/localnet/testkit.js"
import { SVC_CURVE_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import * as Database from "../../src/db/Database.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { type ChainEvent } from "../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { decodeCurveTransaction } from "../../ingest/solana/decoders/index.js"
import { SolanaIngester } from "../../ingest/solana/SolanaIngester.js"
import { runLifecycle, SOL } from "../../ingest/solana/testing/lifecycle.js"
import type { IngestCommitment, IngesterStatus, YellowstoneIngesterOptions } from "../../ingest/solana/YellowstoneIngester.js"
import { eventually } from "../support/eventually.js"

const PARTITIONS = 4

interface Received {
  readonly event: ChainEvent
  readonly atMs: number
}

type Infra = Bus | SqlClient.SqlClient

// One PGlite for the file (it takes seconds to start); each test has its own cursor source.
let database: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, unknown>
let sql: SqlClient.SqlClient
let worldCount = 0
beforeAll(async () => {
  database = ManagedRuntime.make(Database.layer({ url: undefined, dataDir: undefined }))
  sql = await database.runPromise(SqlClient.SqlClient)
})
afterAll(async () => {
  await database.dispose()
})

/** One test's world: a ledger, its Geyser server, the bus and PGlite, and a bus consumer. */
const world = async (ledgerOptions: ConstructorParameters<typeof Ledger>[0] = {}) => {
  let tick = 0
  const ledger = new Ledger({ finalizationLagSlots: 2, clockMs: () => 1_700_000_000_000 + 400 * tick++, ...ledgerOptions })
  let geyser = await startGeyserServer(ledger, { pingIntervalMs: 200 })
  const port = geyser.port
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-solana-ingest-"))
  const logs: Array<{ level: string; message: string }> = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      logs.push({ level: logLevel.label, message: Array.isArray(message) ? message.map(String).join(" ") : String(message) })
    })
  )
  const source = `solana:yellowstone:${SVC_CURVE_PROGRAM_ID}:test-${++worldCount}`
  const infra: Layer.Layer<Infra> = Layer.merge(
    EmbeddedBus.layer({ dir, partitions: PARTITIONS, fsync: false }).pipe(Layer.orDie),
    Layer.succeed(SqlClient.SqlClient, sql)
  )
  const runtime = ManagedRuntime.make(Layer.merge(infra, capture))

  // The consumer: every record of chain.events as it is delivered, with its arrival time.
  const received: Received[] = []
  const consumer = runtime.runFork(
    Effect.gen(function* () {
      const bus = yield* Bus
      yield* bus.subscribe({ group: "test-consumer", topic: Topics.chainEvents, fromBeginning: true }, (batch) =>
        Effect.sync(() => {
          const atMs = performance.now()
          for (const r of batch.records) {
            const decoded = decodeChainEvent(r.value)
            if (decoded._tag === "Left") throw new Error(`undecodable bus record: ${decoded.left.message}`)
            received.push({ event: decoded.right, atMs })
          }
        })
      )
      return yield* Effect.never
    }).pipe(Effect.scoped)
  )

  let ingesterScope: Scope.CloseableScope | undefined
  let ingester: Context.Tag.Service<SolanaIngester> | undefined
  const startIngester = async (options: Partial<YellowstoneIngesterOptions> & { commitment?: IngestCommitment } = {}) => {
    const scope = await runtime.runPromise(Scope.make())
    const ctx = await runtime.runPromise(
      Layer.buildWithScope(
        SolanaIngester.layer({
          grpcUrl: `http://127.0.0.1:${port}`,
          programId: SVC_CURVE_PROGRAM_ID,
          commitment: "confirmed",
          seed: 7,
          backoff: { initialMs: 10, maxMs: 200 },
          idleTimeoutMs: 3_000,
          source,
          ...options
        }),
        scope
      )
    )
    ingesterScope = scope
    ingester = Context.get(ctx, SolanaIngester)
    return ingester
  }
  const stopIngester = async () => {
    if (ingesterScope !== undefined) await runtime.runPromise(Scope.close(ingesterScope, Exit.void))
    ingesterScope = undefined
  }
  const status = (): Promise<IngesterStatus> => runtime.runPromise(ingester!.status)

  /** What the bus must hold: every svc-curve transaction of the ledger, decoded straight from its record. */
  const expectedFrom = (fromSlot = 0n, toSlot = ledger.confirmedSlot): ChainEvent[] => {
    const out: ChainEvent[] = []
    for (let s = fromSlot; s <= toSlot; s++) {
      const block = ledger.getBlock(s)
      if (block === undefined || block.blockTimeSec === null) continue
      for (const r of block.transactions) {
        if (!r.accountKeys.includes(SVC_CURVE_PROGRAM_ID)) continue
        const tx = { signature: r.signature, slot: r.slot, index: r.index, failed: r.err !== null, logMessages: r.logMessages }
        out.push(...decodeCurveTransaction(tx, block.blockTimeSec * 1000, SVC_CURVE_PROGRAM_ID).events)
      }
    }
    return out
  }

  const cursorRow = () =>
    runtime.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql<{ source: string; slot: string }>`SELECT source, slot::text AS slot FROM ingest_cursors WHERE source = ${source}`
      )
    )

  const restartGeyser = async (mode: "kill" | "close") => {
    if (mode === "kill") geyser.kill()
    else await geyser.close()
    geyser = await startGeyserServer(ledger, { port, pingIntervalMs: 200 })
  }

  const dispose = async () => {
    await stopIngester()
    await runtime.runPromise(Fiber.interrupt(consumer))
    await geyser.close()
    await runtime.dispose()
    await fs.rm(dir, { recursive: true, force: true })
  }

  return {
    source,
    ledger,
    geyser: () => geyser,
    runtime,
    received,
    logs,
    startIngester,
    stopIngester,
    status,
    expectedFrom,
    cursorRow,
    restartGeyser,
    dispose
  }
}

type World = Awaited<ReturnType<typeof world>>
const worlds: World[] = []
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.dispose()
})
const open = async (ledgerOptions?: ConstructorParameters<typeof Ledger>[0]) => {
  const w = await world(ledgerOptions)
  worlds.push(w)
  return w
}

const actors = async () => ({ creator: await devSigner(0), trader: await devSigner(1), keeper: await keeperSigner() })

/** Buys of distinct amounts (distinct signatures within a blockhash window). */
const buyer = (ledger: Ledger, trader: KeyPairSigner, mint: string) => {
  let n = 0n
  return async () => {
    n++
    const m = mint as never
    return expectOk(
      ledger,
      await send(ledger, trader, [
        getCreateAssociatedTokenInstruction({ payer: trader, ata: ataOf(trader.address, m), owner: trader.address, mint: m }),
        await getBuyInstruction({ trader, mint: m, quoteMint: WSOL_MINT_ADDRESS, amountInRaw: SOL / 1000n + n, minAmountOutRaw: 0n })
      ])
    )
  }
}

const ids = (events: ReadonlyArray<{ readonly id: string }>) => events.map((e) => e.id)

const assertOncePerMintInOrder = (received: ReadonlyArray<Received>) => {
  expect(new Set(ids(received.map((r) => r.event))).size).toBe(received.length)
  const byMint = new Map<string, string[]>()
  for (const { event } of received) byMint.set(event.mint, [...(byMint.get(event.mint) ?? []), event.position])
  for (const positions of byMint.values()) expect(positions).toEqual([...positions].sort())
}

describe("Solana ingest: ledger → Geyser → Yellowstone client → bus", () => {
  it("publishes every event once, in position order per mint, with the executed amounts; measures the latency", async () => {
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

    // Latency: slot close (the commit becomes confirmed) → the event delivered by the bus.
    const third = await launchCurve(w.ledger, a.creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const buy = buyer(w.ledger, a.trader, third.mint.address)
    const latenciesMs: number[] = []
    for (let i = 0; i < 20; i++) {
      const r = await buy()
      const t0 = performance.now()
      w.ledger.advanceSlot()
      const got = await eventually(() => w.received.find((x) => x.event.signature === r.signature), { what: "the buy on the bus", deadlineMs: 15_000, intervalMs: 2 })
      latenciesMs.push(got.atMs - t0)
    }
    latenciesMs.sort((x, y) => x - y)
    console.log(
      `solana ingest latency (slot close → bus delivery, confirmed, ${latenciesMs.length} samples): ` +
        `p50 ${latenciesMs[10]!.toFixed(2)} ms, max ${latenciesMs[latenciesMs.length - 1]!.toFixed(2)} ms`
    )
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
