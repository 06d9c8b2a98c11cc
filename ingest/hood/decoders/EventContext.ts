/**
 * What every Hood log decoder needs besides the log's topics and data: where the log sits in the
 * chain and when. Ids are `hood:<txHash>:<logIndex>`, positions `hoodPosition(block, logIndex)`
 * (logIndex is block-wide on EVM chains, so the position is a total order), the timestamp is the
 * block's (seconds on chain, times 1000).
 */
import type { Address, Hex } from "viem"
import { type ChainId, hoodPosition } from "../../ChainEvent.js"

export interface HoodLog {
  /** The emitting contract (checksummed). */
  readonly address: Address
  readonly topics: ReadonlyArray<Hex>
  readonly data: Hex
}

export interface HoodLogContext {
  readonly txHash: Hex
  readonly blockNumber: bigint
  readonly logIndex: number
  readonly timestampMs: number
}

export const eventId = (ctx: HoodLogContext): string => `hood:${ctx.txHash}:${ctx.logIndex}`

export const eventPosition = (ctx: HoodLogContext): string => hoodPosition(ctx.blockNumber, ctx.logIndex)

export const baseFields = (ctx: HoodLogContext, mint: string) => ({
  id: eventId(ctx),
  position: eventPosition(ctx),
  chain: "hood" as ChainId,
  // Lower-case, as the API normalizes a Hood mint (checksummed spelling is presentation).
  mint: mint.toLowerCase(),
  timestampMs: ctx.timestampMs,
  signature: ctx.txHash
})
