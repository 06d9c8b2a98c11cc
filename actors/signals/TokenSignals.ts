/**
 * TokenSignals: the per-token signal detectors, one pure state machine per `chain:mint`, driven by
 * `ChainEvent`s in the token's order (the same key and order as MarketActor, so it runs in the
 * sharded runtime as is). It owns `confluence`, `deployer` (the deployer trading its own token),
 * `large_move`, `dormancy` (a silent token waking up), `intra_book` and `distribution`; the
 * definitions are in docs/signals.md.
 *
 * Invariants:
 * - Pure and deterministic for given inputs (prices, tracking): no clock, no randomness; windows
 *   run on block time (`timestampMs`); inputs never mutated; a step that changes nothing returns
 *   the SAME state object.
 * - At most once per position: an event at or below `lastPosition` changes nothing and emits nothing.
 * - Bounded per token: every list is capped (`maxBuys`, `maxSamples`, `maxLegs`, `maxHolders`,
 *   `maxGroupCooldowns`), oldest (or, for holders, smallest) dropped first.
 * - A token whose creation was not seen only advances its position: without the quote asset
 *   and supply nothing can be sized.
 * - `Retracted` advances nothing: a signal already emitted from a trade a reorg removed stays
 *   emitted (docs/signals.md, "Reorgs").
 */
import type { ChainEvent, ChainId, CurveCreated, Trade } from "../../ingest/ChainEvent.js"
import { tradeVolumeRaw } from "../market/MarketActor.js"
import {
  buildSignal,
  marketCapQuoteRaw,
  type Signal,
  type SignalDraft,
  usdMicrosOf,
  venueOf
} from "../../src/domain/Signal.js"
import type { SignalConfig, SignalInputs, TrackedWalletInfo } from "./SignalConfig.js"

export interface TokenMarket {
  readonly symbol: string
  readonly creator: string
  readonly createdAtMs: number
  readonly createdSignature: string
  readonly quoteMint: string
  readonly quoteDecimals: number
  readonly supplyRaw: bigint
  readonly initialQuoteRaw: bigint
  readonly initialTokenRaw: bigint
}

export interface TrackedBuy {
  readonly id: string
  readonly position: string
  readonly wallet: string
  readonly walletId: string
  readonly groups: ReadonlyArray<string>
  readonly atMs: number
  readonly quoteRaw: bigint
}

export interface PriceSample {
  readonly id: string
  readonly atMs: number
  readonly quoteRaw: bigint
  readonly tokenRaw: bigint
  readonly volumeRaw: bigint
  readonly side: "buy" | "sell" | "create"
  readonly trader: string
}

export interface GroupLeg {
  readonly id: string
  readonly position: string
  readonly wallet: string
  readonly walletId: string
  readonly groups: ReadonlyArray<string>
  readonly side: "buy" | "sell"
  readonly atMs: number
  readonly quoteRaw: bigint
}

export interface DistributionLeg {
  readonly id: string
  readonly position: string
  readonly kind: "top_sell" | "other_buy"
  readonly wallet: string
  readonly atMs: number
  readonly quoteRaw: bigint
}

export interface TokenSignalState {
  readonly chain: ChainId
  readonly mint: string
  readonly lastPosition: string
  readonly market: TokenMarket | null
  /** Block time of the last trade, or of the creation before any trade. */
  readonly lastActivityAtMs: number | null
  readonly trackedBuys: ReadonlyArray<TrackedBuy>
  readonly confluenceUntilMs: number
  readonly samples: ReadonlyArray<PriceSample>
  readonly moveUpUntilMs: number
  readonly moveDownUntilMs: number
  readonly devBuyUntilMs: number
  readonly devSellUntilMs: number
  readonly groupLegs: ReadonlyArray<GroupLeg>
  /** [group, until ms], oldest first. */
  readonly groupCooldowns: ReadonlyArray<readonly [string, number]>
  /** [wallet, token balance raw], largest first; balances are what the trades seen moved. */
  readonly holders: ReadonlyArray<readonly [string, bigint]>
  readonly distributionLegs: ReadonlyArray<DistributionLeg>
  readonly distributionUntilMs: number
}

export type TokenStepResult = readonly [TokenSignalState | undefined, ReadonlyArray<Signal>]

export const tokenKey = (chain: ChainId, mint: string): string => `${chain}:${mint}`

