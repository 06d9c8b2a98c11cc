/**
 * ChainSignals: the detectors that look across tokens of one chain, one state machine per chain
 * (actor key = the chain id). It owns `new_ticker`, `deployer` relaunches (a creator with a
 * graduated launch launches again) and `dormancy` of tracked wallets; definitions in
 * docs/signals.md.
 *
 * Invariants:
 * - Deterministic for a given input order and inputs; no clock, no randomness; windows run on
 *   block time. Events of different tokens reach one chain actor from several bus partitions,
 *   so their interleaving is the bus's: per token the order is exact (each token is gated by its
 *   own last position), across tokens only block-time windows are used, which a delivery skew of
 *   seconds cannot change (docs/signals.md, "Ordering across tokens").
 * - At most once per token position: an event at or below its token's remembered position does
 *   nothing (returns the same state).
 * - Bounded: every map is capped and least recently used entries are evicted first (`maxMints`,
 *   `maxSymbols`, `maxCreators`, `maxWallets`); launches awaiting their first buy at most
 *   `maxPending`, each for at most `pendingMs`.
 * - Ownership: the maps are owned by the one caller stepping this chain and updated in place (a
 *   copy per event of 100k-entry maps would cost more than the detection); a changed state is a
 *   new top-level object so identity still says "changed". No step throws after it mutated.
 */
import type { ChainEvent, ChainId, CurveCreated, Trade } from "../../ingest/ChainEvent.js"
import { tradeVolumeRaw } from "../market/MarketActor.js"
import { decodeJson, encodeJson } from "./internal/json.js"
import { buildSignal, marketCapQuoteRaw, type Signal, usd, usdMicrosOf, venueOf } from "../../src/domain/Signal.js"
import type { SignalConfig, SignalInputs } from "./SignalConfig.js"

export interface MintInfo {
  readonly position: string
  readonly creator: string | null
  readonly graduated: boolean
  readonly symbol: string | null
  readonly createdAtMs: number | null
  readonly quoteMint: string | null
  readonly quoteDecimals: number
  readonly supplyRaw: bigint
}

export interface CreatorRecord {
  readonly launches: number
  readonly graduated: number
}

export interface PendingTicker {
  readonly createdId: string
  readonly symbol: string
  readonly creator: string
  readonly createdAtMs: number
}

export interface ChainSignalState {
  readonly chain: ChainId
  /** Bumped by every step that changed something. */
  readonly version: number
  readonly mints: Map<string, MintInfo>
  /** Normalized symbol → first mint seen with it. */
  readonly symbols: Map<string, string>
  readonly creators: Map<string, CreatorRecord>
  readonly pending: Map<string, PendingTicker>
  /** Tracked wallet → block time of its latest trade. */
  readonly wallets: Map<string, number>
}

export type ChainStepResult = readonly [ChainSignalState | undefined, ReadonlyArray<Signal>]

export const chainKey = (chain: ChainId): string => chain

export const emptyChainState = (chain: ChainId): ChainSignalState => ({
  chain,
  version: 0,
  mints: new Map(),
  symbols: new Map(),
  creators: new Map(),
  pending: new Map(),
  wallets: new Map()
})

/** The symbol as compared: Unicode NFKC, trimmed, upper case. */
export const normalizeSymbol = (symbol: string): string => symbol.normalize("NFKC").trim().toUpperCase()

/** Sets (moving to the most recent end) and evicts the least recently used beyond `max`. */
const lruSet = <K, V>(map: Map<K, V>, key: K, value: V, max: number): void => {
  map.delete(key)
  map.set(key, value)
  while (map.size > max) {
    const oldest = map.keys().next()
    if (oldest.done === true) break
    map.delete(oldest.value)
  }
}

/** New ticker bonus: a first buy of at least this much. */
const NEW_TICKER_BIG_BUY_MICROS = usd(500)

export const makeChainSignalsStep =
  (config: SignalConfig, inputs: SignalInputs) =>
  (state: ChainSignalState | undefined, event: ChainEvent): ChainStepResult => {
    const s = state ?? emptyChainState(event.chain)
    const known = s.mints.get(event.mint)
    if (known !== undefined && event.position <= known.position) return [state, []]
    if (event._tag === "Retracted") return [state, []]
    const out: Array<Signal> = []
    const maxMints = config.deployer.maxMints
    switch (event._tag) {
      case "CurveCreated":
        onCreated(config, inputs, s, event, out)
        break
      case "CurveCompleted": {
        if (known !== undefined && !known.graduated && known.creator !== null) {
          const rec = s.creators.get(known.creator) ?? { launches: 1, graduated: 0 }
          lruSet(s.creators, known.creator, { launches: rec.launches, graduated: rec.graduated + 1 }, config.deployer.maxCreators)
        }
        lruSet(s.mints, event.mint, { ...(known ?? unknownMint), position: event.position, graduated: true }, maxMints)
        break
      }
      case "Trade":
        onTrade(config, inputs, s, known, event, out)
        break
      default:
        lruSet(s.mints, event.mint, { ...(known ?? unknownMint), position: event.position }, maxMints)
    }
    return [{ ...s, version: s.version + 1 }, out]
  }

