/**
 * The watchlist's webhook events (keys document section 6): `tracked_wallet.traded` when a
 * watched wallet buys or sells, `tracked_wallet.launched` when it deploys a token, to every
 * account watching it, from the ingested stream (`chain.events`, consumer group
 * `tracked-wallets`).
 *
 * Invariants:
 * - Once per event and watching account: the event id is a digest of the chain event's id
 *   (`tracked_wallet.traded:<id>`) or of the launched market (`tracked_wallet.launched:<chain>:<mint>`),
 *   and the outbox records an id once per endpoint (`enqueueKeyed`); the bus commits a batch's
 *   offsets only after its events are in the outbox (a failed write redelivers the batch). So a
 *   restart, a replay from an older offset or a partition moving to another member sends none
 *   twice and loses none.
 * - Never the account's own trade: an account watching one of its own wallets (embedded,
 *   imported, TEE or linked) is not told of that wallet's trades (`exceptOwnWallet`).
 * - Bounded: the watch index holds at most `maxEntries` watchlist rows (each account at most 200,
 *   spec 8), checked every `refreshMs` (and on `refresh`) and reloaded only when the watchlist's
 *   change count (`md_watchlist_version`) moved; the per-event work is one map lookup
 *   and one notice per watching account; a batch's notices are written in one transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Either, Layer, type Scope } from "effect"
import { MarketIndex } from "../../../actors/MarketIndex.js"
import { Bus, type BusBatch, type BusError, type BusShape, Topics } from "../../../ingest/bus/Bus.js"
import type { ChainEvent, ChainId } from "../../../ingest/ChainEvent.js"
import { decodeChainEvent } from "../../../ingest/ChainEventCodec.js"
import { tradeVolumeRaw } from "../../../actors/market/MarketActor.js"
import { QuotePairs } from "../../domain/QuotePairs.js"
import { quotePairOf, usdOf } from "../prices/Money.js"
import { PriceSource, type PriceSourceShape, type UsdPrice } from "../prices/PriceSource.js"
import { enqueueKeyed } from "../webhooks/Outbox.js"
import * as Database from "../../db/Database.js"

/** The consumer group on `chain.events`. */
export const TRACKED_WALLETS_GROUP = "tracked-wallets"

export interface Watcher {
  readonly accountId: string
  readonly label: string | null
}

/** Watchlist addresses as stored: Hood lowercase (the routes lowercase them), Solana as given. */
export const watchKey = (chain: ChainId, address: string): string => (chain === "hood" ? `hood:${address.toLowerCase()}` : `solana:${address}`)

/** The watchlist, by wallet. Immutable once built. */
export class WatchIndex {
  static readonly empty = new WatchIndex(new Map(), 0)
  constructor(
    private readonly byWallet: ReadonlyMap<string, ReadonlyArray<Watcher>>,
    readonly entries: number
  ) {}

  static of(rows: ReadonlyArray<{ readonly chain: ChainId; readonly address: string; readonly account_id: string; readonly label: string | null }>): WatchIndex {
    const byWallet = new Map<string, Array<Watcher>>()
    for (const r of rows) {
      const key = watchKey(r.chain, r.address)
      let list = byWallet.get(key)
      if (list === undefined) byWallet.set(key, (list = []))
      list.push({ accountId: r.account_id, label: r.label })
    }
    return new WatchIndex(byWallet, rows.length)
  }

  watchers(chain: ChainId, address: string): ReadonlyArray<Watcher> | undefined {
    return this.byWallet.get(watchKey(chain, address))
  }
}

/** One event for one watching account. */
export interface TrackedNotice {
  readonly key: string
  readonly event: "tracked_wallet.traded" | "tracked_wallet.launched"
  readonly accountId: string
  readonly data: Record<string, unknown>
  /** The watched wallet, for the own-wallet exclusion of trades. */
  readonly wallet: { readonly chain: ChainId; readonly address: string }
}

/** What the runner knows of a market (its symbol and quote asset), from the market index. */
export interface MarketFacts {
  readonly symbol: string
  readonly quoteMint: string
  readonly quoteDecimals: number
}

export interface NoticeContext {
  /** The market, when it is known (`tokenSymbol`, and the quote asset `usdAmount` is priced in). */
  readonly marketOf?: (chain: ChainId, mint: string) => MarketFacts | undefined
  /** USD of quote raw units as a decimal string, when the quote asset has a price. */
  readonly usdOf?: (chain: ChainId, market: MarketFacts, quoteRaw: bigint) => string | undefined
}

