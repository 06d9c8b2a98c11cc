import { Clock, Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { EmbeddedWallet } from "../../wallets/WalletProvider.js"
import { clockAt } from "../../../../test/support/clock.js"
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

  it("an entry past its lifetime is read again (its age on the Clock the reads are built under, not the running fiber's)", async () => {
    let reads = 0
    let t = 1_000_000
    const provider = { embeddedWallets: (accountId: string) => Effect.sync(() => (reads++, [wallet(accountId)])) }
    // Built on a clock the test moves; run under the default runtime, whose clock does not move.
    const addresses = makeEmbeddedAddresses(provider, clockAt(() => t), { ttlMs: 1_000 })
    const get = () => Effect.runPromise(addresses.solanaAddress("a"))
    await get()
    t += 999
    await get()
    expect(reads).toBe(1)
    t += 1_001
    await get()
    expect(reads).toBe(2)
  })
})
