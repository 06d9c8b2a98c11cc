/**
 * The detectors' inputs beyond the trade stream (USD prices, tracked wallets, KOL labels) and
 * their thresholds, windows and bounds. Every number here is documented in docs/signals.md; a
 * change here is a change of the product's definitions and must be written there too.
 *
 * The inputs are functions handed in at construction, so the steps stay deterministic for a
 * given input: with the same prices and the same tracking data, a replay emits the same signals.
 */
import type { ChainId } from "../../ingest/ChainEvent.js"
import { usd, type UsdPriceFn } from "../../src/domain/Signal.js"

/** What the detectors need to know about a tracked wallet (src/services/tracking owns the data). */
export interface TrackedWalletInfo {
  readonly id: string
  /** Group ids the wallet belongs to, sorted. */
  readonly groups: ReadonlyArray<string>
}

/** A KOL label for a social author (src/services/tracking). */
export interface KolInfo {
  readonly id: string
  readonly handle: string
  /** 0..40: added to the kol_mention base confidence (docs/signals.md). */
  readonly weight: number
}

export interface SignalInputs {
  readonly usdPrice: UsdPriceFn
  readonly trackedWallet: (chain: ChainId, address: string) => TrackedWalletInfo | undefined
  readonly kolByHandle: (handle: string) => KolInfo | undefined
}

export interface SignalConfig {
  readonly confluence: {
    /** Distinct tracked wallets that must buy within the window (rule param `wallets`, at least 2). */
    readonly minWallets: number
    readonly windowMs: number
    /** A buy counts only from this size (micro-USD). */
    readonly minBuyUsdMicros: bigint
    /** Buys remembered per token (oldest dropped first). */
    readonly maxBuys: number
  }
  readonly deployer: {
    /** A deployer's own buy (after its launch transaction) or sell counts from this size (micro-USD). */
    readonly minTradeUsdMicros: bigint
    /** One signal per side per token within this time. */
    readonly cooldownMs: number
    /** Relaunch: least earlier launches of the creator that graduated. */
    readonly minPriorGraduated: number
    /** Creators (and mints → creator) remembered per chain, least recently used evicted. */
    readonly maxCreators: number
    readonly maxMints: number
  }
  readonly largeMove: {
    /** Up: price at least (1 + upBps/10000) × the window's lowest; down: at most (1 − downBps/10000) × its highest. */
    readonly upBps: number
    readonly downBps: number
    readonly windowMs: number
    /** Quote volume of the window's trades, at least (micro-USD). */
    readonly minWindowVolumeUsdMicros: bigint
    /** Price samples kept per token (oldest dropped first). */
    readonly maxSamples: number
  }
  readonly dormancy: {
    /** Silence that makes a token or a tracked wallet dormant (rule param `days`). */
    readonly dormantMs: number
    /** Tracked wallets' last activity remembered per chain. */
    readonly maxWallets: number
  }
  readonly intraBook: {
    readonly windowMs: number
    readonly minLegUsdMicros: bigint
    /** Group legs kept per token; group cooldowns kept per token. */
    readonly maxLegs: number
    readonly maxGroupCooldowns: number
  }
  readonly newTicker: {
    /** Symbols remembered per chain (least recently seen evicted). */
    readonly maxSymbols: number
    /** New-ticker launches waiting for their first buy, per chain; and how long one waits. */
    readonly maxPending: number
    readonly pendingMs: number
  }
  readonly distribution: {
    /** Holders ranked as "top". */
    readonly topN: number
    /** Holders tracked per token (smallest evicted). */
    readonly maxHolders: number
    readonly windowMs: number
    /** Top holders' sells in the window, at least (micro-USD). */
    readonly minSellUsdMicros: bigint
    /** Other wallets' buys in the window, at least this share of the top holders' sells (bps of quote). */
    readonly minBuyRatioBps: number
    readonly maxLegs: number
  }
  readonly kolMention: {
    /** One signal per KOL per token within this time. */
    readonly cooldownMs: number
    readonly maxKolsPerToken: number
  }
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

export const defaultSignalConfig: SignalConfig = {
  confluence: { minWallets: 3, windowMs: 30 * MINUTE, minBuyUsdMicros: usd(50), maxBuys: 64 },
  deployer: { minTradeUsdMicros: usd(100), cooldownMs: 5 * MINUTE, minPriorGraduated: 1, maxCreators: 20_000, maxMints: 100_000 },
  largeMove: { upBps: 5000, downBps: 3300, windowMs: 5 * MINUTE, minWindowVolumeUsdMicros: usd(1000), maxSamples: 64 },
  dormancy: { dormantMs: 7 * DAY, maxWallets: 20_000 },
  intraBook: { windowMs: 10 * MINUTE, minLegUsdMicros: usd(50), maxLegs: 64, maxGroupCooldowns: 16 },
  newTicker: { maxSymbols: 100_000, maxPending: 10_000, pendingMs: HOUR },
  distribution: { topN: 10, maxHolders: 64, windowMs: 15 * MINUTE, minSellUsdMicros: usd(500), minBuyRatioBps: 5000, maxLegs: 64 },
  kolMention: { cooldownMs: HOUR, maxKolsPerToken: 32 }
}

/** A config with some sections partly overridden (tests, rules). */
export const signalConfig = (overrides: { readonly [K in keyof SignalConfig]?: Partial<SignalConfig[K]> } = {}): SignalConfig => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(defaultSignalConfig) as Array<keyof SignalConfig>) {
    out[key] = { ...defaultSignalConfig[key], ...(overrides[key] ?? {}) }
  }
  return out as unknown as SignalConfig
}