/** The notices one chain event gives (pure). Events of other kinds, and unwatched wallets, give none. */
export const noticesOf = (index: WatchIndex, e: ChainEvent, context: NoticeContext, out: Array<TrackedNotice>): void => {
  if (e._tag === "Trade") {
    const watchers = index.watchers(e.chain, e.trader)
    if (watchers === undefined) return
    const market = context.marketOf?.(e.chain, e.mint)
    const symbol = market?.symbol
    // The quote that crossed the venue (the trade's volume, as the market's statistics count it).
    const usd = market === undefined ? undefined : context.usdOf?.(e.chain, market, tradeVolumeRaw(e))
    const at = new Date(e.timestampMs).toISOString()
    for (const w of watchers) {
      out.push({
        key: `tracked_wallet.traded:${e.id}`,
        event: "tracked_wallet.traded",
        accountId: w.accountId,
        wallet: { chain: e.chain, address: e.trader },
        data: {
          chain: e.chain,
          wallet: e.trader,
          ...(w.label !== null ? { label: w.label } : {}),
          side: e.side,
          signature: e.signature,
          tokenMint: e.mint,
          ...(symbol !== undefined && symbol !== "" ? { tokenSymbol: symbol } : {}),
          ...(usd !== undefined ? { usdAmount: usd } : {}),
          at
        }
      })
    }
  } else if (e._tag === "CurveCreated") {
    const watchers = index.watchers(e.chain, e.creator)
    if (watchers === undefined) return
    const at = new Date(e.timestampMs).toISOString()
    for (const w of watchers) {
      out.push({
        key: `tracked_wallet.launched:${e.chain}:${e.mint}`,
        event: "tracked_wallet.launched",
        accountId: w.accountId,
        wallet: { chain: e.chain, address: e.creator },
        data: { chain: e.chain, wallet: e.creator, ...(w.label !== null ? { label: w.label } : {}), mint: e.mint, ...(e.symbol !== "" ? { symbol: e.symbol } : {}), at }
      })
    }
  }
}

/** Writes notices in one transaction (idempotent); returns the deliveries recorded now. */
export const enqueueTracked = (notices: ReadonlyArray<TrackedNotice>): Effect.Effect<number, SqlError, SqlClient.SqlClient> =>
  notices.length === 0
    ? Effect.succeed(0)
    : Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.withTransaction(
          Effect.reduce(notices, 0, (n, x) =>
            Effect.map(
              enqueueKeyed(x.key, x.event, x.data, {
                accountId: x.accountId,
                ...(x.event === "tracked_wallet.traded" ? { exceptOwnWallet: x.wallet } : {})
              }),
              (k) => n + k
            )
          )
        )
      )

export interface TrackedWalletsOptions {
  readonly marketOf?: NoticeContext["marketOf"]
  /** Prices for `usdAmount`, read with each watchlist reload (absent: no `usdAmount`). */
  readonly prices?: PriceSourceShape
  /** Most watchlist rows held (default 1,000,000: 5,000 accounts at the 200 cap). */
  readonly maxEntries: number
  /** Longest use of one watchlist snapshot (default 2,000 ms). */
  readonly refreshMs: number
  /** Records per bus batch (default 2,000). */
  readonly maxBatch: number
}

export const trackedWalletsDefaults: TrackedWalletsOptions = { maxEntries: 1_000_000, refreshMs: 2_000, maxBatch: 2_000 }

export interface TrackedWalletsStats {
  readonly received: number
  readonly notices: number
  readonly recorded: number
  readonly entries: number
  readonly reloads: number
}

export interface TrackedWalletsRunner {
  /** Reloads the watchlist now (the routes of this process call it after a change; tests). */
  readonly refresh: Effect.Effect<void, SqlError>
  readonly stats: () => TrackedWalletsStats
}

/** The watchlist's change count (`md_watchlist_version`, bumped by every add and remove). */
const watchlistVersion = (sql: SqlClient.SqlClient) =>
  Effect.map(sql<{ version: string }>`SELECT version::text AS version FROM md_watchlist_version WHERE id = 1`, (rows) => rows[0]?.version ?? "")

const loadIndex = (sql: SqlClient.SqlClient, maxEntries: number) =>
  Effect.map(
    sql<{ chain: ChainId; address: string; account_id: string; label: string | null }>`
      SELECT chain, address, account_id, label FROM md_watchlist ORDER BY created_at, id LIMIT ${maxEntries}`,
    (rows) => WatchIndex.of(rows)
  )

/** Every quote asset a market may trade against. */
const QuoteAssetIds = [...new Set(QuotePairs.map((p) => p.id))]

