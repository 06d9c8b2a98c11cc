/**
 * `SolanaLocalnet`: the Solana test chain as an Effect service. Its scoped layer creates the
 * `Ledger`, starts the three network servers on real sockets (Solana JSON-RPC, Yellowstone
 * Geyser gRPC, Jito-style block engine; port 0 = a free port each) and the slot clock, and
 * exposes the ledger and the three URLs. Closing the scope stops the clock first (no slot closes
 * during shutdown), then the servers (Geyser streams end with UNAVAILABLE, HTTP connections are
 * closed), in reverse order of start.
 *
 * `manualSlots: true` leaves the clock stopped: tests close slots with `ledger.advanceSlot()`.
 * `dataDir` keeps the ledger there (`LedgerStore.ts`): the chain continues across restarts.
 */
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import { Ledger, type LedgerOptions } from "./Ledger.js"
import { openStoredLedger } from "./LedgerStore.js"
import { type BlockEngineServerOptions, startBlockEngineServer } from "./server/BlockEngineServer.js"
import { type GeyserServer, type GeyserServerOptions, startGeyserServer } from "./server/GeyserServer.js"
import type { RunningServer } from "./server/internal/httpJsonRpc.js"
import { type SolanaRpcServerOptions, startSolanaRpcServer } from "./server/SolanaRpcServer.js"

export interface SolanaLocalnetOptions {
  readonly ledger?: LedgerOptions
  /** Leave the slot clock stopped (tests drive slots by hand). Default false: a slot every `ledger.slotMs` (400 ms). */
  readonly manualSlots?: boolean
  /** Interface every server binds (default 127.0.0.1). */
  readonly host?: string
  readonly rpc?: Partial<SolanaRpcServerOptions>
  readonly geyser?: Partial<GeyserServerOptions>
  readonly blockEngine?: Partial<BlockEngineServerOptions>
  /** Keep the ledger in this directory and continue it at start (default: a new chain in memory). */
  readonly dataDir?: string
  /** With `dataDir`: fdatasync the journal at every slot close (default true). */
  readonly fsync?: boolean
}

export interface SolanaLocalnetShape {
  readonly ledger: Ledger
  readonly rpcUrl: string
  readonly grpcUrl: string
  readonly blockEngineUrl: string
  /** The Geyser server itself, for fault injection (`dropStreams`) and stats. */
  readonly geyser: GeyserServer
}

export class SolanaLocalnetError extends Schema.TaggedError<SolanaLocalnetError>()("SolanaLocalnetError", {
  server: Schema.Literal("ledger", "rpc", "geyser", "block-engine"),
  message: Schema.String
}) {}

export class SolanaLocalnet extends Context.Tag("curvestream/SolanaLocalnet")<SolanaLocalnet, SolanaLocalnetShape>() {
  /** The scoped layer: ledger, servers and clock live as long as the layer's scope. */
  static readonly layer = (options: SolanaLocalnetOptions = {}): Layer.Layer<SolanaLocalnet, SolanaLocalnetError> =>
    Layer.scoped(SolanaLocalnet, make(options))
}

const started = <A>(server: SolanaLocalnetError["server"], start: () => Promise<A>, stop: (a: A) => Promise<void>) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: start,
      catch: (e) => new SolanaLocalnetError({ server, message: `could not start: ${e instanceof Error ? e.message : String(e)}` })
    }),
    (a) => Effect.promise(() => stop(a))
  )

const storedLedger = (dir: string, options: SolanaLocalnetOptions) =>
  Effect.gen(function* () {
    const stored = yield* Effect.acquireRelease(
      Effect.try({
        try: () => openStoredLedger(dir, options.ledger, options.fsync ?? true),
        catch: (e) => new SolanaLocalnetError({ server: "ledger", message: `${dir}: ${e instanceof Error ? e.message : String(e)}` })
      }),
      (s) => Effect.sync(() => s.close())
    )
    yield* Effect.logInfo(
      stored.created
        ? "solana localnet: new chain"
        : `solana localnet: continued the chain in ${dir} (${stored.replayed} records replayed in ${stored.replayMs} ms)`
    ).pipe(
      Effect.annotateLogs({
        dir,
        genesisHash: stored.ledger.getBlock(0n)?.blockhash ?? "",
        slot: stored.ledger.slot.toString(),
        ...(stored.tornBytes > 0 ? { tornBytesDropped: stored.tornBytes } : {})
      })
    )
    return stored.ledger
  })

export const make = (options: SolanaLocalnetOptions = {}): Effect.Effect<SolanaLocalnetShape, SolanaLocalnetError, Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const ledger = options.dataDir === undefined ? new Ledger(options.ledger) : yield* storedLedger(options.dataDir, options)
    const rpc = yield* started("rpc", () => startSolanaRpcServer(ledger, { ...options.rpc, host }), (s: RunningServer) => s.close())
    const geyser = yield* started("geyser", () => startGeyserServer(ledger, { ...options.geyser, host }), (s: GeyserServer) => s.close())
    const blockEngine = yield* started(
      "block-engine",
      () => startBlockEngineServer(ledger, { ...options.blockEngine, host }),
      (s: RunningServer) => s.close()
    )
    if (options.manualSlots !== true) {
      yield* Effect.acquireRelease(
        Effect.sync(() => ledger.start()),
        () => Effect.sync(() => ledger.stop())
      )
    }
    yield* Effect.logDebug("solana localnet started").pipe(
      Effect.annotateLogs({ rpc: rpc.url, grpc: geyser.url, blockEngine: blockEngine.url, manualSlots: options.manualSlots === true })
    )
    return { ledger, rpcUrl: rpc.url, grpcUrl: geyser.url, blockEngineUrl: blockEngine.url, geyser }
  })

export const layer = SolanaLocalnet.layer
