/**
 * The svc-curve decoders on real transactions the ledger executed (a whole lifecycle: create,
 * buy, sell, the completing buy, migrate, a pool swap, the creator's claim), read both straight
 * from the ledger's records and after the Geyser server's Yellowstone encoding, and on junk:
 * every decoder answers none for what it does not own and never throws.
 */
import { generateKeyPairSigner } from "@solana/kit"
import { SubscribeUpdateTransaction } from "@triton-one/yellowstone-grpc"
import { Option } from "effect"
import * as fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { getPoolSwapInstruction } from "../../../src/chain/solana/client/CurveInstructions.js"
import { devSigner, keeperSigner } from "../../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction, getTransferSolInstruction } from "../../../src/chain/solana/client/SplInstructions.js"
import { Ledger, type TransactionRecord } from "../../../src/chain/solana/localnet/Ledger.js"
import { transactionInfoOf } from "../../../src/chain/solana/localnet/server/internal/geyserWire.js"
import { send, tokenBalance, ataOf } from "../../../src/chain/solana/localnet/testkit.js"
import { decodeCurve } from "../../../src/chain/solana/program/accounts/Curve.js"
import { decodePool } from "../../../src/chain/solana/program/accounts/Pool.js"
import { curveEventsFromLogs, encodeCurveEvent, eventLogLine } from "../../../src/chain/solana/program/Events.js"
import { SVC_CURVE_PROGRAM_ID, TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../../src/chain/solana/program/ProgramIds.js"
import { type ChainEvent, solanaPosition, type Trade as TradeEvent } from "../../ChainEvent.js"
import { decodeChainEvent, encodeChainEvent } from "../../ChainEventCodec.js"
import { curveTransactionOf } from "../GeyserUpdates.js"
import { type LifecycleRun, runLifecycle, SOL, type Step } from "../../../test/support/solanaLifecycle.js"
import * as CreatorFeeClaimed from "./CreatorFeeClaimed.js"
import * as CurveCompleted from "./CurveCompleted.js"
import * as CurveCreated from "./CurveCreated.js"
import * as CurveMigrated from "./CurveMigrated.js"
import type { CurveEventContext } from "./EventContext.js"
import { type CurveTransaction, decodeCurveTransaction, decodeEvent, eventDecoders } from "./index.js"
import * as PoolSwap from "./PoolSwap.js"
import { programDataEvents } from "./ProgramData.js"
import * as Trade from "./Trade.js"

const BLOCK_TIME_MS = 1_700_000_000_000

const fromRecord = (r: TransactionRecord): CurveTransaction => ({
  signature: r.signature,
  slot: r.slot,
  index: r.index,
  failed: r.err !== null,
  logMessages: r.logMessages
})

/** The same record after the Geyser server's encoding and the client codec's decoding. */
const throughGeyser = (r: TransactionRecord): CurveTransaction => {
  const wire = SubscribeUpdateTransaction.encode({ transaction: transactionInfoOf(r), slot: r.slot.toString() }).finish()
  const tx = curveTransactionOf(SubscribeUpdateTransaction.decode(wire))
  if (tx === undefined) throw new Error("the Geyser encoding lost the transaction")
  return tx
}

let ledger: Ledger
let run: LifecycleRun
const records = {} as Record<Step, TransactionRecord>
const decoded = {} as Record<Step, ReadonlyArray<ChainEvent>>

beforeAll(async () => {
  ledger = new Ledger()
  const actors = { creator: await devSigner(0), trader: await devSigner(1), keeper: await keeperSigner() }
  run = await runLifecycle(ledger, actors, { afterEach: () => ledger.advanceSlot() })
  for (const step of Object.keys(run.signatures) as Step[]) {
    records[step] = ledger.getTransaction(run.signatures[step])!
    decoded[step] = decodeCurveTransaction(fromRecord(records[step]), BLOCK_TIME_MS, SVC_CURVE_PROGRAM_ID).events
  }
})

describe("svc-curve decoders on ledger transactions", () => {
  it("map every lifecycle transaction to the events the program logged, in order", () => {
    expect(Object.fromEntries(Object.entries(decoded).map(([k, v]) => [k, v.map((e) => e._tag)]))).toEqual({
      create: ["CurveCreated"],
      buy: ["Trade"],
      sell: ["Trade"],
      complete: ["Trade", "CurveCompleted"],
      migrate: ["CurveMigrated"],
      poolSwap: ["Trade"],
      claim: ["CreatorFeeClaimed"]
    })
  })

  it("carry ids, positions, chain, mint, signature and the block time", () => {
    const mint = run.curve.mint.address
    for (const step of Object.keys(decoded) as Step[]) {
      const r = records[step]
      decoded[step].forEach((e, eventIndex) => {
        expect(e).toMatchObject({
          id: `solana:${r.signature}:${eventIndex}`,
          position: solanaPosition(r.slot, r.index, eventIndex),
          chain: "solana",
          mint,
          signature: r.signature,
          timestampMs: BLOCK_TIME_MS
        })
      })
    }
    const positions = Object.values(decoded).flatMap((es) => es.map((e) => e.position))
    expect([...positions].sort()).toEqual(positions)
  })

  it("CurveCreated carries the launch record, metadata included", () => {
    const created = decoded.create[0]!
    if (created._tag !== "CurveCreated") throw new Error("not CurveCreated")
    const curve = decodeCurve(ledger.getAccount(run.curve.addresses.curve)!.data)!
    expect(created).toMatchObject({
      curve: run.curve.addresses.curve,
      creator: curve.creator,
      quoteMint: WSOL_MINT_ADDRESS,
      quoteDecimals: 9,
      decimals: 6,
      virtualQuoteRaw: SOL,
      thresholdRaw: 2n * SOL,
      supplyRaw: curve.supplyRaw,
      tokenReserveRaw: curve.tokenReserveRaw,
      stakerAllocationBps: 500,
      feeBps: 100,
      creatorFeeBps: 100,
      mode: "exp-a",
      name: "Lifecycle",
      symbol: "LIFE",
      uri: "https://example.com/life.json",
      dexVersion: null,
      configHash: null
    })
  })

  it("trades carry the exact amounts the ledger executed", () => {
    const [buy] = decoded.buy
    const [sell] = decoded.sell
    const [completing, completed] = decoded.complete
    if (buy?._tag !== "Trade" || sell?._tag !== "Trade" || completing?._tag !== "Trade" || completed?._tag !== "CurveCompleted") {
      throw new Error("unexpected event kinds")
    }
    expect(buy).toMatchObject({ venue: "curve", side: "buy", amountInRaw: SOL / 2n, amountOutRaw: run.firstBuyOutRaw, refundRaw: 0n, crossesGraduation: false })
    expect(buy.quoteConsumedRaw).toBe(buy.amountInRaw)
    expect(sell).toMatchObject({ venue: "curve", side: "sell", amountInRaw: run.soldRaw })
    // The trader's lamports moved by exactly the sell's quote out (less the fee of the transaction).
    const sr = records.sell
    const traderIndex = sr.accountKeys.indexOf(sell.trader as never)
    expect(sr.postBalances[traderIndex]! - sr.preBalances[traderIndex]!).toBe(sell.amountOutRaw - sr.fee)
    expect(completing).toMatchObject({ side: "buy", amountInRaw: 3n * SOL, crossesGraduation: true })
    const curve = decodeCurve(ledger.getAccount(run.curve.addresses.curve)!.data)!
    expect(completed.realQuoteRaw).toBe(curve.realQuoteRaw)
    expect(completing.realQuoteRaw).toBe(curve.realQuoteRaw)
    expect(completing.quoteReserveRaw).toBe(curve.virtualQuoteReserveRaw)
    expect(completing.tokenReserveRaw).toBe(curve.virtualTokenReserveRaw)
    expect(tokenBalance(ledger, ataOf(buy.trader as never, run.curve.mint.address))).toBe(
      run.firstBuyOutRaw - run.soldRaw + completing.amountOutRaw + (decoded.poolSwap[0] as TradeEvent).amountOutRaw
    )
  })

  it("migration and the pool swap carry the pool's reserves; the claim what the creator received", () => {
    const [migrated] = decoded.migrate
    const [swap] = decoded.poolSwap
    const [claimed] = decoded.claim
    if (migrated?._tag !== "CurveMigrated" || swap?._tag !== "Trade" || claimed?._tag !== "CreatorFeeClaimed") throw new Error("unexpected kinds")
    const pool = decodePool(ledger.getAccount(run.curve.addresses.pool)!.data)!
    expect(migrated).toMatchObject({ pool: run.curve.addresses.pool, feeBps: 150 })
    expect(swap).toMatchObject({ venue: "pool", side: "buy", amountInRaw: SOL / 4n, realQuoteRaw: 0n, crossesGraduation: false })
    expect(swap.quoteReserveRaw).toBe(pool.quoteReserveRaw)
    expect(swap.tokenReserveRaw).toBe(pool.tokenReserveRaw)
    // The curve keeps its graduation-time reserves: what migrate moved into the pool.
    const curve = decodeCurve(ledger.getAccount(run.curve.addresses.curve)!.data)!
    expect(migrated.quoteRaw).toBe(curve.realQuoteRaw)
    expect(migrated.tokensRaw).toBe(curve.virtualTokenReserveRaw)
    const cr = records.claim
    const creatorIndex = cr.accountKeys.indexOf(claimed.recipient as never)
    expect(cr.postBalances[creatorIndex]! - cr.preBalances[creatorIndex]!).toBe(claimed.amountRaw - cr.fee)
  })

  it("decode the same after the Geyser server's Yellowstone encoding", () => {
    for (const step of Object.keys(records) as Step[]) {
      expect(decodeCurveTransaction(throughGeyser(records[step]), BLOCK_TIME_MS, SVC_CURVE_PROGRAM_ID).events).toEqual(decoded[step])
    }
  })

  it("round-trip through the bus encoding", () => {
    for (const e of Object.values(decoded).flat()) {
      const back = decodeChainEvent(encodeChainEvent(e))
      expect(back._tag === "Right" && back.right).toEqual(e)
    }
  })

  it("agree with the program's own event reader on every payload", () => {
    for (const r of Object.values(records)) {
      const own = curveEventsFromLogs(r.logMessages)
      const raw = programDataEvents(r.logMessages, SVC_CURVE_PROGRAM_ID).events
      expect(raw.map((x) => x.eventIndex)).toEqual(own.map((x) => x.eventIndex))
      expect(raw.map((x) => [...x.data])).toEqual(own.map((x) => [...encodeCurveEvent(x.event)]))
    }
  })
})

describe("what the decoders refuse", () => {
  const ctx: CurveEventContext = { signature: "1".repeat(64), slot: 5n, txIndex: 0, eventIndex: 0, timestampMs: 0 }

  it("a failed transaction yields nothing, even with events logged before the failure", async () => {
    const trader = await devSigner(2)
    const to = await generateKeyPairSigner()
    const mint = run.curve.mint.address
    const r = await send(ledger, trader, [
      getCreateAssociatedTokenInstruction({ payer: trader, ata: ataOf(trader.address, mint), owner: trader.address, mint }),
      await getPoolSwapInstruction({ trader, mint, quoteMint: WSOL_MINT_ADDRESS, side: "buy", amountInRaw: SOL, minAmountOutRaw: 0n }),
      getTransferSolInstruction({ from: trader, to: to.address, lamports: 10n ** 17n })
    ])
    if (r._tag !== "Landed" || r.err === null) throw new Error("expected a failed transaction")
    const failed = ledger.getTransaction(r.signature)!
    // The swap ran and logged its event before the transfer failed the transaction.
    expect(programDataEvents(failed.logMessages, SVC_CURVE_PROGRAM_ID).events).toHaveLength(1)
    expect(decodeCurveTransaction(fromRecord(failed), 0, SVC_CURVE_PROGRAM_ID).events).toEqual([])
    const forged: CurveTransaction = { ...fromRecord(records.buy), failed: true }
    expect(programDataEvents(forged.logMessages, SVC_CURVE_PROGRAM_ID).events).toHaveLength(1)
    expect(decodeCurveTransaction(forged, 0, SVC_CURVE_PROGRAM_ID).events).toEqual([])
  })

  it("each decoder owns exactly its event type", () => {
    const owners: ReadonlyArray<(data: Uint8Array, c: CurveEventContext) => Option.Option<ChainEvent>> = [
      CurveCreated.decode,
      Trade.decode,
      CurveCompleted.decode,
      CurveMigrated.decode,
      PoolSwap.decode,
      CreatorFeeClaimed.decode
    ]
    for (const r of Object.values(records)) {
      for (const { data } of programDataEvents(r.logMessages, SVC_CURVE_PROGRAM_ID).events) {
        expect(owners.filter((d) => Option.isSome(d(data, ctx)))).toHaveLength(1)
      }
    }
  })

  it("junk: empty, unknown tags, truncated and padded payloads decode to none", () => {
    const good = programDataEvents(records.buy.logMessages, SVC_CURVE_PROGRAM_ID).events[0]!.data
    const junk = [new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(7, 1, 2, 3), Uint8Array.of(255), good.slice(0, good.length - 1), Uint8Array.from([...good, 0])]
    for (const data of junk) {
      for (const d of eventDecoders) expect(Option.isNone(d(data, ctx))).toBe(true)
      expect(Option.isNone(decodeEvent(data, ctx))).toBe(true)
    }
  })

  it("other programs' data lines and malformed logs are ignored", () => {
    const line = eventLogLine({ kind: "CurveCompleted", mint: TOKEN_PROGRAM_ID, curve: TOKEN_PROGRAM_ID, realQuoteRaw: 1n, virtualQuoteRaw: 1n, virtualTokenRaw: 1n })
    const logs = [
      `Program ${TOKEN_PROGRAM_ID} invoke [1]`,
      line,
      `Program ${TOKEN_PROGRAM_ID} success`,
      line, // outside any program
      `Program ${SVC_CURVE_PROGRAM_ID} invoke [1]`,
      "Program data: !!!not base64!!!",
      `Program ${TOKEN_PROGRAM_ID} invoke [2]`,
      line, // inside a CPI to another program
      `Program ${TOKEN_PROGRAM_ID} success`,
      line,
      `Program ${SVC_CURVE_PROGRAM_ID} success`
    ]
    const tx: CurveTransaction = { signature: "2".repeat(64), slot: 9n, index: 3, failed: false, logMessages: logs }
    const out = decodeCurveTransaction(tx, 42, SVC_CURVE_PROGRAM_ID)
    // Event 0 is the undecodable line (it still takes an index), event 1 the real one.
    expect(out.unknown).toBe(1)
    expect(out.events.map((e) => [e._tag, e.id, e.position])).toEqual([["CurveCompleted", `solana:${"2".repeat(64)}:1`, solanaPosition(9n, 3, 1)]])
  })

  it("never throw on arbitrary bytes or log lines", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
        for (const d of eventDecoders) d(bytes, ctx)
        return true
      }),
      { numRuns: 2_000 }
    )
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.constantFrom(`Program ${SVC_CURVE_PROGRAM_ID} invoke [1]`, "Program data: AQID", `Program ${SVC_CURVE_PROGRAM_ID} success`, "Log truncated")), { maxLength: 30 }),
        (logs) => {
          decodeCurveTransaction({ signature: "3".repeat(64), slot: 1n, index: 0, failed: false, logMessages: logs }, 0, SVC_CURVE_PROGRAM_ID)
          return true
        }
      ),
      { numRuns: 1_000 }
    )
  })
})
