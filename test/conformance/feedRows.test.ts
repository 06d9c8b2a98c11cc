/**
 * The feed's rows are closed in the main document (issue 32): `GET /api/v1/markets/feed` answers
 * rows as `feedRow` writes them (`FeedRow`) or projected by `fields` (`FeedRowProjected`), and the
 * document says exactly that: real rows (both chains, traded and untraded, migrated) and their
 * projections validate; a member the engine never writes, a wrong type or a value outside an enum
 * does not.
 */
import { describe, expect, it } from "vitest"
import { openApiDocument } from "../../api/OpenApi.js"
import { FeedFields, parseFeedPlan, project } from "../../api/FeedQuery.js"
import { feedRow } from "../../actors/market/MarketRecord.js"
import { documentInfo, mainRoutes } from "../../clients/typescript/documents.js"
import { contractDocument, contractProblems } from "../support/contract.js"
import { ChainClock, coreOf, SimMarket } from "../support/marketSim.js"

const contract = contractDocument(openApiDocument(mainRoutes, documentInfo) as Record<string, any>)


/** The problems of a feed answer carrying `tokens`. */
const problems = (tokens: ReadonlyArray<unknown>) =>
  contractProblems(
    contract,
    "GET",
    "/api/v1/markets/feed",
    200,
    "application/json",
    JSON.stringify({ success: true, bucket: "new", tokens, matched: tokens.length, scanned: tokens.length, cursor: 1, warming: false, reset: true, removed: [] })
  )

const solana = new SimMarket(new ChainClock("solana"), { mint: "So1Feed", name: "Feed", symbol: "FD" })
const hood = new SimMarket(new ChainClock("hood"), { mint: "0xfeed", name: "Hood Feed", symbol: "HFD" })
const rows = [
  feedRow(coreOf([solana.created()]), 0),
  feedRow(coreOf([solana.created(), ...solana.buy("a", 2_000_000_000n)]), 0, true),
  feedRow(coreOf([hood.created(), ...hood.buy("a", 10n ** 17n)]), 0),
  feedRow(coreOf([hood.created(), ...hood.buy("a", 10n ** 23n), hood.migrated()]), 0)
]

describe("the feed's rows in the main document", () => {
  it("every row feedRow writes validates, untraded, traded, agent-launched and migrated", () => {
    expect(rows.map((r) => r.lifecycle)).toEqual(["trading", "trading", "trading", "migrated"])
    expect(problems(rows)).toEqual([])
  })

  it("every projection `fields` can ask for validates (statsAsOf, not a row member, reads null)", () => {
    for (const field of Object.keys(FeedFields)) {
      const plan = parseFeedPlan(new URLSearchParams({ fields: field }))
      if ("code" in plan) throw new Error(`fields=${field} refused`)
      const projected = rows.map((r) => project(plan, r))
      expect(Object.keys(projected[0]!).sort()).toEqual([...new Set(["chain", "address", field])].sort())
      expect(problems(projected), field).toEqual([])
    }
  })

  it("refuses a member the engine never writes, a wrong type and a value outside an enum", () => {
    const row = rows[1]!
    expect(problems([{ ...row, organicScore: 1 }]).join("\n")).toMatch(/tokens\/0/)
    expect(problems([{ ...row, price: 1.5 }]).join("\n")).toMatch(/tokens\/0/)
    expect(problems([{ ...row, lifecycle: "listed" }]).join("\n")).toMatch(/tokens\/0/)
    expect(problems([{ ...row, chain: "ethereum" }]).join("\n")).toMatch(/tokens\/0/)
    expect(problems([{ chain: "solana", address: row.address, tradesTotal: "1" }]).join("\n")).toMatch(/tokens\/0/)
  })
})
