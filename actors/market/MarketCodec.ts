/**
 * The checkpoint encoding of a `MarketState` (the `state` column of `checkpoints`, owner `market`).
 *
 * Format, version 1: `{"v":1,"core":<core>|null,"window":{"base":<core>|null,"events":[<wire>],
 * "retracted":[[id,position],...]}|null}`. A core is the `MarketCore` object with its statistics windows as
 * positional arrays and without its derived `priceFloat` (recomputed by `decode`). Inside cores a bigint is the string `"$n:<decimal>"` and any other
 * string starting with `$` gets one more `$` (so no user string, e.g. a token name, can be read
 * back as a number). Window events are in their bus wire form (`toWire`), decoded back through the
 * same fast ChainEvent decoder, so they come back as the same classes.
 *
 * Invariants: `decode(encode(s))` deep-equals `s` (pinned by MarketCodec.test.ts); `decode` throws
 * on anything it did not write (the runtime refuses to start on a corrupt checkpoint rather than
 * silently starting that market from scratch).
 */
import { fromWireObject, toWire } from "../../ingest/ChainEventCodec.js"
import type { RecentTraders, Slot } from "./internal/tradeWindows.js"
import { keep, type KeptEvent, type MarketCore, type MarketState, priceFloatOf, unkeep } from "./MarketActor.js"

export const CODEC_VERSION = 1

const replacer = (_key: string, value: unknown): unknown => {
  if (typeof value === "bigint") return `$n:${value.toString()}`
  if (typeof value === "string" && value.charCodeAt(0) === 36 /* $ */) return `$${value}`
  return value
}

const reviver = (_key: string, value: unknown): unknown => {
  if (typeof value === "string" && value.charCodeAt(0) === 36) {
    if (value.charCodeAt(1) === 36) return value.slice(1)
    if (value.startsWith("$n:")) return BigInt(value.slice(3))
    throw new Error(`unknown escape in ${JSON.stringify(value.slice(0, 16))}`)
  }
  return value
}

/** Windows as positional arrays (`[slot, volumeRaw, trades, buys]`): checkpoints stay about half the size. */
const compactCore = (core: MarketCore | undefined): unknown => {
  if (core === undefined) return null
  const { priceFloat: _derived, ...stored } = core
  const st = core.stats
  return {
    ...stored,
    stats: {
      ...st,
      fiveMinutes: st.fiveMinutes.map((x) => [x.slot, x.volumeRaw, x.trades, x.buys]),
      hours: st.hours.map((x) => [x.slot, x.volumeRaw, x.trades, x.buys]),
      recentTraders: st.recentTraders
    }
  }
}

export const encodeMarketState = (state: MarketState): string =>
  JSON.stringify(
    {
      v: CODEC_VERSION,
      core: compactCore(state.core),
      window:
        state.window === null
          ? null
          : {
              base: compactCore(state.window.base),
              events: state.window.events.map((k) => toWire(unkeep(k))),
              retracted: state.window.retracted.map((r) => [r.id, r.position])
            }
    },
    replacer
  )

const slotsOf = (u: unknown): ReadonlyArray<Slot> => {
  if (!Array.isArray(u)) throw new Error("checkpoint window slots are malformed")
  return u.map((x: unknown) => {
    if (!Array.isArray(x) || typeof x[0] !== "number" || typeof x[1] !== "bigint" || typeof x[2] !== "number" || typeof x[3] !== "number") {
      throw new Error("checkpoint slot is malformed")
    }
    return { slot: x[0], volumeRaw: x[1], trades: x[2], buys: x[3] }
  })
}

const tradersOf = (u: unknown): RecentTraders => {
  if (!Array.isArray(u) || u.length % 2 !== 0 || !u.every((x) => typeof x === "number" && Number.isSafeInteger(x))) {
    throw new Error("checkpoint recent traders are malformed")
  }
  return u as RecentTraders
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const checkCore = (u: unknown, where: string): MarketCore | undefined => {
  if (u === null) return undefined
  if (
    !isObject(u) ||
    (u["chain"] !== "solana" && u["chain"] !== "hood") ||
    typeof u["mint"] !== "string" ||
    typeof u["lastPosition"] !== "string" ||
    !isObject(u["identity"]) ||
    !isObject(u["params"]) ||
    !isObject(u["curveState"]) ||
    !isObject(u["stats"]) ||
    !isObject(u["migration"]) ||
    typeof u["lifecycle"] !== "string"
  ) {
    throw new Error(`checkpoint ${where} is not a market`)
  }
  const stats = u["stats"] as Record<string, unknown>
  const core: Omit<MarketCore, "priceFloat"> = {
    ...(u as unknown as Omit<MarketCore, "priceFloat">),
    stats: {
      ...(stats as unknown as MarketCore["stats"]),
      fiveMinutes: slotsOf(stats["fiveMinutes"]),
      hours: slotsOf(stats["hours"]),
      recentTraders: tradersOf(stats["recentTraders"])
    }
  }
  return { ...core, priceFloat: priceFloatOf(core) }
}

/** Throws when `text` is not a version-1 market checkpoint. */
export const decodeMarketState = (text: string): MarketState => {
  const parsed: unknown = JSON.parse(text, reviver)
  if (!isObject(parsed) || parsed["v"] !== CODEC_VERSION) throw new Error("checkpoint is not a version 1 market state")
  const core = checkCore(parsed["core"], "core")
  const w = parsed["window"]
  if (w === null) return { core, window: null }
  if (!isObject(w) || !Array.isArray(w["events"]) || !Array.isArray(w["retracted"])) throw new Error("checkpoint window is malformed")
  const events: Array<KeptEvent> = w["events"].map((raw: unknown, i) => {
    const event = fromWireObject(raw)
    if (event === undefined) throw new Error(`checkpoint window event ${i} is not a ChainEvent`)
    return keep(event)
  })
  const retracted = w["retracted"].map((r: unknown) => {
    if (!Array.isArray(r) || typeof r[0] !== "string" || typeof r[1] !== "string") throw new Error("checkpoint retracted entry is malformed")
    return { id: r[0], position: r[1] }
  })
  // With no kept event the base is the core (a trimmed or fully undone window): share it, as in memory.
  const base = checkCore(w["base"], "window base")
  return { core, window: { base: events.length === 0 ? core : base, events, retracted } }
}
