/**
 * The Solana ingest world shared by `test/integration/solana.ingest.test.ts` and
 * `bench/solanaIngest.ts`: an in-process `Ledger`, its Yellowstone Geyser gRPC server on a real
 * socket, the real Yellowstone ingester, the embedded bus (temp directory), the cursor in the
 * PostgreSQL (PGlite) the caller passes in, and a bus consumer that records every `chain.events`
 * record with its arrival time. Slots are driven by hand.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { KeyPairSigner } from "@solana/kit"
import { Context, Effect, Exit, Fiber, Layer, Logger, ManagedRuntime, Scope } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { getBuyInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { startGeyserServer } from "../../src/chain/solana/localnet/server/GeyserServer.js"
import { ataOf, expectOk, send } from "../../src/chain/solana/localnet/testkit.js"
import { SVC_CURVE_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { Bus, Topics } from "../../ingest/bus/Bus.js"
import { EmbeddedBus } from "../../ingest/bus/EmbeddedBus.js"
import { type ChainEvent } from "../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../ingest/ChainEventCodec.js"
import { decodeCurveTransaction } from "../../ingest/solana/decoders/index.js"
import { SolanaIngester } from "../../ingest/solana/SolanaIngester.js"
import { type Actors, SOL } from "./solanaLifecycle.js"
import type { IngestCommitment, IngesterStatus, YellowstoneIngesterOptions } from "../../ingest/solana/YellowstoneIngester.js"

const PARTITIONS = 4

/** A `chain.events` record as the consumer got it, with `performance.now()` at delivery. */
export interface Received {
  readonly event: ChainEvent
  readonly atMs: number
}

type Infra = Bus | SqlClient.SqlClient

export type LedgerOptions = ConstructorParameters<typeof Ledger>[0]

let worldCount = 0

/** One world: a ledger, its Geyser server, the bus, the caller's PostgreSQL, and a bus consumer. */
export const solanaIngestWorld = async (sql: SqlClient.SqlClient, ledgerOptions: LedgerOptions = {}) => {
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

export type SolanaIngestWorld = Awaited<ReturnType<typeof solanaIngestWorld>>

/** The dev creator and trader and the keeper, as `runLifecycle` takes them. */
export const actors = async (): Promise<Actors> => ({ creator: await devSigner(0), trader: await devSigner(1), keeper: await keeperSigner() })

/** Buys of distinct amounts (distinct signatures within a blockhash window). */
export const buyer = (ledger: Ledger, trader: KeyPairSigner, mint: string) => {
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
