/**
 * Metas (spec 4.5 `metas`, "narratives"): the words shared by the names and tickers of the tokens
 * launched in a window, ranked by how many tokens share them, then by those tokens' total volume
 * in USD, then alphabetically. Pure over the market index's cores.
 *
 * A token's words are its name and ticker lower-cased and split on anything that is not a letter
 * or a digit, keeping distinct words of at least `META_WORD_LENGTH_MIN` characters that are not
 * stop words; they are computed once per market (cached on its identity). A meta needs at least
 * two tokens. Bounded: at most `METAS_WORDS_MAX` distinct words are tallied per read (later words
 * are not); each meta lists its `META_TOP_TOKENS` largest tokens by total volume.
 */
import type { MarketCore, MarketIdentity } from "../../../actors/market/MarketActor.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"

export const METAS_WORDS_MAX = 50_000
export const META_TOP_TOKENS = 5
export const META_WORD_LENGTH_MIN = 3
const STOP_WORDS: ReadonlySet<string> = new Set(["the", "and", "token", "coin", "inu", "for", "of"])

const wordsByIdentity = new WeakMap<MarketIdentity, ReadonlyArray<string>>()

/** The distinct narrative words of a token's name and ticker, computed once per identity. */
export const metaWordsOf = (identity: MarketIdentity): ReadonlyArray<string> => {
  let words = wordsByIdentity.get(identity)
  if (words === undefined) {
    words = [
      ...new Set(
        `${identity.name} ${identity.symbol}`
          .toLowerCase()
          .split(/[^\p{L}\p{N}]+/u)
          .filter((w) => w.length >= META_WORD_LENGTH_MIN && !STOP_WORDS.has(w))
      )
    ]
    wordsByIdentity.set(identity, words)
  }
  return words
}

export interface Meta {
  readonly word: string
  /** The tokens sharing the word, in the order the index yielded them. */
  readonly tokens: ReadonlyArray<MarketCore>
  /** Their total volume in micro-dollars (tokens without a USD price count 0). */
  readonly volumeUsdMicros: bigint
  /** The `META_TOP_TOKENS` largest of them by total volume (ties in `tokens` order). */
  readonly top: ReadonlyArray<MarketCore>
}

const byVolume = (a: MarketCore, b: MarketCore): number =>
  b.stats.volumeTotalRaw > a.stats.volumeTotalRaw ? 1 : b.stats.volumeTotalRaw < a.stats.volumeTotalRaw ? -1 : 0

/**
 * The best `limit` metas of the tokens on `chain` created at or after `sinceMs`. `volumeUsdMicros`
 * prices a token's total volume (null when its quote asset has no price); it is asked once per token.
 */
export const rankMetas = (
  markets: Iterable<MarketCore>,
  chain: ChainId,
  sinceMs: number,
  limit: number,
  volumeUsdMicros: (core: MarketCore) => bigint | null
): ReadonlyArray<Meta> => {
  const tokensByWord = new Map<string, Array<MarketCore>>()
  for (const core of markets) {
    if (core.chain !== chain || core.identity.createdAtMs < sinceMs) continue
    for (const w of metaWordsOf(core.identity)) {
      let tokens = tokensByWord.get(w)
      if (tokens === undefined) {
        if (tokensByWord.size >= METAS_WORDS_MAX) continue
        tokens = []
        tokensByWord.set(w, tokens)
      }
      tokens.push(core)
    }
  }
  const usd = new Map<MarketCore, bigint>()
  const usdOf = (core: MarketCore): bigint => {
    let v = usd.get(core)
    if (v === undefined) {
      v = volumeUsdMicros(core) ?? 0n
      usd.set(core, v)
    }
    return v
  }
  const ranked: Array<{ readonly word: string; readonly tokens: ReadonlyArray<MarketCore>; readonly volumeUsdMicros: bigint }> = []
  for (const [word, tokens] of tokensByWord) {
    if (tokens.length < 2) continue
    let micros = 0n
    for (const core of tokens) micros += usdOf(core)
    ranked.push({ word, tokens, volumeUsdMicros: micros })
  }
  ranked.sort(
    (a, b) =>
      b.tokens.length - a.tokens.length ||
      (b.volumeUsdMicros > a.volumeUsdMicros ? 1 : b.volumeUsdMicros < a.volumeUsdMicros ? -1 : 0) ||
      (a.word < b.word ? -1 : a.word > b.word ? 1 : 0)
  )
  return ranked.slice(0, limit).map((m) => ({ ...m, top: m.tokens.slice().sort(byVolume).slice(0, META_TOP_TOKENS) }))
}
