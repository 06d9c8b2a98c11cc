/**
 * Builds what readers see of a market: the spec 2.9 market record and the feed row, from a
 * `MarketCore` and the "as of" time of the trade statistics (the chain clock: the latest block time
 * the engine has applied on that chain, never the wall clock).
 *
 * Definitions (docs: actors/feeds/BUCKETS.md repeats the feed ones):
 * - Reserves: the curve's virtual reserves while the curve trades or is completed, the pool's
 *   reserves after migration (as reported by the latest pool event).
 * - `price`: quote per whole token = quoteReserve·10^decimals / (tokenReserve·10^quoteDecimals),
 *   floored at 18 fractional digits, written as an exact decimal string without trailing zeros
 *   (`"0.00000003015075376"`); null when the token reserve is 0.
 * - `marketCap`: price × total supply in whole quote units, computed exactly as
 *   floor(quoteReserve·supplyRaw / tokenReserve) raw quote units, then written at the quote's decimals.
 * - Volumes are in whole quote units (exact decimal strings), trade counts are integers. `volume1h`
 *   and `trades1h` cover the twelve five-minute slots ending with the slot holding `statsAsOf`;
 *   the 24h figures cover the 24 hour slots ending with the hour holding it. Lifetime totals are exact.
 * - Timestamps are ISO 8601 UTC strings.
 *
 * Invariants: pure; the same core and as-of slot give the same record (the index caches on that).
 */
import type { ChainId } from "../../ingest/ChainEvent.js"
import { graduationVenueOf, crossingModelOf } from "../../src/domain/Chain.js"
import { type CurveParams, formatUnits, progressBps } from "../../src/domain/CurveMath.js"
import {
  DAY_WINDOW_SLOTS,
  distinctTradersInHour,
  FIVE_MINUTES_MS,
  fiveMinuteSlotOf,
  HOUR_WINDOW_SLOTS,
  HOUR_MS,
  windowTotals,
  type WindowTotals
} from "./internal/tradeWindows.js"
import { type TokenMetadataRead, viewOf } from "../TokenMetadata.js"
import { type Lifecycle, type MarketCore, tradeFlags } from "./MarketActor.js"

/** The launchpad id of curves launched here (spec 2.9 `launchpad`). */
export const LAUNCHPAD_ID = "curvestream"
/** The agent quote endpoint the `trade` block speaks about (the trade rail's quote). */
export const AGENT_QUOTE_ENDPOINT = "/api/v1/trade/agent/quote"
export const PRICE_DECIMALS = 18

const PRICE_SCALE = 10n ** BigInt(PRICE_DECIMALS)

const pow10 = (n: number): bigint => 10n ** BigInt(n)

/** Quote and token reserves that set the price now. */
export const priceReserves = (core: MarketCore): { readonly quoteRaw: bigint; readonly tokenRaw: bigint } =>
  core.lifecycle === "migrated" && core.pool !== null
    ? { quoteRaw: core.pool.quoteReserveRaw, tokenRaw: core.pool.tokenReserveRaw }
    : { quoteRaw: core.curveState.virtualQuoteRaw, tokenRaw: core.curveState.virtualTokenRaw }

/** Quote per whole token at these reserves, to `PRICE_DECIMALS` places (floored); null without a token reserve. */
export const reservesPrice = (quoteRaw: bigint, tokenRaw: bigint, decimals: number, quoteDecimals: number): string | null =>
  tokenRaw <= 0n ? null : formatUnits((quoteRaw * pow10(decimals) * PRICE_SCALE) / (tokenRaw * pow10(quoteDecimals)), PRICE_DECIMALS)

export const priceOf = (core: MarketCore): string | null => {
  const { quoteRaw, tokenRaw } = priceReserves(core)
  return reservesPrice(quoteRaw, tokenRaw, core.identity.decimals, core.identity.quoteDecimals)
}

export const marketCapRaw = (core: MarketCore): bigint | null => {
  const { quoteRaw, tokenRaw } = priceReserves(core)
  return tokenRaw <= 0n ? null : (quoteRaw * core.params.supplyRaw) / tokenRaw
}

const curveParamsCache = new WeakMap<MarketCore["params"], CurveParams>()

