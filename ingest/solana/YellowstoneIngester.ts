/**
 * The Solana ingester: follows svc-curve over Yellowstone gRPC (the real
 * `@triton-one/yellowstone-grpc` client), turns each completed slot's transactions into
 * `ChainEvent`s and publishes them to `chain.events`, then records the slot as its cursor in
 * PostgreSQL (`ingest_cursors`).
 *
 * Subscription: transactions that include the program id (vote false, failed false) plus block
 * metas, at the configured commitment (default `confirmed`), `from_slot` = the last published
 * slot (that slot is replayed as overlap and dropped as a duplicate). A slot is published when
 * its block meta arrives, as one bus batch in position order (`SlotAssembler`); the block meta's
 * block time is every event's timestamp.
 *
 * Invariants:
 * - A slot's events are published before its slot becomes the cursor; the cursor is written
 *   only after the bus acknowledged them. Within one process run no slot is published twice
 *   (the assembler drops anything at or below the last published slot); across a crash at most
 *   the slots after the stored cursor are published again (actors and ClickHouse skip them).
 * - It never gives up: any failure (connect, stream error or end, silence past
 *   `idleTimeoutMs`, a publish or cursor write that fails, a buffer overflow) ends the session
 *   and it resubscribes from the last published slot after a capped exponential backoff with
 *   jitter from the seeded `Random`; a session that receives anything resets the backoff. The
 *   last `attemptsLogSize` attempts are kept for the status.
 * - Gap: when the server no longer holds `from_slot` (OUT_OF_RANGE "… last available: M"), the
 *   slots in between are lost to this ingester: it logs an error naming the range, records it
 *   in the status, and resumes from M, the oldest slot the server can replay. With no cursor at
 *   all it starts from slot 0, i.e. the oldest slot the server keeps, without an error.
 * - A cursor ahead of the server's newest slot means the chain was reset (a fresh localnet):
 *   it logs an error, forgets the cursor and starts from the oldest available slot.
 * Bounds: `maxBufferedTransactions` across incomplete slots (overflow resubscribes from the
 * cursor); the cursor is written at least every `cursorEverySlots` slots without events.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Address } from "@solana/kit"
import * as Yellowstone from "@triton-one/yellowstone-grpc"
import {
  type ChannelOptions,
  type ClientDuplexStream,
  CommitmentLevel,
  type SubscribeRequest,
  type SubscribeUpdate
} from "@triton-one/yellowstone-grpc"
import { Clock, Duration, Effect, Random, Schema } from "effect"
import { Bus, Topics } from "../bus/Bus.js"
import { busKey, type ChainEvent } from "../ChainEvent.js"
import { encodeChainEvent } from "../ChainEventCodec.js"
import { readCursor, writeCursor } from "./CursorStore.js"
import { decodeCurveTransaction } from "./decoders/index.js"
import { blockTimeMsOf, curveTransactionOf } from "./GeyserUpdates.js"
import { type AssembledSlot, SlotAssembler } from "./SlotAssembler.js"

type ClientClass = typeof Yellowstone.default.default
type Client = InstanceType<ClientClass>

/** The package's types are CJS-shaped; at run time its ESM default export is the class itself. */
export const YellowstoneClient: ClientClass = (() => {
  const d: unknown = Yellowstone.default
  return (typeof d === "function" ? d : (d as { default: unknown }).default) as ClientClass
})()

export type IngestCommitment = "processed" | "confirmed" | "finalized"

export interface BackoffOptions {
  readonly initialMs: number
  readonly maxMs: number
  readonly factor: number
  /** ± this fraction of the delay, drawn from the seeded Random. */
  readonly jitter: number
}