/** Subscribes to `chain.events` in the current scope. */
export const runTrackedWallets = (
  bus: BusShape,
  options: Partial<TrackedWalletsOptions> = {}
): Effect.Effect<TrackedWalletsRunner, SqlError | BusError, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const o = { ...trackedWalletsDefaults, ...options }
    for (const name of ["maxEntries", "refreshMs", "maxBatch"] as const) {
      if (!Number.isSafeInteger(o[name]) || o[name] < 1) return yield* Effect.dieMessage(`runTrackedWallets: ${name} must be a positive integer`)
    }
    const sql = yield* SqlClient.SqlClient
    const stats = { received: 0, notices: 0, recorded: 0, entries: 0, reloads: 0 }
    // The version read before the load it describes: a change committed in between reloads again next pass.
    let loadedVersion = yield* watchlistVersion(sql)
    let index = yield* loadIndex(sql, o.maxEntries)
    // The quote assets' prices as of the last reload (a notification's amount, not a quote).
    let prices: ReadonlyMap<string, UsdPrice> = new Map()
    const readPrices = (source: PriceSourceShape) =>
      Effect.forEach(QuoteAssetIds, (id) => Effect.option(source.usd(id)), { concurrency: 1 }).pipe(
        Effect.map((read) => {
          const next = new Map<string, UsdPrice>()
          read.forEach((p, i) => {
            if (p._tag === "Some") next.set(QuoteAssetIds[i]!, p.value)
          })
          prices = next
        })
      )
    if (o.prices !== undefined) yield* readPrices(o.prices)
    const context: NoticeContext = {
      ...(o.marketOf !== undefined ? { marketOf: o.marketOf } : {}),
      usdOf: (chain, market, quoteRaw) => {
        const pair = quotePairOf(chain, market.quoteMint)
        const price = pair === undefined ? undefined : prices.get(pair.id)
        return price === undefined ? undefined : (usdOf(quoteRaw, market.quoteDecimals, price) ?? undefined)
      }
    }
    // Reloads only when the watchlist changed since the last load (its version moved).
    const reload = Effect.flatMap(watchlistVersion(sql), (version) =>
      version === loadedVersion
        ? Effect.void
        : Effect.map(loadIndex(sql, o.maxEntries), (next) => {
            loadedVersion = version
            index = next
            stats.entries = next.entries
            stats.reloads++
            if (next.entries >= o.maxEntries) return Effect.logWarning(`tracked wallets: the watchlist holds ${o.maxEntries} rows or more; newer rows are not watched`)
            return Effect.void
          }).pipe(Effect.flatten)
    )
    const refresh = reload.pipe(Effect.zipRight(o.prices === undefined ? Effect.void : readPrices(o.prices)))
    stats.entries = index.entries
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(Duration.millis(o.refreshMs)),
          refresh.pipe(Effect.catchAll((e) => Effect.logWarning("tracked wallets: cannot reload the watchlist; using the previous one", e.message)))
        )
      )
    )

    const onBatch = (batch: BusBatch) =>
      Effect.suspend(() => {
        stats.received += batch.records.length
        const notices: Array<TrackedNotice> = []
        for (const record of batch.records) {
          const decoded = decodeChainEvent(record.value)
          if (Either.isRight(decoded)) noticesOf(index, decoded.right, context, notices)
        }
        if (notices.length === 0) return Effect.void
        stats.notices += notices.length
        return enqueueTracked(notices).pipe(
          Effect.tap((n) => Effect.sync(() => (stats.recorded += n))),
          Effect.provideService(SqlClient.SqlClient, sql),
          // The bus redelivers a batch whose handler failed (never skips it).
          Effect.tapError((e) => Effect.logWarning("tracked wallets: the outbox write failed; the batch is redelivered", e.message)),
          Effect.asVoid
        )
      })

    yield* bus.subscribe({ group: TRACKED_WALLETS_GROUP, topic: Topics.chainEvents, fromBeginning: false, maxBatch: o.maxBatch }, onBatch)
    return { refresh, stats: () => ({ ...stats }) }
  })

/**
 * The runner for the engine's lifetime (the `all` and `actors` roles), over the market index
 * (symbols, quote assets) and the price source (`usdAmount`).
 */
export const layer = (
  options: Partial<Omit<TrackedWalletsOptions, "marketOf" | "prices">> = {}
): Layer.Layer<never, SqlError | BusError, Bus | SqlClient.SqlClient | MarketIndex | PriceSource> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const bus = yield* Bus
      const index = yield* MarketIndex
      const prices = yield* PriceSource
      yield* runTrackedWallets(bus, { ...options, prices, marketOf: (chain, mint) => index.market(chain, mint)?.identity })
    })
  )

/** The real tracker over `Database.layerTest`; the bus, the market index and the prices are the test's. */
export const layerTest = (options: Partial<Omit<TrackedWalletsOptions, "marketOf" | "prices">> = {}) => layer(options).pipe(Layer.provide(Database.layerTest))
