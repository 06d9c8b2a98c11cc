/**
 * MarketActor: the pure state machine of one market (one mint on one chain), driven by `ChainEvent`s.
 * `step(state, event) -> [state, outputs]` owns the spec 3.6 lifecycle (trading → completed →
 * migrated, recovery on Hood) and migration status, reserves and progress, price inputs, trade
 * statistics, idempotence and reorg rollback. The runtime (actors/runtime/) only routes and persists.
 *
 * Invariants:
 * - Pure and deterministic: no clock, no randomness, inputs never mutated. A step that changes
 *   nothing returns the SAME state object (the runtime relies on identity to skip work).
 * - At most once per position: an event whose `position` is ≤ the market's `lastPosition`, or whose
 *   id was retracted, changes nothing. So duplicates and replays from any offset are harmless.
 * - `Retracted` is exempt from the position gate (its own position says nothing about the events it
 *   names). It undoes the named events that are still in the market's retract window: the state
 *   is rebuilt from the window's base by re-applying the surviving events, and the undone events
 *   above the base's position are remembered by id so a replayed copy of them is skipped (at or
 *   below it, the position gate skips them: no rollback goes below the base). The window holds the last
 *   `retractHistory[chain]` applied events (default 8 on Hood, 0 on Solana, which ingests at
 *   `confirmed` and never retracts). An id beyond the window (or never applied) cannot be undone:
 *   the step reports `RetractionUnresolved` and keeps the state.
 * - Reserves are what the chain reported after each trade (the event is the truth); a Hood
 *   capped-refund crossing therefore leaves realQuote == G exactly, a Solana crossing may exceed G.
 * - Everything held is bounded: the windows in `internal/tradeWindows.ts`, the retract window and
 *   its retracted ids (each at most the history limit). On Hood the retract window is also bounded
 *   by block depth: an event `retractDepthBlocks` (the ingester's reorg window) below a newer one
 *   can never be retracted, so it is folded into the base on the market's next event, or by the
 *   runtime's sweep (`makeTrimHistory`) when the market stays idle.
 */
import { Either } from "effect"
import type { ChainEvent, ChainId, CurveMode } from "../../ingest/ChainEvent.js"
import { decodeKept, encodeKept, isBinary } from "../../ingest/ChainEventBinary.js"
import { decodeChainEvent, encodeChainEvent } from "../../ingest/ChainEventCodec.js"
import type { CurveState } from "../../src/domain/CurveMath.js"
import { approxReserves } from "../orders/internal/PriceBand.js"
import {
  addRecentTrader,
  addToWindow,
  DAY_WINDOW_SLOTS,
  fiveMinuteSlotOf,
  HOUR_WINDOW_SLOTS,
  hourSlotOf,
  type RecentTraders,
  type Slot
} from "./internal/tradeWindows.js"

export type Lifecycle = "trading" | "completed" | "migrated" | "recovery"
export type MigrationStatus = "not_started" | "in_progress" | "completed" | "delayed" | "cancelled"

export interface Migration {
  readonly status: MigrationStatus
  readonly attempts: number
  readonly nextAttemptAtMs: number | null
  readonly gaveUpAtMs: number | null
  readonly lastError: string | null
  readonly migratedAtMs: number | null
}

/** Fixed at creation; shared by reference across every later state of the market. */
export interface MarketParams {
  readonly virtualQuoteRaw: bigint // V
  readonly thresholdRaw: bigint // G
  readonly supplyRaw: bigint
  readonly tokenReserveRaw: bigint // X
  readonly stakerAllocationBps: number
  readonly feeBps: number
  readonly creatorFeeBps: number
}

export interface MarketIdentity {
  readonly curveAddress: string
  readonly creator: string
  readonly quoteMint: string
  readonly quoteDecimals: number
  readonly decimals: number
  readonly name: string
  readonly symbol: string
  readonly uri: string
  readonly mode: CurveMode
  readonly dexVersion: "v3" | "v4" | null
  readonly configHash: string | null
  readonly createdPosition: string
  readonly createdAtMs: number
  readonly createdSignature: string
}

export interface Pool {
  /** Solana: the pool account; Hood: always null (spec 2.9). */
  readonly address: string | null
  /**
   * Hood: the graduated pool's real address (CurveMigrated.dexPool), kept out of the public record
   * (spec 2.9) for the mark read. Absent on Solana.
   */
  readonly dexPool?: string
  readonly feeBps: number
  readonly quoteReserveRaw: bigint
  readonly tokenReserveRaw: bigint
}

