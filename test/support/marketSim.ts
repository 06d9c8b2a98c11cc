/**
 * Test support: produces `ChainEvent`s for markets the way the chains would report them. Trades are
 * priced by CurveMath (the program's own math), so reserves, refunds and graduation are exactly
 * what the localnets emit: a Hood crossing buy is capped at G, a Solana one fills in full.
 * Positions come from a per-chain `ChainClock`, strictly increasing, fixed-width.
 */
import {
  type ChainEvent,
  type ChainId,
  CreatorFeeClaimed,
  CurveCompleted,
  CurveCreated,
  CurveMigrated,
  type CurveMode,
  hoodPosition,
  MigrationProgress,
  Retracted,
  solanaPosition,
  Trade
} from "../../ingest/ChainEvent.js"
import { type MarketCore, type MarketState, step } from "../../actors/market/MarketActor.js"
import { crossingModelOf } from "../../src/domain/Chain.js"
import { type CurveParams, type CurveState, initialState, quoteBuy, quoteSell, tokenReserveRaw } from "../../src/domain/CurveMath.js"
import { EVM_NATIVE, WSOL_MINT } from "../../src/domain/QuotePairs.js"

/** Hands out positions and block times per chain. */
export class ChainClock {
  private block = 1000n
  private index = 0
  constructor(
    readonly chain: ChainId,
    public nowMs: number = Date.UTC(2025, 0, 1)
  ) {}

  /** The next position; `sameBlock` keeps the block (next tx/log index). */
  next(sameBlock = false): string {
    if (!sameBlock) {
      this.block++
      this.index = 0
    } else this.index++
    return this.chain === "solana" ? solanaPosition(this.block, this.index, 0) : hoodPosition(this.block, this.index)
  }

  advance(ms: number): void {
    this.nowMs += ms
  }

  /** Moves the block number on by `blocks`, as other markets' blocks would (time stays; `advance` moves time, never blocks). */
  skipBlocks(blocks: number): void {
    this.block += BigInt(blocks)
    this.index = 0
  }
}

export interface SimMarketOptions {
  readonly mint: string
  readonly virtualQuoteRaw?: bigint
  readonly thresholdRaw?: bigint
  readonly supplyRaw?: bigint
  readonly stakerAllocationBps?: number
  readonly feeBps?: number
  readonly mode?: CurveMode
  readonly name?: string
  readonly symbol?: string
  /** The launching wallet (default `creator-<mint>`). */
  readonly creator?: string
  /**
   * Check every event against its Schema when built (default true: a test that builds an invalid
   * event fails there). `bench/memory.ts` turns it off: its events are CurveMath-priced like every
   * test's, and the check was a quarter of that bench's CPU (the instances are the same either way).
   */
  readonly validate?: boolean
}

let signatures = 0
const nextSignature = (chain: ChainId): string => (chain === "solana" ? `sig${++signatures}` : `0x${(++signatures).toString(16).padStart(64, "0")}`)

/** One market's chain-side truth, emitting the events the ingester would publish. */
export class SimMarket {
  readonly chain: ChainId
  readonly mint: string
  readonly params: CurveParams
  readonly supplyRaw: bigint
  readonly stakerAllocationBps: number
  readonly mode: CurveMode
  readonly name: string
  readonly symbol: string
  readonly creator: string
  curve: CurveState
  pool: { quoteRaw: bigint; tokenRaw: bigint } | undefined = undefined
  /** The Schema constructors' options: `true` skips validation (`SimMarketOptions.validate: false`). */
  private readonly skipCheck: boolean

  constructor(
    readonly clock: ChainClock,
    o: SimMarketOptions
  ) {
    this.chain = clock.chain
    this.mint = o.mint
    this.supplyRaw = o.supplyRaw ?? (this.chain === "solana" ? 1_000_000_000_000_000n : 1_000_000_000n * 10n ** 18n)
    this.stakerAllocationBps = o.stakerAllocationBps ?? 50
    this.mode = o.mode ?? "open"
    this.name = o.name ?? `Token ${o.mint.slice(0, 6)}`
    this.symbol = o.symbol ?? "TKN"
    this.creator = o.creator ?? `creator-${o.mint}`
    this.params = {
      virtualQuoteRaw: o.virtualQuoteRaw ?? (this.chain === "solana" ? 30_000_000_000n : 1_500_000_000_000_000_000n),
      thresholdRaw: o.thresholdRaw ?? (this.chain === "solana" ? 85_000_000_000n : 4_250_000_000_000_000_000n),
      tokenReserveRaw: tokenReserveRaw(this.supplyRaw, BigInt(this.stakerAllocationBps)),
      feeBps: BigInt(o.feeBps ?? 100),
      crossingModel: crossingModelOf(this.chain)
    }
    this.curve = initialState(this.params)
    this.skipCheck = o.validate === false
  }

  /** The chain-side state, to roll the simulation back when a test retracts events. */
  snapshot(): { readonly curve: CurveState; readonly pool: { quoteRaw: bigint; tokenRaw: bigint } | undefined } {
    return { curve: this.curve, pool: this.pool }
  }

  restore(s: { readonly curve: CurveState; readonly pool: { quoteRaw: bigint; tokenRaw: bigint } | undefined }): void {
    this.curve = s.curve
    this.pool = s.pool
  }

  private base(sameBlock = false) {
    const signature = nextSignature(this.chain)
    return {
      id: `${this.chain}:${signature}:0`,
      position: this.clock.next(sameBlock),
      chain: this.chain,
      mint: this.mint,
      timestampMs: this.clock.nowMs,
      signature
    }
  }