/** CurveMath's params for a market (cached per market: `params` is shared by all its states). */
export const curveParamsOf = (core: MarketCore): CurveParams => {
  let params = curveParamsCache.get(core.params)
  if (params === undefined) {
    params = {
      virtualQuoteRaw: core.params.virtualQuoteRaw,
      thresholdRaw: core.params.thresholdRaw,
      tokenReserveRaw: core.params.tokenReserveRaw,
      feeBps: BigInt(core.params.feeBps),
      crossingModel: crossingModelOf(core.chain)
    }
    curveParamsCache.set(core.params, params)
  }
  return params
}

/** Progress toward graduation in bps via CurveMath (capped at 10000); 10000 once the curve is done. */
export const progressBpsOf = (core: MarketCore): number =>
  core.lifecycle === "trading" ? Number(progressBps(curveParamsOf(core), core.curveState)) : 10_000

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

/** Spec 2.9 venue: where the token trades now, null while nowhere. */
export const venueOf = (chain: ChainId, lifecycle: Lifecycle): string | null => {
  switch (lifecycle) {
    case "trading":
      return "svc-curve"
    case "migrated":
      return chain === "solana" ? "dex" : "hood-dex"
    case "completed":
    case "recovery":
      return null
  }
}

export interface TradeEligibility {
  readonly endpoint: string
  readonly routable: boolean
  readonly reason?: string
}

/** Spec 2.9 `trade`: stored eligibility for the agent quote endpoint (not a quote). */
export const tradeOf = (core: MarketCore): TradeEligibility => {
  switch (core.lifecycle) {
    case "trading":
    case "migrated":
      return { endpoint: AGENT_QUOTE_ENDPOINT, routable: true }
    case "completed":
      return {
        endpoint: AGENT_QUOTE_ENDPOINT,
        routable: false,
        reason: core.migration.status === "delayed" ? "migration_delayed" : core.chain === "solana" ? "solana_graduating" : "hood_graduating"
      }
    case "recovery":
      return { endpoint: AGENT_QUOTE_ENDPOINT, routable: false, reason: "market_recovery" }
  }
}

/** Spec 2.9 feeBps: the curve's fee until migration, then the graduated venue's fee as reported at migration. */
export const feeBpsOf = (core: MarketCore): number => (core.lifecycle === "migrated" && core.pool !== null ? core.pool.feeBps : core.params.feeBps)

/** Spec 2.9 tier: `open` or `exclusive` when the mode is one of them; null for the exp-* modes. */
export const tierOf = (core: MarketCore): "open" | "exclusive" | null =>
  core.identity.mode === "open" || core.identity.mode === "exclusive" ? core.identity.mode : null

export const migrationBlock = (core: MarketCore): Record<string, unknown> => {
  const m = core.migration
  switch (m.status) {
    case "not_started":
      return core.chain === "solana" && core.lifecycle === "trading"
        ? {
            status: m.status,
            reserveRaw: core.curveState.realQuoteRaw.toString(),
            thresholdRaw: core.params.thresholdRaw.toString(),
            progressBps: progressBpsOf(core)
          }
        : { status: m.status }
    case "in_progress":
      return { status: m.status, attempts: m.attempts, nextAttemptAt: iso(m.nextAttemptAtMs) }
    case "completed":
      return m.migratedAtMs === null ? { status: m.status } : { status: m.status, migratedAt: iso(m.migratedAtMs) }
    case "delayed":
    case "cancelled":
      return core.chain === "hood"
        ? { status: m.status, attempts: m.attempts, nextAttemptAt: iso(m.nextAttemptAtMs), gaveUpAt: iso(m.gaveUpAtMs) }
        : { status: m.status, attempts: m.attempts }
  }
}

/** The statistics as of `asOfMs` (the chain clock). */
export interface MarketStats {
  readonly statsAsOfSlot: number
  readonly hour: WindowTotals
  readonly day: WindowTotals
  readonly distinctTraders1h: number
}

export const statsOf = (core: MarketCore, asOfMs: number): MarketStats => {
  const slot = fiveMinuteSlotOf(asOfMs)
  return {
    statsAsOfSlot: slot,
    hour: windowTotals(core.stats.fiveMinutes, slot, HOUR_WINDOW_SLOTS),
    day: windowTotals(core.stats.hours, Math.floor((slot * FIVE_MINUTES_MS) / HOUR_MS), DAY_WINDOW_SLOTS),
    distinctTraders1h: distinctTradersInHour(core.stats.recentTraders, slot)
  }
}

