/**
 * Linked and TEE payers through the staking service (spec document 2, 3.3 and 4.2), over the real
 * wallet service (PGlite), the local wallet provider and the Solana localnet over its RPC: a TEE
 * wallet's build is `built` with a single-use sign claim and sends nothing; the sign relay signs it;
 * `submit` takes only every signature over the exact built message and broadcasts once (20
 * concurrent submits land one transaction); `confirm` records a landing made elsewhere without
 * sending, also on a build that expired; an expired build refuses submit. The status mapping's
 * refusals not reachable from the embedded e2e, each through the error table to its status and
 * code: 402 for SOL short of fee, rent and reserve; 409 for the pool's active-withdrawal limit and
 * for finishing a finished withdrawal; reward claims answering 409 already claimed (paid on chain
 * with no stored signature) and 503 claim failed (retryable; a later claim still pays once).
 * The crash window of an embedded operation (recorded, signed, never sent): the restarted service
 * never sends it; meanwhile it is 409 pending (retryable); it settles failed once its blockhash
 * expires, a replay answers 409 with its signature, and a new clientStakeId stakes once.
 * Operations in flight across two service instances (two processes on one database): racing
 * resumes take each once, a watched one is skipped, a dead owner's is taken over once its lease
 * ends; none is sent.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { address, getBase64Encoder } from "@solana/kit"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Ledger } from "../../src/chain/solana/localnet/Ledger.js"
import { SolanaLocalnet } from "../../src/chain/solana/localnet/LocalnetService.js"
import { ataOf, tokenBalance } from "../../src/chain/solana/localnet/testkit.js"
import { keeperSigner } from "../../src/chain/solana/client/DevSigners.js"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, USDC_MINT_ADDRESS } from "../../src/chain/solana/program/ProgramIds.js"
import { STAKED_SVC_MINT, SVC_MINT } from "../../src/domain/QuotePairs.js"
import { solanaBalanceReader } from "../../src/services/accounts/BalanceReader.js"
import { makeAccountWallets } from "../../src/services/wiring/Wiring.js"
import { makeStakingStore, type OperationRow } from "../../src/services/staking/StakingStore.js"
import {
  bodyHashOf,
  make as makeStaking,
  type StakeBuildInput,
  STAKING_LEASE_KIND,
  type StakingCaller,
  type StakingFailure,
  stakingLeaseKey,
  type StakingServiceShape
} from "../../src/services/staking/StakingService.js"
import { makeRowLeases, type RowLeases } from "../../src/db/RowLease.js"
import { createHash } from "node:crypto"
import { WalletProvider } from "../../src/services/wallets/WalletProvider.js"
import { WalletService } from "../../src/services/wallets/WalletService.js"
import type { Principal } from "../../src/services/wallets/Principal.js"
import { mapFailure } from "../../api/ErrorTable.js"
import { eventually } from "../support/eventually.js"
import { principals, startWalletHarness, type WalletHarness } from "../support/walletHarness.js"
import { clockAt } from "../support/clock.js"

const UNIT = 1_000_000n
let harness: WalletHarness
let ledger: Ledger
let staking: StakingServiceShape
/** The same service with no distributor key: reward claims cannot be paid. */
let noDistributor: StakingServiceShape
let scope: Scope.CloseableScope
let ticker: NodeJS.Timeout
let wallet: { id: string; address: string }
const clock = { offsetMs: 0 }

const keyA1 = principals["key-a1"] as Principal
const caller: StakingCaller = { accountId: "acct-a", keyId: "kid-a1", embeddedWallet: "denied", principal: keyA1, keyPaused: false }
const b64 = getBase64Encoder()

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(e))

const sign = async (walletId: string, claimId: string, transaction: string): Promise<Uint8Array> => {
  const signed = await Effect.runPromise(harness.service.signClaimed(keyA1, walletId, { claimId, transaction: new Uint8Array(b64.encode(transaction)) }))
  return new Uint8Array(b64.encode(signed.signedTransaction))
}

