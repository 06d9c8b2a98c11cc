/**
 * KolMention: the `kol_mention` detector, one pure state machine per `chain:mint`, driven by
 * social mentions (src/services/social) rather than chain events. A mention reaches it enriched
 * with what the market read model knew of the token at that moment (`MentionMarket`), so the
 * step itself reads nothing. `KolMentionDetectors` holds the per-token states for the wiring,
 * bounded by an LRU of tokens.
 *
 * Invariants:
 * - Pure for given inputs (KOL labels, prices); a step that changes nothing returns the same state.
 * - At most once per mention: mentions of a token are applied in `(atMs, id)` order; one at or
 *   below the last applied is skipped.
 * - Bounded: at most `maxKolsPerToken` KOL cooldowns per token (oldest dropped); at most
 *   `maxTokens` token states in `KolMentionDetectors` (least recently mentioned evicted).
 */
import type { ChainId } from "../../ingest/ChainEvent.js"
import { buildSignal, type Signal, usdMicrosOf, type Venue } from "../../src/domain/Signal.js"
import type { SignalConfig, SignalInputs } from "./SignalConfig.js"

/** One social post that names a token. */
export interface SocialMention {
  /** Unique and stable per post (the source's id). */
  readonly id: string
  readonly chain: ChainId
  /** The token named (mint or contract). */
  readonly asset: string
  /** The author's handle, without `@`. */
  readonly author: string
  readonly text: string
  readonly url: string | null
  /** When posted, epoch ms. */
  readonly atMs: number
}

/** What the market read model knew of the token when the mention arrived; null when unknown. */
export interface MentionMarket {
  readonly symbol: string | null
  readonly createdAtMs: number | null
  readonly venue: Venue | null
  readonly quoteMint: string
  readonly quoteDecimals: number
  /** Market cap in quote raw units (MarketRecord.marketCapRaw), null when unknown. */
  readonly marketCapQuoteRaw: bigint | null
}

export interface MentionInput {
  readonly mention: SocialMention
  readonly market: MentionMarket | null
}

export interface KolMentionState {
  readonly lastAtMs: number
  readonly lastId: string
  /** [KOL id, until ms], oldest first. */
  readonly cooldowns: ReadonlyArray<readonly [string, number]>
}

export const mentionPosition = (m: SocialMention): string => `m:${String(m.atMs).padStart(15, "0")}:${m.id}`

export const makeKolMentionStep =
  (config: SignalConfig, inputs: SignalInputs) =>
  (state: KolMentionState | undefined, input: MentionInput): readonly [KolMentionState | undefined, ReadonlyArray<Signal>] => {
    const { mention, market } = input
    if (state !== undefined && (mention.atMs < state.lastAtMs || (mention.atMs === state.lastAtMs && mention.id <= state.lastId))) {
      return [state, []]
    }
    const base: KolMentionState = { lastAtMs: mention.atMs, lastId: mention.id, cooldowns: state?.cooldowns ?? [] }
    const kol = inputs.kolByHandle(mention.author)
    if (kol === undefined) return [base, []]
    const live = base.cooldowns.filter(([, until]) => until > mention.atMs)
    if (live.some(([id]) => id === kol.id)) return [{ ...base, cooldowns: live }, []]
    const k = config.kolMention
    const cooldowns = [...live, [kol.id, mention.atMs + k.cooldownMs] as const]
    const price = market === null ? null : inputs.usdPrice(mention.chain, market.quoteMint)
    const signal = buildSignal({
      pattern: "kol_mention",
      chain: mention.chain,
      asset: mention.asset,
      symbol: market?.symbol ?? null,
      direction: "in",
      wallets: [],
      walletIds: [],
      groups: [],
      sizeUsdMicros: 0n,
      mcapUsdMicros: market === null || market.marketCapQuoteRaw === null ? null : usdMicrosOf(market.marketCapQuoteRaw, market.quoteDecimals, price),
      createdAtMs: market?.createdAtMs ?? null,
      venue: market?.venue ?? null,
      // 40 plus the KOL's weight (0..40), +10 when the market is known (a live token, not a typo).
      confidence: 40 + Math.max(0, Math.min(40, kol.weight)) + (market === null ? 0 : 10),
      atMs: mention.atMs,
      position: mentionPosition(mention),
      triggerIds: [mention.id],
      details: { kol_id: kol.id, handle: kol.handle, mention_id: mention.id, ...(mention.url === null ? {} : { url: mention.url }) }
    })
    return [{ ...base, cooldowns: cooldowns.length > k.maxKolsPerToken ? cooldowns.slice(cooldowns.length - k.maxKolsPerToken) : cooldowns }, [signal]]
  }

/** Per-token states for the wiring: `apply` steps one mention; at most `maxTokens` tokens remembered. */
export class KolMentionDetectors {
  private readonly states = new Map<string, KolMentionState>()
  private readonly step: ReturnType<typeof makeKolMentionStep>

  constructor(
    config: SignalConfig,
    inputs: SignalInputs,
    readonly maxTokens: number = 50_000
  ) {
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) throw new RangeError("KolMentionDetectors: maxTokens must be a positive integer")
    this.step = makeKolMentionStep(config, inputs)
  }

  apply(input: MentionInput): ReadonlyArray<Signal> {
    const key = `${input.mention.chain}:${input.mention.asset}`
    const [next, signals] = this.step(this.states.get(key), input)
    if (next !== undefined) {
      this.states.delete(key)
      this.states.set(key, next)
      while (this.states.size > this.maxTokens) {
        const oldest = this.states.keys().next()
        if (oldest.done === true) break
        this.states.delete(oldest.value)
      }
    }
    return signals
  }

  get size(): number {
    return this.states.size
  }
}