const unknownMint: MintInfo = {
  position: "",
  creator: null,
  graduated: false,
  symbol: null,
  createdAtMs: null,
  quoteMint: null,
  quoteDecimals: 0,
  supplyRaw: 0n
}

const onCreated = (config: SignalConfig, inputs: SignalInputs, s: ChainSignalState, e: CurveCreated, out: Array<Signal>): void => {
  const d = config.deployer
  const rec = s.creators.get(e.creator)
  const creatorTracked = inputs.trackedWallet(e.chain, e.creator)
  const price = inputs.usdPrice(e.chain, e.quoteMint)
  const mcapRaw = marketCapQuoteRaw(e.virtualQuoteRaw, e.tokenReserveRaw, e.supplyRaw)
  if (rec !== undefined && rec.graduated >= d.minPriorGraduated) {
    out.push(
      buildSignal({
        pattern: "deployer",
        chain: e.chain,
        asset: e.mint,
        symbol: e.symbol,
        direction: "in",
        wallets: [e.creator],
        walletIds: creatorTracked === undefined ? [] : [creatorTracked.id],
        groups: creatorTracked?.groups ?? [],
        sizeUsdMicros: 0n,
        mcapUsdMicros: mcapRaw === null ? null : usdMicrosOf(mcapRaw, e.quoteDecimals, price),
        createdAtMs: e.timestampMs,
        venue: "svc-curve",
        // 40, +15 per earlier graduated launch (at most 90), +10 when the creator is tracked.
        confidence: Math.min(90, 40 + 15 * rec.graduated) + (creatorTracked === undefined ? 0 : 10),
        atMs: e.timestampMs,
        position: e.position,
        triggerIds: ["relaunch", e.id],
        details: { kind: "relaunch", prior_launches: rec.launches, prior_graduated: rec.graduated }
      })
    )
  }
  lruSet(s.creators, e.creator, { launches: (rec?.launches ?? 0) + 1, graduated: rec?.graduated ?? 0 }, d.maxCreators)

  const norm = normalizeSymbol(e.symbol)
  if (norm !== "") {
    const first = s.symbols.get(norm)
    if (first === undefined) {
      lruSet(s.pending, e.mint, { createdId: e.id, symbol: e.symbol, creator: e.creator, createdAtMs: e.timestampMs }, config.newTicker.maxPending)
    }
    lruSet(s.symbols, norm, first ?? e.mint, config.newTicker.maxSymbols)
  }
  lruSet(
    s.mints,
    e.mint,
    {
      position: e.position,
      creator: e.creator,
      graduated: false,
      symbol: e.symbol,
      createdAtMs: e.timestampMs,
      quoteMint: e.quoteMint,
      quoteDecimals: e.quoteDecimals,
      supplyRaw: e.supplyRaw
    },
    d.maxMints
  )
}