beforeAll(async () => {
  harness = await startWalletHarness()
  scope = await Effect.runPromise(Scope.make())
  const net = Context.get(
    await Effect.runPromise(Layer.buildWithScope(SolanaLocalnet.layer({ manualSlots: true, ledger: { stakePool: { withdrawalTimelockSeconds: 1n } } }), scope)),
    SolanaLocalnet
  )
  ledger = net.ledger
  ticker = setInterval(() => ledger.advanceSlot(), 20)
  const stakingClock = clockAt(() => harness.clock.ms + clock.offsetMs)
  staking = await Effect.runPromise(
    makeStaking(
      {
        rpcUrl: net.rpcUrl,
        platformMint: SVC_MINT,
        receiptMint: STAKED_SVC_MINT,
        pollIntervalMs: 20,
        confirmTimeoutMs: 10_000,
        distributor: await keeperSigner()
      },
      { balances: solanaBalanceReader({ rpcUrl: net.rpcUrl, stakedMint: STAKED_SVC_MINT }), accountWallets: makeAccountWallets(harness.sql, harness.provider) }
    ).pipe(
      Effect.withClock(stakingClock),
      Effect.provideService(WalletService, harness.service),
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(SqlClient.SqlClient, harness.sql)
    )
  )
  noDistributor = await Effect.runPromise(
    makeStaking(
      { rpcUrl: net.rpcUrl, platformMint: SVC_MINT, receiptMint: STAKED_SVC_MINT, pollIntervalMs: 20, confirmTimeoutMs: 10_000 },
      { balances: solanaBalanceReader({ rpcUrl: net.rpcUrl, stakedMint: STAKED_SVC_MINT }), accountWallets: makeAccountWallets(harness.sql, harness.provider) }
    ).pipe(
      Effect.withClock(stakingClock),
      Effect.provideService(WalletService, harness.service),
      Effect.provideService(WalletProvider, harness.provider),
      Effect.provideService(SqlClient.SqlClient, harness.sql)
    )
  )
  const tee = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: "a1aaaaaa", label: "tee" }))
  wallet = { id: tee.id, address: tee.address }
  ledger.requestAirdrop(address(tee.address), 5_000_000_000n)
  ledger.mintTestTokens(SVC_MINT_ADDRESS, address(tee.address), 1_000n * UNIT)
}, 60_000)

afterAll(async () => {
  clearInterval(ticker)
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await harness?.close()
})

const stakeBody = (clientStakeId: string, amountRaw: bigint) =>
  ({ action: "stake", payer: "linked", linkedWalletId: wallet.id, clientStakeId, dryRun: false, amountRaw }) as const

