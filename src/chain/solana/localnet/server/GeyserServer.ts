/**
 * The localnet's Yellowstone Geyser gRPC server (`geyser.Geyser` on `@grpc/grpc-js`, messages
 * encoded with `@triton-one/yellowstone-grpc`'s own codecs), fed by the ledger's update stream.
 *
 * What a subscriber sees (as from a Yellowstone server):
 * - `Subscribe` is bidirectional. Nothing but pings flows until the first request; every later
 *   request replaces the stream's filters and commitment. A request that carries `ping` is
 *   answered with a `pong` (same id) and changes nothing else.
 * - Commitment (`internal/commitmentGate.ts`): at `processed` updates flow as the ledger commits
 *   them; at `confirmed` / `finalized` a slot's updates are released, in commit order, once the
 *   slot reaches that commitment, followed by its block meta; slot statuses always follow the
 *   content they confirm.
 * - `from_slot`: the request first replays the ledger's retained updates about slot ≥ from_slot
 *   (`Ledger.updatesSince`) through the same commitment rules, then continues live with nothing
 *   missed or repeated. A slot older than the retained window ends the stream with OUT_OF_RANGE
 *   "broadcast from N is not available, last available: M" (Yellowstone's words);
 *   `SubscribeReplayInfo` reports the oldest replayable slot.
 * - The server sends `ping` updates every `pingIntervalMs` (10 s, as Yellowstone).
 * - Unary: `Ping`, `GetLatestBlockhash`, `GetBlockHeight`, `GetSlot`, `IsBlockhashValid`,
 *   `GetVersion`, `SubscribeReplayInfo` (commitment defaults to processed, as Yellowstone).
 *
 * Bounds: at most `maxStreams` streams. Each stream writes at most `maxInflightUpdates` /
 * `maxInflightBytes` ahead of the transport's acknowledgements; what cannot be written yet waits
 * in its queue, and a queue past `maxQueuedUpdates` / `maxQueuedBytes` (a client that does not
 * read) ends the stream with RESOURCE_EXHAUSTED "lagged to send an update …" instead of growing.
 * Replay is produced lazily, only as fast as the client reads, so it never counts against the
 * queue. Filters are bounded by `maxFilterNames` and `maxFilterValues`.
 */
import * as grpc from "@grpc/grpc-js"
import {
  CommitmentLevel,
  type GetBlockHeightRequest,
  type GetBlockHeightResponse,
  type GetLatestBlockhashRequest,
  type GetLatestBlockhashResponse,
  type GetSlotRequest,
  type GetSlotResponse,
  type GetVersionResponse,
  type IsBlockhashValidRequest,
  type IsBlockhashValidResponse,
  type PingRequest,
  type PongResponse,
  SlotStatus,
  type SubscribeReplayInfoResponse,
  type SubscribeRequest,
  SubscribeUpdate
} from "@triton-one/yellowstone-grpc"
import { getBase58Encoder } from "@solana/kit"
import type { Commitment, Ledger, LedgerUpdate } from "../Ledger.js"
import { CommitmentGate, type GateOutput } from "./internal/commitmentGate.js"
import {
  accountFilterNames,
  type CompiledFilter,
  compileFilter,
  FilterError,
  slotFilterNames,
  transactionFilterNames
} from "./internal/geyserFilter.js"
import { accountInfoOf, blockMetaOf, geyserServiceDefinition, transactionInfoOf } from "./internal/geyserWire.js"
import { encodeTransactionErrorBincode } from "./internal/transactionErrorBincode.js"

export interface GeyserServerOptions {
  readonly host: string
  /** 0 = a free port. */
  readonly port: number
  readonly pingIntervalMs: number
  readonly maxStreams: number
  readonly maxInflightUpdates: number
  readonly maxInflightBytes: number
  readonly maxQueuedUpdates: number
  readonly maxQueuedBytes: number
  readonly maxFilterNames: number
  readonly maxFilterValues: number
  readonly maxDataSlices: number
  /** How long `close()` lets streams deliver their final status before cutting connections. */
  readonly closeGraceMs: number
  /** Stamps `createdAt` on updates. */
  readonly nowMs: () => number
}

