/**
 * `BalanceReader` for Solana over real JSON-RPC against the localnet: platform-token and
 * staked-receipt balances of an owner's associated token accounts, zero for an owner with none,
 * `BalanceUnavailable` when the node cannot be reached, and the bounded cache (a value is served
 * until its TTL, which is clamped to the spec's 5 minutes); and the tier snapshot reading Pro by
 * staking live from those balances over HTTP.
 */
import { generateKeyPairSigner } from "@solana/kit"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SolanaLocalnet, type SolanaLocalnetShape } from "../../src/chain/solana/localnet/LocalnetService.js"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { BALANCE_TTL_MS_MAX, cached, solanaBalanceReader, solanaLayer } from "../../src/services/accounts/BalanceReader.js"
import { call, startHarness } from "../support/accountsHarness.js"
import { eventually } from "../support/eventually.js"
import { clockAt } from "../support/clock.js"

describe("Solana balance reader", () => {
  let scope: Scope.CloseableScope
  let localnet: SolanaLocalnetShape
  beforeAll(async () => {
    scope = await Effect.runPromise(Scope.make())
    const ctx = await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ ledger: { slotMs: 20 } }), scope))
    localnet = ctx.unsafeMap.get(SolanaLocalnet.key) as SolanaLocalnetShape
  }, 60_000)
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  const settle = async () => {
    const target = localnet.ledger.slot + 40n
    await eventually(() => localnet.ledger.slot >= target, { what: `slot ${target}`, intervalMs: 20 })
  }

  it("reads held and staked balances from the owner's token accounts", async () => {
    const owner = (await generateKeyPairSigner()).address
    const empty = (await generateKeyPairSigner()).address
    localnet.ledger.mintTestTokens(SVC_MINT_ADDRESS, owner, 1_234_000_000n)
    localnet.ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, owner, 77n)
    localnet.ledger.mintTestTokens(USDC_MINT_ADDRESS, owner, 5n) // another mint counts for neither
    await settle()
    const reader = solanaBalanceReader({ rpcUrl: localnet.rpcUrl, stakedMint: STAKED_SVC_MINT_ADDRESS })
    expect(await Effect.runPromise(reader.platformTokenBalance("solana", owner))).toBe(1_234_000_000n)
    expect(await Effect.runPromise(reader.stakedBalance("solana", owner))).toBe(77n)
    expect(await Effect.runPromise(reader.platformTokenBalance("solana", empty))).toBe(0n)
    const noStaking = solanaBalanceReader({ rpcUrl: localnet.rpcUrl })
    expect(await Effect.runPromise(noStaking.stakedBalance("solana", owner))).toBe(0n)
    const bad = await Effect.runPromise(Effect.flip(reader.platformTokenBalance("solana", "not-an-address")))
    expect(bad._tag).toBe("BalanceUnavailable")
  })

  it("fails with BalanceUnavailable when the node is unreachable; never zero", async () => {
    const reader = solanaBalanceReader({ rpcUrl: "http://127.0.0.1:9", timeoutMs: 2_000 })
    const owner = (await generateKeyPairSigner()).address
    const e = await Effect.runPromise(Effect.flip(reader.platformTokenBalance("solana", owner)))
    expect(e._tag).toBe("BalanceUnavailable")
  })

  it("caches within the TTL (clamped to 5 minutes), then reads again; failures are not cached", async () => {
    const owner = (await generateKeyPairSigner()).address
    localnet.ledger.mintTestTokens(SVC_MINT_ADDRESS, owner, 5n)
    await settle()
    let now = 0
    const reader = cached(solanaBalanceReader({ rpcUrl: localnet.rpcUrl }), { ttlMs: 24 * 3_600_000 })
    // The cache reads time from the Clock: each read runs on a clock fixed at `now`.
    const read = () => Effect.runPromise(reader.platformTokenBalance("solana", owner).pipe(Effect.withClock(clockAt(now))))
    expect(await read()).toBe(5n)
    localnet.ledger.mintTestTokens(SVC_MINT_ADDRESS, owner, 5n)
    await settle()
    now = BALANCE_TTL_MS_MAX - 1
    expect(await read()).toBe(5n)
    now = BALANCE_TTL_MS_MAX
    expect(await read()).toBe(10n)
  })

  it("Pro by staking: the staked receipt summed over the account's Solana wallets, read live: Free one raw unit below, Pro at the threshold", async () => {
    const a = (await generateKeyPairSigner()).address
    const b = (await generateKeyPairSigner()).address
    const h = await startHarness({
      wallets: { delegatedChains: ["solana"], solanaWallets: [a, b] },
      balances: solanaLayer({ rpcUrl: localnet.rpcUrl, stakedMint: STAKED_SVC_MINT_ADDRESS, ttlMs: 0 })
    })
    try {
      const { session } = await h.newAccount()
      const unit = 1_000_000n // 6 decimals
      localnet.ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, a, 300_000n * unit)
      localnet.ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, b, 200_000n * unit - 1n)
      localnet.ledger.mintTestTokens(SVC_MINT_ADDRESS, b, 999_999n * unit) // held: just under its own threshold
      await settle()
      const below = await call(h.url, "GET", "/api/v1/agent/tier", { session })
      expect(below.status).toBe(200)
      expect(below.body).toMatchObject({ tier: "free", liveTier: "free", stakedCndl: "499999.999999", heldCndl: "999999" })
      localnet.ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, b, 1n)
      await settle()
      const pro = await call(h.url, "GET", "/api/v1/agent/tier", { session })
      expect(pro.body).toMatchObject({ tier: "pro", liveTier: "pro", stakedCndl: "500000", heldCndl: "999999", feeBps: 50 })
    } finally {
      await h.close()
    }
  }, 60_000)
})