describe("linked and TEE staking payers", () => {
  it("build is built with a sign claim; submit takes only the signed exact message, broadcasts once, and replays", async () => {
    const built = await run(staking.build(caller, stakeBody("t1", 100n * UNIT)))
    if (built._tag === "Left") throw new Error(JSON.stringify(built.left))
    expect(built.right).toMatchObject({ status: "built", payer: "linked", wallet: wallet.address, action: "stake", replay: false })
    expect(typeof built.right.recentBlockhash).toBe("string")
    expect(tokenBalance(ledger, ataOf(address(wallet.address), STAKED_SVC_MINT_ADDRESS))).toBe(0n)
    const transaction = built.right.transaction as string
    const again = await run(staking.build(caller, stakeBody("t1", 100n * UNIT)))
    expect(again._tag === "Right" && again.right).toMatchObject({ status: "built", transaction, replay: true })

    // The unsigned build is not "every signature".
    const unsigned = await run(staking.submit(caller, { clientStakeId: "t1", signedTransaction: new Uint8Array(b64.encode(transaction)) }))
    expect(unsigned._tag === "Left" && unsigned.left.reason).toBe("wrong_message")
    const signed = await sign(wallet.id, built.right.claimId as string, transaction)
    // A claim is single-use: the relay refuses a second sign.
    await expect(Effect.runPromise(harness.service.signClaimed(keyA1, wallet.id, { claimId: built.right.claimId as string, transaction: signed }))).rejects.toThrow()
    // Another build's signed bytes are not this build's message.
    const other = await run(staking.build(caller, stakeBody("t-other", 1n)))
    if (other._tag === "Left") throw new Error(JSON.stringify(other.left))
    const otherSigned = await sign(wallet.id, other.right.claimId as string, other.right.transaction as string)
    const wrong = await run(staking.submit(caller, { clientStakeId: "t1", signedTransaction: otherSigned }))
    expect(wrong._tag === "Left" && wrong.left.reason).toBe("wrong_message")

    // 20 at once: one broadcast, one stake.
    const all = await Promise.all(Array.from({ length: 20 }, () => run(staking.submit(caller, { clientStakeId: "t1", signedTransaction: signed }))))
    const confirmed = all.filter((r) => r._tag === "Right")
    expect(confirmed.length).toBeGreaterThanOrEqual(1)
    for (const r of all) if (r._tag === "Left") expect(["pending"]).toContain(r.left.reason)
    expect(tokenBalance(ledger, ataOf(address(wallet.address), STAKED_SVC_MINT_ADDRESS))).toBe(100n * UNIT)
    const replay = await run(staking.submit(caller, { clientStakeId: "t1", signedTransaction: signed }))
    expect(replay._tag === "Right" && replay.right).toMatchObject({ status: "confirmed", replay: true })
    expect(tokenBalance(ledger, ataOf(address(wallet.address), STAKED_SVC_MINT_ADDRESS))).toBe(100n * UNIT)
  }, 60_000)

  it("confirm records a landing made elsewhere without sending; unstake carries the withdrawal co-signature", async () => {
    const built = await run(staking.build(caller, { action: "unstake", payer: "linked", linkedWalletId: wallet.id, clientStakeId: "t2", dryRun: false, amountRaw: 10n * UNIT }))
    if (built._tag === "Left") throw new Error(JSON.stringify(built.left))
    expect(built.right.withdrawal).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/)
    const signed = await sign(wallet.id, built.right.claimId as string, built.right.transaction as string)
    const landed = ledger.submit(signed)
    if (landed._tag !== "Landed" || landed.err !== null) throw new Error(`landing failed: ${JSON.stringify(landed)}`)
    ledger.advanceSlot()
    const wrongSig = await run(staking.confirm(caller, { clientStakeId: "t2", signature: "1".repeat(64) }))
    expect(wrongSig._tag === "Left" && ["not_landed", "pending"]).toContain(wrongSig._tag === "Left" ? wrongSig.left.reason : "")
    const ok = await run(staking.confirm(caller, { clientStakeId: "t2", signature: landed.signature }))
    expect(ok._tag === "Right" && ok.right).toMatchObject({ status: "confirmed", signature: landed.signature, withdrawal: built.right.withdrawal })
    expect(tokenBalance(ledger, ataOf(address(wallet.address), STAKED_SVC_MINT_ADDRESS))).toBe(90n * UNIT)
    const missing = await run(staking.confirm(caller, { clientStakeId: "nope", signature: landed.signature }))
    expect(missing._tag === "Left" && missing.left.reason).toBe("build_not_found")
  }, 60_000)

  it("an expired build refuses submit, and a late landing on the expired row is confirmed", async () => {
    const built = await run(staking.build(caller, stakeBody("t3", 5n * UNIT)))
    if (built._tag === "Left") throw new Error(JSON.stringify(built.left))
    const signed = await sign(wallet.id, built.right.claimId as string, built.right.transaction as string)
    const landed = ledger.submit(signed) // landed by the agent elsewhere
    if (landed._tag !== "Landed") throw new Error("landing refused")
    ledger.advanceSlot() // its slot closes: confirmed
    clock.offsetMs = 31 * 60_000 // past the build window
    const late = await run(staking.submit(caller, { clientStakeId: "t3", signedTransaction: signed }))
    expect(late._tag === "Left" && late.left.reason).toBe("build_expired")
    const confirmed = await run(staking.confirm(caller, { clientStakeId: "t3", signature: landed.signature }))
    expect(confirmed._tag === "Right" && confirmed.right).toMatchObject({ status: "confirmed", signature: landed.signature })
    clock.offsetMs = 0
    expect(tokenBalance(ledger, ataOf(address(wallet.address), STAKED_SVC_MINT_ADDRESS))).toBe(95n * UNIT)
  }, 60_000)

  it("20 concurrent claims of one reward to a bound TEE wallet pay it once; the distributor pays the fee", async () => {
    const { rewardId } = ledger.distributeStakingReward(address(wallet.address), USDC_MINT_ADDRESS, 4_000_000n)
    const before = tokenBalance(ledger, ataOf(address(wallet.address), USDC_MINT_ADDRESS))
    const lamportsBefore = ledger.getBalance(address(wallet.address))
    const all = await Promise.all(Array.from({ length: 20 }, () => run(staking.claimReward(caller, rewardId.toString()))))
    const paid = all.flatMap((r) => (r._tag === "Right" ? [r.right.signature as string] : []))
    for (const r of all) if (r._tag === "Left") expect(r.left.reason).toBe("reward_claim_pending")
    expect(new Set(paid).size).toBeLessThanOrEqual(1)
    const settled = await run(staking.claimReward(caller, rewardId.toString()))
    expect(settled._tag === "Right" && settled.right).toMatchObject({ rewardId: rewardId.toString(), owner: wallet.address, amountRaw: "4000000" })
    expect(tokenBalance(ledger, ataOf(address(wallet.address), USDC_MINT_ADDRESS))).toBe(before + 4_000_000n)
    expect(ledger.getBalance(address(wallet.address))).toBe(lamportsBefore)
    // The chain refuses a second payment whatever the service does; a paused key cannot claim.
    const paused = await run(staking.claimReward({ ...caller, keyPaused: true }, rewardId.toString()))
    expect(paused._tag === "Left" && paused.left.reason).toBe("key_paused")
    const other = await run(staking.claimReward({ ...caller, keyId: "kid-a2", principal: principals["key-a2"] as Principal }, rewardId.toString()))
    expect(other._tag === "Left" && other.left.reason).toBe("reward_not_owned")
  }, 60_000)
})