export const defaultGeyserServerOptions: GeyserServerOptions = {
  host: "127.0.0.1",
  port: 0,
  pingIntervalMs: 10_000,
  maxStreams: 256,
  maxInflightUpdates: 1_024,
  maxInflightBytes: 4 * 1024 * 1024,
  maxQueuedUpdates: 10_000,
  maxQueuedBytes: 16 * 1024 * 1024,
  maxFilterNames: 64,
  maxFilterValues: 10_000,
  maxDataSlices: 16,
  closeGraceMs: 1_000,
  nowMs: () => Date.now()
}

export interface GeyserStats {
  readonly streams: number
  /** Streams ended because their client did not keep up. */
  readonly laggedStreams: number
  readonly updatesSent: number
}

export interface GeyserServer {
  /** `http://host:port`, what the Yellowstone client takes. */
  readonly url: string
  readonly port: number
  readonly stats: () => GeyserStats
  /** Ends every Subscribe stream with UNAVAILABLE (a dropped stream, as clients must survive); returns how many. */
  readonly dropStreams: (details?: string) => number
  /** Graceful: streams end with UNAVAILABLE, then the listener and connections close. */
  readonly close: () => Promise<void>
  /** Abrupt: connections are reset at once (a crashed server). */
  readonly kill: () => void
}

const COMMITMENT_OF: Readonly<Record<number, Commitment>> = {
  [CommitmentLevel.PROCESSED]: "processed",
  [CommitmentLevel.CONFIRMED]: "confirmed",
  [CommitmentLevel.FINALIZED]: "finalized"
}

const SLOT_STATUS: Readonly<Record<Commitment, SlotStatus>> = {
  processed: SlotStatus.SLOT_PROCESSED,
  confirmed: SlotStatus.SLOT_CONFIRMED,
  finalized: SlotStatus.SLOT_FINALIZED
}

const LEVELS: ReadonlyArray<Commitment> = ["processed", "confirmed", "finalized"]

const base58 = getBase58Encoder()

const statusError = (code: grpc.status, details: string): Partial<grpc.StatusObject> => ({ code, details, metadata: new grpc.Metadata() })

const toBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength)

interface Queued {
  readonly bytes: Buffer
}

interface Replay {
  readonly updates: ReadonlyArray<LedgerUpdate>
  at: number
  readonly gate: CommitmentGate
  readonly out: Buffer[]
}

interface ServerContext {
  readonly ledger: Ledger
  readonly o: GeyserServerOptions
  readonly groups: ReadonlyMap<Commitment, Set<SubscriberStream>>
  readonly streams: Set<SubscriberStream>
  counters: { lagged: number; sent: number }
}

class SubscriberStream {
  filter: CompiledFilter | null = null
  private ended = false
  private readonly queue: Queued[] = []
  private queueHead = 0
  private queuedBytes = 0
  private inflight = 0
  private inflightBytes = 0
  private replay: Replay | null = null
  private readonly send: (bytes: Buffer, done: () => void) => void

  constructor(
    private readonly ctx: ServerContext,
    private readonly call: grpc.ServerDuplexStream<SubscribeRequest, Buffer>
  ) {
    this.send = directSender(call)
  }

  get isEnded(): boolean {
    return this.ended
  }

  onRequest(request: SubscribeRequest): void {
    if (this.ended) return
    if (request.ping !== undefined) {
      this.enqueue({ filters: [], pong: { id: request.ping.id }, createdAt: this.now() })
      return
    }
    let filter: CompiledFilter
    try {
      filter = compileFilter(request, this.ctx.o)
    } catch (e) {
      if (!(e instanceof FilterError)) throw e
      return this.end(grpc.status.INVALID_ARGUMENT, `failed to create filter: ${e.message}`)
    }
    if (this.filter !== null) this.ctx.groups.get(this.filter.commitment)!.delete(this)
    this.filter = filter
    this.ctx.groups.get(filter.commitment)!.add(this)
    if (request.fromSlot === undefined) return
    const fromSlot = BigInt(request.fromSlot)
    const r = this.ctx.ledger.updatesSince(fromSlot)
    if (r._tag === "SlotNotRetained") {
      return this.end(grpc.status.OUT_OF_RANGE, `broadcast from ${fromSlot} is not available, last available: ${r.oldestRetainedSlot}`)
    }
    // Replay goes out before anything live that arrives from now on (live waits in the queue).
    this.replay = { updates: r.updates, at: 0, gate: new CommitmentGate(filter.commitment), out: [] }
    this.pump()
  }

  deliverLive(o: GateOutput): void {
    if (this.ended || this.filter === null) return
    this.encodeOutput(o, (b) => this.enqueueBytes(b))
  }

