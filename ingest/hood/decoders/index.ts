/**
 * Hood logs → `ChainEvent`s: one decoder per event type (one file each), each answering "not mine"
 * (`Option.none()`) for anything it does not own, never throwing. A decoder only counts when the
 * log came from the contract that owns its event: factory events from the factory, fee-splitter
 * events from the splitter, curve events from a curve (which the caller verifies: any contract can
 * emit a log with the same signature, so `curve` names the emitter to check against the
 * factory's `isCurve`).
 */
import { Option } from "effect"
import { type Address, isAddressEqual } from "viem"
import type { ChainEvent } from "../../ChainEvent.js"
import * as CreatorFeeClaimed from "./CreatorFeeClaimed.js"
import * as CurveCompleted from "./CurveCompleted.js"
import * as CurveCreated from "./CurveCreated.js"
import * as CurveMigrated from "./CurveMigrated.js"
import type { HoodLog, HoodLogContext } from "./EventContext.js"
import * as Recovery from "./Recovery.js"
import * as Trade from "./Trade.js"

export type { HoodLog, HoodLogContext } from "./EventContext.js"

export type Emitter = "factory" | "feeSplitter" | "curve"

interface LogDecoder {
  readonly emitter: Emitter
  readonly selector: `0x${string}`
  readonly decode: (log: HoodLog, ctx: HoodLogContext) => Option.Option<ChainEvent>
}

export const logDecoders: ReadonlyArray<LogDecoder> = [
  { emitter: "factory", selector: CurveCreated.decoder.selector, decode: CurveCreated.decode },
  { emitter: "curve", selector: Trade.decoder.selector, decode: Trade.decode },
  { emitter: "curve", selector: CurveCompleted.decoder.selector, decode: CurveCompleted.decode },
  { emitter: "curve", selector: CurveMigrated.decoder.selector, decode: CurveMigrated.decode },
  { emitter: "curve", selector: Recovery.startedDecoder.selector, decode: Recovery.decodeStarted },
  { emitter: "curve", selector: Recovery.claimedDecoder.selector, decode: Recovery.decodeClaimed },
  { emitter: "feeSplitter", selector: CreatorFeeClaimed.decoder.selector, decode: CreatorFeeClaimed.decode }
]

/** topic0 of every event the ingester reads (the `getLogs` filter). */
export const hoodTopics: ReadonlyArray<`0x${string}`> = logDecoders.map((d) => d.selector)

export interface HoodContracts {
  readonly factory: Address
  readonly feeSplitter: Address
  /** The engine's trade router, when configured: its `RoutedTrade` names a routed trade's wallet. */
  readonly tradeRouter?: Address
}

export interface DecodedLog {
  readonly event: ChainEvent
  /** Set for curve events: the emitter, which must be a curve of our factory for the event to count. */
  readonly curve: Address | null
}

export const decodeHoodLog = (log: HoodLog, ctx: HoodLogContext, contracts: HoodContracts): Option.Option<DecodedLog> => {
  const topic0 = log.topics[0]
  for (const d of logDecoders) {
    if (d.selector !== topic0) continue
    if (d.emitter === "factory" && !isAddressEqual(log.address, contracts.factory)) continue
    if (d.emitter === "feeSplitter" && !isAddressEqual(log.address, contracts.feeSplitter)) continue
    const out = d.decode(log, ctx)
    if (Option.isSome(out)) return Option.some({ event: out.value, curve: d.emitter === "curve" ? log.address : null })
  }
  return Option.none()
}
