/**
 * `ChainEvent`: what the ingesters publish to `chain.events` (keyed `chain:mint`) and what the
 * actors, the ClickHouse writer and the signal detectors consume. Chain-neutral: Solana and Hood
 * both map into these variants.
 *
 * Invariants:
 * - `position` is the one total-order key (STYLE.md): fixed-width, so string order is chain
 *   order. Solana `s:<slot 20>:<txIndex 6>:<ixIndex 4>`, Hood `h:<block 20>:<logIndex 6>:0000`.
 *   Within one mint, events are published in position order; actors skip a position at or
 *   below the last one they applied, which makes replay and duplicate delivery harmless.
 * - `id` is unique per event (`<chain>:<signature or tx hash>:<instruction or log index>`); the
 *   ClickHouse trades table is idempotent on it.
 * - Amounts are `bigint` raw units; on the wire they are decimal strings (Schema `BigInt`).
 * - `Retracted` (Hood reorgs) names the ids of events a removed block carried; consumers undo them.
 */
import { Schema } from "effect"

export const ChainId = Schema.Literal("solana", "hood")
export type ChainId = typeof ChainId.Type

const Raw = Schema.BigInt // decimal string on the wire, bigint in memory

const Base = {
  id: Schema.String,
  position: Schema.String,
  chain: ChainId,
  mint: Schema.String,
  /** Block time in ms since the epoch (slot time on Solana, block timestamp on Hood). */
  timestampMs: Schema.Number,
  /** Transaction signature (Solana) or hash (Hood). */
  signature: Schema.String
}

export const CurveMode = Schema.Literal("open", "exclusive", "exp-a", "exp-b", "exp-c", "exp-custom")
export type CurveMode = typeof CurveMode.Type

export class CurveCreated extends Schema.TaggedClass<CurveCreated>()("CurveCreated", {
  ...Base,
  curve: Schema.String,
  creator: Schema.String,
  quoteMint: Schema.String,
  quoteDecimals: Schema.Number,
  decimals: Schema.Number,
  virtualQuoteRaw: Raw,
  thresholdRaw: Raw,
  supplyRaw: Raw,
  tokenReserveRaw: Raw,
  stakerAllocationBps: Schema.Number,
  feeBps: Schema.Number,
  creatorFeeBps: Schema.Number,
  mode: CurveMode,
  name: Schema.String,
  symbol: Schema.String,
  uri: Schema.String,
  /** Hood only: `v3` or `v4`; null on Solana. */
  dexVersion: Schema.NullOr(Schema.Literal("v3", "v4")),
  /** Hood only: the factory's config hash; null on Solana. */
  configHash: Schema.NullOr(Schema.String)
}) {}

export class Trade extends Schema.TaggedClass<Trade>()("Trade", {
  ...Base,
  /** `curve` while the bonding curve trades, `pool` on the graduated venue. */
  venue: Schema.Literal("curve", "pool"),
  side: Schema.Literal("buy", "sell"),
  trader: Schema.String,
  /** Quote in (buy) or tokens in (sell), as sent; on a Hood capped buy, the whole amount sent. */
  amountInRaw: Raw,
  amountOutRaw: Raw,
  feeRaw: Raw,
  /** Hood capped-refund crossing: quote returned and quote actually used; 0 and amountIn otherwise. */
  refundRaw: Raw,
  quoteConsumedRaw: Raw,
  /** Reserves after the trade: virtual on the curve, actual on the pool. */
  quoteReserveRaw: Raw,
  tokenReserveRaw: Raw,
  /** Curve only: real quote raised after the trade (net of fees). */
  realQuoteRaw: Raw,
  crossesGraduation: Schema.Boolean
}) {}

export class CurveCompleted extends Schema.TaggedClass<CurveCompleted>()("CurveCompleted", {
  ...Base,
  curve: Schema.String,
  realQuoteRaw: Raw
}) {}

export class CurveMigrated extends Schema.TaggedClass<CurveMigrated>()("CurveMigrated", {
  ...Base,
  /** Solana: the pool account; Hood: null (spec 2.9: poolAddress is always null on Hood). */
  pool: Schema.NullOr(Schema.String),
  quoteRaw: Raw,
  tokensRaw: Raw,
  /** The graduated venue's fee in bps, as read now. */
  feeBps: Schema.Number,
  /**
   * Hood only: the graduated pool's real address. Not public (spec 2.9: `poolAddress` is always
   * null on Hood); the actors keep it for the mark. Absent on Solana and on older Hood events.
   */
  dexPool: Schema.optionalWith(Schema.String, { exact: true })
}) {}