  ping(): void {
    this.enqueue({ filters: [], ping: {}, createdAt: this.now() })
  }

  end(code: grpc.status, details: string): void {
    if (this.ended) return
    this.detach()
    this.call.emit("error", statusError(code, details))
  }

  /** Forgets the stream (the transport is gone or it has been ended). */
  detach(): void {
    this.ended = true
    this.replay = null
    this.queue.length = 0
    this.queueHead = 0
    this.queuedBytes = 0
    if (this.filter !== null) this.ctx.groups.get(this.filter.commitment)!.delete(this)
    this.ctx.streams.delete(this)
  }

  private now(): Date {
    return new Date(this.ctx.o.nowMs())
  }

  private enqueue(update: SubscribeUpdate): void {
    this.enqueueBytes(toBuffer(SubscribeUpdate.encode(update).finish()))
  }

  private enqueueBytes(bytes: Buffer): void {
    if (this.ended) return
    const o = this.ctx.o
    if (this.queue.length - this.queueHead + 1 > o.maxQueuedUpdates || this.queuedBytes + bytes.length > o.maxQueuedBytes) {
      this.ctx.counters.lagged++
      const waiting = this.queue.length - this.queueHead
      return this.end(
        grpc.status.RESOURCE_EXHAUSTED,
        `lagged to send an update: ${waiting} updates (${this.queuedBytes} bytes) waiting, bound ${o.maxQueuedUpdates} updates / ${o.maxQueuedBytes} bytes`
      )
    }
    this.queue.push({ bytes })
    this.queuedBytes += bytes.length
    this.pump()
  }

  private windowOpen(): boolean {
    return this.inflight < this.ctx.o.maxInflightUpdates && this.inflightBytes < this.ctx.o.maxInflightBytes
  }

  /** Writes while the in-flight window has room: replay first, then the queue. */
  private pump(): void {
    while (!this.ended && this.windowOpen()) {
      const next = this.nextReplayed() ?? this.dequeue()
      if (next === undefined) return
      this.write(next)
    }
  }

  private nextReplayed(): Buffer | undefined {
    const r = this.replay
    if (r === null || this.filter === null) return undefined
    while (r.out.length === 0 && r.at < r.updates.length) {
      r.gate.push(r.updates[r.at++]!, (o) => this.encodeOutput(o, (b) => r.out.push(b)))
    }
    const next = r.out.shift()
    if (next === undefined) this.replay = null
    return next
  }

  private dequeue(): Buffer | undefined {
    if (this.queueHead >= this.queue.length) return undefined
    const q = this.queue[this.queueHead++]!
    this.queuedBytes -= q.bytes.length
    if (this.queueHead > 1_024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead)
      this.queueHead = 0
    }
    return q.bytes
  }

  private write(bytes: Buffer): void {
    this.inflight++
    this.inflightBytes += bytes.length
    this.ctx.counters.sent++
    this.send(bytes, () => {
      this.inflight--
      this.inflightBytes -= bytes.length
      this.pump()
    })
  }

  private encodeOutput(o: GateOutput, emit: (b: Buffer) => void): void {
    const f = this.filter
    if (f === null) return
    const push = (u: SubscribeUpdate) => emit(toBuffer(SubscribeUpdate.encode(u).finish()))
    switch (o.kind) {
      case "account": {
        const names = accountFilterNames(f, o.update)
        if (names.length > 0) {
          push({
            filters: names,
            account: { account: accountInfoOf(o.update, f.dataSlices), slot: o.update.slot.toString(), isStartup: false },
            createdAt: this.now()
          })
        }
        return
      }
      case "transaction": {
        const u = o.update
        const names = transactionFilterNames(f.transactions, u)
        if (names.length > 0) {
          push({ filters: names, transaction: { transaction: transactionInfoOf(u), slot: u.slot.toString() }, createdAt: this.now() })
        }
        const statusNames = transactionFilterNames(f.transactionsStatus, u)
        if (statusNames.length > 0) {
          push({
            filters: statusNames,
            transactionStatus: {
              slot: u.slot.toString(),
              signature: new Uint8Array(base58.encode(u.signature)),
              isVote: false,
              index: String(u.index),
              err: u.err === null ? undefined : { err: encodeTransactionErrorBincode(u.err) }
            },
            createdAt: this.now()
          })
        }
        return
      }
      case "blockMeta": {
        if (f.blocksMeta.length === 0) return
        const block = this.ctx.ledger.getBlock(o.slot)
        if (block === undefined || block.blockhash === null) return
        push({ filters: [...f.blocksMeta], blockMeta: blockMetaOf(block), createdAt: this.now() })
        return
      }
      case "slot": {
        const names = slotFilterNames(f, o.update)
        if (names.length > 0) {
          push({
            filters: names,
            slot: {
              slot: o.update.slot.toString(),
              parent: o.update.parent === null ? undefined : o.update.parent.toString(),
              status: SLOT_STATUS[o.update.status],
              deadError: undefined
            },
            createdAt: this.now()
          })
        }
        return
      }
    }
  }
}