/** A service answer through the error table: its status, code and field, or "ok" with the body. */
const answered = async (e: Effect.Effect<Record<string, unknown>, StakingFailure>) => {
  const r = await Effect.runPromise(Effect.either(mapFailure(e)))
  return r._tag === "Right" ? { ok: r.right } : { status: r.left.httpStatus, code: r.left.code, field: r.left.field, retryable: r.left.retryable, details: r.left.extra }
}

/** Builds `input` for the TEE wallet, signs it at the relay and submits it; the confirmed operation. */
const landLinked = async (input: Parameters<StakingServiceShape["build"]>[1]) => {
  const built = await run(staking.build(caller, input))
  if (built._tag === "Left") throw new Error(JSON.stringify(built.left))
  const signed = await sign(wallet.id, built.right.claimId as string, built.right.transaction as string)
  const submitted = await run(staking.submit(caller, { clientStakeId: input.clientStakeId, signedTransaction: signed }))
  if (submitted._tag === "Left") throw new Error(JSON.stringify(submitted.left))
  return { ...submitted.right, withdrawal: built.right.withdrawal }
}

describe("staking refusals of the status mapping (402, 409, reward 409 and 503)", () => {
  it("402: a wallet holding the platform token but too little SOL for fee, rent and reserve; nothing is recorded", async () => {
    const dry = await Effect.runPromise(harness.service.createTee(principals["sess-a"] as Principal, { chain: "solana", keyPrefix: "a1aaaaaa", label: "no-sol" }))
    ledger.mintTestTokens(SVC_MINT_ADDRESS, address(dry.address), 10n * UNIT)
    const input = { action: "stake", payer: "linked", linkedWalletId: dry.id, clientStakeId: "nosol-1", amountRaw: UNIT } as const
    for (const dryRun of [true, false]) {
      const refused = await answered(staking.build(caller, { ...input, dryRun }))
      expect(refused).toMatchObject({ status: 402, code: "INSUFFICIENT_OWNER_BALANCE" })
      expect(refused.details).toMatchObject({ solBalanceLamports: "0" })
    }
    // Nothing was built: the id is unknown to submit.
    expect(await answered(staking.submit(caller, { clientStakeId: "nosol-1", signedTransaction: new Uint8Array(8) }))).toMatchObject({ status: 404, code: "JOB_NOT_FOUND" })
  }, 60_000)

  it("409: an unstake past the pool's active-withdrawal limit; finishing a finished withdrawal", async () => {
    const opened = await landLinked({ action: "unstake", payer: "linked", linkedWalletId: wallet.id, clientStakeId: "lim-u1", dryRun: false, amountRaw: UNIT })
    const withdrawal = opened.withdrawal as string
    const active = (await Effect.runPromise(staking.chain.wallet(wallet.address))).activeWithdrawals
    expect(active).toBeGreaterThanOrEqual(1)
    ledger.configureStakePool({ withdrawalTimelockSeconds: 1n, maxActiveWithdrawals: active, paused: false })
    try {
      for (const dryRun of [true, false]) {
        const limited = await answered(staking.build(caller, { action: "unstake", payer: "linked", linkedWalletId: wallet.id, clientStakeId: "lim-u2", dryRun, amountRaw: UNIT }))
        expect(limited).toMatchObject({ status: 409, code: "VALIDATION_FAILED" })
        expect(limited.details).toMatchObject({ maxActiveWithdrawals: active })
      }
    } finally {
      ledger.configureStakePool({ withdrawalTimelockSeconds: 1n, maxActiveWithdrawals: 5, paused: false })
    }
    // One below the limit again: the same unstake passes its checks.
    expect(await answered(staking.build(caller, { action: "unstake", payer: "linked", linkedWalletId: wallet.id, clientStakeId: "lim-u3", dryRun: true, amountRaw: UNIT }))).toHaveProperty("ok")

    const finish = { action: "finish", payer: "linked", linkedWalletId: wallet.id, withdrawal } as const
    await eventually(async () => ("ok" in (await answered(staking.build(caller, { ...finish, clientStakeId: "fin-1", dryRun: true }))) ? true : undefined), {
      what: "the withdrawal's wait to pass on the localnet clock",
      deadlineMs: 20_000,
      intervalMs: 100
    })
    expect(await landLinked({ ...finish, clientStakeId: "fin-1", dryRun: false })).toMatchObject({ status: "confirmed", action: "finish" })
    for (const dryRun of [true, false]) {
      expect(await answered(staking.build(caller, { ...finish, clientStakeId: "fin-2", dryRun }))).toMatchObject({ status: 409, code: "VALIDATION_FAILED", field: "withdrawal" })
    }
  }, 60_000)

  it("reward claims: 503 claim failed (retryable) when nothing can pay; 409 already claimed when it was paid with no stored signature", async () => {
    const { rewardId } = ledger.distributeStakingReward(address(wallet.address), USDC_MINT_ADDRESS, 3_000_000n)
    const before = tokenBalance(ledger, ataOf(address(wallet.address), USDC_MINT_ADDRESS))
    const failed = await answered(noDistributor.claimReward(caller, rewardId.toString()))
    expect(failed).toMatchObject({ status: 503, code: "STAKING_REWARD_CLAIM_FAILED", retryable: true })
    const paid = await answered(staking.claimReward(caller, rewardId.toString()))
    expect(paid).toMatchObject({ ok: { rewardId: rewardId.toString(), amountRaw: "3000000" } })
    expect(tokenBalance(ledger, ataOf(address(wallet.address), USDC_MINT_ADDRESS))).toBe(before + 3_000_000n)

    // Paid on chain by a transaction the service never recorded: already claimed, no signature to give.
    const other = ledger.distributeStakingReward(address(wallet.address), USDC_MINT_ADDRESS, 2_000_000n).rewardId
    const reward = await Effect.runPromise(staking.chain.reward(other))
    const tx = await Effect.runPromise(staking.chain.claimTransaction(await keeperSigner(), reward!))
    await Effect.runPromise(staking.chain.send(tx.base64))
    await eventually(async () => ((await Effect.runPromise(staking.chain.reward(other)))?.claimedAtSec !== 0n ? true : undefined), {
      what: "the direct claim to land",
      deadlineMs: 10_000,
      intervalMs: 50
    })
    expect(await answered(staking.claimReward(caller, other.toString()))).toMatchObject({ status: 409, code: "STAKING_REWARD_ALREADY_CLAIMED" })
    expect(tokenBalance(ledger, ataOf(address(wallet.address), USDC_MINT_ADDRESS))).toBe(before + 5_000_000n)
  }, 60_000)
})

