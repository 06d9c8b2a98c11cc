import { Effect } from "effect"
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
