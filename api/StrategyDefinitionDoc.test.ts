/**
 * The documented strategy definition (`StrategyDefinitionDoc.ts`) against the decoder it is made
 * from (`decodeDefinition`): every definition the engine accepts validates against the JSON Schema
 * the documents carry (Ajv, 2020-12, as the contract check of the end-to-end tests does), and every
 * refusal a JSON Schema can say (an unknown member, an enum, a bound, a list's size or repeats, a
 * wrong type, a missing member) is a refusal of both. What only the engine checks (the decimal
 * places, the cross-field rules) is listed last, accepted by the schema and refused by the decoder.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import { Either, JSONSchema } from "effect"
import { describe, expect, it } from "vitest"
import { decodeDefinition } from "../src/services/strategy/Definition.js"
import { StrategyDefinitionDoc } from "./StrategyDefinitionDoc.js"

const documented = new Ajv2020({ strict: false, allErrors: true }).compile(JSONSchema.make(StrategyDefinitionDoc, { target: "jsonSchema2020-12" }) as object)
const accepted = (d: unknown) => Either.isRight(decodeDefinition(d))

const good = {
  chain: "solana",
  entry: { source: "pattern", pattern: "confluence", filters: { min_usd: 100 } },
  exit: { take_profit_pct: 50, stop_loss_pct: 20 },
  sizing: { usd_per_trade: "10", max_concurrent: 3 }
}
const filters = (f: Record<string, unknown>) => ({ ...good, entry: { source: "pattern", pattern: "confluence", filters: f } })

const valid: ReadonlyArray<readonly [string, unknown]> = [
  ["the plain definition", good],
  ["amounts as numbers and as decimal text", { ...good, sizing: { usd_per_trade: 12.5, max_concurrent: 100, max_usd: "0.000001", base_usd: "1000000" } }],
  [
    "every filter",
    filters({
      min_usd: "0", min_mcap_usd: 0, max_mcap_usd: 5000, min_age_minutes: 0, max_age_minutes: 525_600, groups: ["a", "b"], groups_all: ["c"],
      min_group_wallets: 50, wallet_ids: ["w1"], venues: ["pump"], exclude_venues: ["raydium"], direction: "in", hours_et: [0, 23],
      min_score_1h: 99.99, kol_mentions: { min_mentions: 1, within_minutes: 1440 }
    })
  ],
  ["a trade signal entry", { ...good, chain: "hood", entry: { source: "trade_signal", min_confidence: 0.1234, filters: { direction: "out" } } }],
  [
    "a conviction entry with a ladder, a trailing exit and sizing rules",
    {
      chain: "any",
      entry: { source: "conviction", min_signals: 2, window_minutes: 1440, patterns: ["deployer", "large_move"] },
      exit: { ladder: [{ at_multiple: 1.5, sell_pct: 50 }, { at_multiple: 3, sell_pct: 50 }], trailing: { arm_multiple: 2, drop_pct: 99.99 }, max_hold_hours: 336, exit_on_signal: true },
      sizing: {
        usd_per_trade: 5, max_concurrent: 1, base_usd: 100,
        rules: [{ when: { pattern: "deployer", min_confidence: 1, min_usd: 0, min_mcap_usd: "1", max_mcap_usd: 2 }, pct_of_equity: 100 }, { multiplier: 10 }, { usd: "3.5" }]
      }
    }
  ]
]

/** Refusals a JSON Schema can say: both the decoder and the document refuse them. */
const refusedByBoth: ReadonlyArray<readonly [string, unknown]> = [
  ["not an object", 5],
  ["an unknown root member", { ...good, foo: 1 }],
  ["an unknown entry member", { ...good, entry: { source: "pattern", pattern: "confluence", foo: 1 } }],
  ["an unknown filter", filters({ bar: 1 })],
  ["an unknown exit member", { ...good, exit: { take_profit_pct: 5, foo: 1 } }],
  ["an unknown sizing rule member", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 3, rules: [{ usd: 5, foo: 1 }] } }],
  ["chain missing", { entry: good.entry, exit: good.exit, sizing: good.sizing }],
  ["an unknown chain", { ...good, chain: "eth" }],
  ["an unknown entry source", { ...good, entry: { source: "x" } }],
  ["an entry without source", { ...good, entry: { pattern: "confluence" } }],
  ["an unknown pattern", { ...good, entry: { source: "pattern", pattern: "x" } }],
  ["51 wallet ids", filters({ wallet_ids: Array.from({ length: 51 }, (_, i) => `w${i}`) })],
  ["an empty list", filters({ venues: [] })],
  ["a repeated group", filters({ groups: ["a", "a"] })],
  ["an id of 129 characters", filters({ wallet_ids: ["w".repeat(129)] })],
  ["an empty id", filters({ venues: [""] })],
  ["hour 24", filters({ hours_et: [1, 24] })],
  ["a fractional hour", filters({ hours_et: [1.5] })],
  ["a direction", filters({ direction: "up" })],
  ["confidence over 1", { ...good, entry: { source: "trade_signal", min_confidence: 2 } }],
  ["confidence as text", { ...good, entry: { source: "trade_signal", min_confidence: "0.5" } }],
  ["a trailing drop of 100", { ...good, exit: { trailing: { arm_multiple: 2, drop_pct: 100 } } }],
  ["an arm multiple of 1", { ...good, exit: { trailing: { arm_multiple: 1, drop_pct: 10 } } }],
  ["a ladder of 11 steps", { ...good, exit: { ladder: Array.from({ length: 11 }, (_, i) => ({ at_multiple: 2 + i, sell_pct: 1 })) } }],
  ["a ladder that is not a list", { ...good, exit: { ladder: 3 } }],
  ["exit_on_signal as text", { ...good, exit: { exit_on_signal: "yes" } }],
  ["usd zero", { ...good, sizing: { usd_per_trade: 0, max_concurrent: 3 } }],
  ["usd over 1000000", { ...good, sizing: { usd_per_trade: 1_000_001, max_concurrent: 3 } }],
  ["usd as text with 7 decimals", { ...good, sizing: { usd_per_trade: "1.1234567", max_concurrent: 3 } }],
  ["usd as a word", { ...good, sizing: { usd_per_trade: "ten", max_concurrent: 3 } }],
  ["usd missing", { ...good, sizing: { max_concurrent: 3 } }],
  ["max_concurrent 0", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 0 } }],
  ["max_concurrent 101", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 101 } }],
  ["a multiplier over 10", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 3, rules: [{ multiplier: 11 }] } }]
]