/**
 * An embedded operation a process recorded (built, signed, `sending`) and never sent, as `build`
 * writes it before sending; with that process's lease when `holder` is given.
 */
const leftSending = async (owner: string, input: StakeBuildInput & { readonly amountRaw: bigint }, holder?: RowLeases) => {
  const built = await Effect.runPromise(staking.chain.build({ action: "stake", owner, amountRaw: input.amountRaw }))
  const signed = await Effect.runPromise(harness.provider.signWithEmbedded("acct-a", "solana", built.wire))
  const row: OperationRow = {
    accountId: "acct-a",
    clientStakeId: input.clientStakeId,
    action: "stake",
    payer: "main",
    walletId: null,
    wallet: owner,
    keyId: caller.keyId,
    bodyHash: bodyHashOf(input),
    state: "sending",
    amountRaw: input.amountRaw.toString(),
    withdrawal: null,
    signature: signed.signature,
    transaction: null,
    messageHash: createHash("sha256").update(built.messageBytes).digest("hex"),
    claimId: null,
    lastValidBlockHeight: built.lastValidBlockHeight,
    builtAtMs: harness.clock.ms,
    expiresAtMs: null,
    error: null
  }
  const store = makeStakingStore(harness.sql, clockAt(() => harness.clock.ms))
  const owned = holder === undefined ? Effect.void : Effect.provideService(holder.claimIn(STAKING_LEASE_KIND, stakingLeaseKey(row)), SqlClient.SqlClient, harness.sql)
  expect(await Effect.runPromise(harness.sql.withTransaction(Effect.zipLeft(store.insert(row), owned)))).toBe(true)
  return { row, built }
}