/**
 * How a message reaches the HTTP/2 stream. grpc-js's stream object is a Writable that hands the
 * transport one message at a time, waiting for each to be flushed, so every message leaves as
 * its own DATA frame. A burst of small frames trips the flood guard of h2 (≥ 0.4.16, the Rust
 * HTTP/2 stack inside the Yellowstone client): GOAWAY ENHANCE_YOUR_CALM "too_many_data_frames".
 * Passing messages straight to the call underneath lets the transport coalesce everything
 * queued in one turn into full frames, as tonic (Yellowstone's server) does. The inner call is
 * grpc-js's internal (`ServerDuplexStreamImpl.call`, stable since 1.10); when it is missing the
 * public `write` is used and the solana.geyser integration test ("a reading client is never
 * cut") fails, which is how an upgrade that moves it is caught.
 */
const directSender = (call: grpc.ServerDuplexStream<SubscribeRequest, Buffer>): ((bytes: Buffer, done: () => void) => void) => {
  const inner = (call as unknown as { readonly call?: { readonly sendMessage?: unknown } }).call
  const sendMessage = inner?.sendMessage
  if (typeof sendMessage === "function") {
    return (bytes, done) => (sendMessage as (m: Buffer, cb: () => void) => void).call(inner, bytes, done)
  }
  return (bytes, done) => {
    call.write(bytes, done)
  }
}

const commitmentOf = (c: CommitmentLevel | undefined): Commitment | undefined => (c === undefined ? "processed" : COMMITMENT_OF[c])

