/**
 * The market-data service as the composition root starts it (`all` role): the signal pipeline
 * (detectors on the bus → hub + ClickHouse writer), the strategy lab's replay jobs, and the data
 * listener (`CURVESTREAM_DATA_PORT`, default 8081) with the tape, the stream and the lab routes
 * behind the data bearer. Everything lives in the caller's scope. Part of the composition root
 * (`main.ts` calls it): it wires services, actors, ClickHouse and the bus together, so it sits
 * above `api/`, which keeps only the data server and its routes.
 */
import type { ProxyTrust } from "./net/ProxyTrust.js"
import { Context, Effect, Layer } from "effect"
import { MarketIndex } from "../actors/MarketIndex.js"
import { pgCheckpointStore } from "../actors/runtime/Checkpointer.js"
import { ClickHouse } from "../clickhouse/ClickHouse.js"
import * as SignalWriter from "../clickhouse/writer/SignalWriter.js"
import { Bus } from "../ingest/bus/Bus.js"
import { PriceSource, type PriceSourceShape } from "./services/prices/PriceSource.js"
import { SignalHub, type SignalHubOptions } from "./services/signals/SignalHub.js"
import { runSignalPipeline, type SignalPipeline, type SignalWiringOptions, warmHub } from "./services/signals/SignalWiring.js"
import { followSignals, publishSignals } from "./services/signals/SignalTopic.js"
import type { TopicPublisher } from "../actors/replica/TopicPublisher.js"
import { makeStore, SocialMentions, type SocialMentionsShape } from "./services/social/SocialMentions.js"
import type { ReplayRequest } from "./services/strategy/Definition.js"
import { defaultFees, pricingFor, ReplayError, runReplay } from "./services/strategy/Replay.js"
import { make as makeReplayJobs, type ReplayJobsShape } from "./services/strategy/ReplayJobs.js"
import { makeClickHouseSignalHistory, SignalHistory } from "./services/strategy/SignalHistory.js"
import { seedTrackingData, SEED_PLAIN_AUTHORS } from "./services/tracking/Seed.js"
import { make as makeTracking, type TrackingShape } from "./services/tracking/Tracking.js"
import { accountApi } from "../api/routes/AccountRoutes.js"
import { dataServiceRouteTable } from "../api/data/DataServiceRoutes.js"
import { type RunningDataServer, serveData } from "../api/data/DataServer.js"
import { invalidApiKeyReply } from "../api/auth/DataBearerAuth.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { makeRowLeases } from "./db/RowLease.js"
import { makePersonalStore } from "./services/personal/PersonalStore.js"
import { runPersonalSignals } from "./services/personal/PersonalSignals.js"
import { makeStrategyRoutes } from "../api/data/strategy/StrategyRoutes.js"
import { DATA_AUTH_HEADERS } from "../api/auth/DataBearerAuth.js"
import type { Request } from "../api/Http.js"
import type { CorsPolicy, RouteDef } from "../api/Router.js"
import type { SignalStreamOptions } from "../api/data/SignalStream.js"

export interface DataServiceOptions {
  readonly host: string
  readonly port: number
  readonly maxBodyBytes: number
  readonly nowMs: () => number
  /** Run the localnet's simulated social source (embedded mode without --quiet). */
  readonly simulateSocial: boolean
  readonly tokenShards?: number
  readonly hub?: Partial<SignalHubOptions>
  readonly stream?: Partial<SignalStreamOptions>
  /** Threads holding the signal stream's sockets (`DATA_STREAM_THREADS`, default 1). */
  readonly streamThreads?: number
  /** `TRUSTED_PROXIES` (`api/ClientAddress.ts`). */
  readonly trustedProxies?: ProxyTrust
  readonly pipeline?: Partial<SignalWiringOptions>
  /** Cross-origin calls from the web page the main listener serves (`CorsPolicy`). */
  readonly cors?: CorsPolicy
}