export interface TradeStats {
  readonly tradesTotal: number
  readonly buysTotal: number
  readonly volumeTotalRaw: bigint
  readonly lastTradeAtMs: number | null
  /** Five-minute slots of the last hour (sparse, ascending). */
  readonly fiveMinutes: ReadonlyArray<Slot>
  /** Hour slots of the last 24 hours (sparse, ascending). */
  readonly hours: ReadonlyArray<Slot>
  /** The last RECENT_TRADERS_MAX traders, hashed: `[hash, fiveMinuteSlot, ...]` (internal/tradeWindows.ts). */
  readonly recentTraders: RecentTraders
}

export interface MarketCore {
  readonly chain: ChainId
  readonly mint: string
  readonly lastPosition: string
  /** Latest block time among the applied events. */
  readonly lastEventAtMs: number
  readonly identity: MarketIdentity
  readonly params: MarketParams
  /** The bonding curve's reserves as last reported (virtual quote and token, real quote raised). */
  readonly curveState: CurveState
  readonly lifecycle: Lifecycle
  readonly migration: Migration
  readonly pool: Pool | null
  readonly migratedPosition: string | null
  /**
   * Where the curve completed (the trade or `CurveCompleted` that moved it to `completed`). Absent
   * while trading, and on markets that completed before the field existed.
   */
  readonly completedPosition?: string
  readonly stats: TradeStats
  readonly creatorFeesClaimedRaw: bigint
  /** Hood recovery figures (spec 2.9 recovery block), from the latest `RecoverySnapshot`; absent before recovery. */
  readonly recovery?: Recovery
  /**
   * The price the reserves set now (`MarketRecord.priceReserves`) as a float within 2^-49 of it
   * (`PriceBand.approxReserves`; NaN without a price or out of the floats' normal range), for
   * readers that only ask "surely not" (the order books' band). Derived: set by `stepCore` on every
   * event that moves the reserves or the venue, recomputed by the checkpoint codec, never stored;
   * `priceFloatOf(core)` is its definition (pinned by MarketActor.test.ts).
   */
  readonly priceFloat: number
}

/** The recovery block's amounts, all read at one block (`snapshotBlock`). */
export interface Recovery {
  readonly curve: string
  readonly quoteToken: string
  readonly reserveSnapshotRaw: bigint
  readonly eligibleSupplyRaw: bigint
  readonly surrenderedRaw: bigint
  readonly snapshotBlock: bigint
}

export interface RetractWindow {
  /** The core before `events[0]` (undefined: the market did not exist yet). */
  readonly base: MarketCore | undefined
  /** Applied, non-retracted events, oldest first, kept compact (`keep`); at most the chain's history limit. */
  readonly events: ReadonlyArray<KeptEvent>
  /**
   * Events undone by a `Retracted` whose position is above the base's (a rollback can take the
   * market's position back below them, so the position gate alone cannot skip a replayed copy).
   * Pruned as the base moves past them; at most RETRACTED_MAX.
   */
  readonly retracted: ReadonlyArray<RetractedEvent>
}

/**
 * An applied event kept for rollback, compact: its bytes as a one-byte string (a trade in the
 * binary encoding's kept form, ~220 bytes for a Hood trade, whose id then does not repeat its tx
 * hash; any other kind in its bus encoding) and its Hood block (-1 for any other position), which
 * is all the window's slide reads. Decoded only to fold it into the base or to roll it back.
 */
export interface KeptEvent {
  readonly block: number
  readonly wire: string
}

