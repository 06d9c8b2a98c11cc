/**
 * Test support for the detectors: hand-built chain events with exactly the reserves, sizes and
 * times a test names (edges of thresholds need exact numbers, not curve math), fixed inputs
 * (SOL at $100, a tracked-wallet table, KOL labels). Positions increase per chain.
 */
import { type ChainId, CurveCompleted, CurveCreated, solanaPosition, Trade } from "../../../ingest/ChainEvent.js"
import { WSOL_MINT } from "../../../src/domain/QuotePairs.js"
import type { KolInfo, SignalInputs, TrackedWalletInfo } from "../SignalConfig.js"

export const T0 = Date.UTC(2025, 5, 1, 12, 0, 0)
export const MIN = 60_000
export const HOUR = 60 * MIN
export const DAY = 24 * HOUR

/** Lamports for `x` SOL (x may have up to 9 decimals as a string or a number of whole/half SOL). */
export const sol = (x: number): bigint => BigInt(Math.round(x * 1e9))
/** Lamports worth `dollars` at $100 per SOL. */
export const usdLamports = (dollars: number): bigint => BigInt(Math.round(dollars * 1e7))

export const makeInputs = (
  tracked: Record<string, TrackedWalletInfo> = {},
  kols: Record<string, KolInfo> = {},
  solUsd: bigint | null = 100n
): SignalInputs => ({
  usdPrice: (_chain, quoteMint) => (solUsd !== null && quoteMint === WSOL_MINT ? { num: solUsd, scale: 0 } : undefined),
  trackedWallet: (_chain, address) => tracked[address],
  kolByHandle: (handle) => kols[handle]
})

let slot = 5_000n
let sigs = 0

export interface TradeSpec {
  readonly trader: string
  readonly side: "buy" | "sell"
  readonly atMs: number
  /** Gross quote of the trade (lamports). */
  readonly quote: bigint
  readonly tokens?: bigint
  /** Reserves after the trade; default: unchanged from the previous event of this token. */
  readonly quoteReserve?: bigint
  readonly tokenReserve?: bigint
  readonly signature?: string
  readonly venue?: "curve" | "pool"
}

/** One token's events. */
export class TokenFixture {
  quoteReserve = 1_000n * 10n ** 9n
  tokenReserve = 1_000n * 10n ** 9n
  createdSignature = ""

  constructor(
    readonly mint: string,
    readonly chain: ChainId = "solana"
  ) {}

  private base(atMs: number, signature?: string) {
    slot += 1n
    const sig = signature ?? `sig${++sigs}`
    return { id: `${this.chain}:${sig}:${slot}`, position: solanaPosition(slot, 0, 0), chain: this.chain, mint: this.mint, timestampMs: atMs, signature: sig }
  }

  created(o: { readonly creator?: string; readonly atMs?: number; readonly symbol?: string; readonly supplyRaw?: bigint } = {}): CurveCreated {
    const b = this.base(o.atMs ?? T0)
    this.createdSignature = b.signature
    return new CurveCreated({
      ...b,
      curve: `curve-${this.mint}`,
      creator: o.creator ?? `creator-${this.mint}`,
      quoteMint: WSOL_MINT,
      quoteDecimals: 9,
      decimals: 6,
      virtualQuoteRaw: this.quoteReserve,
      thresholdRaw: 85n * 10n ** 9n,
      supplyRaw: o.supplyRaw ?? 1_000n * 10n ** 9n,
      tokenReserveRaw: this.tokenReserve,
      stakerAllocationBps: 50,
      feeBps: 100,
      creatorFeeBps: 0,
      mode: "open",
      name: `Token ${this.mint}`,
      symbol: o.symbol ?? "TKN",
      uri: "",
      dexVersion: null,
      configHash: null
    })
  }

  trade(s: TradeSpec): Trade {
    if (s.quoteReserve !== undefined) this.quoteReserve = s.quoteReserve
    if (s.tokenReserve !== undefined) this.tokenReserve = s.tokenReserve
    const tokens = s.tokens ?? s.quote
    return new Trade({
      ...this.base(s.atMs, s.signature),
      venue: s.venue ?? "curve",
      side: s.side,
      trader: s.trader,
      amountInRaw: s.side === "buy" ? s.quote : tokens,
      amountOutRaw: s.side === "buy" ? tokens : s.quote,
      feeRaw: 0n,
      refundRaw: 0n,
      quoteConsumedRaw: s.side === "buy" ? s.quote : tokens,
      quoteReserveRaw: this.quoteReserve,
      tokenReserveRaw: this.tokenReserve,
      realQuoteRaw: 0n,
      crossesGraduation: false
    })
  }

  buy(trader: string, atMs: number, quote: bigint, extra: Partial<TradeSpec> = {}): Trade {
    return this.trade({ trader, side: "buy", atMs, quote, ...extra })
  }

  sell(trader: string, atMs: number, quote: bigint, extra: Partial<TradeSpec> = {}): Trade {
    return this.trade({ trader, side: "sell", atMs, quote, ...extra })
  }

  completed(atMs: number): CurveCompleted {
    return new CurveCompleted({ ...this.base(atMs), curve: `curve-${this.mint}`, realQuoteRaw: 85n * 10n ** 9n })
  }
}
