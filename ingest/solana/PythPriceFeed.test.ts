import { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { encodePriceUpdate, decodePriceUpdate, PYTH_RECEIVER_PROGRAM_ID, PYTH_SOL_USD_ACCOUNT } from "../../src/chain/solana/program/accounts/PythPriceUpdate.js"
import { SYSTEM_PROGRAM_ID } from "../../src/chain/solana/program/ProgramIds.js"
import { describe, expect, it } from "vitest"
import { PythPriceHolder } from "./PythPriceFeed.js"

const genesis = new Ledger({ genesisTimeSec: 1_790_000_000 }).getAccount(PYTH_SOL_USD_ACCOUNT)!.data
const withPrice = (price: bigint) => encodePriceUpdate({ ...decodePriceUpdate(genesis)!, price })

describe("the held Pyth price", () => {
  it("follows the newest slot, never moves back for an older one, and holds nothing for data that is not a receiver-owned PriceUpdateV2", () => {
    const h = new PythPriceHolder()
    expect(h.latest()).toBeUndefined()
    h.apply(10n, PYTH_RECEIVER_PROGRAM_ID, withPrice(100n))
    h.apply(9n, PYTH_RECEIVER_PROGRAM_ID, withPrice(90n)) // a replayed older update
    expect(h.latest()).toMatchObject({ price: 100n, exponent: -8, publishTimeMs: 1_790_000_000_000, trading: true })
    h.apply(11n, PYTH_RECEIVER_PROGRAM_ID, withPrice(110n))
    expect(h.latest()?.price).toBe(110n)
    h.apply(12n, SYSTEM_PROGRAM_ID, withPrice(120n)) // not the receiver's account
    expect(h.latest()).toBeUndefined()
    h.apply(13n, PYTH_RECEIVER_PROGRAM_ID, new Uint8Array(10)) // closed or garbage
    expect(h.latest()).toBeUndefined()
  })
})
