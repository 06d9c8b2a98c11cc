/**
 * Curve `CurveMigrated` → `CurveMigrated`. `pool` is null (spec 2.9: `poolAddress` is always null
 * on Hood); the real pool rides in `dexPool` for the mark. `poolFee` is in hundredths of a bip
 * (3000 = 30 bps), so `feeBps` = poolFee / 100.
 */
import { Option } from "effect"
import type { Address } from "viem"
import { bondingCurveAbi } from "../../../src/chain/hood/abi.generated.js"
import { CurveMigrated } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface Args {
  readonly token: Address
  readonly pool: Address
  readonly positionId: bigint
  readonly liquidity: bigint
  readonly quoteAmount: bigint
  readonly tokenAmount: bigint
  readonly tokensBurned: bigint
  readonly poolFee: number
  readonly dexVersion: number
}

export const decoder = eventDecoder<Args>(eventItem(bondingCurveAbi, "CurveMigrated"))

export const decode = (log: HoodLog, ctx: HoodLogContext): Option.Option<CurveMigrated> =>
  Option.map(
    decoder.decode(log),
    (a) =>
      new CurveMigrated({
        ...baseFields(ctx, a.token),
        pool: null,
        dexPool: a.pool,
        quoteRaw: a.quoteAmount,
        tokensRaw: a.tokenAmount,
        feeBps: Math.floor(a.poolFee / 100)
      })
  )
