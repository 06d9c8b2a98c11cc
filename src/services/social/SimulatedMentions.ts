/**
 * The localnet's social-mentions source: a seeded, deterministic generator of posts that name
 * live tokens. The same seed, tick numbers, times and token lists give the same mentions (ids
 * included), so the embedded mode's kol_mention signals replay exactly.
 *
 * Per tick: each token is mentioned with probability `mentionChance` (default 0.15) by one
 * author drawn from the KOL handles and plain authors (KOLs drawn `kolShare` of the time,
 * default 0.4). At most `maxPerTick` mentions per tick (default 8); tokens beyond the first
 * `maxTokens` (default 200) of the list are not considered.
 */
import type { SocialMention } from "../../../actors/signals/KolMention.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { mulberry32 } from "../../domain/SeededRandom.js"

export interface MentionableToken {
  readonly chain: ChainId
  readonly asset: string
  readonly symbol: string
}

export interface SimulatedMentionsOptions {
  readonly seed: number
  readonly kolHandles: ReadonlyArray<string>
  readonly plainAuthors: ReadonlyArray<string>
  readonly mentionChance: number
  readonly kolShare: number
  readonly maxPerTick: number
  readonly maxTokens: number
}

export const simulatedMentionsDefaults: Omit<SimulatedMentionsOptions, "kolHandles" | "plainAuthors"> = {
  seed: 42,
  mentionChance: 0.15,
  kolShare: 0.4,
  maxPerTick: 8,
  maxTokens: 200
}

const hashString = (s: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return h >>> 0
}

const TEMPLATES = ["$SYM looking strong", "aping $SYM", "$SYM chart is wild", "who else is in $SYM?", "$SYM to the moon", "careful with $SYM"]

export const simulatedMentions = (
  options: SimulatedMentionsOptions,
  tick: number,
  nowMs: number,
  tokens: ReadonlyArray<MentionableToken>
): Array<SocialMention> => {
  const out: Array<SocialMention> = []
  const considered = tokens.slice(0, options.maxTokens)
  for (const token of considered) {
    if (out.length >= options.maxPerTick) break
    const rand = mulberry32(hashString(`${options.seed}:${tick}:${token.chain}:${token.asset}`))
    if (rand() >= options.mentionChance) continue
    const useKol = options.kolHandles.length > 0 && (options.plainAuthors.length === 0 || rand() < options.kolShare)
    const pool = useKol ? options.kolHandles : options.plainAuthors
    if (pool.length === 0) continue
    const author = pool[Math.floor(rand() * pool.length)]!
    const text = TEMPLATES[Math.floor(rand() * TEMPLATES.length)]!.replace("$SYM", `$${token.symbol}`)
    const id = `sm_${options.seed}_${tick}_${out.length}`
    out.push({ id, chain: token.chain, asset: token.asset, author, text, url: `https://social.example/${author}/status/${id}`, atMs: nowMs })
  }
  return out
}
