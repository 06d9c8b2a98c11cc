/**
 * A market workload for the actors' and the cluster read model's tests: `markets` markets per
 * chain, `tradesPerMarket` rounds of trades, interleaved; some graduate and migrate, Hood
 * retracts now and then; the pure in-order fold of the events the actors must end in; and the
 * in-memory bus and PGlite the actors' tests run on.
 */
import { defaultConfig, makeStep, type MarketState } from "../../actors/market/MarketActor.js"
import { type BusShape, Topics } from "../../ingest/bus/Bus.js"
import { busKey, type ChainEvent } from "../../ingest/ChainEvent.js"
import { encodeFast } from "../../ingest/ChainEventCodec.js"
import { Effect, Layer } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as EmbeddedBus from "../../ingest/bus/EmbeddedBus.js"
import * as Database from "../../src/db/Database.js"
import { ChainClock, SimMarket } from "./marketSim.js"

const SOL = 1_000_000_000n
const ETH = 10n ** 18n

/** Markets and their clocks, to keep trading in later rounds (`round`). */
export const workloadMarkets = (markets: number, prefix = "") => {
  const solana = new ChainClock("solana")
  const hood = new ChainClock("hood")
  const sims = [
    ...Array.from({ length: markets }, (_, i) => new SimMarket(solana, { mint: `So1${prefix}Mint${i}` })),
    ...Array.from({ length: markets }, (_, i) => new SimMarket(hood, { mint: `0xhood${prefix}${i}` }))
  ]
  return { solana, hood, sims }
}

/** `tradesPerMarket` rounds over the markets (`created` first when `create`). */
export const workloadRounds = (w: ReturnType<typeof workloadMarkets>, tradesPerMarket: number, create: boolean): Array<ChainEvent> => {
  const { solana, hood, sims } = w
  const events: Array<ChainEvent> = create ? sims.map((m) => m.created()) : []
  for (let t = 0; t < tradesPerMarket; t++) {
    solana.advance(7_000)
    hood.advance(7_000)
    sims.forEach((m, i) => {
      if (m.curve.complete) {
        if (m.pool === undefined) events.push(m.progress("in_progress", 1), m.migrated())
        else events.push(m.poolBuy(`t${t % 7}`, m.chain === "solana" ? SOL / 100n : ETH / 1000n))
        return
      }
      const unit = m.chain === "solana" ? SOL / 10n : ETH / 200n
      // Every fifth market buys hard and graduates; the others trade small both ways.
      if (i % 5 === 0 && t === Math.floor(tradesPerMarket / 2)) events.push(...m.buy("whale", unit * 2000n))
      else if (t % 3 === 2 && m.curve.virtualTokenRaw < m.params.tokenReserveRaw) events.push(m.sell(`t${t % 7}`, (m.params.tokenReserveRaw - m.curve.virtualTokenRaw) / 10n))
      else if (m.chain === "hood" && t % 11 === 10) {
        // A reorg: a trade that lands and is retracted.
        const before = m.snapshot()
        const reorged = m.buy(`t${t % 7}`, unit)
        m.restore(before)
        events.push(...reorged, m.retracted(reorged.map((e) => e.id)))
      } else events.push(...m.buy(`t${t % 7}`, unit))
    })
  }
  return events
}

/** The whole workload at once. */
export const workload = (markets: number, tradesPerMarket: number): Array<ChainEvent> => workloadRounds(workloadMarkets(markets), tradesPerMarket, true)

/** The states a pure in-order fold of `events` reaches, per key. */
export const foldStates = (events: ReadonlyArray<ChainEvent>, retractHistory: Partial<typeof defaultConfig.retractHistory> = {}): Map<string, MarketState> => {
  const f = makeStep({ retractHistory: { ...defaultConfig.retractHistory, ...retractHistory } })
  const states = new Map<string, MarketState>()
  for (const e of events) {
    const key = `${e.chain}:${e.mint}`
    const [next] = f(states.get(key), e)
    if (next === undefined) states.delete(key)
    else states.set(key, next)
  }
  return states
}

/** Publishes chain events as the ingesters do (key `chain:mint`, the fast codec), in chunks. */
export const publishEvents = (bus: BusShape, events: ReadonlyArray<ChainEvent>, chunk = 5000) =>
  Effect.forEach(
    Array.from({ length: Math.ceil(events.length / chunk) }, (_, i) => events.slice(i * chunk, (i + 1) * chunk)),
    (part) => bus.publish(Topics.chainEvents, part.map((e) => ({ key: busKey(e), value: encodeFast(e) }))),
    { discard: true }
  )

/**
 * What the actors' tests run on, in the current scope: an in-memory embedded bus and PGlite in a
 * temp directory (removed with the scope). The database is built into the scope, so it outlives
 * the effects it is provided to.
 */
export const memoryBusAndPglite = (partitions: number, prefix: string) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), prefix))),
      (d) => Effect.promise(() => fs.rm(d, { recursive: true, force: true }))
    )
    const bus = yield* EmbeddedBus.make({ dir: undefined, partitions })
    const database = yield* Layer.build(Database.layer({ url: undefined, dataDir: dir }))
    return { bus, database }
  })