export const tokenPositionOf = (s: TokenSignalState): string => s.lastPosition

const emptyState = (chain: ChainId, mint: string, position: string): TokenSignalState => ({
  chain,
  mint,
  lastPosition: position,
  market: null,
  lastActivityAtMs: null,
  trackedBuys: [],
  confluenceUntilMs: 0,
  samples: [],
  moveUpUntilMs: 0,
  moveDownUntilMs: 0,
  devBuyUntilMs: 0,
  devSellUntilMs: 0,
  groupLegs: [],
  groupCooldowns: [],
  holders: [],
  distributionLegs: [],
  distributionUntilMs: 0
})

/** Keeps the last `max` items. */
const capTail = <A>(xs: ReadonlyArray<A>, max: number): ReadonlyArray<A> => (xs.length > max ? xs.slice(xs.length - max) : xs)

/** Items strictly inside the window ending at `nowMs`: `nowMs - atMs < windowMs`. */
const inWindow = <A extends { readonly atMs: number }>(xs: ReadonlyArray<A>, nowMs: number, windowMs: number): ReadonlyArray<A> => {
  let i = 0
  while (i < xs.length && nowMs - xs[i]!.atMs >= windowMs) i++
  return i === 0 ? xs : xs.slice(i)
}

const distinctInOrder = (xs: Iterable<string>): Array<string> => [...new Set(xs)]

const sumRaw = <A extends { readonly quoteRaw: bigint }>(xs: ReadonlyArray<A>): bigint => xs.reduce((s, x) => s + x.quoteRaw, 0n)

interface Ctx {
  readonly config: SignalConfig
  readonly inputs: SignalInputs
  readonly trade: Trade
  readonly market: TokenMarket
  readonly usdMicros: (raw: bigint) => bigint | null
  readonly mcapUsdMicros: bigint | null
  readonly draft: (d: Pick<SignalDraft, "pattern" | "direction" | "wallets" | "walletIds" | "groups" | "sizeUsdMicros" | "confidence" | "triggerIds" | "details">) => Signal
}

export const makeTokenSignalsStep =
  (config: SignalConfig, inputs: SignalInputs) =>
  (state: TokenSignalState | undefined, event: ChainEvent): TokenStepResult => {
    if (state !== undefined && event.position <= state.lastPosition) return [state, []]
    switch (event._tag) {
      case "CurveCreated":
        return [onCreated(state, event), []]
      case "Trade":
        return onTrade(config, inputs, state ?? emptyState(event.chain, event.mint, event.position), event)
      case "Retracted":
        return [state, []]
      default:
        return [state === undefined ? emptyState(event.chain, event.mint, event.position) : { ...state, lastPosition: event.position }, []]
    }
  }

const onCreated = (state: TokenSignalState | undefined, e: CurveCreated): TokenSignalState => {
  const base = state ?? emptyState(e.chain, e.mint, e.position)
  const market: TokenMarket = {
    symbol: e.symbol,
    creator: e.creator,
    createdAtMs: e.timestampMs,
    createdSignature: e.signature,
    quoteMint: e.quoteMint,
    quoteDecimals: e.quoteDecimals,
    supplyRaw: e.supplyRaw,
    initialQuoteRaw: e.virtualQuoteRaw,
    initialTokenRaw: e.tokenReserveRaw
  }
  return {
    ...base,
    lastPosition: e.position,
    market,
    lastActivityAtMs: e.timestampMs,
    samples: [{ id: e.id, atMs: e.timestampMs, quoteRaw: e.virtualQuoteRaw, tokenRaw: e.tokenReserveRaw, volumeRaw: 0n, side: "create", trader: e.creator }]
  }
}

