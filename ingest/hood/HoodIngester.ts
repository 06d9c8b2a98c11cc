/**
 * The Hood (EVM) log ingester: reads our contracts' logs over JSON-RPC with viem, turns them into
 * `ChainEvent`s (decoders/, one file per event) and publishes them to `chain.events` keyed
 * `hood:<mint>`, with its cursor and recent block window in PostgreSQL (BlockStore.ts).
 *
 * Two modes, one loop:
 * - Backfill: blocks at or below `head − confirmations − reorgWindowBlocks` are taken as final and
 *   read with `eth_getLogs` in ranges of `backfillBlocks` (from `fromBlock`, the factory's deploy
 *   block, or the stored cursor), filtered by our events' topic0s.
 * - Follow: newer blocks up to `head − confirmations` are read block by block (headers in
 *   parallel, logs by range, every log checked against its header's hash), appended to the block
 *   window (bounded: `reorgWindowBlocks`), and published. Polls every `pollIntervalMs`: a poll
 *   reads the newest block first, and when it is the one the last idle poll found (same number
 *   and hash) it is done, since nothing below an unchanged block changed.
 *
 * Reorgs: a new block whose parent hash is not the window's tip, or a tip whose hash changed at
 * its height (or vanished), starts the walk back to the common ancestor. What the window holds,
 * what a reorg retracts and republishes, and what a reorg deeper than the window does, is the
 * pure state machine in ReorgWindow.ts; this module reads the chain, feeds it what it read,
 * publishes and commits its outputs, and adopts its new state once they are done. A reorg deeper
 * than the window is logged as an error.
 *
 * Confirmation depth: events are published only for blocks at depth ≥ `confirmations` (default 0:
 * the localnet's latency, with reorgs handled by retraction; 2 or more on a real chain makes
 * retractions rare). `reorgWindowBlocks` (default 64) is kept beyond it.
 *
 * Emitters: factory events count only from the factory, fee-splitter events only from the
 * splitter, curve events only from a curve of our factory (known from its `CurveCreated`, else one
 * `isCurve` read; the answer is cached, at most `knownCurvesMax` entries).
 *
 * Graduated pools: a `CurveMigrated` names the Uniswap pool the curve seeded; its token0 and fee
 * tier are read once and the pool is remembered (`hood_pools`, with the cursor). Every range read
 * also asks for the `Swap` logs of the known pools (by address, `poolsPerLogsCall` at a time), so
 * trading after graduation reaches the actors as `Trade`s with venue `pool`; a swap positioned
 * before its pool's `CurveMigrated` does not count. A reorg forgets pools learned in the blocks it
 * removed (the new branch teaches them again).
 *
 * Invariants: the cursor and window are written after the bus acknowledged the step's events (a
 * crash republishes at most one step: actors skip positions already applied, ClickHouse is
 * idempotent on ids). Every failure (RPC, bus, PostgreSQL) ends the step and retries after a
 * capped backoff; nothing is skipped.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import {
  type Address,
  createPublicClient,
  getAddress,
  type Hex,
  hexToBigInt,
  hexToNumber,
  http,
  numberToHex,
  type PublicClient
} from "viem"
import { nodeFetchForJsonRpc } from "../../src/chain/internal/JsonRpcHttp.js"
import { bondingCurveAbi, curveFactoryAbi, uniswapV3PoolAbi } from "../../src/chain/hood/abi.generated.js"
import { Bus, Topics } from "../bus/Bus.js"
import { busKey, type ChainEvent, RecoverySnapshot } from "../ChainEvent.js"
import { encodeChainEvent } from "../ChainEventCodec.js"
import { commitStep, loadState, type PoolEntry, type WindowBlock } from "./BlockStore.js"
import { decodeHoodLog, type HoodContracts, hoodTopics } from "./decoders/index.js"
import * as PoolSwap from "./decoders/PoolSwap.js"
import { attributed, routedTradeSelector, routedTradersOf, type RoutedTraders } from "./decoders/RoutedTrade.js"
import * as ReorgWindow from "./ReorgWindow.js"

export interface HoodIngesterOptions {
  /** `HOOD_RPC_URL`: the node's JSON-RPC over HTTP. */
  readonly rpcUrl: string
  readonly factory: Address
  readonly feeSplitter: Address
  /** The engine's trade router (`HOOD_TRADE_ROUTER_ADDRESS`): a trade it routed is the wallet's, not its own (`decoders/RoutedTrade.ts`). */
  readonly tradeRouter?: Address | undefined
  /** First block to read when there is no cursor (the factory's deploy block; default 0). */
  readonly fromBlock?: bigint
  /** Publish a block's events once it is this deep (0 = the head itself). Default 0. */
  readonly confirmations?: number
  /** Blocks kept for reorg detection beyond the confirmation depth (default 64, at least 1). */
  readonly reorgWindowBlocks?: number
  /** Blocks per `eth_getLogs` range while backfilling (default 2000). */
  readonly backfillBlocks?: number
  /** Most blocks followed in one step (default 100). */
  readonly maxBlocksPerStep?: number
  readonly pollIntervalMs?: number
  /** Most messages per bus publish (default 1000). */
  readonly publishBatch?: number
  /** The cursor's key in `ingest_cursors` (default `hood:logs:<factory>`). */
  readonly source?: string
  readonly knownCurvesMax?: number
  /** Pool addresses per `eth_getLogs` call for graduated pools' swaps (default 500). */
  readonly poolsPerLogsCall?: number
  readonly rpcTimeoutMs?: number
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number }
}

