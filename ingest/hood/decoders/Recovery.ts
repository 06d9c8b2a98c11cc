/**
 * Curve `RecoveryStarted` (cancelMigration) and `RecoveryClaimed` (claimRecovery) →
 * `RecoverySnapshot` with cause `started` / `claimed`. The log alone does not carry the whole
 * recovery block (a claim has no reserve figures, neither has the quote token), so what these
 * decoders produce is provisional: the ingester replaces every amount and the quote token with one
 * read of the curve at the log's block (`enrichRecovery` in HoodIngester.ts), so the block is read
 * at one block as spec 2.9 asks. Until then the log's own figures stand in (0 where it has none).
 */
import { Option } from "effect"
import type { Address } from "viem"
import { bondingCurveAbi } from "../../../src/chain/hood/abi.generated.js"
import { RecoverySnapshot } from "../../ChainEvent.js"
import { eventDecoder, eventItem } from "./decodeLog.js"
import { baseFields, type HoodLog, type HoodLogContext } from "./EventContext.js"

interface StartedArgs {
  readonly token: Address
  readonly reserveSnapshotRaw: bigint
  readonly eligibleSupplyRaw: bigint
  readonly tokensBurned: bigint
}

interface ClaimedArgs {
  readonly token: Address
  readonly holder: Address
  readonly amount: bigint
  readonly payout: bigint
  readonly surrenderedRaw: bigint
}

export const startedDecoder = eventDecoder<StartedArgs>(eventItem(bondingCurveAbi, "RecoveryStarted"))
export const claimedDecoder = eventDecoder<ClaimedArgs>(eventItem(bondingCurveAbi, "RecoveryClaimed"))

export const decodeStarted = (log: HoodLog, ctx: HoodLogContext): Option.Option<RecoverySnapshot> =>
  Option.map(
    startedDecoder.decode(log),
    (a) =>
      new RecoverySnapshot({
        ...baseFields(ctx, a.token),
        cause: "started",
        curve: log.address,
        quoteToken: "",
        reserveSnapshotRaw: a.reserveSnapshotRaw,
        eligibleSupplyRaw: a.eligibleSupplyRaw,
        surrenderedRaw: 0n,
        snapshotBlock: ctx.blockNumber
      })
  )

export const decodeClaimed = (log: HoodLog, ctx: HoodLogContext): Option.Option<RecoverySnapshot> =>
  Option.map(
    claimedDecoder.decode(log),
    (a) =>
      new RecoverySnapshot({
        ...baseFields(ctx, a.token),
        cause: "claimed",
        curve: log.address,
        quoteToken: "",
        reserveSnapshotRaw: 0n,
        eligibleSupplyRaw: 0n,
        surrenderedRaw: a.surrenderedRaw,
        snapshotBlock: ctx.blockNumber
      })
  )
