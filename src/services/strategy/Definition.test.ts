import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { decodeDefinition, decodeReplayRequest, problemText } from "./Definition.js"

const good = {
  chain: "solana",
  entry: { source: "pattern", pattern: "confluence", filters: { min_usd: 100 } },
  exit: { take_profit_pct: 50, stop_loss_pct: 20 },
  sizing: { usd_per_trade: "10", max_concurrent: 3 }
}
const problem = (input: unknown) => {
  const r = decodeDefinition(input)
  return Either.isLeft(r) ? problemText(r.left) : "OK"
}
const window = { from: "2024-01-01T00:00:00Z", to: "2024-01-02T00:00:00Z" }
const bodyProblem = (input: unknown) => {
  const r = decodeReplayRequest(input)
  return Either.isLeft(r) ? problemText(r.left) : "OK"
}

describe("strategy definition: the first problem as <path>: <message>", () => {
  it("accepts a valid definition, with exact amounts", () => {
    const r = decodeDefinition({ ...good, sizing: { usd_per_trade: 12.5, max_concurrent: 3, max_usd: "0.000001" } })
    expect(Either.isRight(r)).toBe(true)
    if (Either.isRight(r)) {
      expect(r.right.sizing.usd_per_trade).toBe(12_500_000n)
      expect(r.right.sizing.max_usd).toBe(1n)
      expect(r.right.exit.take_profit_pct).toBe(5_000n)
    }
  })

  it.each([
    ["root not an object", 5, "must be an object"],
    ["unknown root field", { ...good, foo: 1 }, "foo: is not a known field"],
    ["missing chain", { entry: good.entry, exit: good.exit, sizing: good.sizing }, "chain: is required"],
    ["unknown chain", { ...good, chain: "eth" }, "chain: must be one of solana, hood, any"],
    ["unknown entry source", { ...good, entry: { source: "x" } }, "entry.source: must be one of pattern, trade_signal, conviction"],
    ["entry without source", { ...good, entry: { pattern: "confluence" } }, "entry.source: is required"],
    ["unknown pattern", { ...good, entry: { source: "pattern", pattern: "x" } }, "entry.pattern: must be one of confluence, deployer, large_move, dormancy, intra_book, new_ticker, distribution, kol_mention"],
    ["unknown entry field", { ...good, entry: { source: "pattern", pattern: "confluence", foo: 1 } }, "entry.foo: is not a known field"],
    ["unknown filter", { ...good, entry: { source: "pattern", pattern: "confluence", filters: { bar: 1 } } }, "entry.filters.bar: is not a known field"],
    ["51 wallet_ids", { ...good, entry: { source: "pattern", pattern: "confluence", filters: { wallet_ids: Array.from({ length: 51 }, (_, i) => `w${i}`) } } }, "entry.filters.wallet_ids: must hold 1 to 50 wallets"],
    ["hour 24", { ...good, entry: { source: "pattern", pattern: "confluence", filters: { hours_et: [1, 24] } } }, "entry.filters.hours_et[1]: must be an integer from 0 to 23"],
    ["direction", { ...good, entry: { source: "trade_signal", min_confidence: 0.5, filters: { direction: "up" } } }, "entry.filters.direction: must be one of in, out"],
    ["mcap range", { ...good, entry: { source: "pattern", pattern: "confluence", filters: { min_mcap_usd: 10, max_mcap_usd: 5 } } }, "entry.filters.max_mcap_usd: must be >= min_mcap_usd"],
    ["confidence over 1", { ...good, entry: { source: "trade_signal", min_confidence: 2 } }, "entry.min_confidence: must be a number >= 0 and <= 1 with at most 4 decimals"],
    ["no exit option", { ...good, exit: {} }, "exit: must set at least one of take_profit_pct, stop_loss_pct, max_hold_hours, exit_on_signal, trailing, ladder"],
    ["exit_on_signal false alone", { ...good, exit: { exit_on_signal: false } }, "exit: must set at least one of take_profit_pct, stop_loss_pct, max_hold_hours, exit_on_signal, trailing, ladder"],
    ["exit not an object", { ...good, exit: "x" }, "exit: must be an object"],
    ["trailing drop 120", { ...good, exit: { trailing: { arm_multiple: 2, drop_pct: 120 } } }, "exit.trailing.drop_pct: must be a number > 0 and < 100 with at most 2 decimals"],
    ["stop loss 3 decimals", { ...good, exit: { stop_loss_pct: 10.125 } }, "exit.stop_loss_pct: must be a number > 0 and < 100 with at most 2 decimals"],
    ["ladder out of order", { ...good, exit: { ladder: [{ at_multiple: 2, sell_pct: 50 }, { at_multiple: 1.5, sell_pct: 50 }] } }, "exit.ladder[1].at_multiple: must be greater than the previous step's at_multiple"],
    ["ladder over 100%", { ...good, exit: { ladder: [{ at_multiple: 2, sell_pct: 60 }, { at_multiple: 3, sell_pct: 50 }] } }, "exit.ladder: sell_pct of the steps must add up to at most 100"],
    ["ladder not a list", { ...good, exit: { ladder: 3 } }, "exit.ladder: must be a list"],
    ["conviction without ladder", { ...good, entry: { source: "conviction", min_signals: 3, window_minutes: 30 } }, "exit.ladder: is required when entry.source is conviction"],
    ["usd 7 decimals", { ...good, sizing: { usd_per_trade: "1.1234567", max_concurrent: 3 } }, "sizing.usd_per_trade: must be a USD amount > 0 and at most 1000000, with at most 6 decimals"],
    ["usd zero", { ...good, sizing: { usd_per_trade: 0, max_concurrent: 3 } }, "sizing.usd_per_trade: must be a USD amount > 0 and at most 1000000, with at most 6 decimals"],
    ["usd missing", { ...good, sizing: { max_concurrent: 3 } }, "sizing.usd_per_trade: is required"],
    ["max_concurrent 0", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 0 } }, "sizing.max_concurrent: must be an integer from 1 to 100"],
    ["rule with two sizes", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 3, rules: [{ usd: 5, multiplier: 2 }] } }, "sizing.rules[0]: must set exactly one of usd, pct_of_equity, multiplier"],
    ["pct_of_equity without base", { ...good, sizing: { usd_per_trade: 5, max_concurrent: 3, rules: [{ pct_of_equity: 5 }] } }, "sizing.base_usd: is required when sizing.rules[0] uses pct_of_equity"]
  ])("%s", (_name, input, expected) => {
    expect(problem(input)).toBe(expected)
  })
})