export interface ResolvedHoodIngesterOptions {
  readonly rpcUrl: string
  readonly contracts: HoodContracts
  readonly fromBlock: bigint
  readonly confirmations: number
  readonly reorgWindowBlocks: number
  readonly backfillBlocks: number
  readonly maxBlocksPerStep: number
  readonly pollIntervalMs: number
  readonly publishBatch: number
  readonly source: string
  readonly knownCurvesMax: number
  readonly poolsPerLogsCall: number
  readonly rpcTimeoutMs: number
  readonly backoffInitialMs: number
  readonly backoffMaxMs: number
}

const atLeast = (n: number | undefined, min: number, fallback: number): number => Math.max(min, Math.floor(n ?? fallback))

export const resolveOptions = (o: HoodIngesterOptions): ResolvedHoodIngesterOptions => ({
  rpcUrl: o.rpcUrl,
  contracts: { factory: getAddress(o.factory), feeSplitter: getAddress(o.feeSplitter), ...(o.tradeRouter === undefined ? {} : { tradeRouter: getAddress(o.tradeRouter) }) },
  fromBlock: o.fromBlock ?? 0n,
  confirmations: atLeast(o.confirmations, 0, 0),
  reorgWindowBlocks: atLeast(o.reorgWindowBlocks, 1, 64),
  backfillBlocks: atLeast(o.backfillBlocks, 1, 2000),
  maxBlocksPerStep: atLeast(o.maxBlocksPerStep, 1, 100),
  pollIntervalMs: atLeast(o.pollIntervalMs, 1, 250),
  publishBatch: atLeast(o.publishBatch, 1, 1000),
  source: o.source ?? `hood:logs:${getAddress(o.factory)}`,
  knownCurvesMax: atLeast(o.knownCurvesMax, 16, 100_000),
  poolsPerLogsCall: atLeast(o.poolsPerLogsCall, 1, 500),
  rpcTimeoutMs: atLeast(o.rpcTimeoutMs, 1, 10_000),
  backoffInitialMs: atLeast(o.backoff?.initialMs, 1, 100),
  backoffMaxMs: atLeast(o.backoff?.maxMs, 1, 5_000)
})

export const HoodIngestErrorReason = Schema.Literal("Rpc", "Publish", "Cursor", "Inconsistent")
export type HoodIngestErrorReason = typeof HoodIngestErrorReason.Type

/** Why a step failed; every reason is retryable (the step is retried from the cursor). */
export class HoodIngestError extends Schema.TaggedError<HoodIngestError>()("HoodIngestError", {
  reason: HoodIngestErrorReason,
  message: Schema.String
}) {}

export interface HoodIngesterStatus {
  readonly source: string
  readonly mode: "starting" | "backfill" | "follow"
  /** Last block whose events are published (the cursor), or null before the first. */
  readonly cursorBlock: bigint | null
  readonly headBlock: bigint | null
  readonly windowBlocks: number
  readonly published: number
  readonly reorgs: number
  readonly deepestReorgBlocks: number
  readonly retractedEvents: number
  readonly skippedLogs: number
  readonly failures: number
  readonly lastError: string | null
}

