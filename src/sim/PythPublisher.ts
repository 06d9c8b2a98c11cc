/**
 * The embedded localnet's Pyth publisher: posts SOL/USD to the Pyth price account every
 * `intervalMs` with a real signed `localnet_post_price` transaction, as Pyth's publishers keep a
 * mainnet feed fresh. With `move` (the market simulation runs) the price takes a seeded random
 * walk of at most `stepBps` per post, kept within [start / 2, start · 2]; without it (`--quiet`)
 * the same price is posted again, so a quiet localnet's price stays fresh and never moves.
 * Bounded: one transaction in flight; a refused post is logged at debug level and the next one
 * tries again.
 */
import type { Address } from "@solana/kit"
import { Duration, Effect, Random } from "effect"
import { pythPublisherSigner } from "../chain/solana/client/DevSigners.js"
import { getLocalnetPostPriceInstruction } from "../chain/solana/client/PythInstructions.js"
import type { RpcSender } from "../chain/solana/RpcSender.js"

export interface PythPublisherOptions {
  readonly seed: number
  readonly priceAccount: Address
  readonly intervalMs: number
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

export const runPythPublisher = (sender: RpcSender, o: PythPublisherOptions) =>
  Effect.gen(function* () {
    const publisher = yield* Effect.promise(() => pythPublisherSigner())
    const stepBps = o.stepBps ?? 50
    let price = o.start.price
    for (;;) {
      if (o.move) price = walkPrice(price, o.start.price, yield* Random.nextIntBetween(-stepBps, stepBps + 1))
      const posted = price
      yield* Effect.tryPromise(() =>
        sender.send(publisher, [getLocalnetPostPriceInstruction({ publisher, priceAccount: o.priceAccount, price: posted, conf: o.start.conf, exponent: o.start.exponent })])
      ).pipe(Effect.catchAll((e) => Effect.logDebug("pyth publisher: post refused", String(e))))
      yield* Effect.sleep(Duration.millis(o.intervalMs))
    }
  }).pipe(Effect.withRandom(Random.make(o.seed)))
