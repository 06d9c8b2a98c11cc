/**
 * svc-curve's events, emitted as log lines `Program data: <base64>` (Anchor's `emit!` shape, one
 * base64 field). Each event starts with a 1-byte tag; numbers are little-endian; strings are
 * `u8 length` + UTF-8. `decodeCurveEvent` returns undefined for bytes that are not a well-formed
 * svc-curve event. Since other programs log `Program data:` too, read events with
 * `curveEventsFromLogs`, which only takes lines emitted while svc-curve is the running program and
 * numbers them by top-level instruction, the position ingest keys on.
 */
import type { Address } from "@solana/kit"
import { ByteReader, ByteWriter, tryDecode, utf8Bytes } from "./internal/bytes.js"
import { codeOf, type CurveMode, CurveModes, valueOf } from "./accounts/Common.js"
import { NAME_BYTES_MAX, SYMBOL_BYTES_MAX, URI_BYTES_MAX } from "./accounts/Metadata.js"
import type { PoolSide } from "./Instructions.js"
import { SVC_CURVE_PROGRAM_ID } from "./ProgramIds.js"

export const CurveEventTag = {
  CurveCreated: 1,
  Trade: 2,
  CurveCompleted: 3,
  CurveMigrated: 4,
  PoolSwap: 5,
  CreatorFeeClaimed: 6
} as const

export interface CurveCreatedEvent {
  readonly kind: "CurveCreated"
  readonly mint: Address
  readonly curve: Address
  readonly creator: Address
  readonly quoteMint: Address
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
  readonly supplyRaw: bigint
  readonly tokenReserveRaw: bigint
  readonly stakerAllocationBps: number
  readonly feeBps: number
  readonly creatorFeeBps: number
  readonly mode: CurveMode
  readonly tokenDecimals: number
  readonly quoteDecimals: number
  readonly name: string
  readonly symbol: string
  readonly uri: string
}

export interface TradeEvent {
  readonly kind: "Trade"
  readonly mint: Address
  readonly curve: Address
  readonly trader: Address
  readonly side: PoolSide
  readonly amountInRaw: bigint
  readonly amountOutRaw: bigint
  readonly feeRaw: bigint
  /** The creator's part of `feeRaw`. */
  readonly creatorFeeRaw: bigint
  readonly virtualQuoteAfterRaw: bigint
  readonly virtualTokenAfterRaw: bigint
  readonly realQuoteAfterRaw: bigint
  readonly crossesGraduation: boolean
}

export interface CurveCompletedEvent {
  readonly kind: "CurveCompleted"
  readonly mint: Address
  readonly curve: Address
  readonly realQuoteRaw: bigint
  readonly virtualQuoteRaw: bigint
  readonly virtualTokenRaw: bigint
}

export interface CurveMigratedEvent {
  readonly kind: "CurveMigrated"
  readonly mint: Address
  readonly curve: Address
  readonly pool: Address
  readonly keeper: Address
  readonly quoteMovedRaw: bigint
  readonly tokensMovedRaw: bigint
  readonly poolFeeBps: number
}

export interface PoolSwapEvent {
  readonly kind: "PoolSwap"
  readonly mint: Address
  readonly pool: Address
  readonly trader: Address
  readonly side: PoolSide
  readonly amountInRaw: bigint
  readonly amountOutRaw: bigint
  readonly feeRaw: bigint
  readonly creatorFeeRaw: bigint
  readonly quoteReserveAfterRaw: bigint
  readonly tokenReserveAfterRaw: bigint
}

export interface CreatorFeeClaimedEvent {
  readonly kind: "CreatorFeeClaimed"
  readonly mint: Address
  readonly curve: Address
  readonly creator: Address
  readonly amountRaw: bigint
  readonly claimedTotalRaw: bigint
}

export type CurveEvent =
  | CurveCreatedEvent
  | TradeEvent
  | CurveCompletedEvent
  | CurveMigratedEvent
  | PoolSwapEvent
  | CreatorFeeClaimedEvent