const message = (e: unknown): string => (e instanceof Error ? e.message.split("\n")[0]! : String(e))

interface RawLog {
  readonly address: Address
  readonly topics: ReadonlyArray<Hex>
  readonly data: Hex
  readonly blockNumber: bigint
  readonly blockHash: Hex
  readonly logIndex: number
  readonly transactionHash: Hex
  readonly removed: boolean
}

interface RpcLog {
  readonly address: string
  readonly topics: ReadonlyArray<Hex>
  readonly data: Hex
  readonly blockNumber: Hex | null
  readonly blockHash: Hex | null
  readonly logIndex: Hex | null
  readonly transactionHash: Hex | null
  readonly removed?: boolean
}

const utf8 = new TextDecoder()

/** The ingester's state between steps (one fiber owns it). */
class Follower {
  /** The window, the cursor and the retracted memory (ReorgWindow.ts); replaced only after a step's outputs are done. */
  reorg: ReorgWindow.ReorgWindowState
  readonly knownCurves = new Map<string, boolean>()
  /** Graduated pools whose swaps count, by lower-case address. */
  readonly pools = new Map<string, PoolEntry>()
  status: HoodIngesterStatus

  constructor(readonly options: ResolvedHoodIngesterOptions) {
    this.reorg = ReorgWindow.initial(options.reorgWindowBlocks)
    this.status = {
      source: options.source,
      mode: "starting",
      cursorBlock: null,
      headBlock: null,
      windowBlocks: 0,
      published: 0,
      reorgs: 0,
      deepestReorgBlocks: 0,
      retractedEvents: 0,
      skippedLogs: 0,
      failures: 0,
      lastError: null
    }
  }

  rememberCurve(address: string, isCurve: boolean): void {
    const key = address.toLowerCase()
    if (this.knownCurves.has(key)) this.knownCurves.delete(key)
    this.knownCurves.set(key, isCurve)
    while (this.knownCurves.size > this.options.knownCurvesMax) {
      const oldest = this.knownCurves.keys().next().value
      if (oldest === undefined) break
      this.knownCurves.delete(oldest)
    }
  }

  /** An event at a retracted (id, position) takes a suffixed id (ReorgWindow.reincludedId). */
  renamedIfRetracted(event: ChainEvent, blockHash: string): ChainEvent {
    return ReorgWindow.wasRetracted(this.reorg, event.id, event.position)
      ? ReorgWindow.withId(event, ReorgWindow.reincludedId(event.id, blockHash))
      : event
  }

  set(patch: Partial<HoodIngesterStatus>): void {
    this.status = { ...this.status, ...patch }
  }
}

