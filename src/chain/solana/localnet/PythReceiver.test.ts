/**
 * The localnet's Pyth price account and receiver: the genesis account is a `PriceUpdateV2` at
 * Pyth's published offsets, the publisher's post moves it through a real signed transaction, and
 * anyone else's post, an account the receiver does not own, or unknown data is refused.
 */
import { generateKeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner, pythPublisherSigner } from "../client/DevSigners.js"
import { getLocalnetPostPriceInstruction } from "../client/PythInstructions.js"
import {
  decodePriceUpdate,
  encodePriceUpdate,
  PRICE_UPDATE_V2_DISCRIMINATOR,
  PRICE_UPDATE_V2_SIZE,
  PYTH_RECEIVER_PROGRAM_ID,
  PYTH_SOL_USD_ACCOUNT,
  PYTH_SOL_USD_FEED_ID
} from "../program/accounts/PythPriceUpdate.js"
import { addressFromBytes } from "../program/internal/bytes.js"
import { PYTH_PUBLISHER_ADDRESS } from "./DevKeys.js"
import { GENESIS_SOL_USD, Ledger } from "./Ledger.js"
import { expectOk, send } from "./testkit.js"

const GENESIS_SEC = 1_790_000_000

describe("Pyth PriceUpdateV2 layout", () => {
  it("the genesis SOL/USD account reads at Pyth's published offsets (Full verification) and decodes to the same fields", () => {
    const ledger = new Ledger({ genesisTimeSec: GENESIS_SEC })
    const account = ledger.getAccount(PYTH_SOL_USD_ACCOUNT)!
    expect(account.owner).toBe(PYTH_RECEIVER_PROGRAM_ID)
    const data = account.data
    expect(data.length).toBe(134)
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
    // discriminator sha256("account:PriceUpdateV2")[0..8] = 22f123639d7ef4cd (pyth-solana-receiver-sdk's IDL)
    expect(Buffer.from(data.subarray(0, 8)).toString("hex")).toBe("22f123639d7ef4cd")
    expect(Buffer.from(PRICE_UPDATE_V2_DISCRIMINATOR).toString("hex")).toBe("22f123639d7ef4cd")
    expect(addressFromBytes(data.subarray(8, 40))).toBe(PYTH_PUBLISHER_ADDRESS)
    expect(data[40]).toBe(1) // VerificationLevel::Full, no payload: price_message starts at 41
    expect(Buffer.from(data.subarray(41, 73)).toString("hex")).toBe("ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d")
    expect(view.getBigInt64(73, true)).toBe(15_000_000_000n) // price
    expect(view.getBigUint64(81, true)).toBe(5_000_000n) // conf
    expect(view.getInt32(89, true)).toBe(-8) // exponent
    expect(view.getBigInt64(93, true)).toBe(BigInt(GENESIS_SEC)) // publish_time
    expect(view.getBigUint64(125, true)).toBe(0n) // posted_slot
    const decoded = decodePriceUpdate(data)!
    expect(decoded).toMatchObject({ verificationLevel: { kind: "full" }, price: GENESIS_SOL_USD.price, conf: GENESIS_SOL_USD.conf, exponent: -8, publishTimeSec: BigInt(GENESIS_SEC) })
    expect(Buffer.from(decoded.feedId)).toEqual(Buffer.from(PYTH_SOL_USD_FEED_ID))
  })

  it("a Partial verification level carries its signature count and shifts the message by one byte", () => {
    const base = decodePriceUpdate(new Ledger({ genesisTimeSec: GENESIS_SEC }).getAccount(PYTH_SOL_USD_ACCOUNT)!.data)!
    const bytes = encodePriceUpdate({ ...base, verificationLevel: { kind: "partial", numSignatures: 5 } })
    expect([bytes.length, bytes[40], bytes[41]]).toEqual([PRICE_UPDATE_V2_SIZE, 0, 5])
    expect(new DataView(bytes.buffer).getBigInt64(74, true)).toBe(base.price)
    expect(decodePriceUpdate(bytes)).toEqual({ ...base, verificationLevel: { kind: "partial", numSignatures: 5 } })
  })

  it("refuses data that is not a PriceUpdateV2: another discriminator, a short account, an unknown verification tag", () => {
    const good = new Ledger({ genesisTimeSec: GENESIS_SEC }).getAccount(PYTH_SOL_USD_ACCOUNT)!.data
    const otherKind = good.slice()
    otherKind[0] = otherKind[0]! ^ 0xff
    const badTag = good.slice()
    badTag[40] = 2
    expect([decodePriceUpdate(otherKind), decodePriceUpdate(good.slice(0, 100)), decodePriceUpdate(badTag)]).toEqual([undefined, undefined, undefined])
  })
})

describe("localnet Pyth receiver", () => {
  it("the publisher's post moves the price, stamps the slot's clock time and keeps the feed id", async () => {
    let nowMs = GENESIS_SEC * 1000
    const ledger = new Ledger({ genesisTimeSec: GENESIS_SEC, clockMs: () => nowMs })
    const publisher = await pythPublisherSigner()
    nowMs += 5_000
    ledger.advanceSlot()
    const r = expectOk(
      ledger,
      await send(ledger, publisher, [getLocalnetPostPriceInstruction({ publisher, priceAccount: PYTH_SOL_USD_ACCOUNT, price: 16_325_000_000n, conf: 7_000_000n, exponent: -8 })])
    )
    const after = decodePriceUpdate(ledger.getAccount(PYTH_SOL_USD_ACCOUNT)!.data)!
    expect(after).toMatchObject({ price: 16_325_000_000n, conf: 7_000_000n, exponent: -8, publishTimeSec: BigInt(GENESIS_SEC + 5), prevPublishTimeSec: BigInt(GENESIS_SEC), postedSlot: r.slot })
    expect(Buffer.from(after.feedId)).toEqual(Buffer.from(PYTH_SOL_USD_FEED_ID))
  })

  it("refuses a post signed by anyone but the publisher, to an account it does not own, or with unknown data", async () => {
    const ledger = new Ledger({ genesisTimeSec: GENESIS_SEC })
    const stranger = await devSigner(0)
    const before = ledger.getAccount(PYTH_SOL_USD_ACCOUNT)!.data.slice()
    const byStranger = await send(ledger, stranger, [getLocalnetPostPriceInstruction({ publisher: stranger, priceAccount: PYTH_SOL_USD_ACCOUNT, price: 1n, conf: 0n, exponent: 0 })])
    expect(byStranger._tag === "Landed" && byStranger.err).toEqual({ InstructionError: [0, "MissingRequiredSignature"] })
    const publisher = await pythPublisherSigner()
    const notOwned = await send(ledger, publisher, [getLocalnetPostPriceInstruction({ publisher, priceAccount: (await generateKeyPairSigner()).address, price: 1n, conf: 0n, exponent: 0 })])
    expect(notOwned._tag === "Landed" && notOwned.err).toEqual({ InstructionError: [0, "IncorrectProgramId"] })
    const ix = getLocalnetPostPriceInstruction({ publisher, priceAccount: PYTH_SOL_USD_ACCOUNT, price: 1n, conf: 0n, exponent: 0 })
    const garbled = await send(ledger, publisher, [{ ...ix, data: new Uint8Array(ix.data!).fill(7, 0, 8) }])
    expect(garbled._tag === "Landed" && garbled.err).toEqual({ InstructionError: [0, "InvalidInstructionData"] })
    expect(ledger.getAccount(PYTH_SOL_USD_ACCOUNT)!.data).toEqual(before)
  })
})