const side = (s: PoolSide) => (s === "buy" ? 0 : 1)
const readSide = (r: ByteReader): PoolSide => {
  const v = r.u8()
  if (v > 1) throw new RangeError("side")
  return v === 0 ? "buy" : "sell"
}
const lp = (s: string) => 1 + utf8Bytes(s).length

export const encodeCurveEvent = (e: CurveEvent): Uint8Array => {
  switch (e.kind) {
    case "CurveCreated":
      return new ByteWriter(1 + 32 * 4 + 8 * 4 + 2 * 3 + 3 + lp(e.name) + lp(e.symbol) + lp(e.uri))
        .u8(CurveEventTag.CurveCreated)
        .address(e.mint).address(e.curve).address(e.creator).address(e.quoteMint)
        .u64(e.virtualQuoteRaw).u64(e.thresholdRaw).u64(e.supplyRaw).u64(e.tokenReserveRaw)
        .u16(e.stakerAllocationBps).u16(e.feeBps).u16(e.creatorFeeBps)
        .u8(codeOf(CurveModes, e.mode)).u8(e.tokenDecimals).u8(e.quoteDecimals)
        .lpUtf8(e.name, NAME_BYTES_MAX).lpUtf8(e.symbol, SYMBOL_BYTES_MAX).lpUtf8(e.uri, URI_BYTES_MAX)
        .done()
    case "Trade":
      return new ByteWriter(1 + 32 * 3 + 1 + 8 * 7 + 1)
        .u8(CurveEventTag.Trade)
        .address(e.mint).address(e.curve).address(e.trader)
        .u8(side(e.side))
        .u64(e.amountInRaw).u64(e.amountOutRaw).u64(e.feeRaw).u64(e.creatorFeeRaw)
        .u64(e.virtualQuoteAfterRaw).u64(e.virtualTokenAfterRaw).u64(e.realQuoteAfterRaw)
        .bool(e.crossesGraduation)
        .done()
    case "CurveCompleted":
      return new ByteWriter(1 + 32 * 2 + 8 * 3)
        .u8(CurveEventTag.CurveCompleted)
        .address(e.mint).address(e.curve)
        .u64(e.realQuoteRaw).u64(e.virtualQuoteRaw).u64(e.virtualTokenRaw)
        .done()
    case "CurveMigrated":
      return new ByteWriter(1 + 32 * 4 + 8 * 2 + 2)
        .u8(CurveEventTag.CurveMigrated)
        .address(e.mint).address(e.curve).address(e.pool).address(e.keeper)
        .u64(e.quoteMovedRaw).u64(e.tokensMovedRaw).u16(e.poolFeeBps)
        .done()
    case "PoolSwap":
      return new ByteWriter(1 + 32 * 3 + 1 + 8 * 6)
        .u8(CurveEventTag.PoolSwap)
        .address(e.mint).address(e.pool).address(e.trader)
        .u8(side(e.side))
        .u64(e.amountInRaw).u64(e.amountOutRaw).u64(e.feeRaw).u64(e.creatorFeeRaw)
        .u64(e.quoteReserveAfterRaw).u64(e.tokenReserveAfterRaw)
        .done()
    case "CreatorFeeClaimed":
      return new ByteWriter(1 + 32 * 3 + 8 * 2)
        .u8(CurveEventTag.CreatorFeeClaimed)
        .address(e.mint).address(e.curve).address(e.creator)
        .u64(e.amountRaw).u64(e.claimedTotalRaw)
        .done()
  }
}