describe("replay body", () => {
  it.each([
    ["accepted", { definition: good, ...window }, "OK"],
    ["window over 14 days", { definition: good, from: "2024-01-01T00:00:00Z", to: "2024-01-15T00:00:01Z" }, "to: must be at most 14 days after from"],
    ["exactly 14 days", { definition: good, from: "2024-01-01T00:00:00Z", to: "2024-01-15T00:00:00Z" }, "OK"],
    ["to before from", { definition: good, from: "2024-01-02T00:00:00Z", to: "2024-01-01T00:00:00Z" }, "to: must be after from"],
    ["no time zone", { definition: good, from: "2024-01-01", to: "2024-01-02T00:00:00Z" }, "from: must be an ISO 8601 timestamp with a time zone (2024-01-01T00:00:00Z)"],
    ["definition problem path", { definition: { ...good, exit: {} }, ...window }, "definition.exit: must set at least one of take_profit_pct, stop_loss_pct, max_hold_hours, exit_on_signal, trailing, ladder"],
    ["empty asset_ids", { definition: good, ...window, asset_ids: [] }, "asset_ids: must hold 1 to 50 assets"],
    ["51 asset_ids", { definition: good, ...window, asset_ids: Array.from({ length: 51 }, (_, i) => `m${i}`) }, "asset_ids: must hold 1 to 50 assets"],
    ["50 asset_ids", { definition: good, ...window, asset_ids: Array.from({ length: 50 }, (_, i) => `m${i}`) }, "OK"],
    ["unknown body field", { definition: good, ...window, foo: true }, "foo: is not a known field"]
  ])("%s", (_name, input, expected) => {
    expect(bodyProblem(input)).toBe(expected)
  })
})
