/**
 * One ABI event item applied to a log: `Option.none()` unless topic0 is the event's selector and
 * the topics and data decode strictly. Never throws (a log that merely shares the selector but not
 * the layout, e.g. another contract's event, is "not mine").
 */
import { Option } from "effect"
import { type AbiEvent, decodeEventLog, toEventSelector } from "viem"
import type { HoodLog } from "./EventContext.js"

export interface EventDecoderOf<A> {
  readonly selector: `0x${string}`
  readonly decode: (log: HoodLog) => Option.Option<A>
}

export const eventDecoder = <A>(item: AbiEvent): EventDecoderOf<A> => {
  const selector = toEventSelector(item)
  const abi = [item] as const
  return {
    selector,
    decode: (log) => {
      if (log.topics[0] !== selector) return Option.none()
      try {
        const decoded = decodeEventLog({ abi, topics: log.topics as [`0x${string}`, ...Array<`0x${string}`>], data: log.data, strict: true })
        return Option.some(decoded.args as A)
      } catch {
        return Option.none()
      }
    }
  }
}

export const eventItem = (abi: ReadonlyArray<{ readonly type: string; readonly name?: string }>, name: string): AbiEvent => {
  const item = abi.find((x) => x.type === "event" && x.name === name)
  if (item === undefined) throw new Error(`ABI has no event ${name}`)
  return item as unknown as AbiEvent
}