export interface DataService {
  readonly server: RunningDataServer
  readonly hub: SignalHub
  readonly pipeline: SignalPipeline
  readonly tracking: TrackingShape
  readonly social: SocialMentionsShape
  readonly jobs: ReplayJobsShape
  /** The listener's route table (the main listener's MCP endpoint calls its tools' routes in process). */
  readonly routes: ReadonlyArray<RouteDef>
}

/** USD micro per whole SOL / ETH for a replay, read when the replay starts. */
const microsPerUnit = (prices: PriceSourceShape, asset: "sol" | "eth") =>
  Effect.map(prices.usd(asset), (p) => (p.usdRaw * 1_000_000n) / 10n ** BigInt(p.scale))

export const replayRunner =
  (clickhouse: typeof ClickHouse.Service, prices: PriceSourceShape) =>
  (request: ReplayRequest) =>
    Effect.gen(function* () {
      const [solana, hood] = yield* Effect.all([microsPerUnit(prices, "sol"), microsPerUnit(prices, "eth")]).pipe(
        Effect.mapError((e) => new ReplayError({ reason: "Unavailable", message: `no USD price for the replay: ${e.message}` }))
      )
      return yield* runReplay(request, { fees: defaultFees, pricing: pricingFor({ solana, hood }) })
    }).pipe(Effect.provideService(ClickHouse, clickhouse), Effect.provideService(SignalHistory, makeClickHouseSignalHistory(clickhouse)))

/** The signal side: the hub, tracked wallets, the social source, and (unless only followed) the detectors. */
/** The social mentions store when no simulation feeds it (the cluster roles, and `all` on configured nodes or with --quiet). */
const idleSocialStore = () => makeStore(10_000, 16)

export interface SignalSide {
  readonly hub: SignalHub
  readonly tracking: TrackingShape
  readonly social: SocialMentionsShape
}

/**
 * The detectors on the bus (`all` and actors roles): the hub warmed from ClickHouse, the
 * detectors' pipeline into it and the ClickHouse writer. `publisher`: the actors role's, to which
 * every new signal goes (`signals` topic); offsets then commit only once they are published, and
 * a partition's detector checkpoints are reloaded when a rebalance hands it over.
 */
export const startSignalPipeline = (
  options: Pick<DataServiceOptions, "simulateSocial" | "tokenShards" | "hub" | "pipeline"> & { readonly publisher?: TopicPublisher }
) =>
  Effect.gen(function* () {
    const bus = yield* Bus
    const index = yield* MarketIndex
    const prices = yield* PriceSource
    const tracking = makeTracking(seedTrackingData())
    const social: SocialMentionsShape = options.simulateSocial
      ? Context.get(
          yield* Layer.build(
            SocialMentions.layerSimulated(
              { kolHandles: tracking.kols().map((k) => k.handle), plainAuthors: SEED_PLAIN_AUTHORS },
              Effect.sync(() =>
                [...index.markets()]
                  .filter((m) => m.lifecycle === "trading" || m.lifecycle === "migrated")
                  .map((m) => ({ chain: m.chain, asset: m.mint, symbol: m.identity.symbol }))
              )
            )
          ),
          SocialMentions
        )
      : idleSocialStore()
    const hub = new SignalHub(options.hub)
    const writer = yield* SignalWriter.make({ walletGroupsOf: (chain, address) => tracking.byAddress(chain, address)?.groups ?? [] })
    yield* warmHubFromClickHouse(hub)
    // Subscribed after the warm-up (stored signals are not published again) and before the detectors start.
    const { publisher } = options
    if (publisher !== undefined) {
      const unsubscribe = publishSignals(hub, publisher)
      yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    }
    const store = yield* pgCheckpointStore(500)
    const pipeline = yield* runSignalPipeline(
      { bus, store, hub, writer, prices, tracking, index, social, ...(publisher !== undefined ? { durable: publisher.barrier } : {}) },
      {
        ...options.pipeline,
        ...(options.tokenShards !== undefined ? { tokenShards: options.tokenShards } : {}),
        ...(publisher !== undefined
          ? { runtime: { ...options.pipeline?.runtime, reloadOnAssign: true }, chainAlone: { leases: makeRowLeases(yield* SqlClient.SqlClient) } }
          : {})
      }
    )
    return { hub, tracking, social, pipeline }
  })

