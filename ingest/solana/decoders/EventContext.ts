/**
 * What every svc-curve event decoder needs besides the event's bytes: where the event sits in
 * the chain and when. One function per derived field so the id, the position and the timestamp
 * are computed the same way by every decoder.
 *
 * Invariants: `eventIndex` numbers the svc-curve `Program data:` lines of one transaction from
 * 0 in log order (every such line counts, decodable or not, so a future event type never shifts
 * the positions of the others); the id is `solana:<signature>:<eventIndex>`; the position is
 * `solanaPosition(slot, txIndex, eventIndex)`; `timestampMs` is the block time of the slot
 * (seconds, as Solana records it, times 1000).
 */
import { type ChainId, solanaPosition } from "../../ChainEvent.js"

export interface CurveEventContext {
  readonly signature: string
  readonly slot: bigint
  /** The transaction's index in its slot. */
  readonly txIndex: number
  /** The event's index among the svc-curve events of its transaction. */
  readonly eventIndex: number
  readonly timestampMs: number
}

export const eventId = (ctx: CurveEventContext): string => `solana:${ctx.signature}:${ctx.eventIndex}`

export const eventPosition = (ctx: CurveEventContext): string => solanaPosition(ctx.slot, ctx.txIndex, ctx.eventIndex)

/** The fields every ChainEvent variant shares. */
export const baseFields = (ctx: CurveEventContext, mint: string) => ({
  id: eventId(ctx),
  position: eventPosition(ctx),
  chain: "solana" as ChainId,
  mint,
  timestampMs: ctx.timestampMs,
  signature: ctx.signature
})
