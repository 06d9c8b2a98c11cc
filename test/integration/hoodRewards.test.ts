/**
 * Hood staking rewards' split (spec document 2, 2.4) through the distributor, over the real wallet
 * tables and provider (PGlite), staked receipt on the Solana localnet read over its RPC, and a Hood
 * curve really graduated on the Hood localnet (created, bought past its threshold, migrated by the
 * keeper, which sends the staker allocation to the staker vault). The accounts:
 * - A: embedded Solana and EVM wallets, 100 staked on the embedded wallet, 20 on its first linked
 *   wallet, and 1,000 on its 200th linked wallet, past the 200-wallet cap (not counted);
 * - B: 300 staked, no EVM wallet: forfeits, its share goes to the others;
 * - L: 60 staked on its embedded wallet, and 500 on the linked wallet that is M's embedded wallet
 *   (claimed by both: counted for neither);
 * - M: the shared wallet only (weight 0: no share, though it has an EVM wallet).
 * The allocation is split 120 : 60 between A and L, recorded once with its figures; sweeping again,
 * or two distributors at once, records nothing more; an unreadable balance records nothing.
 * Through the staking service: A's positions list its Hood reward on its embedded wallet, B's say
 * it earns no EVM-chain reward, and a claim of a Hood reward is 403 `STAKING_REWARD_NOT_OWNED`
 * for its own account and another alike (claimed from the site).
 */