/** The migration keeper's progress on a completed curve (spec 3.6 migration status). */
export class MigrationProgress extends Schema.TaggedClass<MigrationProgress>()("MigrationProgress", {
  ...Base,
  status: Schema.Literal("in_progress", "delayed", "cancelled"),
  attempts: Schema.Number,
  nextAttemptAtMs: Schema.NullOr(Schema.Number),
  gaveUpAtMs: Schema.NullOr(Schema.Number),
  lastError: Schema.NullOr(Schema.String)
}) {}

export class CreatorFeeClaimed extends Schema.TaggedClass<CreatorFeeClaimed>()("CreatorFeeClaimed", {
  ...Base,
  recipient: Schema.String,
  amountRaw: Raw
}) {}

/**
 * Hood recovery (spec 2.9 recovery block): the curve's recovery figures, all read at ONE block
 * (`snapshotBlock`, the block of the log that caused the read). `cause` `started`: the keeper's
 * `cancelMigration` put the curve in recovery (the market moves to `recovery`, migration
 * `cancelled`); `claimed`: a holder's `claimRecovery` (only `surrenderedRaw` moves).
 */
export class RecoverySnapshot extends Schema.TaggedClass<RecoverySnapshot>()("RecoverySnapshot", {
  ...Base,
  cause: Schema.Literal("started", "claimed"),
  curve: Schema.String,
  /** The quote token (the zero address means native ETH). */
  quoteToken: Schema.String,
  reserveSnapshotRaw: Raw,
  eligibleSupplyRaw: Raw,
  surrenderedRaw: Raw,
  snapshotBlock: Raw
}) {}

/** Hood reorg: the events with these ids were on a block that is no longer canonical. */
export class Retracted extends Schema.TaggedClass<Retracted>()("Retracted", {
  ...Base,
  retractedIds: Schema.Array(Schema.String)
}) {}

export const ChainEvent = Schema.Union(CurveCreated, Trade, CurveCompleted, CurveMigrated, MigrationProgress, CreatorFeeClaimed, Retracted, RecoverySnapshot)
export type ChainEvent = typeof ChainEvent.Type

/** The bus key: one partition owns a mint, so a mint's events stay in order. */
export const busKey = (e: { readonly chain: ChainId; readonly mint: string }): string => `${e.chain}:${e.mint}`

const pad = (n: bigint | number, width: number): string => n.toString().padStart(width, "0")

export const solanaPosition = (slot: bigint, txIndex: number, ixIndex: number): string =>
  `s:${pad(slot, 20)}:${pad(txIndex, 6)}:${pad(ixIndex, 4)}`

/** The slot of a Solana position (`solanaPosition`'s inverse for the slot); undefined for any other position. */
export const solanaSlotOf = (position: string): bigint | undefined => {
  if (position.length < 22 || !position.startsWith("s:")) return undefined
  const digits = position.slice(2, 22)
  return /^[0-9]{20}$/.test(digits) ? BigInt(digits) : undefined
}

export const hoodPosition = (block: bigint, logIndex: number): string => `h:${pad(block, 20)}:${pad(logIndex, 6)}:0000`

const encodeJson = Schema.encodeSync(Schema.parseJson(ChainEvent))
const decodeJson = Schema.decodeUnknownEither(Schema.parseJson(ChainEvent))
const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()

/**
 * The Schema codec: the contract's last word. Hot paths use `ChainEventCodec.ts`
 * (`encodeChainEvent`/`decodeChainEvent`), which agrees with these and falls back to them.
 */
export const encodeChainEventStrict = (e: ChainEvent): Uint8Array => utf8.encode(encodeJson(e))

/** Never throws: a value that is not a `ChainEvent` comes back as `Left` with the parse error. */
export const decodeChainEventStrict = (bytes: Uint8Array | string) => decodeJson(typeof bytes === "string" ? bytes : fromUtf8.decode(bytes))