/** Fills the hub with the newest stored signals (see `warmHub`). */
const warmHubFromClickHouse = (hub: SignalHub) =>
  Effect.flatMap(ClickHouse, (clickhouse) =>
    warmHub(hub, (limit) =>
      Effect.map(
        clickhouse.query(`SELECT ${SignalWriter.signalSelectSql} FROM signals FINAL ORDER BY ts DESC, id DESC LIMIT {limit:UInt32}`, { limit }),
        (rows) => rows.map(SignalWriter.signalFromRow)
      )
    )
  )

/**
 * The API role's signal side: no detectors here; the hub is warmed from ClickHouse and follows
 * the `signals` topic the actors role writes (`SignalTopic.ts`).
 */
export const followSignalSide = (options: { readonly groupPrefix: string; readonly hub?: Partial<SignalHubOptions> }) =>
  Effect.gen(function* () {
    const hub = new SignalHub(options.hub)
    yield* warmHubFromClickHouse(hub)
    yield* followSignals(yield* Bus, hub, options.groupPrefix)
    return { hub, tracking: makeTracking(seedTrackingData()), social: idleSocialStore() } satisfies SignalSide
  })

/** The data listener and what only it serves (replay jobs, personal signals, the lab) over a signal side. */
export const serveDataService = (options: DataServiceOptions, side: SignalSide) =>
  Effect.gen(function* () {
    const clickhouse = yield* ClickHouse
    const index = yield* MarketIndex
    const prices = yield* PriceSource
    const { hub, tracking, social } = side
    const jobs = yield* makeReplayJobs({ run: replayRunner(clickhouse, prices) })
    const auth = (yield* accountApi({ nowMs: options.nowMs })).dataAuth
    const authenticate = (req: Request) =>
      Effect.flatMap(auth.authenticate(req.headers), (p) =>
        p === undefined ? Effect.fail(invalidApiKeyReply()) : Effect.succeed({ accountId: p.accountId, plan: p.tier, scopes: p.key.scopes })
      )
    const sql = yield* SqlClient.SqlClient
    const personal = yield* runPersonalSignals(hub, makePersonalStore(sql))
    const lab = yield* makeStrategyRoutes({
      clickhouse,
      runBacktest: replayRunner(clickhouse, prices),
      authHeaders: DATA_AUTH_HEADERS,
      authenticate
    })
    const routes = dataServiceRouteTable({
      tape: { auth, clickhouse, hub, tracking, jobs },
      tokenReads: { clickhouse, index, prices, nowMs: options.nowMs, authenticate, trackedWallets: (plan, chain) => tracking.wallets(plan, chain) },
      walletSocial: { clickhouse, index, prices, tracking, social, nowMs: options.nowMs, authenticate },
      personal: { sql, tracking, personal, authenticate },
      strategies: lab.routes
    })
    const server = yield* serveData({
      host: options.host,
      port: options.port,
      maxBodyBytes: options.maxBodyBytes,
      routes,
      stream: { hub, tracking, authenticate: auth.authenticate },
      ...(options.stream !== undefined ? { streamOptions: options.stream } : {}),
      ...(options.streamThreads !== undefined ? { streamThreads: options.streamThreads } : {}),
      ...(options.trustedProxies !== undefined ? { trustedProxies: options.trustedProxies } : {}),
      ...(options.cors !== undefined ? { cors: options.cors } : {})
    })
    return { server, jobs, routes }
  })

/** The `all` role's market-data service: the detectors and the listener in one process. */
export const startDataService = (options: DataServiceOptions) =>
  Effect.gen(function* () {
    const side = yield* startSignalPipeline(options)
    const { server, jobs, routes } = yield* serveDataService(options, side)
    return { server, hub: side.hub, pipeline: side.pipeline, tracking: side.tracking, social: side.social, jobs, routes } satisfies DataService
  }).pipe(Effect.withSpan("DataService.start"))