export interface YellowstoneIngesterOptions {
  /** `YELLOWSTONE_URL`, e.g. http://127.0.0.1:10000. */
  readonly grpcUrl: string
  readonly xToken?: string | undefined
  readonly programId: Address
  readonly commitment?: IngestCommitment
  /** The cursor's key in `ingest_cursors` (default `solana:yellowstone:<programId>`). */
  readonly source?: string
  /** Seeds the backoff jitter (default 1). */
  readonly seed?: number
  readonly backoff?: Partial<BackoffOptions>
  /** No message (the server pings every 10 s) for this long ends the session (default 35 s). */
  readonly idleTimeoutMs?: number
  readonly maxBufferedTransactions?: number
  readonly cursorEverySlots?: number
  readonly attemptsLogSize?: number
  readonly channelOptions?: ChannelOptions
}

export interface ResolvedIngesterOptions {
  readonly grpcUrl: string
  readonly xToken: string | undefined
  readonly programId: Address
  readonly commitment: IngestCommitment
  readonly source: string
  readonly seed: number
  readonly backoff: BackoffOptions
  readonly idleTimeoutMs: number
  readonly maxBufferedTransactions: number
  readonly cursorEverySlots: number
  readonly attemptsLogSize: number
  readonly channelOptions: ChannelOptions | undefined
}

export const defaultBackoff: BackoffOptions = { initialMs: 100, maxMs: 5_000, factor: 2, jitter: 0.2 }

export const resolveOptions = (o: YellowstoneIngesterOptions): ResolvedIngesterOptions => ({
  grpcUrl: o.grpcUrl,
  xToken: o.xToken,
  programId: o.programId,
  commitment: o.commitment ?? "confirmed",
  source: o.source ?? `solana:yellowstone:${o.programId}`,
  seed: o.seed ?? 1,
  backoff: { ...defaultBackoff, ...o.backoff },
  idleTimeoutMs: o.idleTimeoutMs ?? 35_000,
  maxBufferedTransactions: o.maxBufferedTransactions ?? 50_000,
  cursorEverySlots: o.cursorEverySlots ?? 32,
  attemptsLogSize: o.attemptsLogSize ?? 64,
  channelOptions: o.channelOptions
})

/**
 * Why a session ended. Every reason is retryable: the ingester resubscribes from its cursor.
 * `SlotNotAvailable` carries the oldest slot the server can replay; `FromSlotUnsupported` means
 * the server cannot replay at all.
 */
export const SolanaIngestErrorReason = Schema.Literal(
  "Connect",
  "Subscribe",
  "Stream",
  "Ended",
  "Idle",
  "SlotNotAvailable",
  "FromSlotUnsupported",
  "Overflow",
  "OutOfOrder",
  "Publish",
  "Cursor",
  "Defect"
)
export type SolanaIngestErrorReason = typeof SolanaIngestErrorReason.Type

export class SolanaIngestError extends Schema.TaggedError<SolanaIngestError>()("SolanaIngestError", {
  reason: SolanaIngestErrorReason,
  message: Schema.String,
  retryable: Schema.Boolean,
  firstAvailableSlot: Schema.NullOr(Schema.BigIntFromSelf)
}) {}

const ingestError = (reason: SolanaIngestErrorReason, message: string, firstAvailableSlot: bigint | null = null) =>
  new SolanaIngestError({ reason, message, retryable: true, firstAvailableSlot })

export interface ReconnectAttempt {
  readonly attempt: number
  readonly atMs: number
  readonly delayMs: number
  readonly reason: SolanaIngestErrorReason
  readonly message: string
}

export interface SlotGap {
  readonly fromSlot: bigint
  readonly toSlot: bigint
}

export interface IngesterStatus {
  readonly source: string
  readonly connected: boolean
  /** Last slot whose events the bus acknowledged, in this process. */
  readonly publishedSlot: bigint | null
  /** Last slot written to `ingest_cursors`. */
  readonly cursorSlot: bigint | null
  readonly publishedEvents: number
  readonly completedSlots: number
  readonly sessions: number
  readonly reconnectAttempts: ReadonlyArray<ReconnectAttempt>
  readonly gaps: ReadonlyArray<SlotGap>
  readonly lastPongId: number | null
}

const pushBounded = <A>(list: A[], item: A, max: number): void => {
  list.push(item)
  if (list.length > max) list.splice(0, list.length - max)
}

