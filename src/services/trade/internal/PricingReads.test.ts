import { Clock, Effect, TestClock, TestContext } from "effect"
import { describe, expect, it } from "vitest"
import type { EmbeddedWallet } from "../../wallets/WalletProvider.js"
import { makeEmbeddedAddresses } from "./PricingReads.js"

describe("makeEmbeddedAddresses", () => {
  const wallet = (accountId: string): EmbeddedWallet => ({ providerWalletId: `pw-${accountId}`, chain: "solana", address: `addr-${accountId}`, delegation: "active" })

  it("reads an account's address once; a missing wallet is read again (never cached); the cache holds at most maxEntries (LRU)", async () => {
    const reads: string[] = []
    const exists = new Set(["a", "b", "c"])
    const provider = {
      embeddedWallets: (accountId: string) => Effect.sync(() => (reads.push(accountId), exists.has(accountId) ? [wallet(accountId)] : []))
    }
    const addresses = makeEmbeddedAddresses(provider, Clock.make(), { maxEntries: 2 })
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

  it("an entry past its lifetime is read again (its age on the Clock the reads are built under)", async () => {
    let reads = 0
    const provider = { embeddedWallets: (accountId: string) => Effect.sync(() => (reads++, [wallet(accountId)])) }
    await Effect.runPromise(
      Effect.gen(function* () {
        const addresses = makeEmbeddedAddresses(provider, yield* Effect.clock, { ttlMs: 1_000 })
        yield* addresses.solanaAddress("a")
        yield* TestClock.adjust(999)
        yield* addresses.solanaAddress("a")
        expect(reads).toBe(1)
        yield* TestClock.adjust(1_001)
        yield* addresses.solanaAddress("a")
        expect(reads).toBe(2)
      }).pipe(Effect.provide(TestContext.TestContext))
    )
  })
})