const onTrade = (config: SignalConfig, inputs: SignalInputs, state: TokenSignalState, trade: Trade): TokenStepResult => {
  const market = state.market
  if (market === null) return [{ ...state, lastPosition: trade.position, lastActivityAtMs: trade.timestampMs }, []]
  const price = inputs.usdPrice(trade.chain, market.quoteMint)
  const usdMicros = (raw: bigint) => usdMicrosOf(raw, market.quoteDecimals, price)
  const mcapRaw = marketCapQuoteRaw(trade.quoteReserveRaw, trade.tokenReserveRaw, market.supplyRaw)
  const venue = venueOf(trade.chain, trade.venue)
  const ctx: Ctx = {
    config,
    inputs,
    trade,
    market,
    usdMicros,
    mcapUsdMicros: mcapRaw === null ? null : usdMicros(mcapRaw),
    draft: (d) =>
      buildSignal({
        ...d,
        chain: trade.chain,
        asset: trade.mint,
        symbol: market.symbol,
        mcapUsdMicros: mcapRaw === null ? null : usdMicros(mcapRaw),
        createdAtMs: market.createdAtMs,
        venue,
        atMs: trade.timestampMs,
        position: trade.position
      })
  }
  const tracked = inputs.trackedWallet(trade.chain, trade.trader)
  const signals: Array<Signal> = []
  let next: TokenSignalState = { ...state, lastPosition: trade.position }
  next = dormancy(ctx, next, state.lastActivityAtMs, tracked, signals)
  next = confluence(ctx, next, tracked, signals)
  next = deployerTrade(ctx, next, signals)
  next = largeMove(ctx, next, signals)
  next = intraBook(ctx, next, tracked, signals)
  next = distribution(ctx, next, signals)
  return [{ ...next, lastActivityAtMs: Math.max(state.lastActivityAtMs ?? 0, trade.timestampMs) }, signals]
}

// ---------------------------------------------------------------------------------------------
// dormancy (token)

const dormancy = (
  ctx: Ctx,
  s: TokenSignalState,
  lastActivityAtMs: number | null,
  tracked: TrackedWalletInfo | undefined,
  out: Array<Signal>
): TokenSignalState => {
  const { trade } = ctx
  if (lastActivityAtMs === null) return s
  const silentMs = trade.timestampMs - lastActivityAtMs
  const dormantMs = ctx.config.dormancy.dormantMs
  if (silentMs < dormantMs) return s
  const silentDays = Math.floor(silentMs / 86_400_000)
  out.push(
    ctx.draft({
      pattern: "dormancy",
      direction: trade.side === "buy" ? "in" : "out",
      wallets: [trade.trader],
      walletIds: tracked === undefined ? [] : [tracked.id],
      groups: tracked?.groups ?? [],
      sizeUsdMicros: ctx.usdMicros(tradeVolumeRaw(trade)),
      // 40, plus 5 per whole dormancy period beyond the first, plus 10 when a tracked wallet wakes it; at most 80 (+10).
      confidence: 40 + Math.min(40, 5 * (Math.floor(silentMs / dormantMs) - 1)) + (tracked === undefined ? 0 : 10),
      triggerIds: ["token", trade.id],
      details: { kind: "token", silent_days: silentDays, side: trade.side }
    })
  )
  return s
}

// ---------------------------------------------------------------------------------------------
// confluence

const confluence = (ctx: Ctx, s: TokenSignalState, tracked: TrackedWalletInfo | undefined, out: Array<Signal>): TokenSignalState => {
  const c = ctx.config.confluence
  const { trade } = ctx
  const now = trade.timestampMs
  const pruned = inWindow(s.trackedBuys, now, c.windowMs)
  if (trade.side !== "buy" || tracked === undefined) return pruned === s.trackedBuys ? s : { ...s, trackedBuys: pruned }
  const quoteRaw = tradeVolumeRaw(trade)
  const usdMicros = ctx.usdMicros(quoteRaw)
  if (usdMicros === null || usdMicros < c.minBuyUsdMicros) return pruned === s.trackedBuys ? s : { ...s, trackedBuys: pruned }
  const buys = capTail(
    [...pruned, { id: trade.id, position: trade.position, wallet: trade.trader, walletId: tracked.id, groups: tracked.groups, atMs: now, quoteRaw }],
    c.maxBuys
  )
  const wallets = distinctInOrder(buys.map((b) => b.wallet))
  if (wallets.length < c.minWallets || now < s.confluenceUntilMs) return { ...s, trackedBuys: buys }
  const sharedGroup = buys[0]!.groups.some((g) => wallets.every((w) => buys.find((b) => b.wallet === w)!.groups.includes(g)))
  out.push(
    ctx.draft({
      pattern: "confluence",
      direction: "in",
      wallets,
      walletIds: buys.map((b) => b.walletId),
      groups: buys.flatMap((b) => b.groups),
      sizeUsdMicros: ctx.usdMicros(sumRaw(buys)),
      // 50 at the minimum count, +10 per extra wallet, +10 when one group holds them all.
      confidence: 50 + 10 * (wallets.length - c.minWallets) + (sharedGroup ? 10 : 0),
      triggerIds: buys.map((b) => b.id),
      details: { wallet_count: wallets.length, window_minutes: Math.round(c.windowMs / 60_000), buys: buys.length }
    })
  )
  return { ...s, trackedBuys: buys, confluenceUntilMs: now + c.windowMs }
}