/** The ingester's observable state; written only by the ingester fiber. */
export class IngesterState {
  connected = false
  publishedSlot: bigint | null = null
  cursorSlot: bigint | null = null
  publishedEvents = 0
  completedSlots = 0
  sessions = 0
  lastPongId: number | null = null
  readonly attempts: ReconnectAttempt[] = []
  readonly gaps: SlotGap[] = []

  constructor(
    readonly source: string,
    readonly logSize: number
  ) {}

  snapshot(): IngesterStatus {
    return {
      source: this.source,
      connected: this.connected,
      publishedSlot: this.publishedSlot,
      cursorSlot: this.cursorSlot,
      publishedEvents: this.publishedEvents,
      completedSlots: this.completedSlots,
      sessions: this.sessions,
      reconnectAttempts: [...this.attempts],
      gaps: [...this.gaps],
      lastPongId: this.lastPongId
    }
  }
}

export const COMMITMENT_LEVEL: Readonly<Record<IngestCommitment, CommitmentLevel>> = {
  processed: CommitmentLevel.PROCESSED,
  confirmed: CommitmentLevel.CONFIRMED,
  finalized: CommitmentLevel.FINALIZED
}

/** A subscribe request asking for nothing: the base every request of ours (and the ping) spreads. */
export const emptyRequest = (): SubscribeRequest => ({
  accounts: {},
  slots: {},
  transactions: {},
  transactionsStatus: {},
  blocks: {},
  blocksMeta: {},
  entry: {},
  accountsDataSlice: []
})

export const subscribeRequest = (o: ResolvedIngesterOptions, fromSlot: bigint | undefined): SubscribeRequest => ({
  ...emptyRequest(),
  transactions: {
    svcCurve: { accountInclude: [o.programId], accountExclude: [], accountRequired: [], vote: false, failed: false }
  },
  blocksMeta: { blocks: {} },
  commitment: COMMITMENT_LEVEL[o.commitment],
  ...(fromSlot === undefined ? {} : { fromSlot: fromSlot.toString() })
})

/** The messages down an error's cause chain (the native client nests the gRPC status). */
const errorText = (e: unknown): string => {
  const parts: string[] = []
  for (let c: unknown = e; parts.length < 8 && c !== undefined && c !== null; c = c instanceof Error ? c.cause : undefined) {
    parts.push(c instanceof Error ? c.message : String(c))
  }
  return parts.join(": ")
}

const NOT_AVAILABLE = /is not available, last available: (\d+)/

const classify = (fallback: SolanaIngestErrorReason) => (e: unknown): SolanaIngestError => {
  const text = errorText(e)
  const notAvailable = NOT_AVAILABLE.exec(text)
  if (notAvailable !== null) return ingestError("SlotNotAvailable", text, BigInt(notAvailable[1]!))
  if (text.includes("Operation was attempted past the valid range")) return ingestError("SlotNotAvailable", text)
  if (text.includes("from_slot is not supported")) return ingestError("FromSlotUnsupported", text)
  return ingestError(fallback, text)
}

/** Capped exponential delay for the n-th consecutive attempt (n ≥ 1), before jitter. */
export const backoffDelayMs = (b: BackoffOptions, attempt: number): number =>
  Math.min(b.maxMs, b.initialMs * b.factor ** Math.max(0, attempt - 1))

