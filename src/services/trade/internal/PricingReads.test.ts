import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { foldCore, newMarket } from "../../../../test/support/marketCores.js"
import type { MarketCore } from "../../../../actors/market/MarketActor.js"
import type { EmbeddedWallet } from "../../wallets/WalletProvider.js"
import { indexedSolanaVenue, makeEmbeddedAddresses } from "./PricingReads.js"
import { quoteVenue } from "../VenueQuote.js"

const MINT = "PriceReadMint111111111111111111111111111111"

const indexOf = (cores: ReadonlyArray<MarketCore>, warming = false) => ({
  warming: () => warming,
  market: (chain: string, mint: string) => cores.find((c) => c.chain === chain && c.mint === mint)
})

describe("indexedSolanaVenue", () => {
  it("prices a trading curve and a migrated pool from the index, as the quote route does; anything else is left to the chain", () => {
    const { market, core } = newMarket("solana", { mint: MINT })
    const trading = indexedSolanaVenue(indexOf([core]), MINT)
    expect(trading).toMatchObject({ _tag: "Open", quoteMint: core.identity.quoteMint, state: { _tag: "Curve", state: core.curveState } })
    const q = trading?._tag === "Open" ? quoteVenue(trading.state, "buy", 10_000_000n) : undefined
    expect(q?._tag).toBe("Filled")

    const events = [market.created(), ...market.buy("t1", 1_000n * 10n ** 9n)]
    const completed = foldCore(events)
    // Completed (graduating): the chain decides (its pool may be seeded already).
    expect(indexedSolanaVenue(indexOf([completed]), MINT)).toBeUndefined()
    const migrated = foldCore([...events, market.migrated(50)])
    expect(indexedSolanaVenue(indexOf([migrated]), MINT)).toMatchObject({
      _tag: "Open",
      state: { _tag: "SolanaPool", reserves: { quoteReserveRaw: migrated.pool!.quoteReserveRaw, tokenReserveRaw: migrated.pool!.tokenReserveRaw } }
    })
    // Unknown here, or the index still warming: the chain.
    expect(indexedSolanaVenue(indexOf([]), MINT)).toBeUndefined()
    expect(indexedSolanaVenue(indexOf([core], true), MINT)).toBeUndefined()
    // A Hood market of the same address is not a Solana venue.
    const hood = newMarket("hood", { mint: "0x00000000000000000000000000000000000000aa" }).core
    expect(indexedSolanaVenue(indexOf([hood]), hood.mint)).toBeUndefined()
  })
})

describe("makeEmbeddedAddresses", () => {
  const wallet = (accountId: string): EmbeddedWallet => ({ providerWalletId: `pw-${accountId}`, chain: "solana", address: `addr-${accountId}`, delegation: "active" })

  it("reads an account's address once; a missing wallet is read again (never cached); the cache holds at most maxEntries (LRU)", async () => {
    const reads: string[] = []
    const exists = new Set(["a", "b", "c"])
    const provider = {
      embeddedWallets: (accountId: string) => Effect.sync(() => (reads.push(accountId), exists.has(accountId) ? [wallet(accountId)] : []))
    }
    const addresses = makeEmbeddedAddresses(provider, () => 0, { maxEntries: 2 })
    const get = (id: string) => Effect.runPromise(addresses.solanaAddress(id))

    expect(await get("a")).toBe("addr-a")
    expect(await get("a")).toBe("addr-a")
    expect(reads).toEqual(["a"])

    expect(await get("z")).toBeUndefined()
    exists.add("z")
    expect(await get("z")).toBe("addr-z")
    expect(reads).toEqual(["a", "z", "z"])

    // Bound: a and z cached; b evicts the least recently used (a).
    expect(addresses.size()).toBe(2)
    expect(await get("b")).toBe("addr-b")
    expect(addresses.size()).toBe(2)
    expect(await get("z")).toBe("addr-z")
    expect(await get("a")).toBe("addr-a")
    expect(reads).toEqual(["a", "z", "z", "b", "a"])
  })

  it("an entry past its lifetime is read again", async () => {
    let now = 0
    let reads = 0
    const provider = { embeddedWallets: (accountId: string) => Effect.sync(() => (reads++, [wallet(accountId)])) }
    const addresses = makeEmbeddedAddresses(provider, () => now, { ttlMs: 1_000 })
    await Effect.runPromise(addresses.solanaAddress("a"))
    now = 999
    await Effect.runPromise(addresses.solanaAddress("a"))
    expect(reads).toBe(1)
    now = 2_000
    await Effect.runPromise(addresses.solanaAddress("a"))
    expect(reads).toBe(2)
  })
})
