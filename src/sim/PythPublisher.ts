/**
 * The embedded localnet's Pyth publisher: looks at SOL/USD every `intervalMs` and posts it to the
 * Pyth price account with a real signed `localnet_post_price` transaction, as Pyth's publishers
 * keep a mainnet feed fresh. With `move` (the market simulation runs) the price takes a seeded
 * random walk of at most `stepBps` per look, kept within [start / 2, start · 2]; without it
 * (`--quiet`) it never moves. A moved price is posted at once; an unchanged one only when
 * `heartbeatMs` has passed since the last post (`postDue`), so a quiet localnet's price stays
 * fresh (the heartbeat, `priceHeartbeatMs`, leaves the reader's lag, a look and a second inside
 * `PRICE_MAX_AGE_MS`) without a transaction every interval.
 * Bounded: one transaction in flight; a refused post is logged at debug level and the next look
 * tries again (a refused post is not a post: the heartbeat counts from the last accepted one).
 */
import type { Address } from "@solana/kit"
import { Clock, Duration, Effect, Random } from "effect"
import { pythPublisherSigner } from "../chain/solana/client/DevSigners.js"
import { getLocalnetPostPriceInstruction } from "../chain/solana/client/PythInstructions.js"
import type { RpcSender } from "../chain/solana/RpcSender.js"

export interface PythPublisherOptions {
  readonly seed: number
  readonly priceAccount: Address
  readonly intervalMs: number
  /** An unchanged price is posted again once this long has passed since the last post (at the next look). */
  readonly heartbeatMs: number
  readonly move: boolean
  /** The starting price `price · 10^exponent` (the genesis price) and its confidence. */
  readonly start: { readonly price: bigint; readonly conf: bigint; readonly exponent: number }
  /** Largest move of one post, in basis points of the price (default 50). */
  readonly stepBps?: number
}

/** One step of the walk: `price` moved by `offsetBps` ∈ [-stepBps, stepBps], clamped to [start/2, 2·start]. Pure. */
export const walkPrice = (price: bigint, start: bigint, offsetBps: number): bigint => {
  const next = price + (price * BigInt(offsetBps)) / 10_000n
  const low = start / 2n
  const high = start * 2n
  return next < low ? low : next > high ? high : next
}

/** The last post a publisher's node accepted: the price and when (Clock milliseconds). */
export interface LastPost {
  readonly price: bigint
  readonly atMs: number
}

/**
 * Whether a publisher posts `price` now (pure): the first time, when it differs from the last
 * post, or when `heartbeatMs` has passed since the last post (a feed's heartbeat: an unmoved
 * price is posted again only so that readers keep finding it fresh).
 */
export const postDue = (price: bigint, last: LastPost | undefined, nowMs: number, heartbeatMs: number): boolean =>
  last === undefined || price !== last.price || nowMs - last.atMs >= heartbeatMs

/**
 * How long an unchanged price may go before a publisher posts it again (pure): a quarter of the
 * reader's `maxAgeMs` (so up to three heartbeats in a row can be lost, e.g. a Solana post dropped
 * after its preflight, before a price reads stale), and never more than `maxAgeMs` less how long a
 * post takes to reach the reader (`commitmentLagMs`: the commitment it reads at, and its polling),
 * less two looks (the look at which a due post is made comes up to one look late, and one more for
 * a post refused at that look) and a second (publish times in whole seconds); never under one
 * look. So a reader's oldest price is at most about heartbeat + look + commitment lag, inside
 * `maxAgeMs` (docs/decisions.md "The engine at rest").
 */
export const priceHeartbeatMs = (maxAgeMs: number, commitmentLagMs: number, lookMs: number): number =>
  Math.max(lookMs, Math.min(Math.floor(maxAgeMs / 4), maxAgeMs - commitmentLagMs - 2 * lookMs - 1_000))

/** What the look-and-post loop needs of a publisher's options. */
export interface PublishLoopOptions {
  readonly intervalMs: number
  readonly heartbeatMs: number
  readonly move: boolean
  readonly stepBps?: number
}

/**
 * The look-and-post loop both localnet publishers run (SOL/USD here, ETH/USD in `EthUsdPublisher`):
 * every `intervalMs` the price takes a step of the walk when `move`, and is posted when `postDue`;
 * `post` resolves once the node took the price (then it is the last post) and rejects otherwise
 * (logged at debug level as `refused`, tried again at the next look). Draws from the caller's `Random`.
 */
export const publishLoop = (start: bigint, o: PublishLoopOptions, refused: string, post: (price: bigint) => Promise<unknown>) =>
  Effect.gen(function* () {
    const stepBps = o.stepBps ?? 50
    let price = start
    let last: LastPost | undefined
    for (;;) {
      if (o.move) price = walkPrice(price, start, yield* Random.nextIntBetween(-stepBps, stepBps + 1))
      const posted = price
      const nowMs = yield* Clock.currentTimeMillis
      if (postDue(posted, last, nowMs, o.heartbeatMs)) {
        yield* Effect.tryPromise(() => post(posted)).pipe(
          Effect.map(() => {
            last = { price: posted, atMs: nowMs }
          }),
          Effect.catchAll((e) => Effect.logDebug(refused, String(e)))
        )
      }
      yield* Effect.sleep(Duration.millis(o.intervalMs))
    }
  })

export const runPythPublisher = (sender: RpcSender, o: PythPublisherOptions) =>
  Effect.gen(function* () {
    const publisher = yield* Effect.promise(() => pythPublisherSigner())
    return yield* publishLoop(o.start.price, o, "pyth publisher: post refused", (price) =>
      sender.send(publisher, [getLocalnetPostPriceInstruction({ publisher, priceAccount: o.priceAccount, price, conf: o.start.conf, exponent: o.start.exponent })])
    )
  }).pipe(Effect.withRandom(Random.make(o.seed)))
