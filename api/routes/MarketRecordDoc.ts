/**
 * The market record as the OpenAPI document shows it (spec 2.9, issue 32 item 1): a closed object
 * naming every member `actors/market/MarketRecord.ts`'s `marketRecord` writes, so the generated
 * client types it and the contract check fails a member the record gains without its schema. (The
 * feed rows' schemas are in `MarketRoutes.ts`, `FeedRow` and `FeedRowProjected`.)
 */
import { Schema } from "effect"
import { CurveModes } from "../../src/chain/solana/program/accounts/Common.js"
import { SocialNames } from "../../actors/TokenMetadata.js"
import { ChainId, DecimalString, RawAmount } from "../ResponseSchemas.js"

export const MarketLifecycle = Schema.Literal("trading", "completed", "migrated", "recovery")
const IsoTime = Schema.String.annotations({ description: "ISO 8601 time" })

/** The statistics of a market record and a feed row (quote units as decimals, counts as integers). */
export const MarketStatistics = {
  price: Schema.NullOr(DecimalString).annotations({ description: "Quote units per whole token; null before the curve has a price" }),
  marketCap: Schema.NullOr(DecimalString),
  volume1h: DecimalString,
  trades1h: Schema.Int,
  volume24h: DecimalString,
  trades24h: Schema.Int,
  buys24h: Schema.Int,
  sells24h: Schema.Int,
  volumeTotal: DecimalString,
  tradesTotal: Schema.Int,
  lastTradeAt: Schema.NullOr(IsoTime)
}

const Socials = Schema.Struct(Object.fromEntries(SocialNames.map((n) => [n, Schema.optional(Schema.String)])) as { [K in (typeof SocialNames)[number]]: Schema.optional<typeof Schema.String> })

const Migration = Schema.Struct({
  status: Schema.Literal("not_started", "in_progress", "completed", "delayed", "cancelled"),
  reserveRaw: Schema.optional(RawAmount).annotations({ description: "A Solana curve while trading: its quote reserve" }),
  thresholdRaw: Schema.optional(RawAmount),
  progressBps: Schema.optional(Schema.Int),
  attempts: Schema.optional(Schema.Int),
  nextAttemptAt: Schema.optional(Schema.NullOr(IsoTime)),
  migratedAt: Schema.optional(IsoTime),
  gaveUpAt: Schema.optional(Schema.NullOr(IsoTime))
}).annotations({ identifier: "MarketMigration" })

const Recovery = Schema.Struct({
  curve: Schema.String,
  quoteToken: Schema.String.annotations({ description: "The zero address means native ETH" }),
  reserveSnapshotRaw: Schema.NullOr(RawAmount),
  eligibleSupplyRaw: Schema.NullOr(RawAmount),
  surrenderedRaw: Schema.NullOr(RawAmount),
  method: Schema.Literal("claimRecovery(uint256)"),
  requiresApprovalTo: Schema.String
}).annotations({ identifier: "MarketRecovery" })

export const MarketRecordDoc = Schema.Struct({
  chain: ChainId,
  mint: Schema.String,
  lifecycle: MarketLifecycle,
  buysOpen: Schema.Boolean,
  sellsOpen: Schema.Boolean,
  curveAddress: Schema.String,
  poolAddress: Schema.NullOr(Schema.String),
  quoteMint: Schema.String,
  feeBps: Schema.Int,
  graduationVenue: Schema.Literal("dex-solana-v2", "dex-evm-v3", "dex-evm-v4"),
  tier: Schema.NullOr(Schema.Literal("open", "exclusive")),
  mode: Schema.Literal(...CurveModes),
  crossingModel: Schema.Literal("full-fill-surplus", "capped-refund"),
  candleLaunched: Schema.Boolean,
  launchpad: Schema.NullOr(Schema.String),
  venue: Schema.NullOr(Schema.Literal("svc-curve", "aggregator", "dex", "hood-dex")),
  trade: Schema.Struct({
    endpoint: Schema.String,
    routable: Schema.Boolean,
    reason: Schema.optional(Schema.Literal("solana_graduating", "hood_graduating", "migration_delayed", "market_recovery"))
  }),
  decimals: Schema.Int,
  quoteDecimals: Schema.Int,
  metadata: Schema.Struct({ name: Schema.String, symbol: Schema.String, image: Schema.NullOr(Schema.String), socials: Schema.NullOr(Socials) }),
  migration: Migration,
  recovery: Schema.optional(Recovery).annotations({ description: "Lifecycle `recovery` only" }),
  creator: Schema.String,
  createdAt: Schema.NullOr(IsoTime),
  supplyRaw: RawAmount,
  progressBps: Schema.Int,
  ...MarketStatistics,
  statsAsOf: IsoTime
}).annotations({ identifier: "MarketRecord", description: "Spec 2.9 market record: lifecycle, trade flags, addresses, fees, venue, migration block, statistics" })