// ---------------------------------------------------------------------------------------------
// deployer (its own token)

const deployerTrade = (ctx: Ctx, s: TokenSignalState, out: Array<Signal>): TokenSignalState => {
  const d = ctx.config.deployer
  const { trade, market } = ctx
  if (trade.trader !== market.creator) return s
  if (trade.side === "buy" && trade.signature === market.createdSignature) return s // the launch's own dev buy
  const now = trade.timestampMs
  if (trade.side === "buy" ? now < s.devBuyUntilMs : now < s.devSellUntilMs) return s
  const sizeUsdMicros = ctx.usdMicros(tradeVolumeRaw(trade))
  if (sizeUsdMicros === null || sizeUsdMicros < d.minTradeUsdMicros) return s
  const tracked = ctx.inputs.trackedWallet(trade.chain, trade.trader)
  out.push(
    ctx.draft({
      pattern: "deployer",
      direction: trade.side === "buy" ? "in" : "out",
      wallets: [trade.trader],
      walletIds: tracked === undefined ? [] : [tracked.id],
      groups: tracked?.groups ?? [],
      sizeUsdMicros,
      // A deployer selling its own token is the stronger tell.
      confidence: trade.side === "sell" ? 60 : 40,
      triggerIds: [trade.id],
      details: { kind: trade.side === "buy" ? "dev_buy" : "dev_sell", token_amount_raw: (trade.side === "buy" ? trade.amountOutRaw : trade.amountInRaw).toString() }
    })
  )
  return trade.side === "buy" ? { ...s, devBuyUntilMs: now + d.cooldownMs } : { ...s, devSellUntilMs: now + d.cooldownMs }
}

// ---------------------------------------------------------------------------------------------
// large_move

/** a/b compared with c/d for positive denominators: sign of a·d − c·b. */
const ratioCmp = (a: bigint, b: bigint, c: bigint, d: bigint): number => {
  const l = a * d
  const r = c * b
  return l > r ? 1 : l < r ? -1 : 0
}