const statistics = (core: MarketCore, stats: MarketStats) => {
  const qd = core.identity.quoteDecimals
  const mcap = marketCapRaw(core)
  return {
    price: priceOf(core),
    marketCap: mcap === null ? null : formatUnits(mcap, qd),
    volume1h: formatUnits(stats.hour.volumeRaw, qd),
    trades1h: stats.hour.trades,
    volume24h: formatUnits(stats.day.volumeRaw, qd),
    trades24h: stats.day.trades,
    buys24h: stats.day.buys,
    sells24h: stats.day.trades - stats.day.buys,
    volumeTotal: formatUnits(core.stats.volumeTotalRaw, qd),
    tradesTotal: core.stats.tradesTotal,
    lastTradeAt: iso(core.stats.lastTradeAtMs)
  }
}

/**
 * Spec 2.9 recovery block: every amount from the latest `RecoverySnapshot` (all read at one block).
 * A market put in recovery by a keeper's `MigrationProgress` alone (no snapshot yet) shows the
 * static part and null amounts until the chain's snapshot arrives.
 */
export const recoveryBlock = (core: MarketCore) => {
  const r = core.recovery
  const curve = r?.curve ?? core.identity.curveAddress
  return {
    curve,
    quoteToken: r?.quoteToken ?? core.identity.quoteMint,
    reserveSnapshotRaw: r === undefined ? null : r.reserveSnapshotRaw.toString(),
    eligibleSupplyRaw: r === undefined ? null : r.eligibleSupplyRaw.toString(),
    surrenderedRaw: r === undefined ? null : r.surrenderedRaw.toString(),
    method: "claimRecovery(uint256)" as const,
    requiresApprovalTo: curve
  }
}

/** The spec 2.9 market record (the `market` of `{success, market}`), plus statistics. */
export const marketRecord = (core: MarketCore, asOfMs: number, metadata?: TokenMetadataRead) => {
  const { buysOpen, sellsOpen } = tradeFlags(core.lifecycle)
  const stats = statsOf(core, asOfMs)
  const id = core.identity
  const meta = viewOf(id.uri, metadata)
  return {
    chain: core.chain,
    mint: core.mint,
    lifecycle: core.lifecycle,
    buysOpen,
    sellsOpen,
    curveAddress: id.curveAddress,
    poolAddress: core.chain === "hood" ? null : (core.pool?.address ?? null),
    quoteMint: id.quoteMint,
    feeBps: feeBpsOf(core),
    graduationVenue: graduationVenueOf(core.chain, id.dexVersion ?? undefined),
    tier: tierOf(core),
    mode: id.mode,
    crossingModel: crossingModelOf(core.chain),
    candleLaunched: true,
    launchpad: LAUNCHPAD_ID,
    venue: venueOf(core.chain, core.lifecycle),
    trade: tradeOf(core),
    decimals: id.decimals,
    quoteDecimals: id.quoteDecimals,
    metadata: { name: id.name, symbol: id.symbol, image: meta.image, socials: meta.socials },
    migration: migrationBlock(core),
    ...(core.lifecycle === "recovery"
      ? {
          recovery: recoveryBlock(core)
        }
      : {}),
    creator: id.creator,
    createdAt: iso(id.createdAtMs),
    supplyRaw: core.params.supplyRaw.toString(),
    progressBps: progressBpsOf(core),
    ...statistics(core, stats),
    statsAsOf: iso(stats.statsAsOfSlot * FIVE_MINUTES_MS)
  }
}

export type MarketRecord = ReturnType<typeof marketRecord>

/**
 * Spec 2.9 feed row. `isAgent`: launched through an agent key (`AgentLaunches`). The statistics'
 * as-of time is the feed read's `asOf`, not a row field (so rows change only with data).
 */
export const feedRow = (core: MarketCore, asOfMs: number, isAgent = false, metadata?: TokenMetadataRead) => {
  const id = core.identity
  return {
    chain: core.chain,
    address: core.mint,
    name: id.name,
    symbol: id.symbol,
    image: viewOf(id.uri, metadata).image,
    lifecycle: core.lifecycle,
    progressBps: progressBpsOf(core),
    createdAt: iso(id.createdAtMs),
    migratedAt: iso(core.migration.migratedAtMs),
    isAgent,
    ...statistics(core, statsOf(core, asOfMs))
  }
}

export type FeedRow = ReturnType<typeof feedRow>