  created(): CurveCreated {
    return new CurveCreated({
      ...this.base(),
      curve: `curve-${this.mint}`,
      creator: this.creator,
      quoteMint: this.chain === "solana" ? WSOL_MINT : EVM_NATIVE,
      quoteDecimals: this.chain === "solana" ? 9 : 18,
      decimals: this.chain === "solana" ? 6 : 18,
      virtualQuoteRaw: this.params.virtualQuoteRaw,
      thresholdRaw: this.params.thresholdRaw,
      supplyRaw: this.supplyRaw,
      tokenReserveRaw: this.params.tokenReserveRaw,
      stakerAllocationBps: this.stakerAllocationBps,
      feeBps: Number(this.params.feeBps),
      creatorFeeBps: 0,
      mode: this.mode,
      name: this.name,
      symbol: this.symbol,
      uri: `https://img.example/${this.mint}.png`,
      dexVersion: this.chain === "hood" ? "v4" : null,
      configHash: this.chain === "hood" ? "0xconfig" : null
    }, this.skipCheck)
  }

  /** A curve buy; with `CurveCompleted` after it when it crosses. Refused quotes throw (a test bug). */
  buy(trader: string, amountInRaw: bigint): Array<ChainEvent> {
    const q = quoteBuy(this.params, this.curve, amountInRaw)
    if (q._tag !== "Filled") throw new Error(`SimMarket.buy refused: ${q.reason}`)
    this.curve = q.next
    const trade = new Trade({
      ...this.base(),
      venue: "curve",
      side: "buy",
      trader,
      amountInRaw,
      amountOutRaw: q.amountOut,
      feeRaw: q.fee,
      refundRaw: q.refund,
      quoteConsumedRaw: q.quoteConsumed,
      quoteReserveRaw: q.next.virtualQuoteRaw,
      tokenReserveRaw: q.next.virtualTokenRaw,
      realQuoteRaw: q.next.realQuoteRaw,
      crossesGraduation: q.crossesGraduation
    }, this.skipCheck)
    if (!q.crossesGraduation) return [trade]
    return [trade, new CurveCompleted({ ...this.base(true), curve: `curve-${this.mint}`, realQuoteRaw: q.next.realQuoteRaw }, this.skipCheck)]
  }

  sell(trader: string, tokensInRaw: bigint): Trade {
    const q = quoteSell(this.params, this.curve, tokensInRaw)
    if (q._tag !== "Filled") throw new Error(`SimMarket.sell refused: ${q.reason}`)
    this.curve = q.next
    return new Trade({
      ...this.base(),
      venue: "curve",
      side: "sell",
      trader,
      amountInRaw: tokensInRaw,
      amountOutRaw: q.amountOut,
      feeRaw: q.fee,
      refundRaw: 0n,
      quoteConsumedRaw: tokensInRaw,
      quoteReserveRaw: q.next.virtualQuoteRaw,
      tokenReserveRaw: q.next.virtualTokenRaw,
      realQuoteRaw: q.next.realQuoteRaw,
      crossesGraduation: false
    }, this.skipCheck)
  }

  progress(status: "in_progress" | "delayed" | "cancelled", attempts: number, nextAttemptAtMs: number | null = null): MigrationProgress {
    return new MigrationProgress({
      ...this.base(),
      status,
      attempts,
      nextAttemptAtMs,
      gaveUpAtMs: status === "in_progress" ? null : this.clock.nowMs,
      lastError: status === "in_progress" ? null : "seeding failed"
    }, this.skipCheck)
  }

  migrated(feeBps = 50): CurveMigrated {
    this.pool = { quoteRaw: this.curve.realQuoteRaw, tokenRaw: this.curve.virtualTokenRaw }
    return new CurveMigrated({
      ...this.base(),
      pool: this.chain === "solana" ? `pool-${this.mint}` : null,
      quoteRaw: this.pool.quoteRaw,
      tokensRaw: this.pool.tokenRaw,
      feeBps
    }, this.skipCheck)
  }

  /** A constant-product pool buy (fee in quote, 50 bps), for post-migration trading. */
  poolBuy(trader: string, amountInRaw: bigint): Trade {
    if (this.pool === undefined) throw new Error("no pool")
    const fee = (amountInRaw * 50n + 9_999n) / 10_000n
    const net = amountInRaw - fee
    const out = (this.pool.tokenRaw * net) / (this.pool.quoteRaw + net)
    this.pool = { quoteRaw: this.pool.quoteRaw + net, tokenRaw: this.pool.tokenRaw - out }
    return new Trade({
      ...this.base(),
      venue: "pool",
      side: "buy",
      trader,
      amountInRaw,
      amountOutRaw: out,
      feeRaw: fee,
      refundRaw: 0n,
      quoteConsumedRaw: amountInRaw,
      quoteReserveRaw: this.pool.quoteRaw,
      tokenReserveRaw: this.pool.tokenRaw,
      realQuoteRaw: 0n,
      crossesGraduation: false
    }, this.skipCheck)
  }

  feeClaimed(amountRaw: bigint): CreatorFeeClaimed {
    return new CreatorFeeClaimed({ ...this.base(), recipient: this.creator, amountRaw }, this.skipCheck)
  }

  retracted(ids: ReadonlyArray<string>): Retracted {
    return new Retracted({ ...this.base(), retractedIds: ids }, this.skipCheck)
  }
}

/** The market actor's core after `events`, stepped from nothing (the pure `step`). */
export const coreOf = (events: ReadonlyArray<ChainEvent>): MarketCore => {
  let s: MarketState | undefined = undefined
  for (const e of events) s = step(s, e)[0]
  return s!.core!
}