describe("an embedded operation recorded but never sent (the engine died between the two)", () => {
  it("is never sent by the restarted service: it settles failed after its blockhash expires; a replay is 409 with its signature; a new id stakes once", async () => {
    const embeddedCaller: StakingCaller = { ...caller, embeddedWallet: "allowed" }
    const owner = (await Effect.runPromise(harness.provider.ensureEmbeddedWallet("acct-a", "solana"))).address
    await Effect.runPromise(harness.provider.setDelegation("acct-a", "solana", "active"))
    ledger.requestAirdrop(address(owner), 2_000_000_000n)
    ledger.mintTestTokens(SVC_MINT_ADDRESS, address(owner), 10n * UNIT)
    const input = { action: "stake", payer: "main", clientStakeId: "crash-window", dryRun: false, amountRaw: 2n * UNIT } as const

    // What build writes before it sends: the signed transaction's signature and lifetime, state `sending`.
    const { row: left, built } = await leftSending(owner, input)
    const signed = { signature: left.signature! }
    // The engine died here. The restarted service settles what was left in flight, from the chain.
    expect(await Effect.runPromise(noDistributor.resumeInFlight)).toBeGreaterThanOrEqual(1)
    // While its blockhash may still land, the operation is pending: 409, retryable, nothing sent.
    expect(await answered(staking.submit(embeddedCaller, { clientStakeId: input.clientStakeId, signedTransaction: built.wire }))).toMatchObject({
      status: 409,
      code: "IDEMPOTENCY_CONFLICT",
      retryable: true,
      details: { state: "sending", signature: signed.signature }
    })
    let lastReplay: unknown
    const settled = await eventually(
      async () => {
        const replay = await answered(staking.build(embeddedCaller, input))
        lastReplay = replay
        return "status" in replay && replay.status === 409 && replay.retryable !== true ? replay : undefined
      },
      { what: "the unsent operation to settle once its blockhash expires", deadlineMs: 30_000, intervalMs: 200, detail: () => JSON.stringify(lastReplay) }
    )
    expect(settled).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT", field: "clientStakeId", details: { signature: signed.signature, state: "failed" } })
    expect(ledger.getTransaction(signed.signature)).toBeUndefined() // never sent
    expect(tokenBalance(ledger, ataOf(address(owner), STAKED_SVC_MINT_ADDRESS))).toBe(0n)

    const again = await answered(staking.build(embeddedCaller, { ...input, clientStakeId: "crash-window-2" }))
    expect(again).toMatchObject({ ok: { status: "confirmed", action: "stake", replay: false } })
    expect(tokenBalance(ledger, ataOf(address(owner), STAKED_SVC_MINT_ADDRESS))).toBe(2n * UNIT)
  }, 60_000)
})