export const keep = (e: ChainEvent): KeptEvent => {
  const bytes = encodeKept(e) ?? encodeChainEvent(e)
  return { block: hoodBlockOf(e.position) ?? -1, wire: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1") }
}

/** The kept event back (the codecs round-trip exactly; a failure is a defect). */
export const unkeep = (k: KeptEvent): ChainEvent => {
  const bytes = Buffer.from(k.wire, "latin1")
  if (isBinary(bytes)) {
    const trade = decodeKept(bytes)
    if (trade === undefined) throw new Error("a kept trade does not decode")
    return trade
  }
  const decoded = decodeChainEvent(bytes)
  if (Either.isLeft(decoded)) throw new Error(`a kept event does not decode: ${decoded.left.message}`)
  return decoded.right
}

export interface RetractedEvent {
  readonly id: string
  readonly position: string
}

export interface MarketState {
  /** Undefined: a tombstone (the market's creation was retracted; the window remembers what was undone). */
  readonly core: MarketCore | undefined
  /** Null when the chain keeps no retract history. */
  readonly window: RetractWindow | null
}

export type MarketOutput =
  | { readonly _tag: "LifecycleChanged"; readonly eventId: string; readonly from: Lifecycle | null; readonly to: Lifecycle }
  | { readonly _tag: "MigrationChanged"; readonly eventId: string; readonly status: MigrationStatus }
  | { readonly _tag: "Anomaly"; readonly eventId: string; readonly reason: string }
  | { readonly _tag: "Ignored"; readonly eventId: string; readonly reason: "unknown_mint" }
  | { readonly _tag: "Undone"; readonly eventId: string; readonly undoneIds: ReadonlyArray<string> }
  | { readonly _tag: "RetractionUnresolved"; readonly eventId: string; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: "Announced"; readonly eventId: string; readonly notice: MarketNotice }

/**
 * A market transition the market's accounts are told about (webhook events of the keys document,
 * section 6). Each happens at most once per market (`migration.delayed` once per exhausted
 * budget), so `(event, chain, mint[, attempts])` names it whatever position the step saw it at;
 * the outbox dedupes on that (`src/services/webhooks/MarketEvents.ts`). Only transitions build
 * one: the trades that change nothing of the lifecycle allocate nothing for it.
 */
export type MarketNotice =
  | { readonly event: "curve.graduated"; readonly chain: ChainId; readonly mint: string; readonly curve: string }
  | { readonly event: "migration.completed"; readonly chain: ChainId; readonly mint: string; readonly pool: string | null; readonly migratedAtMs: number }
  | {
      readonly event: "migration.delayed"
      readonly chain: ChainId
      readonly mint: string
      readonly curve: string
      readonly attempts: number
      readonly lastError: string | null
    }

export type StepResult = readonly [MarketState | undefined, ReadonlyArray<MarketOutput>]

export interface MarketActorConfig {
  /** Applied events kept per market for `Retracted` rollback, per chain. */
  readonly retractHistory: Readonly<Record<ChainId, number>>
  /**
   * Hood: the ingester's reorg window in blocks (`reorgWindowBlocks`). Once an event of block B is
   * on the bus, the ingester never retracts a block at or below B − this (its window ends there),
   * so kept events that deep are folded into the window's base: a market idle for more than the
   * window keeps no history (`trimHistory`).
   */
  readonly retractDepthBlocks?: number
}

/** The Hood ingester's default reorg window. */
export const DEFAULT_RETRACT_DEPTH_BLOCKS = 64

export const defaultConfig: MarketActorConfig = { retractHistory: { solana: 0, hood: 8 }, retractDepthBlocks: DEFAULT_RETRACT_DEPTH_BLOCKS }

const depthOf = (config: MarketActorConfig): number => config.retractDepthBlocks ?? DEFAULT_RETRACT_DEPTH_BLOCKS

/** The block of a Hood position (`h:<block 20>:...`); undefined for any other position. */
export const hoodBlockOf = (position: string): number | undefined =>
  position.charCodeAt(0) === 104 /* h */ && position.charCodeAt(1) === 58 /* : */ ? Number(position.slice(2, 22)) : undefined

/** Largest accepted history limit (memory: each kept trade is ~0.2 KB, `KeptEvent`). */
export const RETRACT_HISTORY_MAX = 1024
/**
 * Most undone events remembered per market. Beyond it the oldest is forgotten; a replayed copy of
 * it could then apply again, which takes more than this many undone events above the market's
 * last position with no canonical event after them (a pathological reorg storm).
 */
export const RETRACTED_MAX = 256

export const actorKey = (chain: ChainId, mint: string): string => `${chain}:${mint}`

/** `priceFloat` of a core with this venue, reserves and decimals: the pool's once migrated onto one, else the curve's. */
export const priceFloatAt = (lifecycle: Lifecycle, pool: Pool | null, curveState: CurveState, identity: MarketIdentity): number =>
  lifecycle === "migrated" && pool !== null
    ? approxReserves(pool.quoteReserveRaw, pool.tokenReserveRaw, identity.decimals, identity.quoteDecimals)
    : approxReserves(curveState.virtualQuoteRaw, curveState.virtualTokenRaw, identity.decimals, identity.quoteDecimals)

/** What a core's `priceFloat` must be (the codec's recomputation, and the step's invariant). */
export const priceFloatOf = (core: Omit<MarketCore, "priceFloat">): number => priceFloatAt(core.lifecycle, core.pool, core.curveState, core.identity)

// ---------------------------------------------------------------------------------------------
// Lifecycle helpers (spec 3.6)

/** Spec 3.6: trading and migrated are open both ways; completed and recovery are closed. */
export const tradeFlags = (lifecycle: Lifecycle): { readonly buysOpen: boolean; readonly sellsOpen: boolean } =>
  lifecycle === "trading" || lifecycle === "migrated" ? OPEN : CLOSED

const OPEN = { buysOpen: true, sellsOpen: true } as const
const CLOSED = { buysOpen: false, sellsOpen: false } as const

const NOT_STARTED: Migration = { status: "not_started", attempts: 0, nextAttemptAtMs: null, gaveUpAtMs: null, lastError: null, migratedAtMs: null }

const EMPTY_STATS: TradeStats = {
  tradesTotal: 0,
  buysTotal: 0,
  volumeTotalRaw: 0n,
  lastTradeAtMs: null,
  fiveMinutes: [],
  hours: [],
  recentTraders: []
}

/**
 * The quote that crossed the venue in a trade (its volume): a buy's gross quote used
 * (`quoteConsumedRaw`, fee included, refund excluded); a sell's quote paid out plus the fee when the
 * fee is charged in quote (the curve on both chains, the Solana pool). Hood pool sells pay their
 * fee in the token, so only `amountOutRaw` counts.
 */
export const tradeVolumeRaw = (e: Extract<ChainEvent, { _tag: "Trade" }>): bigint =>
  e.side === "buy" ? e.quoteConsumedRaw : e.venue === "curve" || e.chain === "solana" ? e.amountOutRaw + e.feeRaw : e.amountOutRaw

const withTrade = (stats: TradeStats, e: Extract<ChainEvent, { _tag: "Trade" }>): TradeStats => {
  const volumeRaw = tradeVolumeRaw(e)
  const isBuy = e.side === "buy"
  return {
    tradesTotal: stats.tradesTotal + 1,
    buysTotal: stats.buysTotal + (isBuy ? 1 : 0),
    volumeTotalRaw: stats.volumeTotalRaw + volumeRaw,
    lastTradeAtMs: stats.lastTradeAtMs === null ? e.timestampMs : Math.max(stats.lastTradeAtMs, e.timestampMs),
    fiveMinutes: addToWindow(stats.fiveMinutes, fiveMinuteSlotOf(e.timestampMs), HOUR_WINDOW_SLOTS, volumeRaw, isBuy),
    hours: addToWindow(stats.hours, hourSlotOf(e.timestampMs), DAY_WINDOW_SLOTS, volumeRaw, isBuy),
    recentTraders: addRecentTrader(stats.recentTraders, e.trader, e.timestampMs)
  }
}

// ---------------------------------------------------------------------------------------------
// The transition function on the market itself (no idempotence, no history)

const advanced = (core: MarketCore, e: ChainEvent): MarketCore => ({
  ...core,
  lastPosition: e.position,
  lastEventAtMs: Math.max(core.lastEventAtMs, e.timestampMs)
})

const anomaly = (out: Array<MarketOutput>, core: MarketCore, e: ChainEvent, reason: string): MarketCore => {
  out.push({ _tag: "Anomaly", eventId: e.id, reason })
  return advanced(core, e)
}

const lifecycleTo = (out: Array<MarketOutput>, e: ChainEvent, from: Lifecycle | null, to: Lifecycle): void => {
  if (from !== to) out.push({ _tag: "LifecycleChanged", eventId: e.id, from, to })
}

const graduated = (out: Array<MarketOutput>, core: MarketCore, e: ChainEvent): void => {
  out.push({ _tag: "Announced", eventId: e.id, notice: { event: "curve.graduated", chain: core.chain, mint: core.mint, curve: core.identity.curveAddress } })
}

const migrationTo = (out: Array<MarketOutput>, e: ChainEvent, from: Migration, to: Migration): void => {
  if (from.status !== to.status) out.push({ _tag: "MigrationChanged", eventId: e.id, status: to.status })
}

/**
 * Applies one (non-retraction) event to the market, without the position gate. Returns `core`
 * itself when the event does not apply at all (an event for a market that does not exist).
 * Events that are impossible in the current state are applied as anomalies: the position advances,
 * nothing else changes, and an `Anomaly` output says why.
 */
export const stepCore = (core: MarketCore | undefined, e: ChainEvent, out: Array<MarketOutput>): MarketCore | undefined => {
  switch (e._tag) {
    case "CurveCreated": {
      if (core !== undefined) return anomaly(out, core, e, "curve_already_created")
      lifecycleTo(out, e, null, "trading")
      return {
        chain: e.chain,
        mint: e.mint,
        lastPosition: e.position,
        lastEventAtMs: e.timestampMs,
        identity: {
          curveAddress: e.curve,
          creator: e.creator,
          quoteMint: e.quoteMint,
          quoteDecimals: e.quoteDecimals,
          decimals: e.decimals,
          name: e.name,
          symbol: e.symbol,
          uri: e.uri,
          mode: e.mode,
          dexVersion: e.dexVersion,
          configHash: e.configHash,
          createdPosition: e.position,
          createdAtMs: e.timestampMs,
          createdSignature: e.signature
        },
        params: {
          virtualQuoteRaw: e.virtualQuoteRaw,
          thresholdRaw: e.thresholdRaw,
          supplyRaw: e.supplyRaw,
          tokenReserveRaw: e.tokenReserveRaw,
          stakerAllocationBps: e.stakerAllocationBps,
          feeBps: e.feeBps,
          creatorFeeBps: e.creatorFeeBps
        },
        curveState: { virtualQuoteRaw: e.virtualQuoteRaw, virtualTokenRaw: e.tokenReserveRaw, realQuoteRaw: 0n, complete: false },
        lifecycle: "trading",
        migration: NOT_STARTED,
        pool: null,
        migratedPosition: null,
        stats: EMPTY_STATS,
        creatorFeesClaimedRaw: 0n,
        priceFloat: approxReserves(e.virtualQuoteRaw, e.tokenReserveRaw, e.decimals, e.quoteDecimals)
      }
    }
    case "Trade": {
      if (core === undefined) {
        out.push({ _tag: "Ignored", eventId: e.id, reason: "unknown_mint" })
        return core
      }
      // The hot path: one copy of the core per trade.
      const stats = withTrade(core.stats, e)
      const lastEventAtMs = e.timestampMs > core.lastEventAtMs ? e.timestampMs : core.lastEventAtMs
      if (e.venue === "pool") {
        if (core.pool === null) {
          out.push({ _tag: "Anomaly", eventId: e.id, reason: "pool_trade_before_migration" })
          return { ...core, lastPosition: e.position, lastEventAtMs, stats }
        }
        const pool: Pool = { ...core.pool, quoteReserveRaw: e.quoteReserveRaw, tokenReserveRaw: e.tokenReserveRaw }
        return { ...core, lastPosition: e.position, lastEventAtMs, stats, pool, priceFloat: priceFloatAt(core.lifecycle, pool, core.curveState, core.identity) }
      }
      if (core.lifecycle !== "trading") out.push({ _tag: "Anomaly", eventId: e.id, reason: `curve_trade_while_${core.lifecycle}` })
      const complete = e.realQuoteRaw >= core.params.thresholdRaw
      const curveState: CurveState = { virtualQuoteRaw: e.quoteReserveRaw, virtualTokenRaw: e.tokenReserveRaw, realQuoteRaw: e.realQuoteRaw, complete }
      const lifecycle: Lifecycle = core.lifecycle === "trading" && (complete || e.crossesGraduation) ? "completed" : core.lifecycle
      const priceFloat = priceFloatAt(lifecycle, core.pool, curveState, core.identity)
      if (lifecycle === core.lifecycle) return { ...core, lastPosition: e.position, lastEventAtMs, stats, curveState, lifecycle, priceFloat }
      // The trade that completed the curve (no conditional spread on the path every other trade takes).
      lifecycleTo(out, e, core.lifecycle, lifecycle)
      graduated(out, core, e)
      return { ...core, lastPosition: e.position, lastEventAtMs, stats, curveState, lifecycle, completedPosition: e.position, priceFloat }
    }
    case "CurveCompleted": {
      if (core === undefined) {
        out.push({ _tag: "Ignored", eventId: e.id, reason: "unknown_mint" })
        return core
      }
      if (core.lifecycle !== "trading" && core.lifecycle !== "completed") return anomaly(out, core, e, `completed_while_${core.lifecycle}`)
      lifecycleTo(out, e, core.lifecycle, "completed")
      if (core.lifecycle === "trading") graduated(out, core, e)
      return {
        ...advanced(core, e),
        curveState: { ...core.curveState, realQuoteRaw: e.realQuoteRaw, complete: true },
        lifecycle: "completed",
        ...(core.lifecycle === "trading" ? { completedPosition: e.position } : {})
      }
    }
    case "MigrationProgress": {
      if (core === undefined) {
        out.push({ _tag: "Ignored", eventId: e.id, reason: "unknown_mint" })
        return core
      }
      if (e.status === "cancelled" && core.chain !== "hood") return anomaly(out, core, e, "cancelled_on_solana")
      if (e.status === "cancelled" && core.lifecycle === "recovery") {
        // The chain's RecoverySnapshot came first: keep its recovery, take the keeper's figures.
        const migration: Migration = {
          ...core.migration,
          attempts: Math.max(core.migration.attempts, e.attempts),
          gaveUpAtMs: e.gaveUpAtMs ?? core.migration.gaveUpAtMs,
          lastError: e.lastError ?? core.migration.lastError
        }
        return { ...advanced(core, e), migration }
      }
      if (core.lifecycle !== "completed") return anomaly(out, core, e, `migration_progress_while_${core.lifecycle}`)
      const migration: Migration = {
        status: e.status,
        attempts: e.attempts,
        nextAttemptAtMs: e.status === "cancelled" ? null : e.nextAttemptAtMs,
        gaveUpAtMs: e.gaveUpAtMs,
        lastError: e.lastError,
        migratedAtMs: null
      }
      const lifecycle: Lifecycle = e.status === "cancelled" ? "recovery" : "completed"
      migrationTo(out, e, core.migration, migration)
      // Keys document section 6: `migration.delayed` is Hood only today (docs/decisions.md).
      if (migration.status === "delayed" && core.migration.status !== "delayed" && core.chain === "hood") {
        out.push({
          _tag: "Announced",
          eventId: e.id,
          notice: { event: "migration.delayed", chain: core.chain, mint: core.mint, curve: core.identity.curveAddress, attempts: migration.attempts, lastError: migration.lastError }
        })
      }
      lifecycleTo(out, e, core.lifecycle, lifecycle)
      return { ...advanced(core, e), migration, lifecycle }
    }
    case "CurveMigrated": {
      if (core === undefined) {
        out.push({ _tag: "Ignored", eventId: e.id, reason: "unknown_mint" })
        return core
      }
      if (core.lifecycle === "migrated" || core.lifecycle === "recovery") return anomaly(out, core, e, `migrated_while_${core.lifecycle}`)
      if (core.lifecycle === "trading") {
        out.push({ _tag: "Anomaly", eventId: e.id, reason: "migrated_without_completion" })
        graduated(out, core, e)
      }
      const migration: Migration = { ...NOT_STARTED, status: "completed", attempts: core.migration.attempts, migratedAtMs: e.timestampMs }
      migrationTo(out, e, core.migration, migration)
      lifecycleTo(out, e, core.lifecycle, "migrated")
      out.push({ _tag: "Announced", eventId: e.id, notice: { event: "migration.completed", chain: core.chain, mint: core.mint, pool: e.pool, migratedAtMs: e.timestampMs } })
      const pool: Pool = {
        address: core.chain === "hood" ? null : e.pool,
        ...(core.chain === "hood" && e.dexPool !== undefined ? { dexPool: e.dexPool } : {}),
        feeBps: e.feeBps,
        quoteReserveRaw: e.quoteRaw,
        tokenReserveRaw: e.tokensRaw
      }
      return {
        ...advanced(core, e),
        curveState: core.curveState.complete ? core.curveState : { ...core.curveState, complete: true },
        lifecycle: "migrated",
        migration,
        pool,
        migratedPosition: e.position,
        priceFloat: priceFloatAt("migrated", pool, core.curveState, core.identity)
      }
    }
    case "RecoverySnapshot": {
      if (core === undefined) {
        out.push({ _tag: "Ignored", eventId: e.id, reason: "unknown_mint" })
        return core
      }
      if (core.chain !== "hood") return anomaly(out, core, e, "recovery_on_solana")
      const recovery: Recovery = {
        curve: e.curve,
        quoteToken: e.quoteToken,
        reserveSnapshotRaw: e.reserveSnapshotRaw,
        eligibleSupplyRaw: e.eligibleSupplyRaw,
        surrenderedRaw: e.surrenderedRaw,
        snapshotBlock: e.snapshotBlock
      }
      if (core.lifecycle === "recovery") {
        // A later read (a claim) replaces the figures; an older block's read never does.
        if (core.recovery !== undefined && core.recovery.snapshotBlock > e.snapshotBlock) return advanced(core, e)
        return { ...advanced(core, e), recovery }
      }
      if (core.lifecycle !== "completed") return anomaly(out, core, e, `recovery_while_${core.lifecycle}`)
      // Spec 3.6: "no pool will open" → cancelled, overriding retries. The keeper's attempts stay;
      // the give-up time is the keeper's when it had given up, else the cancellation's block time.
      const migration: Migration = {
        status: "cancelled",
        attempts: core.migration.attempts,
        nextAttemptAtMs: null,
        gaveUpAtMs: core.migration.gaveUpAtMs ?? e.timestampMs,
        lastError: core.migration.lastError,
        migratedAtMs: null
      }
      migrationTo(out, e, core.migration, migration)
      lifecycleTo(out, e, core.lifecycle, "recovery")
      return { ...advanced(core, e), migration, lifecycle: "recovery", recovery }
    }
    case "CreatorFeeClaimed": {
      if (core === undefined) {
        out.push({ _tag: "Ignored", eventId: e.id, reason: "unknown_mint" })
        return core
      }
      return { ...advanced(core, e), creatorFeesClaimedRaw: core.creatorFeesClaimedRaw + e.amountRaw }
    }
    case "Retracted":
      // Handled by `step` (it needs the retract window); never reaches here from `step`.
      return core
  }
}

// ---------------------------------------------------------------------------------------------
// step: idempotence, retract window, rollback

const historyLimit = (config: MarketActorConfig, chain: ChainId): number =>
  Math.max(0, Math.min(RETRACT_HISTORY_MAX, Math.floor(config.retractHistory[chain])))

const NO_OUTPUTS: ReadonlyArray<MarketOutput> = []
/** Reused by `step` (emptied before each use, copied out when not empty; `step` never re-enters). */
const SCRATCH_OUTPUTS: Array<MarketOutput> = []
/** Outputs of re-applied events nobody reads (the window's slide). */
const DISCARDED_OUTPUTS: Array<MarketOutput> = []

const retract = (state: MarketState | undefined, e: Extract<ChainEvent, { _tag: "Retracted" }>): StepResult => {
  const window = state?.window ?? null
  if (window === null) {
    return [state, state?.core === undefined ? NO_OUTPUTS : [{ _tag: "RetractionUnresolved", eventId: e.id, ids: e.retractedIds }]]
  }
  const ids = new Set(e.retractedIds)
  const undone: Array<ChainEvent> = []
  const survivors: Array<ChainEvent> = []
  const kept: Array<KeptEvent> = []
  for (const k of window.events) {
    const applied = unkeep(k)
    if (ids.has(applied.id)) undone.push(applied)
    else {
      survivors.push(applied)
      kept.push(k)
    }
  }
  const unresolved = e.retractedIds.filter((id) => !undone.some((u) => u.id === id) && !window.retracted.some((r) => r.id === id))
  const outputs: Array<MarketOutput> = []
  if (unresolved.length > 0) outputs.push({ _tag: "RetractionUnresolved", eventId: e.id, ids: unresolved })
  if (undone.length === 0) return [state, outputs.length === 0 ? NO_OUTPUTS : outputs]
  // Rebuild from the base; the transitions the survivors re-emit describe the past, so drop them.
  const scratch: Array<MarketOutput> = []
  let core = window.base
  for (const applied of survivors) core = stepCore(core, applied, scratch)
  const retracted = pruneRetracted(window.retracted.concat(undone.map((u) => ({ id: u.id, position: u.position }))), window.base)
  outputs.push({ _tag: "Undone", eventId: e.id, undoneIds: undone.map((u) => u.id) })
  if ((state?.core?.lifecycle ?? null) !== (core?.lifecycle ?? null) && core !== undefined) {
    outputs.push({ _tag: "LifecycleChanged", eventId: e.id, from: state?.core?.lifecycle ?? null, to: core.lifecycle })
  }
  return [{ core, window: { base: window.base, events: kept, retracted } }, outputs]
}

/**
 * Keeps the undone events a replayed copy of which the position gate might not skip: those above
 * the window base's position (no rollback goes below the base, so the market's position never
 * returns below it). At most RETRACTED_MAX, newest kept.
 */
const pruneRetracted = (retracted: ReadonlyArray<RetractedEvent>, base: MarketCore | undefined): ReadonlyArray<RetractedEvent> => {
  if (retracted.length === 0) return retracted
  const kept = base === undefined ? retracted : retracted.filter((r) => r.position > base.lastPosition)
  return kept.length > RETRACTED_MAX ? kept.slice(kept.length - RETRACTED_MAX) : kept.length === retracted.length ? retracted : kept
}

/** Builds the step function for a configuration (the retract history per chain). */
export const makeStep =
  (config: MarketActorConfig = defaultConfig) =>
  (state: MarketState | undefined, e: ChainEvent): StepResult => {
    const limit = historyLimit(config, e.chain)
    if (e._tag === "Retracted") return retract(state, e)
    const window = state?.window ?? null
    // A replayed copy of an undone event has its id AND position; the same transaction re-included
    // elsewhere after a reorg (same id, another position) is a new event and applies.
    if (window !== null && window.retracted.length > 0 && window.retracted.some((r) => r.id === e.id && r.position === e.position)) {
      return [state, NO_OUTPUTS]
    }
    const core = state?.core
    if (core !== undefined && e.position <= core.lastPosition) return [state, NO_OUTPUTS]
    // Most steps output nothing: collect into a reused array and return the shared empty one then.
    SCRATCH_OUTPUTS.length = 0
    const next = stepCore(core, e, SCRATCH_OUTPUTS)
    const outputs = SCRATCH_OUTPUTS.length === 0 ? NO_OUTPUTS : SCRATCH_OUTPUTS.slice()
    if (next === core) return [state, outputs]
    if (limit === 0) return [{ core: next, window: null }, outputs]
    let base = window?.base
    let events = (window?.events ?? NO_EVENTS).concat([keep(e)])
    // Slide: past the limit, and (Hood) every kept event this event's block has made final.
    let drop = events.length > limit ? events.length - limit : 0
    const head = hoodBlockOf(e.position)
    if (head !== undefined) while (drop < events.length - 1 && isFinal(events[drop]!, head, depthOf(config))) drop++
    if (drop > 0) {
      // Fold the dropped events into the base (deterministic, so it cannot fail now).
      for (let i = 0; i < drop; i++) base = stepCore(base, unkeep(events[i]!), DISCARDED_OUTPUTS)
      DISCARDED_OUTPUTS.length = 0
      events = events.slice(drop)
    }
    const retracted = window === null ? NO_RETRACTED : base === window.base ? window.retracted : pruneRetracted(window.retracted, base)
    return [{ core: next, window: { base, events, retracted } }, outputs]
  }

const NO_EVENTS: ReadonlyArray<KeptEvent> = []
const NO_RETRACTED: ReadonlyArray<RetractedEvent> = []

/** True when no reorg can retract `e` any more once an event of block `head` is on the bus. */
const isFinal = (k: KeptEvent, head: number, depth: number): boolean => k.block >= 0 && k.block + depth <= head

/** The block of the newest event a market keeps as retract history, or undefined when it keeps none. */
export const historyHeldUntil = (state: MarketState): number | undefined => {
  const events = state.window?.events
  if (events === undefined || events.length === 0) return undefined
  const block = events[events.length - 1]!.block
  return block >= 0 ? block : undefined
}

/**
 * The state without the retract history that block `head` has made final (the runtime's sweep of
 * idle markets): those events are folded into the window's base; when all are, the base IS the
 * core (folding every kept event onto the base is how the core was made) and nothing else is kept.
 * Returns the same object when nothing is final. Pure; never changes the core.
 */
export const makeTrimHistory =
  (config: MarketActorConfig = defaultConfig) =>
  (state: MarketState, head: number): MarketState => {
    const window = state.window
    if (window === null || window.events.length === 0) return state
    let drop = 0
    while (drop < window.events.length && isFinal(window.events[drop]!, head, depthOf(config))) drop++
    if (drop === 0) return state
    let base = window.base
    if (drop === window.events.length) base = state.core
    else {
      for (let i = 0; i < drop; i++) base = stepCore(base, unkeep(window.events[i]!), DISCARDED_OUTPUTS)
      DISCARDED_OUTPUTS.length = 0
    }
    const events = drop === window.events.length ? NO_EVENTS : window.events.slice(drop)
    return { core: state.core, window: { base, events, retracted: pruneRetracted(window.retracted, base) } }
  }

/** The step with the default configuration. */
export const step = makeStep(defaultConfig)

/** Fixed-width position of the last applied event ("" for a tombstone), for the checkpoint row. */
export const positionOf = (state: MarketState): string => state.core?.lastPosition ?? ""
