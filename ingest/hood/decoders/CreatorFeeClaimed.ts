/** Fee splitter `CreatorFeeClaimed` → `CreatorFeeClaimed` (the asset is the quote; 0x0 = ETH). */
import { Option } from "effect"
import type { Address } from "viem"
import { feeSplitterAbi } from "../../../src/chain/hood/abi.generated.js"
import { CreatorFeeClaimed } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface Args {
  readonly curve: Address
  readonly token: Address
  readonly recipient: Address
  readonly asset: Address
  readonly amount: bigint
}

export const decoder = eventDecoder<Args>(eventItem(feeSplitterAbi, "CreatorFeeClaimed"))

export const decode = (log: HoodLog, ctx: HoodLogContext): Option.Option<CreatorFeeClaimed> =>
  Option.map(decoder.decode(log), (a) => new CreatorFeeClaimed({ ...baseFields(ctx, a.token), recipient: a.recipient, amountRaw: a.amount }))
