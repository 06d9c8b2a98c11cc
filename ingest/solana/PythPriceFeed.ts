/**
 * Follows one Pyth `PriceUpdateV2` account (SOL/USD) over Yellowstone gRPC, the same server and
 * client the market ingester uses, and keeps the latest decoded price for the price source
 * (`src/services/prices/OraclePrice.ts` judges it: age, status, confidence).
 *
 * A session reads the account once over JSON-RPC (Yellowstone sends changes only, never the state
 * at subscribe time), then applies every account update of the stream at the configured
 * commitment. An update from an older slot than the one held is ignored, so a replayed or
 * reordered message never moves the price back. Data that does not decode as a `PriceUpdateV2`,
 * or an account not owned by the receiver program, leaves nothing held (the price source then
 * answers `PriceUnavailable`), never a guess.
 * It never gives up: a failed read, a stream error or end, or silence past `idleTimeoutMs` (the
 * server pings every 10 s) ends the session; the next starts after a capped exponential backoff.
 * Bounds: one account, one stream, the held price is one value.
 */
import { type Address, address, getBase58Decoder } from "@solana/kit"
import type { SubscribeRequest, SubscribeUpdate } from "@triton-one/yellowstone-grpc"
import { Duration, Effect, Schedule } from "effect"
import { decodePriceUpdate, PYTH_RECEIVER_PROGRAM_ID, type PriceUpdate } from "../../src/chain/solana/program/accounts/PythPriceUpdate.js"
import type { OracleFeed, OracleObservation } from "../../src/domain/OracleObservation.js"
import { COMMITMENT_LEVEL, emptyRequest, type IngestCommitment, YellowstoneClient } from "./YellowstoneIngester.js"
import { createNodeSolanaRpc } from "../../src/chain/internal/JsonRpcHttp.js"

const base58 = getBase58Decoder()

export interface PythPriceFeedOptions {
  readonly grpcUrl: string
  readonly xToken?: string | undefined
  readonly rpcUrl: string
  readonly account: Address
  readonly commitment?: IngestCommitment
  /** No message for this long ends the session (default 35 s). */
  readonly idleTimeoutMs?: number
  /** Backoff between sessions: first delay and cap (defaults 100 ms, 5 s). */
  readonly backoffInitialMs?: number
  readonly backoffMaxMs?: number
}

export const pythSubscribeRequest = (account: Address, commitment: IngestCommitment): SubscribeRequest => ({
  ...emptyRequest(),
  accounts: { pythPrice: { account: [account], owner: [PYTH_RECEIVER_PROGRAM_ID], filters: [] } },
  commitment: COMMITMENT_LEVEL[commitment]
})

/** A decoded price update as the price source's observation (Pyth's `Full` verification = trading). */
export const pythObservation = (u: PriceUpdate): OracleObservation => ({
  price: u.price,
  conf: u.conf,
  exponent: u.exponent,
  publishTimeMs: Number(u.publishTimeSec) * 1000,
  trading: u.verificationLevel.kind === "full"
})

/** The held price and the slot it was read at; written only by the feed's fiber. */
export class PythPriceHolder {
  private observation: OracleObservation | undefined = undefined
  private slot = -1n
  updates = 0

  /** Applies the account's state at `slot`; an older slot than the one held changes nothing. */
  apply(slot: bigint, owner: Address, data: Uint8Array): void {
    if (slot < this.slot) return
    this.slot = slot
    this.updates++
    const decoded = owner === PYTH_RECEIVER_PROGRAM_ID ? decodePriceUpdate(data) : undefined
    this.observation = decoded === undefined ? undefined : pythObservation(decoded)
  }

  latest(): OracleObservation | undefined {
    return this.observation
  }
}

class FeedSessionError {
  readonly _tag = "FeedSessionError"
  constructor(readonly message: string) {}
}

const text = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** Runs forever (until interrupted), keeping `holder` current. */
export const runPythPriceFeed = (o: PythPriceFeedOptions, holder: PythPriceHolder): Effect.Effect<never> => {
  const commitment = o.commitment ?? "confirmed"
  const idleTimeoutMs = o.idleTimeoutMs ?? 35_000
  const rpc = createNodeSolanaRpc(o.rpcUrl)
  const log = Effect.annotateLogs({ feed: `pyth:${o.account}` })

  const snapshot = Effect.tryPromise({
    try: () => rpc.getAccountInfo(o.account, { encoding: "base64", commitment }).send({ abortSignal: AbortSignal.timeout(10_000) }),
    catch: (e) => new FeedSessionError(`reading the account failed: ${text(e)}`)
  }).pipe(
    Effect.map((r) => {
      const v = r.value
      if (v === null) holder.apply(r.context.slot, PYTH_RECEIVER_PROGRAM_ID, new Uint8Array(0))
      else holder.apply(r.context.slot, v.owner, Buffer.from(v.data[0], "base64"))
    })
  )

  const session = Effect.gen(function* () {
    const client = yield* Effect.tryPromise({
      try: async () => {
        const c = new YellowstoneClient(o.grpcUrl, o.xToken, undefined)
        await c.connect()
        return c
      },
      catch: (e) => new FeedSessionError(`connect: ${text(e)}`)
    })
    const stream = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => client.subscribe(pythSubscribeRequest(o.account, commitment)), catch: (e) => new FeedSessionError(`subscribe: ${text(e)}`) }),
      (s) => Effect.sync(() => s.destroy())
    )
    // Subscribed first, then the snapshot: an update between the two is not lost (an older slot is ignored).
    yield* snapshot
    yield* Effect.logInfo("following the Pyth price account").pipe(log)
    const updates = stream[Symbol.asyncIterator]()
    let pingId = 0
    for (;;) {
      const next = yield* Effect.tryPromise({ try: () => updates.next(), catch: (e) => new FeedSessionError(`stream: ${text(e)}`) }).pipe(
        Effect.timeoutFail({ duration: Duration.millis(idleTimeoutMs), onTimeout: () => new FeedSessionError(`no message for ${idleTimeoutMs} ms`) })
      )
      if (next.done === true) return yield* Effect.fail(new FeedSessionError("the server ended the stream"))
      const u = next.value as SubscribeUpdate
      if (u.account?.account !== undefined) {
        const a = u.account.account
        holder.apply(BigInt(u.account.slot), address(base58.decode(a.owner)), a.data)
      } else if (u.ping !== undefined) {
        stream.write({ ...pythSubscribeRequest(o.account, commitment), ping: { id: ++pingId } })
      }
    }
  }).pipe(Effect.scoped)

  const backoff = Schedule.exponential(Duration.millis(o.backoffInitialMs ?? 100)).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(o.backoffMaxMs ?? 5_000)))
  )
  return session.pipe(
    Effect.catchAllDefect((d) => Effect.fail(new FeedSessionError(`defect: ${text(d)}`))),
    Effect.tapError((e) => Effect.logWarning(`Pyth price feed session ended: ${e.message}`).pipe(log)),
    Effect.retry(backoff),
    Effect.flatMap(() => Effect.never),
    Effect.orDie
  ) as Effect.Effect<never>
}

/** The feed as an `OracleFeed`: start `run` on a fiber, read `feed.latest()` anywhere. */
export const pythPriceFeed = (o: PythPriceFeedOptions): { readonly feed: OracleFeed; readonly holder: PythPriceHolder; readonly run: Effect.Effect<never> } => {
  const holder = new PythPriceHolder()
  return { feed: { name: `pyth:${o.account}`, latest: () => holder.latest() }, holder, run: runPythPriceFeed(o, holder) }
}
