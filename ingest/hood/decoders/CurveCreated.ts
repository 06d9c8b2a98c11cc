/**
 * Factory `CurveCreated` → `CurveCreated`. Hood launches are `open`, 18-decimal tokens with no extra
 * creator fee; `dexVersion` 3/4 → `v3`/`v4`; the quote mint is the quote token (the zero address =
 * native ETH). A dexVersion other than 3 or 4 is not ours ("not mine").
 */
import { Option } from "effect"
import type { Address, Hex } from "viem"
import { curveFactoryAbi } from "../../../src/chain/hood/abi.generated.js"
import { CurveCreated } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface Args {
  readonly curve: Address
  readonly token: Address
  readonly creator: Address
  readonly quoteToken: Address
  readonly virtualQuote: bigint
  readonly graduationThreshold: bigint
  readonly stakerAllocation: bigint
  readonly dexVersion: number
  readonly configHash: Hex
  readonly tokenSupply: bigint
  readonly tokenReserve: bigint
  readonly stakerAllocationBps: number
  readonly feeBps: number
  readonly quoteDecimals: number
  readonly name: string
  readonly symbol: string
  readonly uri: string
}

export const decoder = eventDecoder<Args>(eventItem(curveFactoryAbi, "CurveCreated"))

export const HOOD_TOKEN_DECIMALS = 18

export const decode = (log: HoodLog, ctx: HoodLogContext): Option.Option<CurveCreated> =>
  Option.flatMap(decoder.decode(log), (a) =>
    a.dexVersion !== 3 && a.dexVersion !== 4
      ? Option.none()
      : Option.some(
          new CurveCreated({
            ...baseFields(ctx, a.token),
            curve: a.curve,
            creator: a.creator,
            quoteMint: a.quoteToken,
            quoteDecimals: a.quoteDecimals,
            decimals: HOOD_TOKEN_DECIMALS,
            virtualQuoteRaw: a.virtualQuote,
            thresholdRaw: a.graduationThreshold,
            supplyRaw: a.tokenSupply,
            tokenReserveRaw: a.tokenReserve,
            stakerAllocationBps: a.stakerAllocationBps,
            feeBps: a.feeBps,
            creatorFeeBps: 0,
            mode: "open",
            name: a.name,
            symbol: a.symbol,
            uri: a.uri,
            dexVersion: a.dexVersion === 3 ? "v3" : "v4",
            configHash: a.configHash
          })
        )
  )