export const runHoodIngester = (options: ResolvedHoodIngesterOptions, f: Follower) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const pc: PublicClient = createPublicClient({
      // node:http, not fetch: its polling's garbage dies young (src/chain/internal/JsonRpcHttp.ts).
      transport: http(options.rpcUrl, { retryCount: 0, timeout: options.rpcTimeoutMs, fetchFn: nodeFetchForJsonRpc }),
      cacheTime: 0
    })
    const rpc = <A>(what: string, run: () => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: (e) => new HoodIngestError({ reason: "Rpc", message: `${what}: ${message(e)}` }) })

    const header = (blockNumber: bigint): Effect.Effect<ReorgWindow.BlockHeader | null, HoodIngestError> =>
      rpc(`eth_getBlockByNumber ${blockNumber}`, () =>
        pc.request({ method: "eth_getBlockByNumber", params: [numberToHex(blockNumber), false] })
      ).pipe(
        Effect.map((b) =>
          b === null || b.hash === null || b.number === null
            ? null
            : { number: hexToBigInt(b.number), hash: b.hash, parentHash: b.parentHash, timestampMs: Number(hexToBigInt(b.timestamp)) * 1000 }
        )
      )

    const getLogs = (
      fromBlock: bigint,
      toBlock: bigint,
      filter: { readonly topics: ReadonlyArray<Hex>; readonly address?: ReadonlyArray<string> }
    ): Effect.Effect<ReadonlyArray<RawLog>, HoodIngestError> =>
      rpc(`eth_getLogs ${fromBlock}..${toBlock}`, () =>
        pc.request({
          method: "eth_getLogs",
          params: [
            {
              fromBlock: numberToHex(fromBlock),
              toBlock: numberToHex(toBlock),
              topics: [filter.topics as Array<Hex>],
              ...(filter.address !== undefined ? { address: filter.address } : {})
            }
          ]
        } as never) as Promise<ReadonlyArray<RpcLog>>
      ).pipe(
        Effect.flatMap((logs) => {
          const out: Array<RawLog> = []
          for (const l of logs) {
            if (l.blockNumber === null || l.blockHash === null || l.logIndex === null || l.transactionHash === null) {
              return Effect.fail(new HoodIngestError({ reason: "Inconsistent", message: "eth_getLogs returned a pending log" }))
            }
            out.push({
              address: getAddress(l.address),
              topics: l.topics,
              data: l.data,
              blockNumber: hexToBigInt(l.blockNumber),
              blockHash: l.blockHash,
              logIndex: hexToNumber(l.logIndex),
              transactionHash: l.transactionHash,
              removed: l.removed === true
            })
          }
          return Effect.succeed(out)
        })
      )

    const topics = options.contracts.tradeRouter === undefined ? hoodTopics : [...hoodTopics, routedTradeSelector]
    const logsIn = (fromBlock: bigint, toBlock: bigint) => getLogs(fromBlock, toBlock, { topics })
    const routedOf = (logs: ReadonlyArray<RawLog>): RoutedTraders => routedTradersOf(logs, options.contracts.tradeRouter)

    /** The known pools' `Swap` logs in the range, in chain order. */
    const swapLogsIn = (fromBlock: bigint, toBlock: bigint): Effect.Effect<ReadonlyArray<RawLog>, HoodIngestError> => {
      const pools = [...f.pools.values()].map((p) => p.pool)
      if (pools.length === 0) return Effect.succeed([])
      const chunks: Array<ReadonlyArray<string>> = []
      for (let i = 0; i < pools.length; i += options.poolsPerLogsCall) chunks.push(pools.slice(i, i + options.poolsPerLogsCall))
      return Effect.map(
        Effect.forEach(chunks, (address) => getLogs(fromBlock, toBlock, { topics: [PoolSwap.decoder.selector], address }), { concurrency: 4 }),
        (parts) => parts.flat().sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1))
      )
    }

    /**
     * The pools the range's `CurveMigrated` events seeded (every one, known or not, so a step
     * retried after a failure still writes them): token0 and the fee tier read at the log's block.
     */
    const learnPools = (events: ReadonlyArray<ChainEvent>): Effect.Effect<ReadonlyArray<PoolEntry>, HoodIngestError> =>
      Effect.forEach(
        events.flatMap((e) => (e._tag === "CurveMigrated" && e.dexPool !== undefined ? [e] : [])),
        (e) =>
          Effect.gen(function* () {
            const pool = getAddress(e.dexPool!)
            const block = BigInt(e.position.slice(2, 2 + 20))
            const known = f.pools.get(pool.toLowerCase())
            if (known !== undefined && known.fromPosition === e.position) return known
            const [token0, fee] = yield* Effect.all(
              [
                rpc(`token0 ${pool}`, () => pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "token0", blockNumber: block })),
                rpc(`fee ${pool}`, () => pc.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "fee", blockNumber: block }))
              ],
              { concurrency: 2 }
            )
            const entry: PoolEntry = {
              pool,
              mint: e.mint,
              tokenIsToken0: (token0 as string).toLowerCase() === e.mint,
              feePips: Number(fee),
              fromPosition: e.position,
              block
            }
            f.pools.set(pool.toLowerCase(), entry)
            return entry
          }),
        { concurrency: 4 }
      )

    /** Swap logs → pool trades of known pools, at or after each pool's migration. */
    const swapEventsOf = (logs: ReadonlyArray<RawLog>, timeOf: (block: bigint) => number, routed: RoutedTraders): ReadonlyArray<ChainEvent> => {
      const events: Array<ChainEvent> = []
      let skipped = 0
      for (const log of logs) {
        const entry = log.removed ? undefined : f.pools.get(log.address.toLowerCase())
        const decoded =
          entry === undefined
            ? Option.none()
            : PoolSwap.decode(
                log,
                { txHash: log.transactionHash, blockNumber: log.blockNumber, logIndex: log.logIndex, timestampMs: timeOf(log.blockNumber) },
                entry
              )
        if (Option.isNone(decoded) || decoded.value.position < entry!.fromPosition) {
          skipped++
          continue
        }
        events.push(attributed(f.renamedIfRetracted(decoded.value, log.blockHash), options.contracts.tradeRouter, routed))
      }
      if (skipped > 0) f.set({ skippedLogs: f.status.skippedLogs + skipped })
      return events
    }

    /**
     * A range's events in chain order: ours, then the pools they seeded are learned, then every
     * known pool's swaps in the same range are merged in. `check` sees every log (block hashes).
     */
    const rangeEvents = (from: bigint, to: bigint, timeOf: (block: bigint) => number, logs: ReadonlyArray<RawLog>) =>
      Effect.gen(function* () {
        const routed = routedOf(logs)
        const ours = yield* eventsOf(logs, timeOf, routed)
        const pools = yield* learnPools(ours)
        const swapLogs = yield* swapLogsIn(from, to)
        const swaps = swapEventsOf(swapLogs, timeOf, routed)
        const events = swaps.length === 0 ? ours : [...ours, ...swaps].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0))
        return { events, pools, swapLogs }
      })

    const isOurCurve = (address: Address): Effect.Effect<boolean, HoodIngestError> => {
      const known = f.knownCurves.get(address.toLowerCase())
      if (known !== undefined) return Effect.succeed(known)
      return rpc(`isCurve ${address}`, () =>
        pc.readContract({ address: options.contracts.factory, abi: curveFactoryAbi, functionName: "isCurve", args: [address] })
      ).pipe(Effect.tap((yes) => Effect.sync(() => f.rememberCurve(address, yes))))
    }

    /** Spec 2.9: the recovery block is read at ONE block; the log's block is that block. */
    const enrichRecovery = (e: RecoverySnapshot): Effect.Effect<RecoverySnapshot, HoodIngestError> =>
      Effect.gen(function* () {
        const curve = e.curve as Address
        const [state, quoteToken] = yield* Effect.all(
          [
            rpc(`curveState ${curve}@${e.snapshotBlock}`, () =>
              pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "curveState", blockNumber: e.snapshotBlock })
            ),
            rpc(`quoteToken ${curve}@${e.snapshotBlock}`, () =>
              pc.readContract({ address: curve, abi: bondingCurveAbi, functionName: "quoteToken", blockNumber: e.snapshotBlock })
            )
          ],
          { concurrency: 2 }
        )
        const [, , , , reserveSnapshotRaw, eligibleSupplyRaw, surrenderedRaw] = state as unknown as ReadonlyArray<bigint>
        return new RecoverySnapshot({
          ...e,
          quoteToken: getAddress(quoteToken as Address),
          reserveSnapshotRaw: reserveSnapshotRaw!,
          eligibleSupplyRaw: eligibleSupplyRaw!,
          surrenderedRaw: surrenderedRaw!
        })
      })

    /** Logs (in chain order) → events, emitters checked, recovery read; timestamps from `timeOf`. */
    const eventsOf = (logs: ReadonlyArray<RawLog>, timeOf: (block: bigint) => number, routed: RoutedTraders) =>
      Effect.gen(function* () {
        const events: Array<ChainEvent> = []
        let skipped = 0
        for (const log of logs) {
          // The router's own log only names a routed trade's wallet (`routed`); it is no event.
          if (log.removed || log.topics[0] === routedTradeSelector) continue
          const decoded = decodeHoodLog(
            log,
            { txHash: log.transactionHash, blockNumber: log.blockNumber, logIndex: log.logIndex, timestampMs: timeOf(log.blockNumber) },
            options.contracts
          )
          if (Option.isNone(decoded)) {
            skipped++
            continue
          }
          const { curve } = decoded.value
          const event = f.renamedIfRetracted(decoded.value.event, log.blockHash)
          if (event._tag === "CurveCreated") f.rememberCurve(event.curve, true)
          if (curve !== null && !(yield* isOurCurve(curve))) {
            skipped++
            continue
          }
          events.push(event._tag === "RecoverySnapshot" ? yield* enrichRecovery(event) : attributed(event, options.contracts.tradeRouter, routed))
        }
        if (skipped > 0) f.set({ skippedLogs: f.status.skippedLogs + skipped })
        return events
      })

    const publish = (events: ReadonlyArray<ChainEvent>, encoded: ReadonlyArray<Uint8Array>) =>
      Effect.gen(function* () {
        for (let i = 0; i < events.length; i += options.publishBatch) {
          const messages = events.slice(i, i + options.publishBatch).map((e, j) => ({ key: busKey(e), value: encoded[i + j]! }))
          yield* bus.publish(Topics.chainEvents, messages).pipe(
            Effect.mapError((e) => new HoodIngestError({ reason: "Publish", message: e.message }))
          )
        }
        f.set({ published: f.status.published + events.length })
      })

    const commit = (step: Parameters<typeof commitStep>[1]) =>
      commitStep(options.source, step).pipe(Effect.mapError((e) => new HoodIngestError({ reason: "Cursor", message: message(e) })))

    /**
     * Reads blocks [from, to] as a linked branch on top of `parent` (null: unchecked). Returns
     * unlinked when the chain moved under the read (a link or a log's block hash does not match):
     * the caller retries at the next poll.
     */
    const readBranch = (from: bigint, to: bigint, parent: string | null) =>
      Effect.gen(function* () {
        const numbers: Array<bigint> = []
        for (let n = from; n <= to; n++) numbers.push(n)
        const headers = yield* Effect.forEach(numbers, (n) => header(n), { concurrency: 8 })
        let prev = parent
        for (const h of headers) {
          if (h === null || (prev !== null && h.parentHash !== prev)) return { linked: false as const, firstMismatch: h === null || prev === parent }
          prev = h.hash
        }
        const hs = headers as ReadonlyArray<ReorgWindow.BlockHeader>
        const logs = yield* logsIn(from, to)
        const byNumber = new Map(hs.map((h) => [h.number, h]))
        for (const l of logs) if (byNumber.get(l.blockNumber)?.hash !== l.blockHash) return { linked: false as const, firstMismatch: false }
        const { events, pools, swapLogs } = yield* rangeEvents(from, to, (n) => byNumber.get(n)?.timestampMs ?? 0, logs)
        for (const l of swapLogs) if (byNumber.get(l.blockNumber)?.hash !== l.blockHash) return { linked: false as const, firstMismatch: false }
        return { linked: true as const, headers: hs, events, encoded: events.map(encodeChainEvent), pools }
      })

    /**
     * Feeds one input to the reorg window and carries out its outputs in order: the canonical
     * hash at a height and the new branch above an ancestor are read and fed back in; events are
     * published, then the window and cursor committed (with the pools the reads learned). The
     * follower adopts the window's new state only once all of it succeeded: a failure leaves it as
     * it was, and the step is retried from there. Returns false when the input found a reorg.
     */
    const drive = (input: ReorgWindow.ReorgInput, head: bigint, target: bigint, pools: ReadonlyArray<PoolEntry>) =>
      Effect.gen(function* () {
        let state = f.reorg
        let learned = pools
        let consistent = true
        const inputs: Array<ReorgWindow.ReorgInput> = [input]
        for (let next = inputs.shift(); next !== undefined; next = inputs.shift()) {
          const [stepped, outputs] = ReorgWindow.step(state, next)
          state = stepped
          for (const out of outputs) {
            switch (out._tag) {
              case "Consistent":
                break
              case "Check": {
                consistent = false
                const canonical = out.number <= head ? yield* header(out.number) : null
                inputs.push({ _tag: "Canonical", number: out.number, hash: canonical?.hash ?? null })
                break
              }
              case "DeepReorg":
                yield* Effect.logError("hood reorg deeper than the block window: events below it cannot be retracted").pipe(
                  Effect.annotateLogs({ source: options.source, oldestWindowBlock: String(out.oldestWindowBlock), windowBlocks: options.reorgWindowBlocks })
                )
                break
              case "AncestorFound": {
                consistent = false
                // Pools seeded in the orphaned blocks are forgotten; the new branch teaches them again.
                for (const [key, p] of f.pools) if (p.block > out.ancestor) f.pools.delete(key)
                // The new branch as far as it goes now (bounded), to keep what it carries identically.
                const upTo = [target, out.oldTip, out.ancestor + BigInt(options.maxBlocksPerStep)].reduce((a, b) => (a < b ? a : b))
                const branch = upTo > out.ancestor ? yield* readBranch(out.ancestor + 1n, upTo, out.parentHash) : ({ linked: false } as const)
                learned = branch.linked ? branch.pools : []
                inputs.push(branch.linked ? { _tag: "Branch", headers: branch.headers, events: branch.events, encoded: branch.encoded } : { _tag: "Branch", headers: [], events: [], encoded: [] })
                break
              }
              case "Publish":
                yield* publish(out.events, out.encoded)
                break
              case "Commit":
                yield* commit({ keepUpTo: out.keepUpTo, added: out.added, pruneBelow: out.pruneBelow, cursor: out.cursor, pools: learned })
                break
              case "Reorged":
                f.set({
                  reorgs: f.status.reorgs + 1,
                  deepestReorgBlocks: Math.max(f.status.deepestReorgBlocks, out.orphanedBlocks),
                  retractedEvents: f.status.retractedEvents + out.retracted
                })
                yield* Effect.logInfo("hood reorg").pipe(
                  Effect.annotateLogs({ ancestor: String(out.ancestor), removedBlocks: out.orphanedBlocks, retracted: out.retracted, keptIdentical: out.keptIdentical })
                )
                break
            }
          }
        }
        f.reorg = state
        f.set({ cursorBlock: state.cursor, windowBlocks: state.window.length })
        return consistent
      })

    /** Is the window's tip still canonical? If not, the reorg is walked back and resolved. */
    const checkTip = (tip: WindowBlock, head: bigint, target: bigint, newest?: { readonly number: bigint; readonly hash: string }) =>
      Effect.gen(function* () {
        // The tip at the head is checked against the newest block already read (no second read,
        // which could find another block at that height than the one the step keeps as idle head).
        const hash = newest !== undefined && newest.number === tip.number ? newest.hash : tip.number <= head ? ((yield* header(tip.number))?.hash ?? null) : null
        return yield* drive({ _tag: "Canonical", number: tip.number, hash }, head, target, [])
      })

    /** Backfill one range of final blocks (no window: they are beyond any reorg we undo). */
    const backfill = (from: bigint, to: bigint, head: bigint, target: bigint) =>
      Effect.gen(function* () {
        f.set({ mode: "backfill" })
        const logs = yield* logsIn(from, to)
        // Timestamps of every block with a log of ours or a known pool's swap (read lazily, once).
        const times = new Map<bigint, number>()
        const timesOf = (ls: ReadonlyArray<RawLog>) =>
          Effect.gen(function* () {
            const blocks = [...new Set(ls.map((l) => l.blockNumber))].filter((n) => !times.has(n))
            const headers = yield* Effect.forEach(blocks, (n) => header(n), { concurrency: 8 })
            headers.forEach((h, i) => {
              if (h !== null) times.set(blocks[i]!, h.timestampMs)
            })
            if (headers.some((h) => h === null)) return yield* new HoodIngestError({ reason: "Inconsistent", message: `a block of ${from}..${to} vanished` })
          })
        yield* timesOf(logs)
        const routed = routedOf(logs)
        const ours = yield* eventsOf(logs, (n) => times.get(n) ?? 0, routed)
        const pools = yield* learnPools(ours)
        const swapLogs = yield* swapLogsIn(from, to)
        yield* timesOf(swapLogs)
        const swaps = swapEventsOf(swapLogs, (n) => times.get(n) ?? 0, routed)
        const events = swaps.length === 0 ? ours : [...ours, ...swaps].sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0))
        yield* drive({ _tag: "Backfilled", to, events, encoded: events.map(encodeChainEvent) }, head, target, pools)
      })

    /** The chain's newest block (its number and hash). */
    const latest = rpc("eth_getBlockByNumber latest", () => pc.request({ method: "eth_getBlockByNumber", params: ["latest", false] })).pipe(
      Effect.flatMap((b) =>
        b === null || b.hash === null || b.number === null
          ? Effect.fail(new HoodIngestError({ reason: "Inconsistent", message: "the latest block has no number or hash" }))
          : Effect.succeed({ number: hexToBigInt(b.number), hash: b.hash })
      )
    )

    /**
     * The head a step found nothing to do at (its tip checked canonical, no block due). While the
     * chain's newest block is still that one, by number and hash, nothing below it changed either
     * (a block's hash commits to its ancestors), so a poll that finds it is done after one read.
     * Only a head the step verified itself is kept: the window's tip when it is the newest block
     * (0 confirmations, compared with that very read), or any head when there is no window to
     * undo. Below a confirmation depth the head is not what the tip check read, so every poll
     * checks the tip again (docs/decisions.md "The engine at rest").
     */
    let idleHead: { readonly number: bigint; readonly hash: string } | undefined

    /** One step; true when there may be more to do at once (no sleep). */
    const stepOnce = Effect.gen(function* () {
      const newest = yield* latest
      const head = newest.number
      f.set({ headBlock: head })
      if (idleHead !== undefined && idleHead.number === head && idleHead.hash === newest.hash) return false
      idleHead = undefined
      const target = head - BigInt(options.confirmations)
      const { cursor, window } = f.reorg
      const next = cursor === null ? options.fromBlock : cursor + 1n
      const tip = window[window.length - 1]
      // A tip that vanished or changed at its height is a reorg even when no new block is due.
      if (tip !== undefined && (tip.number > head || next > target)) {
        if (!(yield* checkTip(tip, head, target, newest))) return true
      }
      if (next > target) {
        if (tip === undefined || tip.number === head) idleHead = newest
        return false
      }
      const finalBoundary = target - BigInt(options.reorgWindowBlocks)
      if (window.length === 0 && next <= finalBoundary) {
        const to = next + BigInt(options.backfillBlocks) - 1n
        yield* backfill(next, to < finalBoundary ? to : finalBoundary, head, target)
        return true
      }
      f.set({ mode: "follow" })
      const to = next + BigInt(options.maxBlocksPerStep) - 1n
      const upTo = to < target ? to : target
      const branch = yield* readBranch(next, upTo, tip?.hash ?? null)
      if (!branch.linked) {
        if (tip !== undefined && branch.firstMismatch) yield* checkTip(tip, head, target)
        return true
      }
      yield* drive({ _tag: "Followed", headers: branch.headers, events: branch.events, encoded: branch.encoded }, head, target, branch.pools)
      return upTo < target
    })

    let failures = 0
    for (;;) {
      const result = yield* Effect.either(stepOnce)
      if (result._tag === "Right") {
        failures = 0
        if (!result.right) yield* Effect.sleep(Duration.millis(options.pollIntervalMs))
        continue
      }
      failures++
      const delayMs = Math.min(options.backoffMaxMs, options.backoffInitialMs * 2 ** Math.min(20, failures - 1))
      f.set({ failures: f.status.failures + 1, lastError: `${result.left.reason}: ${result.left.message}` })
      yield* Effect.logWarning("hood ingest step failed; retrying").pipe(
        Effect.annotateLogs({ source: options.source, reason: result.left.reason, error: result.left.message, delayMs })
      )
      yield* Effect.sleep(Duration.millis(delayMs))
    }
  })

