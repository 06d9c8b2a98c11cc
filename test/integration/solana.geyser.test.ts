/**
 * The localnet's Yellowstone Geyser server over a real socket, read by the real
 * `@triton-one/yellowstone-grpc` client (its native core): filters, commitment levels and their
 * ordering, `from_slot` replay and its window, ping/pong, filter replacement, the unary calls,
 * and a dropped stream. The bounded outbound queue is shown with a raw HTTP/2 gRPC client that
 * stops reading (the native client always drains into its own buffer).
 */
import { generateKeyPairSigner, getBase58Decoder, type KeyPairSigner } from "@solana/kit"
import * as Yellowstone from "@triton-one/yellowstone-grpc"
import {
  CommitmentLevel,
  SlotStatus,
  SubscribeRequest,
  SubscribeUpdate,
  txErrDecode
} from "@triton-one/yellowstone-grpc"
import * as http2 from "node:http2"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { getBuyInstruction } from "../../src/chain/solana/client/CurveInstructions.js"
import { devSigner } from "../../src/chain/solana/client/DevSigners.js"
import { getCreateAssociatedTokenInstruction, getTransferSolInstruction } from "../../src/chain/solana/client/SplInstructions.js"
import { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { type GeyserServer, startGeyserServer } from "../../src/chain/solana/localnet/server/GeyserServer.js"
import { encodeTransactionErrorBincode } from "../../src/chain/solana/localnet/server/internal/transactionErrorBincode.js"
import { ataOf, expectOk, launchCurve, send } from "../../src/chain/solana/localnet/testkit.js"
import type { TransactionError } from "../../src/chain/solana/localnet/TransactionError.js"
import { SVC_CURVE_PROGRAM_ID, SYSTEM_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { eventually } from "../support/eventually.js"

type ClientClass = typeof Yellowstone.default.default
/** The package's types are CJS-shaped; at run time its ESM default export is the class itself. */
const Client: ClientClass = (() => {
  const d: unknown = Yellowstone.default
  return (typeof d === "function" ? d : (d as { default: unknown }).default) as ClientClass
})()

const SOL = 1_000_000_000n
const base58 = getBase58Decoder()

const request = (over: Partial<SubscribeRequest>): SubscribeRequest => ({
  accounts: {},
  slots: {},
  transactions: {},
  transactionsStatus: {},
  blocks: {},
  blocksMeta: {},
  entry: {},
  accountsDataSlice: [],
  ...over
})

const curveTransactions = { curve: { accountInclude: [SVC_CURVE_PROGRAM_ID], accountExclude: [], accountRequired: [], vote: false, failed: false } }

/** A subscription that records everything it receives. */
const subscribe = async (client: InstanceType<ClientClass>, req: SubscribeRequest) => {
  const stream = await client.subscribe(req)
  const updates: SubscribeUpdate[] = []
  let error: Error | undefined
  stream.on("data", (u: SubscribeUpdate) => updates.push(u))
  stream.on("error", (e: Error) => {
    error = e
  })
  return {
    stream,
    updates,
    error: () => error,
    /** Updates other than pings, as `kind slot detail` lines. */
    lines: () =>
      updates.flatMap((u) => {
        if (u.transaction !== undefined) return [`tx ${u.transaction.slot} #${u.transaction.transaction!.index}`]
        if (u.account !== undefined) return [`account ${u.account.slot} ${base58.decode(u.account.account!.pubkey)}`]
        if (u.blockMeta !== undefined) return [`meta ${u.blockMeta.slot}`]
        if (u.slot !== undefined) return [`slot ${u.slot.slot} ${SlotStatus[u.slot.status]}`]
        if (u.transactionStatus !== undefined) return [`status ${u.transactionStatus.slot} #${u.transactionStatus.index}`]
        if (u.pong !== undefined) return [`pong ${u.pong.id}`]
        return []
      })
  }
}

const errorText = (e: unknown): string => {
  const parts: string[] = []
  for (let c: unknown = e; c instanceof Error && parts.length < 8; c = c.cause) parts.push(c.message)
  return parts.join(" <- ")
}

let ledger: Ledger
let geyser: GeyserServer
let client: InstanceType<ClientClass>
let creator: KeyPairSigner
let trader: KeyPairSigner
const streams: Array<{ destroy: () => void }> = []

beforeEach(async () => {
  ledger = new Ledger({ finalizationLagSlots: 2, updatesRetainedSlots: 20 })
  geyser = await startGeyserServer(ledger, { pingIntervalMs: 60_000 })
  client = new Client(geyser.url, undefined, undefined)
  await client.connect()
  creator = await devSigner(0)
  trader = await devSigner(1)
})

afterEach(async () => {
  for (const s of streams.splice(0)) s.destroy()
  await geyser.close()
})

const track = <S extends { stream: { destroy: () => void } }>(s: S): S => {
  streams.push(s.stream)
  return s
}

const buy = async (mint: string, amountInRaw: bigint, minAmountOutRaw = 0n) => {
  const ata = ataOf(trader.address, mint as never)
  return send(ledger, trader, [
    getCreateAssociatedTokenInstruction({ payer: trader, ata, owner: trader.address, mint: mint as never }),
    await getBuyInstruction({ trader, mint: mint as never, quoteMint: WSOL_MINT_ADDRESS, amountInRaw, minAmountOutRaw })
  ])
}

describe("Geyser transaction errors", () => {
  it("are bincode the Yellowstone client decodes back to the ledger's JSON", () => {
    const cases: TransactionError[] = [
      "BlockhashNotFound",
      "InsufficientFundsForFee",
      "AlreadyProcessed",
      { InstructionError: [1, { Custom: 6000 }] },
      { InstructionError: [0, "MissingRequiredSignature"] },
      { InstructionError: [2, "InvalidAccountData"] },
      { InstructionError: [0, "ComputationalBudgetExceeded"] },
      { InsufficientFundsForRent: { account_index: 3 } }
    ]
    for (const e of cases) expect(txErrDecode.decode(encodeTransactionErrorBincode(e))).toEqual(e)
  })
})

describe("Geyser Subscribe", () => {
  it("filters transactions by account, vote and failed, at processed", async () => {
    const sub = track(await subscribe(client, request({ transactions: curveTransactions, commitment: CommitmentLevel.PROCESSED })))
    const launched = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    expectOk(ledger, await send(ledger, creator, [getTransferSolInstruction({ from: creator, to: (await generateKeyPairSigner()).address, lamports: SOL })]))
    const failed = await buy(launched.mint.address, SOL, 10n ** 15n)
    expect(failed._tag === "Landed" && failed.err !== null).toBe(true)
    const ok = expectOk(ledger, await buy(launched.mint.address, SOL))
    await eventually(() => (sub.lines().length >= 2 ? true : undefined), { what: "two curve transactions", deadlineMs: 10_000, intervalMs: 5 })
    expect(sub.lines()).toEqual([`tx 1 #0`, `tx 1 #3`])
    const [created, bought] = sub.updates
    expect(created!.filters).toEqual(["curve"])
    const info = bought!.transaction!.transaction!
    expect(base58.decode(info.signature)).toBe(ok.signature)
    expect(info.isVote).toBe(false)
    expect(info.meta!.err).toBeUndefined()
    expect(info.meta!.logMessages).toEqual(ledger.getTransaction(ok.signature)!.logMessages)
    expect(info.meta!.fee).toBe(ledger.getTransaction(ok.signature)!.fee.toString())
    expect(info.transaction!.message!.accountKeys.map((k) => base58.decode(k))).toEqual(ledger.getTransaction(ok.signature)!.accountKeys)
    expect(info.transaction!.message!.versioned).toBe(true)
  })

  it("filters accounts by owner and by address, applies data slices, and restores empty filters", async () => {
    const launched = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const curve = launched.addresses.curve
    const sub = track(
      await subscribe(
        client,
        request({
          accounts: {
            curves: { account: [], owner: [SVC_CURVE_PROGRAM_ID], filters: [{ datasize: "376" }] },
            mine: { account: [trader.address], owner: [], filters: [] }
          },
          accountsDataSlice: [{ offset: "0", length: "2" }],
          // An empty filter message: the native client sends the key alone; it still counts.
          slots: { all: {} },
          commitment: CommitmentLevel.PROCESSED
        })
      )
    )
    expectOk(ledger, await buy(launched.mint.address, SOL))
    ledger.advanceSlot()
    await eventually(() => (sub.lines().includes("slot 2 SLOT_PROCESSED") ? true : undefined), { what: "slot 2 opening", deadlineMs: 10_000, intervalMs: 5 })
    const accounts = sub.updates.filter((u) => u.account !== undefined)
    expect(accounts.map((u) => [base58.decode(u.account!.account!.pubkey), u.filters])).toEqual(
      expect.arrayContaining([
        [trader.address, ["mine"]],
        [curve, ["curves"]]
      ])
    )
    expect(accounts.every((u) => u.account!.account!.data.length <= 2)).toBe(true)
    expect([...accounts.find((u) => base58.decode(u.account!.account!.pubkey) === curve)!.account!.account!.data]).toEqual([1, 1])
    expect(sub.lines().filter((l) => l.startsWith("slot"))).toEqual(["slot 1 SLOT_CONFIRMED", "slot 2 SLOT_PROCESSED"])
  })

  it("holds a slot's updates until its commitment, then sends data, block meta and status in that order", async () => {
    const launched = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const slots = { s: { filterByCommitment: true } }
    const confirmed = track(await subscribe(client, request({ transactions: curveTransactions, blocksMeta: { m: {} }, slots, commitment: CommitmentLevel.CONFIRMED })))
    const finalized = track(await subscribe(client, request({ transactions: curveTransactions, blocksMeta: { m: {} }, slots, commitment: CommitmentLevel.FINALIZED })))
    const processed = track(await subscribe(client, request({ transactions: curveTransactions, blocksMeta: { m: {} }, commitment: CommitmentLevel.PROCESSED })))
    expectOk(ledger, await buy(launched.mint.address, SOL))
    await eventually(() => (processed.lines().length === 1 ? true : undefined), { what: "processed sees the buy at once", deadlineMs: 10_000, intervalMs: 5 })
    expect(confirmed.lines()).toEqual([])
    ledger.advanceSlot()
    await eventually(() => (confirmed.lines().length === 4 ? true : undefined), { what: "confirmed release", deadlineMs: 10_000, intervalMs: 5 })
    // The slot held the launch (#0) too: it landed before this subscriber joined, but in a slot
    // not yet confirmed, so it is part of what confirmation releases.
    expect(confirmed.lines()).toEqual(["tx 1 #0", "tx 1 #1", "meta 1", "slot 1 SLOT_CONFIRMED"])
    expect(processed.lines()).toEqual(["tx 1 #1", "meta 1"])
    expect(finalized.lines()).toEqual([])
    ledger.advanceSlots(2)
    await eventually(() => (finalized.lines().length === 4 ? true : undefined), { what: "finalized release", deadlineMs: 10_000, intervalMs: 5 })
    expect(finalized.lines()).toEqual(["tx 1 #0", "tx 1 #1", "meta 1", "slot 1 SLOT_FINALIZED"])
    const meta = finalized.updates.find((u) => u.blockMeta !== undefined)!.blockMeta!
    const block = ledger.getBlock(1n)!
    expect(meta).toMatchObject({ slot: "1", blockhash: block.blockhash, parentSlot: "0", executedTransactionCount: "2" })
    expect(meta.blockTime?.timestamp).toBe(String(block.blockTimeSec))
  })

  it("replays from_slot from the retained window, then continues live without a gap or a repeat", async () => {
    const launched = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    ledger.advanceSlot()
    expectOk(ledger, await buy(launched.mint.address, SOL))
    ledger.advanceSlot()
    expectOk(ledger, await buy(launched.mint.address, SOL / 2n))
    const info = await client.subscribeReplayInfo()
    expect(info.firstAvailable).toBe("0")
    const sub = track(await subscribe(client, request({ transactions: curveTransactions, commitment: CommitmentLevel.CONFIRMED, fromSlot: "2" })))
    await eventually(() => (sub.lines().length === 1 ? true : undefined), { what: "replayed slot 2", deadlineMs: 10_000, intervalMs: 5 })
    expect(sub.lines()).toEqual(["tx 2 #0"])
    ledger.advanceSlot()
    expectOk(ledger, await buy(launched.mint.address, SOL / 4n))
    ledger.advanceSlot()
    await eventually(() => (sub.lines().length === 3 ? true : undefined), { what: "live slots 3 and 4", deadlineMs: 10_000, intervalMs: 5 })
    expect(sub.lines()).toEqual(["tx 2 #0", "tx 3 #0", "tx 4 #0"])

    // Past the retained window (20 slots), from_slot is refused with Yellowstone's status.
    ledger.advanceSlots(25)
    expect(ledger.oldestRetainedSlot).toBeGreaterThan(2n)
    const refused = await client
      .subscribe(request({ transactions: curveTransactions, fromSlot: "2" }))
      .then((s) => new Promise<unknown>((resolve) => s.on("error", resolve).resume()), (e: unknown) => e)
    expect(errorText(refused)).toContain(`broadcast from 2 is not available, last available: ${ledger.oldestRetainedSlot}`)
    expect(errorText(refused)).toContain("Operation was attempted past the valid range")
  })

  it("answers a ping request with a pong, sends its own pings, and replaces filters on a new request", async () => {
    await geyser.close()
    geyser = await startGeyserServer(ledger, { pingIntervalMs: 30 })
    client = new Client(geyser.url, undefined, undefined)
    await client.connect()
    const launched = await launchCurve(ledger, creator, WSOL_MINT_ADDRESS, { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL })
    const sub = track(await subscribe(client, request({ transactions: curveTransactions, commitment: CommitmentLevel.PROCESSED })))
    await eventually(() => (sub.updates.filter((u) => u.ping !== undefined).length >= 2 ? true : undefined), { what: "two server pings", deadlineMs: 10_000, intervalMs: 5 })
    sub.stream.write(request({ ping: { id: 42 } }))
    await eventually(() => (sub.lines().includes("pong 42") ? true : undefined), { what: "pong 42", deadlineMs: 10_000, intervalMs: 5 })
    // The ping request changed nothing: curve transactions still arrive.
    expectOk(ledger, await buy(launched.mint.address, SOL))
    await eventually(() => (sub.lines().some((l) => l.startsWith("tx")) ? true : undefined), { what: "buy after ping", deadlineMs: 10_000, intervalMs: 5 })
    const second = SOL + 1n
    // A new request replaces the filters: now only system transfers' accounts, no transactions.
    sub.stream.write(request({ accounts: { payer: { account: [creator.address], owner: [], filters: [] } }, commitment: CommitmentLevel.PROCESSED }))
    const before = sub.lines().length
    await new Promise<void>((resolve) => sub.stream.write(request({ ping: { id: 43 } }), () => resolve()))
    await eventually(() => (sub.lines().includes("pong 43") ? true : undefined), { what: "filters applied (pong 43 after them)", deadlineMs: 10_000, intervalMs: 5 })
    expectOk(ledger, await buy(launched.mint.address, second))
    expectOk(ledger, await send(ledger, creator, [getTransferSolInstruction({ from: creator, to: trader.address, lamports: SOL })]))
    await eventually(() => (sub.lines().slice(before).some((l) => l.startsWith("account")) ? true : undefined), { what: "creator account update", deadlineMs: 10_000, intervalMs: 5 })
    expect(sub.lines().slice(before).filter((l) => !l.startsWith("pong"))).toEqual([`account 1 ${creator.address}`])
  })

  it("refuses filters it does not support instead of ignoring them", async () => {
    const refused = await client
      .subscribe(request({ blocks: { b: { accountInclude: [], includeTransactions: true } } }))
      .then((s) => new Promise<unknown>((resolve) => s.on("error", resolve).resume()), (e: unknown) => e)
    expect(errorText(refused)).toContain("failed to create filter: blocks filters are not supported")
  })

  it("serves the unary calls", async () => {
    ledger.advanceSlots(4)
    expect(await client.getSlot(CommitmentLevel.PROCESSED)).toEqual({ slot: ledger.slot.toString() })
    expect(await client.getSlot(CommitmentLevel.FINALIZED)).toEqual({ slot: ledger.finalizedSlot.toString() })
    expect(await client.getBlockHeight(CommitmentLevel.CONFIRMED)).toEqual({ blockHeight: ledger.confirmedSlot.toString() })
    const lb = ledger.latestBlockhash("confirmed")
    expect(await client.getLatestBlockhash(CommitmentLevel.CONFIRMED)).toEqual({
      slot: lb.slot.toString(),
      blockhash: lb.blockhash,
      lastValidBlockHeight: lb.lastValidBlockHeight.toString()
    })
    expect((await client.isBlockhashValid(lb.blockhash)).valid).toBe(true)
    expect(await client.ping(3)).toEqual({ count: 3 })
    expect(JSON.parse((await client.getVersion()).version)).toMatchObject({ version: { package: "curvestream-localnet-geyser" } })
  })

  it("a dropped stream ends with UNAVAILABLE for the client", async () => {
    const sub = track(await subscribe(client, request({ slots: { s: {} }, commitment: CommitmentLevel.PROCESSED })))
    await eventually(() => (geyser.stats().streams === 1 ? true : undefined), { what: "stream registered", deadlineMs: 10_000, intervalMs: 5 })
    expect(geyser.dropStreams()).toBe(1)
    await eventually(() => sub.error(), { what: "stream error", deadlineMs: 10_000, intervalMs: 5 })
    expect(errorText(sub.error())).toContain("stream dropped by the localnet")
    expect(geyser.stats().streams).toBe(0)
  })
})

/** A gRPC call over raw HTTP/2 with a small receive window, so it can stop reading for real. */
const rawSubscribe = (url: string, req: SubscribeRequest) => {
  const session = http2.connect(url, { settings: { initialWindowSize: 16 * 1024 } })
  const stream = session.request({
    ":method": "POST",
    ":path": "/geyser.Geyser/Subscribe",
    "content-type": "application/grpc",
    te: "trailers"
  })
  const body = SubscribeRequest.encode(req).finish()
  const frame = Buffer.alloc(5 + body.length)
  frame.writeUInt32BE(body.length, 1)
  frame.set(body, 5)
  stream.write(frame)
  let trailers: http2.IncomingHttpHeaders | undefined
  let received = 0
  stream.on("trailers", (t) => {
    trailers = t
  })
  stream.on("data", (chunk: Buffer) => {
    received += chunk.length
  })
  stream.pause()
  return { session, stream, trailers: () => trailers, received: () => received }
}

describe("Geyser outbound bound", () => {
  it("cuts a client that stops reading with RESOURCE_EXHAUSTED instead of buffering", async () => {
    await geyser.close()
    geyser = await startGeyserServer(ledger, { pingIntervalMs: 60_000, maxInflightUpdates: 16, maxQueuedUpdates: 200 })
    const raw = rawSubscribe(geyser.url, request({ slots: { s: { filterByCommitment: false } }, commitment: CommitmentLevel.PROCESSED }))
    try {
      await eventually(() => (geyser.stats().streams === 1 ? true : undefined), { what: "raw stream registered", deadlineMs: 10_000, intervalMs: 5 })
      let slots = 0
      while (geyser.stats().laggedStreams === 0 && slots < 20_000) {
        ledger.advanceSlot()
        slots++
        if (slots % 100 === 0) await new Promise((resolve) => setImmediate(resolve))
      }
      expect(geyser.stats().laggedStreams).toBe(1)
      expect(geyser.stats().streams).toBe(0)
      // ~3 updates per slot: the stream was cut long before the client read the 16 KiB window's worth.
      expect(slots).toBeLessThan(2_000)
      raw.stream.resume()
      await eventually(() => raw.trailers(), { what: "trailers", deadlineMs: 10_000, intervalMs: 5 })
      expect(raw.trailers()!["grpc-status"]).toBe("8")
      expect(decodeURIComponent(String(raw.trailers()!["grpc-message"]))).toContain("lagged to send an update")
      // What it did receive is bounded by the window, the in-flight bound and the queue bound.
      expect(raw.received()).toBeLessThan(64 * 1024)
    } finally {
      raw.stream.close()
      raw.session.close()
    }
  })

  // Also pins that small updates leave coalesced: one DATA frame per message trips the native
  // client's h2 flood guard (GOAWAY "too_many_data_frames") long before 9,000 updates.
  it("a reading client is never cut, however many updates flow", async () => {
    const sub = track(await subscribe(client, request({ slots: { s: {} }, accounts: { sys: { account: [], owner: [SYSTEM_PROGRAM_ID], filters: [] } } })))
    await eventually(() => (geyser.stats().streams === 1 ? true : undefined), { what: "stream registered", deadlineMs: 10_000, intervalMs: 5 })
    for (let i = 0; i < 3_000; i++) ledger.advanceSlot()
    // 3,000 closed slots: 3,000 confirmed, 3,000 opened (processed), 2,998 finalized (lag 2).
    await eventually(() => (sub.lines().length >= 8_998 ? true : undefined), { what: "every slot update", deadlineMs: 20_000, intervalMs: 5 })
    expect(sub.lines()).toHaveLength(8_998)
    expect(geyser.stats().laggedStreams).toBe(0)
    expect(sub.error()).toBeUndefined()
  })
})
