/**
 * Yellowstone update messages → the ingester's inputs. Only what decoding and slot assembly
 * need is read; a message missing a required part (no transaction info, no meta) is answered
 * with undefined rather than guessed at.
 */
import { getBase58Decoder } from "@solana/kit"
import type { SubscribeUpdateBlockMeta, SubscribeUpdateTransaction } from "@triton-one/yellowstone-grpc"
import type { CurveTransaction } from "./decoders/index.js"

const base58 = getBase58Decoder()

export const curveTransactionOf = (u: SubscribeUpdateTransaction): CurveTransaction | undefined => {
  const info = u.transaction
  if (info === undefined || info.meta === undefined || info.signature.length !== 64) return undefined
  const index = Number(info.index)
  if (!Number.isSafeInteger(index) || index < 0) return undefined
  return {
    signature: base58.decode(info.signature),
    slot: BigInt(u.slot),
    index,
    failed: info.meta.err !== undefined,
    logMessages: info.meta.logMessagesNone ? [] : info.meta.logMessages
  }
}

/** The block time in ms, or null when the block has none (Solana's blockTime is seconds). */
export const blockTimeMsOf = (m: SubscribeUpdateBlockMeta): number | null => {
  const t = m.blockTime?.timestamp
  if (t === undefined) return null
  const seconds = Number(t)
  return Number.isSafeInteger(seconds) ? seconds * 1000 : null
}