export interface HoodIngesterShape {
  readonly status: Effect.Effect<HoodIngesterStatus>
}

export class HoodIngester extends Context.Tag("curvestream/HoodIngester")<HoodIngester, HoodIngesterShape>() {
  /** Runs the ingester for as long as the layer's scope is open. Needs the bus and a migrated PostgreSQL. */
  static readonly layer = (options: HoodIngesterOptions): Layer.Layer<HoodIngester, never, Bus | SqlClient.SqlClient> =>
    Layer.scoped(HoodIngester, make(options))
}

export const make = (options: HoodIngesterOptions) =>
  Effect.gen(function* () {
    const resolved = resolveOptions(options)
    const follower = new Follower(resolved)
    const start = Effect.gen(function* () {
      const { cursor, window, pools } = yield* loadState(resolved.source)
      follower.reorg = ReorgWindow.initial(resolved.reorgWindowBlocks, { cursor, window })
      for (const p of pools) follower.pools.set(p.pool.toLowerCase(), p)
      follower.set({ cursorBlock: cursor, windowBlocks: follower.reorg.window.length })
    }).pipe(
      Effect.tapError((e) => Effect.logWarning("hood ingester could not load its cursor; retrying", message(e))),
      Effect.retry({ schedule: Schedule.spaced(Duration.millis(resolved.backoffMaxMs)) })
    )
    yield* Effect.forkScoped(Effect.zipRight(start, runHoodIngester(resolved, follower)))
    return { status: Effect.sync(() => follower.status) } satisfies HoodIngesterShape
  }).pipe(Effect.withSpan("HoodIngester.make"))

export const layer = HoodIngester.layer

/** For tests: decodes a bus value back (the publish path's encoding). */
export const wireText = (bytes: Uint8Array): string => utf8.decode(bytes)