import { address, generateKeyPairSigner } from "@solana/kit"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { type Address, getAddress, zeroAddress } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buy, createCurve, migrate } from "../../src/chain/hood/client/HoodClient.js"
import { clientsFor, publicClientOf, startHoodLocalnet, type StartedHoodLocalnet } from "../../src/chain/hood/localnet/testkit.js"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { STAKED_SVC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { findEconomics } from "../../src/domain/Economics.js"
import { STAKED_SVC_MINT } from "../../src/domain/QuotePairs.js"
import { solanaBalanceReader } from "../../src/services/accounts/BalanceReader.js"
import { hoodRewardChain, makeHoodRewards } from "../../src/services/staking/HoodRewards.js"
import { make as makeStaking, type StakingCaller } from "../../src/services/staking/StakingService.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import { mapFailure } from "../../api/ErrorTable.js"
import * as SqlClient from "@effect/sql/SqlClient"
import { SVC_MINT } from "../../src/domain/QuotePairs.js"
import { makeAccountWallets } from "../../src/services/wiring/Wiring.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"

const UNIT = 1_000_000n
const SOURCE = "hood:logs:test"
let harness: WalletHarness
let ledger: Ledger
let rpcUrl: string
let hood: StartedHoodLocalnet
let scope: Scope.CloseableScope
let token: Address
let curve: Address
let allocation: bigint
const evm: Record<string, string> = {}

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
const stake = (owner: string, units: bigint) => ledger.mintTestTokens(STAKED_SVC_MINT_ADDRESS, address(owner), units * UNIT)
const embedded = async (accountId: string, chain: "solana" | "evm") => (await run(harness.provider.ensureEmbeddedWallet(accountId, chain))).address
const linkRow = (accountId: string, chain: "solana" | "evm", addr: string, i: number) =>
  run(
    harness.sql`
      INSERT INTO wallets (id, account_id, chain, address, address_key, kind, created_at)
      VALUES (${`w-${accountId}-${chain}-${i}`}, ${accountId}, ${chain}, ${addr}, ${chain === "evm" ? addr.toLowerCase() : addr}, 'linked', ${new Date(1_000 + i)})`
  )

const rewardsOf = (balancesUrl = rpcUrl) =>
  makeHoodRewards({
    sql: harness.sql,
    accountWallets: makeAccountWallets(harness.sql, harness.provider),
    balances: solanaBalanceReader({ rpcUrl: balancesUrl, stakedMint: STAKED_SVC_MINT }),
    chain: hoodRewardChain(publicClientOf(hood), hood.addresses.factory)
  })

beforeAll(async () => {
  harness = await startWalletHarness()
  scope = await run(Scope.make())
  const net = Context.get(await run(Layer.buildWithScope(SolanaLocalnet.layer({ ledger: { slotMs: 50 } }), scope)), SolanaLocalnet)
  ledger = net.ledger
  rpcUrl = net.rpcUrl

  // A: embedded (100), linked #1 (20), linked #2..#200 (nothing), linked #200 past the cap (1,000).
  await stake(await embedded("acct-a", "solana"), 100n)
  evm["acct-a"] = await embedded("acct-a", "evm")
  const linked = await Promise.all(Array.from({ length: 200 }, () => generateKeyPairSigner()))
  for (const [i, s] of linked.entries()) await linkRow("acct-a", "solana", s.address, i)
  await stake(linked[0]!.address, 20n)
  await stake(linked[199]!.address, 1_000n)
  // B: staked, no EVM wallet.
  await stake(await embedded("acct-b", "solana"), 300n)
  // L: embedded (60) and, linked, M's embedded wallet (500: claimed by both, counted for neither); its EVM wallet is a linked one.
  await stake(await embedded("acct-l", "solana"), 60n)
  const shared = await embedded("acct-m", "solana")
  await stake(shared, 500n)
  await linkRow("acct-l", "solana", shared, 0)
  evm["acct-l"] = getAddress(`0x${"11".repeat(20)}`)
  await linkRow("acct-l", "evm", evm["acct-l"], 1)
  await linkRow("acct-m", "evm", getAddress(`0x${"22".repeat(20)}`), 1)

  // A Hood curve graduated for real: the keeper's migrate sends the staker allocation to the vault.
  hood = await startHoodLocalnet()
  const ethTier = findEconomics("hood", "eth")!.tiers.find((t) => t.tier === "open")!
  const created = await createCurve(clientsFor(hood, hood.roles.traders[0]!), hood.addresses.factory, {
    name: "Split",
    symbol: "SPLIT",
    quoteToken: zeroAddress,
    virtualQuoteRaw: ethTier.virtualQuoteRaw,
    thresholdRaw: ethTier.thresholdRaw,
    stakerAllocationBps: 300,
    dexVersion: "v3"
  })
  token = created.token
  curve = created.curve
  await buy(clientsFor(hood, hood.roles.traders[1]!), curve, { amountInRaw: 10n * 10n ** 18n, quoteToken: zeroAddress })
  await migrate(clientsFor(hood, hood.roles.keeper), curve)
  const g = await run(hoodRewardChain(publicClientOf(hood), hood.addresses.factory).graduation(token.toLowerCase()))
  allocation = g!.allocationRaw
  // What the Hood ingester records on CurveMigrated (the distributor's to-do list).
  await run(harness.sql`
    INSERT INTO hood_pools (source, pool, mint, token_is_token0, fee_pips, from_position, block)
    VALUES (${SOURCE}, ${"0x" + "ab".repeat(20)}, ${token.toLowerCase()}, true, 3000, 'h:1', 1)`)
}, 180_000)

afterAll(async () => {
  await hood?.close()
  if (scope !== undefined) await run(Scope.close(scope, Exit.void))
  await harness?.close()
})

describe("Hood staking rewards: the split of a graduation's staker allocation", () => {
  it("an unreadable balance records nothing (never a zero), and the token stays to do", async () => {
    const rewards = rewardsOf("http://127.0.0.1:9")
    expect(await run(rewards.sweep)).toBe(0)
    expect(await run(harness.sql`SELECT * FROM hood_reward_distributions`)).toEqual([])
    expect((await run(rewards.pending)).map((p) => p.mint)).toEqual([token.toLowerCase()])
  })

  it("splits 120 : 60 between the EVM-walleted stakers; B forfeits, the shared wallet and the wallet past the cap count for nobody", async () => {
    expect(allocation).toBe((10n ** 27n * 300n) / 10_000n)
    const rewards = rewardsOf()
    // Two distributors at once (two API replicas): one records.
    const p = (await run(rewards.pending))[0]!
    const both = await Promise.all([run(rewards.distribute(p)), run(rewards.distribute(p))])
    expect([...both].sort()).toEqual([0, 2])
    const [d] = await run(harness.sql<Record<string, unknown>>`SELECT * FROM hood_reward_distributions`)
    const aShare = (allocation * 120n) / 180n
    const lShare = (allocation * 60n) / 180n
    expect(d).toMatchObject({
      source: SOURCE,
      mint: token.toLowerCase(),
      curve: curve.toLowerCase(),
      symbol: "SPLIT",
      name: "Split",
      allocation_raw: allocation.toString(),
      eligible_staked_raw: (180n * UNIT).toString(),
      distributed_raw: (aShare + lShare).toString(),
      undistributed_raw: (allocation - aShare - lShare).toString(),
      recipients: 2,
      forfeited_accounts: 1
    })
    const a = await run(rewards.forAccount("acct-a"))
    expect(a).toEqual([expect.objectContaining({ mint: token.toLowerCase(), symbol: "SPLIT", amountRaw: aShare.toString(), evmWallet: evm["acct-a"] })])
    expect(a[0]!.rewardId).toMatch(/^hood-[1-9][0-9]*$/)
    expect(await run(rewards.forAccount("acct-l"))).toEqual([expect.objectContaining({ amountRaw: lShare.toString(), evmWallet: evm["acct-l"] })])
    expect(await run(rewards.forAccount("acct-b"))).toEqual([])
    expect(await run(rewards.forAccount("acct-m"))).toEqual([])
    expect(await run(rewards.byId(a[0]!.rewardId))).toEqual(a[0])
    expect(await run(rewards.byId("hood-999999"))).toBeUndefined()

    // Recorded once: nothing is left to do, and a later sweep changes nothing.
    expect(await run(rewards.pending)).toEqual([])
    expect(await run(rewards.sweep)).toBe(0)
    expect(await run(harness.sql`SELECT seq FROM hood_rewards`)).toHaveLength(2)
  })

  it("positions list the account's Hood reward; one without an EVM wallet is told; a claim of a Hood reward is refused 403", async () => {
    const staking = await run(
      makeStaking(
        { rpcUrl, platformMint: SVC_MINT, receiptMint: STAKED_SVC_MINT },
        {
          balances: solanaBalanceReader({ rpcUrl, stakedMint: STAKED_SVC_MINT }),
          accountWallets: makeAccountWallets(harness.sql, harness.provider),
          hoodChain: hoodRewardChain(publicClientOf(hood), hood.addresses.factory)
        }
      ).pipe(
        Effect.provideService(WalletService, harness.service),
        Effect.provideService(WalletProvider, harness.provider),
        Effect.provideService(SqlClient.SqlClient, harness.sql)
      )
    )
    const callerOf = (key: string): StakingCaller => {
      const principal = principals[key] as Principal
      return { accountId: principal.accountId, keyId: principal.keyId, embeddedWallet: "allowed", principal, keyPaused: false }
    }
    const a = await run(staking.positions(callerOf("key-a1")))
    const main = (a.wallets as Array<Record<string, any>>).find((w) => w.payer === "main")!
    const hoodReward = (main.unclaimedRewards as Array<Record<string, string>>).find((r) => r.rewardId!.startsWith("hood-"))!
    expect(hoodReward).toEqual({
      rewardId: expect.stringMatching(/^hood-[1-9][0-9]*$/),
      mint: token.toLowerCase(),
      symbol: "SPLIT",
      name: "Split",
      amountRaw: ((allocation * 120n) / 180n).toString(),
      distributedAt: expect.any(String),
      claiming: false
    })
    expect(main.eligibility[0]).toBe("Staked receipt counts toward Pro and earns rewards.")
    const b = await run(staking.positions(callerOf("key-b1")))
    const bMain = (b.wallets as Array<Record<string, any>>).find((w) => w.payer === "main")!
    expect(bMain.unclaimedRewards).toEqual([])
    expect(bMain.eligibility[0]).toMatch(/no EVM wallet, so it earns no EVM-chain reward/)

    const refusal = (key: string, rewardId: string) => run(Effect.flip(mapFailure(staking.claimReward(callerOf(key), rewardId))))
    for (const key of ["key-a1", "key-b1"]) {
      const refused = await refusal(key, hoodReward.rewardId!)
      expect([refused.httpStatus, refused.code], key).toEqual([403, "STAKING_REWARD_NOT_OWNED"])
    }
    expect((await refusal("key-a1", hoodReward.rewardId!)).message).toMatch(/claim this one from the site/)
    const missing = await refusal("key-a1", "hood-999999")
    expect([missing.httpStatus, missing.code]).toEqual([404, "STAKING_REWARD_NOT_FOUND"])
  })

  it("a sweep takes at most batchMax graduations, oldest first", async () => {
    const mints = ["0x" + "01".repeat(20), "0x" + "02".repeat(20), "0x" + "03".repeat(20)]
    for (const [i, mint] of mints.entries()) {
      await run(harness.sql`
        INSERT INTO hood_pools (source, pool, mint, token_is_token0, fee_pips, from_position, block)
        VALUES (${SOURCE}, ${"0x" + String(i + 1).padStart(2, "0").repeat(20)}, ${mint}, true, 3000, 'h:2', ${10 + i})`)
    }
    try {
      const rewards = makeHoodRewards(
        { sql: harness.sql, accountWallets: makeAccountWallets(harness.sql, harness.provider), balances: solanaBalanceReader({ rpcUrl, stakedMint: STAKED_SVC_MINT }), chain: undefined },
        { batchMax: 2 }
      )
      expect((await run(rewards.pending)).map((p) => p.mint)).toEqual(mints.slice(0, 2))
    } finally {
      await run(harness.sql`DELETE FROM hood_pools WHERE mint IN ${harness.sql.in(mints)}`)
    }
  })
})