const largeMove = (ctx: Ctx, s: TokenSignalState, out: Array<Signal>): TokenSignalState => {
  const m = ctx.config.largeMove
  const { trade } = ctx
  const now = trade.timestampMs
  const sample: PriceSample = {
    id: trade.id,
    atMs: now,
    quoteRaw: trade.quoteReserveRaw,
    tokenRaw: trade.tokenReserveRaw,
    volumeRaw: tradeVolumeRaw(trade),
    side: trade.side,
    trader: trade.trader
  }
  const window = inWindow(s.samples, now, m.windowMs)
  const samples = capTail([...window, sample], m.maxSamples)
  const next = { ...s, samples }
  if (sample.tokenRaw <= 0n) return next
  let low: PriceSample | undefined
  let high: PriceSample | undefined
  for (const p of samples) {
    if (p === sample || p.tokenRaw <= 0n) continue
    if (low === undefined || ratioCmp(p.quoteRaw, p.tokenRaw, low.quoteRaw, low.tokenRaw) < 0) low = p
    if (high === undefined || ratioCmp(p.quoteRaw, p.tokenRaw, high.quoteRaw, high.tokenRaw) > 0) high = p
  }
  if (low === undefined || high === undefined) return next
  // up: q/t ≥ (1 + up)·ql/tl  ⇔  q·tl·10000 ≥ ql·t·(10000 + up)
  const up = sample.quoteRaw * low.tokenRaw * 10_000n >= low.quoteRaw * sample.tokenRaw * BigInt(10_000 + m.upBps)
  // down: q/t ≤ (1 − down)·qh/th  ⇔  q·th·10000 ≤ qh·t·(10000 − down)
  const down = sample.quoteRaw * high.tokenRaw * 10_000n <= high.quoteRaw * sample.tokenRaw * BigInt(10_000 - m.downBps)
  const direction = up && now >= s.moveUpUntilMs ? "in" : down && now >= s.moveDownUntilMs ? "out" : undefined
  if (direction === undefined) return next
  const volumeRaw = samples.reduce((sum, p) => sum + p.volumeRaw, 0n)
  const volumeUsdMicros = ctx.usdMicros(volumeRaw)
  if (volumeUsdMicros === null || volumeUsdMicros < m.minWindowVolumeUsdMicros) return next
  const ref = direction === "in" ? low : high
  // Move in bps of the reference price (signed), floored.
  const moveBps = Number(((sample.quoteRaw * ref.tokenRaw - ref.quoteRaw * sample.tokenRaw) * 10_000n) / (ref.quoteRaw * sample.tokenRaw))
  const side = direction === "in" ? "buy" : "sell"
  const movers = distinctInOrder(samples.filter((p) => p.side === side).map((p) => p.trader))
  const threshold = direction === "in" ? m.upBps : m.downBps
  const trackedIds: Array<string> = []
  const groups: Array<string> = []
  for (const w of movers) {
    const t = ctx.inputs.trackedWallet(trade.chain, w)
    if (t !== undefined) {
      trackedIds.push(t.id)
      groups.push(...t.groups)
    }
  }
  out.push(
    ctx.draft({
      pattern: "large_move",
      direction,
      wallets: movers,
      walletIds: trackedIds,
      groups,
      sizeUsdMicros: volumeUsdMicros,
      // 45 at the threshold, +1 per 250 bps beyond it (at most +35), +10 when the window traded 10× the minimum.
      confidence: 45 + Math.min(35, Math.floor((Math.abs(moveBps) - threshold) / 250)) + (volumeUsdMicros >= 10n * m.minWindowVolumeUsdMicros ? 10 : 0),
      triggerIds: [ref.id, trade.id],
      details: { move_bps: moveBps, window_minutes: Math.round(m.windowMs / 60_000), trades: samples.length - (samples[0]!.side === "create" ? 1 : 0) }
    })
  )
  return direction === "in" ? { ...next, moveUpUntilMs: now + m.windowMs } : { ...next, moveDownUntilMs: now + m.windowMs }
}

// ---------------------------------------------------------------------------------------------
// intra_book

const intraBook = (ctx: Ctx, s: TokenSignalState, tracked: TrackedWalletInfo | undefined, out: Array<Signal>): TokenSignalState => {
  const b = ctx.config.intraBook
  const { trade } = ctx
  const now = trade.timestampMs
  const pruned = inWindow(s.groupLegs, now, b.windowMs)
  const unchanged = pruned === s.groupLegs ? s : { ...s, groupLegs: pruned }
  if (tracked === undefined || tracked.groups.length === 0) return unchanged
  const quoteRaw = tradeVolumeRaw(trade)
  const legUsd = ctx.usdMicros(quoteRaw)
  if (legUsd === null || legUsd < b.minLegUsdMicros) return unchanged
  const leg: GroupLeg = { id: trade.id, position: trade.position, wallet: trade.trader, walletId: tracked.id, groups: tracked.groups, side: trade.side, atMs: now, quoteRaw }
  const legs = capTail([...pruned, leg], b.maxLegs)
  let cooldowns = s.groupCooldowns.filter(([, until]) => until > now)
  for (const group of tracked.groups) {
    if (cooldowns.some(([g]) => g === group)) continue
    const mine = legs.filter((l) => l.groups.includes(group))
    const buyers = new Set(mine.filter((l) => l.side === "buy").map((l) => l.wallet))
    const sellers = new Set(mine.filter((l) => l.side === "sell").map((l) => l.wallet))
    // Against each other: a buyer and a seller of the group that are different wallets.
    const crossed = [...buyers].some((w) => [...sellers].some((v) => v !== w))
    if (!crossed) continue
    const wallets = distinctInOrder(mine.map((l) => l.wallet))
    const bought = sumRaw(mine.filter((l) => l.side === "buy"))
    const sold = sumRaw(mine.filter((l) => l.side === "sell"))
    out.push(
      ctx.draft({
        pattern: "intra_book",
        direction: bought >= sold ? "in" : "out",
        wallets,
        walletIds: mine.map((l) => l.walletId),
        groups: [group],
        sizeUsdMicros: ctx.usdMicros(bought + sold),
        // 50 for two wallets, +10 per extra wallet.
        confidence: 50 + 10 * (wallets.length - 2),
        triggerIds: [group, ...mine.map((l) => l.id)],
        details: { group, bought_quote_raw: bought.toString(), sold_quote_raw: sold.toString(), window_minutes: Math.round(b.windowMs / 60_000) }
      })
    )
    cooldowns = [...cooldowns, [group, now + b.windowMs] as const]
  }
  return { ...s, groupLegs: legs, groupCooldowns: capTail(cooldowns, b.maxGroupCooldowns) }
}

