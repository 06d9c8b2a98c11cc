/**
 * The started binary with `PRICE_SOURCE=oracle` and the simulation on: `/v1/assets/{id}` answers
 * SOL from the embedded Solana localnet's Pyth account and ETH from the embedded Hood localnet's
 * ETH/USD feed, both kept fresh by the localnets' publishers, and the simulation moves them away
 * from their genesis prices (150 and 3000) while the stablecoins stay at their fixed 1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Engine, startEngineWithData } from "../support/engine.js"
import { eventually } from "../support/eventually.js"
import { dataClient } from "../../clients/typescript/index.js"

let engine: Engine
let dataUrl = ""
let key = ""

beforeAll(async () => {
  const started = await startEngineWithData({ env: { PRICE_SOURCE: "oracle" }, readyTimeoutMs: 300_000 })
  engine = started.engine
  dataUrl = started.dataUrl
  key = started.credentials.agentKey
}, 320_000)

afterAll(async () => {
  if (engine !== undefined) {
    await engine.stop("SIGKILL")
    engine.cleanup()
  }
})

const asset = async (id: string) => {
  const res = await dataClient({ baseUrl: dataUrl, apiKey: key }).GET("/v1/assets/{id}", { params: { path: { id } } })
  return res.response.status === 200 ? (res.data as { price_usd: string | null; price_source: string | null }) : undefined
}

describe("USD prices from the localnets' oracles in the started engine", () => {
  it("SOL comes from the Pyth account and ETH from the Hood feed, and the simulation moves both", async () => {
    const moved = async (id: string, source: RegExp, genesis: string) =>
      eventually(
        async () => {
          const a = await asset(id)
          return a !== undefined && a.price_source !== null && source.test(a.price_source) && a.price_usd !== null && a.price_usd !== genesis && a
        },
        { what: `${id} priced by the oracle and moved from ${genesis}`, deadlineMs: 120_000, intervalMs: 500, detail: () => engine.output() }
      )
    const sol = await moved("sol", /^pyth:7UVimffxr9ow1uXYxsr4LHAcV58mLzhmwaeKvJ1pjLiE$/, "150")
    expect(Number(sol.price_usd)).toBeGreaterThanOrEqual(75)
    expect(Number(sol.price_usd)).toBeLessThanOrEqual(300)
    const eth = await moved("eth", /^aggregator:0x[0-9a-fA-F]{40}$/, "3000")
    expect(Number(eth.price_usd)).toBeGreaterThanOrEqual(1500)
    expect(Number(eth.price_usd)).toBeLessThanOrEqual(6000)
    expect(await asset("usdc")).toMatchObject({ price_usd: "1", price_source: "localnet-fixed" })
  }, 300_000)
})