/** What only the engine checks: the document accepts, the decoder refuses (so the refusal names the field). */
const engineOnly: ReadonlyArray<readonly [string, unknown]> = [
  ["a stop loss with 3 decimals", { ...good, exit: { stop_loss_pct: 10.125 } }],
  ["usd as a number with 7 decimals", { ...good, sizing: { usd_per_trade: 1.1234567, max_concurrent: 3 } }],
  ["usd as text over 1000000", { ...good, sizing: { usd_per_trade: "1000000.000001", max_concurrent: 3 } }],
  ["min_mcap_usd above max_mcap_usd", filters({ min_mcap_usd: 10, max_mcap_usd: 5 })],
  ["no exit option", { ...good, exit: {} }],
  ["a ladder out of order", { ...good, exit: { ladder: [{ at_multiple: 2, sell_pct: 50 }, { at_multiple: 1.5, sell_pct: 50 }] } }],
  ["a ladder over 100%", { ...good, exit: { ladder: [{ at_multiple: 2, sell_pct: 60 }, { at_multiple: 3, sell_pct: 50 }] } }],
  ["a conviction entry without a ladder", { ...good, entry: { source: "conviction", min_signals: 3, window_minutes: 30 } }],
  ["a sizing rule with two sizes", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 3, rules: [{ usd: 5, multiplier: 2 }] } }],
  ["pct_of_equity without base_usd", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 3, rules: [{ pct_of_equity: 5 }] } }]
]

describe("the documented strategy definition", () => {
  it.each(valid)("accepts what the engine accepts: %s", (_name, d) => {
    expect(accepted(d)).toBe(true)
    expect(documented(d), JSON.stringify(documented.errors)).toBe(true)
  })
  it.each(refusedByBoth)("refuses what a schema can say: %s", (_name, d) => {
    expect(accepted(d)).toBe(false)
    expect(documented(d)).toBe(false)
  })
  it.each(engineOnly)("leaves to the engine: %s", (_name, d) => {
    expect(accepted(d)).toBe(false)
    expect(documented(d)).toBe(true)
  })
})