// ---------------------------------------------------------------------------------------------
// distribution

/** Holders after moving `wallet` by `delta` tokens: sorted largest first, ties by address; at most `max`. */
export const moveHolder = (
  holders: ReadonlyArray<readonly [string, bigint]>,
  wallet: string,
  delta: bigint,
  max: number
): ReadonlyArray<readonly [string, bigint]> => {
  const current = holders.find(([w]) => w === wallet)
  const rest = holders.filter(([w]) => w !== wallet)
  const balance = (current?.[1] ?? 0n) + delta
  if (balance <= 0n) return current === undefined ? holders : rest
  if (current === undefined && rest.length >= max) {
    const smallest = rest[rest.length - 1]!
    if (balance <= smallest[1]) return holders // not larger than the smallest tracked: not tracked
    rest.pop()
  }
  const entry = [wallet, balance] as const
  let i = 0
  while (i < rest.length && (rest[i]![1] > balance || (rest[i]![1] === balance && rest[i]![0] < wallet))) i++
  return [...rest.slice(0, i), entry, ...rest.slice(i)]
}

const distribution = (ctx: Ctx, s: TokenSignalState, out: Array<Signal>): TokenSignalState => {
  const d = ctx.config.distribution
  const { trade } = ctx
  const now = trade.timestampMs
  const isTop = s.holders.slice(0, d.topN).some(([w]) => w === trade.trader)
  const holders = moveHolder(s.holders, trade.trader, trade.side === "buy" ? trade.amountOutRaw : -trade.amountInRaw, d.maxHolders)
  const pruned = inWindow(s.distributionLegs, now, d.windowMs)
  const kind: DistributionLeg["kind"] | undefined = trade.side === "sell" && isTop ? "top_sell" : trade.side === "buy" && !isTop ? "other_buy" : undefined
  const legs: ReadonlyArray<DistributionLeg> =
    kind === undefined
      ? pruned
      : capTail([...pruned, { id: trade.id, position: trade.position, kind, wallet: trade.trader, atMs: now, quoteRaw: tradeVolumeRaw(trade) }], d.maxLegs)
  const next: TokenSignalState = { ...s, holders, distributionLegs: legs }
  if (kind === undefined || now < s.distributionUntilMs) return next
  const sells = legs.filter((l) => l.kind === "top_sell")
  const buys = legs.filter((l) => l.kind === "other_buy")
  if (sells.length === 0) return next
  const sold = sumRaw(sells)
  const bought = sumRaw(buys)
  const soldUsd = ctx.usdMicros(sold)
  if (soldUsd === null || soldUsd < d.minSellUsdMicros) return next
  if (bought * 10_000n < sold * BigInt(d.minBuyRatioBps)) return next
  const wallets = distinctInOrder(sells.map((l) => l.wallet))
  const ids: Array<string> = []
  const groups: Array<string> = []
  for (const w of wallets) {
    const t = ctx.inputs.trackedWallet(trade.chain, w)
    if (t !== undefined) {
      ids.push(t.id)
      groups.push(...t.groups)
    }
  }
  out.push(
    ctx.draft({
      pattern: "distribution",
      direction: "out",
      wallets,
      walletIds: ids,
      groups,
      sizeUsdMicros: soldUsd,
      // 50 for one top holder selling, +10 per extra one.
      confidence: 50 + 10 * (wallets.length - 1),
      triggerIds: legs.map((l) => l.id),
      details: {
        top_holders_selling: wallets.length,
        sold_quote_raw: sold.toString(),
        bought_quote_raw: bought.toString(),
        window_minutes: Math.round(d.windowMs / 60_000)
      }
    })
  )
  return { ...next, distributionUntilMs: now + d.windowMs }
}
