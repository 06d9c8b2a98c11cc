/**
 * The engine's public market reads through the typed client (`clients/typescript`), for the e2e
 * tests: each answer as their assertions read it, `{status, body}` with the body the success or
 * the envelope. Paths, parameters and their types come from the OpenAPI document; a test sending
 * what the document refuses (a bad chain or bucket) says so with a cast at the call.
 */
import { engineClient } from "../../clients/typescript/index.js"

type Chain = "solana" | "hood"
type Bucket = "new" | "graduated" | "onfire" | "finalstretch"

/** A typed call's answer as `{status, body}` (`body` loosely typed, as the tests' assertions read it). */
export const answered = (r: { readonly response: Response; readonly data?: unknown; readonly error?: unknown }): { status: number; body: any } => ({
  status: r.response.status,
  body: r.data ?? r.error
})

export const publicReads = (url: () => string) => {
  const client = () => engineClient({ baseUrl: url() })
  return {
    market: async (chain: Chain, mint: string) => answered(await client().GET("/api/v1/markets/{chain}/{mint}", { params: { path: { chain, mint } } })),
    feed: async (bucket: Bucket | undefined, chain?: Chain) =>
      answered(await client().GET("/api/v1/markets/feed", { params: { query: { bucket: bucket as Bucket, ...(chain !== undefined ? { chain } : {}) } } })),
    /** The curve quote of a buy (`/markets/{chain}/{mint}/quote`). */
    curveQuote: async (chain: Chain, mint: string, amountIn: bigint, slippageBps?: number) =>
      answered(
        await client().GET("/api/v1/markets/{chain}/{mint}/quote", {
          params: { path: { chain, mint }, query: { side: "buy", amountIn: amountIn.toString(), ...(slippageBps !== undefined ? { slippageBps } : {}) } }
        })
      ),
    verify: async (chain: Chain, mint: string) => answered(await client().GET("/api/v1/verify/{chain}/{mint}", { params: { path: { chain, mint } } })),
    /** The agent trade quote (`/trade/agent/quote`), with `apiKey` when given (its plan's fee), else the Free plan's. */
    agentQuote: async (chain: Chain, mint: string, side: "buy" | "sell", amountIn: bigint, o: { readonly apiKey?: string; readonly slippageBps?: number } = {}) =>
      answered(
        await engineClient({ baseUrl: url(), ...(o.apiKey !== undefined ? { apiKey: o.apiKey } : {}) }).GET("/api/v1/trade/agent/quote", {
          params: { query: { chain, mint, side, amountIn: amountIn.toString(), ...(o.slippageBps !== undefined ? { slippageBps: o.slippageBps } : {}) } }
        })
      ),
    hoodMark: async (mint: string) => answered(await client().GET("/api/v1/markets/hood/{mint}/mark", { params: { path: { mint } } }))
  }
}