/** Starts the server on `host:port` and begins following the ledger. */
export const startGeyserServer = async (ledger: Ledger, options: Partial<GeyserServerOptions> = {}): Promise<GeyserServer> => {
  const o: GeyserServerOptions = { ...defaultGeyserServerOptions, ...options }
  const groups = new Map<Commitment, Set<SubscriberStream>>(LEVELS.map((l) => [l, new Set<SubscriberStream>()]))
  const gates = new Map<Commitment, CommitmentGate>(LEVELS.map((l) => [l, new CommitmentGate(l)]))
  const ctx: ServerContext = { ledger, o, groups, streams: new Set(), counters: { lagged: 0, sent: 0 } }

  const unaryCommitment = <Res>(c: CommitmentLevel | undefined, callback: grpc.sendUnaryData<Res>): Commitment | undefined => {
    const commitment = commitmentOf(c)
    if (commitment === undefined) callback(statusError(grpc.status.INVALID_ARGUMENT, `failed to create CommitmentLevel from ${c}`))
    return commitment
  }

  const server = new grpc.Server({
    "grpc.max_receive_message_length": 4 * 1024 * 1024,
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000
  })
  server.addService(geyserServiceDefinition, {
    Subscribe: (call: grpc.ServerDuplexStream<SubscribeRequest, Buffer>) => {
      const stream = new SubscriberStream(ctx, call)
      if (ctx.streams.size >= o.maxStreams) {
        stream.end(grpc.status.RESOURCE_EXHAUSTED, `too many streams: at most ${o.maxStreams}`)
        return
      }
      ctx.streams.add(stream)
      // Headers at once, as tonic does: a client's subscribe() resolves before the first update.
      call.sendMetadata(new grpc.Metadata())
      call.on("data", (request: SubscribeRequest) => stream.onRequest(request))
      call.on("cancelled", () => stream.detach())
      call.on("close", () => stream.detach())
      call.on("error", () => stream.detach())
    },
    SubscribeReplayInfo: (_call: grpc.ServerUnaryCall<unknown, SubscribeReplayInfoResponse>, callback: grpc.sendUnaryData<SubscribeReplayInfoResponse>) =>
      callback(null, { firstAvailable: ledger.oldestRetainedSlot.toString() }),
    Ping: (call: grpc.ServerUnaryCall<PingRequest, PongResponse>, callback: grpc.sendUnaryData<PongResponse>) =>
      callback(null, { count: call.request.count }),
    GetLatestBlockhash: (
      call: grpc.ServerUnaryCall<GetLatestBlockhashRequest, GetLatestBlockhashResponse>,
      callback: grpc.sendUnaryData<GetLatestBlockhashResponse>
    ) => {
      const c = unaryCommitment(call.request.commitment, callback)
      if (c === undefined) return
      const lb = ledger.latestBlockhash(c)
      callback(null, { slot: lb.slot.toString(), blockhash: lb.blockhash, lastValidBlockHeight: lb.lastValidBlockHeight.toString() })
    },
    GetBlockHeight: (call: grpc.ServerUnaryCall<GetBlockHeightRequest, GetBlockHeightResponse>, callback: grpc.sendUnaryData<GetBlockHeightResponse>) => {
      const c = unaryCommitment(call.request.commitment, callback)
      if (c !== undefined) callback(null, { blockHeight: ledger.blockHeightAt(c).toString() })
    },
    GetSlot: (call: grpc.ServerUnaryCall<GetSlotRequest, GetSlotResponse>, callback: grpc.sendUnaryData<GetSlotResponse>) => {
      const c = unaryCommitment(call.request.commitment, callback)
      if (c !== undefined) callback(null, { slot: ledger.slotAt(c).toString() })
    },
    IsBlockhashValid: (call: grpc.ServerUnaryCall<IsBlockhashValidRequest, IsBlockhashValidResponse>, callback: grpc.sendUnaryData<IsBlockhashValidResponse>) => {
      const c = unaryCommitment(call.request.commitment, callback)
      if (c !== undefined) callback(null, { slot: ledger.slotAt(c).toString(), valid: ledger.isBlockhashValid(call.request.blockhash) })
    },
    GetVersion: (_call: grpc.ServerUnaryCall<unknown, GetVersionResponse>, callback: grpc.sendUnaryData<GetVersionResponse>) =>
      callback(null, { version: JSON.stringify({ version: { package: "curvestream-localnet-geyser", proto: "yellowstone-grpc 7" } }) })
  })

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${o.host}:${o.port}`, grpc.ServerCredentials.createInsecure(), (e, p) => (e === null ? resolve(p) : reject(e)))
  )

  const onUpdate = (update: LedgerUpdate): void => {
    for (const level of LEVELS) {
      const group = groups.get(level)!
      gates.get(level)!.push(update, (out) => {
        for (const s of group) s.deliverLive(out)
      })
    }
  }
  // Slots committed before the server started but not yet finalized are held by the gates, so a
  // confirmed/finalized subscriber still receives them when they reach its commitment.
  const seedFrom = ledger.finalizedSlot + 1n > ledger.oldestRetainedSlot ? ledger.finalizedSlot + 1n : ledger.oldestRetainedSlot
  const seeded = ledger.updatesSince(seedFrom)
  if (seeded._tag === "Updates") for (const u of seeded.updates) onUpdate(u)
  const unsubscribe = ledger.subscribe(onUpdate)

  const pinger = setInterval(() => {
    for (const s of ctx.streams) s.ping()
  }, o.pingIntervalMs)
  pinger.unref()

  let stopped = false
  const stopFollowing = () => {
    if (stopped) return false
    stopped = true
    clearInterval(pinger)
    unsubscribe()
    return true
  }
  const dropStreams = (details = "stream dropped by the localnet") => {
    const all = [...ctx.streams]
    for (const s of all) s.end(grpc.status.UNAVAILABLE, details)
    return all.length
  }

  return {
    url: `http://${o.host}:${port}`,
    port,
    stats: () => ({ streams: ctx.streams.size, laggedStreams: ctx.counters.lagged, updatesSent: ctx.counters.sent }),
    dropStreams,
    close: () => {
      if (!stopFollowing()) return Promise.resolve()
      dropStreams("server is shutting down")
      return new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown()
          resolve()
        }, o.closeGraceMs)
        server.tryShutdown(() => {
          clearTimeout(force)
          resolve()
        })
      })
    },
    kill: () => {
      stopFollowing()
      for (const s of [...ctx.streams]) s.detach()
      server.forceShutdown()
    }
  }
}
