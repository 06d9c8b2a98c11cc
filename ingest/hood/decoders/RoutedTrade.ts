/**
 * The engine's trade router (`TradeRouter.sol`, issue 28) trades on a curve or a pool for a wallet:
 * the curve's `Trade` (and a pool sell's `Swap` recipient) then names the router, not the wallet.
 * The router's own `RoutedTrade`, in the same transaction, names the wallet and the token. So the
 * ingester attributes a trade whose trader is the router to the wallet of the transaction's
 * `RoutedTrade` for that token that describes that trade: same side (`isBuy`), same venue
 * (`onPool`) and same amount in (the curve's `Trade` and the pool's `Swap` take in what the router
 * passed: the whole amount sent on a curve buy, the tokens in on a sell, the exact input on the
 * pool). Each entry is used once, in log order among equal ones. A routed pool buy's `Swap` names
 * the wallet itself and uses no entry; matching by trade (not by order) keeps its entry from being
 * taken by another trade of the same transaction.
 * Pure: the logs of one step in, the events' traders out.
 */
import { type Address, decodeEventLog, isAddressEqual, toEventSelector } from "viem"
import { tradeRouterAbi } from "../../../src/chain/hood/abi.generated.js"
import type { ChainEvent } from "../../ChainEvent.js"
import type { HoodLog } from "./EventContext.js"

export const routedTradeSelector = toEventSelector(tradeRouterAbi.find((i) => i.type === "event" && i.name === "RoutedTrade")!)

interface RoutedLog extends HoodLog {
  readonly transactionHash: string
  readonly removed?: boolean
}

/** One `RoutedTrade`: the wallet it traded for and the trade it describes. */
export interface RoutedEntry {
  readonly trader: string
  readonly isBuy: boolean
  readonly onPool: boolean
  readonly amountIn: bigint
}

/** `txHash:token` (lower-case) → the router's trades on that token in that transaction, in log order (unused ones). */
export type RoutedTraders = Map<string, Array<RoutedEntry>>

const keyOf = (txHash: string, token: string) => `${txHash.toLowerCase()}:${token.toLowerCase()}`

/** The router's `RoutedTrade` logs among `logs` (another emitter of the topic is ignored). */
export const routedTradersOf = (logs: ReadonlyArray<RoutedLog>, router: Address | undefined): RoutedTraders => {
  const out: RoutedTraders = new Map()
  if (router === undefined) return out
  for (const log of logs) {
    if (log.removed === true || log.topics[0] !== routedTradeSelector || !isAddressEqual(log.address, router)) continue
    const { args } = decodeEventLog({ abi: tradeRouterAbi, eventName: "RoutedTrade", topics: log.topics as [`0x${string}`, ...Array<`0x${string}`>], data: log.data })
    const key = keyOf(log.transactionHash, args.token)
    const list = out.get(key) ?? []
    list.push({ trader: args.trader, isBuy: args.isBuy, onPool: args.onPool, amountIn: args.amountIn })
    out.set(key, list)
  }
  return out
}

/** `event` with the routed wallet as its trader when the router traded it (the matching entry, used up); else `event` itself. */
export const attributed = (event: ChainEvent, router: Address | undefined, routed: RoutedTraders): ChainEvent => {
  if (router === undefined || event._tag !== "Trade" || !isAddressEqual(event.trader as Address, router)) return event
  const entries = routed.get(keyOf(event.signature, event.mint))
  const at = entries?.findIndex((r) => r.isBuy === (event.side === "buy") && r.onPool === (event.venue === "pool") && r.amountIn === event.amountInRaw) ?? -1
  if (entries === undefined || at < 0) return event
  const wallet = entries.splice(at, 1)[0]!.trader
  const copy = Object.create(Object.getPrototypeOf(event) as object) as Record<string, unknown>
  Object.assign(copy, event, { trader: wallet })
  return copy as unknown as ChainEvent
}