export const decodeCurveEvent = (bytes: Uint8Array): CurveEvent | undefined =>
  tryDecode((): CurveEvent | undefined => {
    const r = new ByteReader(bytes)
    let e: CurveEvent
    switch (r.u8()) {
      case CurveEventTag.CurveCreated:
        e = {
          kind: "CurveCreated",
          mint: r.address(), curve: r.address(), creator: r.walletAddress(), quoteMint: r.address(),
          virtualQuoteRaw: r.u64(), thresholdRaw: r.u64(), supplyRaw: r.u64(), tokenReserveRaw: r.u64(),
          stakerAllocationBps: r.u16(), feeBps: r.u16(), creatorFeeBps: r.u16(),
          mode: valueOf(CurveModes, r.u8()), tokenDecimals: r.u8(), quoteDecimals: r.u8(),
          name: r.lpUtf8(NAME_BYTES_MAX), symbol: r.lpUtf8(SYMBOL_BYTES_MAX), uri: r.lpUtf8(URI_BYTES_MAX)
        }
        break
      case CurveEventTag.Trade:
        e = {
          kind: "Trade",
          mint: r.address(), curve: r.address(), trader: r.walletAddress(), side: readSide(r),
          amountInRaw: r.u64(), amountOutRaw: r.u64(), feeRaw: r.u64(), creatorFeeRaw: r.u64(),
          virtualQuoteAfterRaw: r.u64(), virtualTokenAfterRaw: r.u64(), realQuoteAfterRaw: r.u64(),
          crossesGraduation: r.bool()
        }
        break
      case CurveEventTag.CurveCompleted:
        e = {
          kind: "CurveCompleted",
          mint: r.address(), curve: r.address(),
          realQuoteRaw: r.u64(), virtualQuoteRaw: r.u64(), virtualTokenRaw: r.u64()
        }
        break
      case CurveEventTag.CurveMigrated:
        e = {
          kind: "CurveMigrated",
          mint: r.address(), curve: r.address(), pool: r.address(), keeper: r.walletAddress(),
          quoteMovedRaw: r.u64(), tokensMovedRaw: r.u64(), poolFeeBps: r.u16()
        }
        break
      case CurveEventTag.PoolSwap:
        e = {
          kind: "PoolSwap",
          mint: r.address(), pool: r.address(), trader: r.walletAddress(), side: readSide(r),
          amountInRaw: r.u64(), amountOutRaw: r.u64(), feeRaw: r.u64(), creatorFeeRaw: r.u64(),
          quoteReserveAfterRaw: r.u64(), tokenReserveAfterRaw: r.u64()
        }
        break
      case CurveEventTag.CreatorFeeClaimed:
        e = {
          kind: "CreatorFeeClaimed",
          mint: r.address(), curve: r.address(), creator: r.walletAddress(),
          amountRaw: r.u64(), claimedTotalRaw: r.u64()
        }
        break
      default:
        return undefined
    }
    r.end()
    return e
  })

export const PROGRAM_DATA_PREFIX = "Program data: "

export const eventLogLine = (e: CurveEvent): string =>
  PROGRAM_DATA_PREFIX + Buffer.from(encodeCurveEvent(e)).toString("base64")

export interface LoggedCurveEvent {
  /** Index of the top-level instruction that emitted it (directly or through CPI). */
  readonly instructionIndex: number
  /** Order among the svc-curve events of this transaction. */
  readonly eventIndex: number
  readonly event: CurveEvent
}

const INVOKE = /^Program (\w+) invoke \[(\d+)\]$/
const DONE = /^Program (\w+) (success|failed: .*)$/

/**
 * The svc-curve events in a transaction's log messages, in order. Only `Program data:` lines
 * logged while svc-curve is the innermost running program count; a truncated log yields what was
 * kept. Pass the program id when reading a deployment at another address.
 */
export const curveEventsFromLogs = (
  logs: ReadonlyArray<string>,
  programId: Address = SVC_CURVE_PROGRAM_ID
): LoggedCurveEvent[] => {
  const stack: string[] = []
  const out: LoggedCurveEvent[] = []
  let instructionIndex = -1
  for (const line of logs) {
    const invoke = INVOKE.exec(line)
    if (invoke !== null) {
      if (invoke[2] === "1") instructionIndex++
      stack.push(invoke[1] ?? "")
      continue
    }
    if (DONE.test(line)) {
      stack.pop()
      continue
    }
    if (line.startsWith(PROGRAM_DATA_PREFIX) && stack[stack.length - 1] === programId) {
      const event = decodeCurveEvent(new Uint8Array(Buffer.from(line.slice(PROGRAM_DATA_PREFIX.length), "base64")))
      if (event !== undefined) out.push({ instructionIndex, eventIndex: out.length, event })
    }
  }
  return out
}