describe("operations in flight across two engine processes (row leases)", () => {
  it("racing resumes take each operation once and a watched one is skipped; a dead owner's is skipped until its lease ends, then taken over; nothing is sent", async () => {
    const owner = (await Effect.runPromise(harness.provider.ensureEmbeddedWallet("acct-a", "solana"))).address
    await Effect.runPromise(harness.provider.setDelegation("acct-a", "solana", "active"))
    ledger.requestAirdrop(address(owner), 2_000_000_000n)
    ledger.mintTestTokens(SVC_MINT_ADDRESS, address(owner), 10n * UNIT)
    const store = makeStakingStore(harness.sql, clockAt(() => harness.clock.ms))
    const stake = (clientStakeId: string) => ({ action: "stake", payer: "main", clientStakeId, dryRun: false, amountRaw: UNIT }) as const
    const rows = [(await leftSending(owner, stake("lease-race-1"))).row, (await leftSending(owner, stake("lease-race-2"))).row]
    const [byA, byB] = await Effect.runPromise(Effect.all([staking.resumeOperations, noDistributor.resumeOperations], { concurrency: "unbounded" }))
    expect(byA + byB).toBe(2)
    // Each is watched now (its lease renewed by the process that took it): no resume takes it again.
    expect(await Effect.runPromise(Effect.all([staking.resumeOperations, noDistributor.resumeOperations]))).toEqual([0, 0])

    const dead = makeRowLeases(harness.sql, { leaseMs: 1_000 })
    const orphan = (await leftSending(owner, stake("lease-orphan"), dead)).row
    expect(await Effect.runPromise(noDistributor.resumeOperations)).toBe(0)
    await eventually(async () => ((await Effect.runPromise(noDistributor.resumeOperations)) === 1 ? true : undefined), {
      what: "the dead owner's lease to end and the operation to be taken over",
      intervalMs: 100,
      deadlineMs: 10_000
    })
    for (const row of [...rows, orphan]) {
      await eventually(async () => ((await Effect.runPromise(store.get("acct-a", row.clientStakeId)))?.state === "failed" ? true : undefined), {
        what: `${row.clientStakeId} to settle failed once its blockhash expires`,
        deadlineMs: 30_000,
        intervalMs: 200
      })
      expect(ledger.getTransaction(row.signature!)).toBeUndefined() // never sent
    }
  }, 60_000)
})
