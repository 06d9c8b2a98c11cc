/**
 * svc-curve transactions → `ChainEvent`s. A transaction is reduced to what decoding needs
 * (`CurveTransaction`: signature, slot, index, failed, log messages), its svc-curve events are
 * read from the logs (`ProgramData.ts`) and each is offered to the per-event decoders, one file
 * per event type; the first `some` wins. A failed transaction yields nothing (its logs may show
 * events of instructions that were rolled back). Nothing here throws on any input.
 */
import type { Address } from "@solana/kit"
import { Option } from "effect"
import type { ChainEvent } from "../../ChainEvent.js"
import * as CreatorFeeClaimed from "./CreatorFeeClaimed.js"
import * as CurveCompleted from "./CurveCompleted.js"
import * as CurveCreated from "./CurveCreated.js"
import * as CurveMigrated from "./CurveMigrated.js"
import type { CurveEventContext } from "./EventContext.js"
import * as PoolSwap from "./PoolSwap.js"
import { programDataEvents } from "./ProgramData.js"
import * as Trade from "./Trade.js"

export type { CurveEventContext } from "./EventContext.js"

export interface CurveTransaction {
  readonly signature: string
  readonly slot: bigint
  /** Index in its slot. */
  readonly index: number
  readonly failed: boolean
  readonly logMessages: ReadonlyArray<string>
}

type EventDecoder = (data: Uint8Array, ctx: CurveEventContext) => Option.Option<ChainEvent>

export const eventDecoders: ReadonlyArray<EventDecoder> = [
  CurveCreated.decode,
  Trade.decode,
  CurveCompleted.decode,
  CurveMigrated.decode,
  PoolSwap.decode,
  CreatorFeeClaimed.decode
]

/** One event payload → its ChainEvent, or none for bytes no decoder owns. */
export const decodeEvent = (data: Uint8Array, ctx: CurveEventContext): Option.Option<ChainEvent> => {
  for (const decode of eventDecoders) {
    const out = decode(data, ctx)
    if (Option.isSome(out)) return out
  }
  return Option.none()
}

export interface DecodedTransaction {
  readonly events: ReadonlyArray<ChainEvent>
  /** svc-curve data lines no decoder recognised. */
  readonly unknown: number
  /** The log was cut by the validator: events after the cut are missing. */
  readonly truncated: boolean
}

export const decodeCurveTransaction = (tx: CurveTransaction, blockTimeMs: number, programId: Address): DecodedTransaction => {
  if (tx.failed) return { events: [], unknown: 0, truncated: false }
  const { events: raw, truncated } = programDataEvents(tx.logMessages, programId)
  const events: ChainEvent[] = []
  let unknown = 0
  for (const { eventIndex, data } of raw) {
    const decoded = decodeEvent(data, { signature: tx.signature, slot: tx.slot, txIndex: tx.index, eventIndex, timestampMs: blockTimeMs })
    if (Option.isSome(decoded)) events.push(decoded.value)
    else unknown++
  }
  return { events, unknown, truncated }
}