/** Runs forever (until interrupted); requires the bus and PostgreSQL. */
export const runYellowstoneIngester = (
  o: ResolvedIngesterOptions,
  state: IngesterState
): Effect.Effect<never, never, Bus | SqlClient.SqlClient> =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const log = Effect.annotateLogs({ ingester: o.source })

    let attempt = 0
    const pause = (e: SolanaIngestError) =>
      Effect.gen(function* () {
        attempt++
        const base = backoffDelayMs(o.backoff, attempt)
        const r = yield* Random.next
        const delayMs = Math.max(0, Math.round(base * (1 + o.backoff.jitter * (2 * r - 1))))
        const atMs = yield* Clock.currentTimeMillis
        pushBounded(state.attempts, { attempt, atMs, delayMs, reason: e.reason, message: e.message }, o.attemptsLogSize)
        yield* Effect.logWarning(`session ended (${e.reason}): ${e.message}; resubscribing in ${delayMs} ms`).pipe(
          Effect.annotateLogs({ attempt, publishedSlot: String(state.publishedSlot) }),
          log
        )
        yield* Effect.sleep(Duration.millis(delayMs))
      })

    // The cursor: retried like everything else, the ingester cannot start without it.
    let cursor: bigint | null | undefined
    while (cursor === undefined) {
      const read = yield* Effect.either(readCursor(o.source))
      if (read._tag === "Right") cursor = read.right
      else yield* pause(ingestError("Cursor", `reading the cursor failed: ${read.left.message}`))
    }
    attempt = 0
    const assembler = new SlotAssembler(cursor, o.maxBufferedTransactions)
    state.cursorSlot = cursor
    state.publishedSlot = cursor

    let client: Client | null = null
    let resumeFrom: bigint | null = null
    let fromSlotSupported = true
    let pingId = 0

    const connect = Effect.tryPromise({
      try: async () => {
        const c = new YellowstoneClient(o.grpcUrl, o.xToken, o.channelOptions)
        await c.connect()
        return c
      },
      catch: classify("Connect")
    })

    const publishSlot = (slot: AssembledSlot) =>
      Effect.gen(function* () {
        const events: ChainEvent[] = []
        for (const tx of slot.transactions) {
          const decoded = decodeCurveTransaction(tx, slot.blockTimeMs, o.programId)
          if (decoded.truncated) {
            yield* Effect.logWarning(`transaction ${tx.signature} has a truncated log: events after the cut are lost`).pipe(log)
          }
          if (decoded.unknown > 0) {
            yield* Effect.logWarning(`transaction ${tx.signature} carries ${decoded.unknown} svc-curve events no decoder knows`).pipe(log)
          }
          for (const e of decoded.events) events.push(e)
        }
        if (events.length > 0) {
          yield* bus
            .publish(
              Topics.chainEvents,
              events.map((e) => ({ key: busKey(e), value: encodeChainEvent(e) }))
            )
            .pipe(Effect.mapError((e) => ingestError("Publish", `publishing slot ${slot.slot} failed: ${e.message}`)))
        }
        assembler.commit(slot.slot)
        state.publishedSlot = slot.slot
        state.completedSlots++
        state.publishedEvents += events.length
        if (resumeFrom !== null && slot.slot >= resumeFrom) resumeFrom = null
        if (events.length > 0 || state.cursorSlot === null || slot.slot - state.cursorSlot >= BigInt(o.cursorEverySlots)) {
          yield* writeCursor(o.source, slot.slot).pipe(
            Effect.mapError((e) => ingestError("Cursor", `writing the cursor at slot ${slot.slot} failed: ${e.message}`))
          )
          state.cursorSlot = slot.slot
        }
      })

    const onUpdate = (u: SubscribeUpdate, stream: ClientDuplexStream): Effect.Effect<void, SolanaIngestError, SqlClient.SqlClient> => {
      if (u.transaction !== undefined) {
        const tx = curveTransactionOf(u.transaction)
        if (tx === undefined) return Effect.logWarning("a transaction update without its transaction or meta was skipped").pipe(log)
        const r = assembler.transaction(tx)
        return r._tag === "Overflow"
          ? Effect.fail(ingestError("Overflow", `${r.buffered} transactions buffered in incomplete slots (bound ${o.maxBufferedTransactions})`))
          : Effect.void
      }
      if (u.blockMeta !== undefined) {
        const r = assembler.blockMeta(BigInt(u.blockMeta.slot), blockTimeMsOf(u.blockMeta))
        if (r._tag === "OutOfOrder") return Effect.fail(ingestError("OutOfOrder", r.detail))
        return r._tag === "Completed" ? publishSlot(r.slot) : Effect.void
      }
      if (u.ping !== undefined) {
        // Answer the server's keep-alive, as Yellowstone clients behind proxies must.
        stream.write({ ...emptyRequest(), ping: { id: ++pingId } })
        return Effect.void
      }
      if (u.pong !== undefined) state.lastPongId = u.pong.id
      return Effect.void
    }

    const session = Effect.gen(function* () {
      if (client === null) client = yield* connect
      const c: Client = client
      const committed = assembler.committed
      if (committed !== null) {
        const head = yield* Effect.tryPromise({ try: () => c.getSlot(CommitmentLevel.PROCESSED), catch: classify("Connect") })
        if (committed > BigInt(head.slot)) {
          yield* Effect.logError(
            `cursor slot ${committed} is ahead of the server's newest slot ${head.slot}: the chain was reset; starting from the oldest available slot`
          ).pipe(log)
          assembler.forget()
          state.publishedSlot = null
          state.cursorSlot = null
          resumeFrom = null
        }
      }
      const fromSlot = fromSlotSupported ? (resumeFrom ?? assembler.committed ?? 0n) : undefined
      const stream = yield* Effect.acquireRelease(
        Effect.tryPromise({ try: () => c.subscribe(subscribeRequest(o, fromSlot)), catch: classify("Subscribe") }),
        (s) => Effect.sync(() => s.destroy())
      )
      state.sessions++
      yield* Effect.acquireRelease(
        Effect.sync(() => {
          state.connected = true
        }),
        () =>
          Effect.sync(() => {
            state.connected = false
          })
      )
      assembler.reset()
      yield* Effect.logInfo(`subscribed at ${o.commitment}${fromSlot === undefined ? "" : ` from slot ${fromSlot}`}`).pipe(log)
      const updates = stream[Symbol.asyncIterator]()
      let first = true
      for (;;) {
        const next = yield* Effect.tryPromise({ try: () => updates.next(), catch: classify("Stream") }).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(o.idleTimeoutMs),
            onTimeout: () => ingestError("Idle", `no message for ${o.idleTimeoutMs} ms`)
          })
        )
        if (next.done === true) return yield* Effect.fail(ingestError("Ended", "the server ended the stream"))
        if (first) {
          first = false
          attempt = 0
        }
        yield* onUpdate(next.value as SubscribeUpdate, stream)
      }
    }).pipe(Effect.scoped)

    for (;;) {
      const ended = yield* session.pipe(
        Effect.catchAllDefect((d) => Effect.fail(ingestError("Defect", errorText(d)))),
        Effect.flip
      )
      if (ended.reason === "SlotNotAvailable" && client !== null) {
        const c: Client = client
        let first = ended.firstAvailableSlot
        if (first === null) {
          const info = yield* Effect.either(Effect.tryPromise(() => c.subscribeReplayInfo()))
          first = info._tag === "Right" && info.right.firstAvailable !== undefined ? BigInt(info.right.firstAvailable) : null
        }
        if (first !== null) {
          const committed = assembler.committed
          const lastGap = state.gaps[state.gaps.length - 1]
          const gapFrom = committed === null ? null : lastGap !== undefined && lastGap.toSlot >= committed ? lastGap.toSlot + 1n : committed + 1n
          if (gapFrom !== null && gapFrom <= first - 1n) {
            pushBounded(state.gaps, { fromSlot: gapFrom, toSlot: first - 1n }, o.attemptsLogSize)
            yield* Effect.logError(
              `slots ${gapFrom}..${first - 1n} are no longer available from the server and were not ingested; resuming from slot ${first}`
            ).pipe(log)
          } else if (committed === null) {
            yield* Effect.logInfo(`no cursor: starting from slot ${first}, the oldest the server keeps`).pipe(log)
          }
          resumeFrom = first
        }
      } else if (ended.reason === "FromSlotUnsupported") {
        fromSlotSupported = false
        yield* Effect.logError("the server cannot replay (from_slot unsupported): following live; slots missed while disconnected are lost").pipe(log)
      }
      yield* pause(ended)
    }
  }).pipe(Effect.withRandom(Random.make(o.seed)))
