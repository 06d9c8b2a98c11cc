/**
 * Feeds scenario events as the pipeline would: each through the market actor's `step`, the
 * changed snapshots published into a `MarketIndexStore`, and the trades inserted into ClickHouse
 * as the writer's rows (versions increasing). Keeps every applied trade for expected figures.
 * Also the plan-bearer stand-in for the data routes' auth that the read tests share.
 */
import { Effect } from "effect"
import type { MarketIndexStore } from "../../actors/MarketIndex.js"
import { type MarketState, step } from "../../actors/market/MarketActor.js"
import type { ClickHouseShape } from "../../clickhouse/ClickHouse.js"
import { tradeRow } from "../../clickhouse/writer/TradeRow.js"
import type { ChainEvent, Trade } from "../../ingest/ChainEvent.js"
import type { DataCaller } from "../../api/data/reads/TokenReadRoutes.js"
import { json } from "../../api/Http.js"

export const marketFeed = (index: MarketIndexStore, clickhouse: () => ClickHouseShape) => {
  const states = new Map<string, MarketState>()
  const trades: Array<Trade> = []
  let version = 1n
  const apply = async (events: ReadonlyArray<ChainEvent>): Promise<void> => {
    const changes = new Map<string, MarketState | undefined>()
    const batch: Array<Trade> = []
    for (const e of events) {
      const key = `${e.chain}:${e.mint}`
      const [next] = step(states.get(key), e)
      if (next !== undefined) states.set(key, next)
      changes.set(key, next)
      if (e._tag === "Trade") batch.push(e)
    }
    index.publish([...changes])
    trades.push(...batch)
    if (batch.length > 0) await Effect.runPromise(clickhouse().insert("trades", batch.map((t) => tradeRow(t, version++))))
  }
  return { apply, states, trades: trades as ReadonlyArray<Trade> }
}

/** Data-route auth for read tests: `Bearer plan-free|pro|max` is a caller on that plan; anything else the plain 401. */
export const planBearer = (req: { readonly headers: Readonly<Record<string, string>> }) => {
  const m = /^Bearer plan-(free|pro|max)$/.exec(req.headers.authorization ?? "")
  return m === null ? Effect.fail(json(401, { error: "invalid api key" })) : Effect.succeed<DataCaller>({ accountId: "acct", plan: m[1] as DataCaller["plan"] })
}