const onTrade = (
  config: SignalConfig,
  inputs: SignalInputs,
  s: ChainSignalState,
  known: MintInfo | undefined,
  t: Trade,
  out: Array<Signal>
): void => {
  const info = known ?? unknownMint
  lruSet(s.mints, t.mint, { ...info, position: t.position }, config.deployer.maxMints)
  const price = info.quoteMint === null ? null : inputs.usdPrice(t.chain, info.quoteMint)
  const usdMicros = (raw: bigint) => (info.quoteMint === null ? null : usdMicrosOf(raw, info.quoteDecimals, price))
  const mcapRaw = info.quoteMint === null ? null : marketCapQuoteRaw(t.quoteReserveRaw, t.tokenReserveRaw, info.supplyRaw)
  const mcapUsdMicros = mcapRaw === null ? null : usdMicros(mcapRaw)
  const venue = venueOf(t.chain, t.venue)
  const volumeRaw = tradeVolumeRaw(t)
  const tracked = inputs.trackedWallet(t.chain, t.trader)

  // new_ticker: drop launches that waited too long, then fire on this token's first buy.
  const n = config.newTicker
  for (const [mint, p] of s.pending) {
    if (t.timestampMs - p.createdAtMs < n.pendingMs) break
    s.pending.delete(mint)
  }
  const pending = s.pending.get(t.mint)
  if (pending !== undefined && t.side === "buy") {
    s.pending.delete(t.mint)
    if (t.timestampMs - pending.createdAtMs < n.pendingMs) {
      const size = usdMicros(volumeRaw)
      const creatorTracked = inputs.trackedWallet(t.chain, pending.creator)
      out.push(
        buildSignal({
          pattern: "new_ticker",
          chain: t.chain,
          asset: t.mint,
          symbol: pending.symbol,
          direction: "in",
          wallets: t.trader === pending.creator ? [t.trader] : [t.trader, pending.creator],
          walletIds: [...(tracked === undefined ? [] : [tracked.id]), ...(creatorTracked === undefined ? [] : [creatorTracked.id])],
          groups: [...(tracked?.groups ?? []), ...(creatorTracked?.groups ?? [])],
          sizeUsdMicros: size,
          mcapUsdMicros,
          createdAtMs: pending.createdAtMs,
          venue,
          // 30, +20 for a first buy of $500 or more, +20 when the creator is tracked.
          confidence: 30 + (size !== null && size >= NEW_TICKER_BIG_BUY_MICROS ? 20 : 0) + (creatorTracked === undefined ? 0 : 20),
          atMs: t.timestampMs,
          position: t.position,
          triggerIds: [pending.createdId, t.id],
          details: { symbol: pending.symbol, creator: pending.creator, first_buy_quote_raw: volumeRaw.toString() }
        })
      )
    }
  }

  // dormancy of a tracked wallet.
  if (tracked !== undefined) {
    const last = s.wallets.get(t.trader)
    const dormantMs = config.dormancy.dormantMs
    if (last !== undefined && t.timestampMs - last >= dormantMs) {
      const silentMs = t.timestampMs - last
      out.push(
        buildSignal({
          pattern: "dormancy",
          chain: t.chain,
          asset: t.mint,
          symbol: info.symbol,
          direction: t.side === "buy" ? "in" : "out",
          wallets: [t.trader],
          walletIds: [tracked.id],
          groups: tracked.groups,
          sizeUsdMicros: usdMicros(volumeRaw),
          mcapUsdMicros,
          createdAtMs: info.createdAtMs,
          venue,
          // 50, +5 per whole dormancy period beyond the first, at most 80.
          confidence: 50 + Math.min(30, 5 * (Math.floor(silentMs / dormantMs) - 1)),
          atMs: t.timestampMs,
          position: t.position,
          triggerIds: ["wallet", t.id],
          details: { kind: "wallet", silent_days: Math.floor(silentMs / 86_400_000), side: t.side }
        })
      )
    }
    lruSet(s.wallets, t.trader, Math.max(last ?? 0, t.timestampMs), config.dormancy.maxWallets)
  }
}

// ---------------------------------------------------------------------------------------------
// Checkpoint codec

interface EncodedChainState {
  readonly v: 1
  readonly chain: ChainId
  readonly version: number
  readonly mints: ReadonlyArray<readonly [string, MintInfo]>
  readonly symbols: ReadonlyArray<readonly [string, string]>
  readonly creators: ReadonlyArray<readonly [string, CreatorRecord]>
  readonly pending: ReadonlyArray<readonly [string, PendingTicker]>
  readonly wallets: ReadonlyArray<readonly [string, number]>
}

/** Map order (the LRU order) is kept. */
export const encodeChainState = (s: ChainSignalState): string =>
  encodeJson({
    v: 1,
    chain: s.chain,
    version: s.version,
    mints: [...s.mints],
    symbols: [...s.symbols],
    creators: [...s.creators],
    pending: [...s.pending],
    wallets: [...s.wallets]
  } satisfies EncodedChainState)

export const decodeChainState = (text: string): ChainSignalState => {
  const o = decodeJson(text) as EncodedChainState
  if (o === null || typeof o !== "object" || o.v !== 1 || (o.chain !== "solana" && o.chain !== "hood")) throw new TypeError("not a ChainSignals state")
  return {
    chain: o.chain,
    version: o.version,
    mints: new Map(o.mints),
    symbols: new Map(o.symbols),
    creators: new Map(o.creators),
    pending: new Map(o.pending),
    wallets: new Map(o.wallets)
  }
}

export const chainPositionOf = (s: ChainSignalState): string => `v${s.version}`
