import { describe, expect, it } from "vitest"
import { StrategyError } from "../StrategyError.js"
import { comparisonOf, type RunRow, usdMicros, validName } from "./StrategyRows.js"

const at = new Date("2026-01-01T00:00:00.000Z")
const run = (id: string, version: number, pnl: string, drawdown: number, verdict: "pass" | "fail", status: "done" | "failed" = "done"): RunRow => ({
  id,
  strategy_id: "str_1",
  version,
  status,
  window_from: at,
  window_to: at,
  verdict,
  result:
    status === "done"
      ? ({ trade_count: 1, pnl_usd: pnl, max_drawdown_pct: drawdown, win_rate: 1, profit_factor: 1, sharpe: 1, sortino: 1, fees_paid_usd: "0.000000", final_usd: "1.000000", required_start_usd: "1.000000", verdict } as never)
      : null,
  error: null,
  created_at: at,
  finished_at: at
})

describe("StrategyRows", () => {
  it("micro-USD of a six-decimal string, negative too; anything else is zero", () => {
    expect(usdMicros("12.500000")).toBe(12_500_000n)
    expect(usdMicros("-0.000001")).toBe(-1n)
    expect(usdMicros("12.5")).toBe(0n)
  })

  it("a name is 1 to 100 characters, trimmed", () => {
    expect(validName("  cat  ")).toBe("cat")
    expect(validName("")).toBeInstanceOf(StrategyError)
    expect(validName("x".repeat(101))).toBeInstanceOf(StrategyError)
    expect(validName(7)).toBeInstanceOf(StrategyError)
  })

  it("the comparison sets each finished run against the first, names the best P&L and the passing run with the least drawdown", () => {
    const c = comparisonOf("str_1", [run("a", 1, "1.000000", 10, "fail"), run("b", 2, "3.500000", 20, "pass"), run("c", 3, "2.000000", 5, "pass"), run("d", 4, "9.000000", 1, "pass", "failed")])
    expect(c.runs.map((r) => [r.run_id, r.pnl_vs_first_usd])).toEqual([
      ["a", "0.000000"],
      ["b", "2.500000"],
      ["c", "1.000000"]
    ])
    expect(c).toMatchObject({ strategy_id: "str_1", best_pnl_run_id: "b", best_passing_run_id: "c" })
    expect(comparisonOf("str_1", [])).toEqual({ strategy_id: "str_1", runs: [], best_pnl_run_id: null, best_passing_run_id: null })
  })
})
